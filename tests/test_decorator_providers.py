"""Decorators follow the provider of the last ``instrument()``/``configure()`` (issue 26).

Before, ``@otel_agents.agent``/``@tool`` spans went to the global provider whatever
``instrument(tracer_provider=tp)`` said, so framework spans and decorated spans ended up in two
providers and one run became two broken trees. ``otel_agents.manual.set_providers()`` overrides.
"""

from __future__ import annotations

from typing import Any, Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

import otel_agents
from otel_agents import manual
from tests.spans import SnapshotExporter


def _provider() -> tuple[TracerProvider, SnapshotExporter]:
    exporter = SnapshotExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    return tp, exporter


@otel_agents.tool
def lookup_order(order_id: str) -> str:
    return f"order {order_id}: delivered"


@otel_agents.agent(name="support")
def support(question: str) -> str:
    return lookup_order("A1")


@pytest.fixture(autouse=True)
def _reset() -> Iterator[None]:
    yield
    otel_agents.uninstrument()
    manual.set_providers()
    manual.follow_providers(None)


def test_decorators_follow_instrument_provider() -> None:
    tp, exported = _provider()
    otel_agents.instrument(tracer_provider=tp, frameworks=[])
    support("where is A1?")
    assert [s.name for s in exported.spans] == ["execute_tool lookup_order", "invoke_agent support"]


def test_decorated_and_framework_spans_share_one_trace() -> None:
    pytest.importorskip("langchain_core")
    from langchain_core.runnables import RunnableLambda

    tp, exported = _provider()
    assert "langchain" in otel_agents.instrument(tracer_provider=tp, frameworks=["langchain"])
    normalise = RunnableLambda(lambda text: text.strip().lower()).with_config(run_name="normalise")

    @otel_agents.agent(name="triage")
    def triage(question: str) -> str:
        return normalise.invoke(question)

    triage("  Where is A1?  ")
    by_name = {s.name: s for s in exported.spans}
    assert set(by_name) == {"invoke_agent triage", "normalise"}
    agent, chain = by_name["invoke_agent triage"], by_name["normalise"]
    assert chain.parent_id == agent.span_id and chain.trace_id == agent.trace_id


def test_decorators_follow_instrument_capture_content_off() -> None:
    # instrument(capture_content=False) (and configure(), which calls it) turned content off for the
    # frameworks' spans only: a decorated agent around them still recorded its input and output.
    tp, exported = _provider()
    otel_agents.instrument(tracer_provider=tp, frameworks=[], capture_content=False)
    support("where is A1?")
    values = [str(v) for s in exported.spans for v in s.attributes.values()]
    assert len(exported.spans) == 2 and not [v for v in values if "A1" in v]
    otel_agents.instrument(tracer_provider=tp, frameworks=[])  # None: the environment's switch (on) again
    support("where is A1?")
    assert [v for s in exported.spans[2:] for v in map(str, s.attributes.values()) if "A1" in v]


def test_set_providers_wins_over_instrument() -> None:
    chosen, chosen_spans = _provider()
    tp, tp_spans = _provider()
    manual.set_providers(chosen)
    otel_agents.instrument(tracer_provider=tp, frameworks=[])
    support("where is A1?")
    assert len(chosen_spans.spans) == 2 and not tp_spans.spans
    manual.set_providers()  # back to the default: follow the last instrument()
    support("where is A1?")
    assert len(tp_spans.spans) == 2 and len(chosen_spans.spans) == 2


def test_decorators_follow_configure_and_leave_with_its_shutdown() -> None:
    exported = SnapshotExporter()
    config = otel_agents.configure(exporters=[exported], frameworks=[], set_global=False)
    try:
        support("where is A1?")
        assert [s.name for s in exported.spans] == ["execute_tool lookup_order", "invoke_agent support"]
    finally:
        config.shutdown()
    assert manual._followed == (None, None, None, None)  # shut down: back to the global provider
