"""One run traced by us and by another instrumentation of the same framework at once: each step is folded once,
by every fold path, and the envelope says what ours alone says.

The fixtures in ``tests/exporters/mixed/`` are real spans: the benchmark workloads (the customer-support example
over its scripted model) traced by our instrumentor alone (``FRAMEWORK_ours``) and by ours and a peer on one
provider (``FRAMEWORK_PEER``: OpenInference's or OpenLLMetry's instrumentation of that framework), recorded by
``scripts/fixtures/record_mixed.py`` in the benchmark venv, where the peers are installed (they are not in
``.venv``; Agno's OpenInference instrumentation is run live in ``tests/peers/test_agno_peer_fold.py``).

Before the fold read instrumentation scopes, the peers' agent spans (OpenInference's ``customer_support.run``,
CrewAI's ``Order Clerk.order_status._execute_core``: no agent name, or another one) were counted as agents of
their own, LlamaIndex's model calls twice, and the folding processor counted every tool call twice, and (the
``_enclosed`` fixtures: a peer's tree beside ours under an application span) every model and tool call of
LangChain and Anthropic twice. The fixtures without ``_enclosed`` of LangChain and Anthropic have no application span:
OpenLLMetry's Anthropic spans and OpenInference's LangChain spans are then traces of their own beside ours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanContext

from otel_agents._spans import Settings, Telemetry
from otel_agents.exporters.ecp import StreamFolder, fold
from otel_agents.exporters.ecp import _facts as F
from otel_agents.exporters.ecp._runs import PeerViews
from otel_agents.exporters.file import OTLPJsonFileExporter, read_otlp_json
from tests.exporters.conftest import check
from tests.exporters.fold_paths import every_path, live, steps, stream_file

FIXTURES = Path(__file__).with_name("mixed")
# A peer's trace sharing no id with ours stays a run (docs/ecp.md): test_a_peers_trace_sharing_no_id_with_ours_...
NO_SHARED_ID = ("langchain_openinference",)
MIXED = sorted(p for p in FIXTURES.glob("*.otlp.jsonl") if not p.name.endswith("_ours.otlp.jsonl")
               and p.name.split(".")[0] not in NO_SHARED_ID)


@pytest.mark.parametrize("path", MIXED, ids=lambda p: p.name.split(".")[0])
def test_each_step_once_on_every_fold_path(path: Path, tmp_path: Path) -> None:
    framework = path.name.split(".")[0].removesuffix("_enclosed").rsplit("_", 1)[0]
    expected = sorted(map(repr, map(steps, check(fold(read_otlp_json(FIXTURES / f"{framework}_ours.otlp.jsonl"))))))
    spans = read_otlp_json(path)
    assert {s.instrumentation_scope.name.split(".")[0] for s in spans} - {"otel_agents", "app"}  # the peer's are there
    for way, envelopes in every_path(spans, tmp_path).items():
        assert sorted(map(repr, map(steps, check(envelopes)))) == expected, way


def test_a_peers_span_is_left_out_only_for_a_step_of_ours_of_its_framework(rec: Any, tmp_path: Path) -> None:
    """OpenInference's Agno agent span with no agent name at the time of our Agno agent is our agent; its tool
    span for a call we did not record is a step (only it saw that call), and so is an agent span of another
    framework's instrumentation."""
    ours = Telemetry(rec.provider, framework="agno", scope="otel_agents.instrumentors.agno",
                     settings=Settings(capture_content=True))
    theirs = rec.provider.get_tracer("openinference.instrumentation.agno", "1.0.15")
    other = rec.provider.get_tracer("openinference.instrumentation.crewai", "1.0.0")
    with ours.span("agent", "Support") as agent:
        agent.set_agent("Support")
        with theirs.start_as_current_span("Support.run", attributes={"openinference.span.kind": "AGENT"}):
            with ours.span("tool", "lookup_order") as tool:
                tool.set_tool("lookup_order", call_id="call-1", arguments={"order_id": "A100"})
                tool.set_tool_result("shipped")
            theirs.start_span("get_weather", attributes={"openinference.span.kind": "TOOL",
                                                         "tool.name": "get_weather"}).end()
            other.start_span("Clerk._execute_core", attributes={"openinference.span.kind": "AGENT"}).end()
        agent.set_output("A100 has shipped.")
    for way, envelopes in every_path(rec.spans, tmp_path).items():
        [envelope] = check(envelopes)
        assert [c["name"] for c in envelope["tool_calls"]] == ["lookup_order", "get_weather"], way
        assert [a["name"] for a in envelope["agents"]] == ["Support", "Clerk._execute_core"], way


