"""What the instrumentation does *not* do (issue #10, overhead): under ``suppress_instrumentation()``
our handlers keep and convert nothing; with content off, or on a sampled-out span, no message, event
or tool argument is converted. Checked by behaviour and by counting calls to the extractors, never by
timing."""

from __future__ import annotations

from typing import Any

import pytest
from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.tools import FunctionTool
from opentelemetry import trace
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.sampling import ALWAYS_OFF

from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor, _extract
from tests.llama_index import fakes
from tests.spans import SnapshotExporter, spy_calls

CONTENT_EXTRACTORS = ("chat_messages", "prompt_messages", "response_message", "event_payload", "run_input",
                      "response_text", "tool_arguments", "tool_result", "model_parameters")


@pytest.fixture
def extracted(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the content extractors called during the test, in call order."""
    return spy_calls(monkeypatch, [(_extract, name) for name in CONTENT_EXTRACTORS])


def _instrument(provider: Any, **kwargs: Any) -> LlamaIndexInstrumentor:
    inst = LlamaIndexInstrumentor()
    inst.instrument(tracer_provider=provider, **kwargs)
    return inst


def _run(agent: Any) -> Any:
    """One ``agent.run`` in a fresh event loop, with an in-process memory."""
    async def go() -> Any:
        return await agent.run(user_msg="What is 2+3?", memory=fakes.cheap_memory())

    return fakes.run_sync(go)


def _probing_agent(seen: list[Any]) -> Any:
    def add(a: int, b: int) -> int:
        """Add two integers."""
        seen.append(trace.get_current_span())
        return a + b

    return FunctionAgent(name="calculator", system_prompt="You are a calculator.",
                         tools=[FunctionTool.from_defaults(fn=add)],
                         llm=fakes.scripted_llm(fakes.tool_call("add", {"a": 2, "b": 3}), "The answer is 5."))


def test_suppressed_run_adds_nothing(provider: Any, exporter: SnapshotExporter, app_tracer: Any,
                                     extracted: list[str]) -> None:
    """Inside ``suppress_instrumentation()`` an agent run makes no span, keeps nothing open, extracts
    nothing, and its tool sees the application's span as current; the next run is instrumented."""
    inst = _instrument(provider)
    try:
        seen: list[Any] = []
        with app_tracer.start_as_current_span("app") as app:
            with suppress_instrumentation():
                result = _run(_probing_agent(seen))
        assert str(result) == "The answer is 5."
        assert [s.name for s in exporter.spans] == ["app"]
        assert extracted == [] and inst.open_span_count() == 0
        assert seen == [app]

        _run(fakes.calculator())
        kinds = [s.semantic_kind for s in exporter.semantic()]
        assert kinds.count("agent") == 1 and kinds.count("model") == 2 and kinds.count("tool") == 1
    finally:
        inst.uninstrument()


def test_content_off_extracts_no_content(provider: Any, exporter: SnapshotExporter, extracted: list[str]) -> None:
    """Content off: no message, workflow event, tool argument or result is read (each would be dropped);
    model parameters are (they are not content), and so are finish reasons and the tool call id."""
    inst = _instrument(provider, capture_content=False)
    try:
        _run(fakes.calculator())
    finally:
        inst.uninstrument()
    assert set(extracted) == {"model_parameters"}
    first, second = exporter.semantic("model")
    # the mock sends no finish reason: none recorded (never one guessed from the reply's shape)
    assert "gen_ai.response.finish_reasons" not in first.attributes
    assert "gen_ai.response.finish_reasons" not in second.attributes
    tool = exporter.semantic("tool")[0]
    assert tool.attributes["gen_ai.tool.name"] == "add" and tool.attributes["gen_ai.tool.call.id"] == "call-1"
    assert not any(k.startswith(("input.", "output.", "gen_ai.input", "gen_ai.output", "gen_ai.tool.call.arg"))
                   for s in exporter.semantic() for k in s.attributes)


def test_sampled_out_run_extracts_nothing(extracted: list[str]) -> None:
    """A sampler that drops every span: the run works, nothing is exported, kept or extracted."""
    exporter = SnapshotExporter()
    provider = TracerProvider(sampler=ALWAYS_OFF)
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    inst = _instrument(provider)
    try:
        result = _run(fakes.calculator())
        assert str(result) == "The answer is 5."
        assert inst.open_span_count() == 0
    finally:
        inst.uninstrument()
        provider.shutdown()
    assert exporter.spans == [] and extracted == []


def test_dispatcher_calls_unwrapped_while_ours_is_the_only_handler(provider: Any) -> None:
    """Alone, the dispatcher's calls of its span handlers are LlamaIndex's own (wrapping them to keep two
    handlers' contexts apart changes nothing then and cost ~7% of our instructions a run, issue 40 twentieth
    round); a span handler added after ours puts the wrappers on (tests/peers checks what they do), and
    ``uninstrument()`` takes them off."""
    from llama_index.core.instrumentation import get_dispatcher
    from llama_index.core.instrumentation.dispatcher import Dispatcher

    from tests.llama_index.test_cases import ForeignSpanHandler

    methods = ("span_enter", "span_exit", "span_drop")
    own = {m: Dispatcher.__dict__[m] for m in methods}
    dispatcher = get_dispatcher()
    inst = _instrument(provider)
    foreign = ForeignSpanHandler()
    try:
        assert all(Dispatcher.__dict__[m] is own[m] for m in methods)  # (a wrapt proxy == what it wraps)
        dispatcher.add_span_handler(foreign)
        assert all(Dispatcher.__dict__[m] is not own[m] for m in methods)
    finally:
        inst.uninstrument()
        dispatcher.span_handlers = [h for h in dispatcher.span_handlers if h is not foreign]
    assert all(Dispatcher.__dict__[m] is own[m] for m in methods)
