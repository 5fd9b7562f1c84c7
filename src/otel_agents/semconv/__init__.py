"""The semantic layer: the kinds of agent behaviour and the attributes each carries.

See ``../shared/design/semantic-map.md``. Nothing here talks to a tracer.
"""

from . import attributes, vocabularies
from .kinds import Kind
from .mapping import KIND_TABLE, KindSpec, guardrail_attributes, kind_attributes, kind_spec, span_name

__all__ = ["vocabularies", "Kind", "KindSpec", "KIND_TABLE", "attributes", "guardrail_attributes", "kind_attributes", "kind_spec", "span_name"]
