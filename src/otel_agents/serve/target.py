"""Loading the agent to serve: ``module:attr`` or ``path/to/file.py:attr``.

``attr`` is one of:

* a callable taking the step input (sync or async): stateless, shared by every session;
* an object with ``step(input)`` (sync or async) and optionally ``reset()``: one
  agent shared by every session (multi-turn, so sessions share its turns);
* a class whose instances have ``step(input)``, or a factory (a callable with no
  positional parameter: ``def make():``, ``def make(*, model="m"):``) returning such an
  object: one instance per session, created at the session's first step or reset. A
  function whose positional parameters all have defaults (``def agent(q=""):``) takes
  the step input: it is an agent, not a factory.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import os
import sys
import traceback
from dataclasses import dataclass
from typing import Any, Callable


_GENERIC_NAMES = {"agent", "main", "run", "step", "app", "handler"}


class TargetError(ValueError):
    """The target spec cannot be loaded; the message says why."""


@dataclass
class Target:
    """A loaded agent.

    Attributes:
        name: a display name (the attribute's name, or the object's ``name``).
        step: ``step(input: str)``; may return an awaitable.
        reset: ``reset()`` or ``None`` when the agent has none.
        stateful: an object with ``step`` (keeps state across steps: multi-turn).
        factory: for a class or factory target, makes one agent per session
            (then ``step`` and ``reset`` are ``None``).
    """

    name: str
    step: Callable[[str], Any] | None
    reset: Callable[[], Any] | None
    stateful: bool
    factory: Callable[[], Any] | None = None

    def instance(self) -> tuple[Callable[[str], Any], Callable[[], Any] | None]:
        """``(step, reset)`` of a new agent (factory targets) or of the shared one.

        Raises:
            TargetError: the factory's product has no ``step(input)``.
            Exception: whatever the class or factory raised.
        """
        if self.factory is None:
            assert self.step is not None
            return self.step, self.reset
        obj = self.factory()
        step = getattr(obj, "step", None)
        if not callable(step):
            raise TargetError(f"{self.name}: the factory returned {type(obj).__name__}, which has no step(input)")
        reset = getattr(obj, "reset", None)
        return step, reset if callable(reset) else None


def load_target(spec: str) -> Target:
    """Load ``spec``.

    Raises:
        TargetError: the spec has no ``:attr``, the module or file cannot be
            imported, the attribute is missing, or it is neither callable nor has ``step``.
    """
    module_part, sep, attr = spec.rpartition(":")
    if not sep or not module_part or not attr:
        raise TargetError(f"target {spec!r}: expected 'module:attr' or 'path/to/file.py:attr'")
    path = None
    try:
        if module_part.endswith(".py") or os.sep in module_part:
            path = os.path.abspath(module_part)
            if not os.path.isfile(path):
                raise TargetError(f"target {spec!r}: {'a directory, not a file' if os.path.isdir(path) else 'no such file'}"
                                  f" {path}")
            sys.path.insert(0, os.path.dirname(path))
            name = f"_otel_agents_target_{abs(hash(path))}"
            mod_spec = importlib.util.spec_from_file_location(name, path)
            if mod_spec is None or mod_spec.loader is None:
                raise TargetError(f"target {spec!r}: cannot load {path}")
            module = importlib.util.module_from_spec(mod_spec)
            sys.modules[name] = module
            mod_spec.loader.exec_module(module)
        else:
            if os.getcwd() not in sys.path:  # like `python -m`: modules of the working directory import
                sys.path.insert(0, os.getcwd())
            module = importlib.import_module(module_part)
    except TargetError:
        raise
    except (Exception, SystemExit) as exc:  # noqa: BLE001 - report import failures (even sys.exit) clearly
        raise TargetError(f"target {spec!r}: importing {module_part} failed: {_import_failure(exc, path)}") from exc
    obj = getattr(module, attr, None)
    if obj is None:
        raise TargetError(f"target {spec!r}: {module_part} has no attribute {attr!r}")
    if inspect.isclass(obj):
        if not callable(getattr(obj, "step", None)):
            raise TargetError(f"target {spec!r}: class {attr!r} has no step(input) method")
        name = getattr(obj, "name", None)
        return Target(name if isinstance(name, str) and name else attr, None, None, True, factory=obj)
    step = getattr(obj, "step", None)
    if callable(step) and not inspect.isfunction(obj):
        reset = getattr(obj, "reset", None)
        return Target(getattr(obj, "name", None) or attr, step, reset if callable(reset) else None, True)
    if callable(obj) and _takes_no_argument(obj):
        return Target(attr, None, None, True, factory=obj)
    if callable(obj):
        name = getattr(obj, "name", None)
        if not isinstance(name, str) or not name:
            # `agents/support.py:agent` is better named "support" than "agent"
            name = module_part.rsplit("/", 1)[-1].removesuffix(".py").rsplit(".", 1)[-1] \
                if attr in _GENERIC_NAMES else attr
        return Target(name, obj, None, False)
    raise TargetError(f"target {spec!r}: {attr!r} is neither callable nor has a step(input) method")


def _import_failure(exc: BaseException, path: str | None) -> str:
    """What went wrong importing the target, with where: ``NAME: message (FILE, line N)`` (the deepest line of the
    target's own file that raised when it is in the traceback, else the innermost line that is not the import
    machinery's), a ``SyntaxError`` as ``FILE, line N: message``; never a traceback, which ``ecp run`` would
    show inside one line of its own."""
    if isinstance(exc, SyntaxError) and exc.filename:
        return f"{type(exc).__name__} in {exc.filename}, line {exc.lineno}: {exc.msg}"
    machinery = (__file__, os.path.dirname(importlib.__file__))  # this loader and importlib say nothing of the target's
    frames = [f for f in traceback.extract_tb(exc.__traceback__)
              if not f.filename.startswith("<frozen ") and not f.filename.startswith(machinery)]
    own = [f for f in frames if path is not None and os.path.abspath(f.filename) == path]
    where = (own or frames)[-1:]
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    return text + (f" ({where[0].filename}, line {where[0].lineno})" if where else "")


def _takes_no_argument(fn: Any) -> bool:
    """Whether ``fn`` is a factory: it has no positional parameter (none, or keyword-only ones), so it cannot be
    given the step input. A positional parameter with a default (``def agent(q=""):``) still takes the input:
    that callable is an agent (it was taken for a factory, called with no argument, its answer then refused for
    having no ``step``). A signature that cannot be read: not a factory."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return not any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params) \
        and not any(p.default is p.empty and p.kind == p.KEYWORD_ONLY for p in params)
