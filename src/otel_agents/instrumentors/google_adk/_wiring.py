"""What ``instrument()`` installs into ADK: our plugin, first in every ``Runner``'s plugin manager.

ADK's ``Runner`` takes plugins from its ``App`` (or the deprecated ``plugins=``);
there is no global plugin registry, so we wrap ``Runner.__init__`` (``wrapt``) to
put one :class:`~._plugin.OtelAgentsPlugin` at the front of each new runner's
plugin list — first, so it sees every step before another plugin can
short-circuit it. A runner that already has ours (an ``AgentTool`` passes its
parent's plugins to the runner it makes) gets no second one. A runner made before
``instrument()`` gets it when it starts a run (``run_async``/``run_live`` are wrapped too).
``run_async``'s events pass through a :class:`~._runs.CancellableRun`: ADK calls no
plugin callback for a run whose task was cancelled, so that ends the run's spans as cancelled; it also tells
the hooks when the caller leaves the events early (what ADK's cancellation then ends was abandoned).
``uninstrument()`` takes the wrapper off and switches the plugin off in the
runners it was added to. ``Runner.run`` (the sync entry) is wrapped too, to step its
events in a context that tells the plugin when the caller left before the end
(:func:`~._runs.watched_run`). ADK's own spans are stood down while we are
instrumented (:mod:`._native`) and restored by ``uninstrument()``.

A tool raising ``KeyboardInterrupt``/``SystemExit`` reaches no plugin callback, and asyncio
re-raises it out of the event loop at once, leaving the run suspended: every tool class's
``run_async`` (:class:`~.._hierarchy.HierarchyPatch`) ends the invocation's spans with it first.
"""

from __future__ import annotations

from typing import Any

import asyncio

from ..._spans import Telemetry, guard
from .._hierarchy import HierarchyPatch
from .._patch import Patch
from ._hooks import Hooks
from ._live import LiveConnect
from ._native import NativeSpans
from ._plugin import OtelAgentsPlugin
from ._runs import CancellableRun, watched_run


class Installation:
    """Our patch into ADK for one ``instrument()`` call."""

    def __init__(self, telemetry: Telemetry):
        from google.adk.runners import Runner

        self.hooks = Hooks(telemetry)
        self.plugin = OtelAgentsPlugin(self.hooks)
        self.patch = Patch(Runner, "__init__", self._init)
        self.run_patch = Patch(Runner, "run", self._run)
        # a runner made before instrument() (or under an earlier one) gets our plugin when it starts a run
        self.entry_patches = [Patch(Runner, "run_async", self._enter_async), Patch(Runner, "run_live", self._enter)]
        self.native = None
        with guard("google_adk.stand_down"):
            self.native = NativeSpans()
        self.live_patch = None
        with guard("google_adk.patch_live"):
            from google.adk.models.base_llm import BaseLlm

            self.live_patch = HierarchyPatch(BaseLlm, {"connect": self._connect}, site="google_adk.patch")
        self.tool_patch = None
        with guard("google_adk.patch_tools"):
            from google.adk.tools.base_tool import BaseTool

            self.tool_patch = HierarchyPatch(BaseTool, {"run_async": self._run_tool}, site="google_adk.patch")

    def _run_tool(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        async def run() -> Any:
            try:
                return await wrapped(*args, **kwargs)
            except BaseException as exc:
                if not isinstance(exc, (Exception, asyncio.CancelledError, GeneratorExit)):
                    with guard("google_adk.tool_interrupted"):
                        context = getattr(kwargs.get("tool_context"), "_invocation_context", None)
                        if context is not None:
                            self.hooks.run_error(context, exc)
                raise
        return run()

    @staticmethod
    def _connect(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        manager = wrapped(*args, **kwargs)
        with guard("google_adk.live.wrap"):
            return LiveConnect(manager, args[0] if args else kwargs.get("llm_request"))
        return manager

    def _init(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        result = wrapped(*args, **kwargs)
        self._add_plugin(instance)
        return result

    def _enter(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        self._add_plugin(instance)
        return wrapped(*args, **kwargs)

    def _enter_async(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        """``run_async``: as :meth:`_enter`, its events passed through a :class:`~._runs.CancellableRun` (a
        cancelled run gets no plugin callback)."""
        self._add_plugin(instance)
        events = wrapped(*args, **kwargs)
        with guard("google_adk.wrap_run"):
            return CancellableRun(events, self.hooks.run_cancelled, self.hooks.run_left)
        return events

    def _add_plugin(self, runner: Any) -> None:
        with guard("google_adk.add_plugin"):
            plugins = runner.plugin_manager.plugins
            # an inert plugin of an earlier instrument() (copied from a parent runner) makes way for ours
            plugins[:] = [p for p in plugins if not isinstance(p, OtelAgentsPlugin) or p.hooks is not None]
            if not any(isinstance(p, OtelAgentsPlugin) for p in plugins):
                plugins.insert(0, self.plugin)

    @staticmethod
    def _run(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        return watched_run(wrapped(*args, **kwargs))  # a generator: nothing runs until the caller iterates

    def remove(self) -> None:
        """Take the wrappers off; the plugin in existing runners becomes inert, open spans end."""
        self.patch.remove()
        self.run_patch.remove()
        for patch in self.entry_patches:
            patch.remove()
        if self.native is not None:
            with guard("google_adk.restore_native"):
                self.native.restore()
        if self.tool_patch is not None:
            self.tool_patch.remove()
        if self.live_patch is not None:
            self.live_patch.remove()
        self.plugin.hooks = None
        from ._runs import end_all

        for inv in self.hooks.invocations.drain():
            end_all(inv, abandoned=True)
