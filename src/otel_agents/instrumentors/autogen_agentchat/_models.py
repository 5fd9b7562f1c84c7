"""Model spans: one ``chat {model}`` span per ``ChatCompletionClient.create``/``create_stream`` call,
for every client class (AutoGen's, ``autogen_ext``'s, the user's own).

The wrapper sits on each class's own ``create``/``create_stream`` (see :mod:`._wiring`,
which patches the subclasses that exist at ``instrument()`` and those defined later).
A call made while a model span of ours is current — a subclass calling ``super().create()``,
``ChatCompletionCache`` around another client — is the same request: no second span.

Usage comes from ``CreateResult.usage`` (``RequestUsage``: ``prompt_tokens``,
``completion_tokens``). A streaming client that got no usage chunk reports
``RequestUsage(0, 0)``; a request always has a prompt, so 0 input tokens means
"not reported": the span then has no token counts rather than zeros.

``thought`` is written as the part it is, ``reasoning`` or ``text`` (:func:`thought_part`): the rule is in the
package's docstring (:mod:`otel_agents.instrumentors.autogen_agentchat`).
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping
from typing import Any

from ..._spans import (ChatMessage, ReasoningPart, SemanticSpan, Telemetry, TextPart, ToolCallPart,
                       ToolCallResponsePart, ToolDefinition, Usage, guard, instrumentation_enabled, media_part,
                       output_type_of)
from ..._spans.messages import json_arguments
from ...semconv import Kind
from ._context import MODEL, context_of, in_model_call
from ._streams import SpanStream, run_coroutine

_PROVIDERS = (  # (class-name prefix, provider) for autogen_ext's clients, OTel GenAI provider names; the first match
    # wins, so a longer prefix comes before the shorter one it starts with (AnthropicBedrock... is Bedrock's)
    ("AzureOpenAI", "azure.ai.openai"), ("OpenAI", "openai"), ("AnthropicBedrock", "aws.bedrock"),
    ("Anthropic", "anthropic"), ("Ollama", "ollama"), ("AzureAI", "azure.ai.inference"),
)


def model_name(client: Any) -> str | None:
    """The model a client asks for: its create arguments' ``model``, a ``model`` attribute, or the
    family in its ``model_info`` when that is not ``unknown``."""
    create_args = getattr(client, "_create_args", None)
    if isinstance(create_args, dict) and create_args.get("model"):
        return str(create_args["model"])
    for attr in ("model", "_model", "model_name", "_model_name"):
        value = getattr(client, attr, None)
        if isinstance(value, str) and value:
            return value
    with guard("autogen.model_info"):
        family = (client.model_info or {}).get("family")
        if family and family != "unknown":
            return str(family)
    return None


def provider_name(client: Any) -> str | None:
    cls = type(client)
    if not cls.__module__.startswith("autogen_ext."):
        return None
    for prefix, provider in _PROVIDERS:
        if cls.__name__.startswith(prefix):
            return provider
    return None


def usage_of(result: Any) -> Usage | None:
    usage = getattr(result, "usage", None)
    if usage is None:
        return None
    prompt = getattr(usage, "prompt_tokens", None)
    completion = getattr(usage, "completion_tokens", None)
    if not prompt:  # RequestUsage(0, 0): the client got no usage (a stream without a usage chunk)
        return None
    return Usage(input_tokens=prompt, output_tokens=completion)


def _user_parts(content: Any) -> list:
    if isinstance(content, str):
        return [TextPart(content)]
    parts: list = []
    for item in content or ():
        if isinstance(item, str):
            parts.append(TextPart(item))
        else:
            uri = getattr(item, "data_uri", None)
            parts.append(media_part(uri, modality="image") if uri else TextPart(str(item)))
    return parts


def _calls(content: Any) -> list:
    return [ToolCallPart(c.name, json_arguments(c.arguments), c.id) for c in content
            if hasattr(c, "arguments") and hasattr(c, "name")]


_ANTHROPIC_CLASSES: "weakref.WeakKeyDictionary[type, bool]" = weakref.WeakKeyDictionary()


def _anthropic_class(cls: type) -> bool:
    """Whether ``cls`` is ``autogen_ext``'s Anthropic client class or a subclass of one (a class of its MRO is
    defined in ``autogen_ext.models.anthropic``); answered once per class (every model call asks it twice), kept
    while the class lives."""
    known = _ANTHROPIC_CLASSES.get(cls)
    if known is None:
        known = any(c.__module__.startswith("autogen_ext.models.anthropic") for c in cls.__mro__)
        try:
            _ANTHROPIC_CLASSES[cls] = known
        except TypeError:  # a class that takes no weak reference: answered again next time
            pass
    return known


def thinks_beside_calls(client: Any, extra_create_args: Any) -> bool:
    """Whether ``client`` puts reasoning, not text, in a ``thought`` beside tool calls: ``autogen_ext``'s Anthropic
    client (direct or Bedrock, a subclass of either; the one inside a ``ChatCompletionCache``) asked for extended
    thinking by ``extra_create_args`` (a mapping, or ``None``) or, without a ``thinking`` there, by its create
    arguments (the order its ``_get_thinking_config`` reads them in). Rule: the package docstring."""
    if type(client).__name__ == "ChatCompletionCache":
        client = getattr(client, "client", client)
    if not _anthropic_class(type(client)):
        return False
    config = extra_create_args.get("thinking") if isinstance(extra_create_args, Mapping) else None
    if config is None:
        create_args = getattr(client, "_create_args", None)
        config = create_args.get("thinking") if isinstance(create_args, Mapping) else None
    return isinstance(config, Mapping) and config.get("type", "enabled") != "disabled"


def thought_part(thought: str, content: Any, thinks: bool = False) -> ReasoningPart | TextPart:
    """The GenAI part of a ``thought`` beside ``content`` (a ``CreateResult``'s or an ``AssistantMessage``'s):
    ``reasoning`` beside a text answer, or beside tool calls from a client that ``thinks`` there
    (:func:`thinks_beside_calls`); else ``text``, what the model wrote before its calls."""
    return ReasoningPart(thought) if isinstance(content, str) or thinks else TextPart(thought)


def _assistant_parts(message: Any, thinks: bool) -> list:
    content, thought = message.content, getattr(message, "thought", None)
    parts: list = [thought_part(thought, content, thinks)] if thought else []
    return parts + ([TextPart(content)] if isinstance(content, str) else _calls(content))


def chat_messages(messages: Any, thinks: bool = False) -> list[ChatMessage]:
    """AutoGen ``LLMMessage``s as GenAI chat messages; ``thinks``: see :func:`thought_part`."""
    out: list[ChatMessage] = []
    for m in messages or ():
        kind = type(m).__name__
        if kind == "SystemMessage":
            out.append(ChatMessage("system", parts=[TextPart(m.content)]))
        elif kind == "UserMessage":
            out.append(ChatMessage("user", parts=_user_parts(m.content), name=getattr(m, "source", None)))
        elif kind == "AssistantMessage":
            out.append(ChatMessage("assistant", parts=_assistant_parts(m, thinks), name=getattr(m, "source", None)))
        elif kind == "FunctionExecutionResultMessage":
            out.append(ChatMessage("tool", parts=[ToolCallResponsePart(r.content, r.call_id) for r in m.content]))
    return out


def output_message(result: Any, thinks: bool = False) -> ChatMessage:
    """A ``CreateResult`` as the GenAI output message; ``thinks``: see :func:`thought_part`."""
    return ChatMessage("assistant", parts=_assistant_parts(result, thinks), finish_reason=_finish_reason(result))


def _missing_result(last: Any) -> str | None:
    """A ``create_stream`` ends with its ``CreateResult`` (the text chunks come before it): a stream that ended
    without one was cut short."""
    return None if hasattr(last, "finish_reason") else "its CreateResult"


def _has_result(last: Any) -> bool:
    """Whether a ``create_stream``'s last item is its ``CreateResult`` (the response is whole)."""
    return _missing_result(last) is None


