"""A fake OpenAI Chat Completions provider on loopback for LiteLLM's ``openai/`` route (what the frameworks'
LiteLLM-backed models call with a base URL): a real HTTP server, Server-Sent Events when asked to stream. What it
received and what it sent (the ground truth a span is checked against) are kept on the class.

How a streamed answer ends (``Provider.ending``):

- ``whole``: a chunk with the finish reason, the usage chunk (``stream_options.include_usage``), ``[DONE]``;
- ``no_usage``: the finish reason and ``[DONE]``, no usage chunk (a server that does not report usage);
- ``cut``: no finish reason, no usage, no ``[DONE]``: the body ends cleanly after the last word, as when a proxy
  closes the stream;
- ``broken``: the connection closes in the middle of the body after two words (an incomplete chunked read: the
  client's read raises);
- ``broken_at_start``: the connection closes in the middle of the body before its first chunk;
- ``broken_after_role``: the same after a first chunk that carries the role alone (no content);
- ``refused``: no answer at all, HTTP 503 (streamed or not).

``Provider.ending_of`` gives a model of its own ending (a Router's deployments: the first fails, the fallback
answers); a request for any other model ends as ``Provider.ending`` says.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from typing import Any, Iterator

import pytest

from tests import _loopback
from tests.crewai.netguard import block_network

# litellm is installed in .venv-litellm alone (Makefile ISOLATED says why)
OWN_VENV = ".venv-litellm"
REFUSED_AT_IMPORT: list[str] = []  # the hosts litellm tried to reach when it was imported

WORDS = ["Order ", "A100 ", "has ", "shipped."]
USAGE = {"prompt_tokens": 9, "completion_tokens": 4, "total_tokens": 13}
DELAY = 0.08  # seconds from the request to the first chunk


def import_litellm() -> Any:
    """``litellm``, imported with every connection but loopback refused (the hosts it tried go to
    ``REFUSED_AT_IMPORT``; tests/conftest.py sets ``LITELLM_LOCAL_MODEL_COST_MAP=True``: otherwise LiteLLM fetches
    its price list from GitHub when imported). In OWN_VENV a litellm that cannot be imported fails; elsewhere it
    skips the calling test module."""
    with pytest.MonkeyPatch.context() as patch:
        refused = block_network(patch.setattr)
        try:
            if Path(sys.prefix).name == OWN_VENV:
                import litellm
            else:
                litellm = pytest.importorskip("litellm", reason=f"litellm is not installed in this venv: the tests "
                                                                f"of LiteLLM-backed models run in {OWN_VENV}")
        finally:
            REFUSED_AT_IMPORT.extend(refused)
    return litellm


class Provider(_loopback.QuietHandler):
    protocol_version = "HTTP/1.1"  # a chunked body, which a broken connection leaves incomplete
    received: list[dict[str, Any]] = []
    sent: list[dict[str, Any]] = []  # per request: the text, finish reason and usage the server sent
    ending = "whole"
    ending_of: dict[str, str] = {}  # a request's "model" -> its ending

    def _chunk(self, data: bytes) -> None:
        self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.flush()

    def do_POST(self) -> None:  # noqa: N802 - http.server's name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.received.append(body)
        self.close_connection = True
        ending = self.ending_of.get(body.get("model"), self.ending)
        if ending == "refused":
            self.send_error(503, "overloaded")
            return
        self.send_response(200)
        base = {"id": "chatcmpl-sse", "created": 0, "model": "gpt-4o-2024-08-06"}
        if not body.get("stream"):
            self.sent.append({"text": "".join(WORDS), "finish_reason": "stop", "usage": USAGE})
            data = json.dumps({**base, "object": "chat.completion", "usage": USAGE, "choices": [{
                "index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "".join(WORDS)}}]})
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data.encode())
            return
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        time.sleep(DELAY)
        base["object"] = "chat.completion.chunk"
        words = {"broken": WORDS[:2], "broken_at_start": [], "broken_after_role": []}.get(ending, WORDS)
        finish = "stop" if ending in ("whole", "no_usage") else None
        usage = USAGE if ending == "whole" else None
        self.sent.append({"text": "".join(words), "finish_reason": finish, "usage": usage})
        if ending == "broken_after_role":
            role = {"index": 0, "delta": {"role": "assistant"}, "finish_reason": None}
            self._chunk(f"data: {json.dumps({**base, 'choices': [role]})}\n\n".encode())
        for i, word in enumerate(words):
            choice = {"index": 0, "delta": {"role": "assistant", "content": word} if i == 0 else {"content": word},
                      "finish_reason": finish if i == len(words) - 1 else None}
            self._chunk(f"data: {json.dumps({**base, 'choices': [choice]})}\n\n".encode())
            time.sleep(0.01)
        if usage:
            self._chunk(f"data: {json.dumps({**base, 'choices': [], 'usage': usage})}\n\n".encode())
        if finish:
            self._chunk(b"data: [DONE]\n\n")
        if ending.startswith("broken"):
            self.wfile.write(b"40\r\ndata: {\"id\"")  # a chunk announced, cut: the body never ends
            self.wfile.flush()
        else:
            self.wfile.write(b"0\r\n\r\n")


def serve(ending: str = "whole") -> Iterator[str]:
    """Run the provider on loopback for a test (a fixture's body): yields its base URL (``http://127.0.0.1:PORT/v1``)
    with ``Provider.received`` / ``Provider.sent`` emptied and ``Provider.ending`` set."""
    Provider.received, Provider.sent, Provider.ending, Provider.ending_of = [], [], ending, {}
    with _loopback.serve(Provider) as url:
        yield f"{url}/v1"
