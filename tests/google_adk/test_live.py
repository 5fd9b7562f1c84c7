"""``Runner.run_live``: ADK calls no model callback per request in live mode; each turn of the live connection
is one model span, with what was sent as its input and the usage Gemini Live sends in a message of its own
(issue 34). The connection is the matrix's fake (Gemini Live's shape: usage, then content; ``turn_complete``
after the answer, none after a function call; no finish reason)."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from otel_agents.semconv import attributes as A
from tests.matrix.drivers.google_adk import _run_live
from tests.matrix.truth import ANSWER, Truth
from tests.spans import SnapshotExporter, tree


def _live(truth: Truth) -> list:
    async def main() -> list:
        return [event async for event in _run_live(truth)]
    return asyncio.run(main())


def test_each_live_turn_is_one_model_span(instrumented: Any, exporter: SnapshotExporter) -> None:
    truth = Truth("done")
    events = _live(truth)
    assert any(e.content and e.content.parts and e.content.parts[0].text == ANSWER for e in events)
    spans = exporter.spans
    [agent] = exporter.semantic("agent")
    models = exporter.semantic("model")
    assert len(models) == len(truth.calls) == 2 and all(m.parent_id == agent.span_id for m in models), tree(spans)
    usage = [(m.attributes.get(A.GEN_AI_USAGE_INPUT_TOKENS), m.attributes.get(A.GEN_AI_USAGE_OUTPUT_TOKENS))
             for m in models]
    assert usage == [c.usage for c in truth.calls], tree(spans)
    assert not any(A.GEN_AI_RESPONSE_FINISH_REASONS in m.attributes for m in models)  # none sent, none invented
    first, second = (json.loads(m.attributes[A.GEN_AI_INPUT_MESSAGES]) for m in models)
    assert first[-1]["parts"][0]["content"] == "Paris"  # the question the caller sent
    assert second[-1]["parts"][0]["type"] == "tool_call_response"  # what ADK sent back: the tool's result
    output = json.loads(models[1].attributes[A.GEN_AI_OUTPUT_MESSAGES])
    assert output[0]["parts"][0]["content"] == ANSWER
    assert agent.attributes[A.OUTPUT_VALUE] == ANSWER  # the agent's answer, from the live events


def test_live_run_left_mid_turn_ends_its_model_span_abandoned(instrumented: Any, exporter: SnapshotExporter) -> None:
    """The caller leaves after the first event: the connection closes; the turn the model had begun is
    abandoned (the agent span ends by the cancellation ADK then makes: ``stop_reason`` ``cancelled``)."""
    truth = Truth("break_close")

    async def main() -> None:
        stream = _run_live(truth)
        async for _ in stream:
            break
        await stream.aclose()

    asyncio.run(main())
    models = exporter.semantic("model")
    assert len(models) == len(truth.calls) and all(m.attributes.get(A.OTEL_AGENTS_STREAM_ABANDONED) for m in models), \
        tree(exporter.spans)
    [agent] = exporter.semantic("agent")
    assert agent.attributes.get(A.OTEL_AGENTS_STOP_REASON) == "cancelled" or \
        agent.attributes.get(A.OTEL_AGENTS_STREAM_ABANDONED), tree(exporter.spans)
