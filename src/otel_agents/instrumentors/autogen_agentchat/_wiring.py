"""What ``instrument()`` installs into AutoGen, and takes out again (every patch is a
:class:`~.._patch.Patch`: removed exactly, or left inert inside another instrumentation's wrapper).

Model clients and agents are user-extensible classes, so their methods are patched on
every class that defines them: the subclasses that exist at ``instrument()`` and, through
an ``__init_subclass__`` we add to ``ChatCompletionClient`` and ``BaseChatAgent``, the
ones defined afterwards.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

from ..._spans import Telemetry, report_internal_error
from .._patch import Patch
from . import _native
from ._models import ModelHooks
from ._runs import RunHooks, StopHooks
from ._tools import ToolHooks, carry_context_into_tool_threads

_AGENT_METHODS = {"on_messages": "coroutine", "on_messages_stream": "stream"}
_TEAM_METHODS = {"run": "coroutine", "run_stream": "stream"}


def _subclasses(cls: type) -> list[type]:
    seen, todo = [cls], [cls]
    while todo:
        for sub in todo.pop().__subclasses__():
            if sub not in seen:
                seen.append(sub)
                todo.append(sub)
    return seen


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
        self.patches: list[Patch] = []
        self.hooked: list[type] = []
        self._lock = threading.Lock()

        self._patch(BaseChatAgent, "run", self.runs.coroutine("agent", "run"))
        self._patch(BaseChatAgent, "run_stream", self.runs.stream("agent", "run_stream"))
        for name, shape in _TEAM_METHODS.items():
            self._patch(BaseGroupChat, name, getattr(self.runs, shape)("team", name))
        try:  # a private module and methods: moved, team runs have no stop reason, the rest works
            from autogen_agentchat.teams._group_chat._base_group_chat_manager import BaseGroupChatManager

            stops = StopHooks(self.runs.teams)
            self._patch(BaseGroupChatManager, "_apply_termination_condition", stops.apply_termination)
            self._patch(BaseGroupChatManager, "_signal_termination", stops.signal_termination)
        except Exception as exc:  # noqa: BLE001
            report_internal_error("autogen.stop_reason", exc)
        self._patch(BaseTool, "run_json", self.tools.run_json)
        self._patch(BaseStreamTool, "run_json_stream", self.tools.run_json_stream)
        self._uncarry: Callable[[], None] = lambda: None
        try:
            self._uncarry = carry_context_into_tool_threads()
        except Exception as exc:  # noqa: BLE001 - FunctionTool moved: sync tools' own spans start new traces
            report_internal_error("autogen.tool_threads", exc)

        self._agent_patcher = self._class_patcher({name: getattr(self.runs, shape)("agent", name)
                                                   for name, shape in _AGENT_METHODS.items()})
        self._model_patcher = self._class_patcher({"create": self.models.create,
                                                   "create_stream": self.models.create_stream})
        for base, patcher in ((BaseChatAgent, self._agent_patcher), (ChatCompletionClient, self._model_patcher)):
            for cls in _subclasses(base):
                patcher(cls)
            self._hook_subclasses(base, patcher)

        # autogen-core's own spans: see _native.
        self._patch(TraceHelper, "trace_block", lambda wrapped, instance, args, kwargs: _native.non_recording())
        try:
            for module, name in _native.span_helper_sites():
                self._patch(module, name, lambda wrapped, instance, args, kwargs: _native.non_recording_helper())
        except Exception as exc:  # noqa: BLE001 - autogen-core moved its helpers: its spans stay, ours work
            report_internal_error("autogen.native_spans", exc)

    def _class_patcher(self, wrappers: dict[str, Any]) -> Callable[[type], None]:
        def patch_class(cls: type) -> None:
            for name, wrapper in wrappers.items():
                original = cls.__dict__.get(name)
                if original is None or getattr(original, "__isabstractmethod__", False):
                    continue
                self._patch(cls, name, wrapper)

        return patch_class

    def _hook_subclasses(self, base: type, patcher: Callable[[type], None]) -> None:
        """Patch the classes defined after ``instrument()`` too (an ``__init_subclass__`` on ``base``)."""
        if "__init_subclass__" in base.__dict__:
            report_internal_error(f"autogen.hook.{base.__name__}", RuntimeError("__init_subclass__ already defined"))
            return
        installation = self

        def __init_subclass__(cls: type, **kwargs: Any) -> None:
            super(base, cls).__init_subclass__(**kwargs)
            if installation.patches is not None:
                try:
                    patcher(cls)
                except Exception as exc:  # noqa: BLE001 - the class works, without our spans
                    report_internal_error("autogen.subclass", exc)

        base.__init_subclass__ = classmethod(__init_subclass__)  # type: ignore[assignment]
        self.hooked.append(base)

    def _patch(self, owner: Any, name: str, wrapper: Any) -> None:
        try:
            with self._lock:
                self.patches.append(Patch(owner, name, wrapper))
        except Exception as exc:  # noqa: BLE001 - a renamed method only loses that span
            report_internal_error(f"autogen.patch.{getattr(owner, '__name__', owner)}.{name}", exc)

    def remove(self) -> None:
        """Take every patch and subclass hook off."""
        for base in self.hooked:
            if "__init_subclass__" in base.__dict__:
                delattr(base, "__init_subclass__")
        self.hooked.clear()
        self._uncarry()
        with self._lock:
            for patch in reversed(self.patches):
                patch.remove()
            self.patches.clear()
