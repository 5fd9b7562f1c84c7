"""Making a span current around a block (:class:`otel_agents._spans.Activation`): ``SemanticSpan.activate``,
``Telemetry.span`` and the instrumentors' own activations (Agno's, ADK's stand-in tracer) are all one class."""

from __future__ import annotations

import asyncio
import logging
import threading

import pytest
from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import StatusCode

from otel_agents._spans import Activation, Telemetry, settle_context
from otel_agents._spans.guard import reset_reported_sites


@pytest.fixture
def telemetry(provider) -> Telemetry:
    return Telemetry(provider, framework="test")


def current():
    return trace.get_current_span()


def test_activate_detaches_when_the_body_raises_and_leaves_the_span_to_its_owner(telemetry, exporter) -> None:
    """The body's exception goes on unchanged, the span is no longer current, and it is neither ended nor
    given the error: whoever opened it decides (unlike ``Telemetry.span``, which records and ends)."""
    s = telemetry.start_span("tool", "lookup")
    err = ValueError("the user's own")
    with pytest.raises(ValueError) as info:
        with s.activate() as entered:
            assert entered is s and current() is s.span
            raise err
    assert info.value is err
    assert not current().get_span_context().is_valid
    assert exporter.spans == [] and not s.ended
    s.end()
    [span] = exporter.spans
    assert span.status is StatusCode.UNSET and not span.events


def test_nested_activations_restore_each_level(telemetry, exporter) -> None:
    """Each exit restores what was current at its enter: two spans, the same span twice, a scope inside,
    and an inner one left by an exception."""
    outer, inner = telemetry.start_span("agent", "a"), telemetry.start_span("tool", "t")
    with outer.activate():
        with inner.activate():
            assert current() is inner.span
            with inner.activate():
                assert current() is inner.span
            assert current() is inner.span
            with telemetry.span("chain", "step") as step:
                assert current() is step.span and step.parent is inner
            assert current() is inner.span
        assert current() is outer.span
        with pytest.raises(KeyError):
            with inner.activate():
                raise KeyError("x")
        assert current() is outer.span
    assert not current().get_span_context().is_valid


def test_span_scope_detaches_then_records_and_ends_when_nested(telemetry, exporter) -> None:
    with telemetry.span("agent", "a") as agent:
        with pytest.raises(RuntimeError):
            with telemetry.span("tool", "t"):
                raise RuntimeError("boom")
        assert current() is agent.span
    tool = next(s for s in exporter.spans if s.name == "execute_tool t")
    assert tool.status is StatusCode.ERROR and [e[0] for e in tool.events] == ["exception"]


