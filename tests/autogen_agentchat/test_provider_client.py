"""AutoGen's ``OpenAIChatCompletionClient`` over our instrumented ``openai`` client (issue 22 with the
harness bar's "one model span per request, even when a framework's model class calls a provider SDK
that is instrumented too"): the real clients, the OpenAI API answered by ``httpx.MockTransport``."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import pytest
from opentelemetry import trace

from otel_agents.instrumentors.openai import OpenAIInstrumentor
from tests.clients.fakes import chat_completion, chat_stream
from tests.spans import SnapshotExporter


def _answer(request: httpx.Request) -> httpx.Response:
    if json.loads(request.content).get("stream"):
        return httpx.Response(200, content=chat_stream(include_usage=True), headers={"content-type": "text/event-stream"})
    return httpx.Response(200, json=chat_completion())


@pytest.fixture
def with_openai(provider: Any) -> Any:
    inst = OpenAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    yield
    inst.uninstrument()


@pytest.mark.parametrize("stream", [False, True], ids=["create", "create_stream"])
def test_openai_chat_completion_client_over_the_openai_instrumentor_is_one_model_span(
        instrumented: Any, with_openai: Any, exporter: SnapshotExporter, stream: bool) -> None:
    """One ``model`` span per request, AutoGen's (``otel_agents.framework=autogen_agentchat``), enriched by
    the client instrumentor with the response id and the reported usage; nothing left current."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    client = OpenAIChatCompletionClient(model="gpt-4o", api_key="test-key", max_retries=0,
                                        http_client=httpx.AsyncClient(transport=httpx.MockTransport(_answer)))
    agent = AssistantAgent("support", model_client=client, model_client_stream=stream)
    result = asyncio.run(agent.run(task="Where is order A100?"))
    assert result.messages[-1].content == "Order A100 has shipped."
    assert not trace.get_current_span().get_span_context().is_valid
    model, = exporter.semantic("model")
    assert model.attributes["otel_agents.framework"] == "autogen_agentchat"
    assert model.attributes["gen_ai.response.id"] == ("chatcmpl-2" if stream else "chatcmpl-1")
    assert model.attributes["gen_ai.usage.input_tokens"] == 11
    agent_span, = exporter.semantic("agent")
    assert model.parent_id == agent_span.span_id


def test_each_client_class_names_its_provider() -> None:
    """``gen_ai.provider.name`` of autogen_ext's clients, OTel GenAI v1.41 values: Claude on AWS Bedrock is
    ``aws.bedrock``, not ``anthropic`` (its class name starts with the Anthropic client's)."""
    from autogen_core.models import ModelInfo
    from autogen_ext.models.anthropic import (AnthropicBedrockChatCompletionClient, AnthropicChatCompletionClient,
                                              BedrockInfo)
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    from otel_agents.instrumentors.autogen_agentchat._models import provider_name

    info = ModelInfo(vision=False, function_calling=True, json_output=False, family="unknown", structured_output=True)
    bedrock = AnthropicBedrockChatCompletionClient(
        model="anthropic.claude-3-5-sonnet-20240620-v1:0", model_info=info,
        bedrock_info=BedrockInfo(aws_access_key="a", aws_secret_key="s", aws_session_token="t", aws_region="us-east-1"))
    assert provider_name(bedrock) == "aws.bedrock"
    assert provider_name(AnthropicChatCompletionClient(model="claude-3-5-sonnet-latest", api_key="k")) == "anthropic"
    assert provider_name(OpenAIChatCompletionClient(model="gpt-4o", api_key="k")) == "openai"


