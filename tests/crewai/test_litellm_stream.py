"""CrewAI's LiteLLM-backed ``LLM`` (``is_litellm=True``, or a provider CrewAI has no class of its own for), streamed:
it announces each chunk on the event bus itself (not through ``BaseLLM._emit_stream_chunk_event``), and its model span
is timed from the first chunk the server sent (OTel GenAI v1.41 ``gen_ai.response.time_to_first_chunk``). The server is
a real one on loopback sending Server-Sent Events, its first chunk 80 ms after the request; what it received and sent
is the ground truth. A stream the server cuts short (no chunk with a finish reason), or ends without the usage chunk
CrewAI asks for: LiteLLM closes both with a finish reason or token counts of its own, which are not on the span."""

from __future__ import annotations

import asyncio
import json
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from tests.crewai.netguard import block_network
from tests.spans import SnapshotExporter, tree

# litellm is installed in .venv-litellm alone (Makefile ISOLATED says why): this file runs there, where a
# litellm that cannot be imported fails, and skips elsewhere. Imported with every connection but loopback refused
# (tests/conftest.py sets LITELLM_LOCAL_MODEL_COST_MAP=True: otherwise LiteLLM fetches its price list from GitHub
# at import); the refused hosts are checked below.
OWN_VENV = ".venv-litellm"
with pytest.MonkeyPatch.context() as _patch:
    REFUSED_AT_IMPORT = block_network(_patch.setattr)
    if Path(sys.prefix).name == OWN_VENV:
        import litellm  # noqa: F401 - imported here to check what it reaches at import
    else:
        litellm = pytest.importorskip("litellm", reason=f"litellm (CrewAI's LiteLLM-backed LLM) is not installed in "
                                                        f"this venv: this file runs in {OWN_VENV} (Makefile ISOLATED)")

DELAY = 0.08  # seconds from the request to the first chunk
WORDS = ["Order ", "A100 ", "has ", "shipped."]


class _SSE(BaseHTTPRequestHandler):
    received: list[dict[str, Any]] = []
    # how a streamed answer ends: "whole" (finish reason, usage chunk, [DONE]), "no_usage" (finish reason and
    # [DONE], no usage chunk: a server that does not report usage), "cut" (no finish reason, no usage, no [DONE]:
    # the connection closed cleanly after the last word, as a proxy cutting it would)
    ending = "whole"

    def log_message(self, *args: Any) -> None:
        pass

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.received.append(body)
        self.send_response(200)
        base = {"id": "chatcmpl-sse", "created": 0, "model": "gpt-4o-2024-08-06"}
        usage = {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}
        if not body.get("stream"):
            whole = {**base, "object": "chat.completion", "usage": usage, "choices": [{
                "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "".join(WORDS)}}]}
            data = json.dumps(whole).encode()
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        time.sleep(DELAY)
        base["object"] = "chat.completion.chunk"
        for i, word in enumerate(WORDS):
            last = i == len(WORDS) - 1 and self.ending != "cut"
            choice = {"index": 0, "delta": {"role": "assistant", "content": word} if i == 0 else {"content": word},
                      "finish_reason": "stop" if last else None}
            self.wfile.write(f"data: {json.dumps({**base, 'choices': [choice]})}\n\n".encode())
            self.wfile.flush()
            time.sleep(0.01)
        if self.ending == "whole":
            self.wfile.write(f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode())
        if self.ending != "cut":
            self.wfile.write(b"data: [DONE]\n\n")


@pytest.fixture
def server() -> Any:
    _SSE.received = []
    _SSE.ending = "whole"
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), _SSE)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


def test_litellm_is_imported_without_the_network() -> None:
    assert REFUSED_AT_IMPORT == []


@pytest.mark.parametrize("stream", [True, False])
def test_litellm_llm_is_timed_from_its_first_chunk_and_keeps_its_usage(instrumented: Any, exporter: SnapshotExporter,
                                                                        server: Any, stream: bool) -> None:
    """Streamed: gen_ai.response.time_to_first_chunk (at least the server's delay, at most the span), stream true.
    Streamed or not: the usage, finish reason and response id the server sent (CrewAI announces them on the bus),
    the server it was sent to and the number of choices asked (``n``, as sent)."""
    from crewai import LLM

    port = server.server_address[1]
    llm = LLM(model="openai/gpt-4o", is_litellm=True, stream=stream, api_key="test-key", n=2 if stream else None,
              base_url=f"http://127.0.0.1:{port}/v1")
    assert llm.call("Where is order A100?") == "".join(WORDS)
    [model] = exporter.semantic("model")
    [request] = _SSE.received
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


def _llm(server: Any) -> Any:
    from crewai import LLM

    return LLM(model="openai/gpt-4o", is_litellm=True, stream=True, api_key="test-key",
               base_url=f"http://127.0.0.1:{server.server_address[1]}/v1")


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
    _SSE.ending = "cut"
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
    _SSE.ending = "no_usage"
    assert _llm(server).call("Where is order A100?") == "".join(WORDS)
    assert _SSE.received[0]["stream_options"] == {"include_usage": True}
    [model] = exporter.semantic("model")
    a = model.attributes
    assert model.status.name == "UNSET" and "error.type" not in a
    assert a["gen_ai.response.finish_reasons"] == ("stop",)
    assert _no_counts(a), a


def test_litellm_wrapper_comes_off_with_the_last_instrumentor(provider: Any) -> None:
    """CrewAI's and smolagents' instrumentors share the one wrapper on LiteLLM's stream end: it stays while
    either is instrumented and is LiteLLM's own function again once both are not."""
    from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper

    from otel_agents.instrumentors import _litellm
    from otel_agents.instrumentors.crewai import CrewAIInstrumentor

    original = CustomStreamWrapper.__dict__["finish_reason_handler"]
    crewai = CrewAIInstrumentor()
    crewai.instrument(tracer_provider=provider)
    other = _litellm.use()  # (smolagents is not installed here: its use, as its instrumentor makes it)
    assert CustomStreamWrapper.__dict__["finish_reason_handler"] is not original
    crewai.uninstrument()
    assert CustomStreamWrapper.__dict__["finish_reason_handler"] is not original
    other.remove()
    other.remove()  # twice is once
    assert CustomStreamWrapper.__dict__["finish_reason_handler"] is original
