"""What ``instrument()`` installs into pydantic-ai, and takes out again.

* ``Agent.iter`` (every entry point — ``run``, ``run_sync``, ``run_stream``,
  ``run_stream_sync``, ``run_stream_events``, ``iter`` — goes through it once):
  makes sure the run has our :class:`~._capability.OtelAgentsCapability` (one
  instance for the installation) — nothing when the run starts inside OTel's
  ``suppress_instrumentation()`` (no span of it could record). Only ``iter`` is wrapped: ``run``/``run_sync``/``run_stream*``
  infer the agent's name from their caller's frame, which a wrapper would become.

  Where it goes (:class:`AgentLevel`): the first run of an agent puts the
  agent's own capabilities, combined with our hooks on the combination
  (:class:`~._capability.ObservedCapabilities`), in their place, and later runs
  find it there. PydanticAI dispatches every hook of a run to every capability,
  each with a copy of the run context: as one more capability among the agent's,
  a do-nothing one cost 1.38M instructions a run of the benchmark's agent (issue
  40, twenty-fourth round); hooks on the combination get no copy. PydanticAI also
  composes a run's capabilities anew for every run that brings one, and collects
  what they contribute again: ~0.9M a run. An agent whose runs PydanticAI
  composes anyway (its instrumentation on at the first run, an
  ``InstrumentedModel`` as its model, event hooks, a deferred capability or
  one that can supply the model: :func:`_composed_agent`,
  :meth:`AgentLevel._combinable`) gets our capability among its own instead, as
  a leaf the composed root keeps. A run that brings capabilities of its own
  (``capabilities=``, ``spec=``), runs under an ``override()`` of the agent's
  capabilities, a run PydanticAI composes of an agent holding our hooks on its
  combination (:func:`_composed`: the combination is merged into the composed
  root, and our hooks on it with it), or an agent that cannot take it
  (:meth:`AgentLevel._accepts`) gets our capability per run instead, appended
  after the run's. ``uninstrument()`` gives each agent its own capabilities back.
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
import weakref
from typing import Any

from pydantic_ai.agent import Agent
from pydantic_ai.capabilities import CombinedCapability
from pydantic_ai.capabilities.abstract import leaf_capabilities
from pydantic_ai.models.instrumented import InstrumentedModel as _INSTRUMENTED_MODEL
from pydantic_ai.result import StreamedRunResult, StreamedRunResultSync

from ..._spans import Telemetry, guard, instrumentation_enabled, report_internal_error, wrap_stream
from ..._spans.finalisers import new_lock
from ._capability import CAPABILITY_ID, failed_attempt, ObservedCapabilities, OpensInPrepare, OtelAgentsCapability, \
    capability_type, is_rejected_output
from .. import _hf_inference
from .._patch import PatchSet
from ._runs import RunSpans, RunTracker, first_chunk_stamp

logger = logging.getLogger("otel_agents")

_SYNC_STREAM_METHODS = ("stream_output", "stream_text", "stream_response")
_OWN = "_otel_agents_own_root"  # on the combination of an agent's capabilities and ours: the agent's own
AGENT_LEVEL = callable(getattr(Agent, "_effective_root_capability", None))
"""Whether this PydanticAI release has what :class:`AgentLevel` relies on (else every run gets ours per run)."""


class Installation:
    """Our patches into pydantic-ai for one ``instrument()`` call.

    Attributes:
        tracker: the open runs (for ``open_runs`` and the stream hooks).
    """

    def __init__(self, telemetry: Telemetry):
        self.tracker = RunTracker(telemetry)
        self.capability = capability_type()(tracker=self.tracker)
        self.agents = AgentLevel(self.capability)
        self.patches = PatchSet("pydantic_ai.patch")
        self.patches.add(Agent, "iter", self._iter)
        self.patches.keep(_hf_inference.use())  # HuggingFaceModel's streams cut short (see .._hf_inference)
        self.patches.add(StreamedRunResult, "_marked_completed", self._marked_completed)
        try:  # a private class: moved, a request's failed attempts leave no event, the rest works
            from pydantic_ai._fallback import AttemptLog

            self.patches.add(AttemptLog, "record", failed_attempt)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("pydantic_ai.patch.attempts", exc)
        for name in _SYNC_STREAM_METHODS:
            self.patches.add(StreamedRunResultSync, name, self._sync_stream)

    def remove(self) -> None:
        """Take every patch off (see :class:`~._patch.Patch` for the exact semantics) and our capability out of
        the agents that hold it; runs in flight finish recording."""
        self.capability.live = False
        self.agents.detach_all()
        self.patches.remove()

    # -- wrappers ----------------------------------------------------------------
    def _iter(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        call_kwargs = kwargs
        with guard("pydantic_ai.iter"):
            if not self.agents.holds(instance, kwargs):
                call_kwargs = {**kwargs, "capabilities": [*(kwargs.get("capabilities") or ()), self.capability]}
        return wrapped(*args, **call_kwargs)

    def _marked_completed(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        return self._finish_when_completed(wrapped(*args, **kwargs), instance)

    async def _finish_when_completed(self, completing: Any, result: Any) -> Any:
        try:
            value = await completing
        except Exception as exc:
            if is_rejected_output(exc):  # the model answered in full; its output was rejected, not the request
                with guard("pydantic_ai.stream_rejected"):
                    run = self.tracker.find(result.run_id)
                    if run is not None:
                        run.close_models(result.response, first_chunk=first_chunk_stamp(result))
            raise
        with guard("pydantic_ai.stream_completed"):
            run = self.tracker.find(result.run_id)
            if run is not None:
                run.finish(output=result.result.output, response=result.response,
                           first_chunk=first_chunk_stamp(result))
        return value

    def _sync_stream(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        iterator = wrapped(*args, **kwargs)
        with guard("pydantic_ai.sync_stream"):
            run = self.tracker.find(instance.run_id)
            if run is not None:
                return wrap_stream(iterator, run.span, on_end=_StreamEnd(run, instance),
                                   on_error=lambda span, exc: run.stopped(exc))
        return iterator


class AgentLevel:
    """Our hooks on agents' own capabilities (see the module): which agents hold them, and their own back.

    Relies on two private names of ``Agent`` (``_root_capability``, the agent's capabilities as one
    ``CombinedCapability``; ``_effective_root_capability()``, the one a run uses, an ``override()``'s when one is
    in force); on a release without them every run gets the capability per run.
    """

    def __init__(self, capability: OtelAgentsCapability):
        self.capability = capability
        # (On a release without the model-call boundary our capability opens model spans in a hook the
        # combination does not forward: every run gets it per run.)
        self.enabled = AGENT_LEVEL and not isinstance(capability, OpensInPrepare)
        # id(agent) → (weak agent, weak ours-and-theirs or None: not attachable). Weak: an agent's capabilities
        # may hold the agent; the agent's own are kept on the combination we made (_OWN), which the agent holds.
        self.held: dict[int, tuple[Any, Any]] = {}
        self._sweep_at = 64  # entries of collected agents are dropped when the index reaches this size (bounded)
        self._lock = new_lock()

    def holds(self, agent: Any, kwargs: dict) -> bool:
        """Whether this run of ``agent`` has our capability among the agent's (attaching it on a first run); if
        not, the caller adds it to the run's."""
        if not self.enabled or kwargs.get("capabilities") or kwargs.get("spec") is not None:
            return False
        entry = self.held.get(id(agent))
        if entry is None or entry[0]() is not agent:
            entry = self._attach(agent)
        attached = entry[1]() if entry[1] is not None else None
        return attached is not None and agent._effective_root_capability() is attached \
            and not (isinstance(attached, ObservedCapabilities) and _composed(agent, kwargs))

    def _attach(self, agent: Any) -> tuple[Any, Any]:
        with self._lock:
            entry = self.held.get(id(agent))
            if entry is not None and entry[0]() is agent:
                return entry
            root = vars(agent).get("_root_capability")
            attached = None
            if isinstance(root, CombinedCapability) and self._accepts(root):
                if self._combinable(root) and not _composed_agent(agent):
                    attached = ObservedCapabilities([root], observer=self.capability)
                else:  # its runs are composed: ours among its capabilities, as a leaf the composed root keeps
                    attached = CombinedCapability([root, self.capability])
                setattr(attached, _OWN, root)
                agent._root_capability = attached
            if len(self.held) >= self._sweep_at:
                self.held = {key: held for key, held in self.held.items() if held[0]() is not None}
                self._sweep_at = 2 * len(self.held) + 64
            entry = (weakref.ref(agent), weakref.ref(attached) if attached is not None else None)
            self.held[id(agent)] = entry
            return entry

    @staticmethod
    def _accepts(root: Any) -> bool:
        """Not when an agent holds ours already (a copy of an instrumented agent) or a durability capability (it
        binds the agent's capabilities once, in its own ordering tier)."""
        if isinstance(root, ObservedCapabilities):
            return False
        for leaf in leaf_capabilities(root):
            ordering = leaf.get_ordering()
            if leaf.id == CAPABILITY_ID or (ordering is not None and ordering.position == "innermost"):
                return False
        return True

    @staticmethod
    def _combinable(root: Any) -> bool:
        """Whether our hooks can go on the combination of the agent's capabilities: not with a deferred capability
        (PydanticAI composes its loader in) or one that can supply the model (it may supply an
        ``InstrumentedModel``, which PydanticAI composes its ``Instrumentation`` in for)."""
        return not any(leaf.defer_loading is True or getattr(leaf, "_can_supply_model", True)
                       for leaf in leaf_capabilities(root))

    def detach_all(self) -> None:
        """Give each agent that holds our capability its own capabilities back (unless they changed since)."""
        with self._lock:
            entries, self.held = list(self.held.values()), {}
        for agent_ref, attached_ref in entries:
            agent, attached = agent_ref(), attached_ref() if attached_ref is not None else None
            if agent is not None and attached is not None and vars(agent).get("_root_capability") is attached:
                with guard("pydantic_ai.detach"):
                    agent._root_capability = getattr(attached, _OWN)


