"""Reading LangChain's callback payloads into the span layer's neutral types.

Pure functions, no spans: each takes what a LangChain callback received
(messages, an ``LLMResult``, metadata, documents) and returns plain values,
:class:`~otel_agents._spans.ChatMessage` or :class:`~otel_agents._spans.Usage`.
The handler calls them through this module (``extract.chat_messages(...)``),
so a test can make one of them fail (case X-5).

Sources of the conventions read here (langchain-core 1.x, also 0.3):
``metadata["ls_model_name"]``/``["ls_provider"]`` are LangChain's own
``_get_ls_params`` keys; ``AIMessage.usage_metadata`` (``input_tokens``,
``output_tokens``, ``total_tokens``, ``input_token_details.cache_read`` /
``cache_creation``, ``output_token_details.reasoning``) is its standard usage
shape; ``llm_output["token_usage"]`` is the older, provider-shaped one.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Iterable, Sequence

from ..._spans import ChatMessage, ToolDefinition, Usage, output_type_of, probes
from ..._spans.messages import genai_part
from ...semconv import attributes as A
from .._provider_tools import tool_definitions
from . import content

_ROLES = {"human": "user", "ai": "assistant", "system": "system", "developer": "system",
          "tool": "tool", "function": "tool", "AIMessageChunk": "assistant",
          "HumanMessageChunk": "user", "SystemMessageChunk": "system", "ToolMessageChunk": "tool"}

# LangChain ``ls_provider`` values → OTel GenAI ``gen_ai.provider.name`` (semconv v1.41 well-known values).
_PROVIDERS = {"azure": "azure.ai.openai", "google_genai": "gcp.gemini", "google_vertexai": "gcp.vertex_ai",
              "google_anthropic_vertex": "gcp.vertex_ai", "amazon_bedrock": "aws.bedrock",
              "bedrock": "aws.bedrock", "bedrock_converse": "aws.bedrock", "mistralai": "mistral_ai",
              "xai": "x_ai", "ibm": "ibm.watsonx.ai"}

# invocation_params keys that are identity or bookkeeping, not request parameters.
_NOT_PARAMETERS = {"_type", "model", "model_name", "model_id", "tools", "tool_choice", "functions",
                   "response_format", "api_key", "base_url", "streaming"}

# Metadata keys that name a session, most specific first (a ``thread_id`` is LangGraph's).
SESSION_KEYS = ("session_id", "conversation_id", "thread_id")
USER_KEYS = ("user_id",)

# Tags LangChain and LangGraph add for their own bookkeeping.
_INTERNAL_TAG_PREFIXES = ("seq:step:", "graph:step:", "map:key:", "langsmith:", "branch:")


def run_name(serialized: Mapping[str, Any] | None, name: str | None, default: str) -> str:
    """A low-cardinality name for a run: the ``name`` keyword LangChain passes
    (a runnable's or graph node's name), else the serialized name or class, else ``default``."""
    if name:
        return str(name)
    if isinstance(serialized, Mapping):
        if serialized.get("name"):
            return str(serialized["name"])
        ids = serialized.get("id")
        if isinstance(ids, (list, tuple)) and ids:
            return str(ids[-1])
    return default


def _role(message: Any) -> str:
    kind = getattr(message, "type", None)
    if kind == "chat":
        return str(getattr(message, "role", None) or "user")
    return _ROLES.get(str(kind), str(kind or "user"))


def chat_message(message: Any) -> ChatMessage:
    """One LangChain ``BaseMessage`` (or a plain string) as a :class:`ChatMessage` of typed
    parts (text, reasoning, tool calls, tool results, media: see :mod:`.content`)."""
    if isinstance(message, str):
        return ChatMessage(role="user", content=message)
    role = _role(message)
    name = getattr(message, "name", None)
    return ChatMessage(role, parts=content.message_parts(message, getattr(message, "content", None), role),
                       name=name if isinstance(name, str) and name else None)


def chat_messages(messages: Iterable[Any]) -> list[ChatMessage]:
    """A list of LangChain messages as :class:`ChatMessage` s (order kept)."""
    return [chat_message(m) for m in messages]


def state_messages(inputs: Any) -> list[ChatMessage] | None:
    """The conversation a graph was given, when its input is exactly ``{"messages": [...]}`` (LangGraph's
    ``MessagesState``, ``create_agent``'s input): each message in any form LangChain accepts (a message, a
    ``{"role", "content"}`` dict, a ``(role, content)`` tuple, a string) read by LangChain's own
    ``convert_to_messages``, then as :class:`ChatMessage` s; ``None`` for any other input (other state keys
    would be lost) or one LangChain cannot read."""
    if not isinstance(inputs, Mapping) or len(inputs) != 1 or not isinstance(inputs.get("messages"), (list, tuple)):
        return None
    from langchain_core.messages import convert_to_messages

    try:
        return chat_messages(convert_to_messages(inputs["messages"]))
    except (TypeError, ValueError, NotImplementedError):  # a form LangChain does not read: the value is kept
        return None


def state_answer(outputs: Any) -> list[ChatMessage] | None:
    """A graph's response, when its output state is a mapping with ``messages`` (LangGraph's
    ``MessagesState``) that ends with an AI message: that message (read by LangChain's own
    ``convert_to_messages``) as the one assistant message of ``gen_ai.output.messages``, as the OTel GenAI
    semconv has it (an output message is one response of the model: the agent's answer, not the messages
    it exchanged with its tools on the way, which are its model and tool spans'), with the finish reason the
    provider sent on it (its ``response_metadata``, read as a model span's is; none when it holds none: never
    a default); ``None`` otherwise (the state is then the output)."""
    if not isinstance(outputs, Mapping):
        return None
    messages = outputs.get("messages")
    if not isinstance(messages, (list, tuple)) or not messages:
        return None
    from langchain_core.messages import convert_to_messages

    try:
        [last] = convert_to_messages(messages[-1:])
    except (TypeError, ValueError, NotImplementedError):  # a form LangChain does not read: the value is kept
        return None
    if _role(last) != "assistant":
        return None
    answer = chat_message(last)
    answer.finish_reason = _finish_reason(None, last)
    return [answer]


def _generations(response: Any) -> list[Any]:
    """The generations of the first prompt of an ``LLMResult`` (one per choice)."""
    generations = getattr(response, "generations", None) or []
    return list(generations[0]) if generations else []


def _finish_reason(gen: Any, message: Any) -> Any:
    info = getattr(gen, "generation_info", None) or {}
    if message is None:
        return info.get("finish_reason")
    meta = getattr(message, "response_metadata", None) or {}
    return meta.get("finish_reason") or meta.get("stop_reason") or info.get("finish_reason")


def output_messages(response: Any) -> list[ChatMessage]:
    """The model's output messages (one per choice), with tool calls and finish reasons."""
    out = []
    for gen in _generations(response):
        message = getattr(gen, "message", None)
        if message is not None:
            msg = chat_message(message)
            msg.role = "assistant"
        else:
            msg = ChatMessage(role="assistant", content=getattr(gen, "text", None) or None)
        msg.finish_reason = _finish_reason(gen, message)
        out.append(msg)
    return out


def finish_reasons(response: Any) -> list[str]:
    """The finish reason of each choice, as :func:`output_messages` gives them, without converting
    the messages (content off)."""
    out = []
    for gen in _generations(response):
        message = getattr(gen, "message", None)
        reason = _finish_reason(gen, message)
        if reason:
            out.append(str(reason))
    return out


def offered_tools(params: Mapping[str, Any]) -> list[ToolDefinition]:
    """The tools bound to the chat model (case M-3): ``invocation_params["tools"]`` (what
    ``bind_tools`` bound, in the provider's request shape: see :mod:`.._provider_tools`) or
    OpenAI's legacy ``functions``. A tool the integration left as a LangChain object (a
    ``BaseTool``, a function, a pydantic class) is read with LangChain's ``convert_to_openai_tool``."""
    specs = params.get("tools") or params.get("functions")
    if not isinstance(specs, (list, tuple)):
        return []
    out: list[ToolDefinition] = []
    for spec in specs:
        if not isinstance(spec, Mapping):
            try:
                from langchain_core.utils.function_calling import convert_to_openai_tool

                spec = convert_to_openai_tool(spec)
            except Exception:  # noqa: BLE001 - a provider object we cannot read: not listed
                continue
        out.extend(tool_definitions([spec]))
    return out


def usage_of_metadata(usage: Mapping[str, Any]) -> Usage:
    """A message's (or a streamed chunk's) ``usage_metadata`` as a :class:`Usage` (which checks each count)."""
    inputs = usage.get("input_token_details") or {}
    outputs = usage.get("output_token_details") or {}
    return Usage(input_tokens=usage.get("input_tokens"), output_tokens=usage.get("output_tokens"),
                 total_tokens=usage.get("total_tokens"),
                 cache_read_tokens=inputs.get("cache_read"),
                 cache_creation_tokens=inputs.get("cache_creation"),
                 reasoning_tokens=outputs.get("reasoning"))


def _usage_from_llm_output(usage: Mapping[str, Any]) -> Usage:
    prompt_details = usage.get("prompt_tokens_details") or {}
    completion_details = usage.get("completion_tokens_details") or {}
    return Usage(input_tokens=usage.get("prompt_tokens", usage.get("input_tokens")),
                 output_tokens=usage.get("completion_tokens", usage.get("output_tokens")),
                 total_tokens=usage.get("total_tokens"),
                 cache_read_tokens=prompt_details.get("cached_tokens"),
                 reasoning_tokens=completion_details.get("reasoning_tokens"))


def usages(response: Any) -> list[Usage]:
    """Token usage reports of one model call, least preferred first.

    ``llm_output["token_usage"]`` (provider-shaped, often partial; absent when
    streaming) comes first, the message's ``usage_metadata`` (LangChain's
    complete standard shape) last: the span layer keeps the more complete one.
    """
    found: list[Usage] = []
    llm_output = getattr(response, "llm_output", None) or {}
    legacy = llm_output.get("token_usage") or llm_output.get("usage")
    if isinstance(legacy, Mapping) and legacy:
        found.append(_usage_from_llm_output(legacy))
    for gen in _generations(response):
        usage = getattr(getattr(gen, "message", None), "usage_metadata", None)
        if isinstance(usage, Mapping) and usage:
            found.append(usage_of_metadata(usage))
            break
    return found


def chunk_finish_reason(chunk: Any) -> str | None:
    """The finish reason a streamed chunk (``ChatGenerationChunk``) carries, if any (on the last one)."""
    reason = _finish_reason(chunk, getattr(chunk, "message", None))
    return str(reason) if reason else None


def provider_name(ls_provider: Any) -> str | None:
    """``gen_ai.provider.name`` for a LangChain ``ls_provider`` value (passed through when unmapped)."""
    if not ls_provider:
        return None
    return _PROVIDERS.get(str(ls_provider), str(ls_provider))


def request_model(metadata: Mapping[str, Any], params: Mapping[str, Any],
                  serialized: Mapping[str, Any] | None) -> str | None:
    """The requested model: ``ls_model_name``, else the invocation or constructor parameters."""
    kwargs = (serialized or {}).get("kwargs") if isinstance(serialized, Mapping) else None
    for source in (metadata, params, kwargs or {}):
        for key in ("ls_model_name", "model", "model_name", "model_id"):
            value = source.get(key)
            if isinstance(value, str) and value:
                return value
    return None


def request_parameters(metadata: Mapping[str, Any], params: Mapping[str, Any]) -> dict[str, Any]:
    """Request parameters (temperature, max_tokens, stop …) from ``invocation_params``,
    completed by LangChain's ``ls_temperature``/``ls_max_tokens``/``ls_stop`` metadata."""
    out = {k: v for k, v in params.items() if k not in _NOT_PARAMETERS and v is not None}
    for key in ("temperature", "max_tokens", "stop"):
        value = metadata.get(f"ls_{key}")
        if value is not None and key not in out:
            out[key] = value
    return out


# Where an integration names the URL its client connects to: invocation_params (some integrations), else the
# constructor arguments LangChain serializes (ChatOpenAI's openai_api_base, ChatAnthropic's anthropic_api_url…).
_BASE_URL_KEYS = ("base_url", "openai_api_base", "anthropic_api_url", "azure_endpoint", "api_base")


def base_url(params: Mapping[str, Any], serialized: Mapping[str, Any] | None) -> Any:
    """The base URL the model's client connects to when the integration gives it (``None`` for its default
    endpoint, which LangChain does not pass on to callbacks)."""
    kwargs = serialized.get("kwargs") if isinstance(serialized, Mapping) else None
    for source in (params, kwargs if isinstance(kwargs, Mapping) else {}):
        for key in _BASE_URL_KEYS:
            if isinstance(source.get(key), str) and source[key]:
                return source[key]
    return None


def request_output(params: Mapping[str, Any]) -> tuple[str | None, Any]:
    """What the request asks of the output (see :meth:`SemanticSpan.set_request_output`): the output type of its
    ``response_format`` (``with_structured_output``'s ``json_schema``/``json_mode``) and ``n``."""
    return output_type_of(params.get("response_format")), params.get("n")


def response_model(response: Any) -> str | None:
    """The model that answered, from the message's ``response_metadata`` or ``llm_output``."""
    for gen in _generations(response):
        meta = getattr(getattr(gen, "message", None), "response_metadata", None) or {}
        for key in ("model_name", "model"):
            if isinstance(meta.get(key), str) and meta[key]:
                return meta[key]
    llm_output = getattr(response, "llm_output", None) or {}
    value = llm_output.get("model_name") or llm_output.get("model")
    return value if isinstance(value, str) and value else None


def response_id(response: Any) -> str | None:
    """The provider's response id, when it reported one (LangChain's own ``run-…`` ids are skipped)."""
    for gen in _generations(response):
        message = getattr(gen, "message", None)
        meta = getattr(message, "response_metadata", None) or {}
        value = meta.get("id") or getattr(message, "id", None)
        if isinstance(value, str) and value and not value.startswith(("run-", "lc_run-")):
            return value
    return None


def documents(docs: Sequence[Any]) -> list[dict[str, Any]]:
    """LangChain ``Document`` s as the span layer's document dicts (``id``, ``content``, ``score``, ``metadata``)."""
    out = []
    for doc in docs or []:
        metadata = dict(getattr(doc, "metadata", None) or {})
        item: dict[str, Any] = {"content": getattr(doc, "page_content", None)}
        if getattr(doc, "id", None):
            item["id"] = str(doc.id)
        score = metadata.get("score", metadata.get("relevance_score"))
        if isinstance(score, (int, float)) and not isinstance(score, bool):
            item["score"] = float(score)
        if metadata:
            item["metadata"] = metadata
        out.append(item)
    return out


_PLAIN = frozenset({str, int, float, bool, bytes, type(None)})


def io_value(value: Any, _depth: int = 0) -> Any:
    """A chain's input or output with LangChain messages made compact
    (``{"role", "content", "tool_calls"?, "tool_call_id"?}``), so a graph state
    reads like a conversation instead of a dump of every message field.
    Looks three levels deep; anything else is left to the span layer's encoder."""
    cls = type(value)
    if cls in _PLAIN:  # the common case, and no message is one (nor hides in one)
        return value
    if cls is not dict and _is_message(value):  # (a plain dict has no attributes: never a message)
        return _compact(value)
    if _depth >= 3:
        return value
    if isinstance(value, Mapping):
        return {k: io_value(v, _depth + 1) for k, v in value.items()}
    if isinstance(value, (list, tuple)) and any(_is_message(v) for v in value):
        return [io_value(v, _depth + 1) for v in value]
    return value


def _is_message(value: Any) -> bool:
    """A LangChain message (judged by its attributes, read through guarded probes: ``value`` may be a user object)."""
    return probes.has_attr(value, "content") and isinstance(probes.attr(value, "type"), str) \
        and probes.has_attr(value, "additional_kwargs")


def _compact(message: Any) -> dict[str, Any]:
    msg = chat_message(message)
    out: dict[str, Any] = {"role": msg.role, "content": msg.content}
    if msg.tool_calls:
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in msg.tool_calls]
    if msg.tool_call_id:
        out["tool_call_id"] = msg.tool_call_id
    return out


