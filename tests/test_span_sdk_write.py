"""The span layer's direct write of ready attributes into an SDK span (:mod:`otel_agents._spans.sdk_write`)
pinned against the SDK's own ``Span.set_attributes``: with the installed opentelemetry-sdk the direct path
is taken (a reshaped SDK fails here, not silently), it leaves a span exactly as ``set_attributes`` does
(values, their types, key order, dropped count), and every case the SDK treats otherwise goes to the SDK."""

from __future__ import annotations

import logging

import pytest
from opentelemetry.sdk.trace import SpanLimits, TracerProvider

from otel_agents._spans import sdk_write

READY = {"a.str": "text", "a.bool": True, "a.int": 7, "a.float": 0.5, "a.strs": ["x", "y"], "a.ints": [1, 2],
         "a.bools": (True, False), "a.floats": [1.5], "a.unicode": "é — 日本語"}


def _span(limits: SpanLimits | None = None, start: dict | None = None):
    tracer = TracerProvider(span_limits=limits or SpanLimits()).get_tracer("t")
    return tracer.start_span("s", attributes=start or {"start.key": "v", "a.int": 1})


def _both(attributes: dict, limits: SpanLimits | None = None, start: dict | None = None):
    """(span written by sdk_write, span written by the SDK), each ended."""
    ours, theirs = _span(limits, start), _span(limits, start)
    sdk_write.set_attributes(ours, attributes)
    theirs.set_attributes(attributes)
    ours.end()
    theirs.end()
    return ours, theirs


def _typed(span) -> list:
    return [(k, type(v).__name__, v) for k, v in span.attributes.items()]


def test_the_installed_sdk_takes_the_direct_path(monkeypatch) -> None:
    span = _span()
    assert sdk_write.direct(span)
    calls = []
    monkeypatch.setattr(type(span), "set_attributes", lambda self, a: calls.append(a))
    sdk_write.set_attributes(span, READY)
    assert calls == []  # written directly
    assert dict(span.attributes)["a.strs"] == ("x", "y")


@pytest.mark.parametrize("attributes", [
    READY,
    {"a.int": 9, "new": "n"},  # a key set at start again: it moves last, as in the SDK
    {"start.key": ["re", "set"]},
    {},
])
def test_the_direct_path_leaves_the_span_as_the_sdk_does(attributes: dict) -> None:
    ours, theirs = _both(attributes)
    assert _typed(ours) == _typed(theirs)
    assert ours.dropped_attributes == theirs.dropped_attributes == 0


class _Text(str):
    pass


@pytest.mark.parametrize("attributes", [
    {"none": None, "ok": "v"},  # None: the SDK's business
    {"sub": _Text("a str subclass")},
    {"mixed": ["a", 1]},
    {"empty": []},
    {"nested": [["a"]]},
    {"with_none": ["a", None]},
    {"bytes": b"raw"},
    {"": "empty key"},
    {3: "not a str key"},
    {"dict": {"k": "v"}},
])
def test_values_the_sdk_cleans_go_to_the_sdk(attributes: dict, monkeypatch) -> None:
    span = _span()
    calls = []
    real = type(span).set_attributes
    monkeypatch.setattr(type(span), "set_attributes", lambda self, a: (calls.append(a), real(self, a)))
    sdk_write.set_attributes(span, attributes)
    assert calls == [attributes]
    monkeypatch.undo()
    ours, theirs = _both(attributes)
    assert _typed(ours) == _typed(theirs)


def test_a_value_length_limit_goes_to_the_sdk() -> None:
    limits = SpanLimits(max_span_attribute_length=4)
    assert not sdk_write.direct(_span(limits))
    ours, theirs = _both(READY, limits)
    assert _typed(ours) == _typed(theirs)
    assert dict(ours.attributes)["a.str"] == "text" and dict(ours.attributes)["a.unicode"] == "é — "


@pytest.mark.parametrize("room", [0, 1, 3])
def test_the_count_limit_goes_to_the_sdk_when_it_drops(room: int) -> None:
    limits = SpanLimits(max_span_attributes=2 + room)  # the two start attributes, then `room` more
    attributes = {"k1": "a", "k2": "b", "a.int": 3}  # two new keys and one set again
    ours, theirs = _both(attributes, limits)
    assert _typed(ours) == _typed(theirs)
    assert ours.dropped_attributes == theirs.dropped_attributes
    assert (theirs.dropped_attributes > 0) == (room < 2)


def test_an_ended_span_is_left_to_the_sdk(caplog) -> None:
    span = _span()
    span.end()
    with caplog.at_level(logging.WARNING):
        sdk_write.set_attributes(span, {"late": "value"})
    assert "late" not in span.attributes
    assert "ended span" in caplog.text  # the SDK's own warning


def test_a_span_of_another_implementation_gets_the_public_call() -> None:
    class Recorder:
        def __init__(self) -> None:
            self.got: list = []

        def set_attributes(self, attributes: dict) -> None:
            self.got.append(attributes)

    span = Recorder()
    assert not sdk_write.direct(span)
    sdk_write.set_attributes(span, READY)
    assert span.got == [READY]


def test_the_caller_s_mapping_is_not_changed() -> None:
    attributes = {"a.strs": ["x", "y"], "k": "v"}
    sdk_write.set_attributes(_span(), attributes)
    assert attributes == {"a.strs": ["x", "y"], "k": "v"} and type(attributes["a.strs"]) is list


def test_an_sdk_reshaped_under_the_same_names_gets_the_public_call(monkeypatch) -> None:
    """A later SDK whose span lacks one of the private names read (an ``AttributeError`` before anything is
    written: the reads all come before the write): the public call writes everything."""
    span = _span()
    assert sdk_write.direct(span)

    def reshaped(span, attributes):
        return span._no_such_lock  # what a renamed private name raises

    monkeypatch.setattr(sdk_write, "_write", reshaped)
    sdk_write.set_attributes(span, {"a.str": "text", "a.ints": [1, 2]})
    assert dict(span.attributes)["a.str"] == "text" and dict(span.attributes)["a.ints"] == (1, 2)
