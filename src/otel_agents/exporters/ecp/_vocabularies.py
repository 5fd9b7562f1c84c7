"""Reading spans recorded by other instrumentations: one vocabulary reader per span.

The fold reads the attributes our span layer writes (``otel_agents.span.kind``,
OTel GenAI ``gen_ai.*``, OpenInference ``input.value``/``output.value``). A span
made by someone else carries one of these vocabularies instead, chosen by what
it carries, first match wins (ours is checked before this module is asked):

1. OTel GenAI semantic conventions — ``gen_ai.operation.name`` (v1.41; older
   ``gen_ai.system`` and ``gen_ai.usage.prompt_tokens``/``completion_tokens``
   are read too). PydanticAI's native instrumentation is this vocabulary plus a
   few attributes of its own (``final_result``, ``tool_arguments``,
   ``tool_response``, ``agent_name``), read here as well.
2. OpenInference — ``openinference.span.kind``.
3. OpenLLMetry (Traceloop) — ``traceloop.span.kind``, and ``llm.request.type``
   on its model spans. Its newer instrumentations (LangChain) write OTel GenAI
   kinds too; their ``traceloop.entity.input``/``output`` are read all the same.

:func:`read_foreign` gives the span's kind in our vocabulary and copies the
facts it finds into the span's attribute dict under the names the fold reads
(never overwriting a key already there), so the rest of the fold stays one
code path. ``docs/ecp.md`` has the table: which attribute fills which envelope
field, per vocabulary, and what is lost without it. A span of none of these
vocabularies (an HTTP span) gets ``None``: it is folded as a plain span, as
before.
"""

from __future__ import annotations

import json
from typing import Any

from ...semconv import attributes as A
from ...semconv.mapping import OP_INVOKE_WORKFLOW
from ._json import attribute_json

# gen_ai.operation.name → our kind (OTel GenAI semconv v1.41; ``create_agent`` is not a run of the agent).
_GENAI_KINDS = {
    "chat": "model", "text_completion": "model", "generate_content": "model",
    "embeddings": "embedding", "execute_tool": "tool", "invoke_agent": "agent",
    "invoke_workflow": "chain", "retrieval": "retriever",
}
# openinference.span.kind → our kind (OpenInference semantic conventions).
_OPENINFERENCE_KINDS = {
    "AGENT": "agent", "CHAIN": "chain", "LLM": "model", "TOOL": "tool", "RETRIEVER": "retriever",
    "RERANKER": "retriever", "EMBEDDING": "embedding", "GUARDRAIL": "chain", "EVALUATOR": "chain",
    "PROMPT": "chain",
}
# traceloop.span.kind → our kind (OpenLLMetry's decorators and framework instrumentations).
_TRACELOOP_KINDS = {"workflow": "chain", "task": "chain", "agent": "agent", "tool": "tool"}
# llm.request.type of OpenLLMetry's model spans.
_TRACELOOP_MODEL_TYPES = {"chat": "model", "completion": "model", "embedding": "embedding"}

# Attribute names of the peers that are not in our semconv module.
GEN_AI_SYSTEM = "gen_ai.system"                          # OTel GenAI before v1.37 (now gen_ai.provider.name)
GEN_AI_USAGE_PROMPT_TOKENS = "gen_ai.usage.prompt_tokens"
GEN_AI_USAGE_COMPLETION_TOKENS = "gen_ai.usage.completion_tokens"
PYDANTIC_AI_FINAL_RESULT = "final_result"                # PydanticAI: the agent run's output
PYDANTIC_AI_TOOL_ARGUMENTS = "tool_arguments"            # PydanticAI with InstrumentationSettings(version=2)
PYDANTIC_AI_TOOL_RESPONSE = "tool_response"
PYDANTIC_AI_AGENT_NAME = "agent_name"
PYDANTIC_AI_MODEL_NAME = "model_name"
TRACELOOP_SPAN_KIND = "traceloop.span.kind"
TRACELOOP_ENTITY_NAME = "traceloop.entity.name"
TRACELOOP_ENTITY_INPUT = "traceloop.entity.input"
TRACELOOP_ENTITY_OUTPUT = "traceloop.entity.output"
LLM_REQUEST_TYPE = "llm.request.type"
CREWAI_CREW_RESULT = "crewai.crew.result"                # OpenLLMetry's CrewAI: the crew's answer (its workflow span)
LLM_USAGE_TOTAL_TOKENS = "llm.usage.total_tokens"