# A peer's spans of one call in a trace of their own (no application span around the call): LangChain's callback
# tracers start a trace per top-level run, OpenLLMetry's Anthropic spans are not made current.
SEPARATE = ("anthropic_openllmetry",)


def _ours(spans: list[ReadableSpan]) -> list[ReadableSpan]:
    return [s for s in spans if "otel_agents.span.kind" in s.attributes]


def _theirs(spans: list[ReadableSpan]) -> list[ReadableSpan]:
    """The spans of the traces that hold none of ours (the peer's separate traces)."""
    mixed = {s.context.trace_id for s in _ours(spans)}
    return [s for s in spans if s.context.trace_id not in mixed]


def _copy(spans: list[ReadableSpan], *, ids: int = 0, shift_ns: int = 0,
          resource: Resource | None = None) -> list[ReadableSpan]:
    """The spans with their trace and span ids xor-ed with ``ids``, moved by ``shift_ns``, or of another process."""
    def ctx(c: SpanContext | None) -> SpanContext | None:
        return None if c is None else SpanContext(c.trace_id ^ ids, c.span_id ^ ids, c.is_remote, c.trace_flags)
    return [ReadableSpan(name=s.name, context=ctx(s.context), parent=ctx(s.parent), resource=resource or s.resource,
                         attributes=s.attributes, events=s.events, links=s.links, kind=s.kind, status=s.status,
                         start_time=s.start_time + shift_ns, end_time=s.end_time + shift_ns,
                         instrumentation_scope=s.instrumentation_scope) for s in spans]


def _counts(spans: list[ReadableSpan], tmp_path: Path) -> dict[str, int]:
    return {way: len(check(envelopes)) for way, envelopes in every_path(spans, tmp_path).items()}


@pytest.mark.parametrize("name", SEPARATE)
def test_a_peers_separate_trace_of_our_calls_is_no_run(name: str, tmp_path: Path) -> None:
    """Each call of ours is one run on every path (it was two: ours and the peer's trace), and the peer's traces
    alone (a peer without us) are folded as before: a run each."""
    spans = read_otlp_json(FIXTURES / f"{name}.otlp.jsonl")
    ours, theirs = _ours(spans), _theirs(spans)
    runs = len({s.context.trace_id for s in ours})
    assert theirs and len({s.context.trace_id for s in theirs}) == runs  # a trace of the peer's for each of ours
    assert set(_counts(spans, tmp_path).values()) == {runs}
    alone = fold(theirs)
    assert len(alone) == runs and set(_counts(theirs, tmp_path).values()) == {runs}


@pytest.mark.parametrize("name", SEPARATE)
def test_a_peers_trace_that_is_not_of_our_calls_stays_a_run(name: str, tmp_path: Path) -> None:
    """A peer's trace at another time, or of another process (resource), or a second trace of the same calls
    (each step of ours is seen once per instrumentation), is a run of its own on every path."""
    spans = read_otlp_json(FIXTURES / f"{name}.otlp.jsonl")
    ours, theirs = _ours(spans), _theirs(spans)
    runs = len({s.context.trace_id for s in ours})
    later = _copy(theirs, ids=0x5A5A, shift_ns=3_600 * 10**9)
    other = _copy(theirs, ids=0x5A5A, resource=Resource({"service.name": "another", "service.instance.id": "2"}))
    again = _copy(theirs, ids=0x5A5A)
    for extra in (later, other, again):
        counts = _counts(spans + extra, tmp_path)
        assert set(counts.values()) == {2 * runs}, counts


@pytest.mark.parametrize("name", SEPARATE)
def test_a_peers_trace_with_a_step_of_its_own_stays_a_run(name: str, tmp_path: Path) -> None:
    """A peer's trace holding a step no step of ours matches (a tool call only it saw) is kept whole: the run it
    is may be more than our calls."""
    spans = read_otlp_json(FIXTURES / f"{name}.otlp.jsonl")
    runs = len({s.context.trace_id for s in _ours(spans)})
    top = min(_theirs(spans), key=lambda s: s.start_time)
    extra = ReadableSpan(name="search", context=SpanContext(top.context.trace_id, 0xABC, False),
                         parent=top.context, resource=top.resource, instrumentation_scope=top.instrumentation_scope,
                         attributes={"openinference.span.kind": "TOOL", "tool.name": "search"},
                         start_time=top.start_time + 1, end_time=top.start_time + 2)
    counts = _counts(spans + [extra], tmp_path)
    assert set(counts.values()) == {runs + 1}, counts
    [kept] = [e for e in fold(spans + [extra]) if any(c["name"] == "search" for c in e["tool_calls"])]
    assert kept["metrics"]["model_calls"] == 1  # the peer's whole trace, its model call included


