"""Run context (session, user, tags, metadata) and ``current_agent_span()`` (issue 11)."""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextvars
import json
import threading

import pytest
from opentelemetry import trace

import otel_agents
from otel_agents._spans import Telemetry, current_run_attributes


@otel_agents.tool
def probe() -> str:
    return "ok"


def attrs_of(exporter, name):
    return next(s for s in exporter.spans if s.name == name).attributes


def test_each_context_sets_its_attributes(exporter) -> None:
    with otel_agents.using_session("conv-1"), otel_agents.using_user(42), \
            otel_agents.using_tags(["beta", "eu"]), otel_agents.using_metadata({"tier": "gold", "n": 3}):
        probe()
    a = attrs_of(exporter, "execute_tool probe")
    assert a["session.id"] == "conv-1"
    assert a["gen_ai.conversation.id"] == "conv-1"
    assert a["user.id"] == "42"
    assert list(a["tag.tags"]) == ["beta", "eu"]
    assert json.loads(a["metadata"]) == {"tier": "gold", "n": 3}


def test_nesting_merges_tags_and_metadata_and_exit_restores(exporter) -> None:
    with otel_agents.using_tags(["a", "b"]), otel_agents.using_metadata({"x": 1, "y": 1}):
        with otel_agents.using_tags(["b", "c"]), otel_agents.using_metadata({"y": 2}), \
                otel_agents.using_session("inner"):
            with otel_agents.span("chain", "deep"):
                pass
        with otel_agents.span("chain", "outer"):
            pass
    with otel_agents.span("chain", "after"):
        pass
    deep, outer, after = (attrs_of(exporter, n) for n in ("deep", "outer", "after"))
    assert list(deep["tag.tags"]) == ["a", "b", "c"]
    assert json.loads(deep["metadata"]) == {"x": 1, "y": 2}
    assert deep["session.id"] == "inner"
    assert list(outer["tag.tags"]) == ["a", "b"]
    assert json.loads(outer["metadata"]) == {"x": 1, "y": 1}
    assert "session.id" not in outer
    assert not {"tag.tags", "metadata", "session.id"} & set(after)
    assert current_run_attributes() == {}


def test_content_off_keeps_the_applications_labels_and_redacts_their_secrets(exporter, monkeypatch) -> None:
    """Content capture off hides captured content, not the run context the application attaches: as
    OpenInference's TraceConfig (OPENINFERENCE_HIDE_*) never masks session.id, user.id, metadata or tag.tags,
    they are written; a secret in metadata is still redacted. The prompt and answer are not written."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "false")

    @otel_agents.agent
    def answer(question: str) -> str:
        return "ANSWER-TEXT"

    with otel_agents.using_tags(["beta"]), otel_agents.using_metadata({"tier": "gold", "api_key": "sk-" + "a" * 40}):
        answer("PROMPT-TEXT")
    a = attrs_of(exporter, "invoke_agent answer")
    assert list(a["tag.tags"]) == ["beta"]
    assert json.loads(a["metadata"]) == {"tier": "gold", "api_key": "[REDACTED]"}
    assert "PROMPT-TEXT" not in str(a) and "ANSWER-TEXT" not in str(a)


def test_none_ids_add_nothing_and_odd_metadata_is_encoded(exporter, monkeypatch) -> None:
    monkeypatch.setenv("OTEL_AGENTS_MAX_CONTENT_LENGTH", "256")
    import datetime
    import decimal

    with otel_agents.using_session(None), otel_agents.using_user(""), otel_agents.using_tags("solo"), \
            otel_agents.using_metadata({"when": datetime.date(2025, 1, 2), "amount": decimal.Decimal("1.10"),
                                        1: "int key", "big": "x" * 10_000}):
        probe()
    a = attrs_of(exporter, "execute_tool probe")
    assert "session.id" not in a and "user.id" not in a
    assert list(a["tag.tags"]) == ["solo"]
    meta = json.loads(a["metadata"])
    assert len(a["metadata"]) <= 256
    assert meta["when"] == "2025-01-02" and meta["amount"] == "1.10" and meta["1"] == "int key"


@pytest.mark.parametrize("value", ["tier=gold", ["gold"], 5])
def test_metadata_that_is_no_mapping_is_a_type_error_naming_it(value) -> None:
    """``using_metadata("tier=gold")`` raised dict()'s ``ValueError: dictionary update sequence element #0 has
    length 1; 2 is required`` (a list of words: ``TypeError: cannot convert dictionary update sequence element``),
    which names neither the function nor the argument."""
    with pytest.raises(TypeError, match=rf"^using_metadata takes a mapping of labels, not {type(value).__name__}$"):
        otel_agents.using_metadata(value)


def test_works_as_decorator_on_sync_async_and_generators(exporter) -> None:
    """Each call runs in a fresh scope; a generator's consumer does not see the attributes between items."""

    @otel_agents.using_session("s-sync")
    def sync_run():
        return probe()

    @otel_agents.using_session("s-async")
    async def async_run():
        await asyncio.sleep(0)
        return probe()

    between = []

    @otel_agents.using_session("s-gen")
    def gen_run():
        yield probe()
        yield probe()

    @otel_agents.using_user("u-agen")
    async def agen_run():
        yield probe()

    assert sync_run() == "ok"
    assert asyncio.run(async_run()) == "ok"
    for _ in gen_run():
        between.append(dict(current_run_attributes()))

    async def consume():
        return [x async for x in agen_run()]

    assert asyncio.run(consume()) == ["ok"]
    sessions = [s.attributes.get("session.id") or s.attributes.get("user.id") for s in exporter.spans]
    assert sessions == ["s-sync", "s-async", "s-gen", "s-gen", "u-agen"]
    assert between == [{}, {}]
    assert current_run_attributes() == {}


