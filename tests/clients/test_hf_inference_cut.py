"""Hugging Face's inference client (``huggingface_hub``), which we do not trace as a client, streamed by the frameworks
that use it: smolagents' ``InferenceClientModel`` (sync), PydanticAI's ``HuggingFaceModel`` (async) and Agno's
``HuggingFace`` model (a streamed run), real, over a mock transport (``huggingface_hub.set_client_factory``). A stream cut before its finish reason (no ``[DONE]``
either: the connection closed cleanly) is marked cut short on the framework's model span; a whole one is not, and a
stream its caller leaves early stays abandoned."""

from __future__ import annotations

import asyncio
import json
import os
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")  # (read at import: no Hub look-ups)
huggingface_hub = pytest.importorskip("huggingface_hub")
httpx2 = pytest.importorskip("httpx2")

from tests.spans import SnapshotExporter, tree  # noqa: E402

URL = "http://127.0.0.1:9/v1/chat/completions"
WORDS = ["Order ", "A100 ", "has shipped."]
USAGE = {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}


def _stream(cut: bool) -> bytes:
    """The server's answer: the words, the last with ``finish_reason`` "stop", the usage chunk and ``[DONE]``;
    cut: the words alone."""
    base = {"id": "chatcmpl-hf", "created": 0, "model": "tgi", "object": "chat.completion.chunk",
            "system_fingerprint": "3.0"}
    events = [{**base, "choices": [{"index": 0, "delta": {"role": "assistant", "content": word}, "logprobs": None,
                                    "finish_reason": "stop" if i == len(WORDS) - 1 and not cut else None}]}
              for i, word in enumerate(WORDS)]
    if not cut:
        events.append({**base, "choices": [], "usage": USAGE})
    return ("".join(f"data: {json.dumps(e)}\n\n" for e in events) + ("" if cut else "data: [DONE]\n\n")).encode()


@pytest.fixture
def served(monkeypatch: pytest.MonkeyPatch) -> Any:
    """``served["cut"]``: whether the server cuts its stream; every request to another route is refused."""
    state = {"cut": False, "requests": 0}

    def answer(request: Any) -> Any:
        if request.method != "POST" or str(request.url) != URL:
            return httpx2.Response(404)
        state["requests"] += 1
        return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=_stream(state["cut"]))

    async def aanswer(request: Any) -> Any:
        return answer(request)

    huggingface_hub.set_client_factory(lambda: httpx2.Client(transport=httpx2.MockTransport(answer)))
    huggingface_hub.set_async_client_factory(lambda: httpx2.AsyncClient(transport=httpx2.MockTransport(aanswer)))
    yield state
    huggingface_hub.set_client_factory(huggingface_hub.utils._http.default_client_factory)
    huggingface_hub.set_async_client_factory(huggingface_hub.utils._http.default_async_client_factory)


@pytest.fixture
def instrumented(provider: Any, request: pytest.FixtureRequest) -> Any:
    if request.param == "smolagents":
        from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor as Instrumentor
    elif request.param == "agno":
        from otel_agents.instrumentors.agno import AgnoInstrumentor as Instrumentor
    else:
        from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor as Instrumentor
    inst = Instrumentor()
    inst.instrument(tracer_provider=provider)
    yield request.param
    inst.uninstrument()


def _smolagents(leave_early: bool = False) -> str:
    from smolagents import InferenceClientModel

    deltas = InferenceClientModel(model_id=URL, token="test-token").generate_stream(
        [{"role": "user", "content": [{"type": "text", "text": "Where is order A100?"}]}])
    if leave_early:
        first = next(iter(deltas)).content
        deltas.close()
        return first
    return "".join(delta.content or "" for delta in deltas)


def _pydantic_ai() -> str:
    from pydantic_ai import Agent
    from pydantic_ai.models.huggingface import HuggingFaceModel
    from pydantic_ai.providers.huggingface import HuggingFaceProvider

    client = huggingface_hub.AsyncInferenceClient(base_url=URL.removesuffix("/chat/completions"), token="test-token")
    agent = Agent(HuggingFaceModel("tgi", provider=HuggingFaceProvider(hf_client=client, api_key="test-token")))

    async def main() -> str:
        async with agent.run_stream("Where is order A100?") as run:
            return await run.get_output()

    return asyncio.run(main())


def _agno() -> str:
    from agno.agent import Agent
    from agno.models.huggingface import HuggingFace

    agent = Agent(model=HuggingFace(id="tgi", base_url=URL.removesuffix("/chat/completions"), api_key="test-token"))
    return "".join(str(event.content or "") for event in agent.run("Where is order A100?", stream=True)
                   if getattr(event, "event", None) == "RunContent")


RUNS = {"smolagents": _smolagents, "pydantic_ai": _pydantic_ai, "agno": _agno}


