"""The one table that maps each :class:`Kind` onto OTel GenAI, OpenInference and Langfuse.

This is the semantic map as data: one row per kind. Every span the library
opens gets its kind attributes from :func:`kind_attributes` and its name from
:func:`span_name`; no instrumentor sets a kind attribute by hand.

Conventions: OTel GenAI semantic conventions v1.41 (``gen_ai.operation.name``
values and the ``{operation} {target}`` span-name rule), OpenInference span
kinds, and Langfuse's observation types (Langfuse reads
``langfuse.observation.type`` first, then ``openinference.span.kind``, then
``gen_ai.operation.name``; it never maps a generic chain, ``retrieval`` or
``invoke_workflow`` by itself, so every kind carries the explicit type).
"""

from __future__ import annotations

from dataclasses import dataclass

from opentelemetry.trace import SpanKind

from . import attributes as A
from .kinds import Kind

# gen_ai.operation.name values (OTel GenAI v1.41).
OP_INVOKE_AGENT = "invoke_agent"
OP_INVOKE_WORKFLOW = "invoke_workflow"
OP_CHAT = "chat"
OP_TEXT_COMPLETION = "text_completion"
OP_GENERATE_CONTENT = "generate_content"
OP_EXECUTE_TOOL = "execute_tool"
OP_RETRIEVAL = "retrieval"
OP_EMBEDDINGS = "embeddings"


@dataclass(frozen=True)
class KindSpec:
    """One row of the semantic map.

    Attributes:
        kind: our kind.
        operation: the default ``gen_ai.operation.name``, or ``None`` when the
            kind has none by default (a plain chain, a multi-step skill).
        span_kind: the OTel ``SpanKind`` to open the span with.
        openinference: the ``openinference.span.kind`` value.
        langfuse: the ``langfuse.observation.type`` value.
    """

    kind: Kind
    operation: str | None
    span_kind: SpanKind
    openinference: str
    langfuse: str


KIND_TABLE: dict[Kind, KindSpec] = {
    Kind.AGENT: KindSpec(Kind.AGENT, OP_INVOKE_AGENT, SpanKind.INTERNAL, "AGENT", "agent"),
    Kind.CHAIN: KindSpec(Kind.CHAIN, None, SpanKind.INTERNAL, "CHAIN", "chain"),
    Kind.MODEL: KindSpec(Kind.MODEL, OP_CHAT, SpanKind.CLIENT, "LLM", "generation"),
    Kind.TOOL: KindSpec(Kind.TOOL, OP_EXECUTE_TOOL, SpanKind.INTERNAL, "TOOL", "tool"),
    # A skill used through a tool call; a skill wrapping several steps is a chain (see below).
    Kind.SKILL: KindSpec(Kind.SKILL, OP_EXECUTE_TOOL, SpanKind.INTERNAL, "TOOL", "tool"),
    Kind.RETRIEVER: KindSpec(Kind.RETRIEVER, OP_RETRIEVAL, SpanKind.CLIENT, "RETRIEVER", "retriever"),
    Kind.EMBEDDING: KindSpec(Kind.EMBEDDING, OP_EMBEDDINGS, SpanKind.CLIENT, "EMBEDDING", "embedding"),
}


def kind_spec(kind: Kind | str) -> KindSpec:
    """Return the table row for ``kind``.

    Raises:
        ValueError: ``kind`` is not one of :class:`Kind`'s values.
    """
    return KIND_TABLE[Kind(kind)]


def kind_attributes(
    kind: Kind | str,
    *,
    operation: str | None = None,
    workflow: bool = False,
    multi_step: bool = False,
) -> dict[str, str]:
    """The kind attributes of one span.

    Args:
        kind: the semantic kind.
        operation: overrides the default ``gen_ai.operation.name`` (a model span
            that is a ``text_completion`` rather than a ``chat``).
        workflow: a ``chain`` that is a multi-agent orchestration (a CrewAI crew,
            a LangGraph graph root, a LlamaIndex ``AgentWorkflow``): gets
            ``gen_ai.operation.name = invoke_workflow``.
        multi_step: a ``skill`` that wraps a multi-step run rather than one tool
            call: no operation, OpenInference ``CHAIN``, Langfuse ``chain``.

    Returns:
        ``{attribute: value}`` with ``otel_agents.span.kind``,
        ``openinference.span.kind``, ``langfuse.observation.type`` and, where
        the kind has one, ``gen_ai.operation.name``.
    """
    spec = kind_spec(kind)
    op = operation or spec.operation
    openinference, langfuse = spec.openinference, spec.langfuse
    if spec.kind is Kind.CHAIN:
        op = operation or (OP_INVOKE_WORKFLOW if workflow else None)
    if spec.kind is Kind.SKILL and multi_step:
        op, openinference, langfuse = operation, "CHAIN", "chain"
    attrs = {
        A.OTEL_AGENTS_SPAN_KIND: spec.kind.value,
        A.OPENINFERENCE_SPAN_KIND: openinference,
        A.LANGFUSE_OBSERVATION_TYPE: langfuse,
    }
    if op:
        attrs[A.GEN_AI_OPERATION_NAME] = op
    return attrs


def span_name(kind: Kind | str, name: str | None, *, operation: str | None = None,
              workflow: bool = False, multi_step: bool = False) -> str:
    """The low-cardinality span name for a kind.

    ``invoke_agent {agent}``, ``invoke_workflow {name}`` (workflow chains) or the
    component's name (other chains), ``{operation} {model}``,
    ``execute_tool {tool}``, ``skill {skill}`` (multi-step skills),
    ``retrieval {data source}``, ``embeddings {model}`` — OTel GenAI v1.41.
    With no ``name`` the bare operation (or the kind) is the name.
    """
    spec = kind_spec(kind)
    attrs = kind_attributes(kind, operation=operation, workflow=workflow, multi_step=multi_step)
    op = attrs.get(A.GEN_AI_OPERATION_NAME)
    if spec.kind is Kind.CHAIN and not workflow:
        return name or spec.kind.value
    if spec.kind is Kind.SKILL and multi_step:
        return f"skill {name}" if name else "skill"
    prefix = op or spec.kind.value
    return f"{prefix} {name}" if name else prefix


def guardrail_attributes() -> dict[str, str]:
    """The markers a guardrail's ``chain`` span carries on top of its kind attributes (semantic
    map, "Guardrails"): OpenInference ``GUARDRAIL`` and Langfuse ``guardrail``. Its name is
    ``guardrail {name}``; ``gen_ai.operation.name`` stays unset until the GenAI conventions
    release ``run_guardrail``."""
    return {A.OPENINFERENCE_SPAN_KIND: "GUARDRAIL", A.LANGFUSE_OBSERVATION_TYPE: "guardrail"}
