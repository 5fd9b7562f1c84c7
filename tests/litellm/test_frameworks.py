"""smolagents' ``LiteLLMModel``, the OpenAI Agents SDK's ``LitellmModel`` and Agno's ``LiteLLM``, streaming from a
fake provider on loopback (tests/litellm/provider.py: what it sent is the ground truth) through LiteLLM's ``openai/``
route. LiteLLM closes every stream with a finish reason and token counts of its own when the provider sent none;
the model span has what the provider sent and nothing else: a whole stream its finish reason and usage, a stream
without a usage chunk no token counts, a stream cut short (no finish reason) the ``stream_incomplete`` mark, and a
stream whose connection broke midway the exception LiteLLM raised, with the text that arrived. One model span per
request. (CrewAI's LiteLLM-backed LLM: tests/crewai/test_litellm_stream.py.)"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Iterator

import pytest

from otel_agents.instrumentors.agno import AgnoInstrumentor
from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor
from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor
from tests.litellm.provider import REFUSED_AT_IMPORT, USAGE, Provider, import_litellm, serve
from tests.spans import SnapshotExporter, tree

import_litellm()
from litellm.exceptions import MidStreamFallbackError  # noqa: E402

MODEL = "openai/gpt-4o"
QUESTION = "Where is order A100?"


def _smolagents(url: str) -> str:
    from smolagents import ChatMessage, LiteLLMModel, MessageRole

    model = LiteLLMModel(model_id=MODEL, api_base=url, api_key="test-key")
    message = ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": QUESTION}])
    return "".join(delta.content or "" for delta in model.generate_stream([message]))


def _openai_agents(url: str) -> str:
    from agents import Agent, ModelSettings, Runner
    from agents.extensions.models.litellm_model import LitellmModel

    agent = Agent(name="support", model=LitellmModel(model=MODEL, base_url=url, api_key="test-key"),
                  model_settings=ModelSettings(include_usage=True))  # else LiteLLM asks for no usage chunk

    async def run() -> str:
        result = Runner.run_streamed(agent, QUESTION)
        async for _ in result.stream_events():
            pass
        return result.final_output

    return asyncio.run(run())


class RunFailed(Exception):
    """Agno's run ended with its error event (it raises nothing): the event's content."""


def _agno(url: str) -> str:
    from agno.agent import Agent
    from agno.models.litellm import LiteLLM
    from agno.run.agent import RunContentEvent, RunErrorEvent

    agent = Agent(model=LiteLLM(id=MODEL, api_base=url, api_key="test-key"), telemetry=False)
    events = list(agent.run(QUESTION, stream=True))
    if isinstance(events[-1], RunErrorEvent):
        raise RunFailed(events[-1].content)
    return "".join(event.content for event in events if isinstance(event, RunContentEvent))


RUNS: dict[str, tuple[type, Callable[[str], str]]] = {
    "smolagents": (SmolagentsInstrumentor, _smolagents),
    "openai_agents": (OpenAIAgentsInstrumentor, _openai_agents),
    "agno": (AgnoInstrumentor, _agno),
}


@pytest.fixture(params=list(RUNS))
def run(request: Any, provider: Any) -> Iterator[Callable[[str], str]]:
    """The framework's LiteLLM-backed model streaming one answer (its text, as the framework gives it), under our
    instrumentor."""
    instrumentor_class, streamed = RUNS[request.param]
    instrumentor = instrumentor_class()
    instrumentor.instrument(tracer_provider=provider)
    yield streamed
    instrumentor.uninstrument()


def _model_span(exporter: SnapshotExporter) -> Any:
    models = exporter.semantic("model")
    assert len(models) == 1 == len(Provider.received), tree(exporter.spans)  # one model span per request
    return models[0]


def _counts(attributes: dict) -> dict:
    return {k: v for k, v in attributes.items() if k.startswith(("gen_ai.usage.", "llm.token_count."))}


def _output_text(attributes: dict) -> str:
    [message] = json.loads(attributes["gen_ai.output.messages"])
    return "".join(part["content"] for part in message["parts"] if part["type"] == "text")


def test_litellm_is_imported_without_the_network() -> None:
    assert REFUSED_AT_IMPORT == []


def test_whole_stream_keeps_the_provider_s_finish_reason_and_usage(run: Any, exporter: SnapshotExporter) -> None:
    """The finish reason and the token counts the provider sent, the answer as the output, no error. Fails without
    the watch on smolagents, the Agents SDK and Agno: none of them hands LiteLLM's finish reason to the span."""
    for url in serve("whole"):
        assert run(url) == "Order A100 has shipped."
    [sent] = Provider.sent
    model = _model_span(exporter)
    a = model.attributes
    assert model.status.name == "UNSET" and "error.type" not in a, tree([model])
    assert a["gen_ai.response.finish_reasons"] == (sent["finish_reason"],) == ("stop",)
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (
        USAGE["prompt_tokens"], USAGE["completion_tokens"]) == (sent["usage"]["prompt_tokens"],
                                                                 sent["usage"]["completion_tokens"])
    assert _output_text(a) == sent["text"]