def test_model_span_server_and_output_type_as_sent(instrumented: Any, exporter: SnapshotExporter) -> None:
    """OTel GenAI v1.41 inference span, AutoGen's instrumentor alone: server.address/port where the model client's
    SDK client connects, gen_ai.output.type ``json`` for ``json_output=True`` (sent as a JSON response_format);
    a plain call asks for no format and gets none. Compared with the requests the fake received. (AutoGen refuses
    ``n``: no choice count.)"""
    from autogen_core.models import UserMessage
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    from tests.clients.fakes import Recorder

    recorder = Recorder(chat_completion('{"status": "shipped"}'))
    client = OpenAIChatCompletionClient(model="gpt-4o", api_key="test-key", max_retries=0,
                                        base_url="http://127.0.0.1:8011/v1",
                                        http_client=httpx.AsyncClient(transport=httpx.MockTransport(recorder)))
    question = [UserMessage(content="Where is order A100? Answer in JSON.", source="user")]
    asyncio.run(client.create(question, json_output=True))
    asyncio.run(client.create(question))
    asked, plain = exporter.semantic("model")
    assert recorder.requests[0]["response_format"] == {"type": "json_object"}
    assert "response_format" not in recorder.requests[1]
    assert asked.attributes["gen_ai.output.type"] == "json"
    assert "gen_ai.output.type" not in plain.attributes
    for span in (asked, plain):
        assert (span.attributes["server.address"], span.attributes["server.port"]) == ("127.0.0.1", 8011)


def _parts(span: Any, attribute: str) -> list[list[tuple[str, Any]]]:
    """Each message of a model span's ``attribute`` as its parts' (type, content or tool name)."""
    return [[(p["type"], p.get("content", p.get("name"))) for p in m["parts"]] for m in span.json_attr(attribute)]


def _openai_turns(request: httpx.Request) -> httpx.Response:
    """The tool call with the text the model wrote before it, then (a tool result in the request) the answer with the
    reasoning an OpenAI-compatible API sends as ``reasoning_content`` (DeepSeek's)."""
    if '"role":"tool"' in request.content.decode().replace(" ", ""):
        body = chat_completion("A100 has shipped.")
        body["choices"][0]["message"]["reasoning_content"] = "The tool says shipped."
        return httpx.Response(200, json=body)
    return httpx.Response(200, json=chat_completion("Let me look up A100.", finish_reason="tool_calls", tool_calls=[
        {"id": "call_1", "name": "lookup_order", "arguments": {"order_id": "A100"}}]))


