"""The safe encoder and JSON-preserving truncation (case X-6's odd values)."""

from __future__ import annotations

import dataclasses
import datetime as dt
import decimal
import json
import pathlib
import uuid

import pydantic
from hypothesis import given, settings, strategies as st

from otel_agents._spans import encode, fit_json, fit_text, to_jsonable
from otel_agents._spans.encoding import dumps


class Order(pydantic.BaseModel):
    order_id: str
    total: decimal.Decimal


@dataclasses.dataclass
class Point:
    x: int
    label: str


def test_x6_odd_values_encode_without_losing_the_rest() -> None:
    """X-6: circular reference, bytes, datetime, Decimal, set, pydantic, non-string keys, non-ASCII."""
    circular: dict = {"name": "loop"}
    circular["self"] = circular
    value = {
        "circular": circular,
        "bytes": b"hello",
        "binary": b"\xff\x00",
        "when": dt.datetime(2026, 11, 30, 4, 15, tzinfo=dt.timezone.utc),
        "day": dt.date(2026, 1, 2),
        "price": decimal.Decimal("12.30"),
        "tags": {"b", "a"},
        "order": Order(order_id="A100", total=decimal.Decimal("9.99")),
        "point": Point(1, "p"),
        "keys": {1: "one", (2, 3): "tuple", None: "none"},
        "text": "ünïcødé ✓ 日本",
        "id": uuid.UUID(int=1),
        "path": pathlib.PurePosixPath("/tmp/x"),
        "nan": float("nan"),
    }
    data = json.loads(encode(value))
    assert data["circular"]["name"] == "loop" and data["circular"]["self"].startswith("<circular")
    assert data["bytes"] == "hello"
    assert data["binary"] == "base64:/wA="
    assert data["when"] == "2026-11-30T04:15:00+00:00"
    assert data["day"] == "2026-01-02"
    assert data["price"] == "12.30"
    assert data["tags"] == ["a", "b"]
    assert data["order"] == {"order_id": "A100", "total": "9.99"}
    assert data["point"] == {"x": 1, "label": "p"}
    assert data["keys"] == {"1": "one", "(2, 3)": "tuple", "null": "none"}
    assert data["text"] == "ünïcødé ✓ 日本"
    assert "ünïcødé" in encode(value)  # non-ASCII kept, not \u-escaped
    assert data["id"] == "00000000-0000-0000-0000-000000000001"
    assert data["path"] == "/tmp/x"
    assert data["nan"] == "nan"


def test_one_bad_part_does_not_drop_the_whole_value() -> None:
    class Exploding:
        def __repr__(self) -> str:
            raise RuntimeError("no repr")

    class BadModel(pydantic.BaseModel):
        a: int = 1

        def model_dump(self, **kw):  # type: ignore[override]
            raise RuntimeError("broken dump")

    data = json.loads(encode({"ok": 1, "bad": Exploding(), "model": BadModel()}))
    assert data["ok"] == 1
    assert data["bad"].startswith("<unserializable")
    assert data["model"] == {"a": 1}


def test_five_megabyte_string_is_cut_to_budget() -> None:
    big = {"text": "x" * 5_000_000, "keep": "small"}
    text, cut = fit_json(to_jsonable(big), encode(big), 1000)
    assert cut and len(text) <= 1000
    data = json.loads(text)
    assert data["keep"] == "small" and data["text"].endswith("…")


def test_fit_text() -> None:
    assert fit_text("abc", 10) == ("abc", False)
    text, cut = fit_text("a" * 100, 10)
    assert cut and len(text) == 10 and text.endswith("…")


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(max_size=300),
    lambda children: st.lists(children, max_size=20) | st.dictionaries(st.text(max_size=30), children, max_size=20),
    max_leaves=200,
)


@settings(max_examples=300, deadline=None)
@given(value=json_values, budget=st.integers(min_value=64, max_value=2000))
def test_truncation_always_valid_json_within_budget(value, budget: int) -> None:
    """Whatever the value and budget (>= 64), the result parses and fits."""
    data = to_jsonable(value)
    text, cut = fit_json(data, dumps(data), budget)
    assert len(text) <= budget
    json.loads(text)
    if not cut:
        assert json.loads(text) == json.loads(dumps(data))


def test_binary_past_the_media_budget_is_summarised_not_base64(monkeypatch) -> None:
    """Binary bytes (a tool returning an image) are media: past OTEL_AGENTS_MAX_MEDIA_BYTES they keep
    size and SHA-256 only, so a 5 MB result is never base64-encoded whole to be cut afterwards."""
    import hashlib

    big = b"\xff" + bytes(range(256)) * 20_000
    assert to_jsonable({"image": big}) == {"image": f"<bytes: {len(big)} bytes, sha256 {hashlib.sha256(big).hexdigest()}>"}
    assert to_jsonable(memoryview(b"\xff\x00")) == "base64:/wA="  # within the budget: inline
    monkeypatch.setenv("OTEL_AGENTS_MAX_MEDIA_BYTES", "1")
    assert to_jsonable(b"\xff\x00").startswith("<bytes: 2 bytes, sha256 ")


# --- issue 35: serialising for a span never runs the user's code with side effects ----------------


