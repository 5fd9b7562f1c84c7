"""The wrapt patches one ``instrument()`` call installed, and their exact removal.

``uninstrument()`` must remove only what we added. Restoring the saved original
with ``setattr`` would also throw away a wrapper another instrumentation put
on top of ours later, so :meth:`Patches.remove_all` splices our wrapper out of
whatever chain of wrappers sits on the attribute now. If our wrapper cannot be
found any more (someone replaced the attribute outright), it is left where it
is and turns into a pass-through: every wrapper checks :attr:`Patches.active`,
which belongs to one installation, so a later ``instrument()`` never
re-activates a stale wrapper.
"""

from __future__ import annotations

from typing import Any, Callable

import wrapt

from ..._spans.finalisers import new_lock
from ..._spans import guard
from .._patch import PatchSet

Wrapper = Callable[[Any, Any, tuple, dict], Any]
"""A wrapt wrapper: ``wrapper(wrapped, instance, args, kwargs) -> result``."""


class Patches:
    """The wrappers of one installation.

    Attributes:
        active: ``True`` from creation until :meth:`remove_all`; wrappers pass
            straight through to the framework when it is ``False``.
    """

    def __init__(self) -> None:
        self.active = True
        self._applied: list[tuple[Any, str, Any]] = []
        self._keys: set[tuple[int, str]] = set()
        self._lock = new_lock()
        self._kept = PatchSet("crewai.patch")

    def wrap(self, owner: Any, name: str, wrapper: Wrapper) -> bool:
        """Wrap ``owner.name`` (a class or module attribute defined on ``owner`` itself).

        Returns whether a wrapper was installed (``False`` when ``owner`` does not
        define ``name`` or it is already wrapped by this installation).
        """
        with self._lock:
            key = (id(owner), name)
            if not self.active or key in self._keys or name not in vars(owner):
                return False
            wrapt.wrap_function_wrapper(owner, name, wrapper)
            self._keys.add(key)
            self._applied.append((owner, name, vars(owner)[name]))
            return True

    def keep(self, patch: Any) -> None:
        """Take ``patch`` off with the wrappers (:meth:`.._patch.PatchSet.keep`: a shared use of LiteLLM's patches)."""
        self._kept.keep(patch)

    def remove_all(self) -> None:
        """Deactivate every wrapper of this installation and take each out of its chain, then what was kept."""
        with self._lock:
            self.active = False
            applied, self._applied = self._applied, []
            self._keys.clear()
        for owner, name, ours in reversed(applied):
            with guard("crewai.uninstrument"):
                _splice_out(owner, name, ours)
        self._kept.remove()


def _splice_out(owner: Any, name: str, ours: Any) -> None:
    """Remove ``ours`` from the wrapper chain on ``owner.name``, keeping wrappers above it."""
    current = vars(owner).get(name)
    if current is ours:
        setattr(owner, name, ours.__wrapped__)
        return
    node = current
    while node is not None and hasattr(node, "__wrapped__"):
        inner = node.__wrapped__
        if inner is ours:
            node.__wrapped__ = ours.__wrapped__
            return
        node = inner
