"""Every attribute of a set of model, chain and tool spans, pinned byte for byte.

The span layer's content path (to JSON-able → redact → fit the budget → attribute, in three
vocabularies) is rewritten for speed from time to time (issue 40); these spans must come out of it
exactly as before: the same keys, the same values of the same types. The shapes include the span
layer benchmark's two- and 21-message model spans, content that triggers every redaction rule,
content past the budget, media, tool calls and results, a user redaction hook, and each vocabulary
alone. ``tests/span_attributes_pinned.json`` was recorded from the code before the rewrite;
``OTEL_AGENTS_PIN_ATTRIBUTES=record`` records it again (only for a deliberate change of output).
"""

from __future__ import annotations

import hashlib
import json
import os
import pathlib
from typing import Any, Callable

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

from otel_agents._spans import ChatMessage, Settings, Telemetry, Usage
from otel_agents._spans.messages import (BlobPart, FilePart, GenericPart, ReasoningPart, TextPart, ToolCallPart,
                                         ToolCallResponsePart, ToolDefinition, UriPart)
from otel_agents.semconv import Kind
from tests.spans import SnapshotExporter

PINNED = pathlib.Path(__file__).with_name("span_attributes_pinned.json")
_LONG = 800  # characters: a longer value is pinned by its hash

KEY = "sk-proj-" + "A1b2C3d4" * 4
JWT = "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.c2lnbmF0dXJl"

SHORT = [ChatMessage("system", "You are a terse weather assistant."),
         ChatMessage("user", "What is the weather in Paris?")]
LONG = [ChatMessage("system", "You are a support agent for an online shop. " * 10)] + [
    ChatMessage("user" if i % 2 == 0 else "assistant",
                f"Turn {i}: a question or an answer about the order status and the refund policy. " * 6)
    for i in range(20)]
ANSWER = [ChatMessage("assistant", "Sunny, 21 degrees.", finish_reason="stop")]

# Every rule of the redaction: secret shapes, secret-named keys in JSON text, repr, key=value and
# header lines, nested JSON in a JSON string, a dict argument with a secret key, a secret past the budget.
SECRETS = [
    ChatMessage("system", f"Use the key {KEY} and never show it. Authorization: Bearer abcdefgh12345678"),
    ChatMessage("user", 'Config: {"password": "hunter2", "user": "ann", "nested": "{\\"api_key\\": \\"zzz\\"}"}'),
    ChatMessage("assistant", None, tool_calls=[
        ToolCallPart("lookup_order", {"order_id": "B200", "api_key": "k-123", "note": f"token {JWT}"}, "call_1"),
        ToolCallPart("fetch", '{"url": "postgres://bob:s3cr3t@db:5432/x", "secret_token": "abc"}', "call_2")]),
    ChatMessage("tool", {"status": "shipped", "access_token": "tok-999", "items": [1, 2.5, None, True]},
                tool_call_id="call_1"),
    ChatMessage("tool", "{'password': 'pw-in-repr', 'ok': True}", tool_call_id="call_2"),
    ChatMessage("user", "password=letmein&user=bob\nx-api-key: abcdef123\nplain words " * 3),
    ChatMessage("user", "é ü — 日本語 " * 40 + "then a key " + KEY + " past the middle " + "tail " * 900),
    ChatMessage("user", "lone \udcff surrogate and a GitHub token ghp_" + "x" * 36),
]
SECRET_OUT = [ChatMessage("assistant", f"Here it is: {KEY}", finish_reason="end_turn"),
              ChatMessage("assistant", None, tool_calls=[ToolCallPart("refund", {"amount": 12.5, "pwd": "p"}, "c9")],
                          finish_reason="tool_calls")]

PARTS = [ChatMessage("user", parts=[
    TextPart("Describe this image"), BlobPart(b"\x89PNG\r\n\x1a\n" + bytes(range(40)), "image", "image/png"),
    UriPart("https://example.com/cat.png", "image", "image/png"), FilePart("file-abc", "document", "application/pdf"),
    BlobPart(b"x" * 5000, "audio", "audio/wav"), GenericPart("custom", {"value": 1, "secret": "s"}),
    ReasoningPart("thinking about it")], name="ann"),
    ChatMessage("assistant", parts=[ReasoningPart("hmm"), TextPart("A cat."), TextPart({"k": [1, 2]})])]
ORDER_SCHEMA = {"type": "object", "properties": {"id": {"type": "string"}}, "required": ["id"]}
TOOLS = [ToolDefinition("lookup_order", "Look an order up.", ORDER_SCHEMA),
         ToolDefinition("refund", None, None), ToolDefinition("search", "Search with token " + KEY)]


def _model(messages: list[ChatMessage], output: list[ChatMessage], **kw: Any) -> Callable[[Telemetry], None]:
    def run(telemetry: Telemetry) -> None:
        s = telemetry.start_span(Kind.MODEL, "fake-model", operation="chat")
        s.set_model(request_model="fake-model", provider="fake",
                    parameters={"temperature": 0.0, "max_tokens": 100, "stop": "END", "api_key": KEY})
        s.set_messages(input=messages, **kw)
        s.set_messages(output=output)
        s.set_usage(Usage(input_tokens=120, output_tokens=9, cache_read_tokens=3))
        s.end()
    return run


