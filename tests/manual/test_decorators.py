"""The decorators and ``span(...)``: every decorator on every function shape, nesting,
errors, streams, methods (issue 11)."""

from __future__ import annotations

import asyncio
import gc
import json

import pytest
from opentelemetry import trace
from opentelemetry.trace import StatusCode

import otel_agents
from otel_agents._spans import span as span_module
from otel_agents._spans.streams import WATCHDOG
from otel_agents.manual import Usage, current_span
from otel_agents._spans.finalisers import settle
from tests.spans import tree

# (label, decorator factory taking a name, expected kind, expected span name for name "f")
DECORATORS = [
    ("agent", lambda: otel_agents.agent(name="f"), "agent", "invoke_agent f"),
    ("tool", lambda: otel_agents.tool(name="f"), "tool", "execute_tool f"),
    ("chain", lambda: otel_agents.chain(name="f"), "chain", "f"),
    ("skill", lambda: otel_agents.skill(name="f"), "skill", "execute_tool f"),
    ("skill_multi_step", lambda: otel_agents.skill(name="f", multi_step=True), "skill", "skill f"),
    ("model_span", lambda: otel_agents.span("model", "f", provider="fake"), "model", "chat f"),
    ("retriever_span", lambda: otel_agents.span("retriever", "f"), "retriever", "retrieval f"),
]
SHAPES = ["sync", "async", "generator", "async_generator"]


@otel_agents.chain(name="inner")
def inner() -> str:
    return "in"


def make(shape: str, decorate):
    """A function of ``shape`` taking ``(x, y=2)`` that calls the decorated ``inner`` while it runs."""
    if shape == "sync":
        def f(x, y=2):
            inner()
            return f"{x}-{y}"
    elif shape == "async":
        async def f(x, y=2):
            await asyncio.sleep(0)
            inner()
            return f"{x}-{y}"
    elif shape == "generator":
        def f(x, y=2):
            yield f"{x}-"
            inner()
            yield f"{y}"
    else:
        async def f(x, y=2):
            yield f"{x}-"
            await asyncio.sleep(0)
            inner()
            yield f"{y}"
    return decorate(f)


def call(shape: str, fn, *args, **kwargs):
    if shape == "sync":
        return fn(*args, **kwargs)
    if shape == "async":
        return asyncio.run(fn(*args, **kwargs))
    if shape == "generator":
        return "".join(fn(*args, **kwargs))

    async def consume():
        return "".join([item async for item in fn(*args, **kwargs)])
    return asyncio.run(consume())


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("label,factory,kind,name", DECORATORS, ids=[d[0] for d in DECORATORS])
def test_each_decorator_on_each_shape(label, factory, kind, name, shape, exporter) -> None:
    """Each decorator on sync/async/generator/async-generator functions: kind, name, input
    (bound arguments, defaults applied), output, and a nested decorated call as a child."""
    fn = make(shape, factory())
    assert call(shape, fn, "a") == "a-2"
    assert not trace.get_current_span().get_span_context().is_valid
    spans = exporter.semantic()
    outer = next(s for s in spans if s.name == name)
    child = next(s for s in spans if s.name == "inner")
    assert outer.semantic_kind == kind
    assert outer.attributes["otel_agents.framework"] == "manual"
    assert child.parent_id == outer.span_id, tree(spans)
    assert outer.end_time >= child.end_time
    assert outer.status is StatusCode.UNSET
    if label in ("tool", "skill"):
        assert outer.json_attr("gen_ai.tool.call.arguments") == {"x": "a", "y": 2}
        assert outer.attributes["gen_ai.tool.name"] == "f"
        assert outer.attributes["gen_ai.tool.call.result"] == "a-2"
    else:
        assert outer.json_attr("input.value") == {"x": "a", "y": 2}
    assert outer.attributes["output.value"] == "a-2"
    if kind == "model":
        assert outer.attributes["gen_ai.request.model"] == "f"
        assert outer.attributes["gen_ai.provider.name"] == "fake"
    if kind == "agent":
        assert outer.attributes["gen_ai.agent.name"] == "f"


