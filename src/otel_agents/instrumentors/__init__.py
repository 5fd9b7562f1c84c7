"""One ``BaseInstrumentor`` per framework; each module imports its framework only when instrumenting.

See :data:`otel_agents.instrumentors._frameworks.FRAMEWORKS` for the list.
"""

from ._base import OtelAgentsInstrumentor
from ._frameworks import FRAMEWORKS, Framework

__all__ = ["FRAMEWORKS", "Framework", "OtelAgentsInstrumentor"]
