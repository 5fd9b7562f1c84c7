"""``ecp serve`` with content capture off (issue 26): the step's ``public_output`` is still the agent's
answer, because the ECP ``agent/step`` result must carry it for graders; nothing else in the envelope
carries content (README "Content capture", docs/ecp.md ``public_output``)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from otel_agents.serve.replay import input_key
from tests.serve.test_server import rpc, run_stdio

REPO = Path(__file__).resolve().parents[2]
QUESTION = "Can I get a refund for order B200?"


def test_public_output_is_returned_with_content_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    (out,) = run_stdio(f"{REPO / 'examples/plain_python/agent.py'}:agent", [rpc("agent/step", {"input": QUESTION})])
    result = out["result"]
    answer = result["public_output"]
    assert isinstance(answer, str) and "B200" in answer  # the answer itself, as the agent returned it
    assert result["tool_calls"] and all(c["arguments"] == {} and c.get("result") is None for c in result["tool_calls"])
    rest = json.dumps({k: v for k, v in result.items() if k != "public_output"})
    assert QUESTION not in rest and answer not in rest and "B200" not in rest
    # nor a digest of it: a SHA-256 of a short prompt gives it back to a dictionary (its replay key, input_sha256)
    assert input_key(QUESTION) not in rest and "input_sha256" not in rest