def test_single_argument_is_the_bare_input_and_names_default_to_the_function(exporter) -> None:
    @otel_agents.agent
    def support(question: str) -> str:
        return "answer"

    @otel_agents.tool("lookup")
    def lookup_order(order_id: str) -> dict:
        """Look up an order.

        Longer text the model does not need."""
        return {"status": "shipped"}

    support("where is my order?")
    lookup_order("A1")
    agent_span = next(s for s in exporter.spans if s.semantic_kind == "agent")
    tool_span = next(s for s in exporter.spans if s.semantic_kind == "tool")
    assert agent_span.name == "invoke_agent support"
    assert agent_span.attributes["input.value"] == "where is my order?"
    assert agent_span.attributes["input.mime_type"] == "text/plain"
    assert tool_span.name == "execute_tool lookup"
    assert tool_span.attributes["gen_ai.tool.description"] == "Look up an order."
    assert tool_span.json_attr("gen_ai.tool.call.arguments") == {"order_id": "A1"}
    assert tool_span.json_attr("gen_ai.tool.call.result") == {"status": "shipped"}


def test_methods_drop_self_and_cls_and_merge_kwargs(exporter) -> None:
    class Shop:
        @otel_agents.tool
        def refund(self, order_id, *, reason="damaged", **extra):
            return True

        @otel_agents.tool
        @classmethod
        def policy(cls, order_id):
            return cls.__name__

        @otel_agents.tool
        @staticmethod
        def price(order_id):
            return 1.5

    shop = Shop()
    assert shop.refund("A1", note="late") is True
    assert Shop.policy("A2") == "Shop"
    assert shop.price("A3") == 1.5
    spans = {s.name: s for s in exporter.spans}
    assert spans["execute_tool refund"].json_attr("gen_ai.tool.call.arguments") == \
        {"order_id": "A1", "reason": "damaged", "note": "late"}
    assert spans["execute_tool policy"].json_attr("gen_ai.tool.call.arguments") == {"order_id": "A2"}
    assert spans["execute_tool price"].json_attr("gen_ai.tool.call.arguments") == {"order_id": "A3"}


def test_nesting_builds_one_tree(exporter) -> None:
    """agent → model, tool → tool (a tool calling a tool); each child under the span that was running."""

    @otel_agents.span("model", "m1", provider="fake")
    def model(prompt):
        current_span().set_usage(Usage(input_tokens=3, output_tokens=2))
        return "call lookup"

    @otel_agents.tool
    def price(order_id):
        return 9

    @otel_agents.tool
    def lookup(order_id):
        return {"price": price(order_id)}

    @otel_agents.agent(name="support")
    def support(q):
        model(q)
        return lookup("A1")

    support("hi")
    spans = exporter.semantic()
    names = {s.name: s for s in spans}
    root = names["invoke_agent support"]
    assert root.parent_id is None
    assert names["chat m1"].parent_id == root.span_id
    assert names["execute_tool lookup"].parent_id == root.span_id
    assert names["execute_tool price"].parent_id == names["execute_tool lookup"].span_id
    assert len({s.trace_id for s in spans}) == 1
    usage = names["chat m1"].attributes
    assert (usage["gen_ai.usage.input_tokens"], usage["gen_ai.usage.output_tokens"],
            usage["llm.token_count.total"]) == (3, 2, 5)
    assert "gen_ai.usage.input_tokens" not in root.attributes  # usage on model spans only


