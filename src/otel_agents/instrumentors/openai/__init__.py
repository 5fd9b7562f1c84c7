"""OpenAI SDK instrumentation (manual: written below)."""

from ._instrumentor import OpenAIInstrumentor

__all__ = ["OpenAIInstrumentor"]