def test_what_the_streaming_paths_hold_for_a_peers_trace_is_bounded(tmp_path: Path) -> None:
    """The paths that fold a trace at a time compare a peer's trace with our traces held or folded within their
    bound: past it (the peer's span ended 10 s after ours: the folding processor keeps our steps
    2 * foreign_grace_s + 1 s; ``otel-agents fold`` read more than ``--idle-spans`` spans between the peer's trace
    and ours) the peer's trace is a run of its own again, as it was before; ``fold()`` reads every trace."""
    spans = read_otlp_json(FIXTURES / "anthropic_openllmetry.otlp.jsonl")
    ours, theirs = _ours(spans), _theirs(spans)
    late = _copy(theirs)
    for span in late:
        span._end_time += 10 * 10**9
    assert len(fold(ours + late)) == 3 and len(live(ours + late)) == 6
    path = tmp_path / "apart.otlp.jsonl"  # the peer's traces, 3 unrelated spans, then ours
    exporter = OTLPJsonFileExporter(path)
    exporter.export(theirs)
    with open(path, "a", encoding="utf-8") as out, open(FIXTURES / "langchain_ours.otlp.jsonl", encoding="utf-8") as f:
        out.write(f.read())
    exporter = OTLPJsonFileExporter(path)
    exporter.export(ours)
    exporter.shutdown()
    got: list[dict[str, Any]] = []
    folder = StreamFolder(got.append, idle_spans=2)
    for number, text in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        folder.add(read_otlp_json([text]), number)
    folder.finish()
    assert len(got) == 2 + 6 and len(stream_file(path)) == 2 + 3


def test_a_peers_trace_folded_while_ours_is_still_held_is_no_run() -> None:
    """The paths that fold a trace at a time compare a peer's trace folded before ours with the traces of ours they
    still hold: ``otel-agents fold`` reading several files (``hold``: every trace until the end, the least recently
    read folded first) and ``ecp collect`` shutting down (the first received first), each with the peer's traces
    read first; and without ``hold``, ours folded first (complete) and remembered."""
    from otel_agents.exporters.ecp import TraceGatherer

    spans = read_otlp_json(FIXTURES / "anthropic_openllmetry.otlp.jsonl")
    ours, theirs = _ours(spans), _theirs(spans)
    runs = len({s.context.trace_id for s in ours})
    for hold in (True, False):
        got: list[dict[str, Any]] = []
        folder = StreamFolder(got.append, hold=hold)
        folder.add(theirs, 1)
        folder.add(ours, 2)
        folder.finish()
        assert len(check(got)) == runs, hold
    got = []
    gatherer = TraceGatherer(got.append, clock=lambda: 0.0)
    gatherer.add(theirs)
    gatherer.add(ours)
    gatherer.flush("shutdown")
    assert len(check(got)) == runs


def test_peer_views_keep_a_bounded_number_of_our_steps() -> None:
    views = PeerViews(limit=2)
    spans = [F.FoldSpan(s) for s in _ours(read_otlp_json(FIXTURES / "anthropic_ours.otlp.jsonl"))]
    for span in spans:
        views.remember(span.trace_id, [span])
    assert [views.holds(s.trace_id) for s in spans] == [False, True, True]
    views.forget(1.0)
    assert not any(views.holds(s.trace_id) for s in spans)


def test_a_peers_trace_sharing_no_id_with_ours_stays_a_run(tmp_path: Path) -> None:
    """OpenInference's LangChain chain and model spans record no response id: their separate trace cannot be told
    from a call only the peer saw, and is folded on every path as the peer alone folds it (the limit docs/ecp.md
    states); its tool span gives the call id of ours (read from the tool message), so that trace is no run."""
    spans = read_otlp_json(FIXTURES / "langchain_openinference.otlp.jsonl")
    ours, theirs = _ours(spans), _theirs(spans)
    chain = {s.context.trace_id for s in theirs if s.name == "RunnableSequence"}
    peer_chain = [s for s in theirs if s.context.trace_id in chain]
    expected = sorted(map(repr, map(steps, check(fold(ours) + fold(peer_chain)))))
    assert len(expected) == 3
    for way, envelopes in every_path(spans, tmp_path).items():
        assert sorted(map(repr, map(steps, check(envelopes)))) == expected, way