@pytest.mark.parametrize("shape", SHAPES)
def test_exceptions_are_recorded_and_reraised_unchanged(shape, exporter) -> None:
    error = ValueError("no such order")

    if shape == "sync":
        @otel_agents.tool
        def failing(order_id):
            raise error
    elif shape == "async":
        @otel_agents.tool
        async def failing(order_id):
            raise error
    elif shape == "generator":
        @otel_agents.tool
        def failing(order_id):
            yield "partial"
            raise error
    else:
        @otel_agents.tool
        async def failing(order_id):
            yield "partial"
            raise error

    with pytest.raises(ValueError) as excinfo:
        call(shape, failing, "A1")
    assert excinfo.value is error
    assert not trace.get_current_span().get_span_context().is_valid
    snap = next(s for s in exporter.spans if s.name == "execute_tool failing")
    assert snap.status is StatusCode.ERROR
    assert snap.attributes["error.type"] == "ValueError"
    assert any(name == "exception" for name, _ in snap.events)


def test_an_agent_records_its_failing_tool_and_its_own_error(exporter) -> None:
    @otel_agents.tool
    def lookup(order_id):
        raise KeyError(order_id)

    @otel_agents.agent
    def support(q):
        try:
            lookup("A1")
        except KeyError:
            pass
        raise RuntimeError("gave up")

    with pytest.raises(RuntimeError, match="gave up"):
        support("q")
    spans = {s.name: s for s in exporter.spans}
    assert spans["execute_tool lookup"].attributes["error.type"] == "KeyError"
    assert spans["invoke_agent support"].attributes["error.type"] == "RuntimeError"


def test_cancellation_is_control_flow_not_error(exporter) -> None:
    @otel_agents.agent
    async def slow(q):
        await asyncio.sleep(10)

    async def main():
        task = asyncio.ensure_future(slow("q"))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task

    asyncio.run(main())
    snap = next(s for s in exporter.spans if s.name == "invoke_agent slow")
    assert snap.status is not StatusCode.ERROR
    assert snap.attributes["otel_agents.control_flow"].endswith("CancelledError")


def test_abandoned_generators_end_their_spans(exporter) -> None:
    """A generator (sync and async) left after one item ends its span, marked abandoned, not ERROR."""

    @otel_agents.chain
    def numbers():
        yield from range(100)

    @otel_agents.chain
    async def anumbers():
        for i in range(100):
            yield i

    for n in numbers():
        break

    async def main():
        async for n in anumbers():
            break

    asyncio.run(main())
    gc.collect()
    settle()  # a collected stream's span ends in the finaliser thread
    for name in ("numbers", "anumbers"):
        snap = next(s for s in exporter.spans if s.name == name)
        assert snap.attributes["otel_agents.stream.abandoned"] is True
        assert snap.status is not StatusCode.ERROR
        assert snap.attributes["output.value"] == "[0]"
    assert WATCHDOG.pending() == 0
    assert len(span_module._OPEN) == 0


def test_generators_driven_by_send_and_throw_end_their_spans_truly(exporter) -> None:
    """A coroutine-style generator (sync and async) driven by ``send``/``asend`` to its end ends its span then,
    not as abandoned when dropped; one that ``throw`` makes raise ends ERROR with that error; what it yields
    to a ``send`` or a handled ``throw`` is output."""

    @otel_agents.chain
    def echo():
        got = yield "ready"
        try:
            yield f"got {got}"
        except KeyError:
            yield "handled"
        return "done"

    @otel_agents.chain
    async def aecho():
        got = yield "ready"
        yield f"got {got}"

    gen = echo()
    assert next(gen) == "ready" and gen.send("a") == "got a" and gen.throw(KeyError()) == "handled"
    with pytest.raises(StopIteration) as stop:
        gen.send(None)
    assert stop.value.value == "done"  # the generator's return value reaches the caller
    [snap] = [s for s in exporter.spans if s.name == "echo"]  # ended now, while `gen` is still referenced
    assert "otel_agents.stream.abandoned" not in snap.attributes and snap.status is not StatusCode.ERROR
    assert snap.attributes["output.value"] == "readygot ahandled"  # string items are joined

    failing = echo()
    next(failing)
    with pytest.raises(ValueError):
        failing.throw(ValueError("bad"))
    snap = [s for s in exporter.spans if s.name == "echo"][1]
    assert snap.status is StatusCode.ERROR and snap.attributes["error.type"] == "ValueError"
    assert "otel_agents.stream.abandoned" not in snap.attributes

    async def main():
        agen = aecho()
        assert await agen.__anext__() == "ready" and await agen.asend("b") == "got b"
        with pytest.raises(StopAsyncIteration):
            await agen.asend(None)
        [snap] = [s for s in exporter.spans if s.name == "aecho"]
        assert "otel_agents.stream.abandoned" not in snap.attributes
        agen2 = aecho()
        await agen2.__anext__()
        with pytest.raises(ValueError):
            await agen2.athrow(ValueError("bad"))
        assert [s for s in exporter.spans if s.name == "aecho"][1].attributes["error.type"] == "ValueError"

    asyncio.run(main())
    assert len(span_module._OPEN) == 0


