"""Hostile user objects (issue 35), shared by the framework tests and the contract kit.

Each is something a real program hands an instrumented framework: a proxy outside its context
(werkzeug's ``LocalProxy``), an exception that cannot print itself, a list subclass whose ``__len__``
raises, a pydantic model holding a generator, a mock.
"""

from __future__ import annotations

from typing import Any

import pydantic


class UnboundProxy:
    """Like werkzeug's ``LocalProxy`` used outside its context: an attribute it does not have raises
    ``RuntimeError`` (not ``AttributeError``), so ``hasattr``/``getattr(…, default)`` raise too."""

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError("Working outside of application context.")

    def __repr__(self) -> str:
        return "<LocalProxy unbound>"

    def __str__(self) -> str:
        return "<LocalProxy unbound>"


class UnprintableError(Exception):
    """An exception whose ``__str__`` and ``__repr__`` raise."""

    def __str__(self) -> str:
        raise RuntimeError("cannot print this error")

    def __repr__(self) -> str:
        raise RuntimeError("cannot repr this error")


class LenRaisingList(list):
    """A list whose ``__len__`` raises (so does ``bool()`` of it)."""

    def __len__(self) -> int:
        raise RuntimeError("no len for you")


class RowsHolder(pydantic.BaseModel):
    """A pydantic model holding a generator (``model_dump`` would iterate it)."""

    model_config = pydantic.ConfigDict(arbitrary_types_allowed=True)
    name: str
    rows: Any