def read_foreign(a: dict[str, Any]) -> str | None:
    """Our kind for a span of another vocabulary, or ``None`` (no vocabulary we read).

    Args:
        a: the span's attributes, a private ``dict`` copy: the facts found are
            added to it under the names the fold reads (``gen_ai.*``,
            ``input.value``/``output.value``); keys already present are kept,
            except an OpenInference tool's ``output.value`` holding a framework's
            result object, which is replaced by the result inside it.

    A value a vocabulary does not define (an unknown ``gen_ai.operation.name``)
    lets the next vocabulary try.
    """
    op = a.get(A.GEN_AI_OPERATION_NAME)
    kind = _GENAI_KINDS.get(op) if isinstance(op, str) else None
    if kind is not None:
        if TRACELOOP_SPAN_KIND in a:  # OpenLLMetry's LangChain: the run's input and output are its entity's
            _read_traceloop_entity(a, kind)
        _read_genai(a, kind)
        return kind
    oi = a.get(A.OPENINFERENCE_SPAN_KIND)
    kind = _OPENINFERENCE_KINDS.get(oi.upper()) if isinstance(oi, str) else None
    if kind is not None:
        return _read_openinference(a, kind)
    tl = a.get(TRACELOOP_SPAN_KIND)
    if tl is None:
        tl = a.get(LLM_REQUEST_TYPE)
        kind = _TRACELOOP_MODEL_TYPES.get(tl) if isinstance(tl, str) else None
    else:
        kind = _TRACELOOP_KINDS.get(tl) if isinstance(tl, str) else None
    if kind is not None:
        kind = _read_traceloop(a, kind)
    return kind


_KIND_KEYS = (A.GEN_AI_OPERATION_NAME, A.OPENINFERENCE_SPAN_KIND, TRACELOOP_SPAN_KIND, LLM_REQUEST_TYPE)


def has_foreign_kind(a: Any) -> bool:
    """Whether attributes ``a`` (a mapping) carry the kind attribute of a vocabulary :func:`read_foreign`
    reads (a span that may be a step of another instrumentation's run; a cheap test, no copy)."""
    return any(key in a for key in _KIND_KEYS)


