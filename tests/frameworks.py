"""Which frameworks this venv tests.

Every framework of ``FRAMEWORKS`` shares ``.venv`` except those whose dependencies clash with the
others': each of those has a venv of its own (``Framework.venv``, Makefile ``ISOLATED``) in which
``make test`` runs its tests. Shared parametrized suites (contract kit, demo, backends) take their
lists from here, so in ``.venv`` they leave out an isolated framework (its own venv runs it) and in
its own venv they run it. A framework that shares ``.venv`` is never left out: missing, its tests fail.
"""

from __future__ import annotations

import sys
from importlib import metadata
from pathlib import Path

from otel_agents.instrumentors._frameworks import FRAMEWORKS


def installed(name: str) -> bool:
    """Whether framework ``name``'s distribution is installed in this venv."""
    try:
        metadata.version(FRAMEWORKS[name].distribution)
    except metadata.PackageNotFoundError:
        return False
    return True


def tested_here(names) -> list[str]:
    """``names`` (framework names, or other row names such as ``plain_python``, kept as they are) minus the
    isolated frameworks not installed in this venv; order kept."""
    return [n for n in names if n not in FRAMEWORKS or FRAMEWORKS[n].venv is None or installed(n)]


def isolated_elsewhere() -> list[str]:
    """The isolated frameworks whose own venv, not this one, runs their tests."""
    return [n for n in FRAMEWORKS if n not in tested_here([n])]


def own_venv() -> str | None:
    """The isolated framework whose venv of its own this is (``.venv-NAME``, Makefile ``ISOLATED``), else ``None``."""
    name = Path(sys.prefix).name
    own = name[len(".venv-"):] if name.startswith(".venv-") else None
    return own if own in FRAMEWORKS and FRAMEWORKS[own].venv == own else None


def rows_here(names) -> list[str]:
    """The rows of a shared suite (framework names and other rows) this venv runs: in an isolated framework's
    own venv, that framework alone; elsewhere :func:`tested_here`."""
    own = own_venv()
    return [own] if own is not None else tested_here(names)