def test_an_exit_in_another_context_is_logged_once_and_never_raised(telemetry, exporter, app_tracer,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    """An activation entered on one thread and left on another (a stream finalised elsewhere) cannot
    detach there: the other thread's context is untouched, nothing is raised, and our log has one
    WARNING for it however often it happens (OTel's own ``detach`` logs an ERROR with a traceback each time)."""
    reset_reported_sites()
    s = telemetry.start_span("model", "m")
    activations = [s.activate(), telemetry.span("tool", "t"), s.activate()]
    for activation in activations:
        worker = threading.Thread(target=activation.__enter__)
        worker.start()
        worker.join()
    with caplog.at_level(logging.DEBUG), app_tracer.start_as_current_span("app") as app:
        for activation in activations:
            assert activation.__exit__(None, None, None) is False
            assert current() is app
    s.end()
    detach_logs = [r for r in caplog.records if "detach" in r.getMessage()]
    assert [(r.name, r.levelname) for r in detach_logs] == [("otel_agents", "WARNING")] + \
        [("otel_agents", "DEBUG")] * 2, [r.getMessage() for r in detach_logs]
    assert {span.name for span in exporter.spans} == {"chat m", "execute_tool t", "app"}  # the scope ended its span


def test_exiting_twice_is_never_raised(telemetry) -> None:
    s = telemetry.start_span("tool", "t")
    activation = s.activate()
    with activation:
        pass
    activation.__exit__(None, None, None)  # its token is used already
    assert not current().get_span_context().is_valid
    s.end()


def test_activations_in_concurrent_tasks_are_each_tasks_own(telemetry) -> None:
    """Across awaits each task sees its own span; a cancelled body is detached like a failed one."""
    a, b = telemetry.start_span("agent", "a"), telemetry.start_span("agent", "b")

    async def work(span, seen: list) -> None:
        with span.activate():
            for _ in range(3):
                await asyncio.sleep(0)
                seen.append(current() is span.span)

    async def cancelled() -> bool:
        sleeper = telemetry.start_span("tool", "sleep")
        with a.activate():
            task = asyncio.ensure_future(_sleep_in(sleeper))
            await asyncio.sleep(0)
            task.cancel()
            with pytest.raises(asyncio.CancelledError):
                await task
            still = current() is a.span
        sleeper.end()
        return still and not current().get_span_context().is_valid

    async def _sleep_in(span) -> None:
        with span.activate():
            try:
                await asyncio.sleep(10)
            finally:
                assert current() is span.span
        raise AssertionError("not reached")  # pragma: no cover

    async def main() -> tuple[list, list, bool]:
        seen_a: list = []
        seen_b: list = []
        await asyncio.gather(work(a, seen_a), work(b, seen_b))
        return seen_a, seen_b, await cancelled()

    seen_a, seen_b, ok = asyncio.run(main())
    assert seen_a == [True] * 3 and seen_b == [True] * 3 and ok
    assert not current().get_span_context().is_valid
    a.end()
    b.end()


def test_an_activation_attaches_the_context_it_is_given(telemetry) -> None:
    """``context=``: a context carrying a key of the caller's besides the span (Agno's "ours")."""
    key = otel_context.create_key("test.ours")
    s = telemetry.start_span("agent", "a")
    ctx = otel_context.set_value(key, s, s.context())
    with Activation(s.span, s, ctx) as entered:
        assert entered is s and current() is s.span and otel_context.get_value(key) is s
    assert otel_context.get_value(key) is None and not current().get_span_context().is_valid
    with Activation(s.span) as entered:  # no `entered`: the OTel span, as trace.use_span gives
        assert entered is s.span and current() is s.span
    s.end()


def test_an_api_without_the_runtime_context_name_gets_the_public_detach(telemetry, monkeypatch) -> None:
    """``_detach`` is the runtime context's own ``detach`` (a private name of opentelemetry-api): an API
    without that name gets OTel's public ``detach``, and activations work the same."""
    import importlib

    from otel_agents._spans import activation

    monkeypatch.delattr(otel_context, "_RUNTIME_CONTEXT")
    fallback = importlib.reload(activation)
    monkeypatch.undo()  # OTel's public attach/detach need it back; the module keeps its choice
    try:
        assert fallback._detach is otel_context.detach
        s = telemetry.start_span("tool", "t")
        with pytest.raises(KeyError), fallback.Activation(s.span, s) as entered:
            assert entered is s and current() is s.span
            raise KeyError("the body's")
        assert not current().get_span_context().is_valid
        s.end()
    finally:
        importlib.reload(activation)
        assert activation._detach is not otel_context.detach


def test_settle_context_takes_off_what_two_handlers_left_current_and_nothing_else(provider) -> None:
    """Two handlers that each attach their span at a call's start and detach it at its end, called in the same
    order both times (LangChain's callbacks, LlamaIndex's dispatcher), leave the first's ended span current:
    ``settle_context`` puts back the context of before the call; a live span made current is left alone."""
    tracer = provider.get_tracer("t")
    with tracer.start_as_current_span("app") as app:
        before = otel_context.get_current()
        ours, theirs = tracer.start_span("ours"), tracer.start_span("theirs")
        ours_token = otel_context.attach(trace.set_span_in_context(ours))
        theirs_token = otel_context.attach(trace.set_span_in_context(theirs))
        ours.end()
        otel_context.detach(ours_token)  # the first handler's end hook...
        theirs.end()
        otel_context.detach(theirs_token)  # ...then the second's, which puts the first's context back
        assert current() is ours  # what the frameworks leave
        settle_context(before)
        assert current() is app

        live = tracer.start_span("live")
        otel_context.attach(trace.set_span_in_context(live))  # the body's own choice: not ours to undo
        settle_context(before)
        assert current() is live
        attached = otel_context.attach(trace.set_span_in_context(live))  # ...unless a hook made it current
        settle_context(before, (otel_context.get_current(),))
        assert current() is app
        otel_context.detach(attached)
        live.end()
