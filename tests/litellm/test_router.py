"""LiteLLM's ``Router`` with a fallback (https://docs.litellm.ai/docs/routing), against the fake provider on loopback:
the first deployment fails, the Router sends the request again to the fallback's, which answers whole. What the spans
say of the two requests (tests/litellm/provider.py: what the provider sent is the ground truth)."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Iterator

import pytest

from otel_agents import manual
from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor
from tests.litellm.provider import USAGE, WORDS, Provider, import_litellm, serve
from tests.spans import SnapshotExporter, tree

import_litellm()

DEPLOYMENTS = {"primary": "gpt-4o", "backup": "gpt-4o-mini"}  # model group -> the model its requests name


@pytest.fixture
def instrumented(provider: Any) -> Iterator[None]:
    """smolagents instrumented, its models imported: LiteLLM's stream watch is on (see .._litellm)."""
    import smolagents.models  # noqa: F401 - where the instrumentor's LiteLLM use begins

    instrumentor = SmolagentsInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    yield
    instrumentor.uninstrument()


def _model_list(url: str | None) -> list[dict[str, Any]]:
    return [{"model_name": group, "litellm_params": {"model": f"openai/{model}", "api_key": "test-key",
                                                     **({"api_base": url} if url else {})}}
            for group, model in DEPLOYMENTS.items()]


ROUTING = {"fallbacks": [{"primary": ["backup"]}], "num_retries": 0}


@pytest.mark.parametrize("stream", [True, False])
def test_a_fallback_after_a_refused_request_is_the_answering_request_s_span(instrumented: Any,
                                                                          exporter: SnapshotExporter,
                                                                          stream: bool) -> None:
    """smolagents' ``LiteLLMRouterModel``: the first deployment answers 503 before any body, the Router falls back
    to the second, which streams (or sends) the whole answer. The model span has what the answering request got:
    no error, its finish reason, its usage and text (the refusal raised inside LiteLLM, before any stream: the
    watch never saw it). The refused request has no span of its own: the span is the framework's one call, and we
    trace LiteLLM only through the frameworks' model spans (a gap, not a claim: see the report of h-mend3)."""
    from smolagents import ChatMessage, LiteLLMRouterModel, MessageRole

    for url in serve():
        Provider.ending_of = {DEPLOYMENTS["primary"]: "refused"}
        # smolagents hands the Router its own api_base (None unless given), which replaces each deployment's
        model = LiteLLMRouterModel(model_id="primary", model_list=_model_list(None), client_kwargs=ROUTING,
                                   api_base=url, api_key="test-key")
        message = ChatMessage(role=MessageRole.USER, content=[{"type": "text", "text": "Where is order A100?"}])
        if stream:
            answer = "".join(delta.content or "" for delta in model.generate_stream([message]))
        else:
            answer = model.generate([message]).content
    assert answer == "".join(WORDS)
    assert [r["model"] for r in Provider.received] == [DEPLOYMENTS["primary"], DEPLOYMENTS["backup"]]
    [sent] = Provider.sent  # the refused request sent nothing
    [model_span] = exporter.semantic("model")
    a = model_span.attributes
    assert model_span.status.name == "UNSET" and "error.type" not in a and not model_span.events, tree([model_span])
    assert a["gen_ai.response.finish_reasons"] == (sent["finish_reason"],) == ("stop",)
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (
        USAGE["prompt_tokens"], USAGE["completion_tokens"])
    [message_out] = json.loads(a["gen_ai.output.messages"])
    assert [p["content"] for p in message_out["parts"] if p["type"] == "text"] == [sent["text"]]


@pytest.fixture
def manual_spans(provider: Any) -> Iterator[None]:
    """``otel_agents.manual`` spans go to the test's provider."""
    manual.set_providers(provider)
    yield
    manual.set_providers()


def _exception_types(span: Any) -> list[str]:
    return [event["exception.type"] for name, event in span.events if name == "exception"]


FAILED_ATTEMPT = "litellm.exceptions.MidStreamFallbackError"


@pytest.mark.parametrize("broken", ["broken_at_start", "broken_after_role"])
def test_a_mid_stream_fallback_before_the_first_chunk_leaves_the_answered_call_ok(
        instrumented: Any, manual_spans: Any, exporter: SnapshotExporter, broken: str) -> None:
    """``Router.acompletion(stream=True)`` inside a model span while LiteLLM's stream watch is on (an instrumentor
    of a LiteLLM-backed framework is): the first deployment's connection breaks before its first chunk, LiteLLM
    raises ``MidStreamFallbackError`` (the watch records it on the current model span as a failed attempt), the
    Router falls back and the second deployment streams the whole answer. The call was answered: its span is the
    answer's (status not ERROR, no ``error.type``, the finish reason the provider sent, and the usage the caller
    writes from the answer's usage chunk, which is what the provider sent), the failed attempt one ``exception``
    event. Before: ERROR with MidStreamFallbackError, and no token counts. The same when the stream breaks after a
    first chunk that carried the role alone (``broken_after_role``): no content was generated, and the Router
    falls back on that too (``stream_with_fallbacks``). (smolagents' sync
    ``LiteLLMRouterModel`` never gets there with LiteLLM 1.97.0: its sync mid-stream fallback asks the failing
    group again, endlessly.)"""
    from litellm import Router

    from otel_agents._spans import Usage

    async def call(router: Any) -> str:
        with manual.span("model", "gpt-4o", provider="openai") as span:
            chunks = await router.acompletion(model="primary", messages=[{"role": "user", "content": "Where?"}],
                                              stream=True, stream_options={"include_usage": True})
            texts = []
            async for chunk in chunks:
                if chunk.choices:
                    texts.append(chunk.choices[0].delta.content or "")
                if getattr(chunk, "usage", None) is not None:  # what a framework reports as the call's usage
                    span.set_usage(Usage(chunk.usage.prompt_tokens, chunk.usage.completion_tokens))
            return "".join(texts)

    for url in serve():
        Provider.ending_of = {DEPLOYMENTS["primary"]: broken}
        answer = asyncio.run(call(Router(model_list=_model_list(url), **ROUTING)))
    assert answer == "".join(WORDS)
    assert [r["model"] for r in Provider.received] == [DEPLOYMENTS["primary"], DEPLOYMENTS["backup"]]
    failed, sent = Provider.sent
    assert failed == {"text": "", "finish_reason": None, "usage": None}
    [model_span] = exporter.semantic("model")
    a = model_span.attributes
    assert model_span.status.name == "UNSET" and "error.type" not in a, tree([model_span])
    assert a["gen_ai.response.finish_reasons"] == (sent["finish_reason"],) == ("stop",)
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (
        sent["usage"]["prompt_tokens"], sent["usage"]["completion_tokens"]) == (
        USAGE["prompt_tokens"], USAGE["completion_tokens"])
    assert _exception_types(model_span) == [FAILED_ATTEMPT]


