"""autogen-core's own OpenTelemetry spans, while our instrumentor is on.

autogen-core traces itself with the global tracer provider:

* GenAI spans — ``create_agent {agent}`` (each agent's ``__init__``), ``invoke_agent
  {agent}`` (``run``/``run_stream`` and each team turn) and ``execute_tool {tool}``
  (``BaseTool.run_json``) — made by ``trace_create_agent_span``,
  ``trace_invoke_agent_span`` and ``trace_tool_span``;
* the agent runtime's messaging spans — ``autogen create/send/publish/process/ack …`` —
  made by ``TraceHelper.trace_block`` for every message between a team's agents.

The GenAI spans duplicate ours (same agents, same tools: every step counted twice),
and ``create_agent`` spans are roots of traces of their own (agents are built outside
any run). The messaging spans are plumbing — dozens per team run — and are parented
by the runtime's task context, not by the agent they serve. So while we are
instrumented, both kinds are replaced by non-recording spans: the helpers at each
module that imported them, and ``TraceHelper.trace_block``. The context is left
unchanged (nothing is attached), so our spans keep their parents. ``uninstrument()``
puts them back. (autogen-core's own switch for the messaging spans,
``AUTOGEN_DISABLE_RUNTIME_TRACING=true``, works with or without us.)
"""

from __future__ import annotations

import sys
from typing import Any

from opentelemetry import trace

HELPERS = ("trace_create_agent_span", "trace_invoke_agent_span", "trace_tool_span")


class _NonRecording:
    """``with``: yields a non-recording span and leaves the context as it is. A class, not a ``@contextmanager``
    generator: autogen-core enters one per runtime message. Stateless, so one instance serves every ``with``."""

    __slots__ = ()

    def __enter__(self) -> trace.Span:
        return trace.INVALID_SPAN

    def __exit__(self, *exc: Any) -> bool:
        return False


class _NonRecordingHelper(_NonRecording):
    """As :class:`_NonRecording`, and an exception passing through is formatted as autogen-core's helpers do
    (see :func:`non_recording_helper`)."""

    __slots__ = ()

    def __exit__(self, exc_type: Any, exc: Any, tb: Any) -> bool:
        if isinstance(exc, Exception):
            str(exc)  # what autogen-core's helper does; if it raises, that error goes on, as uninstrumented
        return False


_NON_RECORDING = _NonRecording()
_NON_RECORDING_HELPER = _NonRecordingHelper()


def non_recording(*args: Any, **kwargs: Any) -> _NonRecording:
    """Stands in for ``trace_block``: a context manager yielding a non-recording span."""
    return _NON_RECORDING


def non_recording_helper(*args: Any, **kwargs: Any) -> _NonRecording:
    """Stands in for autogen-core's GenAI span helpers: a context manager yielding a non-recording span, which
    formats an exception passing through as they do (``str(e)`` for the span status, whatever the tracer
    provider): an exception whose ``__str__`` raises is replaced by that error uninstrumented, so it is here too
    (issue 35: without it, AgentChat's tool runner never sees a result and the run waits forever)."""
    return _NON_RECORDING_HELPER


def span_helper_sites() -> list[tuple[Any, str]]:
    """Every ``(module, name)`` of an AutoGen module that holds one of the original helpers (to patch)."""
    import autogen_core._telemetry._genai as genai

    originals = {getattr(genai, name): name for name in HELPERS}
    sites = []
    for mod_name, module in list(sys.modules.items()):
        if not mod_name.startswith(("autogen_core", "autogen_agentchat", "autogen_ext")) or module is None:
            continue
        for value, name in originals.items():
            if getattr(module, "__dict__", {}).get(name) is value:
                sites.append((module, name))
    return sites
