"""What ``instrument()`` installs into Agno, and takes out again (every patch is a :class:`~.._patch.Patch`:
removed exactly, or left inert inside another instrumentation's wrapper)."""

from __future__ import annotations

from ..._spans import Telemetry, report_internal_error
from .. import _hf_inference, _litellm
from .._patch import PatchSet
from ._knowledge import KnowledgeHooks
from ._models import ModelHooks
from ._reasoning import reason_wrapper
from ._runs import RunHooks, apost_hooks, post_hooks
from ._tools import ToolHooks

_STEP_METHODS = ("execute", "execute_stream", "aexecute", "aexecute_stream")


def _workflow_step_classes() -> list[type]:
    from agno.workflow.condition import Condition
    from agno.workflow.loop import Loop
    from agno.workflow.parallel import Parallel
    from agno.workflow.router import Router
    from agno.workflow.step import Step
    from agno.workflow.steps import Steps

    return [Step, Steps, Loop, Condition, Parallel, Router]


class Installation:
    """Our patches into Agno for one ``instrument()`` call."""

    def __init__(self, telemetry: Telemetry):
        from agno.agent import Agent
        from agno.models.base import Model
        from agno.team import Team
        from agno.tools.function import FunctionCall
        from agno.workflow import Workflow

        self.runs = RunHooks(telemetry)
        self.models = ModelHooks(telemetry)
        self.tools = ToolHooks(telemetry)
        self.knowledge = KnowledgeHooks(telemetry)
        self.patches = PatchSet("agno.patch")
        self.patches.keep(_hf_inference.use())  # the HuggingFace model's streams cut short (see .._hf_inference)
        self.patches.keep(_litellm.use())  # the LiteLLM model's streams: what LiteLLM makes up at their end
        for name in ("run", "arun"):
            self.patches.add(Agent, name, self.runs.wrap("agent"))
            self.patches.add(Team, name, self.runs.wrap("team"))
            self.patches.add(Workflow, name, self.runs.wrap("workflow"))
        for name in ("continue_run", "acontinue_run"):  # a paused run resumed: the rest of it is a run too
            self.patches.add(Agent, name, self.runs.wrap("agent", resumed=True))
            self.patches.add(Team, name, self.runs.wrap("team", resumed=True))
            self.patches.add(Workflow, name, self.runs.wrap("workflow", resumed=True))
        try:  # arun(background=True): the run goes on after the call returns it pending
            from agno.run import background

            self.patches.add(background, "_spawn_background", self.runs.background)
        except Exception as exc:  # noqa: BLE001 - moved: a background run's span ends when the call returns
            report_internal_error("agno.patch.background", exc)
        self.patches.add(Model, "_process_model_response", self.models.request_sync)
        self.patches.add(Model, "_aprocess_model_response", self.models.request_async)
        for name in ("process_response_stream", "aprocess_response_stream"):
            self.patches.add(Model, name, self.models.stream)
        self.patches.add(FunctionCall, "execute", self.tools.execute_sync)
        self.patches.add(FunctionCall, "aexecute", self.tools.execute_async)
        self.patches.add(Model, "get_function_calls_to_run", self.tools.calls_to_run)
        try:
            from agno.reasoning.manager import ReasoningManager

            for name in ("reason", "areason"):
                self.patches.add(ReasoningManager, name, reason_wrapper)
        except Exception as exc:  # noqa: BLE001 - reasoning moved: its spans are ordinary agent and model spans
            report_internal_error("agno.patch.reasoning", exc)
        try:
            from agno.knowledge.knowledge import Knowledge

            for name in ("search", "asearch"):
                self.patches.add(Knowledge, name, self.knowledge.search)
        except Exception as exc:  # noqa: BLE001 - knowledge moved: no retriever spans, the rest works
            report_internal_error("agno.patch.knowledge", exc)
        try:  # output guardrails (post-hooks raising OutputCheckError): the run's stop reason
            from agno.agent import _hooks as agent_hooks

            self.patches.add(agent_hooks, "execute_post_hooks", post_hooks)
            self.patches.add(agent_hooks, "aexecute_post_hooks", apost_hooks)
        except Exception as exc:  # noqa: BLE001 - moved: a rejected answer looks like the run's output
            report_internal_error("agno.patch.post_hooks", exc)
        try:  # a team's post-hooks (its run imports them from the module at each call)
            from agno.team import _hooks as team_hooks

            self.patches.add(team_hooks, "_execute_post_hooks", post_hooks)
            self.patches.add(team_hooks, "_aexecute_post_hooks", apost_hooks)
        except Exception as exc:  # noqa: BLE001 - moved: a team's rejected answer looks like its output
            report_internal_error("agno.patch.team_post_hooks", exc)
        try:
            step_classes = _workflow_step_classes()
        except Exception as exc:  # noqa: BLE001 - workflow steps moved: runs, models and tools still work
            report_internal_error("agno.patch.workflow_steps", exc)
            step_classes = []
        for cls in step_classes:
            for name in _STEP_METHODS:
                if name in cls.__dict__:
                    self.patches.add(cls, name, self.runs.wrap("step"))

    def remove(self) -> None:
        """Take every patch off."""
        self.patches.remove()