def test_callable_objects_are_decorated_by_the_shape_of_their_call(exporter) -> None:
    """A tool class with ``async def __call__`` (or a generator ``__call__``): its span covers the awaited call,
    its output is the result (it was a sync span ended before the coroutine ran, output ``<coroutine>``), a
    decorated call inside it is its child; named after the class by default."""

    class LookupOrder:
        async def __call__(self, order_id: str) -> str:
            inner()
            await asyncio.sleep(0)
            return f"shipped {order_id}"

    class Numbers:
        def __call__(self, n: int):
            yield from range(n)

    lookup = otel_agents.tool(LookupOrder())
    numbers = otel_agents.chain(Numbers())

    async def main():
        assert await lookup(order_id="A1") == "shipped A1"

    asyncio.run(main())
    assert list(numbers(3)) == [0, 1, 2]
    spans = {s.name: s for s in exporter.spans}
    tool = spans["execute_tool LookupOrder"]
    assert tool.attributes["gen_ai.tool.call.result"] == "shipped A1"
    assert json.loads(tool.attributes["gen_ai.tool.call.arguments"]) == {"order_id": "A1"}
    assert spans["inner"].parent_id == tool.span_id
    assert json.loads(spans["Numbers"].attributes["output.value"]) == [0, 1, 2]


def plain_sync_decorator(fn):
    """Another library's decorator that knows nothing of coroutines: its wrapper is a sync function returning
    what ``fn`` returns (here a coroutine)."""
    import functools

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)
    return wrapper


