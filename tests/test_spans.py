"""The span layer: content policy, redaction, errors, streams, registry, guard, metrics."""

from __future__ import annotations

import asyncio
import gc
import json
import logging
import time
import weakref

import pytest
from hypothesis import given
from hypothesis import strategies as st
from opentelemetry import trace
from opentelemetry.instrumentation.utils import suppress_instrumentation
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader
from opentelemetry.trace import StatusCode

from otel_agents._spans import (ChatMessage, Settings, SpanRegistry, Telemetry, ToolCallRequest, Usage, guard,
                                guarded, push_run_attributes, pop_run_attributes, wrap_stream)
from otel_agents._spans.address import server_attributes
from otel_agents._spans.guard import reset_reported_sites
from otel_agents._spans.streams import WATCHDOG
from otel_agents.semconv import attributes as A
from otel_agents._spans.finalisers import settle


@pytest.fixture
def telemetry(provider) -> Telemetry:
    return Telemetry(provider, framework="test")


def only(exporter, name=None):
    spans = [s for s in exporter.spans if name is None or s.name == name]
    assert len(spans) == 1, [s.name for s in exporter.spans]
    return spans[0]


_ARGUMENTS = [{"id": "A100"}, {"id": None}, {"t": 1e-7, "n": [1, 2.5]}, {"api_key": "k", "q": "x"},
              {"q": "Bearer abcdefghijklmnopqrstuv"}, {"deep": {"list": [{"a": "é"}]}}, ["a", 1], {"long": "x" * 300}]


@pytest.mark.parametrize("arguments", _ARGUMENTS)
def test_a_tool_calls_arguments_encoded_once_read_alike_in_every_attribute(provider, exporter, arguments) -> None:
    """The JSON text redaction makes of plain arguments is reused (the flattened OpenInference arguments, a tool
    span's two attributes): each is what the full path writes — the standard library's text of the redacted data,
    cut as JSON past the budget — whichever way the value takes (null and small floats, secrets, a cut)."""
    from otel_agents._spans.encoding import fit_json, to_jsonable
    from otel_agents._spans.redaction import redact_data

    budget = 200
    data = redact_data(to_jsonable(arguments), budget + 256)[0]
    expected = fit_json(data, json.dumps(data, ensure_ascii=False, separators=(",", ":")), budget)[0]
    t = Telemetry(provider, framework="test", settings=Settings(max_content_length=budget))
    s = t.start_span("model", "m")
    s.set_messages(output=[ChatMessage("assistant", None, tool_calls=[ToolCallRequest("f", arguments, "c1"),
                                                                      ToolCallRequest("g", arguments, "c2")],
                                       finish_reason="tool_calls")])
    s.end()
    tool = t.start_span("tool", "f")
    tool.set_tool("f", call_id="c1", arguments=arguments)
    tool.set_tool_result(arguments)
    tool.end()
    model, tool_span = exporter.spans[-2].attributes, exporter.spans[-1].attributes
    for j in range(2):
        assert model[f"llm.output_messages.0.message.tool_calls.{j}.tool_call.function.arguments"] == expected
    assert tool_span[A.GEN_AI_TOOL_CALL_ARGUMENTS] == tool_span[A.INPUT_VALUE] == expected
    assert tool_span[A.GEN_AI_TOOL_CALL_RESULT] == tool_span[A.OUTPUT_VALUE] == expected


def test_kind_attributes_at_start_and_again_at_end(provider, exporter) -> None:
    """The kind attributes survive the SDK's attribute-count limit (they are set again at end)."""
    from opentelemetry.sdk.trace import SpanLimits, TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    tp = TracerProvider(span_limits=SpanLimits(max_span_attributes=10))
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    t = Telemetry(tp)
    s = t.start_span("tool", "lookup")
    for i in range(50):
        s.set_attribute(f"x.{i}", i)
    s.end()
    snap = only(exporter)
    assert snap.name == "execute_tool lookup"
    assert snap.attributes[A.OTEL_AGENTS_SPAN_KIND] == "tool"
    assert snap.attributes[A.OPENINFERENCE_SPAN_KIND] == "TOOL"
    assert snap.attributes[A.GEN_AI_OPERATION_NAME] == "execute_tool"


def test_parenting_explicit_and_current(telemetry, exporter, app_tracer) -> None:
    with app_tracer.start_as_current_span("app"):
        root = telemetry.start_span("agent", "support")
    child = telemetry.start_span("model", "m", parent=root)
    grandchild = telemetry.start_span("tool", "t", parent=child.context())
    assert not trace.get_current_span().get_span_context().is_valid  # opening never makes current
    with root.activate():
        assert trace.get_current_span() is root.span
        inner = telemetry.start_span("chain", "inner")
        inner.end()
    assert not trace.get_current_span().get_span_context().is_valid
    for s in (grandchild, child, root):
        s.end()
    app = only(exporter, "app")
    by = {s.name: s for s in exporter.spans}
    assert by["invoke_agent support"].parent_id == app.span_id
    assert by["chat m"].parent_id == by["invoke_agent support"].span_id
    assert by["execute_tool t"].parent_id == by["chat m"].span_id
    assert by["inner"].parent_id == by["invoke_agent support"].span_id


