"""Pins the CrewAI behaviour behind the instrumentor's design (wrapt wrappers, not the event bus).

See the docstring of ``otel_agents.instrumentors.crewai``. If CrewAI ever runs
event handlers inline in the emitting thread, or every LLM starts emitting its
own events, these tests fail and the decision deserves another look.
"""

from __future__ import annotations

import threading
from typing import Any, Iterator

import pytest
from crewai.events import crewai_event_bus
from crewai.events.types.llm_events import LLMCallCompletedEvent, LLMCallStartedEvent
from opentelemetry import trace

from tests.crewai.fakes import SilentNativeLLM, one_agent_crew
from tests.spans import SnapshotExporter


@pytest.fixture
def llm_events() -> Iterator[list[tuple[str, int, Any]]]:
    """(handler thread, span current in the handler, event) for every LLM call event."""
    seen: list[tuple[str, int, Any]] = []
    lock = threading.Lock()

    def handler(source: Any, event: Any) -> None:
        with lock:
            seen.append((threading.current_thread().name, trace.get_current_span().get_span_context().span_id, event))

    for cls in (LLMCallStartedEvent, LLMCallCompletedEvent):
        crewai_event_bus.register_handler(cls, handler)
    yield seen
    for cls in (LLMCallStartedEvent, LLMCallCompletedEvent):
        crewai_event_bus.off(cls, handler)


def test_event_handlers_run_on_other_threads_after_the_fact(instrumented: Any, exporter: SnapshotExporter,
                                                            llm_events: list) -> None:
    """Event-bus handlers run on CrewAI's worker threads with a copy of the emitter's context: they can
    see the span our wrapper made current, but a span opened there could never be current for the
    model call or the tool body. Spans are therefore opened by wrappers in the calling thread."""
    caller = threading.current_thread().name
    one_agent_crew().kickoff()
    crewai_event_bus.flush()
    assert llm_events, "the scripted model emits LLM call events"
    assert all(thread != caller for thread, _, _ in llm_events)
    model_span_ids = {s.span_id for s in exporter.semantic("model")}
    assert {span_id for _, span_id, _ in llm_events} <= model_span_ids


def test_a_custom_llm_emits_no_events_but_gets_model_spans(instrumented: Any, exporter: SnapshotExporter,
                                                           llm_events: list) -> None:
    """A custom BaseLLM that does not call CrewAI's _emit_call_* helpers produces no LLM events at
    all; an event-based instrumentation would miss its calls. The call() wrapper does not."""
    one_agent_crew(SilentNativeLLM()).kickoff()
    crewai_event_bus.flush()
    assert llm_events == []
    assert len(exporter.semantic("model")) == 2
