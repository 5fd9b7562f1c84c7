"""Which exceptions that end a LangChain run are not errors.

* ``GeneratorExit`` and ``asyncio.CancelledError``: the consumer went away
  (a stream closed early, an ``astream_events`` loop broken, a cancelled task).
  The run is *abandoned*.
* ``langgraph.errors.GraphBubbleUp`` and its subclasses: LangGraph's control
  flow. ``GraphInterrupt`` (and ``NodeInterrupt``) stop the graph to wait for a
  human — the run is *paused*; ``ParentCommand`` hands a ``Command`` to the
  parent graph, which carries on.

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


_LANGGRAPH_ERRORS = "langgraph.errors"


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
    return Outcome.ERROR