@pytest.mark.filterwarnings("ignore:coroutine 'plain_sync_decorator.<locals>.wrapper' was never awaited")
@pytest.mark.filterwarnings("ignore:coroutine .*support' was never awaited")
def test_a_sync_callable_returning_a_coroutine_is_spanned_over_the_await(exporter) -> None:
    """An async function under a plain sync decorator (or ``lambda q: run(q)``) returns a coroutine from a sync call.
    Before, its span ended at that return, before any of the work: output ``"<coroutine>"``, and a decorated tool
    awaited inside it was a root span of another trace. Now the span covers the await (the work nests under it, the
    result is its output); an exception is its error, a cancellation control flow, a coroutine never awaited ends it
    as abandoned; nothing is left current; ``asyncio.create_task`` still takes what it returns."""

    @otel_agents.tool
    async def lookup(order_id: str) -> str:
        await asyncio.sleep(0)
        return f"shipped {order_id}"

    @otel_agents.agent(name="support")
    @plain_sync_decorator
    async def support(question: str) -> str:
        inner()
        return await lookup(order_id=question)

    @otel_agents.agent(name="failing")
    @plain_sync_decorator
    async def failing(question: str) -> str:
        await asyncio.sleep(0)
        raise ValueError("no such order")

    @otel_agents.agent(name="slow")
    @plain_sync_decorator
    async def slow(question: str) -> str:
        await asyncio.sleep(3600)
        return "late"

    agent_of_lambda = otel_agents.agent(name="via_lambda")(lambda q: support(q))

    async def main() -> None:
        assert trace.get_current_span() is trace.INVALID_SPAN
        assert await asyncio.create_task(support("A1")) == "shipped A1"
        assert await agent_of_lambda("A2") == "shipped A2"
        with pytest.raises(ValueError, match="no such order"):
            await failing("A3")
        task = asyncio.create_task(slow("A4"))
        await asyncio.sleep(0)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert trace.get_current_span() is trace.INVALID_SPAN

    asyncio.run(main())
    never = support("A5")  # a coroutine let go unawaited
    assert trace.get_current_span() is trace.INVALID_SPAN
    del never
    gc.collect()
    settle()
    spans = exporter.spans
    first = [s for s in spans if s.name == "invoke_agent support"][0]
    assert first.attributes["output.value"] == "shipped A1" and first.attributes["input.value"] == "A1"
    children = {s.name for s in spans if s.parent_id == first.span_id}
    assert children == {"inner", "execute_tool lookup"}, "the work nests under the span"
    outer = next(s for s in spans if s.name == "invoke_agent via_lambda")
    nested = [s for s in spans if s.name == "invoke_agent support" and s.parent_id == outer.span_id]
    assert len(nested) == 1 and outer.attributes["output.value"] == "shipped A2"
    failed = next(s for s in spans if s.name == "invoke_agent failing")
    assert failed.status is StatusCode.ERROR and failed.attributes["error.type"] == "ValueError"
    cancelled = next(s for s in spans if s.name == "invoke_agent slow")
    assert cancelled.status is not StatusCode.ERROR and cancelled.attributes.get("otel_agents.control_flow")
    unawaited = [s for s in spans if s.name == "invoke_agent support" and s.attributes.get("input.value") == "A5"]
    assert len(unawaited) == 1 and unawaited[0].attributes["otel_agents.stream.abandoned"] is True
    assert len(span_module._OPEN) == 0


def test_a_sync_callable_returning_a_generator_is_spanned_over_the_stream(exporter) -> None:
    """A generator or async generator under a plain sync decorator: before, the span ended at the sync return, output
    ``"<generator>"``, and the work each step did was outside it. Now it is what a decorated generator function
    gives: the span ends with the stream, the items its output, the work of each step its children."""

    @otel_agents.chain(name="numbers")
    @plain_sync_decorator
    def numbers(n: int):
        for i in range(n):
            inner()
            yield i

    @otel_agents.chain(name="anumbers")
    @plain_sync_decorator
    async def anumbers(n: int):
        for i in range(n):
            await asyncio.sleep(0)
            inner()
            yield i

    async def consume():
        return [i async for i in anumbers(2)]

    assert list(numbers(2)) == [0, 1]
    assert asyncio.run(consume()) == [0, 1]
    assert trace.get_current_span() is trace.INVALID_SPAN
    spans = {s.name: s for s in exporter.spans if s.name != "inner"}
    for name in ("numbers", "anumbers"):
        assert spans[name].attributes["output.value"] == "[0,1]"
        assert len([s for s in exporter.spans if s.name == "inner" and s.parent_id == spans[name].span_id]) == 2
    assert len(span_module._OPEN) == 0


def test_a_run_context_around_a_sync_callable_returning_a_coroutine_covers_the_await(exporter) -> None:
    """``@using_session(...)`` on a sync function that returns a coroutine (or a generator): before, the scope was left
    at that return, so the spans the coroutine opened when awaited (the generator at each step) carried no session;
    now they do, and nothing stays pushed."""

    @otel_agents.using_session("s-7")
    @plain_sync_decorator
    async def handle(q: str) -> str:
        inner()
        return q

    @otel_agents.using_session("s-8")
    @plain_sync_decorator
    def steps():
        inner()
        yield 1

    assert asyncio.run(handle("x")) == "x"
    assert list(steps()) == [1]
    sessions = [s.attributes.get("session.id") for s in exporter.spans if s.name == "inner"]
    assert sessions == ["s-7", "s-8"]
    inner()
    assert "session.id" not in exporter.spans[-1].attributes


