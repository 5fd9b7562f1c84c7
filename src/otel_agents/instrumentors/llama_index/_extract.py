"""Read LlamaIndex objects into the span layer's neutral shapes.

Every function here takes framework objects (chat messages, responses, tools,
nodes, workflow events) and returns plain values, :class:`ChatMessage`,
:class:`Usage` or ``None``. They read attributes by name (``getattr``) rather
than importing LlamaIndex types, so they work on provider classes we never
import. They may raise on an unexpected shape; the handlers call them under
the never-raise guard.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from functools import lru_cache
from typing import Any, Iterable

from pydantic import BaseModel

from ..._spans import ChatMessage, ToolCallRequest, ToolDefinition, Usage, probes, token_count
from ..._spans.address import configured_url
from .._provider_tools import tool_definitions
from . import _content

# LlamaIndex ``MessageRole`` values → GenAI role names.
_ROLES = {"developer": "system", "function": "tool", "chatbot": "assistant", "model": "assistant"}

# ``llama_index.llms.<package>`` → ``gen_ai.provider.name`` (OTel GenAI v1.41 well-known values).
_PROVIDERS = {
    "openai": "openai", "openai_like": "openai", "azure_openai": "azure.ai.openai",
    "anthropic": "anthropic", "bedrock": "aws.bedrock", "bedrock_converse": "aws.bedrock",
    "gemini": "gcp.gemini", "google_genai": "gcp.gen_ai", "vertex": "gcp.vertex_ai",
    "mistralai": "mistral_ai", "groq": "groq", "cohere": "cohere", "deepseek": "deepseek",
    "perplexity": "perplexity", "xai": "x_ai", "ibm": "ibm.watsonx.ai",
}

# LLM fields that are request parameters (GenAI ``gen_ai.request.*`` names where one exists).
_PARAMETERS = ("temperature", "top_p", "top_k", "max_tokens", "max_new_tokens", "stop", "seed",
               "frequency_penalty", "presence_penalty")


def _get(obj: Any, key: str) -> Any:
    """``obj[key]`` for mappings, ``obj.key`` otherwise (a provider's raw response: a dict or an SDK model);
    ``None`` when absent."""
    return None if obj is None else probes.field(obj, key)


def _enum_value(value: Any) -> Any:
    return getattr(value, "value", value)


# -- messages -----------------------------------------------------------------
def role(message: Any) -> str:
    """The GenAI role of a LlamaIndex ``ChatMessage`` (``system``/``user``/``assistant``/``tool``)."""
    raw = str(_enum_value(getattr(message, "role", "user")))
    return _ROLES.get(raw, raw)


def tool_calls(message: Any) -> list[ToolCallRequest]:
    """Tool calls requested by an assistant message: ``ToolCallBlock`` blocks, or the
    legacy OpenAI-style ``additional_kwargs['tool_calls']``."""
    calls = [ToolCallRequest(name=b.tool_name, arguments=b.tool_kwargs, id=b.tool_call_id)
             for b in getattr(message, "blocks", None) or () if getattr(b, "block_type", None) == "tool_call"]
    if calls:
        return calls
    for item in (getattr(message, "additional_kwargs", None) or {}).get("tool_calls") or ():
        function = _get(item, "function")
        name = _get(function, "name") or _get(item, "name")
        if name:
            calls.append(ToolCallRequest(name=name, arguments=_get(function, "arguments"), id=_get(item, "id")))
    return calls


def chat_message(message: Any, *, finish_reason: str | None = None) -> ChatMessage:
    """One LlamaIndex ``ChatMessage`` as a neutral :class:`ChatMessage` of typed parts
    (text, reasoning, tool calls, tool results, media: see :mod:`._content`)."""
    r = role(message)
    return ChatMessage(r, parts=_content.message_parts(message, r), finish_reason=finish_reason)


def chat_messages(messages: Iterable[Any]) -> list[ChatMessage]:
    """A list of LlamaIndex ``ChatMessage`` as neutral messages."""
    return [chat_message(m) for m in messages or ()]


def prompt_messages(prompt: Any) -> list[ChatMessage]:
    """A completion prompt (text) as one user message."""
    return [ChatMessage(role="user", content=prompt)]


def finish_reason(response: Any) -> str | None:
    """Why generation stopped, as the provider sent it (its own word; the span layer normalises it):
    ``raw.choices[0].finish_reason`` (OpenAI shapes), ``raw.candidates[0].finish_reason`` (Gemini),
    ``raw.stop_reason``/``stopReason``/``finish_reason`` (Anthropic, Bedrock, others) or the same key in
    ``additional_kwargs``. ``None`` when the provider sent none (the core mocks send none): never guessed
    from the reply's shape."""
    raw = getattr(response, "raw", None)
    for key in ("choices", "candidates"):
        items = _get(raw, key)
        if items:
            try:
                reason = _get(items[0], "finish_reason")
            except (IndexError, KeyError, TypeError):
                reason = None
            if reason:
                return str(_enum_value(reason))
    extra = getattr(response, "additional_kwargs", None) or {}
    for key in ("stop_reason", "stopReason", "finish_reason"):
        reason = _get(raw, key) or _get(extra, key)
        if reason:
            return str(_enum_value(reason))
    return None


def response_message(response: Any) -> ChatMessage | None:
    """The output message of a ``ChatResponse`` or ``CompletionResponse``, with the finish reason the
    provider sent (none when it sent none)."""
    if response is None:
        return None
    message = getattr(response, "message", None)
    if message is not None:
        out = chat_message(message)
    else:
        out = ChatMessage(role="assistant", content=getattr(response, "text", None))
    out.finish_reason = finish_reason(response)
    return out


# -- usage and response identity ---------------------------------------------------
def _first(obj: Any, *keys: str) -> Any:
    for key in keys:
        value = _get(obj, key)
        if value is not None:
            return value
    return None


def usage(response: Any) -> Usage | None:
    """Token usage of a response, from ``raw.usage`` (OpenAI, Anthropic shapes),
    ``raw.usage_metadata`` (Gemini) or ``additional_kwargs`` token counts; ``None``
    when the provider reported none (the mocks report none)."""
    if response is None:
        return None
    raw = getattr(response, "raw", None)
    extra = getattr(response, "additional_kwargs", None) or {}
    for source in (_get(raw, "usage"), _get(raw, "usage_metadata"), extra, _get(extra, "usage")):
        if source is None:
            continue
        inp = token_count(_first(source, "prompt_tokens", "input_tokens", "prompt_token_count"))
        out = token_count(_first(source, "completion_tokens", "output_tokens", "candidates_token_count"))
        total = token_count(_first(source, "total_tokens", "total_token_count"))
        if inp is None and out is None and total is None:
            continue
        details = _first(source, "prompt_tokens_details")
        cached = token_count(_first(details, "cached_tokens")) if details is not None else None
        return Usage(input_tokens=inp, output_tokens=out, total_tokens=total,
                     cache_read_tokens=cached if cached is not None else
                     token_count(_first(source, "cache_read_input_tokens")),
                     cache_creation_tokens=token_count(_first(source, "cache_creation_input_tokens")))
    return None


def response_identity(response: Any) -> tuple[str | None, str | None]:
    """``(response model, response id)`` from the provider's raw response, when present."""
    raw = getattr(response, "raw", None)
    model, rid = _get(raw, "model"), _get(raw, "id")
    return (str(model) if model else None, str(rid) if rid else None)


# -- models -----------------------------------------------------------------------
def provider(instance: Any) -> str | None:
    """``gen_ai.provider.name`` from the class's package (``llama_index.llms.openai`` → ``openai``);
    ``None`` for classes outside a provider package (the core mocks, user classes)."""
    parts = type(instance).__module__.split(".")
    if len(parts) >= 3 and parts[0] == "llama_index" and parts[1] in ("llms", "embeddings"):
        return _PROVIDERS.get(parts[2], parts[2])
    return None


def model_name(instance: Any) -> str:
    """The model an LLM or embedding instance calls; its class name when it reports none
    (the mocks report ``unknown``)."""
    for name in (attr(instance, "model"), attr(instance, "model_name")):
        if isinstance(name, str) and name and name != "unknown":
            return name
    return type(instance).__name__


def _closed_model(cls: type) -> bool:
    """Whether ``cls`` is a pydantic model whose instances have only the attributes the class declares
    (fields, properties, class attributes): no extra fields, no ``__getattr__`` of its own. For those,
    the class answers ``hasattr`` for every instance — and a miss on an instance costs a raised
    ``AttributeError`` inside pydantic's ``__getattr__`` (a few µs)."""
    return (issubclass(cls, BaseModel) and getattr(cls, "__getattr__", None) is getattr(BaseModel, "__getattr__", None)
            and (getattr(cls, "model_config", None) or {}).get("extra") != "allow")


def _has(cls: type, name: str) -> bool:
    """``hasattr`` for the instances of a :func:`_closed_model` class."""
    return name in cls.model_fields or hasattr(cls, name)


@lru_cache(maxsize=1024)
def _event_data(cls: type, name: str) -> bool:
    """Whether attribute ``name`` of an instance of ``cls`` is one of a workflow event's dynamic fields
    (``workflows.events.Event``, whose ``__getattr__`` answers any name that is not a field, class attribute or
    private attribute from its private ``_data`` dict, raising ``AttributeError`` when it is not there: ~35,000
    instructions a miss). Any other read goes to the span layer's :func:`probes.attr`, which spares a plain
    pydantic model the same raise."""
    if not issubclass(cls, BaseModel) or name in cls.model_fields or hasattr(cls, name) or \
            name in (getattr(cls, "__private_attributes__", None) or ()):
        return False
    events = sys.modules.get("workflows.events")
    event = getattr(events, "Event", None) if events is not None else None
    return event is not None and getattr(cls, "__getattr__", None) is getattr(event, "__getattr__", _event_data)


def attr(obj: Any, name: str) -> Any:
    """``getattr(obj, name, None)`` (``None`` when the lookup raises), without the raised ``AttributeError`` a
    pydantic model or a workflow event pays for a miss (see :func:`_event_data`): a workflow step's event read
    for fields it may not have (``tool_id``, ``retry_messages``), an LLM for the model name field it may not
    declare."""
    if _event_data(type(obj), name):
        fields = object.__getattribute__(obj, "__dict__")
        return fields[name] if name in fields else _dynamic_fields(obj).get(name)
    return probes.attr(obj, name)


def has_attr(obj: Any, name: str) -> bool:
    """``hasattr(obj, name)`` (``False`` when the lookup raises), likewise without the raise (see :func:`attr`)."""
    if _event_data(type(obj), name):
        return name in object.__getattribute__(obj, "__dict__") or name in _dynamic_fields(obj)
    return probes.has_attr(obj, name)


@lru_cache(maxsize=256)
def _parameter_names(cls: type) -> tuple[str, ...]:
    """The names of :data:`_PARAMETERS` an instance of ``cls`` can have: for a closed pydantic model
    (every LlamaIndex LLM) the ones it declares, else all of them."""
    return tuple(k for k in _PARAMETERS if _has(cls, k)) if _closed_model(cls) else _PARAMETERS


def model_parameters(instance: Any, *, stream: bool) -> dict[str, Any]:
    """Request parameters an LLM instance is configured with (``temperature``, ``max_tokens`` …)."""
    params: dict[str, Any] = {}
    for key in _parameter_names(type(instance)):
        value = getattr(instance, key, None)
        if isinstance(value, (int, float, str, list, tuple)) and not isinstance(value, bool):
            params["max_tokens" if key == "max_new_tokens" else key] = value
    if stream:
        params["stream"] = True
    return params


def base_url(instance: Any) -> Any:
    """The URL an LLM's client connects to, as the integration holds it (``api_base``: OpenAI and its kin;
    ``base_url``: Ollama, Anthropic…), else ``None``."""
    return configured_url(instance, ("api_base", "base_url"))


# -- tools ------------------------------------------------------------------------
def tool_identity(tool: Any) -> tuple[str | None, str | None]:
    """``(name, description)`` of a LlamaIndex tool, from its ``metadata``."""
    metadata = getattr(tool, "metadata", None)
    return getattr(metadata, "name", None), getattr(metadata, "description", None)


def offered_tools(arguments: Mapping[str, Any]) -> list[ToolDefinition]:
    """The tools offered to a model call (case M-3): the ``tools`` keyword a function-calling
    LLM's ``chat``/``achat``/``stream_chat``/``astream_chat`` receives from ``*_chat_with_tools``
    (FunctionAgent, ReActAgent's function-calling peers). Each is a LlamaIndex ``BaseTool``
    (the core mocks, several integrations: read from its ``metadata``) or a provider-shaped
    spec (OpenAI's and Anthropic's integrations: see :mod:`.._provider_tools`)."""
    kwargs = arguments.get("kwargs")
    tools = (kwargs.get("tools") if isinstance(kwargs, Mapping) else None) or arguments.get("tools")
    if not isinstance(tools, (list, tuple)):
        return []
    out: list[ToolDefinition] = []
    for tool in tools:
        if isinstance(tool, Mapping):
            out.extend(tool_definitions([tool]))
            continue
        metadata = getattr(tool, "metadata", None)
        name = getattr(metadata, "name", None)
        if isinstance(name, str) and name:
            description = getattr(metadata, "description", None)
            out.append(ToolDefinition(name, description if isinstance(description, str) else None,
                                      _tool_parameters(metadata)))
    return out


_PARAMETERS_CACHE: dict[Any, Any] = {}


def _tool_parameters(metadata: Any) -> Any:
    """``ToolMetadata.get_parameters_dict()`` (the JSON Schema the LLM integrations send), kept per
    ``fn_schema`` class: building a pydantic JSON schema costs far more than the rest of a model span."""
    fn_schema = getattr(metadata, "fn_schema", None)
    try:
        return _PARAMETERS_CACHE[fn_schema]
    except (KeyError, TypeError):
        pass
    get = getattr(metadata, "get_parameters_dict", None)
    parameters = get() if callable(get) else None
    if len(_PARAMETERS_CACHE) >= 256:
        _PARAMETERS_CACHE.clear()
    try:
        _PARAMETERS_CACHE[fn_schema] = parameters
    except TypeError:  # an unhashable schema object: not kept
        pass
    return parameters


def tool_arguments(arguments: Mapping[str, Any]) -> Any:
    """A tool call's arguments from ``call(*args, **kwargs)``'s bound arguments.

    Keyword arguments form the object; positional ones, when any, go under ``args``.
    The workflow ``ctx`` that handoff tools receive is not an argument the model chose.
    """
    kwargs = dict(arguments.get("kwargs") or {})
    kwargs.pop("ctx", None)
    args = arguments.get("args")
    if args:
        kwargs["args"] = list(args)
    return kwargs


def tool_result(result: Any) -> Any:
    """The text a tool returned (``ToolOutput.content``), else the value itself."""
    content = getattr(result, "content", None)
    return content if content is not None else result


# -- retrieval, embeddings, queries --------------------------------------------------
def query_text(query: Any) -> Any:
    """The query string of a ``str`` or ``QueryBundle``."""
    return getattr(query, "query_str", query)


def top_k(retriever: Any) -> int | None:
    """How many nodes a retriever is set to return (``similarity_top_k`` of a vector index retriever), if it says."""
    value = getattr(retriever, "similarity_top_k", None)
    return value if type(value) is int else None


def documents(nodes: Iterable[Any]) -> list[dict[str, Any]]:
    """Retrieved ``NodeWithScore`` items as ``{id, content, score, metadata}`` documents."""
    docs = []
    for item in nodes or ():
        node = getattr(item, "node", item)
        get_content = getattr(node, "get_content", None)
        doc = {"id": getattr(node, "node_id", None),
               "content": get_content() if callable(get_content) else getattr(node, "text", None),
               "score": getattr(item, "score", None)}
        metadata = getattr(node, "metadata", None)
        if metadata:
            doc["metadata"] = metadata
        docs.append(doc)
    return docs


def embedding_texts(arguments: Mapping[str, Any]) -> list[str]:
    """The texts an embedding call embeds (``query``, ``text``, ``texts`` or ``queries``)."""
    for key in ("texts", "queries"):
        if arguments.get(key) is not None:
            return [str(t) for t in arguments[key]]
    for key in ("query", "text"):
        if arguments.get(key) is not None:
            return [str(arguments[key])]
    return []


def embedding_dimension(result: Any) -> int | None:
    """The vector size of an embedding result (one vector or a batch of them)."""
    if isinstance(result, list) and result:
        first = result[0]
        return len(first) if isinstance(first, list) else len(result)
    return None


def response_text(response: Any) -> Any:
    """The answer of a query engine, synthesizer, chat engine or agent result, as text where possible.

    ``Response`` → ``.response``; ``AgentOutput`` → its message's text; a
    workflow ``StopEvent`` → its ``result``; a streaming response that has not
    been consumed yet → ``None``.
    """
    if response is None:
        return None
    if has_attr(response, "response_gen"):  # StreamingResponse / AsyncStreamingResponse
        return getattr(response, "response_txt", None)
    if _is_stop_event(type(response)):
        response = getattr(response, "result", None)
    inner = attr(response, "response")
    if inner is not None:
        message_text = attr(inner, "content")
        if message_text is not None or has_attr(inner, "role"):
            return message_text
        return inner
    message = attr(response, "message")
    if message is not None and has_attr(message, "role"):
        return attr(message, "content")
    return response


def run_input(arguments: Mapping[str, Any]) -> Any:
    """What a workflow run was started with: an agent's user message, else the start event."""
    start = arguments.get("start_event")
    if start is None:
        return None
    user_msg = attr(start, "user_msg")
    if user_msg is not None:
        return getattr(user_msg, "content", user_msg)
    return start


def run_messages(arguments: Mapping[str, Any]) -> list[ChatMessage] | None:
    """An agent run's input as chat messages, as the run puts them in its memory and a model span's input has
    them: its ``chat_history`` (``run(chat_history=[...])``, the conversation so far) then its user message (a
    LlamaIndex ``ChatMessage``'s blocks: media stay media; a text one as a user message); ``None`` when there is
    no history and the user message is text or none (the value is then the input)."""
    start = arguments.get("start_event")
    if start is None:
        return None
    user_msg = attr(start, "user_msg")
    history = attr(start, "chat_history")
    messages = [chat_message(m) for m in history if _is_message(m)] if isinstance(history, (list, tuple)) else []
    if user_msg is not None and not isinstance(user_msg, str) and _is_message(user_msg):
        messages.append(chat_message(user_msg))
    elif messages and isinstance(user_msg, str) and user_msg:
        messages.append(ChatMessage("user", user_msg))
    return messages or None


def step_event(arguments: Mapping[str, Any]) -> Any:
    """The event a workflow step was called with (``ev`` by convention), else all its arguments but ``ctx``."""
    if "ev" in arguments:
        return arguments["ev"]
    return {k: v for k, v in arguments.items() if k != "ctx"} or None


_RUNTIME_FIELDS = frozenset({"ctx", "context", "memory"})  # runtime objects, not data
_PLAIN = frozenset({str, int, float, bool, type(None), dict})  # never a message, a list or a model


@lru_cache(maxsize=1024)
def _is_stop_event(cls: type) -> bool:
    """Whether ``cls`` is a workflow ``StopEvent`` (by name: the workflow package is not imported here)."""
    return any(c.__name__ == "StopEvent" for c in cls.__mro__)


@lru_cache(maxsize=1024)
def _event_fields(cls: type) -> tuple[str, ...] | None:
    """The declared fields of a pydantic event class, ``None`` for anything else."""
    fields = getattr(cls, "model_fields", None)
    return tuple(fields) if fields is not None else None


@lru_cache(maxsize=1024)
def _message_class(cls: type) -> bool | None:
    """Whether instances of ``cls`` are chat messages (have ``role`` and ``blocks``), when the class
    alone decides it (a plain value, a :func:`_closed_model`); ``None``: ask the instance."""
    if cls in _PLAIN or cls is list or cls is tuple:  # a built-in list has no role (no has_attr probe for one)
        return False
    if _closed_model(cls):
        return _has(cls, "role") and _has(cls, "blocks")
    return None


def _is_message(value: Any) -> bool:
    known = _message_class(type(value))
    if known is not None:
        return known
    return has_attr(value, "role") and has_attr(value, "blocks")


def _compact(value: Any, depth: int) -> Any:
    if type(value) in _PLAIN:  # the common case, and every check below would say "as is"
        return value
    if _is_message(value):
        return value.content
    if isinstance(value, (list, tuple)):
        if any(_is_message(v) for v in value):
            return f"[{len(value)} messages]"
        return [_compact(v, depth - 1) for v in value] if depth > 0 else value
    fields = _event_fields(type(value))
    if fields is not None and depth > 0:
        return {name: _compact(getattr(value, name, None), depth - 1) for name in fields
                if name not in _RUNTIME_FIELDS}
    return value


def rejected_feedback(result: Any) -> str | None:
    """What a workflow agent's step said about an answer it rejected, or ``None`` when it did not reject one: an
    ``AgentOutput`` with ``retry_messages`` (the rejected message, then the feedback the model is asked again
    with: ``ReActAgent``'s output it cannot parse, or an empty answer) → the feedback's text."""
    retry = attr(result, "retry_messages")
    if not retry or not isinstance(retry, list) or not has_attr(result, "current_agent_name"):
        return None
    return str(getattr(retry[-1], "content", None) or "")


def unknown_tool_call(result: Any) -> tuple[Any, Any, Any, str] | None:
    """``(tool name, call id, arguments, answer)`` when a workflow agent's ``call_tool`` step answered a call naming
    no tool it has, else ``None``: its ``ToolCallResult`` holds a ``ToolOutput`` with ``is_error`` and no
    ``raw_output`` ("Tool X not found…"; a tool that raised has the error's text as ``raw_output``). The caller
    checks that no tool ran in the step."""
    output = attr(result, "tool_output")
    if output is None or attr(output, "is_error") is not True or attr(output, "raw_output") is not None:
        return None
    return (attr(result, "tool_name"), attr(result, "tool_id"), attr(result, "tool_kwargs"),
            str(attr(output, "content") or ""))


def event_payload(event: Any) -> Any:
    """A workflow event as a step span's input or output: ``{"event": class name, field: value…}``.

    A chat message becomes its text and a chat history its message count (the
    model spans carry the messages themselves: recording every history on every
    step would grow with the square of the conversation); runtime objects
    (``ctx``, ``memory``) are left out. Anything that is not an event passes as is.
    """
    cls = type(event)
    names = _payload_fields(cls)
    if names is None:
        return event
    payload: dict[str, Any] = {"event": cls.__name__}
    for name in names:
        value = getattr(event, name, None)
        payload[name] = value if type(value) in _PLAIN else _compact(value, 2)
    dynamic = _dynamic_fields(event)
    if dynamic or _is_stop_event(cls):  # (a dynamic field named like a declared one takes its value in place)
        extra = dict(dynamic)
        if _is_stop_event(cls):
            extra["result"] = getattr(event, "result", None)
        for name, value in extra.items():
            if name not in _RUNTIME_FIELDS and not name.startswith("_"):
                payload[name] = _compact(value, 2)
    return payload


@lru_cache(maxsize=1024)
def _payload_fields(cls: type) -> tuple[str, ...] | None:
    """The declared fields of a pydantic event class a payload records (not runtime objects or private
    names), in declaration order; ``None`` for anything else."""
    fields = _event_fields(cls)
    return None if fields is None else tuple(n for n in fields if n not in _RUNTIME_FIELDS and not n.startswith("_"))


def _dynamic_fields(event: Any) -> Any:
    """A workflow event's undeclared fields (its private ``_data`` dict), read from pydantic's private
    storage directly: ``getattr(event, "_data")`` goes through the event's ``__getattr__`` (~30× slower)."""
    private = getattr(event, "__pydantic_private__", None)
    data = private.get("_data") if isinstance(private, dict) else getattr(event, "_data", None)
    return data or {}
