"""The span layer's direct write of ready attributes into an SDK span (:mod:`otel_agents._spans.sdk_write`)
pinned against the SDK's own ``Span.set_attributes``: with the installed opentelemetry-sdk the direct path
is taken (a reshaped SDK fails here, not silently), it leaves a span exactly as ``set_attributes`` does
(values, their types, key order, dropped count), and every case the SDK treats otherwise goes to the SDK."""

from __future__ import annotations

import enum
import logging

import pytest
from opentelemetry.sdk.trace import SpanLimits, SpanProcessor, TracerProvider

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


class _Level(enum.IntEnum):
    HIGH = 3


def _semantic(hook=None):
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from otel_agents._spans import ChatMessage, Settings, Telemetry
    from otel_agents._spans.usage import Usage
    from otel_agents.semconv import Kind

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    telemetry = Telemetry(provider, settings=Settings(capture_content=True, redact_hook=hook), framework="test")
    span = telemetry.start_span(Kind.MODEL, "m", operation="chat")
    span.set_model(request_model="m", provider="p", parameters={"temperature": 0.5, "stop": ["x", "y"]})
    span.set_messages(input=[ChatMessage("user", "hi")], output=[ChatMessage("assistant", "yo", finish_reason="stop")])
    span.set_usage(Usage(input_tokens=3, output_tokens=1))
    return span, exporter


def _checked_calls(monkeypatch) -> list:
    calls: list = []
    real = sdk_write._legal
    monkeypatch.setattr(sdk_write, "_legal", lambda attributes: (calls.append(dict(attributes)), real(attributes))[1])
    return calls


def test_a_semantic_span_s_own_attributes_are_not_checked_again(monkeypatch) -> None:
    """What the setters write is already in the SDK's stored form (lists as tuples): the flush writes it without
    checking each value again, and the span holds what the checked path makes of the same attributes."""
    calls = _checked_calls(monkeypatch)
    span, exporter = _semantic()
    span.end()
    assert calls == []
    checked, checked_exporter = _semantic()
    checked._stored = False  # as after a caller's own key: the checked path
    checked.end()
    assert len(calls) == 1
    (ours,), (theirs,) = exporter.get_finished_spans(), checked_exporter.get_finished_spans()
    assert _typed(ours) == _typed(theirs)
    assert ("gen_ai.response.finish_reasons", "tuple", ("stop",)) in _typed(ours)
    assert ("gen_ai.request.stop_sequences", "tuple", ("x", "y")) in _typed(ours)


def test_a_value_length_limit_cuts_a_semantic_span_s_own_attributes_as_the_sdk_does() -> None:
    """The flush of a semantic span's own attributes (written without checking each again) makes the value length
    limit's check itself: with one set, the SDK writes them and cuts every string to the limit."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    from otel_agents._spans import ChatMessage, Settings, Telemetry
    from otel_agents.semconv import Kind

    exporter = InMemorySpanExporter()
    provider = TracerProvider(span_limits=SpanLimits(max_span_attribute_length=4))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    span = Telemetry(provider, settings=Settings(capture_content=True)).start_span(Kind.MODEL, "m", operation="chat")
    span.set_model(request_model="a-long-model-name", provider="provider")
    span.set_messages(input=[ChatMessage("user", "a question")])
    span.end()
    (finished,) = exporter.get_finished_spans()
    attributes = dict(finished.attributes)
    assert attributes["gen_ai.request.model"] == "a-lo" and attributes["gen_ai.provider.name"] == "prov"
    assert all(len(v) <= 4 for v in attributes.values() if type(v) is str)


@pytest.mark.parametrize("foreign", [
    lambda s: s.set_attribute(3, "not a str key"),
    lambda s: s.set_attributes({"": "empty key", "fine": "v"}),
    lambda s: s.set_attribute("sub", _Level.HIGH),
    lambda s: s.set_attributes({"sub": _Level.HIGH}),
    lambda s: s.set_content("", "content under an empty key"),
    lambda s: s.set_error(404),
])
def test_a_caller_s_key_or_value_goes_through_the_sdk_s_checks(foreign, monkeypatch) -> None:
    """A key that is not a non-empty ``str`` or a value of a subclass, given by the caller: the whole flush takes
    the checked path, and the span is what the SDK makes of it (an invalid key dropped, a value kept as given)."""
    calls = _checked_calls(monkeypatch)
    span, exporter = _semantic()
    foreign(span)
    span.end()
    assert len(calls) == 1
    (ours,) = exporter.get_finished_spans()
    attributes = dict(ours.attributes)
    assert 3 not in attributes and "" not in attributes
    assert attributes["gen_ai.response.finish_reasons"] == ("stop",)
    if "sub" in attributes:
        assert type(attributes["sub"]) is _Level  # kept as given, as the SDK keeps it


def test_a_span_with_a_redaction_hook_goes_through_the_sdk_s_checks(monkeypatch) -> None:
    """A user's redaction hook returns text of its own making: the flush leaves it to the SDK's checks."""
    calls = _checked_calls(monkeypatch)
    span, exporter = _semantic(hook=lambda key, text: _Text(text))
    span.end()
    assert len(calls) == 1
    (ours,) = exporter.get_finished_spans()
    assert dict(ours.attributes)["gen_ai.input.messages"] == '[{"role":"user","parts":[{"type":"text","content":"hi"}]}]'


# -- a span's start attributes (sdk_write.StartWrite, set_start_attributes) ---------------------------------------

class _Reading(SpanProcessor):
    """A span processor that reads each span's attributes as it starts, as the ECP folding processor does."""

    def __init__(self) -> None:
        self.seen: list[dict] = []

    def on_start(self, span, parent_context=None) -> None:
        self.seen.append(dict(span.attributes))