def test_one_span_object_entered_by_many_tasks_at_once(exporter) -> None:
    """``STEP = span("chain", "step")`` entered by concurrent tasks: each exit ends the span its own task opened
    (the first to leave ended the last one's span, detaching a context token of another task), so each span
    covers its own task's body and nothing stays current."""
    step = otel_agents.span("chain", "step")

    async def handler(i: int) -> None:
        with step as s:
            s.set_input(i)
            await asyncio.sleep(0.005 * (i + 1))  # the first to enter leaves first
            assert current_span() is s
            inner()
        assert not current_span().is_recording

    async def main() -> None:
        await asyncio.gather(*(handler(i) for i in range(3)))

    asyncio.run(main())
    steps = {s.attributes["input.value"]: s for s in exporter.spans if s.name == "step"}
    assert sorted(steps) == ["0", "1", "2"]
    inners = [s for s in exporter.spans if s.name == "inner"]
    assert sorted(steps[str(i)].span_id for i in range(3)) == sorted(s.parent_id for s in inners)
    assert len(span_module._OPEN) == 0


def test_closed_generator_and_generator_span_context(exporter) -> None:
    """``close()`` ends the span; the generator's body (and its ``finally``) runs with its span current,
    the consumer between items does not."""
    seen = []

    @otel_agents.chain
    def steps():
        try:
            seen.append(current_span().name)
            yield 1
            yield 2
        finally:
            seen.append(current_span().name if current_span() else None)

    gen = steps()
    assert next(gen) == 1
    assert not current_span().is_recording  # outside: the span that records nothing
    gen.close()
    assert seen == ["steps", "steps"]
    snap = next(s for s in exporter.spans if s.name == "steps")
    assert snap.attributes["otel_agents.stream.abandoned"] is True


def test_span_context_manager(exporter) -> None:
    """``with otel_agents.span(kind, name)`` for anything else: current inside, errors re-raised."""
    with otel_agents.span("agent", "support", description="helps") as a:
        assert otel_agents.current_agent_span() is a
        with otel_agents.span("model", "m1", provider="fake") as m:
            m.set_input("prompt")
            m.set_usage(Usage(10, 4))
            m.set_output("answer")
        a.set_output("answer")
    with pytest.raises(ZeroDivisionError):
        with otel_agents.span("tool", "divide"):
            1 / 0
    spans = {s.name: s for s in exporter.spans}
    assert spans["chat m1"].parent_id == spans["invoke_agent support"].span_id
    assert spans["chat m1"].attributes["gen_ai.usage.input_tokens"] == 10
    assert spans["invoke_agent support"].attributes["gen_ai.agent.description"] == "helps"
    assert spans["execute_tool divide"].attributes["error.type"] == "ZeroDivisionError"
    with pytest.raises(ValueError):
        otel_agents.span("nonsense")


def test_decorating_something_else_is_a_clear_error() -> None:
    with pytest.raises(TypeError, match="expected a function"):
        otel_agents.tool(name="x")(42)


def test_an_unknown_span_kind_names_the_kinds_there_are() -> None:
    """``span("modle")`` said only ``'modle' is not a valid Kind`` (Enum's message): now which kinds there are."""
    with pytest.raises(ValueError, match="span kind 'modle' is not one of agent, chain, model, tool, skill, "
                                         "retriever, embedding"):
        otel_agents.span("modle")


