"""Which exceptions that end a LangChain run are not errors.

* ``GeneratorExit`` and ``asyncio.CancelledError``: the consumer went away
  (a stream closed early, an ``astream_events`` loop broken, a cancelled task).
  The run is *abandoned*.
* ``langgraph.errors.GraphBubbleUp`` and its subclasses: LangGraph's control
  flow. ``GraphInterrupt`` (and ``NodeInterrupt``) stop the graph to wait for a
  human — the run is *paused*; ``ParentCommand`` hands a ``Command`` to the
  parent graph, which carries on.
* Any other exception that is no ``Exception`` (``KeyboardInterrupt``, ``SystemExit``): the program was
  stopped, the run did not fail — control flow, as the span layer records it for every framework.
* ``langgraph.errors.GraphRecursionError``: an error (the caller gets it) that is also the stop
  reason ``max_turns`` of the graphs it ends (:func:`stop_reason`): the graph reached its
  ``recursion_limit`` (supersteps) without finishing. So are LangChain 1.x's agent middleware errors:
  ``ModelCallLimitExceededError``/``ToolCallLimitExceededError`` (``ModelCallLimitMiddleware``/
  ``ToolCallLimitMiddleware`` with ``exit_behavior="error"``) → ``max_turns``, and ``PIIDetectionError``
  (``PIIMiddleware`` with ``strategy="block"``, a guardrail in LangChain's docs) → ``guardrail``.

LangGraph is optional: without it only the first group exists. Matched by
class name along the MRO, so this module imports nothing from LangGraph.
"""

from __future__ import annotations

import asyncio
from enum import Enum


class Outcome(Enum):
    """How an exception ended a run."""

    ERROR = "error"
    ABANDONED = "abandoned"
    PAUSED = "paused"
    CONTROL_FLOW = "control_flow"
    STOPPED = "stopped"  # KeyboardInterrupt, SystemExit: control flow, no LangGraph hand-off


_LANGGRAPH_ERRORS = "langgraph.errors"
_MIDDLEWARE = "langchain.agents.middleware."
_STOPS = {(_LANGGRAPH_ERRORS, "GraphRecursionError"): "max_turns",
          (_MIDDLEWARE, "ModelCallLimitExceededError"): "max_turns",
          (_MIDDLEWARE, "ToolCallLimitExceededError"): "max_turns",
          (_MIDDLEWARE, "PIIDetectionError"): "guardrail"}
"""(module or module prefix, class name) → the stop reason of a graph (agent) run that exception ends."""


def _in_mro(exc: BaseException, name: str) -> bool:
    return any(c.__name__ == name and c.__module__ == _LANGGRAPH_ERRORS for c in type(exc).__mro__)


def classify(exc: BaseException) -> Outcome:
    """The :class:`Outcome` of a run that ended with ``exc``."""
    if isinstance(exc, (GeneratorExit, asyncio.CancelledError)):
        return Outcome.ABANDONED
    if _in_mro(exc, "GraphInterrupt"):
        return Outcome.PAUSED
    if _in_mro(exc, "GraphBubbleUp"):
        return Outcome.CONTROL_FLOW
    if not isinstance(exc, Exception):
        return Outcome.STOPPED
    return Outcome.ERROR


def stop_reason(exc: BaseException) -> str | None:
    """``otel_agents.run.stop_reason`` of a graph (agent) run that ended with ``exc``: ``max_turns`` for
    LangGraph's ``GraphRecursionError`` (its ``recursion_limit`` reached) and LangChain's call-limit
    middleware errors, ``guardrail`` for ``PIIDetectionError``, else ``None`` (matched along the MRO)."""
    for cls in type(exc).__mro__:
        for (module, name), reason in _STOPS.items():
            if cls.__name__ == name and (cls.__module__ == module or cls.__module__.startswith(module)):
                return reason
    return None


def control_flow_name(exc: BaseException) -> str | None:
    """The name of the LangGraph control-flow class ``exc`` is (``"ParentCommand"``, ``"GraphInterrupt"``
    …: its own class when it is one of LangGraph's, else the nearest LangGraph base), or ``None``."""
    for cls in type(exc).__mro__:
        if cls.__module__ == _LANGGRAPH_ERRORS:
            return cls.__name__
    return None


def goto_nodes(goto: object) -> list[str]:
    """The node names a LangGraph ``Command.goto`` sends to: a node name, a ``Send`` (its ``node``),
    or a sequence of those (at most 64)."""
    items = list(goto[:64]) if isinstance(goto, (list, tuple)) else [goto]
    nodes = []
    for item in items:
        node = item if isinstance(item, str) else getattr(item, "node", None)
        if isinstance(node, str) and node:
            nodes.append(node)
    return nodes
