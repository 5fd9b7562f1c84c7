"""A forked child starts with none of the parent's open spans in the span layer's bookkeeping
(``otel_agents._spans.finalisers.in_forked_child``), across a real ``os.fork()``: the parent's spans are the
parent's to end. Every instrumentor's maps are asserted the same way by the contract kit's X-15."""

from __future__ import annotations

import gc
import logging
from typing import Any

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_agents._spans import (SpanRegistry, Telemetry, finalisers, finalize, in_forked_child, semantic_span_for,
                               wrap_stream)
from otel_agents.semconv import Kind
from tests import forking
from tests.spans import SnapshotExporter

EVICTED = "otel_agents.span.evicted"


@pytest.fixture
def telemetry() -> Any:
    exporter = SnapshotExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    yield Telemetry(provider, framework="test"), exporter
    provider.shutdown()


def test_a_forked_child_neither_evicts_nor_clears_the_parents_open_spans(telemetry: Any, tmp_path: Any) -> None:
    """A registry full of the parent's open spans at the fork: the child's first spans pushed them out (ended,
    marked evicted, exported from the child: a second copy of each, the parent ends them too), ``clear()``
    (``uninstrument``) ended the rest, and ``semantic_span_for`` found them (a model request there filled the
    parent's span). The child's registry and index now start empty; its own spans are evicted and end as before."""
    t, exporter = telemetry
    registry = SpanRegistry(max_size=2)
    parents = [t.start_span(Kind.CHAIN, f"parent {i}") for i in range(2)]
    for i, span in enumerate(parents):
        registry.put(i, span)

    def child() -> dict[str, Any]:
        inherited, found = len(registry), semantic_span_for(parents[0].span) is not None
        seen = len(exporter.spans)
        mine = [t.start_span(Kind.CHAIN, f"child {i}") for i in range(3)]
        for i, span in enumerate(mine):
            registry.put(f"child {i}", span)  # the third pushes the first out (max_size=2)
        registry.pop("child 1").end()
        registry.clear()  # as uninstrument() does: ends the rest, as evicted
        return {"inherited": inherited, "found": found, "open": [s.ended for s in mine],
                "spans": [[s.name, s.attributes.get(EVICTED, False)] for s in exporter.spans[seen:]]}

    out = forking.run(child, tmp_path / "child.json")
    assert out["inherited"] == 0 and out["found"] is False, out
    assert out["spans"] == [["child 0", True], ["child 1", False], ["child 2", True]], out["spans"]
    assert out["open"] == [True, True, True]
    # the parent's spans were the parent's all along: still open here, ended once, by the parent
    assert len(registry) == 2 and exporter.spans == []
    for i in range(2):
        registry.pop(i).end()
    assert [(s.name, s.attributes.get(EVICTED, False)) for s in exporter.spans] == [("parent 0", False),
                                                                                     ("parent 1", False)]


def test_a_forked_child_leaves_the_parents_abandoned_streams_to_the_parent(telemetry: Any, tmp_path: Any) -> None:
    """A stream the parent was reading, and a ``finalize`` the parent set up, let go in the child (its copies
    collected, or ``atexit``): the child ended the parent's span as abandoned and exported it a second time, and
    ran the parent's finaliser work. Now that work is the parent's only; the child's own abandoned stream still
    ends, and the parent's ends once, in the parent."""
    t, exporter = telemetry
    kept: dict[str, Any] = {"stream": wrap_stream(iter([1, 2, 3]), t.start_span(Kind.MODEL, "parent"))}
    next(kept["stream"])  # read, not finished
    kept["held"] = type("Held", (), {})()
    ran: list[str] = []
    finalize(kept["held"], ran.append, "finalised")

    def child() -> dict[str, Any]:
        seen = len(exporter.spans)
        kept.clear()  # the child lets go of its copies
        mine = wrap_stream(iter([1, 2]), t.start_span(Kind.MODEL, "child"))
        next(mine)
        del mine  # abandoned: its span ends, in the child
        gc.collect()
        finalisers.settle()
        return {"ran": ran, "spans": [[s.name, s.attributes.get("otel_agents.stream.abandoned", False)]
                                      for s in exporter.spans[seen:]]}

    out = forking.run(child, tmp_path / "child.json")
    assert out == {"ran": [], "spans": [["chat child", True]]}, out
    assert exporter.spans == [] and ran == []
    kept.clear()
    gc.collect()
    finalisers.settle()
    assert [(s.name, s.attributes.get("otel_agents.stream.abandoned")) for s in exporter.spans] == [
        ("chat parent", True)]
    assert ran == ["finalised"]