def _started(provider, monkeypatch=None, run_attributes=None):
    """The spans a few semantic spans make through ``provider``: a workflow chain under run attributes (a list, a
    float subclass, an integer past 64 bits among them), an agent, a model with start attributes, a plain span."""
    from otel_agents._spans import Settings, Telemetry
    from otel_agents._spans.run_context import pop_run_attributes, push_run_attributes
    from otel_agents.semconv import Kind

    telemetry = Telemetry(provider, settings=Settings(capture_content=True), framework="test")
    token = push_run_attributes(run_attributes or {"session.id": "s-1", "tag.tags": ["a", "b"],
                                                   "user.id": 2 ** 70})
    try:
        root = telemetry.start_span(Kind.CHAIN, "workflow", workflow=True)
        agent = telemetry.start_span(Kind.AGENT, "agent", parent=root)
        model = telemetry.start_span(Kind.MODEL, "m", operation="chat", parent=agent,
                                     attributes={"server.address": "example.test", "server.port": 443,
                                                 "gen_ai.request.temperature": _Half(0.5)})
        plain = telemetry.start_plain_span("tools/list", parent=agent, attributes={"mcp.method.name": "tools/list"})
        for s in (plain, model, agent, root):
            s.end()
    finally:
        pop_run_attributes(token)


class _Half(float):
    pass


def _exported(configure, blind: bool, monkeypatch) -> list:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    if not blind:
        monkeypatch.setattr(sdk_write.StartWrite, "__call__", lambda self, tracer: False)
    exporter = InMemorySpanExporter()
    provider = configure()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    _started(provider)
    monkeypatch.undo()
    return [(s.name, _typed(s), s.dropped_attributes) for s in exporter.get_finished_spans()]


@pytest.mark.parametrize("configure", [
    TracerProvider,
    lambda: TracerProvider(span_limits=SpanLimits(max_span_attributes=3)),  # start attributes past the count limit
])
def test_start_attributes_written_after_the_start_leave_the_spans_as_the_sdk_does(configure, monkeypatch) -> None:
    """With the SDK's default sampler and simple processor nothing reads a span's attributes as it starts: they
    are written right after it, not checked by the SDK again, and every span is what giving them to
    ``start_span`` makes (values, types, order, dropped count)."""
    calls: list = []
    real = TracerProvider().get_tracer("t").start_span.__func__

    def spy(self, name, *args, **kwargs):
        calls.append(kwargs.get("attributes"))
        return real(self, name, *args, **kwargs)

    monkeypatch.setattr("opentelemetry.sdk.trace.Tracer.start_span", spy)
    direct = _exported(configure, True, monkeypatch)
    assert calls and all(c is None for c in calls)  # the start attributes were not given to start_span
    assert direct == _exported(configure, False, monkeypatch)
    names = {name: {k: v for k, _, v in attrs} for name, attrs, dropped in direct if not dropped}
    if configure is TracerProvider:  # (past the count limit the SDK dropped the oldest, on both paths alike)
        assert names["chat m"]["server.address"] == "example.test"
        assert names["invoke_workflow workflow"]["tag.tags"] == ("a", "b")
    else:
        assert all(dropped for _, _, dropped in direct)


