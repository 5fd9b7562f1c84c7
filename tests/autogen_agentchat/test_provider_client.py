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
