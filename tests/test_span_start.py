"""What opening and ending a span reads, made cheaper (issue 40) without changing what it reads: the settings
follow the environment from one span to the next, whatever way it is changed; both suppression keys still
silence the span layer; the guard reports under its own site; a registry without an age limit still caps its
size."""

from __future__ import annotations

import logging
import os

import pytest
from opentelemetry import context as otel_context
from opentelemetry.instrumentation.utils import is_instrumentation_enabled, suppress_instrumentation
from opentelemetry.trace import StatusCode

from otel_agents._spans import ChatMessage, Settings, SpanRegistry, Telemetry, guard
from otel_agents._spans import settings as settings_module
from otel_agents._spans.guard import reset_reported_sites
from otel_agents._spans.settings import getenv
from otel_agents._spans.telemetry import _suppressed, instrumentation_enabled
from otel_agents.semconv import attributes as A

_VARIABLES = ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "OTEL_AGENTS_MAX_CONTENT_LENGTH",
              "OTEL_AGENTS_STATUS_OK", "OTEL_AGENTS_VOCABULARIES", "OTEL_AGENTS_MAX_MEDIA_BYTES")


@pytest.fixture(autouse=True)
def _clean_environment(monkeypatch):
    for name in _VARIABLES:
        monkeypatch.delenv(name, raising=False)


def _model_span(provider, exporter) -> dict:
    t = Telemetry(provider, framework="test")
    s = t.start_span("model", "m", operation="chat")
    s.set_messages(input=[ChatMessage("user", "x" * 300)])
    s.end()
    span = exporter.spans[-1]
    return {"attributes": dict(span.attributes), "status": span.status}


def test_each_span_reads_the_environment_as_it_is_then(monkeypatch, provider, exporter) -> None:
    """A change between two spans shows in the second (a cache that missed it would repeat the first)."""
    first = _model_span(provider, exporter)
    assert A.GEN_AI_INPUT_MESSAGES in first["attributes"] and first["status"] is StatusCode.UNSET
    assert A.INPUT_VALUE in first["attributes"]  # all three vocabularies
    monkeypatch.setenv("OTEL_AGENTS_MAX_CONTENT_LENGTH", "100")
    monkeypatch.setenv("OTEL_AGENTS_STATUS_OK", "true")
    monkeypatch.setenv("OTEL_AGENTS_VOCABULARIES", "gen_ai")
    second = _model_span(provider, exporter)
    assert len(second["attributes"][A.GEN_AI_INPUT_MESSAGES]) <= 100
    assert len(first["attributes"][A.GEN_AI_INPUT_MESSAGES]) > 300
    assert second["status"] is StatusCode.OK and A.INPUT_VALUE not in second["attributes"]
    os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"] = "NO_CONTENT"  # a plain write
    try:
        third = _model_span(provider, exporter)
    finally:
        del os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"]
    assert A.GEN_AI_INPUT_MESSAGES not in third["attributes"]
    monkeypatch.delenv("OTEL_AGENTS_STATUS_OK")
    monkeypatch.delenv("OTEL_AGENTS_VOCABULARIES")
    fourth = _model_span(provider, exporter)
    assert A.GEN_AI_INPUT_MESSAGES in fourth["attributes"] and A.INPUT_VALUE in fourth["attributes"]
    assert fourth["status"] is StatusCode.UNSET


def _plain_span(provider, exporter) -> dict:
    t = Telemetry(provider, framework="test")
    s = t.start_plain_span("resources/read", attributes={A.MCP_METHOD_NAME: "resources/read",
                                                         A.GEN_AI_PROMPT_NAME: "p", A.INPUT_MIME_TYPE: "text/plain"})
    s.set_content(A.MCP_RESOURCE_URI, "file:///" + "x" * 300)
    s.set_attribute(A.OUTPUT_MIME_TYPE, "text/plain")
    s.end()
    span = exporter.spans[-1]
    return {"attributes": dict(span.attributes), "status": span.status}


