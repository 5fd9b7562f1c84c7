"""The semantic layer: our strings match the standards' constants, and the map is the design's table."""

from __future__ import annotations

from pathlib import Path

import pytest
from openinference.semconv import trace as oi
from opentelemetry.semconv._incubating.attributes import gen_ai_attributes as gen_ai
from opentelemetry.semconv._incubating.metrics import gen_ai_metrics
from opentelemetry.trace import SpanKind

from otel_agents.semconv import Kind, attributes as A, kind_attributes, span_name

GENAI_CONSTANTS = {v for k, v in vars(gen_ai).items() if k.startswith("GEN_AI_") and isinstance(v, str)}
OI_CONSTANTS = {
    v
    for cls in (oi.SpanAttributes, oi.MessageAttributes, oi.ToolCallAttributes, oi.DocumentAttributes,
                oi.EmbeddingAttributes, oi.ToolAttributes, oi.MessageContentAttributes, oi.ImageAttributes,
                oi.AudioAttributes)
    for k, v in vars(cls).items()
    if k.isupper() and isinstance(v, str)
}


def ours(prefixes: tuple[str, ...]) -> dict[str, str]:
    return {k: v for k, v in vars(A).items() if k.isupper() and isinstance(v, str) and v.startswith(prefixes)}


# The GenAI conventions as released: semantic-conventions v1.41 (v1.41.0, v1.41.1), the text the frozen constants of
# opentelemetry-semantic-conventions (0.66b2) hold. v1.42.0 moved them to open-telemetry/semantic-conventions-genai,
# which has published no release (no tag, no GitHub release; CHANGELOG.md has only "Unreleased", its changes wait as
# changelog.d fragments; the maintainers, issue #247: "keep using the deprecated constants ... generated from the core
# artifact" until it releases). What its main branch changed since is not followed until a release carries it:
# main's name -> the v1.41 name it replaces, each with its source. Once a release carries one, write the new name,
# keep the v1.41 one for reading, and move the entry out of this table.
UNRELEASED_RENAMES = {
    # PR #440, changelog.d/440.breaking.md @ b9449702673fa5ea79d3c4cee3733f6d5e2b1e40 ("Rename
    # gen_ai.usage.cache_creation.input_tokens to gen_ai.usage.cache_write.input_tokens"); written by
    # opentelemetry-util-genai 1.3b0, which follows main: the ECP fold reads it (GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS).
    "gen_ai.usage.cache_write.input_tokens": "gen_ai.usage.cache_creation.input_tokens",
}
# Constants kept only for reading spans others wrote (the ECP fold), never written.
READ_ONLY = {"GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS"}
SRC = Path(A.__file__).resolve().parents[1]


@pytest.mark.parametrize("name,value", sorted(ours(("gen_ai.",)).items()))
def test_gen_ai_names_match_semconv_package(name: str, value: str) -> None:
    """Every gen_ai.* name we write is a constant of opentelemetry-semantic-conventions (v1.41, the last release);
    a name only the conventions' main branch has is read-only."""
    if value.startswith("gen_ai.client."):
        assert value in (gen_ai_metrics.GEN_AI_CLIENT_OPERATION_DURATION, gen_ai_metrics.GEN_AI_CLIENT_TOKEN_USAGE,
                         gen_ai_metrics.GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK,
                         gen_ai_metrics.GEN_AI_CLIENT_OPERATION_TIME_PER_OUTPUT_CHUNK)
    elif name in READ_ONLY:
        assert value in UNRELEASED_RENAMES and UNRELEASED_RENAMES[value] in GENAI_CONSTANTS
    else:
        assert value in GENAI_CONSTANTS, f"{value} is no released GenAI name"


@pytest.mark.parametrize("new,old", sorted(UNRELEASED_RENAMES.items()))
def test_unreleased_renames_replace_a_v1_41_name(new: str, old: str) -> None:
    """Each unreleased rename replaces a real v1.41 name and is in no released text yet (once the constants package
    holds it, a release carries it: follow it then)."""
    assert old in GENAI_CONSTANTS
    assert new not in GENAI_CONSTANTS, f"{new} is a package constant now: a release carries it, write it"


@pytest.mark.parametrize("name", sorted(READ_ONLY))
def test_read_only_names_are_read_by_the_fold_alone(name: str) -> None:
    """A name kept for reading is used by the ECP fold only: no span layer or instrumentor code writes it."""
    users = sorted(str(p.relative_to(SRC)) for p in SRC.rglob("*.py")
                   if name in p.read_text(encoding="utf-8") and p.name != "attributes.py")
    assert users and all(u.startswith("exporters/ecp/") for u in users), users


OI_PREFIXES = ("input.", "output.", "llm.", "tool.", "retrieval.", "embedding.", "session.", "user.",
               "metadata", "tag.", "agent.", "graph.", "message.", "tool_call.", "document.", "openinference.", "message_content.",
               "image.", "audio.")


@pytest.mark.parametrize("name,value", sorted(ours(OI_PREFIXES).items()))
def test_openinference_names_match_package(name: str, value: str) -> None:
    """Every OpenInference name we emit is a constant of openinference-semantic-conventions."""
    assert value in OI_CONSTANTS


