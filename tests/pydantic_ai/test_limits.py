"""A run a ``UsageLimits`` cap stopped says which kind of cap: ``otel_agents.run.stop_reason`` ``budget`` for a
token or cost limit, ``max_turns`` for the request limit, whatever entry point ends the run (issue 34)."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from opentelemetry.trace import StatusCode
from pydantic_ai.exceptions import UsageLimitExceeded
from pydantic_ai.usage import UsageLimits

from otel_agents.semconv import attributes as A
from tests.matrix.drivers.pydantic_ai import _agent
from tests.matrix.truth import CITY, Truth
from tests.spans import SnapshotExporter, tree


def _stop_reason(exporter: SnapshotExporter) -> Any:
    (agent,) = exporter.semantic("agent")
    return agent.attributes.get(A.OTEL_AGENTS_STOP_REASON)


def test_token_limit_crossed_when_the_request_limit_is_reached_too_is_budget(instrumented: Any,
                                                                              exporter: SnapshotExporter) -> None:
    """The second response (18 tokens a call) crosses ``total_tokens_limit=20`` as the run reaches ``request_limit=2``:
    PydanticAI raises for the tokens (after the response), so the stop reason is ``budget``, not ``max_turns``."""
    truth = Truth("done")
    with pytest.raises(UsageLimitExceeded, match="total_tokens_limit"):
        _agent(truth, sync_tool=True).run_sync(CITY, usage_limits=UsageLimits(request_limit=2, total_tokens_limit=20))
    assert _stop_reason(exporter) == "budget", tree(exporter.spans)


def test_request_limit_is_max_turns(instrumented: Any, exporter: SnapshotExporter) -> None:
    truth = Truth("max_turns")  # the model asks for the tool every turn
    with pytest.raises(UsageLimitExceeded, match="request_limit"):
        _agent(truth, sync_tool=True).run_sync(CITY, usage_limits=UsageLimits(request_limit=2, total_tokens_limit=100))
    assert _stop_reason(exporter) == "max_turns", tree(exporter.spans)


def test_budget_stop_of_a_sync_stream_is_on_its_agent_span(instrumented: Any, exporter: SnapshotExporter) -> None:
    """``run_stream_sync``: the result's iterator ends the run's span (with the limit's error): the stop reason is
    there too, and the model span has the usage the model sent for the response the limit stopped."""
    truth = Truth("done")
    result = _agent(truth, sync_tool=True).run_stream_sync(CITY, usage_limits=UsageLimits(total_tokens_limit=20))
    with pytest.raises(UsageLimitExceeded):
        list(result.stream_output(debounce_by=None))
    assert _stop_reason(exporter) == "budget", tree(exporter.spans)
    usage = [(m.attributes.get(A.GEN_AI_USAGE_INPUT_TOKENS), m.attributes.get(A.GEN_AI_USAGE_OUTPUT_TOKENS))
             for m in exporter.semantic("model")]
    assert usage == [c.usage for c in truth.calls] == [(11, 7), (13, 5)], tree(exporter.spans)


def test_budget_stop_of_an_async_stream_keeps_the_billed_usage(instrumented: Any, exporter: SnapshotExporter) -> None:
    """``run_stream``: the limit raises while the answer streams (PydanticAI then cancels the request): the model
    span keeps the usage the provider billed for it, as PydanticAI hands it over, and is not failed (the limit
    stopped the run; the request did not fail): one error, the run's."""
    truth = Truth("done")

    async def main() -> None:
        async with _agent(truth).run_stream(CITY, usage_limits=UsageLimits(total_tokens_limit=20)) as result:
            async for _ in result.stream_output(debounce_by=None):
                pass

    with pytest.raises(UsageLimitExceeded):
        asyncio.run(main())
    assert _stop_reason(exporter) == "budget", tree(exporter.spans)
    usage = [(m.attributes.get(A.GEN_AI_USAGE_INPUT_TOKENS), m.attributes.get(A.GEN_AI_USAGE_OUTPUT_TOKENS))
             for m in exporter.semantic("model")]
    assert usage == [(11, 7), (13, 5)], tree(exporter.spans)
    assert [s.status for s in exporter.semantic()].count(StatusCode.ERROR) == 1, tree(exporter.spans)
