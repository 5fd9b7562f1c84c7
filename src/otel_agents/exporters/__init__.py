"""Exporters that work on finished spans: ECP result envelopes and OTLP/JSON files.

* :mod:`otel_agents.exporters.ecp` — :func:`~otel_agents.exporters.ecp.fold`
  and :class:`~otel_agents.exporters.ecp.ECPFoldingProcessor`: span trees →
  Evaluation Context Protocol result envelopes; :class:`~otel_agents.exporters.ecp.ECPFileExporter`
  writes them as JSON lines from a span exporter.
* :mod:`otel_agents.exporters.zero_code` — the ``ecp`` and ``otlp_json_file`` traces-exporter entry points
  (``opentelemetry-instrument --traces_exporter ecp,otlp_json_file``): those two exporters, built as the distro
  builds exporters.
* :mod:`otel_agents.exporters.file` — :class:`~otel_agents.exporters.file.OTLPJsonFileExporter`
  and :func:`~otel_agents.exporters.file.read_otlp_json`: spans ↔ OTLP/JSON lines
  (needs ``opentelemetry-exporter-otlp-proto-common``, in the ``otlp`` and
  ``ecp`` extras).
* :mod:`otel_agents.exporters.presets` — named exporter set-ups for
  :func:`otel_agents.configure`.

Exporters read finished SDK spans only; they never import an instrumentor.
The names below are imported on first use, so importing this package costs
nothing until one is needed.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

_LAZY = {
    "fold": "otel_agents.exporters.ecp",
    "ECPFoldingProcessor": "otel_agents.exporters.ecp",
    "ECPFileExporter": "otel_agents.exporters.ecp",
    "OTLPJsonFileExporter": "otel_agents.exporters.file",
    "read_otlp_json": "otel_agents.exporters.file",
}

__all__ = sorted(_LAZY)


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:  # a submodule (otel_agents.exporters.presets) not imported yet
        if name.startswith("__") or importlib.util.find_spec(f"{__name__}.{name}") is None:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return importlib.import_module(f"{__name__}.{name}")
    return getattr(importlib.import_module(module), name)
