"""What ``instrument()`` installs into pydantic-ai, and takes out again.

* ``Agent.iter`` (every entry point — ``run``, ``run_sync``, ``run_stream``,
  ``run_stream_sync``, ``run_stream_events``, ``iter`` — goes through it once):
  adds a fresh :class:`~._capability.OtelAgentsCapability` to the run's
  ``capabilities`` — none when the run starts inside OTel's
  ``suppress_instrumentation()`` (no span of it could record: the run then
  costs what it costs uninstrumented). Only ``iter`` is wrapped: ``run``/``run_sync``/``run_stream*``
  infer the agent's name from their caller's frame, which a wrapper would become.
* ``StreamedRunResult._marked_completed`` (private; every completion path of a
  streamed result calls it): ends the run's spans when the stream has been
  consumed, rather than at ``__aexit__``/``__exit__`` or garbage collection.
* ``StreamedRunResultSync.stream_output``/``stream_text``/``stream_response``:
  the iterator handed to the user is wrapped with
  :func:`~otel_agents._spans.wrap_stream`, so a sync result used without
  ``with`` and left unconsumed ends its run as abandoned as soon as the
  iterator is dropped or closed, or sits idle past the idle timeout.
"""

from __future__ import annotations

import logging
from typing import Any

from pydantic_ai.agent import Agent
from pydantic_ai.result import StreamedRunResult, StreamedRunResultSync

from ..._spans import Telemetry, guard, instrumentation_enabled, wrap_stream
from ._capability import capability_type
from .._patch import PatchSet
from ._runs import RunSpans, RunTracker

logger = logging.getLogger("otel_agents")

_SYNC_STREAM_METHODS = ("stream_output", "stream_text", "stream_response")


class Installation:
    """Our patches into pydantic-ai for one ``instrument()`` call.

    Attributes:
        tracker: the open runs (for ``open_runs`` and the stream hooks).
    """

    def __init__(self, telemetry: Telemetry):
        self.tracker = RunTracker(telemetry)
        self.capability = capability_type()
        self.patches = PatchSet("pydantic_ai.patch")
        self.patches.add(Agent, "iter", self._iter)
        self.patches.add(StreamedRunResult, "_marked_completed", self._marked_completed)
        for name in _SYNC_STREAM_METHODS:
            self.patches.add(StreamedRunResultSync, name, self._sync_stream)

    def remove(self) -> None:
        """Take every patch off (see :class:`~._patch.Patch` for the exact semantics)."""
        self.patches.remove()

    # -- wrappers ----------------------------------------------------------------
    def _iter(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        call_kwargs = kwargs
        with guard("pydantic_ai.iter"):
            capabilities = list(kwargs.get("capabilities") or ())
            capabilities.append(self.capability(tracker=self.tracker))
            call_kwargs = {**kwargs, "capabilities": capabilities}
        return wrapped(*args, **call_kwargs)

    def _marked_completed(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        return self._finish_when_completed(wrapped(*args, **kwargs), instance)

    async def _finish_when_completed(self, completing: Any, result: Any) -> Any:
        value = await completing
        with guard("pydantic_ai.stream_completed"):
            run = self.tracker.find(result.run_id)
            if run is not None:
                run.finish(output=result.result.output, response=result.response)
        return value

    def _sync_stream(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        iterator = wrapped(*args, **kwargs)
        with guard("pydantic_ai.sync_stream"):
            run = self.tracker.find(instance.run_id)
            if run is not None:
                return wrap_stream(iterator, run.span, on_end=_StreamEnd(run, instance),
                                   on_error=lambda span, exc: run.stopped(exc))
        return iterator


class _StreamEnd:
    """``on_end`` of a sync result's iterator: close the run's open model spans before the wrapper ends its agent span."""

    def __init__(self, run: RunSpans, result: Any):
        self.run = run
        self.result = result

    def __call__(self, span: Any, abandoned: bool) -> None:
        response = None
        with guard("pydantic_ai.stream_response"):
            response = self.result.response
        self.run.hand_over(response, abandoned=abandoned)