@pytest.mark.parametrize("instrumented", list(RUNS), indirect=True)
@pytest.mark.parametrize("cut", [True, False])
def test_hf_inference_stream_cut_short(instrumented: str, served: Any, exporter: SnapshotExporter,
                                       cut: bool) -> None:
    """Cut: the framework answers the words; its model span failed as cut short (``error.type``
    ``stream_incomplete``, not abandoned), with the words, no finish reason and no usage (none was sent). Whole:
    no error, the usage the server sent. Fails before for the cut streams: status UNSET."""
    served["cut"] = cut
    assert RUNS[instrumented]() == "".join(WORDS)
    assert served["requests"] == 1
    [model] = exporter.semantic("model")
    a = model.attributes
    assert "otel_agents.stream.abandoned" not in a
    if not cut:
        assert model.status.name == "UNSET" and "error.type" not in a, tree([model])
        assert (a["gen_ai.usage.input_tokens"], a["gen_ai.usage.output_tokens"]) == (9, 4)
        return
    assert (model.status.name, a.get("error.type")) == ("ERROR", "stream_incomplete"), tree([model])
    assert model.status_description == "stream ended without finish_reason"
    assert json.loads(a["gen_ai.output.messages"]) == [
        {"role": "assistant", "parts": [{"type": "text", "content": "".join(WORDS)}], "finish_reason": ""}]
    assert "gen_ai.response.finish_reasons" not in a
    assert not [k for k in a if k.startswith("gen_ai.usage.")], a


@pytest.mark.parametrize("instrumented", ["smolagents"], indirect=True)
def test_hf_inference_stream_left_early_stays_abandoned(instrumented: str, served: Any,
                                                        exporter: SnapshotExporter) -> None:
    """A caller that takes the first delta and closes the stream (of a cut one: nothing at its end is read):
    abandoned, not cut short."""
    served["cut"] = True
    assert _smolagents(leave_early=True) == WORDS[0]
    [model] = exporter.semantic("model")
    assert model.attributes.get("otel_agents.stream.abandoned") is True
    assert model.status.name == "UNSET" and "error.type" not in model.attributes, tree([model])


@pytest.fixture
def client_streams(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Every chat stream the inference clients return (their own generators, made as they make them), kept here:
    whether each is closed is seen on it (a generator closed has no frame), not on when it is collected."""
    from huggingface_hub.inference import _client
    from huggingface_hub.inference._generated import _async_client

    made: list[Any] = []
    for module, name in ((_client, "_stream_chat_completion_response"),
                         (_async_client, "_async_stream_chat_completion_response")):
        def keep(lines: Any, make: Any = getattr(module, name)) -> Any:
            made.append(make(lines))
            return made[-1]

        monkeypatch.setattr(module, name, keep)
    return made


def _closed(stream: Any) -> bool:
    return (stream.ag_frame if hasattr(stream, "ag_frame") else stream.gi_frame) is None


def _pydantic_ai_left_early(client_streams: list[Any]) -> str:
    """PydanticAI's ``HuggingFaceModel`` streamed, its caller leaving after the first text: PydanticAI's
    ``request_stream`` closes the client's stream (ours, wrapped) on leaving."""
    from opentelemetry import trace
    from pydantic_ai import Agent
    from pydantic_ai.models.huggingface import HuggingFaceModel
    from pydantic_ai.providers.huggingface import HuggingFaceProvider

    client = huggingface_hub.AsyncInferenceClient(base_url=URL.removesuffix("/chat/completions"), token="test-token")
    agent = Agent(HuggingFaceModel("tgi", provider=HuggingFaceProvider(hf_client=client, api_key="test-token")))

    async def main() -> str:
        async with agent.run_stream("Where is order A100?") as run:
            async for first in run.stream_text(delta=True, debounce_by=None):
                break
        # at once, in the caller's own await: before the event loop gets to finalise anything
        assert [_closed(s) for s in client_streams] == [True]
        assert not trace.get_current_span().get_span_context().is_valid, "a span is left current"
        return first

    return asyncio.run(main())


@pytest.mark.parametrize("instrumented", ["smolagents", "pydantic_ai"], indirect=True)
def test_hf_inference_stream_closed_early_closes_the_clients_stream(instrumented: str, served: Any,
                                                                   exporter: SnapshotExporter,
                                                                   client_streams: list[Any]) -> None:
    """A caller that takes the first delta and closes (smolagents' ``generate_stream`` closed; PydanticAI's
    ``run_stream`` left, which closes the client's stream): the inference client's own stream is closed at once
    (as closing it unwrapped would), the framework's model span ended abandoned, nothing left current. Fails
    before: the client's stream still open (the async one waiting for the event loop's finaliser)."""
    from opentelemetry import trace

    if instrumented == "smolagents":
        first = _smolagents(leave_early=True)
        assert [_closed(s) for s in client_streams] == [True]
    else:
        first = _pydantic_ai_left_early(client_streams)
    assert first == WORDS[0]
    assert not trace.get_current_span().get_span_context().is_valid, "a span is left current"
    [model] = exporter.semantic("model")
    assert model.attributes.get("otel_agents.stream.abandoned") is True, tree([model])
    assert model.status.name == "UNSET" and "error.type" not in model.attributes, tree([model])
