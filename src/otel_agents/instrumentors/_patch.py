"""A wrapt wrapper on one class attribute that can be taken off exactly (shared by the instrumentors that patch).

:meth:`Patch.remove` puts the very same original object back when ours is still
the outermost wrapper. When another instrumentation wrapped the attribute after
us, pulling ours out would drop theirs too, so ours stays in their chain but
turns inert (it calls straight through); the next :class:`Patch` of that
attribute peels inert wrappers of ours off the top first, so instrumenting
again never stacks them. :class:`PatchSet` holds the patches of one ``instrument()``.
"""

from __future__ import annotations

import sys
from typing import Any, Callable, Mapping

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
    ``remove()`` (a :class:`~._hierarchy.HierarchyPatch`, a :class:`SharedUse`: how every instrumentor holds
    its use of LiteLLM's and Hugging Face's shared patches).
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
        """Take every patch off (see :meth:`Patch.remove`); one that fails to come off is reported, the others
        still are."""
        for patch in reversed(self.patches):
            try:
                patch.remove()
            except Exception as exc:  # noqa: BLE001 - uninstrument() never raises into the user's program
                report_internal_error(f"{self.site}.remove", exc)
        self.patches.clear()


class SharedPatches:
    """Patches of a library several instrumentors' frameworks call (LiteLLM, Hugging Face's inference client),
    made once however many use them: each patch when its module is imported (at once if it already is: importing
    such a library can cost seconds), while at least one instrumentor holds a use (:meth:`use`), and taken off
    with the last use.

    Args:
        site: the prefix of internal-error reports.
        targets: ``{module name: make(module) -> Patch}`` (or a :class:`PatchSet`: anything with ``remove()``).
    """

    def __init__(self, site: str, targets: Mapping[str, Callable[[Any], "Patch | PatchSet"]]):
        self.site, self.targets = site, targets
        self._lock = new_lock()
        self._users = 0
        self._hooked = False
        self._patches: dict[str, Patch | PatchSet] = {}

    def use(self) -> "SharedUse":
        """One more user, until the returned use is removed."""
        with self._lock:
            self._users += 1
            hook, self._hooked = not self._hooked, True
        for module in self.targets:
            if hook:  # once per process: wrapt cannot take a post-import hook off (it checks the users when it fires)
                wrapt.register_post_import_hook(self._imported, module)
            elif module in sys.modules:
                self._imported(sys.modules[module])
        return SharedUse(self)

    def _imported(self, module: Any) -> None:
        with self._lock:
            if not self._users or module.__name__ in self._patches:
                return
            try:
                self._patches[module.__name__] = self.targets[module.__name__](module)
            except Exception as exc:  # noqa: BLE001 - the library changed shape: lose that part only
                report_internal_error(f"{self.site}.{module.__name__}", exc)

    def _release(self) -> None:
        with self._lock:
            self._users -= 1
            patches = list(self._patches.values()) if not self._users else []
            if patches:
                self._patches = {}
        for patch in patches:
            patch.remove()


class SharedUse:
    """One instrumentor's use of :class:`SharedPatches`; :meth:`remove` ends it (twice is once), as a
    :class:`Patch` is taken off."""

    __slots__ = ("_shared",)

    def __init__(self, shared: SharedPatches):
        self._shared: SharedPatches | None = shared

    def remove(self) -> None:
        shared, self._shared = self._shared, None
        if shared is not None:
            shared._release()


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