def test_the_recorded_fixtures_hold_no_path_of_the_machine_they_were_recorded_on() -> None:
    """A recorded span keeps what the process saw: an exception's stack trace named the benchmark venv by its
    absolute path on the recording machine (``/work/bench/.bench-venv/...``). The recorders write paths relative to
    the checkout (``.bench-venv/lib/...``, ``record_mixed.py``), so no fixture depends on where it was recorded."""
    import re
    import subprocess

    root = Path(__file__).parents[2]
    tracked = subprocess.run(["git", "ls-files", "tests"], cwd=root, capture_output=True, text=True, check=True)
    fixtures = [root / name for name in tracked.stdout.split() if name.endswith((".jsonl", ".json"))]
    absolute = re.compile(r"(?<![\w.:/%-])/(?:work|home|Users|tmp|root|opt|srv|mnt|var/folders)/[\w.-]+")
    found = {p.relative_to(root).as_posix(): m.group() for p in fixtures
             if (m := absolute.search(p.read_text(encoding="utf-8")))}
    assert len(fixtures) > 20 and found == {}, found


def _held(spans: list[ReadableSpan], ids: int) -> list[ReadableSpan]:
    """A copy (ids xor-ed with ``ids``) whose top spans name a parent that never comes: held until idle."""
    out = _copy(spans, ids=ids)
    for span in out:
        if span.parent is None:
            span._parent = SpanContext(span.context.trace_id, 0xDEAD ^ ids, False)
    return out


def test_a_peers_trace_is_compared_with_what_changed_among_the_held_traces_of_ours(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``otel-agents fold`` and ``ecp collect`` hand ``PeerViews`` only the traces of ours held that got a span since
    a peer's trace was last compared, not every trace held for each peer's trace folded (each walked them all:
    quadratic in the traces held, thousands with the default window); ``PeerViews`` finds those at the peer's time
    by their windows. Folded from the end of input, 40 peer traces (at another time) read first, then 40 traces of
    ours held: 40 traces handed in all, not 1,600; and the peer traces viewing a held trace are still no runs."""
    spans = read_otlp_json(FIXTURES / "anthropic_openllmetry.otlp.jsonl")
    ours, theirs = _ours(spans), _theirs(spans)
    apart = [s for i in range(1, 41) for s in _copy(theirs[:1], ids=i << 40, shift_ns=-10**15)]
    held = [s for i in range(1, 41) for s in _held(ours[:1], ids=i << 48)]
    got: list[dict[str, Any]] = []
    folder = StreamFolder(got.append, hold=True)
    handed: list[int] = []
    fold_trace = PeerViews.fold_trace

    def counting(views: PeerViews, *args: Any, held: Any, **kwargs: Any) -> bool:
        def changes() -> list[Any]:
            changed = list(held())
            handed.append(len(changed))
            return changed
        return fold_trace(views, *args, held=changes, **kwargs)

    monkeypatch.setattr(PeerViews, "fold_trace", counting)
    folder.add(apart, 1)
    folder.add(theirs + held, 2)
    folder.add(ours, 3)
    folder.finish()
    assert sum(handed) == 40 + len({s.context.trace_id for s in ours}) and len(handed) == 40 + len(theirs)
    ran = {e["trace_id"] for e in check(got)}
    assert ran == {F.trace_id_hex(s.context.trace_id) for s in apart + held + ours}


def test_a_held_trace_of_ours_is_compared_as_it_is_when_a_peers_trace_is_folded() -> None:
    """``ecp collect`` holds a trace of ours whose root has not come; a peer's trace folded once it idled is compared
    with the steps that trace has then, also those that came after an earlier peer's trace was compared with it."""
    from otel_agents.exporters.ecp import TraceGatherer

    spans = read_otlp_json(FIXTURES / "anthropic_openllmetry.otlp.jsonl")
    ours, theirs = _ours(spans), _theirs(spans)
    first, second = _held(ours[:1], 0), _held(ours[1:2], 0)
    for span in second:  # the second call of ours in the first one's trace, after the first peer's trace was folded
        span._context = SpanContext(first[0].context.trace_id, span.context.span_id, False)
        span._parent = first[0].parent
    now = [0.0]
    got: list[dict[str, Any]] = []
    gatherer = TraceGatherer(got.append, clock=lambda: now[0], trace_idle=1.0, trace_timeout=100.0)
    gatherer.add(first + theirs[:1])
    now[0] = 2.0
    assert gatherer.fold_ready() == 1 and got == []  # the first peer's trace: a view of the held trace
    gatherer.add(second + theirs[1:2])
    now[0] = 4.0
    assert gatherer.fold_ready() == 1 and got == []  # the second: a view of the step that came later
    gatherer.flush("shutdown")
    assert [e["trace_id"] for e in check(got)] == [F.trace_id_hex(first[0].context.trace_id)] * 2
