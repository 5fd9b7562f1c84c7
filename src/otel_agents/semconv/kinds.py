"""The vocabulary of agent behaviour: one ``Kind`` per kind of span we emit."""

from __future__ import annotations

from enum import Enum


class Kind(str, Enum):
    """A semantic span kind, recorded as ``otel_agents.span.kind``.

    The values are the lower-case names of the semantic map; each maps to one OTel GenAI
    operation, one OpenInference span kind and one Langfuse observation type
    (see :mod:`otel_agents.semconv.mapping`).
    """

    AGENT = "agent"
    CHAIN = "chain"
    MODEL = "model"
    TOOL = "tool"
    SKILL = "skill"
    RETRIEVER = "retriever"
    EMBEDDING = "embedding"

    def __str__(self) -> str:  # "agent", not "Kind.AGENT", in f-strings
        return self.value

    @classmethod
    def _missing_(cls, value: object) -> "Kind":
        """``Kind("modle")`` raises ``ValueError`` naming the value and the kinds there are (Enum's own message,
        ``'modle' is not a valid Kind``, named neither the argument nor what it could be)."""
        raise ValueError(f"span kind {value!r} is not one of {', '.join(k.value for k in cls)}")
