"""``OtelAgentsPlugin``: the ``google.adk.plugins.BasePlugin`` our instrumentor adds to every ``Runner``.

Each callback hands over to :class:`~._hooks.Hooks` and returns ``None``; our failures are caught and
reported (``try``/``except`` as :func:`~otel_agents._spans.guard` does, cheaper: ADK awaits every callback
of every plugin at each step), so ADK always proceeds as if the plugin were not there (a plugin that
returns a value would short-circuit the step). Once uninstrumented it does nothing.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from google.adk.plugins.base_plugin import BasePlugin

from ..._spans import report_internal_error
from ._runs import SYNC_CALLER

PLUGIN_NAME = "otel_agents"

try:  # the message of the cancellation ``Runner`` makes when the caller of its event stream left early
    from google.adk.runners import _CALLER_CLOSED_EARLY_MSG as _CALLER_CLOSED_EARLY
except ImportError:  # an ADK without it: ``SYNC_CALLER`` alone says the caller left
    _CALLER_CLOSED_EARLY = object()


class OtelAgentsPlugin(BasePlugin):
    """Opens and ends our spans from ADK's run, agent, model and tool callbacks."""

    def __init__(self, hooks: Any):
        super().__init__(name=PLUGIN_NAME)
        self.hooks = hooks  # None once uninstrumented

    async def before_run_callback(self, *, invocation_context: Any) -> None:
        if self.hooks is not None:
            try:
                self.hooks.before_run(invocation_context)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.before_run", exc)
        return None

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        if self.hooks is not None:
            try:
                # ADK also runs after_run callbacks when the run did not finish: from the ``finally`` of
                # ``run_async`` with the generator's GeneratorExit (``aclose``: the caller left, abandoned) or a
                # cancellation in flight: ``Runner.run``'s own when its caller left (abandoned; it may have been
                # absorbed inside the run), else the task running the run was cancelled (control flow: the run
                # was stopped, stop reason ``cancelled``, as in every framework).
                caller = SYNC_CALLER.get()
                in_flight = sys.exc_info()[1]
                left = caller is not None and caller.left or isinstance(in_flight, GeneratorExit) or \
                    isinstance(in_flight, asyncio.CancelledError) and in_flight.args[:1] == (_CALLER_CLOSED_EARLY,)
                if isinstance(in_flight, asyncio.CancelledError) and not left:
                    self.hooks.after_run(invocation_context, in_flight)
                else:
                    self.hooks.after_run(invocation_context, abandoned=left)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.after_run", exc)
        return None

    async def on_run_error_callback(self, *, invocation_context: Any, error: Exception) -> None:
        if self.hooks is not None:
            try:
                self.hooks.run_error(invocation_context, error)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.run_error", exc)
        return None

    async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
        if self.hooks is not None:
            try:
                self.hooks.before_agent(agent, callback_context)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.before_agent", exc)
        return None

    async def after_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
        if self.hooks is not None:
            try:
                # ADK also calls it from its ``except asyncio.CancelledError`` (the task running the agent was
                # cancelled): the agent did not finish, it was cancelled (its stop reason).
                in_flight = sys.exc_info()[1]
                self.hooks.after_agent(agent, callback_context,
                                       in_flight if isinstance(in_flight, asyncio.CancelledError) else None)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.after_agent", exc)
        return None

    async def on_agent_error_callback(self, *, agent: Any, callback_context: Any, error: Exception) -> None:
        if self.hooks is not None:
            try:
                self.hooks.after_agent(agent, callback_context, error=error)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.agent_error", exc)
        return None

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
        if self.hooks is not None:
            try:
                self.hooks.before_model(callback_context, llm_request)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.before_model", exc)
        return None

    async def after_model_callback(self, *, callback_context: Any, llm_response: Any) -> None:
        if self.hooks is not None:
            try:
                self.hooks.after_model(callback_context, llm_response)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.after_model", exc)
        return None

    async def on_model_error_callback(self, *, callback_context: Any, llm_request: Any, error: Exception) -> None:
        if self.hooks is not None:
            try:
                self.hooks.model_error(callback_context, error)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.model_error", exc)
        return None

    async def on_event_callback(self, *, invocation_context: Any, event: Any) -> None:
        if self.hooks is not None:
            try:
                self.hooks.on_event(invocation_context, event)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.event", exc)
        return None

    async def before_tool_callback(self, *, tool: Any, tool_args: dict, tool_context: Any) -> None:
        if self.hooks is not None:
            try:
                self.hooks.before_tool(tool, tool_args, tool_context)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.before_tool", exc)
        return None

    async def after_tool_callback(self, *, tool: Any, tool_args: dict, tool_context: Any, result: Any) -> None:
        if self.hooks is not None:
            try:
                self.hooks.after_tool(tool, tool_context, result=result)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.after_tool", exc)
        return None

    async def on_tool_error_callback(self, *, tool: Any, tool_args: dict, tool_context: Any, error: Exception) -> None:
        if self.hooks is not None:
            try:
                self.hooks.after_tool(tool, tool_context, error=error)
            except Exception as exc:  # noqa: BLE001 - as guard() does
                report_internal_error("google_adk.tool_error", exc)
        return None