class _Holder(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(arbitrary_types_allowed=True)
    name: str
    rows: object  # a generator, in the case below


def test_issue35_pydantic_model_holding_a_generator_is_not_iterated() -> None:
    """Issue 35: ``to_jsonable`` called ``model_dump()``, which iterated a generator held by a model: the
    application found it exhausted. Its fields are read as stored; the generator is recorded by type."""
    rows = (i for i in range(3))
    holder = _Holder(name="report", rows=rows)
    assert to_jsonable(holder) == {"name": "report", "rows": "<generator>"}
    assert list(holder.rows) == [0, 1, 2]  # untouched


def test_issue35_a_mock_result_records_no_calls() -> None:
    """Issue 35: a ``MagicMock`` result recorded dozens of ``model_dump()`` calls in ``mock_calls``,
    breaking the user's own assertions. A mock is recorded by type, and nothing of it is called."""
    from unittest import mock

    result = mock.MagicMock()
    nested = {"r": result, "l": [mock.NonCallableMagicMock()]}
    assert to_jsonable(nested) == {"r": "<MagicMock>", "l": ["<NonCallableMagicMock>"]}
    assert result.mock_calls == [] and result.method_calls == []


def test_issue35_iterators_and_coroutines_are_recorded_by_type_and_untouched() -> None:
    it = iter([1, 2])

    async def co() -> int:
        return 1

    coro = co()
    try:
        assert to_jsonable({"it": it, "co": coro}) == {"it": "<list_iterator>", "co": "<coroutine>"}
        assert list(it) == [1, 2]
    finally:
        coro.close()


def test_issue35_a_proxy_whose_attributes_raise_does_not_break_the_value() -> None:
    """A proxy (werkzeug's ``LocalProxy`` outside its context) raises on every attribute, ``__class__``
    included: it is recorded by its own type's ``repr``, never probed through ``__getattr__``."""

    class Unbound:
        def __getattr__(self, name: str) -> object:
            raise RuntimeError("working outside of request context")

        @property
        def __class__(self):  # noqa: D401 - what LocalProxy does
            raise RuntimeError("working outside of request context")

        def __repr__(self) -> str:
            return "<LocalProxy unbound>"

    assert to_jsonable({"ok": 1, "p": Unbound()}) == {"ok": 1, "p": "<LocalProxy unbound>"}


def test_issue35_overrides_of_builtin_containers_are_not_called() -> None:
    class Hostile(list):
        def __len__(self) -> int:
            raise RuntimeError("no len")

    class Loud(dict):
        def items(self):  # noqa: ANN201
            raise RuntimeError("side effect")

    assert to_jsonable({"l": Hostile([1, 2]), "d": Loud(a=1)}) == {"l": [1, 2], "d": {"a": 1}}


def test_issue35_model_fields_follow_model_dump_without_running_it() -> None:
    """Plain fields as ``model_dump(mode="json")`` gives them; excluded fields left out; a RootModel is its
    root; extra fields kept."""

    class Secretive(pydantic.BaseModel):
        model_config = pydantic.ConfigDict(extra="allow")
        shown: int
        hidden: str = pydantic.Field(default="x", exclude=True)

    class Roots(pydantic.RootModel[list[int]]):
        pass

    assert to_jsonable(Secretive(shown=1, more="y")) == {"shown": 1, "more": "y"}
    assert to_jsonable(Roots([1, 2])) == [1, 2]
    assert to_jsonable(Order(order_id="A", total=decimal.Decimal("1.5"))) == \
        Order(order_id="A", total=decimal.Decimal("1.5")).model_dump(mode="json")


def test_an_enum_inside_data_is_its_value_even_when_its_text_differs() -> None:
    """A mixed-in member whose text is not its value (a custom ``__new__``, as the enum docs show) is
    its value, as every other enum member and as orjson (and so the content caches' keys) write it."""
    import enum

    class Labelled(str, enum.Enum):
        def __new__(cls, value: str, text: str) -> "Labelled":
            member = str.__new__(cls, text)
            member._value_ = value
            return member

        SHOWN = ("other text", "shown text")

    assert str.__str__(Labelled.SHOWN) == "shown text"
    assert to_jsonable({"a": [Labelled.SHOWN]}) == {"a": ["other text"]}


def test_an_orjson_fragment_is_the_json_it_holds() -> None:
    import orjson

    assert to_jsonable({"a": orjson.Fragment(b'[1, {"b": 2}]')}) == {"a": [1, {"b": 2}]}
    assert to_jsonable(orjson.Fragment(b"{not json")).startswith("<orjson.Fragment")


def test_an_integer_too_long_for_text_is_a_placeholder_not_the_loss_of_the_value() -> None:
    """Python refuses to write an integer of more than 4,300 digits as text (``sys.int_info``'s
    ``default_max_str_digits``): a tool returning ``math.factorial(2000)`` made ``encode`` fail and the whole
    value was lost (the tool's result attribute missing, an internal error logged). The integer becomes a
    placeholder with its size; the rest of the value, and ordinary big integers, are kept as they are."""
    huge = 10 ** 5000
    data = json.loads(encode({"n": huge, "k": {huge: "as a key"}, "other": 1, "big": 2 ** 200}))
    assert data["other"] == 1 and data["big"] == 2 ** 200
    assert data["n"] == data["k"].popitem()[0] == "<int: 16610 bits>"
    assert json.loads(encode(-huge)) == "<int: 16610 bits>"


def test_a_model_class_registered_to_an_abc_later_is_read_as_the_abc_says() -> None:
    """to_jsonable remembers that a pydantic model class passed its checks (mapping, iterator…) and reads the next
    instance's fields directly; an ABC ``register()`` afterwards (a model declared an Iterator) is seen: its
    instances are then recorded as the iterators they claim to be, never read."""
    from collections.abc import Iterator

    import pydantic

    from otel_agents._spans.encoding import to_jsonable

    class Model(pydantic.BaseModel):
        a: int = 1

    assert to_jsonable(Model()) == {"a": 1} and to_jsonable([Model(a=2)]) == [{"a": 2}]
    Iterator.register(Model)
    assert to_jsonable(Model()) == "<Model>"
