"""The one watch on LiteLLM's streams (``otel_agents.instrumentors._litellm``) that smolagents', the OpenAI Agents
SDK's and Agno's instrumentors share, each holding its use as one of its patches (``PatchSet.keep``): on LiteLLM
while any of them is instrumented, LiteLLM's own functions again once none is. (CrewAI's, the fourth user:
tests/crewai/test_litellm_stream.py.)"""

from __future__ import annotations

from typing import Any

import pytest

from tests.litellm.provider import import_litellm

import_litellm()

from litellm.litellm_core_utils.streaming_handler import CustomStreamWrapper  # noqa: E402

WATCHED = ("finish_reason_handler", "_handle_stream_fallback_error")


def _instrumentors() -> list[Any]:
    from otel_agents.instrumentors.agno import AgnoInstrumentor
    from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor
    from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor

    import agno.agent, agents, smolagents  # noqa: E401, F401 - imported: instrument() installs at once

    return [SmolagentsInstrumentor(), OpenAIAgentsInstrumentor(), AgnoInstrumentor()]


ORIGINALS = {name: CustomStreamWrapper.__dict__[name] for name in WATCHED}


def _watched() -> list[bool]:
    return [CustomStreamWrapper.__dict__[name] is not ORIGINALS[name] for name in WATCHED]


@pytest.mark.parametrize("order", ["same", "reversed"])
def test_the_watch_comes_off_with_the_last_instrumentor(provider: Any, order: str) -> None:
    """Instrumented one after the other, uninstrumented in the same or the reverse order: LiteLLM is watched
    from the first instrument() to the last uninstrument(), its very functions back after it."""
    assert _watched() == [False, False]
    instrumentors = _instrumentors()
    for instrumentor in instrumentors:
        instrumentor.instrument(tracer_provider=provider)
        assert _watched() == [True, True]
    if order == "reversed":
        instrumentors.reverse()
    for instrumentor in instrumentors[:-1]:
        instrumentor.uninstrument()
        assert _watched() == [True, True]
    instrumentors[-1].uninstrument()
    assert _watched() == [False, False]
    assert {name: CustomStreamWrapper.__dict__[name] for name in WATCHED} == ORIGINALS
