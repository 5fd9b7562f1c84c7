"""The orjson fast paths write and read exactly what the standard library does (issue #27).

The span layer's ``encoding.dumps``, the fold's ``_json.compact``/``_json.loads`` and the
file writers use ``orjson`` where it gives the standard library's exact text, and hand the
rest to the standard library (tiny floats, ``NaN``, integers beyond 64 bits, lone
surrogates, non-``str`` keys). These property tests pin that the output is byte-identical.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import example, given, settings, strategies as st

from otel_agents._spans import encoding
from otel_agents.exporters.ecp import _json
from otel_agents.exporters.ecp._envelope import _logs
from otel_agents.exporters.ecp._facts import parse_json

_STD_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode
_STD_SORTED = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str).encode

_floats = st.floats(allow_nan=True, allow_infinity=True) | st.sampled_from(
    [1e-5, -7.7e-05, 1e-7, 1.5e-300, 5e-324, 1e16, 1e22, 0.0001, 123456789.123])
_ints = st.integers() | st.sampled_from([2**63, -(2**63) - 1, 2**64, 10**30])
_text = st.text(alphabet=st.characters(blacklist_categories=()), max_size=20) | st.sampled_from(
    ["\ud800", "null", "e-5", "0.0000", "é\u2028\x7f\x00"])
_scalars = st.none() | st.booleans() | _ints | _floats | _text
_data = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
                     | st.dictionaries(_text, inner, max_size=4), max_leaves=20)


def _outcome(fn: Any, value: Any) -> Any:
    try:
        return fn(value)
    except (ValueError, TypeError) as exc:
        return type(exc)


_EDGES = [[math.nan], {"x": [math.inf, 1e-05]}, [2**64, -(2**63) - 1], ["\ud800"], {"z": 1, "a": [7.7e-05, None]}]


def _examples(fn: Any) -> Any:
    for edge in _EDGES:
        fn = example(edge)(fn)
    return fn


@settings(max_examples=400, deadline=None)
@given(_data)
@_examples
def test_span_layer_dumps_is_the_standard_librarys_text(data: Any) -> None:
    std = _outcome(lambda d: json.dumps(d, ensure_ascii=False, separators=(",", ":"), allow_nan=False), data)
    assert _outcome(encoding.dumps, data) == std


@settings(max_examples=400, deadline=None)
@given(_data)
@_examples
def test_fold_compact_json_is_the_standard_librarys_text(data: Any) -> None:
    assert _outcome(lambda d: _json.compact(d, _STD_COMPACT), data) == _outcome(_STD_COMPACT, data)
    assert _outcome(lambda d: _json.compact(d, _STD_SORTED, sort_keys=True), data) == _outcome(_STD_SORTED, data)


def _nan_to_none(data: Any) -> Any:
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, (list, tuple)):
        return [_nan_to_none(x) for x in data]
    if isinstance(data, dict):
        return {k: _nan_to_none(v) for k, v in data.items()}
    return data


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_text, _scalars | st.lists(_scalars, max_size=3).map(tuple), max_size=4))  # attribute values
@example({"t": math.nan, "u": (1.0, math.inf), "v": 1e-07})
def test_fold_logs_are_the_standard_librarys_text_with_non_finite_numbers_as_null(attributes: Any) -> None:
    expected = _outcome(_STD_COMPACT, [{"attributes": _nan_to_none(attributes)}])
    assert _outcome(lambda a: _logs([{"attributes": dict(a)}]), attributes) == expected


def _same(a: Any, b: Any) -> bool:
    """Equal, with types (``1`` is not ``1.0``) and ``NaN`` equal to itself."""
    if type(a) is not type(b):
        return False
    if isinstance(a, float):
        return a == b or (math.isnan(a) and math.isnan(b))
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return list(a) == list(b) and all(_same(a[k], b[k]) for k in a)
    return a == b


@settings(max_examples=400, deadline=None)
@given(_data, st.integers(min_value=0, max_value=40))
@example([math.nan, 2**64, 1e-05], 5)
def test_fold_parse_json_reads_what_the_standard_library_reads(data: Any, cut: int) -> None:
    try:
        text = json.dumps(data, ensure_ascii=False)
    except ValueError:
        text = str(data)
    for candidate in (text, text[:cut], text.replace("1", "1e400", 1)):
        expected = _outcome(_json.strict_decode, candidate)
        assert _same(_outcome(lambda t: _json.loads(t, _json.strict_decode), candidate), expected)
        assert _same(parse_json(candidate), candidate if isinstance(expected, type) else expected)


def test_big_integers_in_json_text_stay_exact() -> None:
    # orjson reads integers beyond 64 bits as floats; the fold must keep them exact
    assert parse_json('{"id": 18446744073709551616, "n": -9223372036854775809}') == {
        "id": 18446744073709551616, "n": -9223372036854775809}
    assert encoding.dumps({"x": 1e-05, "y": [2**64]}) == '{"x":1e-05,"y":[18446744073709551616]}'


class _Float64(float):
    """A float subclass, as ``numpy.float64`` is (the OTel SDK keeps such attribute values as they are)."""

    def __repr__(self) -> str:
        return f"Float64({float(self)!r})"


def test_float_and_tuple_subclasses_are_numbers_and_arrays_as_the_standard_library_writes_them() -> None:
    """``orjson`` hands float and tuple subclasses (``numpy.float64``, named tuples) to ``default``
    (``str``) where the standard library writes a number and an array: the fold must not turn an
    attribute value ``numpy.float64(0.5)`` into the string ``"0.5"``."""
    from collections import namedtuple

    point = namedtuple("point", "x y")
    for value in ([_Float64(0.5)], {"t": _Float64(1e16)}, [point(1, 2)], {"p": point(_Float64(2.5), "a")}):
        assert _json.compact(value, _STD_COMPACT) == _STD_COMPACT(value)
        assert _json.compact(value, _STD_SORTED, sort_keys=True) == _STD_SORTED(value)
        assert encoding.dumps(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    assert _logs([{"attributes": {"gen_ai.request.temperature": _Float64(0.5)}}]) == (
        '[{"attributes":{"gen_ai.request.temperature":0.5}}]')


def test_fold_logs_write_a_non_finite_float_subclass_as_null() -> None:
    """``numpy.float64('nan')`` as an attribute value: ``null`` in ``logs`` (strict JSON), as for a
    plain ``float('nan')``, not an error that loses the envelope."""
    assert _logs([{"attributes": {"a": _Float64(math.nan), "b": (_Float64(math.inf), 1.0)}}]) == (
        '[{"attributes":{"a":null,"b":[null,1.0]}}]')


def _escaped(data: Any) -> Any:
    """``_nan_to_none`` plus lone surrogates escaped as text (``utf8_safe``)."""
    if isinstance(data, str):
        return encoding.utf8_safe(data)
    if isinstance(data, (list, tuple)):
        return [_escaped(x) for x in data]
    if isinstance(data, dict):
        return {(encoding.utf8_safe(k) if isinstance(k, str) else k): _escaped(v) for k, v in data.items()}
    return _nan_to_none(data)


@settings(max_examples=400, deadline=None)
@given(_data)
@_examples
def test_envelope_lines_are_the_standard_librarys_text_strict_and_utf8(data: Any) -> None:
    """Issue #35: ``otel-agents fold`` wrote ``1e-7`` and ``ECPFileExporter`` ``1e-07`` (and differed on
    ``NaN``): both now write with ``envelope_line``, the standard library's text with non-finite numbers
    as ``null`` and lone surrogates escaped, so every line is strict JSON and valid UTF-8."""
    import orjson

    line = _json.envelope_line(data)
    assert line == _STD_COMPACT(_escaped(data))
    orjson.loads(line.encode("utf-8"))  # strict JSON, valid UTF-8 (orjson refuses NaN and lone surrogates)


_strings_only = st.recursive(_text, lambda inner: st.lists(inner, max_size=4)
                             | st.dictionaries(_text, inner, max_size=4), max_leaves=20)


@settings(max_examples=400, deadline=None)
@given(_strings_only)
@example({"role": "user", "parts": [{"type": "text", "content": "lone \udcff, null, 1e-05, 0.00001"}]})
def test_dumps_strings_is_dumps_for_data_of_strings(data: Any) -> None:
    """``encoding.dumps_strings`` (a text message's GenAI JSON, without ``dumps``'s output scans) writes
    exactly what ``dumps`` and the standard library write for data made of strings, lists and dicts."""
    std = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    assert encoding.dumps_strings(data) == encoding.dumps(data) == std


def _model_span(output_messages: str) -> Any:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext

    from otel_agents.exporters.ecp._facts import FoldSpan

    return FoldSpan(ReadableSpan(name="chat m", context=SpanContext(1, 2, False), attributes={
        "otel_agents.span.kind": "model", "gen_ai.output.messages": output_messages}))


def test_requested_calls_skips_the_parse_only_when_no_part_can_be_a_tool_call() -> None:
    from otel_agents.exporters.ecp._facts import requested_calls

    call = {"role": "assistant", "parts": [{"type": "tool_call", "name": "search", "id": "c1", "arguments": {}}]}
    text = json.dumps([call])
    assert requested_calls(_model_span(text)) == ["search"]
    # the same part with "_" written as a JSON escape: no literal "tool_call" in the text, still a call
    escaped = text.replace("tool_call", "tool\\u005fcall")
    assert "tool_call" not in escaped and json.loads(escaped) == [call]
    assert requested_calls(_model_span(escaped)) == ["search"]
    answer = [{"role": "assistant", "parts": [{"type": "text", "content": "sunny"}]}]
    assert requested_calls(_model_span(json.dumps(answer))) == []


def _one_line_reference(text: Any, limit: int) -> str:
    s = str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\t", " ")
    return s if len(s) <= limit else s[: limit - 1] + "…"


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30) | st.integers() | st.none(), st.integers(min_value=1, max_value=25))
def test_one_line_fast_path_gives_the_general_paths_text(text: Any, limit: int) -> None:
    from otel_agents.exporters.ecp._facts import one_line

    assert one_line(text, limit) == _one_line_reference(text, limit)


@given(st.integers(min_value=0, max_value=2**128 - 1))
def test_id_hex_is_format_text(number: int) -> None:
    from otel_agents.exporters.ecp._facts import span_id_hex, trace_id_hex

    assert span_id_hex(number) == format(number, "016x") and trace_id_hex(number) == format(number, "032x")


@settings(max_examples=2000, deadline=None)
@given(st.integers(min_value=1, max_value=2**53) | st.sampled_from(
    [1, 499, 500, 501, 1500, 2500, 999_999_500, 2**52 - 1, 2**52, 2**52 + 500, 123_456_789_500]))
def test_span_duration_is_rounds_text(elapsed: int) -> None:
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext

    from otel_agents.exporters.ecp._facts import FoldSpan

    start = 1_700_000_000_000_000_000
    span = FoldSpan(ReadableSpan(name="s", context=SpanContext(1, 2, False), start_time=start,
                                 end_time=start + elapsed))
    assert repr(span.duration_ms) == repr(round(elapsed / 1e6, 3))


def test_text_with_e_dash_is_encoded_by_orjson_and_a_tiny_float_beside_it_by_the_standard_library() -> None:
    """``logs`` of an Anthropic run name ``claude-…`` models and a time may read ``…:00.000000Z``: neither is
    a tiny float, so the standard library's (slower) encoder is not needed; a tiny float next to them still
    gets its ``repr`` text."""
    def refuse(_: Any) -> str:
        raise AssertionError("the standard library's encoder was used")

    plain = [{"gen_ai.request.model": "claude-3-5-haiku", "note": "one-line e-mail", "t": 0.5,
              "start": "2026-12-05T02:00:00.000000Z", "d": 10.00001, "n": [1e-4, 0.0, -0.0001]}]
    assert _json.compact(plain, refuse, nan_as_null=True) == _STD_COMPACT(plain)
    for tiny in (1e-05, 1.5e-07, -2e-300, 1.234e-05, -1e-05, 5e-324):
        value = [{"gen_ai.request.model": "claude-3-5-haiku", "p": tiny}]
        assert _json.compact(value, _STD_COMPACT, nan_as_null=True) == _STD_COMPACT(value)
        assert _json.compact(value, _STD_SORTED, sort_keys=True) == _STD_SORTED(value)
