"""Our instrumentors next to the other instrumentations of the same frameworks: run in ``.venv-peers``."""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from types import ModuleType

import pytest

OWN_VENV = ".venv-peers"


def needs_the_peers(module: str) -> ModuleType:
    """``module``, a peer instrumentation: imported in ``.venv-peers`` (Makefile ISOLATED ``peers``), where it is the
    venv's reason to be (an ImportError fails the test module); elsewhere the calling test module is skipped,
    saying where it runs. The peers are not installed in ``.venv``: the zero-code tests' ``opentelemetry-instrument``
    would load their entry points in every process (OpenInference's Agno one: ~6 s of CPU)."""
    if Path(sys.prefix).name == OWN_VENV:
        return importlib.import_module(module)
    return pytest.importorskip(module, reason=f"the peer instrumentations are installed in {OWN_VENV} "
                                              f"(Makefile ISOLATED `peers`)")
