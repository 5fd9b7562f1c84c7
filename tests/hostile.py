"""Hostile user objects (issue 35), shared by the framework tests and the contract kit.

Each is something a real program hands an instrumented framework: a proxy outside its context
(werkzeug's ``LocalProxy``), an exception that cannot print itself, a list subclass whose ``__len__``
raises, a pydantic model holding a generator, a mock.
"""

from __future__ import annotations

from typing import Any
from unittest import mock

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


class EverythingRaises:
    """An object every protocol of which raises: ``==``, ``hash``, ``len``, ``iter``, ``bool``, ``repr``,
    ``str``, ``format`` and any attribute it does not have (a broken C-extension handle, a proxy)."""

    def _no(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("hostile object")

    __eq__ = __ne__ = __lt__ = __hash__ = __len__ = __iter__ = __bool__ = _no  # type: ignore[assignment]
    __repr__ = __str__ = __format__ = __contains__ = __getitem__ = _no  # type: ignore[assignment]

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"hostile object has no {name}")


class ArrayLike:
    """Like a numpy array: ``bool()`` raises ("truth value … is ambiguous"), ``==`` gives another array,
    ``len`` and iteration work, and it has ``tolist``/``shape``/``dtype``."""

    def __init__(self, items: list[Any]):
        self.items = items
        self.shape = (len(items),)
        self.dtype = "float64"

    def __bool__(self) -> bool:
        raise ValueError("The truth value of an array with more than one element is ambiguous.")

    def __eq__(self, other: Any) -> Any:  # type: ignore[override]
        return ArrayLike([x == other for x in self.items])

    __ne__ = __eq__
    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return len(self.items)

    def __iter__(self) -> Any:
        return iter(self.items)

    def tolist(self) -> list[Any]:
        return list(self.items)

    def __repr__(self) -> str:
        return f"array({self.items!r})"


class SerializerRaises(pydantic.BaseModel):
    """A pydantic model whose serializers and computed field raise (``model_dump``/``model_dump_json`` fail)."""

    name: str

    @pydantic.computed_field  # type: ignore[prop-decorator]
    @property
    def derived(self) -> str:
        raise RuntimeError("computed field fails")

    @pydantic.model_serializer
    def _serialize(self) -> Any:
        raise RuntimeError("serializer fails")


class HostileStr(str):
    """A ``str`` subclass whose ``__str__``, ``__repr__``, ``__len__`` and ``__hash__`` raise."""

    def _no(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("hostile str")

    __str__ = __repr__ = __len__ = __hash__ = __eq__ = _no  # type: ignore[assignment]


class StrRaises:
    """An id whose ``__str__`` raises; its ``repr`` works (and is no id either)."""

    def __str__(self) -> str:
        raise RuntimeError("this id cannot be written as text")

    def __repr__(self) -> str:
        return "<StrRaises>"


class Spy(mock.MagicMock):
    """A ``MagicMock`` that records every call as one does (``mock_calls``: calls of it, of its attributes and
    of its magic methods) but whose calls return ``None``, not a new mock: a framework that walks a value
    recursively then ends at once. Google ADK's own telemetry (``_to_any_value``) calls ``to_dict()`` on
    whatever has one; a plain mock's result has one again, and again (~1.5M mocks, 50 s per X-8 run)."""

    def _get_child_mock(self, **kwargs: Any) -> Any:
        if kwargs.get("_new_name") == "()":  # the return value of a call
            return None
        return super()._get_child_mock(**kwargs)
