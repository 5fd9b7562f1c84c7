"""The streaming fold's fast paths (issue 40) give what the plain code they replace gives.

Each test pins one shortcut against the general path it stands for: the envelope line with its ``logs`` encoded
apart (not searched for tiny floats), a run's spans sorted in start order with the key read in C, the steps of
ours ``PeerViews`` keeps, and a span's token usage read once.
"""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import example, given, settings, strategies as st
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import SpanContext

from otel_agents._spans import encoding
from otel_agents.exporters.ecp import _json
from otel_agents.exporters.ecp import _facts as F
from otel_agents.exporters.ecp import _runs as R
from otel_agents.semconv import attributes as A

_STD = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str).encode


def _escaped(data: Any) -> Any:
    """What ``envelope_line`` writes: non-finite numbers as ``None``, lone surrogates escaped as text."""
    if isinstance(data, str):
        return encoding.utf8_safe(data)
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, (list, tuple)):
        return [_escaped(x) for x in data]
    if isinstance(data, dict):
        return {(encoding.utf8_safe(k) if isinstance(k, str) else k): _escaped(v) for k, v in data.items()}
    return data


_text = st.text(max_size=12) | st.sampled_from(["\ud800", "null", "1e-05", "x0.00001", "é\u2028\x7f\x00", '"\\'])
_values = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | _text |
                       st.sampled_from([1e-05, -7.7e-05, 1e-7, 2**64, 0.0001]),
                       lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
                       max_leaves=12)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(_text.filter(lambda k: k != "logs"), _values, max_size=5),
       st.lists(_text, min_size=1, max_size=200).map("".join), st.integers(min_value=0, max_value=5))
@example({"metrics": {"cost_usd": 1e-05}, "trace_id": "ab"}, "x" * 600 + "1e-05 \ud800", 1)
@example({}, "y" * 600, 0)
def test_envelope_line_with_its_logs_apart_is_the_whole_lines_text(around: dict[str, Any], logs: str,
                                                                      at: int) -> None:
    items = list(around.items())
    envelope = dict(items[:at] + [("logs", logs * (1 + 600 // max(len(logs), 1)))] + items[at:])
    assert _json.envelope_line(envelope) == _STD(_escaped(envelope))


def test_an_envelopes_logs_are_not_searched_for_tiny_floats(monkeypatch: pytest.MonkeyPatch) -> None:
    """``logs`` is a string: both encoders write it alike, so text in it that reads like a tiny float (an attribute
    written ``1e-05`` by ``logs``' own encoding) does not send the whole line to the standard library; a tiny
    float beside it still does."""
    logs = '[{"attributes":{"gen_ai.request.temperature":1e-05}}]' + " " * 600
    envelope = {"status": "done", "logs": logs, "trace_id": "ab", "metrics": {"duration_ms": 0.5}}
    expected = _STD(envelope)

    def refused(_: Any) -> str:
        raise AssertionError("the standard library's encoder was used")

    with monkeypatch.context() as m:
        m.setattr(_json, "_standard_line", refused)
        assert _json.envelope_line(envelope) == expected
    envelope["metrics"]["duration_ms"] = 1e-05
    assert _json.envelope_line(envelope) == _STD(envelope)  # 1e-05, as repr writes it


def _span(span_id: int, start: int | None) -> F.FoldSpan:
    return F.FoldSpan(ReadableSpan(name="s", context=SpanContext(1, span_id, False), start_time=start,
                                   end_time=None if start is None else start + 5))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(st.integers(min_value=1, max_value=50), st.none() | st.integers(min_value=0, max_value=4)),
                max_size=12, unique_by=lambda t: t[0]))
def test_sort_by_start_is_the_start_order(spans: list[tuple[int, int | None]]) -> None:
    """Start times unknown (``None``) or 0 among known ones: the same order as ``key=start_order``."""
    made = [_span(i, t) for i, t in spans]
    expected = sorted(made, key=R.start_order)
    R.sort_by_start(made)
    assert [s.span_id for s in made] == [s.span_id for s in expected]


def test_our_steps_read_what_the_readers_read() -> None:
    tool = F.FoldSpan(ReadableSpan(name="t", context=SpanContext(1, 2, False), start_time=10, end_time=20,
                                   attributes={A.OTEL_AGENTS_SPAN_KIND: "tool", A.TOOL_ID: "call_7",
                                               A.OTEL_AGENTS_FRAMEWORK: "llama_index"}))
    model = F.FoldSpan(ReadableSpan(name="m", context=SpanContext(1, 3, False), start_time=5, end_time=None,
                                    attributes={A.OTEL_AGENTS_SPAN_KIND: "model", A.GEN_AI_RESPONSE_ID: "r1",
                                                A.GEN_AI_USAGE_INPUT_TOKENS: 7, A.LLM_TOKEN_COUNT_TOTAL: 9}))
    steps = R.our_steps([tool, model])
    assert steps[0][R._CALL_ID] == F.tool_call_id(tool) == "call_7"
    assert steps[0][R._FRAMEWORK] == R._framework(tool) == "llamaindex"
    assert steps[1][R._RESPONSE_ID] == "r1" and steps[1][R._TOKENS][:2] == F.usage(model)[:2] == (7, None)
    assert R._window(steps) == (5, R._NO_END)  # the model's end is unknown: the window has none
    assert R._window(steps[:1]) == (10, 20) and R._window([]) == (0, R._NO_END)


def test_a_spans_usage_is_read_once() -> None:
    """The envelope, its cost and ``PeerViews`` ask for a model span's usage: its attributes are read the first
    time only (they never change)."""
    span = F.FoldSpan(ReadableSpan(name="m", context=SpanContext(1, 3, False),
                                   attributes={A.OTEL_AGENTS_SPAN_KIND: "model", A.GEN_AI_USAGE_INPUT_TOKENS: 3,
                                               A.GEN_AI_USAGE_OUTPUT_TOKENS: 4}))
    assert F.usage(span) == (3, 4, 7)
    span.attributes = {}  # (the fold never changes them: this only shows they are not read again)
    assert F.usage(span) == (3, 4, 7)


_WINDOW_EDGES = st.one_of(st.just(0), st.integers(1, 60), st.just(R._NO_END))


@given(st.lists(st.tuples(_WINDOW_EDGES, _WINDOW_EDGES), max_size=25), st.lists(st.integers(0, 24), max_size=10),
       st.lists(st.tuples(st.integers(1, 60), st.integers(1, 60)), min_size=1, max_size=10))
@settings(max_examples=300, deadline=None)
@example([(0, R._NO_END), (5, 6), (3, R._NO_END), (0, 4)], [1], [(4, 9), (1, 2)])
def test_windows_overlapping_is_the_walk_it_replaces(windows: list[tuple[int, int]], removed: list[int],
                                                     asked: list[tuple[int, int]]) -> None:
    """``PeerViews`` finds the traces of ours at a peer trace's time by ``_Windows`` (by start, the longest bounded
    window's length, the open ones apart): the same windows, in the same order, as the walk over every window it
    replaces (``s < end and start < e``), after windows are added and removed (open ones: a step without a time)."""
    index = R._Windows()
    kept = []
    for i, (start, end) in enumerate(windows):
        window = (start, max(start, end) if start and end else end, i)
        index.add(window)
        kept.append(window)
    for i in removed:
        if i < len(kept):
            index.remove(kept[i])
    kept = sorted(w for i, w in enumerate(kept) if i not in removed)
    assert index.sorted == kept
    for start, end in asked:
        start, end = min(start, end), max(start, end) + 1
        assert index.overlapping(start, end) == [w for w in kept if w[0] < end and start < w[1]]
