"""A wrapt wrapper on one class attribute that can be taken off exactly (shared by the instrumentors that patch).

:meth:`Patch.remove` puts the very same original object back when ours is still
the outermost wrapper. When another instrumentation wrapped the attribute after
us, pulling ours out would drop theirs too, so ours stays in their chain but
turns inert (it calls straight through); the next :class:`Patch` of that
attribute peels inert wrappers of ours off the top first, so instrumenting
again never stacks them. :class:`PatchSet` holds the patches of one ``instrument()``.
"""

from __future__ import annotations

from typing import Any, Callable

import wrapt

from .._spans.finalisers import new_lock
from .._spans import report_internal_error

Wrapper = Callable[[Any, Any, tuple, dict], Any]
"""A wrapt wrapper: ``wrapper(wrapped, instance, args, kwargs)``."""

_retired: list["Patch"] = []  # inert patches still inside another wrapper's chain
_retired_lock = new_lock()


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


class PatchSet:
    """The patches of one ``instrument()``, taken off together, newest first.

    :meth:`add` never raises: an attribute the framework renamed or moved loses only its spans
    (reported once as ``<site>.<owner>.<name>``); :meth:`keep` adds any other patch with a
    ``remove()`` (a :class:`~._hierarchy.HierarchyPatch`).
    """

    def __init__(self, site: str):
        self.site = site  # the prefix of internal-error reports (``agno.patch``)
        self.patches: list[Any] = []

    def add(self, owner: Any, name: str, wrapper: Wrapper) -> None:
        """Wrap ``owner.<name>`` with ``wrapper`` (a :class:`Patch`)."""
        try:
            self.patches.append(Patch(owner, name, wrapper))
        except Exception as exc:  # noqa: BLE001 - a renamed method only loses that span
            report_internal_error(f"{self.site}.{getattr(owner, '__name__', owner)}.{name}", exc)

    def keep(self, patch: Any) -> None:
        """Take ``patch`` off with the others."""
        self.patches.append(patch)

    def remove(self) -> None:
        """Take every patch off (see :meth:`Patch.remove`)."""
        for patch in reversed(self.patches):
            patch.remove()
        self.patches.clear()


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