def test_index_of_open_spans_returns_to_empty(exporter) -> None:
    """The span-id index behind current_agent_span() holds open spans only."""

    @otel_agents.agent
    def run(i):
        if i % 3 == 0:
            raise ValueError(i)
        return i

    for i in range(30):
        try:
            run(i)
        except ValueError:
            pass
    gc.collect()
    settle()  # a collected stream's span ends in the finaliser thread
    assert len(span_module._OPEN) == 0
    assert len(exporter.semantic("agent")) == 30


def test_suppressed_instrumentation_opens_no_spans(exporter) -> None:
    from opentelemetry.instrumentation.utils import suppress_instrumentation

    @otel_agents.agent
    def run(q):
        return q

    with suppress_instrumentation():
        assert run("x") == "x"
    assert exporter.spans == []


@pytest.mark.parametrize("where", ["no SDK provider", "suppressed", "outside any span"])
def test_current_span_setters_never_break_a_program_where_nothing_records(where: str, provider, exporter) -> None:
    """The module docstring's ``current_span().set_usage(...)`` in a model function raised ``AttributeError``
    ('NoneType' object has no attribute 'set_usage') where nothing records: no SDK tracer provider (an app run
    before ``configure()``, or with ``OTEL_SDK_DISABLED=true``) or suppressed instrumentation. ``current_span()`` is
    now never ``None``, as ``trace.get_current_span()`` never is; what is set there is kept nowhere."""
    from opentelemetry.instrumentation.utils import suppress_instrumentation

    from otel_agents import manual
    from otel_agents.manual import ChatMessage, TextPart

    @otel_agents.span("model", "fake-1", provider="fake")
    def model(prompt: str) -> str:
        span = current_span()
        span.set_usage(Usage(input_tokens=3, output_tokens=1))
        span.set_finish_reasons(["stop"])
        span.set_messages(output=[ChatMessage("assistant", [TextPart("ok")])])
        span.set_attribute("app.step", 1)
        return f"ok: {span.is_recording}"

    if where == "no SDK provider":
        manual.set_providers(trace.NoOpTracerProvider())
        assert model("hi") == "ok: False"
    elif where == "suppressed":
        with suppress_instrumentation():
            assert model("hi") == "ok: False"
    else:
        assert model.__wrapped__("hi") == "ok: False"
    assert exporter.spans == []
    manual.set_providers(provider)  # back on the test's provider: there it records
    assert model("hi") == "ok: True"
    [span] = exporter.spans
    assert span.attributes["gen_ai.usage.input_tokens"] == 3


def test_several_arguments_become_one_json_object(exporter) -> None:
    @otel_agents.chain
    def step(a, b):
        return {"sum": a + b}

    step(1, b=2)
    snap = exporter.spans[0]
    assert json.loads(snap.attributes["input.value"]) == {"a": 1, "b": 2}
    assert snap.attributes["output.mime_type"] == "application/json"


def test_wrong_arguments_raise_the_users_error_and_log_nothing(exporter, caplog) -> None:
    @otel_agents.tool
    def lookup(order_id):
        return order_id

    with pytest.raises(TypeError):
        lookup("A1", "unexpected")
    assert not [r for r in caplog.records if r.name == "otel_agents"]
    assert next(s for s in exporter.spans).attributes["error.type"] == "TypeError"


def test_a_secret_stays_redacted_when_its_value_is_truncated(exporter, monkeypatch) -> None:
    """Redaction survives truncation: the cut is re-encoded from redacted data, never from the original."""
    monkeypatch.setenv("OTEL_AGENTS_MAX_CONTENT_LENGTH", "200")
    secret = "sk-proj-" + "A1b2C3d4" * 6

    @otel_agents.tool
    def call_api(note: str, password: str) -> str:
        return note

    call_api(f"use {secret} then " + "x" * 5000, password="hunter2")
    snap = exporter.spans[0]
    assert snap.attributes["otel_agents.truncated"] is True
    for value in snap.attributes.values():
        assert secret[:12] not in str(value) and "hunter2" not in str(value)
    assert "[REDACTED]" in snap.attributes["gen_ai.tool.call.arguments"]
