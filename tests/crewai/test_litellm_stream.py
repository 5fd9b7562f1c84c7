"""CrewAI's LiteLLM-backed ``LLM`` (``is_litellm=True``, or a provider CrewAI has no class of its own for), streamed:
it announces each chunk on the event bus itself (not through ``BaseLLM._emit_stream_chunk_event``), and its model span
is timed from the first chunk the server sent (OTel GenAI v1.41 ``gen_ai.response.time_to_first_chunk``). The server is
a real one on loopback sending Server-Sent Events, its first chunk 80 ms after the request; what it received and sent
is the ground truth. A stream the server cuts short (no chunk with a finish reason), or ends without the usage chunk
CrewAI asks for: LiteLLM closes both with a finish reason or token counts of its own, which are not on the span."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Iterator

import pytest

from tests.litellm.provider import DELAY, WORDS, Provider, import_litellm, serve
from tests.spans import SnapshotExporter, tree

import_litellm()  # the LiteLLM-backed LLM's (.venv-litellm alone; tests/litellm/test_frameworks.py checks its import)


@pytest.fixture
def server() -> Iterator[str]:
    """The fake provider's base URL (tests/litellm/provider.py), sending whole answers unless told otherwise."""
    yield from serve()


@pytest.mark.parametrize("stream", [True, False])
def test_litellm_llm_is_timed_from_its_first_chunk_and_keeps_its_usage(instrumented: Any, exporter: SnapshotExporter,
                                                                        server: Any, stream: bool) -> None:
    """Streamed: gen_ai.response.time_to_first_chunk (at least the server's delay, at most the span), stream true.
    Streamed or not: the usage, finish reason and response id the server sent (CrewAI announces them on the bus),
    the server it was sent to and the number of choices asked (``n``, as sent)."""
    from crewai import LLM

    port = int(server.rsplit(":", 1)[1].split("/")[0])
    llm = LLM(model="openai/gpt-4o", is_litellm=True, stream=stream, api_key="test-key", n=2 if stream else None,
              base_url=server)
    assert llm.call("Where is order A100?") == "".join(WORDS)
    [model] = exporter.semantic("model")
    [request] = Provider.received
    assert bool(request.get("stream")) is stream
    a = model.attributes
    if stream:
        assert DELAY <= a["gen_ai.response.time_to_first_chunk"] <= (model.end_time - model.start_time) / 1e9
        assert a["gen_ai.request.stream"] is True
    else:
        assert "gen_ai.response.time_to_first_chunk" not in a and "gen_ai.request.stream" not in a
    assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (9, 4)
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert a["gen_ai.response.id"] == "chatcmpl-sse"
    # where the LLM connects (OTel GenAI v1.41 server.address/port), the choices asked (n, sent when set: not 1)
    assert (a["server.address"], a["server.port"]) == ("127.0.0.1", port)
    assert a.get("gen_ai.request.choice.count") == request.get("n") == (2 if stream else None)


def _llm(server: str) -> Any:
    from crewai import LLM

    return LLM(model="openai/gpt-4o", is_litellm=True, stream=True, api_key="test-key", base_url=server)


def _no_counts(attributes: Any) -> bool:
    return not [k for k in attributes if k.startswith(("gen_ai.usage.", "llm.token_count."))]


