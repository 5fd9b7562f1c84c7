"""``tool`` and ``skill`` spans: exactly one per tool call, on each of CrewAI's execution paths.

* ReAct text path: ``ToolUsage._use`` / ``_ause`` — the model wrote
  ``Action:``/``Action Input:``; this covers cache hits (no execution, marked
  ``otel_agents.tool.cached``), usage limits and delegation. The tool body runs
  through ``CrewStructuredTool.invoke``, never ``BaseTool.run``, so wrapping
  tools themselves would miss it. CrewAI retries a failed call by calling
  ``use`` again on the same ``ToolUsage``: that retry stays inside the one span.
* Native function calling: ``AgentExecutor._execute_single_native_tool_call``
  (parallel calls run it on pool threads with the context copied), and the
  planning step executor's ``execute_single_native_tool_call``.
* Provider-executed tools: ``BaseLLM._handle_tool_execution``, used when a
  provider class runs ``available_functions`` itself (a child of its model span).

A tool call CrewAI catches and feeds back to the model as failed (an
exception, a ``ToolFailure``) ends its span with status ERROR and
``error.type`` = the exception's class name or the failure's code or reason.

A call CrewAI refuses without running the tool is not an ok call whose result
is CrewAI's refusal text: its span is ERROR with ``otel_agents.tool.denied``
(as a denied call elsewhere) and ``error.type`` = CrewAI's own
``ToolFailureReason`` value, the text CrewAI tells the model as the result
and, with content on, the status description:

* ``repeated_call`` — ReAct: the same tool with the same input as the call
  just before (``ToolUsage._check_tool_repeated_usage``, read before
  ``_use`` runs: "I tried reusing the same input...");
* ``usage_limit`` — the tool's ``max_usage_count`` is spent (both paths);
* ``unknown_tool`` — native: a tool the agent does not have;
* ``invalid_input`` — ReAct: an ``Action``/``Action Input`` that does not
  parse into a call of one of the agent's tools (an unknown name too: CrewAI
  reports both so). It never reaches ``_use``, so its span is opened when
  ``ToolUsage.parse_tool_calling`` returns the error: zero length, named as
  the model wrote the action;
* ``permission_denied`` — a ``before_tool_call`` hook blocked the call
  (``run_before_tool_call_hooks`` returned true; CrewAI has no reason for it,
  so the project's denial type); on the ReAct path a zero-length span, as above.

Skills (``crewai.skills``): a call of the skill loader tool (``load_skill``)
is a ``skill`` span (``execute_tool load_skill``, ``otel_agents.skill.name``)
instead of a tool span. Skills whose instructions CrewAI injects into the task
prompt (disclosure level INSTRUCTIONS or above) involve no call; each use is
recorded as a zero-length ``skill {name}`` span under the agent's span.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Any


from ..._spans import SemanticSpan, instrumentation_enabled, probes, report_internal_error
from ..._spans.messages import json_arguments
from ...semconv import Kind, attributes as A
from . import _scope
from ._scope import arg
from ._steps import Hooks, Step


class _ToolCall:
    """The tool span open for one call, and who opened it (to keep CrewAI's retries inside it)."""

    __slots__ = ("owner", "span")

    def __init__(self, owner: Any):
        self.owner = owner
        self.span: SemanticSpan | None = None


_TOOL_CALL: ContextVar[_ToolCall | None] = ContextVar("otel_agents_crewai_tool_call", default=None)


def install(hooks: Hooks) -> None:
    """Wrap the three tool paths, the cache-hit report and skill injection."""
    from crewai.agent.core import Agent
    from crewai.agents import agent_executor, step_executor
    from crewai.agents.agent_executor import AgentExecutor
    from crewai.llms.base_llm import BaseLLM
    from crewai.tools.tool_usage import ToolUsage, ToolUsageError
    from crewai.utilities import agent_utils, tool_utils
    from crewai.utilities.agent_utils import extract_tool_call_info

    def react_call(usage: Any, args: tuple, kwargs: dict) -> Step | None:
        current = _TOOL_CALL.get()
        if current is not None and current.owner is usage:
            return None  # CrewAI retrying the same call
        tool = arg(args, kwargs, 1, "tool")
        calling = arg(args, kwargs, 2, "calling")
        failure_before = getattr(usage, "last_failure", None)
        repeated = _repeats_last_call(usage, calling)  # read before the call: the tool's run would update it

        def finish(span: SemanticSpan, result: Any) -> None:
            span.set_tool_result(result)
            if repeated:
                _refuse(span, REPEATED_CALL, result)
                return
            failure = getattr(usage, "last_failure", None)
            if failure is not None and failure is not failure_before:
                _record_failure(span, failure)

        return _tool_step(usage, getattr(tool, "name", None), getattr(tool, "description", None),
                          getattr(calling, "arguments", None), None,
                          getattr(tool, "_original_tool", None), finish)

    def cache_report(usage: Any, args: tuple, kwargs: dict, _result: Any) -> None:
        current = _TOOL_CALL.get()
        if current is not None and current.owner is usage and current.span is not None \
                and arg(args, kwargs, 2, "from_cache"):
            current.span.set_attribute(A.OTEL_AGENTS_TOOL_CACHED, True)

    def unparsed_call(usage: Any, _args: tuple, _kwargs: dict, result: Any) -> None:
        if isinstance(result, ToolUsageError) and instrumentation_enabled():
            action = getattr(usage, "action", None)
            _refused_call(hooks, getattr(action, "tool", None), getattr(action, "tool_input", None),
                          INVALID_INPUT, getattr(result, "message", None))

    def react_blocked(_module: Any, args: tuple, kwargs: dict, blocked: Any) -> None:
        if blocked is True and instrumentation_enabled():  # a before_tool_call hook blocked the call
            context = arg(args, kwargs, 0, "context")
            _refused_call(hooks, getattr(context, "tool_name", None), getattr(context, "tool_input", None),
                          PERMISSION_DENIED, None)

    def native_blocked(_module: Any, _args: tuple, _kwargs: dict, blocked: Any) -> None:
        current = _TOOL_CALL.get()
        if blocked is True and current is not None and current.span is not None \
                and current.span is _scope.SPAN.get():  # asked inside the native call's own span
            _refuse(current.span, PERMISSION_DENIED, None)

    def native_call(executor: Any, args: tuple, kwargs: dict) -> Step | None:
        tool_call = arg(args, kwargs, 0, "tool_call")
        info = extract_tool_call_info(tool_call)
        if info is None:
            return None  # CrewAI answers with a format error; no tool runs
        call_id, name, arguments = info
        original = _find_tool(name, getattr(executor, "_tool_name_mapping", None),
                              getattr(executor, "original_tools", None))
        return _tool_step(executor, name, getattr(original, "description", None), arguments, call_id,
                          original, _native_finish)

    def planned_native_call(_module: Any, args: tuple, kwargs: dict) -> Step | None:
        info = extract_tool_call_info(arg(args, kwargs, 0, "tool_call"))
        if info is None:
            return None
        call_id, name, arguments = info
        original = _find_tool(name, None, kwargs.get("original_tools"))
        return _tool_step(None, name, getattr(original, "description", None), arguments, call_id,
                          original, _native_finish)

    def provider_call(llm: Any, args: tuple, kwargs: dict) -> Step | None:
        name = arg(args, kwargs, 0, "function_name")
        functions = arg(args, kwargs, 2, "available_functions") or {}
        if name not in functions:
            return None  # CrewAI logs a warning and runs nothing

        def finish(span: SemanticSpan, result: Any) -> None:
            if result is None:  # CrewAI returns None only when the function raised (and logs it)
                span.set_error(A.TOOL_ERROR, f"tool {name!r} raised; see CrewAI's log")  # in-band: no exception
            else:
                span.set_tool_result(result)

        return _tool_step(llm, name, None, arg(args, kwargs, 1, "function_args"), None, None, finish)

    hooks.span(ToolUsage, "_use", react_call, "crewai.tool")
    hooks.span(ToolUsage, "_ause", react_call, "crewai.tool")
    hooks.after(ToolUsage, "on_tool_use_finished", cache_report, "crewai.tool.cache")
    hooks.after(ToolUsage, "parse_tool_calling", unparsed_call, "crewai.tool.refused")
    hooks.after(tool_utils, "run_before_tool_call_hooks", react_blocked, "crewai.tool.refused")
    hooks.after(agent_executor, "run_before_tool_call_hooks", native_blocked, "crewai.tool.refused")
    hooks.after(agent_utils, "run_before_tool_call_hooks", native_blocked, "crewai.tool.refused")
    hooks.span(AgentExecutor, "_execute_single_native_tool_call", native_call, "crewai.tool")
    hooks.span(step_executor, "execute_single_native_tool_call", planned_native_call, "crewai.tool")
    hooks.span(BaseLLM, "_handle_tool_execution", provider_call, "crewai.tool")
    hooks.after(Agent, "_emit_skill_usage", lambda agent, args, kwargs, result: _injected_skills(hooks, agent),
                "crewai.skill")


def _tool_step(owner: Any, name: str | None, description: str | None, arguments: Any, call_id: str | None,
               original_tool: Any, finish: Any) -> Step:
    """A ``tool`` span — or a ``skill`` span when the tool is CrewAI's skill loader."""
    skill_loader = _is_skill_loader(original_tool)
    skill = _loaded_skill(original_tool, json_arguments(arguments)) if skill_loader else None
    state = _ToolCall(owner)

    def setup(span: SemanticSpan) -> None:
        state.span = span
        recorded = span.records_content  # arguments are content
        span.set_tool(name, call_id=call_id, description=description,
                      arguments=json_arguments(arguments) if recorded else None)
        if skill:
            span.set_attribute(A.OTEL_AGENTS_SKILL_NAME, skill)

    return Step(Kind.SKILL if skill_loader else Kind.TOOL, name,
                setup=setup, finish=finish, scope=[(_TOOL_CALL, state)])


def _native_finish(span: SemanticSpan, result: Any) -> None:
    """Fill a native tool span from CrewAI's result (a dict, or ``NativeToolCallResult`` when planning)."""
    get = result.get if isinstance(result, dict) else (lambda key: probes.attr(result, key))
    span.set_tool_result(get("result"))
    if get("from_cache"):
        span.set_attribute(A.OTEL_AGENTS_TOOL_CACHED, True)
    if get("tool_failure") is not None:
        _record_failure(span, get("tool_failure"))


# CrewAI's ``ToolFailureReason`` values for a call it refused without running the tool.
REPEATED_CALL = "repeated_call"
INVALID_INPUT = "invalid_input"
PERMISSION_DENIED = "permission_denied"  # a before_tool_call hook blocked it (the project's denial type)
_NOT_RUN = frozenset({"usage_limit", "unknown_tool", INVALID_INPUT, REPEATED_CALL})


def _repeats_last_call(usage: Any, calling: Any) -> bool:
    """Whether CrewAI will refuse this ReAct call as an immediate repeat (same tool, same input as the
    last call the tools handler recorded): ``ToolUsage._use`` answers it without running the tool."""
    check = getattr(usage, "_check_tool_repeated_usage", None)
    try:
        return bool(check(calling=calling)) if callable(check) and calling is not None else False
    except Exception as exc:  # noqa: BLE001 - never lose the span over it
        report_internal_error("crewai.tool.repeated", exc)
        return False


def _refuse(span: SemanticSpan, reason: str, message: Any) -> None:
    """A call CrewAI refused without running the tool: :meth:`SemanticSpan.set_denied` with CrewAI's reason."""
    span.set_denied(reason, str(message or "") or None)


def _refused_call(hooks: Hooks, name: Any, arguments: Any, reason: str, message: Any) -> None:
    """The zero-length tool span, under the current span, of a ReAct call CrewAI answered without reaching
    ``ToolUsage._use`` (its ``Action``/``Action Input`` did not parse into a call of one of the agent's
    tools, or a ``before_tool_call`` hook blocked it): refused, at the time of the refusal."""
    name = name if isinstance(name, str) and name else None
    hooks.telemetry.refused_tool_call(name, reason, arguments=json_arguments(arguments)
                                      if hooks.telemetry.settings.content_enabled() else None, result=message)


def _record_failure(span: SemanticSpan, failure: Any) -> None:
    """A CrewAI ``ToolFailure`` (caught by CrewAI, reported to the model: in-band) as the span's error; ``error.type``
    is its code or reason, else ``tool_error``. A failure whose reason says the tool never ran (usage limit,
    unknown tool, invalid input) is a refusal."""
    reason = getattr(failure, "reason", None)
    reason = getattr(reason, "value", reason)
    message = str(getattr(failure, "message", "") or "")
    if reason in _NOT_RUN:
        _refuse(span, str(reason), message)
        return
    code = getattr(failure, "code", None) or reason
    span.set_error(str(code) if code else A.TOOL_ERROR, message)


def _find_tool(name: str, mapping: Any, tools: Any) -> Any:
    """The ``BaseTool`` a native call named (CrewAI's own lookup: name mapping, then sanitised names)."""
    from crewai.utilities.string_utils import sanitize_tool_name

    if mapping and name in mapping:
        return mapping[name]
    for tool in tools or []:
        if sanitize_tool_name(tool.name) == name:
            return tool
    return None


def _is_skill_loader(tool: Any) -> bool:
    from crewai.skills.tool import LoadSkillTool

    return isinstance(tool, LoadSkillTool)


def _loaded_skill(tool: Any, arguments: Any) -> str | None:
    """The skill a ``load_skill`` call asks for — only when it is in the loader's catalog
    (a real skill name, not free text from the model)."""
    if not _is_skill_loader(tool) or not isinstance(arguments, dict):
        return None
    name = arguments.get("skill_name")
    return name if isinstance(name, str) and name in (tool.catalog or {}) else None


def _injected_skills(hooks: Hooks, agent: Any) -> None:
    """One zero-length ``skill`` span per skill whose instructions go into the task prompt."""
    from crewai.skills.models import INSTRUCTIONS, Skill

    for skill in getattr(agent, "skills", None) or []:
        if isinstance(skill, Skill) and skill.disclosure_level >= INSTRUCTIONS:
            span = hooks.telemetry.start_span(Kind.SKILL, skill.name, multi_step=True,
                                              attributes={A.OTEL_AGENTS_SKILL_NAME: skill.name})
            span.end()