def test_a_value_length_limit_cuts_start_attributes_as_before(monkeypatch) -> None:
    configure = lambda: TracerProvider(span_limits=SpanLimits(max_span_attribute_length=4))  # noqa: E731
    spans = _exported(configure, True, monkeypatch)
    assert spans == _exported(configure, False, monkeypatch)
    assert all(len(v) <= 4 for _, attrs, _ in spans for _, t, v in attrs if t == "str")


def _reads_at_start(provider, reading: _Reading) -> None:
    _started(provider)
    assert reading.seen, "no span started"
    for attrs in reading.seen:
        assert attrs.get("otel_agents.framework") == "test" and attrs.get("session.id") == "s-1"
    assert any(a.get("otel_agents.span.kind") == "model" and a.get("server.address") == "example.test"
               for a in reading.seen)


def test_a_processor_that_reads_attributes_at_the_start_sees_them() -> None:
    reading = _Reading()
    provider = TracerProvider()
    provider.add_span_processor(reading)
    _reads_at_start(provider, reading)


def test_a_processor_added_after_spans_were_made_sees_the_next_ones_at_their_start() -> None:
    provider = TracerProvider()
    _started(provider)  # the simple path, decided for these processors
    reading = _Reading()
    provider.add_span_processor(reading)
    _reads_at_start(provider, reading)


@pytest.mark.parametrize("wrap", [lambda s: s, lambda s: __import__("opentelemetry.sdk.trace.sampling",
                                                                   fromlist=["ParentBased"]).ParentBased(s)])
def test_a_sampler_that_reads_attributes_sees_them(wrap) -> None:
    from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult

    seen: list[dict] = []

    class Reading(Sampler):
        def should_sample(self, parent_context, trace_id, name, kind=None, attributes=None, links=None,
                          trace_state=None):
            seen.append(dict(attributes or {}))
            return SamplingResult(Decision.RECORD_AND_SAMPLE, attributes)

        def get_description(self) -> str:
            return "reading"

    _started(TracerProvider(sampler=wrap(Reading())))
    assert seen and any(a.get("otel_agents.span.kind") == "chain" for a in seen)


def _asked_midway(step: int) -> list[bool]:
    """What a second thread's ``StartWrite`` would answer if it asked at the ``step``-th bytecode of the first
    thread's call after the first thread decided afresh (``_blind`` returned): a reading processor was added since
    the cached answer (yes). Opcode tracing makes the interleaving exact, the same at every run."""
    import sys

    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(InMemorySpanExporter()))
    tracer = provider.get_tracer("t")
    start_write = sdk_write.StartWrite()
    assert start_write(tracer)  # nothing reads the start: yes, kept for these processors
    provider.add_span_processor(_Reading())
    decided, answers, opcodes = [False], [], [0]
    blind = sdk_write._blind

    def deciding(*args):
        answer = blind(*args)
        decided[0] = True
        return answer

    def trace(frame, event, arg):
        if frame.f_code is not sdk_write.StartWrite.__call__.__code__:
            return None
        frame.f_trace_opcodes = True

        def local(frame, event, arg):
            if event == "opcode" and decided[0] and not answers:
                opcodes[0] += 1
                if opcodes[0] == step:
                    sys.settrace(None)
                    answers.append(start_write(tracer))  # the other thread, between two of this one's bytecodes
            return local
        return local

    before = sys.gettrace()  # (a coverage tracer: given back)
    sdk_write._blind = deciding
    sys.settrace(trace)
    try:
        answers.append(start_write(tracer))
    finally:
        sys.settrace(before)
        sdk_write._blind = blind
    return answers


def test_a_thread_asking_while_another_stores_the_new_answer_never_gets_the_old_one() -> None:
    """The answer kept is one value (tracer, processors, answer) replaced at once: a thread that asks while another
    stores the answer for a new tuple of processors never pairs the new tuple with the old answer (a processor added
    then, one that reads the start attributes, would miss them on that thread's span)."""
    for step in range(1, 12):
        assert not any(_asked_midway(step)), step
