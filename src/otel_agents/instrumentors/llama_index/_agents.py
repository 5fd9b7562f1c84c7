"""The agents of one ``AgentWorkflow`` run, each an ``agent`` span under the workflow's chain.

An ``AgentWorkflow`` runs one agent at a time and hands off between them; the
runtime has no span per agent, only steps that say which agent is active
(``ev.current_agent_name`` on ``setup_agent``, ``run_agent_step`` and
``parse_agent_output``). :class:`AgentSpans` opens an agent span when the
active agent changes, ends the previous one, and is where the run's steps are
parented, so the tree reads workflow → agent → steps → model/tool calls. An
agent that takes over by a handoff carries ``otel_agents.agent.parent`` = the
agent that handed off (the delegation; the ECP fold's ``delegated_by``).
"""

from __future__ import annotations

from typing import Any

from ..._spans.finalisers import new_lock
from ..._spans import SemanticSpan, Telemetry
from ...semconv import Kind
from ...semconv import attributes as A
from . import _extract as extract


class AgentSpans:
    """The agent spans of one multi-agent run (thread-safe; at most one open at a time).

    Args:
        telemetry: the span factory.
        workflow_span: the run's ``invoke_workflow`` chain span (their parent).
        workflow: the ``AgentWorkflow`` instance (its ``agents`` map gives descriptions).
    """

    def __init__(self, telemetry: Telemetry, workflow_span: SemanticSpan, workflow: Any):
        self._telemetry = telemetry
        self._workflow_span = workflow_span
        self._agents = getattr(workflow, "agents", None) or {}
        self._lock = new_lock()
        self._name: str | None = None
        self._span: SemanticSpan | None = None

    def parent_for_step(self, event: Any) -> SemanticSpan:
        """The span a step called with ``event`` nests under: the active agent's span
        (opened now if ``event`` names a new agent), else the workflow span."""
        name = extract.attr(event, "current_agent_name")  # not every step's event has it: no raise for a miss
        with self._lock:
            if isinstance(name, str) and name and name != self._name:
                handed_off_by = None
                if self._span is not None:
                    self._span.end()  # a handoff: the previous agent is done
                    handed_off_by = self._name
                self._name, self._span = name, self._open(name, handed_off_by)
            return self._span or self._workflow_span

    def _open(self, name: str, handed_off_by: str | None) -> SemanticSpan:
        # The agent that handed off is recorded as the delegator (otel_agents.agent.parent, as CrewAI's
        # delegations): its span has ended, so it cannot be the parent; the ECP fold reads the delegation.
        attributes = {A.OTEL_AGENTS_PARENT_AGENT: handed_off_by} if handed_off_by else None
        span = self._telemetry.start_span(Kind.AGENT, name, parent=self._workflow_span, attributes=attributes)
        agent = self._agents.get(name) if hasattr(self._agents, "get") else None
        span.set_agent(name, description=getattr(agent, "description", None))
        return span

    def step_result(self, result: Any) -> None:
        """Record an agent's answer (an ``AgentOutput`` step result, not one it rejected) on the active agent's span."""
        span = self._span
        if span is not None and span.records_content and extract.rejected_feedback(result) is None \
                and extract.has_attr(result, "current_agent_name") and extract.has_attr(result, "response"):
            span.set_output(extract.response_text(result))

    def record_active(self, error: BaseException, *, control_flow: bool = False) -> None:
        """Record ``error`` on the active agent's span (a cancelled run: the agent's stop reason ``cancelled``)."""
        span = self._span
        if span is not None:
            span.record_error(error, control_flow=control_flow)

    def close(self, error: BaseException | None = None, *, control_flow: bool = False) -> None:
        """End the active agent's span with the run (recording the run's error, if any)."""
        with self._lock:
            span, self._span = self._span, None
        if span is None:
            return
        if error is not None:
            span.record_error(error, control_flow=control_flow)
        span.end()
