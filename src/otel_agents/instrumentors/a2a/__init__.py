"""A2A instrumentation (docstring written below)."""

from ._instrumentor import A2AInstrumentor

__all__ = ["A2AInstrumentor"]