def _composed(agent: Any, kwargs: dict) -> bool:
    """Whether PydanticAI composes this run's root capability from the agent's and another, as it does for the
    run's own capabilities (checked by the caller) and, here, for its ``Instrumentation`` (an ``InstrumentedModel``
    — an ``override()``'s, the run's or the agent's — ``agent.instrument`` or ``Agent.instrument_all``) and the
    agent's event hooks (``Agent.on_event``); ``True`` when it cannot tell. A composed root merges in the agent's
    combination, and with it our hooks on it, so such a run of an agent holding our hooks on its combination gets
    ours per run. (A deferred capability among the agent's, for which PydanticAI adds its loader, or one that
    supplies the model: see :meth:`AgentLevel._combinable`.)"""
    if _composed_agent(agent):
        return True
    try:
        override = agent._override_model.get()
        model = override.value if override is not None else kwargs.get("model")
    except Exception:  # noqa: BLE001 - a release without these: the run gets ours per run, as before
        return True
    return isinstance(model, _INSTRUMENTED_MODEL)


def _composed_agent(agent: Any) -> bool:
    """The part of :func:`_composed` that is the agent's own, not one run's: PydanticAI's instrumentation on (the
    agent's ``instrument``, or ``Agent.instrument_all``'s default), an ``InstrumentedModel`` as the agent's model,
    or event hooks; ``True`` when it cannot tell. An agent whose first run is composed gets ours among its
    capabilities (:meth:`AgentLevel._attach`): a composed root keeps it as a leaf, so its runs are not composed
    once more for ours (+0.71M instructions a run of the benchmark's agent, issue 40, twenty-sixth round)."""
    try:
        instrument = agent.instrument
        if instrument is None:
            instrument = type(agent)._instrument_default
        return bool(instrument) or agent._event_hooks.has_on_event or isinstance(agent.model, _INSTRUMENTED_MODEL)
    except Exception:  # noqa: BLE001 - a release without these: as composed
        return True


class _StreamEnd:
    """``on_end`` of a sync result's iterator: close the run's open model spans before the wrapper ends its agent span."""

    def __init__(self, run: RunSpans, result: Any):
        self.run = run
        self.result = result

    def __call__(self, span: Any, abandoned: bool) -> None:
        response = first = None
        with guard("pydantic_ai.stream_response"):
            response = self.result.response
            first = first_chunk_stamp(self.result)
        self.run.hand_over(response, abandoned=abandoned, first_chunk=first)