def test_a_plain_span_reads_the_environment_as_it_is_then(monkeypatch, provider, exporter) -> None:
    """A span of no kind (MCP's ``tools/list``, A2A's methods) reads the settings once as it starts, as a semantic
    span does: its start attributes and those set later follow the vocabularies, content, budget and status then."""
    first = _plain_span(provider, exporter)
    assert A.INPUT_MIME_TYPE in first["attributes"] and A.OUTPUT_MIME_TYPE in first["attributes"]
    assert len(first["attributes"][A.MCP_RESOURCE_URI]) > 300 and first["status"] is StatusCode.UNSET
    monkeypatch.setenv("OTEL_AGENTS_VOCABULARIES", "gen_ai")
    monkeypatch.setenv("OTEL_AGENTS_MAX_CONTENT_LENGTH", "100")
    monkeypatch.setenv("OTEL_AGENTS_STATUS_OK", "true")
    second = _plain_span(provider, exporter)
    attributes = second["attributes"]
    assert A.INPUT_MIME_TYPE not in attributes and A.OUTPUT_MIME_TYPE not in attributes  # OpenInference's
    assert attributes[A.GEN_AI_PROMPT_NAME] == "p" and attributes[A.MCP_METHOD_NAME] == "resources/read"
    assert attributes[A.OTEL_AGENTS_FRAMEWORK] == "test" and len(attributes[A.MCP_RESOURCE_URI]) <= 100
    assert second["status"] is StatusCode.OK
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    assert A.MCP_RESOURCE_URI not in _plain_span(provider, exporter)["attributes"]
    for name in _VARIABLES:
        monkeypatch.delenv(name, raising=False)
    assert _plain_span(provider, exporter)["attributes"] == first["attributes"]


def test_getenv_is_os_environ_get(monkeypatch) -> None:
    name = "OTEL_AGENTS_TEST_GETENV"
    monkeypatch.delenv(name, raising=False)
    assert getenv(name) is None
    monkeypatch.setenv(name, "héllo wörld")
    assert getenv(name) == os.environ.get(name) == "héllo wörld"
    monkeypatch.setenv(name, "")
    assert getenv(name) == ""
    monkeypatch.delenv(name)
    assert getenv(name) is None
    assert len(settings_module._ENV_KEYS) <= 64  # the bound on the encoded names kept


def test_a_replaced_os_environ_is_read(monkeypatch, provider, exporter) -> None:
    """A test that swaps ``os.environ`` for a plain dict is followed: the fast path reads only the interpreter's."""
    monkeypatch.setattr(os, "environ", {"OTEL_AGENTS_MAX_MEDIA_BYTES": "7", "OTEL_AGENTS_STATUS_OK": "yes"})
    assert getenv("OTEL_AGENTS_MAX_MEDIA_BYTES") == "7" and getenv("OTEL_AGENTS_VOCABULARIES") is None
    assert Settings().media_budget() == 7 and Settings().mark_status_ok()


@pytest.mark.parametrize("how", ["suppress_instrumentation", "plain key"])
def test_both_suppression_keys_silence_the_span_layer(how, provider, exporter) -> None:
    t = Telemetry(provider, framework="test")
    if how == "suppress_instrumentation":
        with suppress_instrumentation():
            assert _suppressed(otel_context.get_current()) is (not is_instrumentation_enabled()) is True
            assert instrumentation_enabled() is is_instrumentation_enabled() is False
            s, p = t.start_span("chain", "c"), t.start_plain_span("tools/list")
    else:
        token = otel_context.attach(otel_context.set_value("suppress_instrumentation", True))
        try:
            assert _suppressed(otel_context.get_current()) is (not is_instrumentation_enabled()) is True
            assert instrumentation_enabled() is is_instrumentation_enabled() is False
            s, p = t.start_span("chain", "c"), t.start_plain_span("tools/list")
        finally:
            otel_context.detach(token)
    assert not s.is_recording and not p.is_recording
    s.end()
    p.end()
    assert exporter.spans == []
    assert _suppressed(otel_context.get_current()) is False
    assert instrumentation_enabled() is is_instrumentation_enabled() is True
    t.start_span("chain", "c").end()
    assert [x.name for x in exporter.spans] == ["c"]


def test_guard_reports_under_its_own_site(caplog) -> None:
    reset_reported_sites()
    assert guard("test.site.a") is guard("test.site.a") and guard("test.site.a") is not guard("test.site.b")
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        with guard("test.site.a"):
            raise ValueError("one")
        with guard("test.site.b"):
            raise ValueError("two")
    messages = [r.getMessage() for r in caplog.records]
    assert any("test.site.a" in m and "one" in m for m in messages)
    assert any("test.site.b" in m and "two" in m for m in messages)
    with pytest.raises(KeyboardInterrupt):  # not an Exception: never swallowed
        with guard("test.site.a"):
            raise KeyboardInterrupt
    assert guard.cache_info().maxsize == 1024  # the bound on the guards kept


