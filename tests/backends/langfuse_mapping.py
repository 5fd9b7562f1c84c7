"""Langfuse's documented OpenTelemetry mapping, restated as small functions to check our spans against.

Sources: Langfuse's "OpenTelemetry → property mapping" documentation and, where the docs stop at
"non-exhaustive", the rules of its OTel ingestion (observation-type mapper and input/output,
usage and model extraction) as of Langfuse v3. Only what can apply to attributes we might emit is
restated here; vendor-specific branches (Vercel AI SDK, Logfire, LiveKit, Vertex ADK ...) appear
only as the keys that would shadow ours.

This is a conformance check of our attributes against that mapping, not a Langfuse server: a
change on Langfuse's side needs this file updated.
"""

from __future__ import annotations

from typing import Any

# 1. The observation type: the first rule that yields a known type wins; "SPAN" otherwise.
BY_LANGFUSE_TYPE = {t: t.upper() for t in ("span", "generation", "event", "embedding", "agent", "tool", "chain",
                                          "retriever", "guardrail", "evaluator")}
BY_OPENINFERENCE_KIND = {"CHAIN": "CHAIN", "RETRIEVER": "RETRIEVER", "LLM": "GENERATION", "EMBEDDING": "EMBEDDING",
                         "AGENT": "AGENT", "TOOL": "TOOL", "GUARDRAIL": "GUARDRAIL", "EVALUATOR": "EVALUATOR"}
BY_GENAI_OPERATION = {"chat": "GENERATION", "completion": "GENERATION", "text_completion": "GENERATION",
                      "generate_content": "GENERATION", "generate": "GENERATION", "embeddings": "EMBEDDING",
                      "invoke_agent": "AGENT", "create_agent": "AGENT", "execute_tool": "TOOL"}
# `invoke_workflow` and `retrieval` are not mapped: a chain or retriever needs one of the other two keys.
MODEL_KEYS = ("langfuse.observation.model.name", "gen_ai.request.model", "gen_ai.response.model", "llm.model_name",
              "model")


def _meaningful(value: Any) -> bool:
    return value not in (None, "") and not (isinstance(value, (list, dict)) and not value)


def type_from(key: str, attrs: dict[str, Any]) -> str | None:
    """The type one source alone gives (``None``: the key is absent or its value unmapped)."""
    table = {"langfuse.observation.type": BY_LANGFUSE_TYPE, "openinference.span.kind": BY_OPENINFERENCE_KIND,
             "gen_ai.operation.name": BY_GENAI_OPERATION}[key]
    value = attrs.get(key)
    return table.get(value) if _meaningful(value) else None


def observation_type(attrs: dict[str, Any]) -> str:
    """``langfuse.observation.type`` → ``openinference.span.kind`` → ``gen_ai.operation.name`` → a
    ``gen_ai.tool.*`` attribute (TOOL) → any model attribute (GENERATION) → SPAN."""
    for key in ("langfuse.observation.type", "openinference.span.kind", "gen_ai.operation.name"):
        found = type_from(key, attrs)
        if found:
            return found
    if _meaningful(attrs.get("gen_ai.tool.name")) or _meaningful(attrs.get("gen_ai.tool.call.id")):
        return "TOOL"
    if any(_meaningful(attrs.get(k)) for k in MODEL_KEYS):
        return "GENERATION"
    return "SPAN"


# 2. Input and output: the first source present wins, and it supplies both (a missing half is null).
SHADOWING_KEYS = (  # read before `input.value`/`output.value`
    "langfuse.observation.input", "langfuse.observation.output",
    "gcp.vertex.agent.llm_request", "gcp.vertex.agent.llm_response", "gcp.vertex.agent.tool_call_args",
    "gcp.vertex.agent.tool_response", "prompt", "all_messages_events", "lk.input_text", "lk.user_transcript",
    "lk.chat_ctx", "lk.function_tool.output", "lk.response.text", "events", "mlflow.spanInputs",
    "mlflow.spanOutputs", "traceloop.entity.input", "traceloop.entity.output",
)
SHADOWING_EVENTS = ("gen_ai.system.message", "gen_ai.user.message", "gen_ai.assistant.message",
                    "gen_ai.tool.message", "gen_ai.choice", "gen_ai.content.prompt", "gen_ai.content.completion")


def input_output(attrs: dict[str, Any], events: list[tuple[str, dict[str, Any]]]) -> tuple[Any, Any, str]:
    """``(input, output, source)`` as Langfuse would read them from a span outside the vendor scopes."""
    if attrs.get("langfuse.observation.input") is not None or attrs.get("langfuse.observation.output") is not None:
        return attrs.get("langfuse.observation.input"), attrs.get("langfuse.observation.output"), "langfuse.*"
    if any(name in SHADOWING_EVENTS for name, _ in events):
        return None, None, "events"
    shadow = [k for k in SHADOWING_KEYS if _meaningful(attrs.get(k))]
    if shadow:
        return None, None, shadow[0]
    for source, (i, o) in (("input.value", ("input.value", "output.value")), ("input", ("input", "output")),
                           ("gen_ai.input.messages", ("gen_ai.input.messages", "gen_ai.output.messages")),
                           ("gen_ai.tool.call.arguments", ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result"))):
        if attrs.get(i) or attrs.get(o):
            return attrs.get(i), attrs.get(o), source
    return None, None, "none"


# 3. Usage: every `gen_ai.usage.*` (but cost) and `llm.token_count.*` key, on any observation type;
#    Langfuse then sums usage over a trace's observations.
_USAGE_RENAMES = {"prompt_tokens": "input", "completion_tokens": "output", "total_tokens": "total",
                  "input_tokens": "input", "output_tokens": "output", "prompt": "input", "completion": "output"}


def usage(attrs: dict[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for key, value in attrs.items():
        if (key.startswith("gen_ai.usage.") and key != "gen_ai.usage.cost") or key.startswith("llm.token_count"):
            name = key.replace("gen_ai.usage.", "").replace("llm.token_count.", "")
            try:
                out[_USAGE_RENAMES.get(name, name)] = float(value)
            except (TypeError, ValueError):
                pass
    return out


def model_name(attrs: dict[str, Any]) -> str | None:
    """The model Langfuse records (and prices) for an observation."""
    for key in ("langfuse.observation.model.name", "gen_ai.response.model", "ai.model.id", "gen_ai.request.model",
                "llm.response.model", "llm.model_name", "model"):
        if attrs.get(key):
            return str(attrs[key])
    return None