def read_ours(a: dict[str, Any], kind: str, name: str) -> None:
    """Fill in the facts the fold reads on one of our spans written with fewer than all three
    vocabularies (``OTEL_AGENTS_VOCABULARIES``): copied, never overwriting, into the ``gen_ai.*`` and
    ``input.value``/``output.value`` names the fold reads, from whichever vocabulary was written (an agent's
    or a workflow's input and output from its ``gen_ai.input.messages``/``gen_ai.output.messages``).

    Args:
        a: the span's attributes (a private ``dict`` copy, changed in place).
        kind: our kind (``otel_agents.span.kind``).
        name: the span name; without ``gen_ai.operation.name`` the operation is read from it (our span
            names are ``{operation} {target}``, OTel GenAI v1.41), when it is an operation of ``kind``.

    Cost: nothing for a span that carries all three vocabularies (the default); a few look-ups else.
    """
    if A.OPENINFERENCE_SPAN_KIND in a and A.LANGFUSE_OBSERVATION_TYPE in a and \
            (A.GEN_AI_OPERATION_NAME in a or A.GEN_AI_WORKFLOW_NAME in a):
        return  # all three written
    if A.GEN_AI_OPERATION_NAME not in a and A.OPENINFERENCE_SPAN_KIND in a:  # OpenInference without OTel GenAI
        op = (name or "").split(" ", 1)[0]
        if _GENAI_KINDS.get(op) == ("tool" if kind == "skill" else kind):
            a[A.GEN_AI_OPERATION_NAME] = op
    if kind == "model" or kind == "embedding":
        _read_openinference_model(a, kind)
        if A.GEN_AI_OUTPUT_MESSAGES not in a and a.get(A.OUTPUT_MIME_TYPE) == A.MIME_JSON and \
                not any(key.startswith(_OI_OUTPUT_PREFIX) for key in a):
            a[A.GEN_AI_OUTPUT_MESSAGES] = a.get(A.OUTPUT_VALUE)  # GenAI messages: the output requested tools
        elif A.OUTPUT_VALUE not in a and A.GEN_AI_OUTPUT_MESSAGES in a:  # gen_ai alone: the span layer's output.value
            a[A.OUTPUT_VALUE] = a[A.GEN_AI_OUTPUT_MESSAGES]              # of a model span is these messages
            a[A.OUTPUT_MIME_TYPE] = A.MIME_JSON
    elif kind == "tool" or kind == "skill":
        _copy(a, A.TOOL_NAME, A.GEN_AI_TOOL_NAME)
        _copy(a, A.TOOL_ID, A.GEN_AI_TOOL_CALL_ID)
        if A.GEN_AI_TOOL_CALL_ARGUMENTS not in a and A.GEN_AI_TOOL_CALL_RESULT not in a:  # gen_ai not written
            _copy(a, A.INPUT_VALUE, A.GEN_AI_TOOL_CALL_ARGUMENTS)  # the span layer writes the same arguments to both
        elif A.OUTPUT_VALUE not in a and A.GEN_AI_TOOL_CALL_RESULT in a:  # gen_ai alone: the same result as text
            a[A.OUTPUT_VALUE] = a[A.GEN_AI_TOOL_CALL_RESULT]
            if a.get(A.OTEL_AGENTS_TOOL_RESULT_JSON) is True:  # the JSON of a structured value, not a string
                a[A.OUTPUT_MIME_TYPE] = A.MIME_JSON
    elif kind == "retriever" and A.GEN_AI_RETRIEVAL_DOCUMENTS not in a:
        _copy(a, A.OUTPUT_VALUE, A.GEN_AI_RETRIEVAL_DOCUMENTS)
    elif kind == "agent" or (kind == "chain" and a.get(A.GEN_AI_OPERATION_NAME) == OP_INVOKE_WORKFLOW):
        if A.INPUT_VALUE not in a and A.GEN_AI_INPUT_MESSAGES in a:
            _read_run_messages(a, A.GEN_AI_INPUT_MESSAGES, A.INPUT_VALUE, A.INPUT_MIME_TYPE)
        if A.OUTPUT_VALUE not in a and A.GEN_AI_OUTPUT_MESSAGES in a:
            _read_run_messages(a, A.GEN_AI_OUTPUT_MESSAGES, A.OUTPUT_VALUE, A.OUTPUT_MIME_TYPE)


_OI_OUTPUT_PREFIX = A.LLM_OUTPUT_MESSAGES + "."


def _one_text(raw: Any) -> str | None:
    """The text of GenAI messages JSON ``raw`` that is one message of one text part (what the span layer writes
    for an input or output given as a value), else ``None``."""
    try:
        messages = attribute_json(raw) if isinstance(raw, str) else None
    except ValueError:
        return None
    parts = messages[0].get("parts") if isinstance(messages, list) and len(messages) == 1 and \
        isinstance(messages[0], dict) else None
    if isinstance(parts, list) and len(parts) == 1 and isinstance(parts[0], dict) and \
            parts[0].get("type") == "text" and isinstance(parts[0].get("content"), str):
        return parts[0]["content"]
    return None


