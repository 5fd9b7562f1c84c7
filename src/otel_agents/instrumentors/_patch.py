"""A wrapt wrapper on one class attribute that can be taken off exactly (shared by the instrumentors that patch).

:meth:`Patch.remove` puts the very same original object back when ours is still
the outermost wrapper. When another instrumentation wrapped the attribute after
us, pulling ours out would drop theirs too, so ours stays in their chain but
turns inert (it calls straight through); the next :class:`Patch` of that
attribute peels inert wrappers of ours off the top first, so instrumenting
again never stacks them.
"""

from __future__ import annotations

import threading
from typing import Any, Callable

import wrapt

Wrapper = Callable[[Any, Any, tuple, dict], Any]
"""A wrapt wrapper: ``wrapper(wrapped, instance, args, kwargs)``."""

_retired: list["Patch"] = []  # inert patches still inside another wrapper's chain
_retired_lock = threading.Lock()


class Patch:
    """Wrap ``owner.<name>`` (an attribute defined on ``owner`` itself) with ``wrapper``.

    Raises:
        KeyError: ``owner`` does not define ``name`` (the framework changed shape).
    """

    def __init__(self, owner: type, name: str, wrapper: Wrapper):
        self.owner = owner
        self.name = name
        _peel_retired(owner, name)
        self.original = owner.__dict__[name]
        self.active = True

        def call(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            if not self.active:
                return wrapped(*args, **kwargs)
            return wrapper(wrapped, instance, args, kwargs)

        self.proxy = wrapt.FunctionWrapper(self.original, call)
        setattr(owner, name, self.proxy)

    def remove(self) -> None:
        """Restore the original attribute, or go inert if someone wrapped it after us."""
        self.active = False
        if self.owner.__dict__.get(self.name) is self.proxy:
            setattr(self.owner, self.name, self.original)
        else:
            with _retired_lock:
                _retired.append(self)


def _peel_retired(owner: type, name: str) -> None:
    with _retired_lock:
        peeled = True
        while peeled:
            peeled = False
            current = owner.__dict__.get(name)
            for patch in _retired:
                if patch.owner is owner and patch.name == name and patch.proxy is current:
                    setattr(owner, name, patch.original)
                    _retired.remove(patch)
                    peeled = True
                    break
