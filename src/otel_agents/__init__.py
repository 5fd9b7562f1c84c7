"""otel-agents: one set of OpenTelemetry spans for every AI agent run, observable and gradeable.

Quick start::

    import otel_agents
    otel_agents.instrument()          # every supported framework that is installed

See the README for zero-code use, the Phoenix and Langfuse presets, the ECP
exporter and the configuration reference.
"""

__version__ = "0.1.0"

from ._api import FrameworkStatus, instrument, instrumentation_status, uninstrument  # noqa: E402
from .semconv import Kind  # noqa: E402
from .context import current_agent_span, using_metadata, using_session, using_tags, using_user  # noqa: E402
from .manual import agent, chain, skill, span, tool  # noqa: E402
from ._configure import Configuration, configure  # noqa: E402
from .exporters import presets  # noqa: E402

__all__ = ["FrameworkStatus", "Kind", "__version__", "instrument", "instrumentation_status", "uninstrument",
           "agent", "chain", "current_agent_span", "skill", "span", "tool",
           "Configuration", "configure", "presets",
           "using_metadata", "using_session", "using_tags", "using_user"]