def _read_run_messages(a: dict[str, Any], source: str, value_key: str, mime_key: str) -> None:
    """OTel GenAI alone: the span layer writes an agent's (or a workflow's) input as one user message and its
    output as one assistant message, each of one text part, in ``gen_ai.input.messages`` /
    ``gen_ai.output.messages`` (a structured value as its JSON text); that text is its ``input.value`` /
    ``output.value``, JSON when it is a JSON object or array (as all three vocabularies write a structured
    value). Other messages (the conversation a framework gave the agent) are read as messages."""
    raw = a[source]
    text = _one_text(raw)
    if text is not None:
        a[value_key] = text
        if text.lstrip()[:1] in ("{", "["):
            try:
                attribute_json(text)
                a[mime_key] = A.MIME_JSON
            except ValueError:
                pass
        return
    a[value_key] = raw
    a[mime_key] = A.MIME_JSON


def _copy(a: dict[str, Any], source: str, target: str) -> None:
    """``a[target] = a[source]`` unless ``target`` is set or ``source`` missing."""
    if target not in a:
        value = a.get(source)
        if value is not None:
            a[target] = value


def _json_text(value: Any) -> Any:
    """A value for an attribute the fold parses as JSON: text as is, anything else encoded."""
    if isinstance(value, str):
        return value
    try:
        return json.dumps(value, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        return str(value)


def _read_genai(a: dict[str, Any], kind: str) -> None:
    _copy(a, GEN_AI_SYSTEM, A.GEN_AI_PROVIDER_NAME)
    if kind == "model":
        _copy(a, GEN_AI_USAGE_PROMPT_TOKENS, A.GEN_AI_USAGE_INPUT_TOKENS)
        _copy(a, GEN_AI_USAGE_COMPLETION_TOKENS, A.GEN_AI_USAGE_OUTPUT_TOKENS)
    elif kind == "tool":  # PydanticAI's own names (instrumentation version 2)
        _copy(a, PYDANTIC_AI_TOOL_ARGUMENTS, A.GEN_AI_TOOL_CALL_ARGUMENTS)
        _copy(a, PYDANTIC_AI_TOOL_RESPONSE, A.GEN_AI_TOOL_CALL_RESULT)
    elif kind == "agent":
        _copy(a, PYDANTIC_AI_AGENT_NAME, A.GEN_AI_AGENT_NAME)
        _copy(a, PYDANTIC_AI_MODEL_NAME, A.GEN_AI_REQUEST_MODEL)
    if A.OUTPUT_VALUE not in a and kind in ("agent", "chain"):
        # The run's answer: PydanticAI's final_result (text, or JSON of a structured output), else the
        # agent's gen_ai.output.messages (semconv: the messages it returned).
        if PYDANTIC_AI_FINAL_RESULT in a:
            a[A.OUTPUT_VALUE] = a[PYDANTIC_AI_FINAL_RESULT]
        elif CREWAI_CREW_RESULT in a:
            a[A.OUTPUT_VALUE] = a[CREWAI_CREW_RESULT]
        elif A.GEN_AI_OUTPUT_MESSAGES in a:
            a[A.OUTPUT_VALUE] = a[A.GEN_AI_OUTPUT_MESSAGES]
            a[A.OUTPUT_MIME_TYPE] = A.MIME_JSON
    elif A.OUTPUT_VALUE not in a:
        # A run that is one model request or one tool call (a provider client's instrumentation alone) answers
        # with what the span returned, as ours: the model's output messages, the tool's result.
        if kind == "model" and A.GEN_AI_OUTPUT_MESSAGES in a:
            a[A.OUTPUT_VALUE] = a[A.GEN_AI_OUTPUT_MESSAGES]
            a[A.OUTPUT_MIME_TYPE] = A.MIME_JSON
        elif kind == "tool":
            _copy(a, A.GEN_AI_TOOL_CALL_RESULT, A.OUTPUT_VALUE)


_OI_MODEL_CALL_KEYS = (A.LLM_INPUT_MESSAGES + ".", A.LLM_OUTPUT_MESSAGES + ".", "llm.token_count.")


def _read_openinference(a: dict[str, Any], kind: str) -> str | None:
    if kind == "model":
        # LlamaIndex marks helpers such as ``_prepare_chat_with_tools`` LLM too: a model span carries
        # messages or token counts; one with neither is not a request to the model.
        if not any(key.startswith(_OI_MODEL_CALL_KEYS) for key in a):
            return None
    if kind == "model" or kind == "embedding":
        _read_openinference_model(a, kind)
        _copy(a, A.LLM_SYSTEM, A.GEN_AI_PROVIDER_NAME)
    elif kind == "tool":
        _copy(a, A.TOOL_CALL_ID, A.GEN_AI_TOOL_CALL_ID)
        _read_openinference_tool(a)
    elif kind == "agent" or kind == "chain":
        _read_crew_output(a)
    return kind


def _read_openinference_model(a: dict[str, Any], kind: str) -> None:
    """An OpenInference model or embedding span's facts under the OTel GenAI names: the model, the provider, the
    token counts and the finish reason (``llm.finish_reason``, one per span, as a one-item
    ``gen_ai.response.finish_reasons``). Never overwriting what is there."""
    _copy(a, A.LLM_MODEL_NAME if kind == "model" else A.EMBEDDING_MODEL_NAME, A.GEN_AI_REQUEST_MODEL)
    _copy(a, A.LLM_PROVIDER, A.GEN_AI_PROVIDER_NAME)
    _copy(a, A.LLM_TOKEN_COUNT_PROMPT, A.GEN_AI_USAGE_INPUT_TOKENS)
    _copy(a, A.LLM_TOKEN_COUNT_COMPLETION, A.GEN_AI_USAGE_OUTPUT_TOKENS)
    reason = a.get(A.LLM_FINISH_REASON)
    if A.GEN_AI_RESPONSE_FINISH_REASONS not in a and isinstance(reason, str) and reason:
        a[A.GEN_AI_RESPONSE_FINISH_REASONS] = (reason,)


def _read_crew_output(a: dict[str, Any]) -> None:
    """A CrewAI ``CrewOutput`` or ``TaskOutput`` recorded whole as the output (OpenInference's CrewAI): the
    answer is its ``raw`` text (as the crew returns it: ``str(output)``)."""
    value = a.get(A.OUTPUT_VALUE)
    if not (isinstance(value, str) and a.get(A.OUTPUT_MIME_TYPE) == A.MIME_JSON and '"raw"' in value and
            ('"tasks_output"' in value or '"expected_output"' in value)):  # no parse for any other output
        return
    out = _parse(value)
    if isinstance(out, dict) and isinstance(out.get("raw"), str) and ("tasks_output" in out or "expected_output" in out):
        a[A.OUTPUT_VALUE] = out["raw"]
        del a[A.OUTPUT_MIME_TYPE]


def _parse(value: Any) -> Any:
    if not isinstance(value, str) or not value.startswith(("{", "[")):
        return None
    try:
        return attribute_json(value)
    except ValueError:
        return None


def _read_openinference_tool(a: dict[str, Any]) -> None:
    """The framework objects OpenInference records whole on a tool span, unwrapped: a call's
    ``{"args", "kwargs"}`` input (LlamaIndex) gives the arguments; a LangChain ``ToolMessage``
    (``{"type": "tool", "data": {...}}``) gives the result text and the call id; a LlamaIndex
    ``ToolOutput`` (``raw_input``, ``raw_output``) the arguments and the result."""
    if A.GEN_AI_TOOL_CALL_ARGUMENTS not in a:
        arguments = _call_arguments(_parse(a.get(A.INPUT_VALUE)))
        if arguments is not None:
            a[A.GEN_AI_TOOL_CALL_ARGUMENTS] = _json_text(arguments)
    out = _parse(a.get(A.OUTPUT_VALUE))
    if not isinstance(out, dict):
        return
    data = out.get("data")
    if out.get("type") == "tool" and isinstance(data, dict):  # a LangChain ToolMessage
        if A.GEN_AI_TOOL_CALL_ID not in a and isinstance(data.get("tool_call_id"), str):
            a[A.GEN_AI_TOOL_CALL_ID] = data["tool_call_id"]
        result = data.get("content")
    elif "raw_output" in out and "tool_name" in out:  # a LlamaIndex ToolOutput
        if A.GEN_AI_TOOL_CALL_ARGUMENTS not in a:
            arguments = _call_arguments(out.get("raw_input"))
            if arguments is not None:
                a[A.GEN_AI_TOOL_CALL_ARGUMENTS] = _json_text(arguments)
        result = out.get("raw_output")
    else:
        return
    if isinstance(result, str):
        a[A.OUTPUT_VALUE] = result
        a.pop(A.OUTPUT_MIME_TYPE, None)
    else:
        a[A.OUTPUT_VALUE], a[A.OUTPUT_MIME_TYPE] = _json_text(result), A.MIME_JSON


# The parameters of a tool's call method OpenInference records beside the tool's own arguments: smolagents'
# ``Tool.__call__(*args, sanitize_inputs_outputs=..., **kwargs)``.
_CALL_KEYS = frozenset({"args", "kwargs", "sanitize_inputs_outputs"})


def _call_arguments(data: Any) -> dict[str, Any] | None:
    """The keyword arguments of a recorded Python call ``{"args": [...], "kwargs": {...}}`` (only when
    there are no positional ones), else ``None``."""
    if isinstance(data, dict) and data and set(data) <= _CALL_KEYS and not data.get("args"):
        kwargs = data.get("kwargs")
        if isinstance(kwargs, dict):
            return kwargs
    return None


def _read_traceloop(a: dict[str, Any], kind: str) -> str:
    """OpenLLMetry's kinds; returns the span's kind: a ``task`` with ``tool.name`` is a tool call (its
    LlamaIndex instrumentation marks every span ``task``; a workflow agent's ``call_tool`` step names the tool)."""
    if kind == "model" or kind == "embedding":
        _copy(a, GEN_AI_SYSTEM, A.GEN_AI_PROVIDER_NAME)
        _copy(a, GEN_AI_USAGE_PROMPT_TOKENS, A.GEN_AI_USAGE_INPUT_TOKENS)
        _copy(a, GEN_AI_USAGE_COMPLETION_TOKENS, A.GEN_AI_USAGE_OUTPUT_TOKENS)
        _copy(a, LLM_USAGE_TOTAL_TOKENS, A.LLM_TOKEN_COUNT_TOTAL)
        return kind
    if kind == "chain" and isinstance(a.get(A.TOOL_NAME), str):
        kind = "tool"
        _copy(a, A.TOOL_NAME, A.GEN_AI_TOOL_NAME)
        _copy(a, LLAMA_INDEX_TOOL_ARGUMENTS, A.GEN_AI_TOOL_CALL_ARGUMENTS)
    name_key = A.GEN_AI_AGENT_NAME if kind == "agent" else A.GEN_AI_TOOL_NAME if kind == "tool" else None
    if name_key is not None:
        _copy(a, TRACELOOP_ENTITY_NAME, name_key)
    _read_traceloop_entity(a, kind)
    return kind


def _read_traceloop_entity(a: dict[str, Any], kind: str) -> None:
    """``traceloop.entity.input``/``output`` unwrapped (:func:`_traceloop_entity`) as ``input.value`` and
    ``output.value``; on a tool span also the call id they carry, and its arguments where OpenLLMetry wrote
    the whole entity input as ``gen_ai.tool.call.arguments`` (LangChain)."""
    raw_input = a.get(TRACELOOP_ENTITY_INPUT)
    entity_input, call_id = _traceloop_entity(raw_input)
    if entity_input is not None and A.INPUT_VALUE not in a:
        a[A.INPUT_VALUE], a[A.INPUT_MIME_TYPE] = _json_text(entity_input), A.MIME_JSON
    entity_output, output_call_id = _traceloop_entity(a.get(TRACELOOP_ENTITY_OUTPUT))
    if entity_output is not None and A.OUTPUT_VALUE not in a:
        if isinstance(entity_output, str):
            a[A.OUTPUT_VALUE] = entity_output
        else:
            a[A.OUTPUT_VALUE], a[A.OUTPUT_MIME_TYPE] = _json_text(entity_output), A.MIME_JSON
    if kind == "tool":
        call_id = call_id or output_call_id
        if call_id is not None and A.GEN_AI_TOOL_CALL_ID not in a:
            a[A.GEN_AI_TOOL_CALL_ID] = call_id
        if entity_input is not None and raw_input is not None and a.get(A.GEN_AI_TOOL_CALL_ARGUMENTS) == raw_input:
            a[A.GEN_AI_TOOL_CALL_ARGUMENTS] = _json_text(entity_input)


# The JSON OpenLLMetry's instrumentations wrap an entity's input or output in, by its keys: the value
# inside, and where the call id is (LangChain's callbacks: a chain's ``inputs``/``outputs``, a tool's
# ``input_str``/``inputs`` and ``output`` beside ``tags``, ``metadata`` and the callback's ``kwargs``).
_LANGCHAIN_WRAPPERS = (
    ("inputs", frozenset({"inputs", "tags", "metadata", "kwargs"})),
    ("outputs", frozenset({"outputs", "kwargs"})),
    ("input_str", frozenset({"input_str", "inputs", "tags", "metadata", "kwargs"})),
    ("output", frozenset({"output", "kwargs"})),
)
LLAMA_INDEX_TOOL_ARGUMENTS = "tool.arguments"  # OpenLLMetry's LlamaIndex: a tool call's arguments (JSON)


def _traceloop_entity(raw: Any) -> tuple[Any, str | None]:
    """An OpenLLMetry ``traceloop.entity.input``/``output`` value, unwrapped, and the tool call id it holds
    (or ``None``):

    * the decorators (``@workflow``, ``@task``, ``@tool``) record a call's ``{"args": [...], "kwargs":
      {...}}``: the keyword arguments are the tool's arguments; a lone positional argument is the value;
    * LangChain's callbacks wrap the value with the callback's ``tags``, ``metadata`` and ``kwargs``
      (:data:`_LANGCHAIN_WRAPPERS`); a tool's input is its ``inputs`` object (else its ``input_str``), its
      output a ``ToolMessage`` (the result is its content) or the value the tool returned;
    * MCP's ``tools/call`` records ``{"tool_name", "arguments"}``: the arguments;
    * LlamaIndex's ``call_tool`` step returns a ``ToolCallResult``: the result is the tool's raw output.
    """
    if not isinstance(raw, str):
        return raw, None
    try:
        data = attribute_json(raw)
    except ValueError:
        return raw, None
    if not isinstance(data, dict) or not data:
        return data, None
    keys = set(data)
    if keys <= {"args", "kwargs"}:
        args, kwargs = data.get("args") or [], data.get("kwargs") or {}
        if kwargs or not args:
            return kwargs, None
        return (args[0] if len(args) == 1 else args), None
    for key, wrapper in _LANGCHAIN_WRAPPERS:
        if key in data and keys <= wrapper:
            extra = data.get("kwargs")
            call_id = _str_or_none(extra.get("tool_call_id")) if isinstance(extra, dict) else None
            value = data[key]
            if key == "input_str" and isinstance(data.get("inputs"), dict):
                value = data["inputs"]
            message = _langchain_tool_message(value)
            if message is not None:
                return message.get("content"), call_id or _str_or_none(message.get("tool_call_id"))
            return value, call_id
    if keys == {"tool_name", "arguments"}:  # MCP's tools/call request (client and FastMCP server side)
        return data["arguments"], None
    if "tool_output" in data and "tool_name" in data:  # a LlamaIndex ToolCallResult
        output = data["tool_output"]
        result = output.get("raw_output", output) if isinstance(output, dict) else output
        return result, _str_or_none(data.get("tool_id"))
    return data, None


def _langchain_tool_message(value: Any) -> dict[str, Any] | None:
    """The fields of a LangChain ``ToolMessage`` serialised by ``dumpd`` (``{"lc": 1, "type":
    "constructor", "id": [..., "ToolMessage"], "kwargs": {...}}``), else ``None``."""
    if isinstance(value, dict) and value.get("lc") and isinstance(value.get("kwargs"), dict) and \
            value["kwargs"].get("type") == "tool":
        return value["kwargs"]
    return None


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None