@pytest.mark.parametrize("aio", [False, True])
def test_litellm_stream_cut_short_is_incomplete_without_litellm_s_reason_and_counts(
        instrumented: Any, exporter: SnapshotExporter, server: Any, aio: bool) -> None:
    """The server's stream ends cleanly after the last word, without a chunk carrying a finish reason, its usage
    chunk or ``[DONE]``. CrewAI returns the words (LiteLLM closed the stream with its own "stop" and counted the
    tokens itself); the model span says the response was cut (status ERROR, ``error.type`` ``stream_incomplete``,
    not abandoned), keeps the words that arrived, and has no finish reason and no token counts: the server sent
    none. Fails before: status UNSET, finish reason "stop" and LiteLLM's counts (input 12, output 6)."""
    Provider.ending = "cut"
    llm = _llm(server)
    answer = asyncio.run(llm.acall("Where is order A100?")) if aio else llm.call("Where is order A100?")
    assert answer == "".join(WORDS)
    [model] = exporter.semantic("model")
    a = model.attributes
    assert (model.status.name, a.get("error.type")) == ("ERROR", "stream_incomplete"), tree([model])
    assert model.status_description == "stream ended without finish_reason"
    assert "otel_agents.stream.abandoned" not in a
    assert json.loads(a["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "".join(WORDS)}], "finish_reason": ""}]
    assert "gen_ai.response.finish_reasons" not in a and "llm.finish_reason" not in a
    assert _no_counts(a), a


def test_litellm_stream_without_a_usage_chunk_has_no_token_counts(instrumented: Any, exporter: SnapshotExporter,
                                                                   server: Any) -> None:
    """A whole stream (finish reason, ``[DONE]``) from a server that sends no usage chunk although CrewAI asks
    for one (``stream_options.include_usage``): the finish reason the server sent, no error, and no token counts
    (LiteLLM's own count of the words is not the provider's usage). Fails before: input 12, output 6 tokens."""
    Provider.ending = "no_usage"
    assert _llm(server).call("Where is order A100?") == "".join(WORDS)
    assert Provider.received[0]["stream_options"] == {"include_usage": True}
    [model] = exporter.semantic("model")
    a = model.attributes
    assert model.status.name == "UNSET" and "error.type" not in a
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert _no_counts(a), a


@pytest.mark.parametrize("aio", [False, True])
def test_litellm_stream_broken_midway_fails_the_model_span_crewai_answers_as_before(
        instrumented: Any, exporter: SnapshotExporter, server: str, aio: bool) -> None:
    """The connection closes in the middle of the body after two words. LiteLLM raises; CrewAI catches it and
    answers with the words that arrived, as it does uninstrumented. The model call failed all the same: the span
    says so (status ERROR, ``error.type`` LiteLLM's exception, one ``exception`` event), keeps the words as its
    output, and has no finish reason and no token counts. Fails before: status UNSET, no exception."""
    Provider.ending = "broken"
    llm = _llm(server)
    answer = asyncio.run(llm.acall("Where is order A100?")) if aio else llm.call("Where is order A100?")
    assert answer == Provider.sent[0]["text"] == "".join(WORDS[:2])
    [model] = exporter.semantic("model")
    a = model.attributes
    assert (model.status.name, a.get("error.type")) == ("ERROR", "litellm.exceptions.MidStreamFallbackError"), \
        tree([model])
    assert [name for name, _ in model.events] == ["exception"]
    assert json.loads(a["gen_ai.output.messages"])[0]["parts"] == [{"type": "text", "content": answer}]
    assert "gen_ai.response.finish_reasons" not in a
    assert _no_counts(a), a


@pytest.mark.parametrize("aio", [False, True])
def test_litellm_stream_broken_before_its_first_chunk_fails_the_model_span(
        instrumented: Any, exporter: SnapshotExporter, server: str, aio: bool) -> None:
    """The connection closes before the first chunk: LiteLLM raises ``MidStreamFallbackError`` with
    ``is_pre_first_chunk``, a failed attempt a Router's fallback could still answer (the watch records it
    pending); none does. CrewAI's async call raises it; its sync call an ``Exception`` of its own made of it
    (CrewAI 1.15.30), or it too (1.15.44: the provider's exception re-raised). The span fails with what the caller
    got: the attempt (``error.type`` its class, one event), or CrewAI's exception after the attempt's event; no
    output, no finish reason, no token counts."""
    from litellm.exceptions import MidStreamFallbackError

    Provider.ending = "broken_at_start"
    llm = _llm(server)
    with pytest.raises(Exception, match="MidStreamFallbackError") as raised:
        asyncio.run(llm.acall("Where is order A100?")) if aio else llm.call("Where is order A100?")
    assert Provider.sent == [{"text": "", "finish_reason": None, "usage": None}]
    [model] = exporter.semantic("model")
    a = model.attributes
    wrapped = not isinstance(raised.value, MidStreamFallbackError)  # CrewAI's own Exception made of it
    assert not aio or not wrapped
    failures = ["litellm.exceptions.MidStreamFallbackError"] + ([type(raised.value).__qualname__] if wrapped else [])
    assert (model.status.name, a.get("error.type")) == ("ERROR", failures[-1]), tree([model])
    assert [event["exception.type"] for _, event in model.events] == failures
    assert "gen_ai.output.messages" not in a and "gen_ai.response.finish_reasons" not in a
    assert _no_counts(a), a


def test_litellm_wrapper_comes_off_with_the_last_instrumentor(provider: Any) -> None:
    """CrewAI's and smolagents' instrumentors share the one watch on LiteLLM's streams, each holding its use as
    one of its patches: it stays while either is instrumented and is LiteLLM's own functions again once neither
    is (smolagents', the Agents SDK's and Agno's together: tests/litellm/test_shared_patches.py)."""
    from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper
    import smolagents  # noqa: F401 - imported: instrument() installs at once

    from otel_agents.instrumentors.crewai import CrewAIInstrumentor
    from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor

    names = ("finish_reason_handler", "_handle_stream_fallback_error")
    originals = [CustomStreamWrapper.__dict__[name] for name in names]

    def watched() -> list[bool]:
        return [CustomStreamWrapper.__dict__[name] is not original for name, original in zip(names, originals)]

    crewai, other = CrewAIInstrumentor(), SmolagentsInstrumentor()
    crewai.instrument(tracer_provider=provider)
    other.instrument(tracer_provider=provider)
    assert watched() == [True, True]
    crewai.uninstrument()
    assert watched() == [True, True]
    other.uninstrument()
    assert watched() == [False, False]