def tool_result(output: Any, media_budget: int) -> Any:
    """A tool's result: the content of the ``ToolMessage`` LangChain wraps it in, or the raw value.

    A multimodal result (a list of content blocks with an image, audio or a document) is its
    parts as GenAI part data, media summarised past ``media_budget`` bytes like any media part
    (see :mod:`otel_agents._spans.messages`), so no base64 beyond the budget reaches the tool span.
    """
    if _is_message(output) and probes.attr(output, "type") == "tool":
        result = output.content
        if isinstance(result, list) and content.has_media(result):
            return [genai_part(p, media_budget) for p in content.content_parts(result)]
        return result
    return output


def session_attributes(metadata: Mapping[str, Any] | None) -> dict[str, str]:
    """``session.id``, ``user.id`` and ``gen_ai.conversation.id`` from a run's metadata.

    ``session_id``/``conversation_id``/``thread_id`` (LangGraph copies the
    checkpointer's ``thread_id`` into metadata) name the session and, being ids
    of a real conversation, also ``gen_ai.conversation.id``; ``user_id`` the user.
    The first of the keys whose value is an id (:func:`~otel_agents._spans.probes.identifier`):
    a value that cannot be written as text loses only itself.
    """
    if not metadata:
        return {}
    out: dict[str, str] = {}
    session = _first_id(metadata, SESSION_KEYS, "langchain.session_id")
    if session is not None:
        out[A.SESSION_ID] = out[A.GEN_AI_CONVERSATION_ID] = session
    user = _first_id(metadata, USER_KEYS, "langchain.user_id")
    if user is not None:
        out[A.USER_ID] = user
    return out


def _first_id(metadata: Mapping[str, Any], keys: Sequence[str], site: str) -> str | None:
    for key in keys:
        value = metadata.get(key)
        if value is not None:
            text = probes.identifier(value, site)
            if text is not None:
                return text
    return None


def user_tags(tags: Sequence[str] | None) -> list[str]:
    """The caller's tags, without LangChain's and LangGraph's bookkeeping tags."""
    return [t for t in tags or [] if isinstance(t, str) and not t.startswith(_INTERNAL_TAG_PREFIXES)]
