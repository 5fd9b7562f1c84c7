"""What is open in the current context: the state our wrappers share through contextvars.

Contextvars follow CrewAI into every thread and event loop it hands work to
(it copies the context each time), so a wrapper deep inside a run sees what
the wrappers above it opened, and two concurrent runs never see each other's.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any

# The span our innermost wrapper opened: tells super().call() (nothing opened in between)
# from a genuine nested call of the same LLM (say, from a tool its own call ran).
SPAN: ContextVar[Any] = ContextVar("otel_agents_crewai_span", default=None)

# (id(agent), id(task)) of the task execution whose agent span is open: Agent.execute_task
# called for that same pair adds no second span.
TASK_RUN: ContextVar[tuple[int, int] | None] = ContextVar("otel_agents_crewai_task_run", default=None)

# The role of the innermost agent whose span is open (the parent of a delegated agent).
AGENT_ROLE: ContextVar[str | None] = ContextVar("otel_agents_crewai_agent_role", default=None)

# id() of the agent/crew whose kickoff span is open (kickoff_async -> kickoff adds no second span).
KICKOFF: ContextVar[tuple[int, ...]] = ContextVar("otel_agents_crewai_kickoff", default=())


def arg(args: tuple, kwargs: dict, index: int, name: str, default: Any = None) -> Any:
    """The wrapped call's argument ``name``, passed by keyword or at position ``index``."""
    if name in kwargs:
        return kwargs[name]
    if len(args) > index:
        return args[index]
    return default
