"""Fake-model workloads, one module per framework.

Each module exposes ``NAME``, ``FRAMEWORK_DISTS``, ``PEERS`` (peer instrumentors: label →
distribution), ``workload()`` (a callable doing one run of the workload; it raises
``ImportError`` when the framework is not installed, and the comparison is then skipped) and
``install(variant, provider)`` returning ``(install, remove)`` callables for ``ours``,
``ours_no_content`` and each peer label; it raises ``ImportError`` when a peer is not installed.
Optional: ``dispatch()`` (the framework's own cost of one do-nothing observer, same shape as
``install``) and ``BATCH_DIVISOR`` (shorter timed batches for slow workloads).
"""

from __future__ import annotations

import importlib
from typing import Any, Callable, Mapping


def instrumentor_variant(variant: str, provider: Any, classes: Mapping[str, str]) -> tuple[Any, Callable[[], Any]]:
    """``(instrumentor, install)`` for a ``BaseInstrumentor`` variant.

    ``classes`` maps ``ours`` and each peer label to ``"module:Class"``; ``ours_no_content`` is
    ours with content capture off. Raises ``ImportError`` when the variant's package is missing,
    ``ValueError`` for an unknown variant.
    """
    key = "ours" if variant == "ours_no_content" else variant
    if key not in classes:
        raise ValueError(variant)
    module, cls = classes[key].split(":")
    instrumentor = getattr(importlib.import_module(module), cls)()
    kwargs = {"capture_content": False} if variant == "ours_no_content" else {}
    return instrumentor, lambda: instrumentor.instrument(tracer_provider=provider, **kwargs)
