"""``pipeline.prepare``'s shortcuts give exactly what the full path gives (``redact_data(to_jsonable(value),
limit)``): the same data, the same types, the same cut flag, for data they take and data they must leave to the
full path (secrets, escapes, cuts, tuples, enums, UUIDs, fragments, NaN, depth past the converter's cut). One
shortcut is for plain JSON data (``_plain_copy``, made by ``orjson``); the other for what ``to_jsonable`` made of
anything else (a pydantic model, a dataclass, a tuple: ``_redacted_jsonable``, scanned once in C)."""

from __future__ import annotations

import dataclasses
import enum
import uuid
from typing import Any

import orjson
from hypothesis import given, settings, strategies as st

from otel_agents._spans import pipeline
from otel_agents._spans.encoding import MAX_DEPTH, dumps, to_jsonable
from otel_agents._spans.redaction import redact_data


class _Int(enum.IntEnum):
    A = 1


class _Str(str, enum.Enum):
    A = "text of a str member"


class _Plain(enum.Enum):
    A = 3


_TEXTS = ["Paris", "celsius", "password", "api_key", "max_tokens", "Bearer abcdefghijklmnop",
          "sk-proj-abcdefghijklmnopqrstuv", "p\\u0061ssword", "\x01", "eyJhbGciOi.eyJzdWIiOi.sig",
          "postgres://user:hunter2hunter2@db", "x" * 300, "é ünï", "\u212aey", "user=admin", "--password"]
_scalar = st.one_of(st.sampled_from(_TEXTS), st.text(max_size=20), st.integers(-2**70, 2**70), st.floats(),
                    st.booleans(), st.none(),
                    st.sampled_from([_Int.A, _Str.A, _Plain.A, (1, "a"), uuid.UUID(int=7),
                                     orjson.Fragment(b'{"a":[1]}')]))
_data = st.recursive(_scalar, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.one_of(st.sampled_from(_TEXTS), st.text(max_size=8)), inner,
                                                 max_size=4)), max_leaves=20)


def _same(value: Any, limit: int) -> None:
    got, expected = pipeline.prepare(value, limit), redact_data(to_jsonable(value), limit)
    assert repr(got) == repr(expected)
    # the text prepare_encoded hands on (the encoding it made on the way) is the one dumps would write
    data, cut, text = pipeline.prepare_encoded(value, limit)
    assert repr((data, cut)) == repr(expected)
    assert text is None or text == dumps(expected[0])


@settings(max_examples=600, deadline=None)
@given(st.one_of(st.lists(_data, max_size=4), st.dictionaries(st.text(max_size=10), _data, max_size=4)),
       st.sampled_from([4, 40, 400, 20_000]))
def test_prepare_gives_what_the_full_path_gives(value: Any, limit: int) -> None:
    _same(value, limit)


@dataclasses.dataclass
class _Event:
    """Not plain JSON data: prepare converts it with to_jsonable, then redacts what that made."""

    payload: Any
    extra: tuple = ()


@settings(max_examples=600, deadline=None)
@given(_data, st.sampled_from([4, 40, 400, 20_000]))
def test_prepare_of_converted_data_gives_what_the_full_path_gives(value: Any, limit: int) -> None:
    _same(_Event(value), limit)
    _same({"event": _Event(value, (value,))}, limit)


def test_converted_data_is_scanned_once_and_encoded_on_the_way() -> None:
    event = _Event({"tool_name": "add", "tool_kwargs": {"a": 2, "b": 3}, "blocks": [{"text": "5"}]}, (1, "x"))
    converted = to_jsonable(event)
    assert pipeline._redacted_jsonable(converted, 1000) == (converted, False, dumps(converted))
    # a None is written null by both encoders; a NaN (text after to_jsonable) never reaches orjson as a float
    for odd in (_Event(None, (float("nan"),)), _Event([None, float("inf")])):
        assert pipeline.prepare_encoded(odd, 1000)[2] == dumps(to_jsonable(odd)), odd
    assert pipeline.prepare_encoded(event, 1000)[2] == dumps(converted)
    # left to the walk: a secret-named key, a secret shape, a string to cut, a str subclass orjson refuses
    class Text(str):
        pass

    for value in (_Event({"password": "hunter2"}), _Event(["Bearer abcdefghijklmnop"]), _Event("x" * 2000),
                  _Event({"a": Text("b")}), _Event(["mysql", "--password", "S1"])):
        data, cut, text = pipeline.prepare_encoded(value, 1000)
        assert text is None and repr((data, cut)) == repr(redact_data(to_jsonable(value), 1000)), value


def test_the_shortcut_is_taken_for_plain_arguments_and_left_for_the_rest() -> None:
    assert pipeline._plain_copy({"city": "Paris", "days": [1, 2.5, None, True]}, 1000) is not None
    # its encoding is handed on, except where dumps writes otherwise (small floats: the standard library's); a null
    # is a None there (json_key refuses NaN and infinity, which orjson would write as null)
    assert pipeline.prepare_encoded({"city": "Paris", "days": [1, 2.5]}, 1000)[2] == '{"city":"Paris","days":[1,2.5]}'
    assert pipeline.prepare_encoded({"city": None}, 1000)[2] == '{"city":null}' == dumps({"city": None})
    assert pipeline.prepare_encoded({"t": 1e-7}, 1000)[2] is None
    for value in ({"password": "x"}, {"q": "Bearer abcdefghijkl"}, {"t": (1, 2)}, {"n": float("nan")},
                  {"i": float("inf")}, [None, [float("-inf")]], [float("nan"), None],
                  {"e": _Plain.A}, [uuid.UUID(int=1)], {"city": "Paris"}):
        assert pipeline._plain_copy(value, 10 if value == {"city": "Paris"} else 1000) is None, value
        _same(value, 1000)


def test_data_deeper_than_the_converter_cut_takes_the_full_path() -> None:
    deep: dict[str, Any] = {}
    inner = deep
    for _ in range(MAX_DEPTH + 5):
        inner["a"] = {}
        inner = inner["a"]
    assert pipeline._plain_copy(deep, 10_000) is None
    _same(deep, 10_000)


def test_the_copy_is_not_the_callers_object() -> None:
    value = {"city": "Paris", "tags": ["a"]}
    copy, cut = pipeline.prepare(value, 1000)
    assert copy == value and copy is not value and copy["tags"] is not value["tags"] and cut is False


def test_an_argv_given_as_data_is_redacted_on_either_path() -> None:
    # The argv rule of redact_data (the value after a secret-named option) holds whichever way prepare goes.
    for argv in (["mysql", "--password", "S1"], ["cli", "--api-key", "abc", "-v"], ["x", "--accessToken", "z"],
                 ["x", "-pwd", "q"], ["x", "--AUTH", "q"]):
        got, _ = pipeline.prepare({"argv": argv}, 1000)
        assert got["argv"][2] == "[REDACTED]" and argv[2] not in orjson.dumps(got).decode(), argv
        _same({"argv": argv}, 1000)
        _same(argv, 1000)