def _chain(telemetry: Telemetry) -> None:
    s = telemetry.start_span(Kind.CHAIN, "RunnableSequence")
    s.set_input({"q": "What is the weather in Paris?", "password": "pw", "n": float("nan")})
    s.set_output(f"Sunny, 21 degrees. {KEY}")
    s.end()


def _tool(telemetry: Telemetry) -> None:
    s = telemetry.start_span(Kind.TOOL, "get_weather")
    s.set_tool("get_weather", call_id="call_1", description="Current weather for a city.",
               arguments={"city": "Paris", "api_key": "abc", "deep": {"list": list(range(50))}})
    s.set_tool_result({"text": "Sunny, 21 degrees in Paris. " * 300, "token": "t"})
    s.end()


def _tool_text(telemetry: Telemetry) -> None:
    s = telemetry.start_span(Kind.TOOL, "run_sql")
    s.set_tool("run_sql", call_id="c2", arguments='{"query": "select 1", "password": "x"}')
    s.set_tool_result("ok " + KEY)
    s.end()


SHAPES: dict[str, Callable[[Telemetry], None]] = {
    "model_short": _model(SHORT, ANSWER),
    "model_long": _model(LONG, ANSWER),
    "model_secrets": _model(SECRETS, SECRET_OUT),
    "model_parts": _model(PARTS, ANSWER, system=["Be brief.", TextPart("Answer in French.")], tools=TOOLS),
    "chain": _chain,
    "tool": _tool,
    "tool_text": _tool_text,
}


def _hook(key: str, text: str) -> str:
    return text.replace("Paris", "[CITY]").replace("order", "[ORDER]")


CONFIGS: dict[str, dict[str, Any]] = {
    "default": {},
    "budget_300": {"max_content_length": 300},
    "hook": {"redact_hook": _hook},
    "media_0": {"max_media_bytes": 0},
    "gen_ai": {"vocabularies": "gen_ai"},
    "openinference": {"vocabularies": "openinference"},
    "langfuse": {"vocabularies": "langfuse"},
}


def _typed(value: Any, hashed: bool = True) -> Any:
    """An attribute value with its type kept (JSON has one number type, no tuples); a long string as
    its length, SHA-256 (of its UTF-8, lone surrogates escaped) and ends, to keep the file small."""
    if isinstance(value, tuple):
        return ["tuple", [_typed(v, hashed) for v in value]]
    if hashed and isinstance(value, str) and len(value) > _LONG:
        raw = _surrogates(value).encode("utf-8")
        return ["str", {"chars": len(value), "sha256": hashlib.sha256(raw).hexdigest(),
                        "head": value[:160], "tail": value[-160:]}]
    return [type(value).__name__, value]


def _record(hashed: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for config, kw in CONFIGS.items():
        for shape, make in SHAPES.items():
            exporter = SnapshotExporter()
            provider = TracerProvider()
            provider.add_span_processor(SimpleSpanProcessor(exporter))
            make(Telemetry(provider, settings=Settings(capture_content=True, **kw), framework="test"))
            provider.shutdown()
            (span,) = exporter.spans
            out[f"{config}/{shape}"] = {"name": span.name,
                                        "attributes": {k: _typed(v, hashed) for k, v in span.attributes.items()}}
    return out


def _surrogates(text: str) -> str:
    return text.encode("utf-8", "surrogatepass").decode("utf-8", "backslashreplace")


def test_every_attribute_is_as_pinned() -> None:
    actual = json.loads(_surrogates(json.dumps(_record(), ensure_ascii=False)))
    if os.environ.get("OTEL_AGENTS_PIN_ATTRIBUTES") == "record":
        PINNED.write_text(json.dumps(actual, ensure_ascii=False, indent=1, sort_keys=True) + "\n", encoding="utf-8")
        pytest.skip("recorded")
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    assert sorted(actual) == sorted(pinned)
    for case in pinned:
        assert actual[case]["name"] == pinned[case]["name"], case
        a, p = actual[case]["attributes"], pinned[case]["attributes"]
        assert sorted(a) == sorted(p), (case, sorted(set(a) ^ set(p)))
        for key in p:
            assert a[key] == p[key], (case, key)


def test_the_pinned_spans_exercise_redaction_budget_and_vocabularies() -> None:
    """The pinned set is worth pinning: secrets were redacted in it, values were cut, and each
    vocabulary alone wrote a different set of keys (a record of nothing would pin nothing)."""
    pinned = json.loads(PINNED.read_text(encoding="utf-8"))
    text = json.dumps(_record(hashed=False), ensure_ascii=False)
    assert "[REDACTED]" in text and KEY not in text and "hunter2" not in text and "tok-999" not in text
    assert pinned["budget_300/model_long"]["attributes"]["otel_agents.truncated"] == ["bool", True]
    assert "[CITY]" in json.dumps(pinned["hook/chain"])
    keys = {v: set(pinned[f"{v}/model_secrets"]["attributes"]) for v in ("gen_ai", "openinference", "langfuse")}
    assert len({frozenset(k) for k in keys.values()}) == 3
    assert len(pinned["default/model_long"]["attributes"]) > 40
