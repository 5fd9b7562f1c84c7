"""``model`` spans for every CrewAI LLM: each ``BaseLLM`` subclass's ``call`` / ``acall``.

Patched by capability, not by class: at install time every loaded subclass of
``crewai.llms.base_llm.BaseLLM`` that defines ``call``/``acall`` itself is
wrapped, and ``BaseLLM.__init_subclass__`` is wrapped so that classes created
later are too — the provider classes ``LLM(model=...)`` resolves to (imported
on first use) and the user's own. CrewAI's own ``__init_subclass__`` (its
rate-limit retry wrapper) runs first, so one span covers a call and its retries.
A subclass whose ``call`` ends in ``super().call()`` still gives one span: the
inner call of the same LLM instance passes through.

``call`` returns only text or tool calls, so usage, finish reason and response
id come from ``BaseLLM._emit_call_completed_event``, which CrewAI's provider
classes call synchronously inside ``call``, in the calling thread: the
wrapper reads them there and puts them on the open model span. (The
``LLMCallCompletedEvent`` on the event bus carries the same data but reaches
handlers later, on a worker thread, possibly after the span has ended; and a
custom LLM that emits no events still gets its span from the ``call`` wrapper.)
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from typing import Any

from ..._spans import ChatMessage, Part, SemanticSpan, ToolCallRequest, ToolDefinition, Usage, guard
from ..._spans.messages import json_arguments
from ..._spans.address import configured_url
from ...semconv import Kind
from .._hierarchy import subclasses
from . import _content, _scope
from ._scope import arg
from ._steps import Hooks, Step

_LLM_METHODS = ("call", "acall")


class _ModelCall:
    """The model span open for one LLM instance in this context."""

    __slots__ = ("llm_id", "span", "finish_reason")

    def __init__(self, llm_id: int):
        self.llm_id = llm_id
        self.span: SemanticSpan | None = None
        self.finish_reason: str | None = None


_MODEL_CALL: ContextVar[_ModelCall | None] = ContextVar("otel_agents_crewai_model_call", default=None)


def install(hooks: Hooks) -> None:
    """Wrap every ``BaseLLM`` subclass now and later, and the event bus's ``emit`` that carries each call's
    chunks and usage."""
    from crewai.llms.base_llm import BaseLLM

    def model_call(llm: Any, args: tuple, kwargs: dict) -> Step | None:
        current = _MODEL_CALL.get()
        if current is not None and current.llm_id == id(llm) and current.span is _scope.SPAN.get():
            return None  # super().call() of the same call
        state = _ModelCall(id(llm))
        messages = arg(args, kwargs, 0, "messages")

        def setup(span: SemanticSpan) -> None:
            state.span = span
            # Model and provider always (a sampled-out span's metrics use them); the rest only if recorded.
            span.set_model(request_model=getattr(llm, "model", None), provider=_provider(llm),
                           parameters=_request_parameters(llm) if span.is_recording else None)
            span.set_server(configured_url(llm, ("base_url", "api_base")))  # api_base: LiteLLM's
            if getattr(llm, "is_litellm", False) is True:  # the LiteLLM-backed LLM sends its n; the native
                span.set_request_output(None, getattr(llm, "n", None))  # provider classes do not
            if span.records_content:
                tools: list[ToolDefinition] = []
                with guard("crewai.model_tools"):  # a tool's odd schema never costs the messages
                    tools = offered_tools(llm, arg(args, kwargs, 1, "tools"), arg(args, kwargs, 5, "from_agent"))
                span.set_messages(input=chat_messages(messages), tools=tools)

        def finish(span: SemanticSpan, result: Any) -> None:
            if span.records_content:
                span.set_messages(output=[output_message(result, state.finish_reason)])
            elif state.finish_reason:  # what set_messages keeps of the output with content off
                span.set_finish_reasons([state.finish_reason])

        return Step(Kind.MODEL, getattr(llm, "model", None), setup=setup, finish=finish,
                    scope=[(_MODEL_CALL, state)])

    def wrap_class(cls: type) -> None:
        for name in _LLM_METHODS:
            hooks.span(cls, name, model_call, "crewai.model")

    for cls in subclasses(BaseLLM):
        if cls is not BaseLLM:
            wrap_class(cls)
    hooks.after(BaseLLM, "__init_subclass__", lambda cls, args, kwargs, result: wrap_class(cls),
                "crewai.model.subclass")

    # What an LLM announces on the event bus, in the calling thread, inside its call: each chunk of a streamed
    # response (stream=True) as it arrives, timed before the announcement runs; and the call's completion, with
    # the usage, finish reason and response id its provider reported (``call`` returns only text or tool calls).
    # Read at the bus, not at BaseLLM._emit_stream_chunk_event / _emit_call_completed_event: the LiteLLM-backed
    # LLM (crewai.llm.LLM) emits both kinds of event on the bus directly.
    from crewai.events.event_bus import CrewAIEventsBus
    from crewai.events.types.llm_events import LLMCallCompletedEvent, LLMStreamChunkEvent, LLMThinkingChunkEvent

    chunk_events = (LLMStreamChunkEvent, LLMThinkingChunkEvent)

    def announced(_bus: Any, args: tuple, kwargs: dict) -> None:
        state = _MODEL_CALL.get()
        if state is None or state.span is None:
            return
        event = arg(args, kwargs, 1, "event")
        kind = type(event)
        if kind in chunk_events:
            if state.llm_id == id(arg(args, kwargs, 0, "source")):
                state.span.chunk_received()
            return
        if kind is not LLMCallCompletedEvent or state.llm_id != id(arg(args, kwargs, 0, "source")):
            return
        usage = usage_from(getattr(event, "usage", None))
        if usage is not None:
            state.span.set_usage(usage)
        finish_reason = getattr(event, "finish_reason", None)
        if finish_reason:
            state.finish_reason = str(finish_reason)
        response_id = getattr(event, "response_id", None)
        if response_id:
            state.span.set_model(response_id=str(response_id))

    hooks.before(CrewAIEventsBus, "emit", announced, "crewai.model.announced")


def _provider(llm: Any) -> str | None:
    """The provider name. CrewAI's own classes know it; for a custom subclass CrewAI fills in
    ``openai`` for any model name without a ``provider/`` prefix — a guess we do not repeat."""
    provider = getattr(llm, "provider", None)
    if type(llm).__module__.startswith("crewai.") or "/" in (getattr(llm, "model", None) or ""):
        return provider
    return provider if provider != "openai" else None


def _request_parameters(llm: Any) -> dict[str, Any]:
    """The request parameters set on the LLM (``None`` values are dropped by the span layer)."""
    params = {name: getattr(llm, name, None) for name in
              ("temperature", "top_p", "max_tokens", "seed", "frequency_penalty", "presence_penalty", "stream")}
    params["stop"] = list(llm.stop_sequences or []) or None  # honours CrewAI's per-call stop override
    return params


def chat_messages(messages: Any) -> list[ChatMessage]:
    """CrewAI's ``str | list[LLMMessage]`` as chat messages (a bare string is one user message).

    Content blocks become typed parts (:mod:`._content`); a tool call present both as a
    ``tool_use`` block and in ``tool_calls`` is recorded once; the ``system`` message
    (CrewAI's role/goal/backstory prompt) becomes the span's system instructions.
    """
    if messages is None:
        return []
    if isinstance(messages, str):
        return [ChatMessage("user", messages)]
    out = []
    for m in messages:
        if not isinstance(m, Mapping):
            out.append(ChatMessage("user", m))
            continue
        role = str(m.get("role") or "user")
        if role == "tool":
            out.append(ChatMessage("tool", m.get("content"), tool_call_id=m.get("tool_call_id")))
            continue
        parts = _content.content_parts(m.get("content"))
        calls = [c for c in (tool_call(c) for c in m.get("tool_calls") or []) if c is not None]
        out.append(ChatMessage(role, parts=_merge_calls(parts, calls),
                               name=m.get("name") if isinstance(m.get("name"), str) else None))
    return out


def _merge_calls(parts: list[Part], calls: list[ToolCallRequest]) -> list[Part]:
    """``parts`` plus the calls not already among them as a ``tool_use`` block (same id and name)."""
    known = {(p.id, p.name) for p in parts if isinstance(p, ToolCallRequest)}
    return parts + [c for c in calls if (c.id, c.name) not in known]


def output_message(result: Any, finish_reason: str | None) -> ChatMessage:
    """The assistant message of a ``call`` result: text, tool calls (native path), or a structured value."""
    if isinstance(result, list) and result:
        calls = [tool_call(c) for c in result]
        if all(c is not None for c in calls):
            return ChatMessage("assistant", None, tool_calls=calls, finish_reason=finish_reason)
    return ChatMessage("assistant", result, finish_reason=finish_reason)


def offered_tools(llm: Any, tools: Any, agent: Any) -> list[ToolDefinition]:
    """The tools offered to the model: the schemas passed to a function-calling LLM, else, for the
    ReAct text path, the tools the agent's prompt describes (its executor's tools)."""
    if tools:
        return _content.tool_definitions(tools)
    if agent is not None and not _supports_function_calling(llm):
        return _content.executor_tool_definitions(agent)
    return []


def _supports_function_calling(llm: Any) -> bool:
    try:
        return bool(llm.supports_function_calling())
    except Exception:  # noqa: BLE001 - a custom LLM's own method failing is not ours to raise
        return False


def tool_call(raw: Any) -> ToolCallRequest | None:
    """One tool call in any provider's shape (CrewAI's own parser), or ``None`` if it is not one."""
    from crewai.utilities.agent_utils import extract_tool_call_info

    info = extract_tool_call_info(raw)
    if info is None:
        return None
    call_id, name, arguments = info
    return ToolCallRequest(name=name, arguments=json_arguments(arguments), id=call_id)


_INPUT_KEYS = ("prompt_tokens", "prompt_token_count", "input_tokens")
_OUTPUT_KEYS = ("completion_tokens", "candidates_token_count", "output_tokens")


def usage_from(raw: Any) -> Usage | None:
    """Token counts from a provider's usage dict, normalised by CrewAI's ``UsageMetrics``.

    A count the provider did not report stays ``None`` (``UsageMetrics`` would
    report it as 0).
    """
    if not isinstance(raw, Mapping) or not raw:
        return None
    from crewai.types.usage_metrics import UsageMetrics

    metrics = UsageMetrics.from_provider_dict(dict(raw))
    if metrics is None:
        return None
    has_input = any(raw.get(k) is not None for k in _INPUT_KEYS)
    has_output = any(raw.get(k) is not None for k in _OUTPUT_KEYS)
    total = raw.get("total_tokens", raw.get("total_token_count"))
    return Usage(input_tokens=metrics.prompt_tokens if has_input else None,
                 output_tokens=metrics.completion_tokens if has_output else None,
                 total_tokens=total,
                 cache_read_tokens=metrics.cached_prompt_tokens or None,
                 cache_creation_tokens=metrics.cache_creation_tokens or None,
                 reasoning_tokens=metrics.reasoning_tokens or None)