class _Owner:
    def __init__(self, name: str) -> None:
        self.name = name
        self.reset_in: list[str] = []

    def reset(self) -> None:
        self.reset_in.append(self.name)

    def fail(self) -> None:
        raise RuntimeError(f"{self.name} cannot reset")


def test_in_forked_child_holds_its_owner_weakly_and_a_failing_reset_spares_the_others(
        tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    """A registration keeps nothing alive and leaves with its owner; in the child, one reset that raises is
    logged and the ones after it still run."""
    before = set(finalisers._RESETS)  # other owners may be collected meanwhile: count only this test's entries
    failing, owner = _Owner("failing"), _Owner("owner")
    in_forked_child(_Owner.fail, failing)
    in_forked_child(_Owner.reset, owner)
    ours = set(finalisers._RESETS) - before
    assert len(ours) == 2

    def child() -> dict[str, Any]:
        return {"reset": owner.reset_in, "logged": [r.getMessage() for r in caplog.records
                                                    if "internal error in fork.reset" in r.getMessage()]}

    with caplog.at_level(logging.DEBUG, logger="otel_agents"):
        out = forking.run(child, tmp_path / "child.json")
    assert out["reset"] == ["owner"], out
    assert out["logged"] and "failing cannot reset" in out["logged"][0], out
    assert owner.reset_in == []  # in the child only
    del failing, owner
    gc.collect()
    assert not ours & set(finalisers._RESETS)


def test_a_forked_child_neither_writes_to_nor_ends_the_parents_open_spans(
        telemetry: Any, tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    """A ``with`` span (and a plain one) open in the parent at the fork, left in the child the way a program leaves
    (``sys.exit()`` unwinding through the ``with`` block; an explicit ``end()``): the child exported each a
    second time. Now they are the parent's: in the child they read as ended, take no attribute, end nothing and
    export nothing (logged once, at DEBUG); a span the child opens itself ends and exports as usual; the parent
    ends and exports each of its spans once."""
    t, exporter = telemetry
    scope = t.span(Kind.AGENT, "parent agent")
    agent = scope.__enter__()
    tool = t.start_span(Kind.TOOL, "parent tool")

    def child() -> dict[str, Any]:
        ended = [agent.ended, tool.ended]
        tool.set_attribute("written.in.child", True)
        tool.end()
        agent.end()
        try:
            raise SystemExit(0)
        except SystemExit as exc:
            scope.__exit__(SystemExit, exc, exc.__traceback__)  # as the `with` block exits while unwinding
        with t.span(Kind.CHAIN, "child's own"):
            pass
        return {"ended": ended, "spans": [s.name for s in exporter.spans],
                "logged": [r.getMessage() for r in caplog.records if "started in another process" in r.getMessage()]}

    try:
        with caplog.at_level(logging.DEBUG, logger="otel_agents"):
            out = forking.run(child, tmp_path / "child.json")
        assert out["spans"] == ["child's own"], out
        assert out["ended"] == [True, True], out
        assert len(out["logged"]) == 1 and "parent tool" in out["logged"][0], out["logged"]
        assert exporter.spans == [] and not agent.ended and not tool.ended
    finally:
        tool.end()
        scope.__exit__(None, None, None)
    assert [s.name for s in exporter.spans] == ["execute_tool parent tool", "invoke_agent parent agent"]
    assert "written.in.child" not in exporter.spans[0].attributes