def test_a_registry_without_an_age_limit_caps_its_size(provider, exporter) -> None:
    t = Telemetry(provider, framework="test")
    reg = SpanRegistry(max_size=2, max_age_s=float("inf"))
    for i in range(4):
        reg.put(i, t.start_span("chain", f"c{i}"))
    assert len(reg) == 2 and reg.evicted == 2 and reg.get(3) is not None
    assert [s.name for s in exporter.spans if s.attributes.get(A.OTEL_AGENTS_SPAN_EVICTED)] == ["c0", "c1"]
    reg.put(3, t.start_span("chain", "c3 again"))  # the same key: the old span is ended as evicted
    assert len(reg) == 2 and reg.evicted == 3
    reg.clear()
    assert all(s.end_time for s in exporter.spans) and len(exporter.spans) == 5


def test_the_span_policy_is_the_five_reads_and_follows_every_change(monkeypatch) -> None:
    """Settings.span_policy() (read once per span) gives what the five reads give, after any change of a
    variable or of a setting (its last reading is reused only while none changed)."""
    s = Settings()

    def reads() -> tuple:
        return s.content_enabled(), s.content_budget(), s.mark_status_ok(), s.vocabulary_filter(), s.media_budget()

    assert s.span_policy() == reads() == (True, 16_384, False, None, 4096)
    for name, value in (("OTEL_AGENTS_MAX_MEDIA_BYTES", "9"), ("OTEL_AGENTS_MAX_CONTENT_LENGTH", "100"),
                        ("OTEL_AGENTS_STATUS_OK", "yes"), ("OTEL_AGENTS_VOCABULARIES", "langfuse"),
                        ("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "false")):
        before = s.span_policy()
        monkeypatch.setenv(name, value)
        assert s.span_policy() == reads() != before
    assert s.span_policy() == (False, 100, True, frozenset({"langfuse"}), 9)
    for field, value in (("capture_content", True), ("max_content_length", 200), ("status_ok", False),
                         ("vocabularies", frozenset({"gen_ai"})), ("max_media_bytes", 1)):
        before = s.span_policy()
        setattr(s, field, value)
        assert s.span_policy() == reads() != before
    assert s == Settings(capture_content=True, max_content_length=200, status_ok=False, vocabularies="gen_ai",
                         max_media_bytes=1)  # the kept reading is not a setting: equality ignores it


def test_a_span_keeps_the_media_budget_it_started_with(monkeypatch, provider, exporter) -> None:
    from otel_agents._spans.messages import BlobPart

    t = Telemetry(provider, settings=Settings(capture_content=True), framework="test")
    s = t.start_span("model", "m", operation="chat")
    monkeypatch.setenv("OTEL_AGENTS_MAX_MEDIA_BYTES", "0")  # after the start: not this span's
    s.set_messages(input=[ChatMessage("user", parts=[BlobPart(b"png", "image", "image/png")])])
    s.end()
    assert '"content":"cG5n"' in exporter.spans[-1].attributes[A.GEN_AI_INPUT_MESSAGES]
    s = t.start_span("model", "m", operation="chat")
    s.set_messages(input=[ChatMessage("user", parts=[BlobPart(b"png", "image", "image/png")])])
    s.end()
    assert '"content":""' in exporter.spans[-1].attributes[A.GEN_AI_INPUT_MESSAGES]


def test_the_open_span_index_holds_open_spans_only(provider) -> None:
    """The index by span id (a plain dict of weak references): an ended span leaves it, a span dropped without
    ending leaves it when collected, and a live span is found from its OTel span and from a child of it."""
    import gc

    from opentelemetry import trace

    from otel_agents._spans import index, semantic_span_for

    t = Telemetry(provider, framework="test")
    before = len(index._OPEN)
    s = t.start_span("agent", "a")
    assert semantic_span_for(s.span) is s and len(index._OPEN) == before + 1
    child = trace.get_tracer("app", tracer_provider=provider).start_span("app", context=s.context())
    assert semantic_span_for(child) is s  # an application span's semantic parent
    child.end()
    s.end()
    assert semantic_span_for(s.span) is None and len(index._OPEN) == before
    dropped = t.start_span("tool", "never_ended")
    key = dropped._index_key
    assert key in index._OPEN
    del dropped
    gc.collect()
    assert key not in index._OPEN and len(index._OPEN) == before


def test_a_change_during_a_reading_is_not_kept_for_later_spans(monkeypatch) -> None:
    """Another thread changes a variable while span_policy() reads them (simulated at the moment between
    its look-up of the raw values and the parsing), then sets it back: the reading made from the changed
    value must not be kept as the reading of the unchanged one (every later span would then record no
    content although the switch is unset)."""
    s = Settings()
    real = settings_module.getenv
    changed: list[str] = []

    def getenv_while_another_thread_writes(name: str):
        if name == "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT" and not changed:
            changed.append(name)
            os.environ[name] = "false"  # lands after the raw look-up, before this read
        return real(name)

    monkeypatch.setattr(settings_module, "getenv", getenv_while_another_thread_writes)
    s.span_policy()  # read during the change: either value is right for this one span
    assert changed
    del os.environ["OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"]  # the other thread sets it back
    monkeypatch.setattr(settings_module, "getenv", real)
    assert s.span_policy() == (s.content_enabled(), s.content_budget(), s.mark_status_ok(), s.vocabulary_filter(),
                               s.media_budget()) == (True, 16_384, False, None, 4096)


def test_a_name_that_is_a_str_subclass_is_named_by_its_value(provider, exporter) -> None:
    """A name given as a ``(str, Enum)`` member (an agent named ``Role.SUPPORT``) made the span name
    ``invoke_agent Role.SUPPORT`` (its ``__str__``) while ``gen_ai.agent.name`` said ``support`` (its value), and a
    name whose ``__str__`` raises lost the span (a non-recording one in its place). The span name now uses the
    value, as every attribute does; a non-``str`` name that cannot print is named by its ``repr`` or its type."""
    import enum

    from tests.hostile import EverythingRaises, HostileStr

    class Role(str, enum.Enum):
        SUPPORT = "support"

    t = Telemetry(provider, framework="test")
    for name in (Role.SUPPORT, HostileStr("support"), EverythingRaises()):
        s = t.start_span("agent", name, attributes={A.GEN_AI_AGENT_NAME: name})
        s.rename(name)
        s.end()
    names = [(span.name, span.attributes.get(A.GEN_AI_AGENT_NAME)) for span in exporter.spans]
    assert names[:2] == [("invoke_agent support", "support")] * 2, names
    assert len(names) == 3 and names[2][0] == "invoke_agent <unprintable EverythingRaises>", names


def test_setters_never_raise_on_a_sequence_whose_len_raises(provider, exporter) -> None:
    """``set_tool_definitions`` tested ``not tools`` before its guard: a framework's tool list that is the user's
    own list subclass, with a ``__len__`` that raises, raised out of the setter into the framework."""
    from otel_agents._spans import ToolDefinition
    from tests.hostile import LenRaisingList

    t = Telemetry(provider, framework="test")
    s = t.start_span("model", "m", operation="chat")
    s.set_tool_definitions(LenRaisingList([ToolDefinition("lookup", "Looks up.", None)]))
    s.end()
    assert exporter.spans[-1].name == "chat m"


def test_the_sdk_is_given_the_context_a_span_opens_under() -> None:
    """A span opened with no parent given is started by the SDK in the current context (handed to it, not read
    again by it): its sampler sees that context (its span, its other values) and the span's parent is the current
    span; with no current span it is a root. The same spans and parents as when the SDK read the context itself."""
    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.sampling import Decision, Sampler, SamplingResult

    from tests.spans import SnapshotExporter

    seen: list[tuple[str, object, object]] = []

    class Recording(Sampler):
        def should_sample(self, parent_context, trace_id, name, kind=None, attributes=None, links=None,
                          trace_state=None):
            parent = trace.get_current_span(parent_context).get_span_context()
            seen.append((name, parent.span_id if parent.is_valid else None,
                         otel_context.get_value("marker", parent_context)))
            return SamplingResult(Decision.RECORD_AND_SAMPLE)

        def get_description(self) -> str:
            return "recording"

    exporter = SnapshotExporter()
    provider = TracerProvider(sampler=Recording())
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    t = Telemetry(provider, framework="test")
    token = otel_context.attach(otel_context.set_value("marker", "here"))
    try:
        t.start_span("tool", "root").end()
        with provider.get_tracer("app").start_as_current_span("outer") as outer:
            t.start_span("tool", "child").end()
    finally:
        otel_context.detach(token)
    provider.shutdown()
    outer_id = outer.get_span_context().span_id
    assert [(name.split(" ")[-1], parent, marker) for name, parent, marker in seen] == [
        ("root", None, "here"), ("outer", None, "here"), ("child", outer_id, "here")]
    by_name = {s.name.split(" ")[-1]: s for s in exporter.spans}
    assert by_name["root"].parent_id is None
    assert by_name["child"].parent_id == outer_id
    assert by_name["child"].trace_id == outer.get_span_context().trace_id
