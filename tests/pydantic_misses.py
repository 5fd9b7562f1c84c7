"""Which names our code asks a pydantic model for that it does not have: each such read raises and catches an
``AttributeError`` inside pydantic's ``__getattr__`` (~35,000 CPU instructions), the cost the span layer's
``probes.attr`` avoids. Used by the tests that pin a hot path free of them."""

from __future__ import annotations

import contextlib
import sys
from typing import Any, Iterator

import pydantic


@contextlib.contextmanager
def misses_of_ours(monkeypatch: Any) -> Iterator[list[tuple[str, str]]]:
    """Within the block, ``(model class name, attribute)`` of each miss a function of ``otel_agents`` asked
    for directly (``getattr``/``hasattr`` in our frame); the framework's own misses are not listed."""
    found: list[tuple[str, str]] = []
    original = pydantic.BaseModel.__getattr__

    def counting(self: Any, name: str) -> Any:
        try:
            return original(self, name)
        except AttributeError:
            if sys._getframe(1).f_globals.get("__name__", "").startswith("otel_agents"):
                found.append((type(self).__name__, name))
            raise

    with monkeypatch.context() as patch:
        patch.setattr(pydantic.BaseModel, "__getattr__", counting)
        yield found
