"""The semantic layer: the kinds of agent behaviour and the attributes each carries.

The map itself is :mod:`otel_agents.semconv.mapping` (its table ``KIND_TABLE``). Nothing here talks to a tracer.
"""

from . import attributes, vocabularies
from .kinds import Kind
from .mapping import KIND_TABLE, KindSpec, guardrail_attributes, kind_attributes, kind_spec, span_name

__all__ = ["vocabularies", "Kind", "KindSpec", "KIND_TABLE", "attributes", "guardrail_attributes", "kind_attributes", "kind_spec", "span_name"]