def _finish_reason(result: Any) -> str | None:
    reason = getattr(result, "finish_reason", None)
    if reason == "function_calls":
        return "tool_call"
    return None if reason in (None, "unknown") else str(reason)


def tool_definitions(tools: Any) -> list[ToolDefinition]:
    out = []
    for tool in tools or ():
        schema = tool if isinstance(tool, dict) else getattr(tool, "schema", None) or {}
        if schema.get("name"):
            out.append(ToolDefinition(schema["name"], schema.get("description"), schema.get("parameters")))
    return out


def output_type(json_output: Any, response_format: Any) -> str | None:
    """``gen_ai.output.type`` of what a ``create`` call asks for: ``json_output`` (``True``: JSON mode, a pydantic
    class: structured output → ``json``), else an ``extra_create_args`` ``response_format``; nothing asked,
    ``None``. (``json_output=False`` is left out: the OpenAI client sends a text format for it, the Anthropic one
    sends nothing.)"""
    if json_output is True or isinstance(json_output, type):
        return "json"
    return output_type_of(response_format)


def _arg(args: tuple, kwargs: dict, name: str, index: int) -> Any:
    return kwargs[name] if name in kwargs else (args[index] if len(args) > index else None)


class ModelHooks:
    """Wrappers for ``create`` and ``create_stream`` (one set per ``instrument()``)."""

    def __init__(self, telemetry: Telemetry):
        self.telemetry = telemetry

    def _opener(self, client: Any, args: tuple, kwargs: dict, stream: bool) -> Any:
        def start() -> tuple[SemanticSpan, Any] | None:
            if in_model_call():
                return None
            model = model_name(client)
            span = self.telemetry.start_span(Kind.MODEL, model)
            with guard("autogen.model.request"):
                params = dict(_arg(args, kwargs, "extra_create_args", 99) or {})
                if stream:
                    params["stream"] = True
                span.set_model(request_model=model, provider=provider_name(client), parameters=params or None)
                span.set_server(getattr(getattr(client, "_client", None), "base_url", None))  # autogen_ext's SDK client
                span.set_request_output(output_type(kwargs.get("json_output"), params.get("response_format")))
                if span.records_content:
                    thinks = thinks_beside_calls(client, kwargs.get("extra_create_args"))
                    span.set_messages(input=chat_messages(_arg(args, kwargs, "messages", 0), thinks),
                                      tools=tool_definitions(kwargs.get("tools")))
            return span, context_of(span, MODEL, span)

        return start

    @staticmethod
    def _finisher(client: Any, kwargs: dict) -> Any:
        """What ends the model span of a ``create``/``create_stream`` call of ``client`` with ``kwargs``."""
        def finish(span: SemanticSpan, result: Any, error: BaseException | None) -> None:
            if result is None or not hasattr(result, "finish_reason"):
                return  # failed, or a stream that ended before its CreateResult
            span.set_usage(usage_of(result))
            if span.records_content:
                thinks = bool(getattr(result, "thought", None)) and not isinstance(result.content, str) \
                    and thinks_beside_calls(client, kwargs.get("extra_create_args"))
                span.set_messages(output=[output_message(result, thinks)])
            else:  # content off: the finish reason is all of the answer that is recorded (no message built)
                reason = _finish_reason(result)
                if reason:
                    span.set_finish_reasons([reason])

        return finish

    def create(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        return run_coroutine(lambda: wrapped(*args, **kwargs), self._opener(instance, args, kwargs, False),
                             self._finisher(instance, kwargs))

    def create_stream(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        if not instrumentation_enabled():
            return wrapped(*args, **kwargs)
        chunks: list[str] = []
        finish_result = self._finisher(instance, kwargs)

        def on_item(span: SemanticSpan, item: Any) -> None:
            if isinstance(item, str):
                span.chunk_received()  # a chunk of the response (the CreateResult after the last is not one)
                if span.records_content:
                    chunks.append(item)

        def finish(span: SemanticSpan, result: Any, error: BaseException | None) -> None:
            if hasattr(result, "finish_reason"):
                finish_result(span, result, error)
            elif chunks:  # left early (or failed) before the CreateResult: the text streamed so far
                span.set_messages(output=[ChatMessage("assistant", parts=[TextPart("".join(chunks))])])

        return SpanStream(lambda: wrapped(*args, **kwargs), self._opener(instance, args, kwargs, True), finish,
                          on_item=on_item, missing=_missing_result, final=_has_result)