def test_content_switch_off_records_no_content(telemetry, exporter, monkeypatch) -> None:
    """X-7 at the layer: NO_CONTENT removes every content attribute and content-derived name."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    s = telemetry.start_span("model", "secret-task SECRET", name_is_content=True)
    s.set_input("SECRET prompt")
    s.set_output({"answer": "SECRET"})
    s.set_messages(input=[ChatMessage("user", "SECRET")], output=[ChatMessage("assistant", "SECRET", finish_reason="stop")])
    s.set_agent("support", description="SECRET backstory")
    s.set_tool("lookup", call_id="c1", arguments={"q": "SECRET"})
    s.set_tool_result("SECRET")
    s.set_retrieval(query="SECRET", documents=[{"id": "d", "content": "SECRET"}])
    s.record_error(ValueError("SECRET in message"))
    s.end()
    snap = only(exporter)
    assert "SECRET" not in snap.name
    assert not any("SECRET" in str(v) for v in snap.attributes.values()), snap.attributes
    assert not any("SECRET" in str(v) for _, attrs in snap.events for v in attrs.values())
    assert "SECRET" not in (snap.status_description or "")
    assert snap.attributes[A.GEN_AI_RESPONSE_FINISH_REASONS] == ("stop",)
    assert snap.attributes[A.ERROR_TYPE] == "ValueError"


@pytest.mark.parametrize("content", [True, False])
def test_content_switch_off_records_no_digest_of_content(telemetry, exporter, monkeypatch, content) -> None:
    """Content off writes no digest of content either: the SHA-256 a blob past the media budget or bytes in a
    tool's arguments and result keep with content on (``otel_agents.sha256``, ``<bytes: N bytes, sha256 …>``)
    would let a reader confirm a guessed input. With content on they are there (the test can fail)."""
    import hashlib

    from otel_agents._spans import BlobPart

    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", str(content).lower())
    blob = bytes(range(256)) * 4096  # past the default media budget: summarised by size and digest
    digest = hashlib.sha256(blob).hexdigest()
    s = telemetry.start_span("model", "m")
    s.set_messages(input=[ChatMessage("user", parts=[BlobPart(mime_type="image/png", modality="image", data=blob)])])
    s.set_tool("lookup", call_id="c1", arguments={"scan": blob})
    s.set_tool_result(blob)
    s.set_input(blob)
    s.end()
    written = json.dumps(dict(only(exporter).attributes), default=str)
    assert (digest in written) is content


@pytest.mark.parametrize("value,on", [(None, True), ("", True), ("SPAN_ONLY", True), ("true", True),
                                      ("SPAN_AND_EVENT", True), ("NO_CONTENT", False), ("false", False),
                                      ("EVENT_ONLY", False),  # content in events only: we write none
                                      (" span_only ", True), ("TRUE", True), ("False", False), ("no_content", False),
                                      ("1", True), ("0", False)])
def test_content_switch_values(value, on, monkeypatch) -> None:
    if value is None:
        monkeypatch.delenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", raising=False)
    else:
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", value)
    assert Settings().content_enabled() is on
    assert Settings(capture_content=not on).content_enabled() is (not on)


def test_messages_are_recorded_in_both_conventions(telemetry, exporter) -> None:
    s = telemetry.start_span("model", "gpt-4o")
    s.set_model(request_model="gpt-4o", response_model="gpt-4o-2024", provider="openai",
                parameters={"temperature": 0.2, "stop": "END", "api_key": "abc"})
    s.set_messages(
        input=[ChatMessage("system", "be brief"), ChatMessage("user", "where is A100?")],
        output=[ChatMessage("assistant", None, tool_calls=[ToolCallRequest("lookup", {"id": "A100"}, "c1")],
                            finish_reason="tool_calls")])
    s.set_usage(Usage(10, 5, cache_read_tokens=2, reasoning_tokens=1))
    s.end()
    a = only(exporter).attributes
    assert json.loads(a[A.GEN_AI_SYSTEM_INSTRUCTIONS]) == [{"type": "text", "content": "be brief"}]
    assert json.loads(a[A.GEN_AI_INPUT_MESSAGES]) == [
        {"role": "user", "parts": [{"type": "text", "content": "where is A100?"}]}]
    assert json.loads(a[A.GEN_AI_OUTPUT_MESSAGES]) == [
        {"role": "assistant", "parts": [{"type": "tool_call", "id": "c1", "name": "lookup", "arguments": {"id": "A100"}}],
         "finish_reason": "tool_call"}]
    assert a["llm.input_messages.1.message.content"] == "where is A100?"
    assert a["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] == "lookup"
    assert json.loads(a["llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments"]) == {"id": "A100"}
    assert a[A.GEN_AI_RESPONSE_FINISH_REASONS] == ("tool_call",)
    assert a[A.GEN_AI_REQUEST_MODEL] == "gpt-4o" and a[A.GEN_AI_RESPONSE_MODEL] == "gpt-4o-2024"
    assert a[A.LLM_MODEL_NAME] == "gpt-4o-2024" and a[A.GEN_AI_PROVIDER_NAME] == "openai"
    assert a[A.GEN_AI_REQUEST_STOP_SEQUENCES] == ("END",)
    assert json.loads(a[A.LLM_INVOCATION_PARAMETERS])["api_key"] == "[REDACTED]"
    assert (a[A.GEN_AI_USAGE_INPUT_TOKENS], a[A.GEN_AI_USAGE_OUTPUT_TOKENS], a[A.LLM_TOKEN_COUNT_TOTAL]) == (10, 5, 15)
    assert a[A.GEN_AI_USAGE_CACHE_READ_INPUT_TOKENS] == 2 and a[A.LLM_TOKEN_COUNT_PROMPT_DETAILS_CACHE_READ] == 2
    assert a[A.GEN_AI_USAGE_REASONING_OUTPUT_TOKENS] == 1
    assert a[A.INPUT_MIME_TYPE] == "application/json"


def test_usage_prefers_the_complete_source(telemetry, exporter) -> None:
    """LC-3 at the layer: a partial report never replaces a complete one."""
    s = telemetry.start_span("model", "m")
    s.set_usage(Usage(input_tokens=7, output_tokens=3, total_tokens=10))
    s.set_usage(Usage(output_tokens=3))
    s.end()
    a = only(exporter).attributes
    assert (a[A.GEN_AI_USAGE_INPUT_TOKENS], a[A.GEN_AI_USAGE_OUTPUT_TOKENS], a[A.LLM_TOKEN_COUNT_TOTAL]) == (7, 3, 10)


def test_refused_usage_is_not_written(telemetry, exporter) -> None:
    """refuse_usage: counts given later (LiteLLM's own count of a stream whose provider sent none) are not
    written; a span refused before any count has none, one counted before keeps its counts."""
    refused, counted = telemetry.start_span("model", "m"), telemetry.start_span("model", "m")
    counted.set_usage(Usage(input_tokens=7, output_tokens=3))
    for s in (refused, counted):
        s.refuse_usage()
        s.set_usage(Usage(input_tokens=12, output_tokens=6, total_tokens=18))
        s.end()
    a, b = (span.attributes for span in exporter.spans)
    assert not [k for k in a if "token" in k], a
    assert (b[A.GEN_AI_USAGE_INPUT_TOKENS], b[A.GEN_AI_USAGE_OUTPUT_TOKENS], b[A.LLM_TOKEN_COUNT_TOTAL]) == (7, 3, 10)


def test_model_name_never_on_chain_or_usage_off_model(telemetry, exporter) -> None:
    s = telemetry.start_span("chain", "pipeline")
    s.set_model(request_model="gpt-4o")
    s.set_usage(Usage(1, 2))
    s.end()
    a = only(exporter).attributes
    assert A.GEN_AI_REQUEST_MODEL not in a and A.LLM_MODEL_NAME not in a and A.GEN_AI_USAGE_INPUT_TOKENS not in a


def test_redaction_of_secret_shapes_and_names(telemetry, exporter) -> None:
    s = telemetry.start_span("tool", "login")
    s.set_tool("login", arguments={"user": "ann", "password": "hunter2", "api_key": "k", "max_tokens": 5,
                                   "note": "Authorization: Bearer abcdefghijklmnop and sk-abcdefghijklmnopqrstu"})
    s.end()
    args = json.loads(only(exporter).attributes[A.GEN_AI_TOOL_CALL_ARGUMENTS])
    assert args["password"] == "[REDACTED]" and args["api_key"] == "[REDACTED]"
    assert args["max_tokens"] == 5 and args["user"] == "ann"
    assert "abcdefghijklmnop" not in args["note"] and "sk-abc" not in args["note"]


def test_secret_names_are_redacted_inside_json_text(telemetry, exporter) -> None:
    """Arguments, inputs and results that arrive as JSON *text* get the key rule too, on every
    attribute they land in (``input.value`` kept them before)."""
    s = telemetry.start_span("tool", "login")
    s.set_tool("login", arguments=json.dumps({"user": "ann", "password": "hunter2", "nested": [{"token": "t0ps3cr3t"}]}))
    s.set_tool_result('{"ok": true, "session_key": "s3ss10nk3y"}')
    s.end()
    c = telemetry.start_span("chain", "step")
    c.set_input('[{"api_key": "ak-123456", "q": "weather"}]')
    c.end()
    for span in exporter.spans:
        for key, value in span.attributes.items():
            for secret in ("hunter2", "t0ps3cr3t", "s3ss10nk3y", "ak-123456"):
                assert secret not in str(value), (span.name, key)
    tool = exporter.spans[0].attributes
    assert json.loads(tool[A.INPUT_VALUE])["user"] == "ann"
    assert json.loads(tool[A.GEN_AI_TOOL_CALL_ARGUMENTS])["password"] == "[REDACTED]"
    s = telemetry.start_span("tool", "plain")
    s.set_tool_result('{"ok": true, "note": "no secrets here at all"}')  # nothing to redact: text kept as is
    s.end()
    assert exporter.spans[-1].attributes[A.OUTPUT_VALUE] == '{"ok": true, "note": "no secrets here at all"}'


def test_user_redaction_hook(provider, exporter) -> None:
    t = Telemetry(provider, settings=Settings(redact_hook=lambda key, text: text.replace("ann", "***")))
    s = t.start_span("tool", "lookup")
    s.set_input({"customer": "ann"})
    s.set_output("ann's order")
    s.end()
    a = only(exporter).attributes
    assert json.loads(a[A.INPUT_VALUE]) == {"customer": "***"} and a[A.OUTPUT_VALUE] == "***'s order"


def test_a_failing_redaction_hook_is_logged_as_the_users_and_loses_only_its_attribute(provider, exporter,
                                                                                       caplog) -> None:
    def hook(key: str, text: str) -> str:
        if key == A.OUTPUT_VALUE:
            raise ValueError("hook broke")
        return text

    reset_reported_sites()
    t = Telemetry(provider, settings=Settings(redact_hook=hook))
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        for _ in range(2):
            s = t.start_span("tool", "lookup")
            s.set_input({"customer": "ann"})
            s.set_output("ann's order")
            s.end()
    a = exporter.spans[-1].attributes
    assert json.loads(a[A.INPUT_VALUE]) == {"customer": "ann"} and A.OUTPUT_VALUE not in a
    (record,) = caplog.records
    assert record.getMessage().startswith(f"otel_agents: your redaction hook (redact_hook) {__name__}.test_a_failing_"
                                          "redaction_hook_is_logged_as_the_users_and_loses_only_its_attribute.<locals>"
                                          ".hook raised ValueError('hook broke')"), record.getMessage()


class _Hook:
    """A callable object as a redaction hook, failing."""

    def __call__(self, key: str, text: str) -> str:
        raise LookupError("object hook broke")


def test_each_failing_callback_is_warned_about_once_though_they_share_a_name(provider, caplog) -> None:
    """Two lambdas (on one line: one qualified name, ``<lambda>``, one module), two closures of one ``def``
    and two instances of one class: a WARNING for each callback the first time it fails, none the next;
    the closures share their code and the instances their ``__call__``, so each pair is warned about once."""
    def make():
        def hook(key: str, text: str) -> str:
            raise KeyError("closure hook broke")
        return hook

    hooks = [lambda k, t: 1 / 0, lambda k, t: [][0], make(), make(), _Hook(), _Hook()]
    reset_reported_sites()
    with caplog.at_level(logging.DEBUG, logger="otel_agents"):
        for hook in hooks:
            t = Telemetry(provider, settings=Settings(redact_hook=hook))
            for _ in range(2):
                s = t.start_span("tool", "lookup")
                s.set_tool_result("ann's order")
                s.end()
    warned = [r.getMessage().split(" raised ")[1].split(" (")[0] for r in caplog.records
              if r.levelno == logging.WARNING]
    assert warned == ["ZeroDivisionError('division by zero')", "IndexError('list index out of range')",
                      "KeyError('closure hook broke')", "LookupError('object hook broke')"]
    assert all(r.levelno == logging.DEBUG for r in caplog.records if r.levelno != logging.WARNING)


def test_truncation_marks_and_keeps_json_valid(provider, exporter) -> None:
    t = Telemetry(provider, settings=Settings(max_content_length=200))
    s = t.start_span("tool", "big")
    s.set_tool("big", arguments={"blob": "x" * 10_000, "n": 1})
    s.set_tool_result("y" * 10_000)
    s.end()
    a = only(exporter).attributes
    assert a[A.OTEL_AGENTS_TRUNCATED] is True
    assert len(a[A.GEN_AI_TOOL_CALL_ARGUMENTS]) <= 200 and json.loads(a[A.GEN_AI_TOOL_CALL_ARGUMENTS])["n"] == 1
    assert len(a[A.OUTPUT_VALUE]) <= 200 and a[A.OUTPUT_VALUE].endswith("…")


def test_budget_from_environment(telemetry, exporter, monkeypatch) -> None:
    monkeypatch.setenv("OTEL_AGENTS_MAX_CONTENT_LENGTH", "100")
    s = telemetry.start_span("chain", "c")
    s.set_input("z" * 1000)
    s.end()
    assert len(only(exporter).attributes[A.INPUT_VALUE]) == 100


_CHARACTERS = "a whole number of characters, at least 64; using the default, 16384"
_BYTES = "a whole number of bytes, at least 0; using the default, 4096"
_SECONDS = "a finite number of seconds, at least 0.01; using the default, 300"


@pytest.mark.parametrize("name,raw,rule", [("OTEL_AGENTS_MAX_CONTENT_LENGTH", "abc", _CHARACTERS),
                                           ("OTEL_AGENTS_MAX_CONTENT_LENGTH", "inf", _CHARACTERS),
                                           # -5 and 10 were raised to 64, 1.5 cut to 1, without a word
                                           ("OTEL_AGENTS_MAX_CONTENT_LENGTH", "-5", _CHARACTERS),
                                           ("OTEL_AGENTS_MAX_CONTENT_LENGTH", "10", _CHARACTERS),
                                           ("OTEL_AGENTS_MAX_CONTENT_LENGTH", "100.5", _CHARACTERS),
                                           ("OTEL_AGENTS_MAX_MEDIA_BYTES", "4k", _BYTES),
                                           ("OTEL_AGENTS_MAX_MEDIA_BYTES", "-1", _BYTES),  # was 0, silently
                                           ("OTEL_AGENTS_STREAM_IDLE_TIMEOUT", "5m", _SECONDS),
                                           # 0 and -1 were raised to 10 ms: every stream abandoned at once
                                           ("OTEL_AGENTS_STREAM_IDLE_TIMEOUT", "0", _SECONDS),
                                           ("OTEL_AGENTS_STREAM_IDLE_TIMEOUT", "-1", _SECONDS),
                                           ("OTEL_AGENTS_STREAM_IDLE_TIMEOUT", "0.001", _SECONDS)])
def test_a_number_variable_that_is_not_valid_warns_once_and_uses_the_default(name, raw, rule, monkeypatch,
                                                                          caplog) -> None:
    """OTEL_AGENTS_MAX_CONTENT_LENGTH=abc was ignored without a word; -5 became 64 and
    OTEL_AGENTS_MAX_MEDIA_BYTES=-1 became 0 without one either. The OpenTelemetry specification's rule for a
    numeric variable, for every one: a value it cannot parse or outside the variable's range is warned about
    (naming the variable and its range) and ignored, as if unset."""
    from otel_agents._spans import settings

    monkeypatch.setattr(settings, "_warned_variables", set(), raising=False)
    monkeypatch.setenv(name, raw)
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        for _ in range(3):
            values = (Settings().content_budget(), Settings().media_budget(), Settings().idle_timeout())
    assert f"{values[0]} {values[1]} {values[2]:g}" == "16384 4096 300"
    warnings = [r.getMessage() for r in caplog.records]
    assert warnings == [f"otel_agents: {name}={raw!r} is not valid; it must be {rule}"]
    monkeypatch.setenv(name, "100")
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        Settings().content_budget(), Settings().media_budget(), Settings().idle_timeout()
    assert len(caplog.records) == 1  # a number is quiet


@pytest.mark.parametrize("argument,value,rule", [
    ("max_content_length", -5, "a whole number of characters, at least 64 (None follows OTEL_AGENTS_MAX_CONTENT_LENGTH)"),
    ("max_content_length", 10, "a whole number of characters, at least 64 (None follows OTEL_AGENTS_MAX_CONTENT_LENGTH)"),
    ("max_content_length", float("inf"), "a whole number of characters, at least 64 (None follows "
                                         "OTEL_AGENTS_MAX_CONTENT_LENGTH)"),
    ("max_content_length", "100", "a whole number of characters, at least 64 (None follows "
                                  "OTEL_AGENTS_MAX_CONTENT_LENGTH)"),
    ("max_media_bytes", -1, "a whole number of bytes, at least 0 (None follows OTEL_AGENTS_MAX_MEDIA_BYTES)"),
    ("max_media_bytes", True, "a whole number of bytes, at least 0 (None follows OTEL_AGENTS_MAX_MEDIA_BYTES)"),
    ("stream_idle_timeout", 0, "a finite number of seconds, at least 0.01 (None follows "
                               "OTEL_AGENTS_STREAM_IDLE_TIMEOUT)"),
    ("stream_idle_timeout", float("nan"), "a finite number of seconds, at least 0.01 (None follows "
                                          "OTEL_AGENTS_STREAM_IDLE_TIMEOUT)")])
def test_a_number_setting_that_is_not_valid_raises_naming_the_argument(argument, value, rule) -> None:
    """``Settings(max_content_length=-5)`` was a budget of 64, ``max_media_bytes=-1`` one of 0, ``inf`` the default,
    without a word: an argument the caller wrote is refused, naming it and its range."""
    with pytest.raises(ValueError) as raised:
        Settings(**{argument: value})
    assert str(raised.value) == f"{argument} must be {rule}, not {value!r}"
    valid = Settings(max_content_length=64, max_media_bytes=0, stream_idle_timeout=0.01)
    assert (valid.content_budget(), valid.media_budget(), valid.idle_timeout()) == (64, 0, 0.01)
    assert Settings(max_content_length=1e6).content_budget() == 1_000_000  # a whole float is a whole number


def test_an_unknown_propagation_switch_warns_once_and_propagates(monkeypatch, caplog) -> None:
    # OTEL_AGENTS_MCP_PROPAGATE=nah was taken as "on" without a word
    from otel_agents._spans import settings
    from otel_agents.instrumentors.a2a._protocol import propagating as a2a_propagating
    from otel_agents.instrumentors.mcp._protocol import propagating

    monkeypatch.setattr(settings, "_warned_variables", set(), raising=False)
    for value, on in (("", True), ("TRUE", True), ("1", True), (" off ", False), ("No", False), ("0", False)):
        monkeypatch.setenv("OTEL_AGENTS_MCP_PROPAGATE", value)
        assert propagating(None) is on, value
    assert not caplog.records
    monkeypatch.setenv("OTEL_AGENTS_MCP_PROPAGATE", "nah")
    monkeypatch.setenv("OTEL_AGENTS_A2A_PROPAGATE", "nope")
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        assert propagating(None) and propagating(None) and a2a_propagating(None)
        assert propagating(False) is False
    messages = [r.getMessage() for r in caplog.records]
    assert messages == ["otel_agents: OTEL_AGENTS_MCP_PROPAGATE='nah' is not valid; trace context still travels "
                        "(false, 0, no or off switch it off)",
                        "otel_agents: OTEL_AGENTS_A2A_PROPAGATE='nope' is not valid; trace context still travels "
                        "(false, 0, no or off switch it off)"]


def test_errors_and_control_flow(telemetry, exporter) -> None:
    s = telemetry.start_span("tool", "t")
    s.record_error(KeyError("missing"))
    s.end()
    c = telemetry.start_span("chain", "c")
    c.record_error(GeneratorExit(), control_flow=True)
    c.mark_paused()
    c.end()
    err, flow = exporter.spans
    assert err.status == StatusCode.ERROR and err.attributes[A.ERROR_TYPE] == "KeyError"
    assert err.events[0][0] == "exception"
    assert flow.status == StatusCode.UNSET
    assert flow.attributes[A.OTEL_AGENTS_CONTROL_FLOW] == "GeneratorExit"
    assert flow.attributes[A.OTEL_AGENTS_PAUSED] is True


def test_an_exception_recorded_again_is_one_failure(telemetry, exporter) -> None:
    """A library's failure noted where it happened (LiteLLM's stream raising under a framework's model span),
    then raised through the framework's call and recorded again, or with ``end(error=...)``: one ``exception``
    event. Another exception after it is an event of its own, and its type the span's."""
    s = telemetry.start_span("model", "m")
    failure = ConnectionResetError("peer reset")
    s.record_error(failure)
    s.record_error(failure)
    s.end(error=failure)
    t = telemetry.start_span("model", "n")
    t.record_error(failure)
    t.record_error(TimeoutError("no answer"))
    t.end()
    once, twice = exporter.spans
    assert [e[0] for e in once.events] == ["exception"] and once.attributes[A.ERROR_TYPE] == "ConnectionResetError"
    assert [e[1]["exception.type"] for e in twice.events] == ["ConnectionResetError", "TimeoutError"]
    assert twice.attributes[A.ERROR_TYPE] == "TimeoutError"


class _Failure(Exception):
    """An exception a weak reference can be taken to (the built-in ones take none)."""


class _Held:
    """A local of the frame that raised: what its traceback keeps alive."""


def _raised() -> tuple[_Failure, weakref.ref, weakref.ref]:
    """An exception caught from a call, and weak references to it and to a local of the frame that raised it."""
    held = _Held()
    try:
        raise _Failure(repr(held))
    except _Failure as exc:
        return exc, weakref.ref(exc), weakref.ref(held)


@pytest.mark.parametrize("how", ["record_error", "end(error=...)"])
def test_an_ended_span_keeps_no_exception_alive(telemetry, exporter, how: str) -> None:
    """While the span is open, the exception it recorded is known (recorded again, it adds nothing); once it has
    ended, the span object (held on by a framework's state, a stream wrapper) holds neither the exception nor,
    through its traceback, the frames and locals of the code that raised it. Before, the last exception stayed
    referenced from the span for as long as the span object lived."""
    span = telemetry.start_span("model", "m")
    failure, exc_ref, held_ref = _raised()
    span.record_error(failure)
    if how == "record_error":
        span.record_error(failure)
        span.end()
    else:
        span.end(error=failure)
    (ended,) = exporter.spans
    assert [e[0] for e in ended.events] == ["exception"], ended.events  # recorded once
    del failure
    gc.collect()
    assert span.ended  # still referenced here
    assert exc_ref() is None and held_ref() is None


@pytest.mark.parametrize("exc", [asyncio.CancelledError(), KeyboardInterrupt(), SystemExit(1), GeneratorExit()],
                         ids=lambda e: type(e).__name__)
def test_end_with_an_exception_that_is_not_an_error(telemetry, exporter, exc) -> None:
    """``end(error=...)`` with what is not an ``Exception`` (a cancellation, an interrupt, an exit, a closed
    generator) records control flow, not an error, as a ``Telemetry.span`` scope and a wrapped stream do: the
    step was stopped, it did not fail."""
    s = telemetry.start_span("tool", "t")
    s.end(error=exc)
    (span,) = exporter.spans
    assert span.status == StatusCode.UNSET and A.ERROR_TYPE not in span.attributes, span.attributes
    assert span.attributes[A.OTEL_AGENTS_CONTROL_FLOW].endswith(type(exc).__name__)


def test_in_band_error_type_stands_when_the_framework_raises_it_again(telemetry, exporter) -> None:
    """MCP-2: ``set_error`` (an ``isError`` result) then the framework's exception made of it: the
    span keeps ``error.type=tool_error`` and the in-band description, and gets the exception event."""
    s = telemetry.start_span("tool", "refund")
    s.set_error("tool_error", "refund service down")
    s.record_error(RuntimeError("tool failed"))
    s.end()
    span, = exporter.spans
    assert span.status == StatusCode.ERROR and span.attributes[A.ERROR_TYPE] == "tool_error"
    assert span.status_description == "refund service down"
    assert [e[0] for e in span.events] == ["exception"]


def test_span_context_manager_reraises_unchanged(telemetry, exporter) -> None:
    err = ValueError("user's own")
    with pytest.raises(ValueError) as info:
        with telemetry.span("agent", "a"):
            raise err
    assert info.value is err
    assert only(exporter).status == StatusCode.ERROR
    assert not trace.get_current_span().get_span_context().is_valid


def test_every_attribute_value_is_otel_legal(telemetry, exporter) -> None:
    s = telemetry.start_span("chain", "c")
    s.set_attribute("a", {"x": 1})
    s.set_attribute("b", [1, "two"])
    s.set_attribute("c", [1, 2])
    s.set_attribute("d", None)
    s.set_attribute("e", object())
    s.end()
    a = only(exporter).attributes
    assert a["a"] == '{"x":1}' and json.loads(a["b"]) == [1, "two"] and a["c"] == (1, 2) and "d" not in a
    assert isinstance(a["e"], str)


def test_suppressed_instrumentation_records_nothing(telemetry, exporter) -> None:
    with suppress_instrumentation():
        s = telemetry.start_span("agent", "a")
        s.set_input("x")
        s.end()
    assert exporter.spans == []


def test_run_attributes_reach_children_across_threads(telemetry, exporter) -> None:
    import concurrent.futures

    token = push_run_attributes({A.SESSION_ID: "s-1", A.USER_ID: "u-1"})
    try:
        root = telemetry.start_span("agent", "a")
    finally:
        pop_run_attributes(token)
    with concurrent.futures.ThreadPoolExecutor(1) as pool:  # a thread that does NOT copy the context
        pool.submit(lambda: telemetry.start_span("tool", "t", parent=root).end()).result()
    root.end()
    for s in exporter.spans:
        assert s.attributes[A.SESSION_ID] == "s-1" and s.attributes[A.USER_ID] == "u-1"


def test_metrics_recorded_for_model_spans(provider) -> None:
    reader = InMemoryMetricReader()
    t = Telemetry(provider, MeterProvider(metric_readers=[reader]))
    s = t.start_span("model", "gpt-4o")
    s.set_model(request_model="gpt-4o", provider="openai")
    s.set_usage(Usage(10, 4))
    s.end()
    data = reader.get_metrics_data()
    points = {m.name: m.data.data_points for rm in data.resource_metrics for sm in rm.scope_metrics for m in sm.metrics}
    assert points["gen_ai.client.operation.duration"][0].attributes[A.GEN_AI_REQUEST_MODEL] == "gpt-4o"
    tokens = {p.attributes[A.GEN_AI_TOKEN_TYPE]: p.sum for p in points["gen_ai.client.token.usage"]}
    assert tokens == {"input": 10, "output": 4}


# OTel GenAI v1.41 (semantic-conventions v1.41.1, model/gen-ai/metrics.yaml and docs/gen-ai/gen-ai-metrics.md), the
# last release that carries gen-ai: the four client histograms (operation duration, token usage and, for streamed
# calls only, time to first chunk and time per output chunk), their units and advisory buckets, and the attributes
# a point may carry (metric_attributes.gen_ai; error.type on the duration; gen_ai.token.type on token usage). The
# server metrics are a model server's, not a client's. The conventions' main branch has replaced the token histogram
# (semantic-conventions-genai #374) and moved inference durations to gen_ai.client.inference.duration (#521):
# unreleased, not followed.
_SECONDS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
V1_41_METRICS = {
    "gen_ai.client.operation.duration": ("s", _SECONDS),
    "gen_ai.client.token.usage": ("{token}", [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304,
                                              16777216, 67108864]),
    "gen_ai.client.operation.time_to_first_chunk": ("s", _SECONDS),
    "gen_ai.client.operation.time_per_output_chunk": ("s", _SECONDS),
}
V1_41_METRIC_ATTRIBUTES = {"gen_ai.operation.name", "gen_ai.provider.name", "gen_ai.request.model",
                           "gen_ai.response.model", "server.address", "server.port"}
V1_41_METRIC_EXTRA = {"gen_ai.client.operation.duration": {"error.type"},
                      "gen_ai.client.token.usage": {"gen_ai.token.type"}}  # no error.type: not in its attributes


def test_metrics_are_the_released_instruments(provider) -> None:
    from opentelemetry.sdk.metrics.export import HistogramDataPoint

    reader = InMemoryMetricReader()
    t = Telemetry(provider, MeterProvider(metric_readers=[reader]))
    s = t.start_span("model", "gpt-4o")
    s.set_model(request_model="gpt-4o", response_model="gpt-4o-2024", provider="openai")
    s.set_usage(Usage(10, 4))
    s.end()
    failed = t.start_span("model", "gpt-4o")
    failed.set_model(request_model="gpt-4o", provider="openai")
    failed.set_usage(Usage(7, 1))  # a call that failed after the provider counted its tokens
    failed.end(error=TimeoutError("slow"))
    streamed = t.start_span("model", "gpt-4o")  # a stream that failed after three chunks
    streamed.set_model(request_model="gpt-4o", provider="openai")
    for _ in range(3):
        streamed.chunk_received()
    streamed.end(error=ConnectionError("reset"))
    metrics = [m for rm in reader.get_metrics_data().resource_metrics for sm in rm.scope_metrics for m in sm.metrics]
    assert {m.name for m in metrics} == set(V1_41_METRICS)
    for m in metrics:
        unit, buckets = V1_41_METRICS[m.name]
        assert m.unit == unit
        for point in m.data.data_points:
            assert isinstance(point, HistogramDataPoint) and list(point.explicit_bounds) == buckets
            allowed = V1_41_METRIC_ATTRIBUTES | V1_41_METRIC_EXTRA.get(m.name, set())
            assert set(point.attributes) <= allowed, m.name
            assert {"gen_ai.operation.name", "gen_ai.provider.name"} <= set(point.attributes)  # required
    [duration] = [m for m in metrics if m.name == "gen_ai.client.operation.duration"]
    assert sorted(p.attributes.get("error.type", "") for p in duration.data.data_points) == \
        ["", "ConnectionError", "TimeoutError"]
    [tokens] = [m for m in metrics if m.name == "gen_ai.client.token.usage"]
    assert sorted(p.sum for p in tokens.data.data_points) == [1, 4, 7, 10]  # the failed call's counts too
    counts = {m.name: sum(p.count for p in m.data.data_points) for m in metrics}
    # only the streamed call: one first chunk, one gap per chunk after it
    assert counts["gen_ai.client.operation.time_to_first_chunk"] == 1
    assert counts["gen_ai.client.operation.time_per_output_chunk"] == 2


def test_the_server_of_a_model_call_is_on_its_span_and_metric_points(provider, exporter) -> None:
    """OTel GenAI v1.41: server.address/server.port are recommended on an inference span and on both client metrics'
    points (metric_attributes.gen_ai): given at the start (what samplers see) or set later from the client's base
    URL (a string or an httpx.URL); a URL with no host writes neither."""
    import httpx

    reader = InMemoryMetricReader()
    t = Telemetry(provider, MeterProvider(metric_readers=[reader]))
    at_start = t.start_span("model", "m1", attributes=server_attributes("http://127.0.0.1:8000/v1", scheme_port=True))
    at_start.set_model(request_model="m1", provider="openai")
    at_start.set_usage(Usage(3, 2))
    at_start.end()
    later = t.start_span("model", "m2")
    later.set_model(request_model="m2", provider="openai")
    later.set_server(httpx.URL("https://api.example.com/v1/"))
    later.end(error=TimeoutError("slow"))
    nowhere = t.start_span("model", "m3")
    nowhere.set_model(request_model="m3", provider="openai")
    nowhere.set_server("not a url")
    nowhere.set_server(None)
    nowhere.end()
    spans = {s.attributes["gen_ai.request.model"]: s.attributes for s in exporter.semantic("model")}
    expected = {"m1": ("127.0.0.1", 8000), "m2": ("api.example.com", 443), "m3": (None, None)}
    for model, (address, port) in expected.items():
        assert (spans[model].get("server.address"), spans[model].get("server.port")) == (address, port)
    metrics = [m for rm in reader.get_metrics_data().resource_metrics for sm in rm.scope_metrics for m in sm.metrics]
    points = [(m.name, p.attributes) for m in metrics for p in m.data.data_points]
    assert len(points) == 5  # three durations, m1's two token counts
    for name, attributes in points:
        address, port = expected[attributes["gen_ai.request.model"]]
        assert (attributes.get("server.address"), attributes.get("server.port")) == (address, port), name


@pytest.mark.parametrize("output_type, count, written", [
    ("json", 3, {"gen_ai.output.type": "json", "gen_ai.request.choice.count": 3}),
    ("text", 1, {"gen_ai.output.type": "text"}),  # one choice: the default, not written (v1.41: "!=1")
    (None, None, {}),  # nothing asked: nothing invented
    (None, True, {}),  # not a count
])
def test_request_output_is_written_only_as_asked(telemetry, exporter, output_type, count, written) -> None:
    s = telemetry.start_span("model", "m")
    s.set_request_output(output_type, count)
    s.end()
    attributes = only(exporter).attributes
    assert {k: attributes[k] for k in ("gen_ai.output.type", "gen_ai.request.choice.count") if k in attributes} == \
        written


# --- guard ------------------------------------------------------------------------------

def test_guard_logs_once_per_site_and_swallows(caplog) -> None:
    reset_reported_sites()

    @guarded("test.site", default="fallback")
    def broken() -> str:
        raise RuntimeError("ours")

    with caplog.at_level(logging.DEBUG, logger="otel_agents"):
        assert broken() == "fallback"
        assert broken() == "fallback"
        with guard("test.block"):
            raise KeyError("also ours")
    levels = [(r.levelno, "test.site" in r.getMessage()) for r in caplog.records]
    assert levels.count((logging.WARNING, True)) == 1
    assert levels.count((logging.DEBUG, True)) == 1
    assert any("test.block" in r.getMessage() for r in caplog.records)


def test_setters_never_raise(telemetry, exporter, monkeypatch) -> None:
    import otel_agents._spans.span as span_mod

    def boom(*a, **k):
        raise RuntimeError("encoder broke")

    monkeypatch.setattr(span_mod.encoding, "fit_json", boom)
    s = telemetry.start_span("tool", "t")
    s.set_tool("t", arguments={"a": 1})
    s.end()
    assert only(exporter).end_time


# --- streams ----------------------------------------------------------------------------

def gen(n: int, fail_at: int | None = None):
    for i in range(n):
        if i == fail_at:
            raise RuntimeError("stream broke")
        yield i


def _stream(telemetry, it, **kw):
    span = telemetry.start_span("chain", "stream")
    seen: list = []
    return wrap_stream(it, span, on_chunk=seen.append,
                       on_end=lambda s, abandoned: s.set_output(seen), **kw), span


def test_stream_exhausted(telemetry, exporter) -> None:
    stream, span = _stream(telemetry, gen(3))
    assert list(stream) == [0, 1, 2]
    snap = only(exporter)
    assert json.loads(snap.attributes[A.OUTPUT_VALUE]) == [0, 1, 2]
    assert A.OTEL_AGENTS_STREAM_ABANDONED not in snap.attributes


def test_stream_closed_is_abandoned(telemetry, exporter) -> None:
    stream, span = _stream(telemetry, gen(10))
    next(stream)
    stream.close()
    snap = only(exporter)
    assert snap.attributes[A.OTEL_AGENTS_STREAM_ABANDONED] is True and snap.status == StatusCode.UNSET


def test_stream_raised_is_error(telemetry, exporter) -> None:
    stream, span = _stream(telemetry, gen(10, fail_at=2))
    with pytest.raises(RuntimeError, match="stream broke"):
        list(stream)
    assert only(exporter).status == StatusCode.ERROR


@pytest.mark.parametrize("ending", ["exhausted", "terminal", "closed", "raised"])
def test_stream_without_its_terminal_event_is_incomplete(telemetry, exporter, ending: str) -> None:
    """``missing()`` is asked only when the stream ended by itself: a name then fails the span as cut short
    (``error.type`` ``stream_incomplete``, not abandoned), and a finish reason given after that (a framework's
    default for the one never sent) is not written; a stream left or raising is told as before, and one whose
    terminal event came (``missing()`` ``None``) is clean."""
    span = telemetry.start_span("model", "m")
    asked: list[bool] = []

    def missing() -> str | None:
        asked.append(True)
        return None if ending == "terminal" else "the_end"

    def on_end(s, abandoned: bool) -> None:
        if ending == "exhausted":
            s.mark_incomplete("the_end")  # as the span layer does next: what follows writes no reason
            s.set_finish_reasons(["stop"])
            s.set_messages(output=[ChatMessage("assistant", "so far", finish_reason="stop")])

    stream = wrap_stream(gen(3, fail_at=2 if ending == "raised" else None), span, on_end=on_end, missing=missing)
    if ending == "closed":
        next(stream)
        stream.close()
    elif ending == "raised":
        with pytest.raises(RuntimeError):
            list(stream)
    else:
        assert list(stream) == [0, 1, 2]
    snap = only(exporter)
    a = snap.attributes
    assert asked == ([True] if ending in ("exhausted", "terminal") else [])
    expected = {"exhausted": (StatusCode.ERROR, "stream_incomplete"), "terminal": (StatusCode.UNSET, None),
                "closed": (StatusCode.UNSET, None), "raised": (StatusCode.ERROR, "RuntimeError")}[ending]
    assert (snap.status, a.get(A.ERROR_TYPE)) == expected
    assert (A.OTEL_AGENTS_STREAM_ABANDONED in a) == (ending == "closed")
    if ending == "exhausted":
        assert snap.status_description == "stream ended without the_end"
        assert A.GEN_AI_RESPONSE_FINISH_REASONS not in a
        assert json.loads(a[A.GEN_AI_OUTPUT_MESSAGES])[0]["finish_reason"] == ""


def test_stream_raised_calls_on_error_before_the_span_ends(telemetry, exporter) -> None:
    """``on_error(span, exc)`` sees what the stream raised while the span is open (a stop reason goes on it)."""
    span = telemetry.start_span("agent", "stream")
    seen: list = []

    def on_error(s, exc) -> None:
        seen.append((s.ended, type(exc).__name__))
        s.set_stop_reason("budget")

    with pytest.raises(RuntimeError, match="stream broke"):
        list(wrap_stream(gen(10, fail_at=2), span, on_error=on_error))
    assert seen == [(False, "RuntimeError")]
    assert only(exporter).attributes[A.OTEL_AGENTS_STOP_REASON] == "budget"


def test_stream_broken_out_of_ends_promptly(telemetry, exporter) -> None:
    stream, span = _stream(telemetry, gen(10))
    for _ in stream:
        break
    del stream
    snap = only(exporter)  # ended at once by refcounting, not at some later collection
    assert snap.attributes[A.OTEL_AGENTS_STREAM_ABANDONED] is True


def test_stream_idle_timeout_ends_it(telemetry, exporter) -> None:
    stream, span = _stream(telemetry, gen(10), idle_timeout=0.05)
    next(stream)
    deadline = time.monotonic() + 5
    while not span.ended and time.monotonic() < deadline:
        time.sleep(0.01)
    assert span.ended
    assert only(exporter).attributes[A.OTEL_AGENTS_STREAM_ABANDONED] is True
    assert list(stream) == list(range(1, 10))  # the consumer still gets its data
    assert len(exporter.spans) == 1


def test_async_stream_consumed_and_abandoned(telemetry, exporter) -> None:
    async def agen(n):
        for i in range(n):
            yield i

    async def main():
        s1, _ = _stream(telemetry, agen(3))
        assert [i async for i in s1] == [0, 1, 2]
        s2, _ = _stream(telemetry, agen(5))
        async for _ in s2:
            break
        del s2

    asyncio.run(main())
    done, abandoned = exporter.spans
    assert A.OTEL_AGENTS_STREAM_ABANDONED not in done.attributes
    assert abandoned.attributes[A.OTEL_AGENTS_STREAM_ABANDONED] is True
    gc.collect()
    settle()  # a collected stream's span ends in the finaliser thread
    assert WATCHDOG.pending() == 0


def test_watchdog_heap_stays_bounded_when_streams_finish(telemetry, exporter) -> None:
    """Finished streams do not pile up in the idle watchdog until their (minutes-long) deadline."""
    from otel_agents._spans.streams import watch_stream

    for _ in range(5000):
        handle = watch_stream(telemetry.start_span("model", "m"), idle_timeout=600)
        handle.finish()
    assert len(exporter.spans) == 5000
    assert WATCHDOG.pending() == 0
    assert WATCHDOG.size() <= 2048


# --- registry ---------------------------------------------------------------------------

def test_registry_caps_size_and_age(telemetry, exporter) -> None:
    reg = SpanRegistry(max_size=3, max_age_s=3600)
    for i in range(5):
        reg.put(i, telemetry.start_span("chain", f"c{i}"))
    assert len(reg) == 3 and reg.evicted == 2
    evicted = [s for s in exporter.spans if s.attributes.get(A.OTEL_AGENTS_SPAN_EVICTED)]
    assert [s.name for s in evicted] == ["c0", "c1"]
    reg.pop(4).end()
    assert reg.closed == 1 and len(reg) == 2
    aged = SpanRegistry(max_size=100, max_age_s=0.0)
    aged.put("a", telemetry.start_span("chain", "old"))
    aged.put("b", telemetry.start_span("chain", "new"))
    assert aged.get("a") is None and aged.evicted == 1
    reg.clear()
    aged.clear()
    assert len(reg) == 0 and all(s.end_time for s in exporter.spans)
    assert len(exporter.spans) == 5 + 2


def test_lone_surrogates_become_encodable(telemetry, exporter) -> None:
    """An undecodable file name (lone surrogate) must not make exporters drop the attribute."""
    s = telemetry.start_span("tool", "ls \udcff")
    s.set_tool("ls", arguments={"path": "bad\udcffname"})
    s.set_output("bad\ud83d")
    s.set_attribute("x.names", ["ok", "bad\udcff"])
    s.end()
    snap = only(exporter)
    for value in [snap.name, *snap.attributes.values()]:
        for v in (value if isinstance(value, tuple) else [value]):
            if isinstance(v, str):
                v.encode("utf-8")  # would raise on a lone surrogate
    assert json.loads(snap.attributes[A.GEN_AI_TOOL_CALL_ARGUMENTS])["path"].startswith("bad")


@pytest.mark.parametrize("value", ["NO_CONTENTS", "disabled", "  Flase "])
def test_unknown_content_switch_value_warns_once_and_records_no_content(value, telemetry, exporter, monkeypatch,
                                                                        caplog) -> None:
    # an unknown value (a typo of "off") left content capture on: it fails closed, as opentelemetry-util-genai does
    from otel_agents._spans import settings

    monkeypatch.setattr(settings, "_warned_variables", set())
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", value)
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        assert Settings().content_enabled() is False
        assert Settings().content_enabled() is False
        s = telemetry.start_span("model", "m")
        s.set_input("SECRET prompt")
        s.end()
    assert not any("SECRET" in str(v) for v in only(exporter).attributes.values())
    warnings = [r.getMessage() for r in caplog.records if repr(value) in r.getMessage()]
    assert len(warnings) == 1 and "content capture is off" in warnings[0], warnings
    assert Settings(capture_content=True).content_enabled() is True  # the argument still wins


def test_shortest_secret_shapes_are_still_redacted() -> None:
    """The length pre-check never skips a string a secret shape could match."""
    from otel_agents._spans.redaction import redact_text

    for secret in ("Basic abcdefgh", "pk-lf-abcdefgh", "sk-lf-abcdefgh"):
        assert len(secret) == 14 and "abcdefgh" not in redact_text(secret)
    assert redact_text("user") == "user"


_SHAPES = ("Bearer abcdefghij", "bearer abc.def-ghi", "Basic dXNlcjpwYXNz==", "sk-abcdefghijklmnopqrst",
           "sk-proj-abcdefghijklmnop_qr", "sk-ant-abcdefghijklmnopqr", "AKIAABCDEFGHIJKLMNOP", "ASIAABCDEFGHIJKLMNOP",
           "ghp_" + "a" * 36, "gho_" + "b" * 30, "github_pat_" + "c" * 40, "xoxb-1234567890-abc", "AIza" + "d" * 35,
           "pk-lf-abcdefgh12", "sk-lf-abcdefgh12")


@given(st.lists(st.sampled_from(_SHAPES + ("task-based", "the ", "bearer", "AKIA", "x", " ", "_", "ghost_", "-",
                                           "Basic", "sk", "\n", "é")), max_size=12))
def test_secret_prefilter_never_changes_the_result(parts) -> None:
    """The literal pre-filter only skips text the secret shapes cannot match: same result as a full scan."""
    from otel_agents._spans.redaction import REDACTED, _SECRET_TEXT, redact_text

    text = "".join(parts)
    assert redact_text(text) == _SECRET_TEXT.sub(REDACTED, text)
    for shape in _SHAPES:
        assert redact_text(f"key: {shape} end") != f"key: {shape} end"


def test_non_recording_spans_encode_no_content(telemetry, exporter, monkeypatch) -> None:
    """Suppressed (or sampled-out) spans skip the content work entirely: nothing is rendered."""
    from otel_agents._spans import pipeline

    calls: list[str] = []
    original = pipeline.render  # the one path every content value takes to an attribute

    def counting(key, value, **kw):
        calls.append(key)
        return original(key, value, **kw)

    monkeypatch.setattr(pipeline, "render", counting)
    with suppress_instrumentation():
        s = telemetry.start_span("model", "m")
        s.set_messages(input=[ChatMessage("user", "hello there, this is long")],
                       output=[ChatMessage("assistant", "hi")])
        s.set_input({"a": 1})
        s.record_error(ValueError("x"))
        s.end()
    assert calls == [] and exporter.spans == []
    s = telemetry.start_span("chain", "recorded")
    s.set_input({"a": 1})
    s.end()
    assert calls == ["input.value"]


def test_issue35_error_whose_str_raises_is_still_recorded(telemetry, exporter) -> None:
    """Issue 35: an exception whose ``__str__`` raises made ``record_error`` fail half-way: the span stayed
    UNSET (the envelope said ``status: ok``). Now the status is ERROR, the event is there, and the
    message says the exception could not be printed."""
    from tests.hostile import UnprintableError

    s = telemetry.start_span("tool", "t")
    s.record_error(UnprintableError())
    s.end()
    span = only(exporter)
    assert span.status == StatusCode.ERROR and span.attributes[A.ERROR_TYPE] == "tests.hostile.UnprintableError"
    [(name, attrs)] = span.events
    assert name == "exception" and attrs["exception.message"] == "<unprintable UnprintableError>"
    assert "UnprintableError" in attrs["exception.stacktrace"]


def test_issue35_stacktrace_is_redacted_with_content_off(provider, exporter, monkeypatch) -> None:
    """Issue 35: with content capture off, ``exception.stacktrace`` (the failing source line) was exported
    without redaction; with it on, the same trace was redacted."""
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    telemetry = Telemetry(provider, framework="test")
    s = telemetry.start_span("tool", "t")
    try:
        raise ValueError("boom"); api_key = "sk-proj-Zq1234567890abcdefghij"  # noqa: E702,F841 - the line the trace quotes
    except ValueError as exc:
        s.record_error(exc)
    s.end()
    [(_, attrs)] = only(exporter).events
    assert "raise ValueError" in attrs["exception.stacktrace"]
    assert "sk-proj-Zq1234567890" not in attrs["exception.stacktrace"]


def test_issue35_hostile_documents_texts_and_reasons_never_raise(telemetry, exporter) -> None:
    """Issue 35: every setter that iterates a user's value is guarded (documents, embedding texts, finish reasons)."""
    from tests.hostile import LenRaisingList, UnboundProxy

    class Exploding:
        def __iter__(self):  # noqa: ANN204
            raise RuntimeError("no iteration")

    s = telemetry.start_span("retriever", "r")
    s.set_retrieval(query="q", documents=Exploding())
    s.set_retrieval(documents=[UnboundProxy()])
    s.set_finish_reasons(Exploding())
    e = telemetry.start_span("embedding", "e")
    e.set_embedding(texts=Exploding(), dimension=3)
    e.set_embedding(texts=LenRaisingList(["a"]))
    s.end()
    e.end()
    assert len(exporter.spans) == 2 and all(x.end_time for x in exporter.spans)


def test_issue35_failed_call_with_unprintable_error_is_an_error_in_the_envelope(telemetry, envelopes) -> None:
    """Issue 35: ``record_error`` failing half-way left the tool span UNSET, so the envelope reported the
    failed call as ``status: ok``."""
    from tests.hostile import UnprintableError

    with telemetry.span("agent", "support"):
        with pytest.raises(UnprintableError):
            with telemetry.span("tool", "lookup") as tool:
                tool.set_tool("lookup", call_id="c1", arguments={"q": "x"})
                raise UnprintableError()
    [env] = envelopes
    [call] = env["tool_calls"]
    assert call["status"] == "error" and call["error"].startswith("UnprintableError"), call


def test_issue35_internal_error_report_survives_an_exception_that_cannot_print_itself(caplog) -> None:
    """Issue 35: our own error log used ``%r`` of the exception, which may be the user's and unprintable."""
    from otel_agents._spans.guard import report_internal_error
    from tests.hostile import UnprintableError

    reset_reported_sites()
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        report_internal_error("test.unprintable", UnprintableError())
    [record] = [r for r in caplog.records if r.name == "otel_agents"]
    assert "UnprintableError (unprintable)" in record.getMessage()


def test_attributes_held_before_the_end_are_bounded(telemetry, exporter) -> None:
    """A span's attributes go to the SDK when it ends, but a long-lived span that keeps setting new keys
    holds no more of them than the SDK's count limit: past it they go at once (the SDK keeps the newest)."""
    s = telemetry.start_span("agent", "long-lived")
    for i in range(1000):
        s.set_attribute(f"app.step.{i}", i)
        assert len(s._pending) <= 129
    s.end()
    a = only(exporter).attributes
    assert len(a) <= 128 and a["app.step.999"] == 999 and "app.step.0" not in a
    assert a[A.OTEL_AGENTS_SPAN_KIND] == "agent"  # the kind put back at the end


def test_an_integer_past_64_bits_is_not_an_attribute_that_fails_the_export() -> None:
    """OTel attributes hold 64-bit integers: the OTLP encoder raises ``ValueError`` on a larger one, failing the
    export of the whole batch, every other span (the application's too) with it. A value of the user's that
    large (a seed, an id, a count) is written as its decimal text instead, alone or in a list."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(memory))
    s = Telemetry(tp, framework="test").start_span("tool", "t")
    s.set_attribute("test.big", 2 ** 70)
    s.set_attributes({"test.negative": -2 ** 63 - 1, "test.edge": 2 ** 63 - 1, "test.small": 7})
    s.set_attribute("test.list", [1, 2 ** 64])
    s.end()
    (span,) = memory.get_finished_spans()
    assert span.attributes["test.big"] == str(2 ** 70)
    assert span.attributes["test.negative"] == str(-2 ** 63 - 1)
    assert span.attributes["test.edge"] == 2 ** 63 - 1 and span.attributes["test.small"] == 7
    assert json.loads(span.attributes["test.list"]) == [1, 2 ** 64]
    encode_spans([span])  # raised ValueError: Value out of range


def test_an_invoke_workflow_span_is_named_by_gen_ai_workflow_name(provider, exporter) -> None:
    """OTel GenAI v1.41 (semantic-conventions v1.41.1, model/gen-ai/spans.yaml, span.gen_ai.invoke_workflow.internal):
    the span is ``invoke_workflow {gen_ai.workflow.name}`` and carries ``gen_ai.workflow.name`` (conditionally required,
    "when available"); no ``gen_ai.agent.*`` attribute is defined on it. Set once, here, for every instrumentor: a
    workflow under another run is named by its own name, not the run's (what a plain chain carries); a name that is
    content, with content off, is not written; neither is the attribute when OTel GenAI and Langfuse are not."""
    t = Telemetry(provider, framework="test")
    session = t.start_span("chain", "support_session")
    t.start_span("chain", "Desk", workflow=True, parent=session).end()
    t.start_span("chain", "lookup", parent=session).end()
    session.end()
    Telemetry(provider, framework="test", settings=Settings(capture_content=False)).start_span(
        "chain", "a task", workflow=True, name_is_content=True).end()
    Telemetry(provider, framework="test", settings=Settings(vocabularies="openinference")).start_span(
        "chain", "Crew", workflow=True).end()
    desk, plain, hidden, crew = (only(exporter, n) for n in ("invoke_workflow Desk", "lookup", "invoke_workflow",
                                                              "invoke_workflow Crew"))
    assert desk.attributes[A.GEN_AI_OPERATION_NAME] == "invoke_workflow"
    assert desk.attributes[A.GEN_AI_WORKFLOW_NAME] == "Desk"
    assert not any(k.startswith("gen_ai.agent.") for k in desk.attributes)
    assert plain.attributes[A.GEN_AI_WORKFLOW_NAME] == "support_session"  # a step of its run
    assert A.GEN_AI_WORKFLOW_NAME not in hidden.attributes
    assert A.GEN_AI_WORKFLOW_NAME not in crew.attributes and not any(k.startswith("gen_ai.") for k in crew.attributes)


@pytest.mark.parametrize(("url", "scheme_port", "expected"), [
    ("http://agent.example:8080/a2a", False, {"server.address": "agent.example", "server.port": 8080}),
    ("https://agent.example/", True, {"server.address": "agent.example", "server.port": 443}),
    ("https://agent.example/", False, {"server.address": "agent.example"}),
    ("http://[::1]:9/", True, {"server.address": "::1", "server.port": 9}),
    ("http://agent.example:99999/", True, {"server.address": "agent.example"}),  # no port guessed for a bad one
    ("http://agent.example:x/", True, {"server.address": "agent.example"}),
    ("http://[::1/", True, {}),  # urlsplit raises
    ("grpc-host:50051", True, {}),
    (None, True, {}),
])
def test_server_attributes_of_a_url_never_raise(url, scheme_port, expected) -> None:
    from otel_agents._spans.address import server_attributes

    assert server_attributes(url, scheme_port=scheme_port) == expected


def test_configured_url_reads_a_model_without_the_attribute_without_pydantics_miss(monkeypatch) -> None:
    """A model object without ``base_url`` (ADK's ``BaseLlm`` subclasses, a LlamaIndex LLM): read on every model
    span, its absence costs no ``AttributeError`` raised in pydantic's ``__getattr__`` (~35,000 instructions); a
    URL it was given is still found, and a hostile object gives ``None``."""
    import pydantic

    from otel_agents._spans.address import configured_url
    from tests.pydantic_misses import misses_of_ours

    class Llm(pydantic.BaseModel):
        model: str = "m"

    class Configured(Llm):
        api_base: str = "http://127.0.0.1:4000"

    class Hostile:
        def __getattr__(self, name: str) -> None:
            raise RuntimeError(name)

    with misses_of_ours(monkeypatch) as misses:
        assert configured_url(Llm(), ("base_url", "api_base")) is None
        assert configured_url(Configured(), ("base_url", "api_base")) == "http://127.0.0.1:4000"
    assert misses == []
    assert configured_url(Hostile(), ("base_url",)) is None


def test_no_metric_point_is_built_for_a_histogram_that_keeps_none(monkeypatch) -> None:
    """With no meter provider (the API's proxy instruments, before a global provider is set) or OTel's no-op one, a
    model span's metric points are not built or handed over (nobody keeps them); once the proxy gets a real
    instrument (a provider set later), the same points as before are recorded."""
    from opentelemetry.metrics import NoOpHistogram, NoOpMeterProvider
    from opentelemetry.metrics._internal import _ProxyMeter
    from opentelemetry.metrics._internal.instrument import _ProxyHistogram
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.metrics.export import InMemoryMetricReader

    from otel_agents._spans.metrics import GenAIMetrics
    from otel_agents._spans.usage import Usage

    calls: list[float] = []
    for cls in (NoOpHistogram, _ProxyHistogram):
        real = cls.record
        monkeypatch.setattr(cls, "record", lambda self, amount, *a, _real=real, **k: (calls.append(amount),
                                                                                          _real(self, amount, *a, **k)))
    proxy = _ProxyMeter("otel_agents")

    class ProxyProvider:
        def get_meter(self, *args, **kwargs):
            return proxy

    usage = Usage(input_tokens=3, output_tokens=5)
    for meters in (NoOpMeterProvider(), ProxyProvider()):
        metrics = GenAIMetrics(meters)
        metrics.record(None, 0.5, usage, {"gen_ai.operation.name": "chat"}, None)
        metrics.record_chunks(0.1, [1.0, 1.5], {"gen_ai.operation.name": "chat"})
    assert calls == []
    reader = InMemoryMetricReader()
    proxy.on_set_meter_provider(MeterProvider(metric_readers=[reader]))
    metrics.record(None, 0.5, usage, {"gen_ai.operation.name": "chat"}, None)
    assert calls == [0.5, 3, 5]
    points = {m.name: [p.sum for p in m.data.data_points] for rm in reader.get_metrics_data().resource_metrics
              for sm in rm.scope_metrics for m in sm.metrics}
    assert points == {"gen_ai.client.operation.duration": [0.5], "gen_ai.client.token.usage": [3, 5]}


def test_server_attributes_read_a_clients_url_once_and_a_mutable_one_each_time(monkeypatch) -> None:
    """A provider client's ``base_url`` (an ``httpx.URL``, immutable) is the same object on every model request:
    its text is read and split once (~20k instructions a request), each caller getting its own dict; a URL
    object of another library is read each time (it may change), and a long URL is split each time (the cache
    stays small)."""
    import httpx

    reads = []
    text_of = httpx.URL.__str__
    monkeypatch.setattr(httpx.URL, "__str__", lambda self: reads.append(1) or text_of(self))
    url = httpx.URL("https://api.example.com/v1/")
    first, second = server_attributes(url, scheme_port=True), server_attributes(url, scheme_port=True)
    assert first == second == {"server.address": "api.example.com", "server.port": 443}
    first["server.port"] = 1  # the caller's to change
    assert server_attributes(url, scheme_port=True)["server.port"] == 443
    assert len(reads) == 1

    class Mutable:  # another library's URL object: re-read
        scheme, host, text = "http", "a.example", "http://a.example:81"

        def __str__(self) -> str:
            return self.text

    mutable = Mutable()
    assert server_attributes(mutable) == {"server.address": "a.example", "server.port": 81}
    mutable.text = "http://b.example:82"
    assert server_attributes(mutable) == {"server.address": "b.example", "server.port": 82}
    long = "http://c.example:83/" + "x" * 5000
    assert server_attributes(long) == {"server.address": "c.example", "server.port": 83}


def test_duration_metric_counts_from_a_given_start_time_to_a_given_end_time(provider) -> None:
    """A model span opened after its request began (Google ADK, the Claude Agent SDK and the OpenAI Agents SDK
    pass ``start_time``) measures gen_ai.client.operation.duration from that start, and to ``end_time`` when one is
    given: not from when the span object was made (which gave ~0 s)."""
    import time as _time

    reader = InMemoryMetricReader()
    t = Telemetry(provider, MeterProvider(metric_readers=[reader]))
    now = _time.time_ns()
    s = t.start_span("model", "gpt-4o", start_time=now - 3_000_000_000)
    s.set_model(request_model="gpt-4o", provider="openai")
    s.end(end_time=now - 1_000_000_000)
    [point] = [p for rm in reader.get_metrics_data().resource_metrics for sm in rm.scope_metrics
               for m in sm.metrics if m.name == "gen_ai.client.operation.duration" for p in m.data.data_points]
    assert 1.9 < point.sum < 2.5  # 3 s ago to 1 s ago
