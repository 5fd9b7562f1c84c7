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