def test_agno_s_litellm_model_on_a_router_is_the_fallback_s_answer(provider: Any,
                                                                   exporter: SnapshotExporter) -> None:
    """Agno's ``LiteLLM`` model with a ``Router`` as its client (Agno keeps it across copies for that), streamed
    asynchronously: the first deployment breaks before its first chunk, the Router falls back, the second streams
    the whole answer. Agno's model span has the answer's outcome, finish reason, usage and text (what the fallback's
    provider sent), and the failed attempt as its one ``exception`` event. Before: status ERROR, error.type
    MidStreamFallbackError, and no token counts (the failed stream refused them)."""
    from agno.agent import Agent
    from agno.models.litellm import LiteLLM
    from agno.run.agent import RunContentEvent
    from litellm import Router

    from otel_agents.instrumentors.agno import AgnoInstrumentor

    async def run(agent: Any) -> list[Any]:
        return [event async for event in agent.arun("Where is order A100?", stream=True)]

    instrumentor = AgnoInstrumentor()
    instrumentor.instrument(tracer_provider=provider)
    try:
        for url in serve():
            Provider.ending_of = {DEPLOYMENTS["primary"]: "broken_at_start"}
            router = Router(model_list=_model_list(url), **ROUTING)
            events = asyncio.run(run(Agent(model=LiteLLM(id="primary", client=router), telemetry=False)))
    finally:
        instrumentor.uninstrument()
    assert "".join(e.content for e in events if isinstance(e, RunContentEvent)) == "".join(WORDS)
    assert [r["model"] for r in Provider.received] == [DEPLOYMENTS["primary"], DEPLOYMENTS["backup"]]
    _, sent = Provider.sent
    [model_span] = exporter.semantic("model")
    a = model_span.attributes
    assert model_span.status.name == "UNSET" and "error.type" not in a, tree([model_span])
    assert a["gen_ai.response.finish_reasons"] == (sent["finish_reason"],) == ("stop",)
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (
        sent["usage"]["prompt_tokens"], sent["usage"]["completion_tokens"])
    [message_out] = json.loads(a["gen_ai.output.messages"])
    assert [p["content"] for p in message_out["parts"] if p["type"] == "text"] == [sent["text"]]
    assert _exception_types(model_span) == [FAILED_ATTEMPT]


@pytest.mark.parametrize("left", ["swallowed", "abandoned"])
def test_a_stream_broken_before_its_first_chunk_that_nothing_answers_fails_the_span(
        instrumented: Any, manual_spans: Any, exporter: SnapshotExporter, left: str) -> None:
    """The failed attempt is pending until an answer settles it; none does: LiteLLM's ``acompletion`` without a
    Router raises ``MidStreamFallbackError`` and the caller swallows it (as CrewAI's async call does), or the Router
    falls back and the caller leaves the fallback's stream after its first chunk. The span ends failed by the
    attempt, as when it was recorded at once: status ERROR, ``error.type`` its class, one ``exception`` event, no
    finish reason, no token counts."""
    import litellm
    from litellm import Router

    async def call(url: str) -> str:
        with manual.span("model", "gpt-4o", provider="openai"):
            request = {"messages": [{"role": "user", "content": "Where?"}], "stream": True,
                       "stream_options": {"include_usage": True}}
            if left == "swallowed":
                chunks = await litellm.acompletion(model="openai/gpt-4o", api_base=url, api_key="test-key",
                                                   **request)
                try:
                    return "".join([c.choices[0].delta.content or "" async for c in chunks if c.choices])
                except litellm.exceptions.MidStreamFallbackError:
                    return ""
            chunks = await Router(model_list=_model_list(url), **ROUTING).acompletion(model="primary", **request)
            async for chunk in chunks:
                return chunk.choices[0].delta.content or ""
        return ""

    for url in serve():
        Provider.ending_of = {DEPLOYMENTS["primary"]: "broken_at_start"}
        answer = asyncio.run(call(url))
    assert answer == ("" if left == "swallowed" else WORDS[0])
    assert Provider.sent[0] == {"text": "", "finish_reason": None, "usage": None}
    [model_span] = exporter.semantic("model")
    a = model_span.attributes
    assert (model_span.status.name, a.get("error.type")) == ("ERROR", FAILED_ATTEMPT), tree([model_span])
    assert _exception_types(model_span) == [FAILED_ATTEMPT]
    assert "gen_ai.response.finish_reasons" not in a
    assert not [k for k in a if k.startswith(("gen_ai.usage.", "llm.token_count."))], a
