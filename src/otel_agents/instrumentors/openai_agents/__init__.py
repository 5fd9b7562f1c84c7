"""OpenAI Agents SDK instrumentation (manual written below).

from ._instrumentor import OpenAIAgentsInstrumentor
"""

from ._instrumentor import OpenAIAgentsInstrumentor

__all__ = ["OpenAIAgentsInstrumentor"]
