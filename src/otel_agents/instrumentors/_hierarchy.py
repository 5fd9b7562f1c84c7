"""Wrap a method on a base class and on every subclass that defines its own, now and later.

Frameworks whose extension points are methods users override need this: a
user's own smolagents ``Model`` subclass defines ``generate``, a ``Tool``
subclass may define ``__call__``, every LlamaIndex LLM class defines its own
``stream_chat``. A wrapper on the base class alone misses every override (the
field case SM-1), so
:class:`HierarchyPatch` wraps the method on the base and on each subclass whose
own ``__dict__`` defines it (an abstract method is skipped: it never runs, the
override that does is wrapped), and installs an ``__init_subclass__`` hook on the
base for classes defined after ``instrument()``, chained to the base's own. An
override that calls ``super()`` reaches two wrappers: the wrapper itself decides
(with a per-instance guard) that only the outermost one opens a span.
"""

from __future__ import annotations

from typing import Any, Iterator

from .._spans.finalisers import new_lock
from .._spans import report_internal_error
from ._patch import Patch, Wrapper


def subclasses(base: type) -> Iterator[type]:
    """``base`` and every class loaded now that derives from it, each once (depth first)."""
    seen: set[type] = set()
    stack = [base]
    while stack:
        cls = stack.pop()
        if cls in seen:
            continue
        seen.add(cls)
        yield cls
        try:
            stack.extend(type.__subclasses__(cls))
        except TypeError:  # pragma: no cover - exotic metaclasses
            pass


class HierarchyPatch:
    """Wrap each method named in ``wrappers`` (name → wrapt wrapper) on ``base`` and every subclass defining it.

    Never raises for one class: a class whose method cannot be wrapped is reported
    (:func:`~otel_agents._spans.report_internal_error`, ``<site>.<class>.<method>``) and
    loses only its spans. Thread-safe: a class defined in another thread while
    :meth:`remove` runs is either wrapped and unwrapped, or not wrapped.
    """

    def __init__(self, base: type, wrappers: dict[str, Wrapper], *, site: str = "patch"):
        self.base = base
        self.site = site  # the prefix of internal-error reports (``smolagents.patch``)
        self.wrappers = wrappers
        self.patches: list[Patch] = []
        self._patched: set[tuple[int, str]] = set()
        self._lock = new_lock()
        self.active = True
        for cls in subclasses(base):
            self._patch_class(cls)
        self._hook = self._install_subclass_hook()

    def _patch_class(self, cls: type) -> None:
        with self._lock:
            if not self.active:
                return
            for name, wrapper in self.wrappers.items():
                if name not in cls.__dict__ or (id(cls), name) in self._patched:
                    continue
                try:
                    if getattr(cls.__dict__[name], "__isabstractmethod__", False):
                        continue
                    self.patches.append(Patch(cls, name, wrapper))
                    self._patched.add((id(cls), name))
                except Exception as exc:  # noqa: BLE001 - one class we cannot wrap loses only its spans
                    report_internal_error(f"{self.site}.{cls.__name__}.{name}", exc)

    def _install_subclass_hook(self) -> Any:
        base = self.base
        previous = base.__dict__.get("__init_subclass__")
        patcher = self

        def __init_subclass__(cls: type, **kwargs: Any) -> None:  # noqa: N807
            if previous is not None:
                previous.__get__(None, cls)(**kwargs)
            else:
                super(base, cls).__init_subclass__(**kwargs)
            patcher._patch_class(cls)

        hook = classmethod(__init_subclass__)
        base.__init_subclass__ = hook  # type: ignore[method-assign]
        self._previous_hook = previous
        return hook

    def remove(self) -> None:
        """Unwrap every class (see :class:`~otel_agents.instrumentors._patch.Patch`) and drop the hook
        (the base's own ``__init_subclass__``, if it had one, is put back)."""
        with self._lock:
            self.active = False
            if self.base.__dict__.get("__init_subclass__") is self._hook:
                if self._previous_hook is not None:
                    self.base.__init_subclass__ = self._previous_hook  # type: ignore[method-assign]
                else:
                    delattr(self.base, "__init_subclass__")
            for patch in reversed(self.patches):
                patch.remove()
            self.patches.clear()
            self._patched.clear()
