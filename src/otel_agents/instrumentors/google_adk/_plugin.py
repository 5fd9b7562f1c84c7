"""``OtelAgentsPlugin``: the ``google.adk.plugins.BasePlugin`` our instrumentor adds to every ``Runner``.

Each callback hands over to :class:`~._hooks.Hooks` inside a guard and returns
``None``, so ADK always proceeds as if the plugin were not there (a plugin that
returns a value would short-circuit the step). Once uninstrumented it does nothing.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from google.adk.plugins.base_plugin import BasePlugin

from ..._spans import guard
from ._runs import SYNC_CALLER

PLUGIN_NAME = "otel_agents"


class OtelAgentsPlugin(BasePlugin):
    """Opens and ends our spans from ADK's run, agent, model and tool callbacks."""

    def __init__(self, hooks: Any):
        super().__init__(name=PLUGIN_NAME)
        self.hooks = hooks  # None once uninstrumented

    async def before_run_callback(self, *, invocation_context: Any) -> None:
        if self.hooks is not None:
            with guard("google_adk.before_run"):
                self.hooks.before_run(invocation_context)
        return None

    async def after_run_callback(self, *, invocation_context: Any) -> None:
        if self.hooks is not None:
            with guard("google_adk.after_run"):
                # ADK also runs after_run callbacks when the caller left the event stream early: from the
                # ``finally`` of ``run_async`` with the generator's GeneratorExit (``aclose``) or the task's
                # cancellation by ``Runner.run`` (closed early) in flight. The run did not finish then.
                # ``Runner.run``'s caller left (the cancellation may have been absorbed inside the run).
                caller = SYNC_CALLER.get()
                early = isinstance(sys.exc_info()[1], (GeneratorExit, asyncio.CancelledError)) or \
                    (caller is not None and caller.left)
                self.hooks.after_run(invocation_context, abandoned=early)
        return None

    async def on_run_error_callback(self, *, invocation_context: Any, error: Exception) -> None:
        if self.hooks is not None:
            with guard("google_adk.run_error"):
                self.hooks.run_error(invocation_context, error)
        return None

    async def before_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
        if self.hooks is not None:
            with guard("google_adk.before_agent"):
                self.hooks.before_agent(agent, callback_context)
        return None

    async def after_agent_callback(self, *, agent: Any, callback_context: Any) -> None:
        if self.hooks is not None:
            with guard("google_adk.after_agent"):
                # ADK also calls it from its ``except asyncio.CancelledError`` (the task running the agent was
                # cancelled): the agent did not finish, it was cancelled (its stop reason).
                in_flight = sys.exc_info()[1]
                self.hooks.after_agent(agent, callback_context,
                                       in_flight if isinstance(in_flight, asyncio.CancelledError) else None)
        return None

    async def on_agent_error_callback(self, *, agent: Any, callback_context: Any, error: Exception) -> None:
        if self.hooks is not None:
            with guard("google_adk.agent_error"):
                self.hooks.after_agent(agent, callback_context, error=error)
        return None

    async def before_model_callback(self, *, callback_context: Any, llm_request: Any) -> None:
        if self.hooks is not None:
            with guard("google_adk.before_model"):
                self.hooks.before_model(callback_context, llm_request)
        return None

    async def after_model_callback(self, *, callback_context: Any, llm_response: Any) -> None:
        if self.hooks is not None:
            with guard("google_adk.after_model"):
                self.hooks.after_model(callback_context, llm_response)
        return None

    async def on_model_error_callback(self, *, callback_context: Any, llm_request: Any, error: Exception) -> None:
        if self.hooks is not None:
            with guard("google_adk.model_error"):
                self.hooks.model_error(callback_context, error)
        return None

    async def before_tool_callback(self, *, tool: Any, tool_args: dict, tool_context: Any) -> None:
        if self.hooks is not None:
            with guard("google_adk.before_tool"):
                self.hooks.before_tool(tool, tool_args, tool_context)
        return None

    async def after_tool_callback(self, *, tool: Any, tool_args: dict, tool_context: Any, result: Any) -> None:
        if self.hooks is not None:
            with guard("google_adk.after_tool"):
                self.hooks.after_tool(tool, tool_context, result=result)
        return None

    async def on_tool_error_callback(self, *, tool: Any, tool_args: dict, tool_context: Any, error: Exception) -> None:
        if self.hooks is not None:
            with guard("google_adk.tool_error"):
                self.hooks.after_tool(tool, tool_context, error=error)
        return None
