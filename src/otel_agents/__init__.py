"""otel-agents: one set of OpenTelemetry spans for every AI agent run, observable and gradeable.

Quick start::

    import otel_agents
    otel_agents.instrument()          # every supported framework that is installed

See the README for zero-code use, the Phoenix and Langfuse presets, the ECP
exporter and the configuration reference.

The names below are imported when first used (PEP 562 ``__getattr__``): ``import otel_agents`` alone, and
every ``otel-agents`` command (``fold``, ``ecp serve``, ``demo`` and the processes it starts), loads only the
modules it needs, not the span layer, the instrumentors' registry and the exporters' presets each time.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

if TYPE_CHECKING:
    from ._api import FrameworkStatus, instrument, instrumentation_status, uninstrument
    from ._configure import Configuration, configure
    from .context import current_agent_span, using_metadata, using_session, using_tags, using_user
    from .exporters import presets
    from .manual import agent, chain, skill, span, tool
    from .semconv import Kind

_LAZY = {  # public name -> the module (relative to this package) that defines it; presets is that module
    **dict.fromkeys(("FrameworkStatus", "instrument", "instrumentation_status", "uninstrument"), "._api"),
    "Kind": ".semconv",
    **dict.fromkeys(("current_agent_span", "using_metadata", "using_session", "using_tags", "using_user"),
                    ".context"),
    **dict.fromkeys(("agent", "chain", "skill", "span", "tool"), ".manual"),
    **dict.fromkeys(("Configuration", "configure"), "._configure"),
    "presets": ".exporters.presets",
}

__all__ = ["FrameworkStatus", "Kind", "__version__", "instrument", "instrumentation_status", "uninstrument",
           "agent", "chain", "current_agent_span", "skill", "span", "tool",
           "Configuration", "configure", "presets",
           "using_metadata", "using_session", "using_tags", "using_user"]


def __getattr__(name: str) -> Any:
    """A public name of :data:`__all__`, or a subpackage (``otel_agents.manual``, ``otel_agents.semconv``, which the
    package once imported before any use), imported at its first use and then kept in the module's namespace.

    Raises:
        AttributeError: ``name`` is neither.
    """
    module = _LAZY.get(name)
    if module is None:
        if name.startswith("__") or importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return importlib.import_module(f"{__name__}.{name}")  # the import binds it here
    value = importlib.import_module(module, __name__)
    if name != "presets":
        value = getattr(value, name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