def test_a_thought_beside_tool_calls_is_the_text_the_model_wrote(instrumented: Any, exporter: SnapshotExporter) -> None:
    """AutoGen's OpenAI client puts the text the model wrote beside its tool calls in ``CreateResult.thought``, and
    the API's ``reasoning_content`` beside a text answer there too: the first is a ``text`` part (before: a
    ``reasoning`` part, which it never was), in the output and in the next request's input; the second a
    ``reasoning`` part."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_ext.models.openai import OpenAIChatCompletionClient

    from tests.genai_schema import validate_genai_json

    from .fakes import lookup_order

    client = OpenAIChatCompletionClient(model="gpt-4o", api_key="test-key", max_retries=0,
                                        http_client=httpx.AsyncClient(transport=httpx.MockTransport(_openai_turns)))
    agent = AssistantAgent("support", model_client=client, tools=[lookup_order], reflect_on_tool_use=True)
    assert asyncio.run(agent.run(task="Where is A100?")).messages[-1].content == "A100 has shipped."
    asked, answered = exporter.semantic("model")
    assert _parts(asked, "gen_ai.output.messages") == [[("text", "Let me look up A100."),
                                                         ("tool_call", "lookup_order")]]
    assert _parts(answered, "gen_ai.input.messages")[1] == [("text", "Let me look up A100."),
                                                            ("tool_call", "lookup_order")]
    assert _parts(answered, "gen_ai.output.messages") == [[("reasoning", "The tool says shipped."),
                                                           ("text", "A100 has shipped.")]]
    for span in (asked, answered):
        validate_genai_json(dict(span.attributes))


def _anthropic_turns(**body: Any) -> Any:
    """What the Messages API answers ``body``: Claude's tool call (with a thinking block when the request asked for
    extended thinking, else with the text it wrote first), then its answer."""
    from anthropic.types import Message

    message = {"id": "msg_1", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
               "stop_sequence": None, "usage": {"input_tokens": 11, "output_tokens": 3}}
    blocks = [b for m in body["messages"] if isinstance(m["content"], list) for b in m["content"]]  # dicts or SDK types
    if any((b.get("type") if isinstance(b, dict) else getattr(b, "type", None)) == "tool_result" for b in blocks):
        return Message.model_validate({**message, "content": [{"type": "text", "text": "A100 has shipped."}],
                                       "stop_reason": "end_turn"})
    first = {"type": "thinking", "thinking": "The user wants A100's status.", "signature": "sig"} \
        if (body.get("thinking") or {}).get("type") == "enabled" else {"type": "text", "text": "Let me look up A100."}
    return Message.model_validate({**message, "stop_reason": "tool_use", "content": [
        first, {"type": "tool_use", "id": "toolu_1", "name": "lookup_order", "input": {"order_id": "A100"}}]})


@pytest.mark.parametrize(("thinking", "part"), [({"type": "enabled", "budget_tokens": 1024}, "reasoning"),
                                                ({"type": "disabled"}, "text"), (None, "text")],
                         ids=["thinking", "thinking disabled", "no thinking"])
def test_an_anthropic_thought_beside_tool_calls_is_reasoning_when_thinking_was_asked(
        instrumented: Any, exporter: SnapshotExporter, monkeypatch: pytest.MonkeyPatch, thinking: dict | None,
        part: str) -> None:
    """AutoGen's Anthropic client puts Claude's thinking blocks in ``thought`` beside tool calls when the request
    asked for extended thinking, else the text Claude wrote before its calls: a ``reasoning`` part, else ``text``.
    The real client parses the real SDK's ``Message``; the SDK's request method is replaced (AutoGen 0.7.5 passes it
    ``temperature``, which ``anthropic`` 2.x no longer takes: that call raises ``TypeError``, uninstrumented too)."""
    from autogen_agentchat.agents import AssistantAgent
    from autogen_core.models import ModelInfo
    from autogen_ext.models.anthropic import AnthropicChatCompletionClient

    from .fakes import lookup_order

    info = ModelInfo(vision=False, function_calling=True, json_output=False, family="claude-sonnet-4-5",
                     structured_output=False)
    client = AnthropicChatCompletionClient(model="claude-sonnet-4-5", api_key="test-key", model_info=info,
                                           **({"thinking": thinking} if thinking is not None else {}))

    async def create(**body: Any) -> Any:
        return _anthropic_turns(**body)

    monkeypatch.setattr(client._client.messages, "create", create)
    agent = AssistantAgent("support", model_client=client, tools=[lookup_order], reflect_on_tool_use=True)
    assert asyncio.run(agent.run(task="Where is A100?")).messages[-1].content == "A100 has shipped."
    asked, answered = exporter.semantic("model")
    thought = "The user wants A100's status." if part == "reasoning" else "Let me look up A100."
    assert _parts(asked, "gen_ai.output.messages") == [[(part, thought), ("tool_call", "lookup_order")]]
    assert _parts(answered, "gen_ai.input.messages")[1] == [(part, thought), ("tool_call", "lookup_order")]


def test_the_calls_extra_create_args_decide_before_the_clients_thinking(instrumented: Any, exporter: SnapshotExporter,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """A client made with extended thinking, called with ``extra_create_args={"thinking": {"type": "disabled"}}``
    (which AutoGen sends instead of the client's): Claude wrote text before its call, a ``text`` part."""
    from autogen_core.models import ModelInfo, UserMessage
    from autogen_core.tools import FunctionTool
    from autogen_ext.models.anthropic import AnthropicChatCompletionClient

    from .fakes import lookup_order

    info = ModelInfo(vision=False, function_calling=True, json_output=False, family="claude-sonnet-4-5",
                     structured_output=False)
    client = AnthropicChatCompletionClient(model="claude-sonnet-4-5", api_key="test-key", model_info=info,
                                           thinking={"type": "enabled", "budget_tokens": 1024})
    sent: list[dict] = []

    async def create(**body: Any) -> Any:
        sent.append(body)
        return _anthropic_turns(**body)

    monkeypatch.setattr(client._client.messages, "create", create)
    result = asyncio.run(client.create([UserMessage(content="Where is A100?", source="user")],
                                       tools=[FunctionTool(lookup_order, description="Look up an order.")],
                                       extra_create_args={"thinking": {"type": "disabled"}}))
    assert sent[0]["thinking"] == {"type": "disabled"} and result.thought == "Let me look up A100."
    [model] = exporter.semantic("model")
    assert _parts(model, "gen_ai.output.messages") == [[("text", "Let me look up A100."),
                                                         ("tool_call", "lookup_order")]]
