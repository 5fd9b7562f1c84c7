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


def restoring(prefixes: tuple[str, ...], install: Callable[[], Any],
              remove: Callable[[], Any]) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """``(install, remove)`` for a peer whose ``uninstrument()`` leaves patches behind (OpenLLMetry's
    0.62.4 unwraps dotted paths its ``unwrap`` resolves to nothing, on several packages): before
    ``install``, the attributes of the modules under ``prefixes`` and of their classes are recorded;
    after ``remove``, any that changed is put back and any added is deleted. The runner still fails
    loudly if an uninstrumented batch exports a span."""
    import sys
    import types

    saved: dict[int, tuple[Any, dict[str, Any]]] = {}

    def owners() -> list[Any]:
        found = []
        for name, module in list(sys.modules.items()):
            if module is None or not name.startswith(prefixes):
                continue
            found.append(module)
            for value in list(vars(module).values()):
                if isinstance(value, type) and getattr(value, "__module__", None) == name:
                    found.append(value)
        return found

    def install_() -> None:
        saved.clear()
        for owner in owners():
            saved[id(owner)] = (owner, dict(vars(owner)))
        install()

    def remove_() -> None:
        remove()
        for owner, before in saved.values():
            now = vars(owner)
            # (a submodule imported meanwhile stays: it is an import, not a patch)
            for key in [k for k in now if k not in before and not isinstance(now[k], types.ModuleType)]:
                try:
                    delattr(owner, key)
                except (AttributeError, TypeError):
                    pass
            for key, value in before.items():
                if now.get(key) is not value:
                    try:
                        setattr(owner, key, value)
                    except (AttributeError, TypeError):
                        pass
        saved.clear()

    return install_, remove_
