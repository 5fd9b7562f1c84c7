"""The Chat Completions shape: a model class of the user's own that records its request in the SDK's
``generation_span`` (as LiteLLM-style providers and ``examples/customer_support`` do), under the real
``Runner``. Its span data carries Chat messages in and out, usage as a dict, and no finish reason.

What is checked: one model span per request (the SDK's ``generation`` span fills the span our model hook
opened), its messages, finish reason and usage; the agent's and the run's input (the last user message of
the agent's first request, read from the messages the model span converted); and, with content off, the
same structure with no content anywhere.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, generation_span
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor
from tests.spans import SnapshotExporter, parent_of

SYSTEM = "You are the shop's support agent."


@function_tool
def order_status(order_id: str) -> str:
    """The status of an order."""
    return f"Order {order_id}: shipped"


class ChatModel(Model):
    """Asks for ``order_status`` once, then answers; records each request as a ``generation`` span
    (Chat messages: the system prompt, every user message so far, the tool calls and results)."""

    def __init__(self, answer: str):
        self.answer = answer
        self.requests = 0

    async def get_response(self, system_instructions: Any, input: Any, model_settings: Any, tools: Any,
                           output_schema: Any, handoffs: Any, tracing: Any, **kwargs: Any) -> ModelResponse:
        self.requests += 1
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        messages = [{"role": "system", "content": system_instructions or ""}]
        messages += [{"role": i["role"], "content": i["content"]} for i in items
                     if isinstance(i, dict) and i.get("role") == "user"]
        with generation_span(model="chat-model-1", input=messages, disabled=tracing.is_disabled()) as span:
            if self.requests == 1:
                arguments = json.dumps({"order_id": "A100"})
                output: list[Any] = [ResponseFunctionToolCall(type="function_call", id="fc_1", call_id="call_1",
                                                              name="order_status", arguments=arguments)]
                span.span_data.output = [{"role": "assistant", "content": None, "tool_calls": [
                    {"id": "call_1", "type": "function", "function": {"name": "order_status", "arguments": arguments}}]}]
                usage = (12, 5)
            else:
                output = [ResponseOutputMessage(id="msg_1", type="message", role="assistant", status="completed",
                                                content=[ResponseOutputText(type="output_text", text=self.answer,
                                                                            annotations=[])])]
                span.span_data.output = [{"role": "assistant", "content": self.answer}]
                usage = (20, 9)
            span.span_data.usage = {"input_tokens": usage[0], "output_tokens": usage[1]}
        return ModelResponse(output=output, response_id=None,
                             usage=Usage(requests=1, input_tokens=usage[0], output_tokens=usage[1],
                                         total_tokens=sum(usage)))

    async def stream_response(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError
        yield  # pragma: no cover


def run(provider: Any, question: str, answer: str) -> None:
    inst = OpenAIAgentsInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        agent = Agent(name="support", instructions=SYSTEM, model=ChatModel(answer), tools=[order_status])
        assert Runner.run_sync(agent, question).final_output == answer
        assert inst.open_spans() == 0
    finally:
        inst.uninstrument()


def test_generation_spans_fill_one_model_span_per_request(provider: Any, exporter: SnapshotExporter) -> None:
    run(provider, "Where is order A100?", "It has shipped.")
    spans = exporter.semantic()
    assert sorted(s.semantic_kind for s in spans) == ["agent", "chain", "model", "model", "tool"]
    [agent] = exporter.semantic("agent")
    [root] = exporter.semantic("chain")
    first, second = exporter.semantic("model")
    for m in (first, second):
        assert parent_of(m, spans) is agent
        assert m.attributes["gen_ai.request.model"] == "chat-model-1"
        assert m.attributes["gen_ai.provider.name"] == "openai"
        # Named after the request model the SDK recorded (semantic map), not the model class it was opened for.
        assert m.name == "chat chat-model-1"
    # The agent was asked the user's question (not the system prompt): on its span and on the run's.
    assert agent.attributes["input.value"] == "Where is order A100?"
    assert root.attributes["input.value"] == "Where is order A100?"
    assert agent.attributes["output.value"] == "It has shipped."
    # Messages in and out, as the SDK recorded them. Its span data has no finish reason: none is guessed from
    # the tool calls (a forced tool_choice answers "stop" with calls).
    assert first.json_attr("gen_ai.system_instructions") == [{"type": "text", "content": SYSTEM}]
    assert first.json_attr("gen_ai.input.messages") == [
        {"role": "user", "parts": [{"type": "text", "content": "Where is order A100?"}]}]
    [out] = first.json_attr("gen_ai.output.messages")
    assert out["finish_reason"] == ""
    assert out["parts"] == [{"type": "tool_call", "id": "call_1", "name": "order_status",
                             "arguments": '{"order_id": "A100"}'}]  # as the model sent them
    assert "gen_ai.response.finish_reasons" not in first.attributes  # none given: none invented
    assert "gen_ai.response.finish_reasons" not in second.attributes
    assert second.json_attr("gen_ai.output.messages")[0]["parts"] == [{"type": "text", "content": "It has shipped."}]
    assert (first.attributes["gen_ai.usage.input_tokens"], first.attributes["gen_ai.usage.output_tokens"]) == (12, 5)
    assert (second.attributes["gen_ai.usage.input_tokens"], second.attributes["gen_ai.usage.output_tokens"]) == (20, 9)
    [tool] = exporter.semantic("tool")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_1"
    assert tool.attributes["gen_ai.tool.call.result"] == "Order A100: shipped"


def test_generation_spans_with_content_off(provider: Any, exporter: SnapshotExporter,
                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    run(provider, "SECRET question about A100", "SECRET answer")
    spans = exporter.semantic()
    assert sorted(s.semantic_kind for s in spans) == ["agent", "chain", "model", "model", "tool"]
    for s in spans:
        assert "SECRET" not in str(s.attributes), s.name
        assert "input.value" not in s.attributes and "output.value" not in s.attributes, s.name
    first, second = exporter.semantic("model")
    assert "gen_ai.response.finish_reasons" not in first.attributes  # the SDK records none
    assert (second.attributes["gen_ai.usage.input_tokens"], second.attributes["gen_ai.usage.output_tokens"]) == (20, 9)
    [tool] = exporter.semantic("tool")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_1"  # the call is still matched to the model's


def test_every_model_span_records_the_tools_offered(provider: Any, exporter: SnapshotExporter,
                                                     tool_writes: dict[int, int]) -> None:
    """A ``generation`` span carries no tools: the model span still records the tools the request offered (the
    model hook's arguments), on every request of the run, written once, and still one model span per request."""
    run(provider, "Where is order A100?", "It has shipped.")
    models = exporter.semantic("model")
    assert len(models) == 2
    for m in models:
        [d] = m.json_attr("gen_ai.tool.definitions")
        assert (d["type"], d["name"], d["description"]) == ("function", "order_status", "The status of an order.")
        assert d["parameters"]["properties"]["order_id"]["type"] == "string"
        schema = json.loads(m.attributes["llm.tools.0.tool.json_schema"])
        assert schema["function"]["name"] == "order_status"
        assert tool_writes[m.span_id] == 1, m.name