def test_reaches_spans_in_a_thread_pool_with_copied_context(exporter) -> None:
    """Context attributes reach spans created in pool threads that run with a copy of the context."""
    with otel_agents.using_session("pool"), otel_agents.using_tags(["threads"]):
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            futures = [pool.submit(contextvars.copy_context().run, probe) for _ in range(8)]
            assert [f.result() for f in futures] == ["ok"] * 8
    spans = [s for s in exporter.spans if s.name == "execute_tool probe"]
    assert len(spans) == 8
    assert all(s.attributes["session.id"] == "pool" and list(s.attributes["tag.tags"]) == ["threads"]
               for s in spans)


def test_reaches_asyncio_gather_children(exporter) -> None:
    @otel_agents.tool
    async def aprobe(i):
        await asyncio.sleep(0)
        return i

    async def main():
        with otel_agents.using_session("gathered"), otel_agents.using_user("u1"):
            return await asyncio.gather(*(aprobe(i) for i in range(10)))

    assert asyncio.run(main()) == list(range(10))
    spans = [s for s in exporter.spans if s.name == "execute_tool aprobe"]
    assert len(spans) == 10
    assert all(s.attributes["session.id"] == "gathered" and s.attributes["user.id"] == "u1" for s in spans)


def test_explicit_parents_on_another_thread_inherit(provider, exporter) -> None:
    """A callback framework opens children with an explicit parent on a thread without our context:
    the SemanticSpan, Context and Span parent forms all inherit the run attributes."""
    framework = Telemetry(provider, framework="test")
    with otel_agents.using_session("cb"):
        root = framework.start_span("agent", "cb-agent")
    parents = {"semantic": root, "context": root.context(), "span": root.span}
    children = {}

    def worker():
        for label, parent in parents.items():
            children[label] = framework.start_span("tool", label, parent=parent)

    t = threading.Thread(target=worker)
    t.start()
    t.join()
    for child in children.values():
        assert child.parent is root
        child.end()
    root.end()
    for label in parents:
        assert attrs_of(exporter, f"execute_tool {label}")["session.id"] == "cb"


