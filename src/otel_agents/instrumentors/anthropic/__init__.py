"""Anthropic SDK instrumentation (manual: written below)."""

from ._instrumentor import AnthropicInstrumentor

__all__ = ["AnthropicInstrumentor"]
