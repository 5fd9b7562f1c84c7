"""The extractors on provider-shaped responses (the mocks report no usage), and usage on a model span."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, CompletionResponse, MessageRole
from llama_index.core.llms import MockLLM
from llama_index.core.llms.callbacks import llm_completion_callback

from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor
from otel_agents.instrumentors.llama_index import _extract as extract
from tests.spans import SnapshotExporter


def _reply(raw: Any = None, **extra: Any) -> ChatResponse:
    return ChatResponse(message=ChatMessage(role=MessageRole.ASSISTANT, content="hi"), raw=raw, additional_kwargs=extra)


def test_usage_from_openai_anthropic_gemini_and_kwargs_shapes() -> None:
    openai = extract.usage(_reply({"usage": {"prompt_tokens": 10, "completion_tokens": 3, "total_tokens": 13,
                                             "prompt_tokens_details": {"cached_tokens": 4}}}))
    assert (openai.input_tokens, openai.output_tokens, openai.total_tokens, openai.cache_read_tokens) == (10, 3, 13, 4)
    anthropic = extract.usage(_reply(SimpleNamespace(usage=SimpleNamespace(
        input_tokens=7, output_tokens=2, cache_read_input_tokens=5, cache_creation_input_tokens=1))))
    assert (anthropic.input_tokens, anthropic.output_tokens, anthropic.total_tokens) == (7, 2, 9)
    assert (anthropic.cache_read_tokens, anthropic.cache_creation_tokens) == (5, 1)
    gemini = extract.usage(_reply({"usage_metadata": {"prompt_token_count": 4, "candidates_token_count": 6,
                                                      "total_token_count": 10}}))
    assert (gemini.input_tokens, gemini.output_tokens, gemini.total_tokens) == (4, 6, 10)
    kwargs = extract.usage(_reply(prompt_tokens=1, completion_tokens=2))
    assert (kwargs.input_tokens, kwargs.output_tokens) == (1, 2)
    assert extract.usage(_reply()) is None


def test_response_message_finish_reason_and_legacy_tool_calls() -> None:
    raw = {"choices": [{"finish_reason": "length"}], "model": "gpt-x", "id": "resp-1"}
    message = extract.response_message(_reply(raw))
    assert (message.role, message.content, message.finish_reason) == ("assistant", "hi", "length")
    assert extract.response_identity(_reply(raw)) == ("gpt-x", "resp-1")
    legacy = ChatMessage(role=MessageRole.ASSISTANT, content=None, additional_kwargs={"tool_calls": [
        {"id": "c1", "function": {"name": "add", "arguments": '{"a": 1}'}}]})
    calls = extract.tool_calls(legacy)
    assert [(c.id, c.name, c.arguments) for c in calls] == [("c1", "add", '{"a": 1}')]
    # a reply that asks for a tool but carries no finish reason: none, never one guessed from its shape
    assert extract.response_message(ChatResponse(message=legacy)).finish_reason is None
    assert extract.finish_reason(ChatResponse(message=legacy)) is None


def test_finish_reason_is_what_the_provider_sent() -> None:
    """The provider's own word (normalised later by the span layer), from each provider's field."""
    assert extract.finish_reason(_reply({"candidates": [{"finish_reason": "STOP"}]})) == "STOP"  # Gemini
    assert extract.finish_reason(_reply({"stop_reason": "tool_use"})) == "tool_use"  # Anthropic
    assert extract.finish_reason(_reply({"stopReason": "max_tokens"})) == "max_tokens"  # Bedrock Converse
    assert extract.finish_reason(_reply(finish_reason="length")) == "length"  # additional_kwargs
    assert extract.finish_reason(_reply()) is None


def test_roles_providers_and_model_names() -> None:
    assert extract.role(ChatMessage(role=MessageRole.DEVELOPER, content="x")) == "system"
    assert extract.role(ChatMessage(role=MessageRole.MODEL, content="x")) == "assistant"
    fake_openai = type("OpenAI", (), {"__module__": "llama_index.llms.openai.base", "model": "gpt-4o-mini"})()
    assert extract.provider(fake_openai) == "openai" and extract.model_name(fake_openai) == "gpt-4o-mini"
    assert extract.provider(MockLLM()) is None and extract.model_name(MockLLM()) == "MockLLM"


class UsageLLM(MockLLM):
    """A completion model that reports usage, a response model and an id like a provider would
    (decorated with ``llm_completion_callback``, as LlamaIndex's custom-LLM guide asks)."""

    @llm_completion_callback()
    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> CompletionResponse:
        return CompletionResponse(text="four", raw={"usage": {"prompt_tokens": 12, "completion_tokens": 1},
                                                    "model": "usage-model-2", "id": "cmpl-9"})


def test_usage_and_response_identity_on_the_model_span(provider: Any, exporter: SnapshotExporter) -> None:
    """A model call's usage, response model and id land on its span (GenAI and OpenInference keys)."""
    inst = LlamaIndexInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        assert UsageLLM().complete("2+2?").text == "four"
    finally:
        inst.uninstrument()
    (span,) = exporter.semantic("model")
    attrs = span.attributes
    assert (attrs["gen_ai.usage.input_tokens"], attrs["gen_ai.usage.output_tokens"]) == (12, 1)
    assert attrs["llm.token_count.total"] == 13
    assert (attrs["gen_ai.response.model"], attrs["gen_ai.response.id"]) == ("usage-model-2", "cmpl-9")


def test_attribute_reads_answer_as_getattr_without_pydantics_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    """``attr``/``has_attr`` answer what ``getattr(obj, name, None)``/``hasattr`` answer, on workflow events (fields,
    dynamic ``_data`` fields, private attributes, properties), closed pydantic models (an LLM), open ones and plain
    objects; and a miss on an event or a closed model is answered without its ``__getattr__`` raising."""
    from llama_index.core.agent.workflow.workflow_events import AgentInput, AgentOutput, ToolCallResult
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.tools import ToolOutput
    from pydantic import BaseModel, ConfigDict
    from workflows.events import Event, StartEvent, StopEvent

    class Open(BaseModel):
        model_config = ConfigDict(extra="allow")
        a: int = 1

    class WithProperty(Event):
        x: int = 0

        @property
        def doubled(self) -> int:
            return self.x * 2

    output = ToolOutput(content="5", tool_name="add", raw_input={}, raw_output=5)
    objects = [AgentInput(input=[ChatMessage(role="user", content="x")], current_agent_name="calc"),
               AgentOutput(response=ChatMessage(role="assistant", content="hi"), current_agent_name="calc",
                           tool_calls=[], retry_messages=[]),
               ToolCallResult(tool_name="add", tool_kwargs={}, tool_id="c1", tool_output=output, return_direct=False),
               StartEvent(user_msg="hi", extra_field=None), StopEvent(result={"a": 1}), WithProperty(x=2),
               MockFunctionCallingLLM(), Open(a=2, b=None), output, SimpleNamespace(role="user"), "text", None]
    names = ["tool_id", "retry_messages", "current_agent_name", "user_msg", "extra_field", "result", "_data",
             "doubled", "x", "model", "model_name", "role", "blocks", "content", "response", "response_gen", "b",
             "message", "nothing_at_all", "__class__"]
    for obj in objects:
        for name in names:
            assert extract.attr(obj, name) is getattr(obj, name, None) or \
                extract.attr(obj, name) == getattr(obj, name, None), (type(obj).__name__, name)
            assert extract.has_attr(obj, name) is hasattr(obj, name), (type(obj).__name__, name)
    # the misses the handlers read on every step never reach the event's (or the LLM's, or an open model's)
    # __getattr__, which would raise and catch an AttributeError
    from workflows.events import DictLikeModel

    calls: list[str] = []
    for cls in (BaseModel, DictLikeModel):
        def counting(self: Any, name: str, _original: Any = cls.__getattr__) -> Any:
            calls.append(name)
            return _original(self, name)

        monkeypatch.setattr(cls, "__getattr__", counting)
    assert extract.attr(objects[0], "tool_id") is None and extract.has_attr(objects[0], "tool_id") is False
    assert extract.attr(objects[6], "model") is None and extract.attr(Open(a=2), "b") is None
    assert extract.attr(objects[3], "extra_field") is None and extract.has_attr(objects[3], "extra_field") is True
    assert calls == []


def test_an_event_payload_keeps_its_fields_order_and_dynamic_fields() -> None:
    """A step's event as its span records it: ``event`` (the class) first, the declared fields in order (runtime
    objects and private names left out), then the dynamic fields; a dynamic field named like a declared one takes
    its value in place; a stop event's ``result``; a chat history as its message count."""
    from workflows.events import Event, StopEvent

    class Step(Event):
        query: str = "q"
        ctx: Any = None
        history: list = []

    event = Step(query="x", ctx=object(), history=[ChatMessage(role="user", content="hi")] * 2, extra=1)
    event._data["query"] = "dynamic"  # a dynamic field shadowing a declared one (set around __setattr__)
    assert extract.event_payload(event) == {"event": "Step", "query": "dynamic", "history": "[2 messages]",
                                            "extra": 1}
    assert list(extract.event_payload(event)) == ["event", "query", "history", "extra"]
    assert extract.event_payload(StopEvent(result={"a": 1})) == {"event": "StopEvent", "result": {"a": 1}}
    assert extract.event_payload("plain") == "plain"