class TestCurrentAgentSpan:
    def test_none_outside_any_agent(self) -> None:
        assert otel_agents.current_agent_span() is None
        with otel_agents.span("tool", "lonely"):
            assert otel_agents.current_agent_span() is None

    def test_from_tool_and_model_calls_innermost_agent(self, app_tracer) -> None:
        seen = {}

        @otel_agents.span("model", "m1")
        def model():
            seen["model"] = otel_agents.current_agent_span()

        @otel_agents.tool
        def tool():
            with app_tracer.start_as_current_span("app-span-inside-tool"):
                seen["tool_via_app_span"] = otel_agents.current_agent_span()

        @otel_agents.agent(name="sub")
        def sub():
            seen["sub"] = otel_agents.current_agent_span()
            tool()

        @otel_agents.agent(name="main")
        def main():
            seen["main"] = otel_agents.current_agent_span()
            model()
            sub()

        main()
        assert seen["main"].name == "invoke_agent main"
        assert seen["model"] is seen["main"]
        assert seen["sub"].name == "invoke_agent sub"
        assert seen["tool_via_app_span"] is seen["sub"]
        assert seen["sub"].parent is seen["main"]

    def test_user_can_add_attributes_and_events(self, exporter) -> None:
        @otel_agents.tool
        def lookup():
            agent = otel_agents.current_agent_span()
            agent.set_attribute("app.customer_tier", "gold")
            agent.span.add_event("looked up")

        @otel_agents.agent
        def support():
            lookup()

        support()
        snap = next(s for s in exporter.spans if s.name == "invoke_agent support")
        assert snap.attributes["app.customer_tier"] == "gold"
        assert ("looked up", {}) in snap.events

    def test_through_instrumentor_spans_opened_with_explicit_parents(self, provider) -> None:
        """Spans an instrumentor opens with explicit parents (possibly on another thread) lead back
        to the agent, however the parent was given."""
        framework = Telemetry(provider, framework="test")
        agent = framework.start_span("agent", "fw-agent")
        model = framework.start_span("model", "m", parent=agent.context())
        tool = framework.start_span("tool", "t", parent=model.span)
        found = []

        def in_tool():
            with tool.activate():
                found.append(otel_agents.current_agent_span())

        t = threading.Thread(target=in_tool)
        t.start()
        t.join()
        for s in (tool, model, agent):
            s.end()
        assert found == [agent]

    def test_never_raises(self, monkeypatch) -> None:
        monkeypatch.setattr(trace, "get_current_span", lambda *a: 1 / 0)
        assert otel_agents.current_agent_span() is None


@pytest.mark.parametrize("entry", ["with", "decorator"])
def test_context_survives_an_exception(entry, exporter) -> None:
    if entry == "with":
        with pytest.raises(KeyError):
            with otel_agents.using_session("boom"):
                raise KeyError("x")
    else:
        @otel_agents.using_session("boom")
        def f():
            raise KeyError("x")
        with pytest.raises(KeyError):
            f()
    assert current_run_attributes() == {}


def test_one_context_object_entered_by_many_tasks_and_threads_at_once(exporter, caplog) -> None:
    """A module-level ``BETA = using_tags(["beta"])`` entered by concurrent handlers: each leaves its own entry
    (the first to leave popped the last one's, so its tag stayed on its later spans, and the others logged an
    internal error)."""
    beta = otel_agents.using_tags(["beta"])

    @otel_agents.chain
    def step(label: str) -> str:
        return label

    async def handler(i: int) -> None:
        with beta:
            await asyncio.sleep(0.005 * (i + 1))  # the first to enter leaves first
            step(f"in-{i}")
        step(f"after-{i}")

    async def main() -> None:
        await asyncio.gather(*(handler(i) for i in range(3)))

    asyncio.run(main())
    barrier = threading.Barrier(3)

    def thread_handler(i: int) -> None:
        with beta:
            barrier.wait()
            step(f"t-in-{i}")
            barrier.wait()
        step(f"t-after-{i}")

    with concurrent.futures.ThreadPoolExecutor(3) as pool:
        list(pool.map(thread_handler, range(3)))
    tags = {s.attributes["input.value"]: s.attributes.get("tag.tags") for s in exporter.spans}
    assert len(tags) == 12
    assert all(list(t) == ["beta"] for label, t in tags.items() if "in-" in label), tags
    assert all(t is None for label, t in tags.items() if "after-" in label), tags
    assert "internal error" not in caplog.text


def test_a_callable_object_with_an_async_call_runs_inside_the_context(exporter) -> None:
    """``using_session`` on a tool class with ``async def __call__``: the session reaches the spans its awaited
    call opens (the sync wrapper left the context before the coroutine ran)."""

    class Handler:
        async def __call__(self) -> str:
            await asyncio.sleep(0)
            return probe()

    handler = otel_agents.using_session("conv-9")(Handler())
    assert asyncio.run(handler()) == "ok"
    assert attrs_of(exporter, "execute_tool probe")["session.id"] == "conv-9"