def test_openinference_span_kind_values_are_the_packages() -> None:
    values = {k.value for k in oi.OpenInferenceSpanKindValues}
    for kind in Kind:
        assert kind_attributes(kind)[A.OPENINFERENCE_SPAN_KIND] in values
    assert kind_attributes(Kind.SKILL, multi_step=True)[A.OPENINFERENCE_SPAN_KIND] in values


def test_no_invented_gen_ai_keys() -> None:
    """Our own attributes live under otel_agents.*, never gen_ai.*."""
    for value in ours(("otel_agents.",)).values():
        assert not value.startswith("gen_ai.")


# The table of ../shared/design/semantic-map.md, row by row.
TABLE = [
    (Kind.AGENT, {}, "invoke_agent", "invoke_agent support", SpanKind.INTERNAL, "AGENT", "agent"),
    (Kind.CHAIN, {}, None, "support", SpanKind.INTERNAL, "CHAIN", "chain"),
    (Kind.CHAIN, {"workflow": True}, "invoke_workflow", "invoke_workflow support", SpanKind.INTERNAL, "CHAIN", "chain"),
    (Kind.MODEL, {}, "chat", "chat support", SpanKind.CLIENT, "LLM", "generation"),
    (Kind.MODEL, {"operation": "text_completion"}, "text_completion", "text_completion support", SpanKind.CLIENT, "LLM", "generation"),
    (Kind.TOOL, {}, "execute_tool", "execute_tool support", SpanKind.INTERNAL, "TOOL", "tool"),
    (Kind.SKILL, {}, "execute_tool", "execute_tool support", SpanKind.INTERNAL, "TOOL", "tool"),
    (Kind.SKILL, {"multi_step": True}, None, "skill support", SpanKind.INTERNAL, "CHAIN", "chain"),
    (Kind.RETRIEVER, {}, "retrieval", "retrieval support", SpanKind.CLIENT, "RETRIEVER", "retriever"),
    (Kind.EMBEDDING, {}, "embeddings", "embeddings support", SpanKind.CLIENT, "EMBEDDING", "embedding"),
]


@pytest.mark.parametrize("kind,opts,operation,name,span_kind,oi_kind,langfuse", TABLE)
def test_mapping_table(kind, opts, operation, name, span_kind, oi_kind, langfuse) -> None:
    from otel_agents.semconv import kind_spec

    attrs = kind_attributes(kind, **opts)
    assert attrs.get(A.GEN_AI_OPERATION_NAME) == operation
    assert attrs[A.OTEL_AGENTS_SPAN_KIND] == kind.value
    assert attrs[A.OPENINFERENCE_SPAN_KIND] == oi_kind
    assert attrs[A.LANGFUSE_OBSERVATION_TYPE] == langfuse
    assert span_name(kind, "support", **opts) == name
    assert kind_spec(kind).span_kind == span_kind


def test_span_name_without_name_is_low_cardinality() -> None:
    assert span_name(Kind.AGENT, None) == "invoke_agent"
    assert span_name(Kind.CHAIN, None) == "chain"


def test_unknown_kind_is_a_clear_error() -> None:
    with pytest.raises(ValueError):
        kind_attributes("planner")


@pytest.mark.parametrize("name,value", sorted(ours(("mcp.", "jsonrpc.", "rpc.", "network.")).items()))
def test_mcp_names_match_semconv_package(name: str, value: str) -> None:
    """The MCP, JSON-RPC, RPC and network names of MCP spans are constants of opentelemetry-semantic-conventions."""
    from opentelemetry.semconv._incubating.attributes import (jsonrpc_attributes, mcp_attributes, network_attributes,
                                                              rpc_attributes)
    known = {v for mod in (jsonrpc_attributes, mcp_attributes, network_attributes, rpc_attributes)
             for k, v in vars(mod).items() if k.isupper() and isinstance(v, str)}
    assert value in known


@pytest.mark.parametrize("name,value", sorted(ours(("openai.",)).items()))
def test_openai_names_match_semconv_package(name: str, value: str) -> None:
    """The openai.* names of OpenAI model spans are constants of opentelemetry-semantic-conventions (GenAI, OpenAI page)."""
    from opentelemetry.semconv._incubating.attributes import openai_attributes
    assert value in {v for k, v in vars(openai_attributes).items() if k.isupper() and isinstance(v, str)}


def test_operation_names_are_released_values() -> None:
    """Every ``gen_ai.operation.name`` the map writes is a v1.41 value (``GenAiOperationNameValues``): the conventions'
    main branch adds ``plan``, memory and ``fetch_response`` operations, none released."""
    from otel_agents.semconv import mapping

    released = {v.value for v in gen_ai.GenAiOperationNameValues}
    ours = {v for k, v in vars(mapping).items() if k.startswith("OP_")}
    assert ours and ours <= released, ours - released


@pytest.mark.parametrize("module", ["otel_agents.instrumentors.langchain.extract",
                                    "otel_agents.instrumentors.llama_index._extract",
                                    "otel_agents.instrumentors.autogen_agentchat._models"])
def test_provider_tables_map_to_released_values(module: str) -> None:
    """A framework's provider table maps to ``gen_ai.provider.name`` well-known values of v1.41 (a provider with no
    such value, Ollama, keeps its own name: custom values are allowed)."""
    import importlib

    table = importlib.import_module(module)._PROVIDERS
    values = set(table.values()) if isinstance(table, dict) else {v for _, v in table}
    released = {v.value for v in gen_ai.GenAiProviderNameValues}
    assert values - released <= {"ollama"}, values - released