def test_stream_without_a_usage_chunk_has_no_token_counts(run: Any, exporter: SnapshotExporter) -> None:
    """A whole stream whose provider sends no usage chunk although asked (``stream_options.include_usage``): no
    token counts (LiteLLM's own count with its tokenizer is not the provider's usage), its finish reason, no
    error. Fails without the watch: LiteLLM's counts (input 9 or 12, output 6)."""
    for url in serve("no_usage"):
        assert run(url) == "Order A100 has shipped."
    assert Provider.received[0]["stream_options"] == {"include_usage": True}
    model = _model_span(exporter)
    a = model.attributes
    assert model.status.name == "UNSET" and "error.type" not in a
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert _counts(a) == {}, a


def test_stream_cut_short_is_incomplete_without_litellm_s_reason_and_counts(run: Any,
                                                                           exporter: SnapshotExporter) -> None:
    """The provider's stream ends cleanly after the last word without a finish reason, a usage chunk or
    ``[DONE]``: the framework answers with the words (LiteLLM closed the stream with its own "stop" and counts);
    the span is cut short (status ERROR, ``error.type`` ``stream_incomplete``, not abandoned), keeps the words,
    and has no finish reason and no token counts. Fails without the watch: status UNSET, LiteLLM's counts."""
    for url in serve("cut"):
        assert run(url) == "Order A100 has shipped."
    assert Provider.sent[0]["finish_reason"] is None
    model = _model_span(exporter)
    a = model.attributes
    assert (model.status.name, a.get("error.type")) == ("ERROR", "stream_incomplete"), tree([model])
    assert model.status_description == "stream ended without finish_reason"
    assert "otel_agents.stream.abandoned" not in a
    assert _output_text(a) == "Order A100 has shipped."
    assert json.loads(a["gen_ai.output.messages"])[0]["finish_reason"] == ""
    assert "gen_ai.response.finish_reasons" not in a and "llm.finish_reason" not in a
    assert _counts(a) == {}, a


def test_stream_broken_midway_fails_the_model_span_with_litellm_s_exception(run: Any,
                                                                            exporter: SnapshotExporter) -> None:
    """The connection closes in the middle of the body after two words: LiteLLM raises
    ``MidStreamFallbackError``, which the framework raises on (Agno ends its run with an error event). The span
    records that exception once (status ERROR, ``error.type`` its class, one ``exception`` event), keeps the words
    that arrived as its output, and has no finish reason and no token counts. Fails without the watch on the
    Agents SDK (no output: the SDK writes none for a failed call); smolagents and Agno fail their span
    themselves, and without the span layer's one record per exception the watch would add a second event."""
    for url in serve("broken"):
        with pytest.raises((MidStreamFallbackError, RunFailed), match="MidStreamFallbackError"):
            run(url)
    model = _model_span(exporter)
    a = model.attributes
    assert (model.status.name, a.get("error.type")) == ("ERROR", "litellm.exceptions.MidStreamFallbackError")
    assert [name for name, _ in model.events] == ["exception"], model.events
    assert _output_text(a) == Provider.sent[0]["text"] == "Order A100 "
    assert "gen_ai.response.finish_reasons" not in a
    assert _counts(a) == {}, a


def test_stream_broken_before_its_first_chunk_fails_the_model_span_once(run: Any, exporter: SnapshotExporter) -> None:
    """The connection closes before the first chunk: LiteLLM raises ``MidStreamFallbackError`` with
    ``is_pre_first_chunk``, which the watch records as a failed attempt a Router's fallback could still answer;
    no Router here, so the framework raises it (Agno ends its run with an error event) and nothing answers. The
    span is failed by it as by any broken stream: status ERROR, ``error.type`` its class, one ``exception`` event,
    no output, no finish reason, no token counts. (Fails if an attempt nothing answered did not fail the span:
    status UNSET, as the framework's own record of the same exception adds nothing.)"""
    for url in serve("broken_at_start"):
        with pytest.raises((MidStreamFallbackError, RunFailed), match="MidStreamFallbackError"):
            run(url)
    assert Provider.sent == [{"text": "", "finish_reason": None, "usage": None}]
    model = _model_span(exporter)
    a = model.attributes
    assert (model.status.name, a.get("error.type")) == ("ERROR", "litellm.exceptions.MidStreamFallbackError"), \
        tree([model])
    assert [name for name, _ in model.events] == ["exception"], model.events
    assert "gen_ai.output.messages" not in a and "gen_ai.response.finish_reasons" not in a
    assert _counts(a) == {}, a
