"""The three vocabularies a span can be written in, and which attribute belongs to which.

``gen_ai``
    The OTel GenAI semantic conventions v1.41: every ``gen_ai.*`` attribute.
``openinference``
    OpenInference (what Arize Phoenix renders): ``openinference.span.kind``,
    ``input.*``/``output.*``, ``llm.*``, ``tool.*``, ``retrieval.*``, ``embedding.*``,
    ``agent.name``, ``session.id``, ``user.id``, ``metadata``, ``tag.tags``, ``graph.node.*``.
``langfuse``
    What Langfuse's OTel ingestion reads to fill an observation (its "property mapping"):
    ``langfuse.observation.type``, and of the other two vocabularies the attributes it takes
    input/output (``input.value``/``output.value`` and their MIME types), the session and user
    (``session.id``, ``user.id``), the model and its parameters (``gen_ai.request.*``,
    ``gen_ai.response.model``), usage (``gen_ai.usage.*``), the tool and agent identities and the
    operation (``gen_ai.operation.name``, ``gen_ai.workflow.name``: Langfuse's SDK span filter keeps
    spans with a ``gen_ai.*`` attribute) from; and the finish reasons (``gen_ai.response.finish_reasons``:
    Langfuse keeps them as metadata, the ECP fold's model lines need them).

An attribute of no vocabulary — ours (``otel_agents.*``), and the general OTel ones (``error.type``,
``server.*``, MCP's ``mcp.*``/``jsonrpc.*``, A2A's ``a2a.*``, ``openai.*``) — is always written: it is
the only carrier of its fact. :func:`written` tells whether a key is written for a selection;
:func:`key_filter` answers the same question as one dictionary look-up (what spans ask of every attribute).
"""

from __future__ import annotations

import functools

from . import attributes as A

GEN_AI = "gen_ai"
OPENINFERENCE = "openinference"
LANGFUSE = "langfuse"
VOCABULARIES: tuple[str, ...] = (GEN_AI, OPENINFERENCE, LANGFUSE)
"""Every vocabulary, in the order they are documented; all three are the default selection."""
ALL: frozenset[str] = frozenset(VOCABULARIES)

# OpenInference attribute names: exact keys and prefixes (flattened lists: ``llm.input_messages.0...``).
_OPENINFERENCE_KEYS = frozenset({A.OPENINFERENCE_SPAN_KIND, A.AGENT_NAME, A.SESSION_ID, A.USER_ID, A.METADATA,
                                 A.TAG_TAGS})
_OPENINFERENCE_PREFIXES = ("input.", "output.", "llm.", "tool.", "tool_call.", "retrieval.", "embedding.",
                           "graph.node.", "message.", "document.", "reranker.", "prompt.")
# What Langfuse reads of the other two vocabularies (tests/backends/langfuse_mapping.py restates its mapping).
_LANGFUSE_READS = frozenset({
    A.INPUT_VALUE, A.INPUT_MIME_TYPE, A.OUTPUT_VALUE, A.OUTPUT_MIME_TYPE, A.SESSION_ID, A.USER_ID,
    A.GEN_AI_OPERATION_NAME, A.GEN_AI_WORKFLOW_NAME, A.GEN_AI_RESPONSE_MODEL, A.GEN_AI_PROVIDER_NAME,
    A.GEN_AI_AGENT_NAME, A.GEN_AI_TOOL_NAME, A.GEN_AI_TOOL_CALL_ID, A.GEN_AI_RESPONSE_FINISH_REASONS,
})
_LANGFUSE_PREFIXES = ("langfuse.", "gen_ai.usage.", "gen_ai.request.")


@functools.lru_cache(maxsize=2048)  # keys are few (flattened indices included); one classification each
def vocabularies_of(key: str) -> frozenset[str] | None:
    """The vocabularies attribute ``key`` belongs to, or ``None`` when it belongs to none (always written)."""
    owners: set[str] = set()
    if key.startswith("gen_ai."):
        owners.add(GEN_AI)
    elif key in _OPENINFERENCE_KEYS or key.startswith(_OPENINFERENCE_PREFIXES):
        owners.add(OPENINFERENCE)
    if key in _LANGFUSE_READS or key.startswith(_LANGFUSE_PREFIXES):
        owners.add(LANGFUSE)
    return frozenset(owners) or None


def written(key: str, selected: frozenset[str]) -> bool:
    """Whether ``key`` is written when the vocabularies ``selected`` are."""
    owners = vocabularies_of(key)
    return owners is None or not owners.isdisjoint(selected)


_FILTER_KEYS = 4096  # a selection's remembered keys (names plus flattened indices are far fewer)


class KeyFilter(dict):  # type: ignore[type-arg]
    """``keep[key]``: whether attribute ``key`` is written for one selection (:func:`written`), remembered per
    key so that a key seen before costs one dictionary look-up in C; bounded by :data:`_FILTER_KEYS` (past it,
    the remembered keys are forgotten and classified again). Get one with :func:`key_filter`."""

    __slots__ = ("selected",)

    def __init__(self, selected: frozenset[str]):
        super().__init__()
        self.selected = selected

    def __missing__(self, key: str) -> bool:
        keep = written(key, self.selected)
        if len(self) >= _FILTER_KEYS:
            self.clear()
        self[key] = keep
        return keep


@functools.lru_cache(maxsize=8)  # one per selection: at most seven subsets
def key_filter(selected: frozenset[str]) -> KeyFilter:
    """The :class:`KeyFilter` of the vocabularies ``selected`` (the same object for the same selection)."""
    return KeyFilter(selected)


def parse(value: str | object) -> frozenset[str]:
    """A selection from a comma-separated string (``"gen_ai,langfuse"``) or an iterable of names.

    Names are case-insensitive, blanks are ignored.

    Raises:
        ValueError: a name that is not one of :data:`VOCABULARIES` (the message names it and the
            allowed ones), or an empty selection.
    """
    names = value.split(",") if isinstance(value, str) else list(value)  # type: ignore[call-overload]
    chosen = {str(n).strip().lower() for n in names if str(n).strip()}
    unknown = sorted(chosen - ALL)
    if unknown:
        raise ValueError(f"unknown vocabular{'y' if len(unknown) == 1 else 'ies'} {', '.join(map(repr, unknown))}; "
                         f"allowed: {', '.join(VOCABULARIES)}")
    if not chosen:
        raise ValueError(f"no vocabulary selected; allowed: {', '.join(VOCABULARIES)}")
    return frozenset(chosen)
