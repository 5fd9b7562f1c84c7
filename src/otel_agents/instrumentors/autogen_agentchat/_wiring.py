"""What ``instrument()`` installs into AutoGen, and takes out again (every patch is a
:class:`~.._patch.Patch`: removed exactly, or left inert inside another instrumentation's wrapper).

Model clients and agents are user-extensible classes, so their methods are patched on
every class that defines them, now and later (:class:`~.._hierarchy.HierarchyPatch` on
``ChatCompletionClient`` and ``BaseChatAgent``).
"""

from __future__ import annotations

from typing import Callable

from ..._spans import Telemetry, report_internal_error
from .._hierarchy import HierarchyPatch
from .._patch import PatchSet
from . import _native
from ._models import ModelHooks
from ._runs import RunHooks, StopHooks
from ._tools import ToolHooks, carry_context_into_tool_threads

_AGENT_METHODS = {"on_messages": "coroutine", "on_messages_stream": "stream"}
_TEAM_METHODS = {"run": "coroutine", "run_stream": "stream"}


class Installation:
    """Our patches into AutoGen for one ``instrument()`` call."""

    def __init__(self, telemetry: Telemetry):
        from autogen_agentchat.agents import BaseChatAgent
        from autogen_agentchat.teams import BaseGroupChat
        from autogen_core._telemetry._tracing import TraceHelper
        from autogen_core.models import ChatCompletionClient
        from autogen_core.tools import BaseStreamTool, BaseTool

        self.runs = RunHooks(telemetry)
        self.models = ModelHooks(telemetry)
        self.tools = ToolHooks(telemetry)
        self.patches = PatchSet("autogen.patch")

        self.patches.add(BaseChatAgent, "run", self.runs.coroutine("agent", "run"))
        self.patches.add(BaseChatAgent, "run_stream", self.runs.stream("agent", "run_stream"))
        for name, shape in _TEAM_METHODS.items():
            self.patches.add(BaseGroupChat, name, getattr(self.runs, shape)("team", name))
        try:  # a private module and methods: moved, team runs have no stop reason, the rest works
            from autogen_agentchat.teams._group_chat._base_group_chat_manager import BaseGroupChatManager

            stops = StopHooks(self.runs.teams)
            self.patches.add(BaseGroupChatManager, "_apply_termination_condition", stops.apply_termination)
            self.patches.add(BaseGroupChatManager, "_signal_termination", stops.signal_termination)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("autogen.stop_reason", exc)
        self.patches.add(BaseTool, "run_json", self.tools.run_json)
        self.patches.add(BaseStreamTool, "run_json_stream", self.tools.run_json_stream)
        try:  # a private method: moved, a call AutoGen refuses has no tool span, the rest works
            from autogen_agentchat.agents import AssistantAgent

            self.patches.add(AssistantAgent, "_execute_tool_call", self.tools.execute_tool_call)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("autogen.refused_calls", exc)
        self._uncarry: Callable[[], None] = lambda: None
        try:
            self._uncarry = carry_context_into_tool_threads()
        except Exception as exc:  # noqa: BLE001 - FunctionTool moved: sync tools' own spans start new traces
            report_internal_error("autogen.tool_threads", exc)

        self.patches.keep(HierarchyPatch(BaseChatAgent, {name: getattr(self.runs, shape)("agent", name)
                                                         for name, shape in _AGENT_METHODS.items()},
                                         site="autogen.patch"))
        self.patches.keep(HierarchyPatch(ChatCompletionClient, {"create": self.models.create,
                                                                "create_stream": self.models.create_stream},
                                         site="autogen.patch"))

        # autogen-core's own spans: see _native.
        self.patches.add(TraceHelper, "trace_block", lambda wrapped, instance, args, kwargs: _native.non_recording())
        try:
            for module, name in _native.span_helper_sites():
                self.patches.add(module, name, lambda wrapped, instance, args, kwargs: _native.non_recording_helper())
        except Exception as exc:  # noqa: BLE001 - autogen-core moved its helpers: its spans stay, ours work
            report_internal_error("autogen.native_spans", exc)

    def remove(self) -> None:
        """Take every patch and subclass hook off."""
        self._uncarry()
        self.patches.remove()
