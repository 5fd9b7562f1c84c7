"""The span layer's attribute probes (``_spans.probes.attr``/``has_attr``/``field``): what ``getattr``/``hasattr``
(and ``dict.get`` for mappings) answer, never an exception, and a name a pydantic model lacks answered without
pydantic's ``__getattr__`` raising ``AttributeError`` (the cost the probe exists to avoid)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from types import SimpleNamespace
from typing import Any, ClassVar

import pydantic
import pytest
from pydantic.dataclasses import dataclass as pydantic_dataclass

from otel_agents._spans import probes

MISSING = object()


class Closed(pydantic.BaseModel):
    text: str = "t"
    nothing: str | None = None
    kind: ClassVar[str] = "closed"
    _secret: str = pydantic.PrivateAttr(default="private")

    @property
    def shout(self) -> str:
        return self.text.upper()

    @property
    def broken(self) -> str:
        raise ValueError("a property that fails")

    @property
    def absent(self) -> str:
        raise AttributeError("a property that says it is not there")

    def method(self) -> str:
        return "m"


class Required(pydantic.BaseModel):
    n: int
    text: str = "t"


class Open(Closed):
    model_config = pydantic.ConfigDict(extra="allow")


class Answers(pydantic.BaseModel):  # a model that answers every name itself
    text: str = "t"

    def __getattr__(self, name: str) -> Any:
        return f"computed {name}"


class Hostile(pydantic.BaseModel):  # its __getattr__ raises something other than AttributeError
    text: str = "t"

    def __getattr__(self, name: str) -> Any:
        raise RuntimeError(f"no {name} here")


class HostileObject:
    a = 1

    def __getattr__(self, name: str) -> Any:
        raise KeyError(name)


class MappingModel(pydantic.BaseModel, Mapping):  # type: ignore[misc]
    text: str = "t"

    def __getitem__(self, key: str) -> Any:
        return "item " + key

    def __iter__(self) -> Iterator[str]:
        return iter(["text"])

    def __len__(self) -> int:
        return 1


@pydantic_dataclass
class Params:
    uri: str = "file:///orders.csv"


@pydantic_dataclass(slots=True)
class Slotted:
    code: int = 7


class Plain:
    a = 4

    def __init__(self) -> None:
        self.b = None


NAMES = ("text", "nothing", "kind", "_secret", "_undeclared", "shout", "absent", "method", "model_config", "n",
         "model_dump", "other", "extra_none", "missing", "uri", "code", "a", "b", "__class__", "__dict__", "get")


def objects() -> list[Any]:
    return [Closed(text="x"), Required.model_construct(), Open(text="x", other="o", extra_none=None), Open(),
            Answers(), MappingModel(), Params(), Slotted(), Plain(), SimpleNamespace(a=1, text=None), {"text": 1},
            "text", 3, None, Closed]


@pytest.mark.parametrize("obj", objects(), ids=lambda o: type(o).__name__)
def test_attr_and_has_attr_answer_as_getattr_and_hasattr(obj: Any) -> None:
    for name in NAMES:
        expected = getattr(obj, name, MISSING)
        got = probes.attr(obj, name, MISSING)
        assert got is expected or got == expected, name
        assert probes.attr(obj, name) == (None if expected is MISSING else expected), name
        assert probes.has_attr(obj, name) is hasattr(obj, name), name


def test_field_reads_a_mappings_keys_and_anything_else_as_attr() -> None:
    assert probes.field({"text": 1}, "text") == 1 and probes.field({"text": None}, "text", 2) is None
    assert probes.field({}, "get", "d") == "d"  # a key, not the method
    assert probes.field(MappingModel(), "text") == "item text"  # a Mapping is read as one
    assert probes.field(MappingModel(), "missing", "d") == "item missing"
    open_model = Open(other="o")
    assert probes.field(open_model, "other") == "o" and probes.field(open_model, "text") == "t"
    assert probes.field(open_model, "missing", "d") == "d" and probes.field(None, "x", "d") == "d"
    assert probes.field(Params(), "uri") == "file:///orders.csv" and probes.field(Slotted(), "message") is None


def test_a_property_or_getattr_that_raises_is_the_default() -> None:
    """A failing property, a ``__getattr__`` raising something else than ``AttributeError`` (a pydantic model's
    or a plain object's): the default, never the exception; what the class defines still reads."""
    assert probes.attr(Closed(), "broken", "d") == "d" and probes.has_attr(Closed(), "broken") is False
    assert probes.attr(Hostile(), "missing", "d") == "d" and probes.has_attr(Hostile(), "missing") is False
    assert probes.attr(Hostile(), "text") == "t" and probes.has_attr(Hostile(), "text") is True
    assert probes.attr(HostileObject(), "b", "d") == "d" and probes.field(HostileObject(), "b", "d") == "d"
    assert probes.attr(HostileObject(), "a") == 1 and probes.has_attr(HostileObject(), "b") is False

    class HostileMapping(Mapping):  # type: ignore[type-arg]
        def __getitem__(self, key: str) -> Any:
            raise RuntimeError(key)

        def __iter__(self) -> Iterator[str]:
            return iter(())

        def __len__(self) -> int:
            return 0

    assert probes.field(HostileMapping(), "a", "d") == "d"


def test_a_models_miss_never_reaches_pydantics_getattr(monkeypatch: pytest.MonkeyPatch) -> None:
    """A name the model lacks (closed model, open model without that extra, an undeclared private name, a required
    field ``model_construct`` left unset) is answered from the instance's ``__dict__`` and extras: pydantic's
    ``__getattr__`` (which would raise and catch an ``AttributeError``) is not called; what it answers for a
    declared private attribute still comes from it."""
    calls: list[str] = []
    pydantic_getattr = pydantic.BaseModel.__getattr__

    def counting(self: Any, name: str) -> Any:
        calls.append(name)
        return pydantic_getattr(self, name)

    monkeypatch.setattr(pydantic.BaseModel, "__getattr__", counting)
    for obj in (Closed(), Open(other="o"), Required.model_construct()):
        assert probes.attr(obj, "missing") is None and probes.has_attr(obj, "missing") is False
        assert probes.attr(obj, "_undeclared", "d") == "d" and probes.field(obj, "root") is None
    assert probes.attr(Required.model_construct(), "n", "d") == "d" and probes.attr(Open(other="o"), "other") == "o"
    assert calls == []
    assert probes.attr(Closed(), "_secret") == "private" and calls == ["_secret"]


def test_the_per_class_memory_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(probes, "_READINGS_MAX", 4)
    monkeypatch.setattr(probes, "_READINGS", {})
    for i in range(10):
        model = pydantic.create_model(f"M{i}", text=(str, "t"))
        assert probes.attr(model(), "text") == "t" and probes.attr(model(), "other") is None
        assert len(probes._READINGS) <= 4
