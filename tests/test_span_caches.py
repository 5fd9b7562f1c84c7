"""The span layer's caches of rendered content (:mod:`otel_agents._spans.memo`): a changed input gives
changed attributes, a secret in a cached input is still redacted, every setting the rendering depends
on is in the key, a redaction hook bypasses them, and their bounds hold."""

from __future__ import annotations

import itertools
import json

import pytest

from otel_agents._spans import ChatMessage, Settings, Telemetry
from otel_agents._spans import content, memo, model
from otel_agents._spans.messages import ReasoningPart, TextPart, ToolCallPart, ToolCallResponsePart, ToolDefinition
from otel_agents.semconv import attributes as A
from tests.spans import clear_content_caches

SECRET = "sk-proj-" + "A1b2C3d4E5f6G7h8J9k0" * 2
WEATHER = ToolDefinition("get_weather", "Current weather for a city.",
                         {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
SCHEMA_0 = f"{A.LLM_TOOLS}.0.{A.TOOL_JSON_SCHEMA}"


@pytest.fixture(autouse=True)
def _empty_caches():
    clear_content_caches()
    yield
    clear_content_caches()


def _model_span(exporter, settings: Settings | None = None, *, tools=None, parameters=None) -> dict:
    """The attributes of one model span offered ``tools`` and sent ``parameters``."""
    provider_ = exporter.provider
    t = Telemetry(provider_, settings=settings or Settings(capture_content=True), framework="test")
    s = t.start_span("model", "m", operation="chat")
    if parameters is not None:
        s.set_model(request_model="m", parameters=parameters)
    s.set_messages(input=[ChatMessage("user", "hi")], tools=tools)
    s.end()
    span = exporter.spans[-1]
    return dict(span.attributes)


@pytest.fixture
def spans(provider, exporter):
    exporter.provider = provider
    return exporter


def _tool_attrs(attrs: dict) -> dict:
    return {k: v for k, v in attrs.items() if k == A.GEN_AI_TOOL_DEFINITIONS or k.startswith(A.LLM_TOOLS + ".")}


# ------------------------------------------------------------------ tool definitions


def test_same_tools_are_rendered_once_and_alike(spans) -> None:
    first = _tool_attrs(_model_span(spans, tools=[WEATHER]))
    assert len(content._TOOLS) == 1
    second = _tool_attrs(_model_span(spans, tools=[ToolDefinition(WEATHER.name, WEATHER.description,
                                                                  json.loads(json.dumps(WEATHER.parameters)))]))
    assert len(content._TOOLS) == 1  # equal content (other objects): the same entry
    assert first == second
    assert json.loads(first[A.GEN_AI_TOOL_DEFINITIONS])[0]["parameters"] == WEATHER.parameters
    assert json.loads(first[SCHEMA_0])["function"]["name"] == "get_weather"


def test_changed_tools_give_changed_attributes(spans) -> None:
    _model_span(spans, tools=[WEATHER])
    changed = ToolDefinition("get_weather", "Current weather for a city.",
                             {"type": "object", "properties": {"town": {"type": "string"}}})
    attrs = _tool_attrs(_model_span(spans, tools=[changed]))
    assert json.loads(attrs[A.GEN_AI_TOOL_DEFINITIONS])[0]["parameters"] == changed.parameters
    assert json.loads(attrs[SCHEMA_0])["function"]["parameters"] == changed.parameters
    renamed = _tool_attrs(_model_span(spans, tools=[ToolDefinition("get_forecast", WEATHER.description,
                                                                   WEATHER.parameters)]))
    assert json.loads(renamed[SCHEMA_0])["function"]["name"] == "get_forecast"
    two = _tool_attrs(_model_span(spans, tools=[WEATHER, changed]))
    assert len(json.loads(two[A.GEN_AI_TOOL_DEFINITIONS])) == 2 and f"{A.LLM_TOOLS}.1.{A.TOOL_JSON_SCHEMA}" in two


# Pairs of tool lists that differ in one part of their cache key (content._tools_key): each renders otherwise.
TOOL_KEY_PARTS = {
    "type": ([WEATHER], [ToolDefinition(WEATHER.name, WEATHER.description, WEATHER.parameters, "hosted")]),
    "name": ([WEATHER], [ToolDefinition("get_forecast", WEATHER.description, WEATHER.parameters)]),
    "description": ([WEATHER], [ToolDefinition(WEATHER.name, "Weather now.", WEATHER.parameters)]),
    "parameters": ([WEATHER], [ToolDefinition(WEATHER.name, WEATHER.description, {"type": "object"})]),
    "parameters or none": ([ToolDefinition("f", "d", {})], [ToolDefinition("f", "d", None)]),
    "order": ([WEATHER, ToolDefinition("f")], [ToolDefinition("f"), WEATHER]),
    "number": ([WEATHER], [WEATHER, WEATHER]),
    "which tool's parameters": ([ToolDefinition("f", None, {"a": 1}), ToolDefinition("g", None, {"b": 2})],
                                [ToolDefinition("f", None, {"b": 2}), ToolDefinition("g", None, {"a": 1})]),
}


@pytest.mark.parametrize("part", list(TOOL_KEY_PARTS))
def test_each_part_of_a_tools_key_changes_the_rendering(spans, part: str) -> None:
    first, second = TOOL_KEY_PARTS[part]
    alone = _tool_attrs(_model_span(spans, tools=second))
    content._TOOLS.clear()
    assert _tool_attrs(_model_span(spans, tools=first)) != alone
    assert _tool_attrs(_model_span(spans, tools=second)) == alone


def test_a_secret_in_cached_tools_is_still_redacted(spans) -> None:
    leaky = ToolDefinition("call_api", f"Calls the API with {SECRET}.",
                           {"type": "object", "properties": {"api_key": "hunter2-hunter2"},
                            "default": {"token": "abcdefgh12345678"}})
    for _ in range(3):  # a miss, then hits
        attrs = _tool_attrs(_model_span(spans, tools=[leaky]))
        text = json.dumps(attrs)
        assert SECRET not in text and "hunter2" not in text and "abcdefgh12345678" not in text
        assert "[REDACTED]" in attrs[A.GEN_AI_TOOL_DEFINITIONS] and "[REDACTED]" in attrs[SCHEMA_0]
    assert len(content._TOOLS) == 1


def test_budget_and_vocabularies_are_in_the_tools_key(spans) -> None:
    long_tool = ToolDefinition("search", "Searches the catalogue. " * 20, WEATHER.parameters)
    full = _tool_attrs(_model_span(spans, tools=[long_tool]))
    cut = _tool_attrs(_model_span(spans, Settings(capture_content=True, max_content_length=200), tools=[long_tool]))
    assert len(full[A.GEN_AI_TOOL_DEFINITIONS]) > 200 >= len(cut[A.GEN_AI_TOOL_DEFINITIONS])
    genai = _tool_attrs(_model_span(spans, Settings(capture_content=True, vocabularies="gen_ai"), tools=[long_tool]))
    assert set(genai) == {A.GEN_AI_TOOL_DEFINITIONS}
    assert SCHEMA_0 in _tool_attrs(_model_span(spans, tools=[long_tool]))
    oi = _tool_attrs(_model_span(spans, Settings(capture_content=True, vocabularies="openinference"),
                                 tools=[long_tool]))
    assert set(oi) == {SCHEMA_0}


def test_a_redaction_hook_bypasses_the_tools_cache(spans) -> None:
    calls = itertools.count()

    def hook(key: str, text: str) -> str:  # not deterministic: a cache would freeze its first answer
        return text.replace("city", f"place{next(calls)}")

    settings = Settings(capture_content=True, redact_hook=hook)
    first = _tool_attrs(_model_span(spans, settings, tools=[WEATHER]))
    second = _tool_attrs(_model_span(spans, settings, tools=[WEATHER]))
    assert first[SCHEMA_0] != second[SCHEMA_0] and "place" in second[SCHEMA_0]
    assert len(content._TOOLS) == 0


def test_tools_that_are_not_plain_json_are_rendered_each_time(spans) -> None:
    class Schema(dict):
        pass

    odd = ToolDefinition("f", None, Schema(type="object", properties={"x": {"default": float("nan")}}))
    attrs = _tool_attrs(_model_span(spans, tools=[odd]))
    assert json.loads(attrs[A.GEN_AI_TOOL_DEFINITIONS])[0]["parameters"]["properties"]["x"]["default"] == "nan"
    nan = ToolDefinition("f", None, {"type": "object", "default": float("nan")})
    none = ToolDefinition("f", None, {"type": "object", "default": None})
    assert json.loads(_tool_attrs(_model_span(spans, tools=[nan]))[SCHEMA_0])["function"]["parameters"]["default"] \
        == "nan"
    assert json.loads(_tool_attrs(_model_span(spans, tools=[none]))[SCHEMA_0])["function"]["parameters"]["default"] \
        is None
    assert len(content._TOOLS) == 1  # only the plain one (None) is kept


def test_the_tools_cache_is_bounded(spans) -> None:
    for i in range(content._TOOLS.entries + 10):
        attrs = _tool_attrs(_model_span(spans, tools=[ToolDefinition(f"tool_{i}", "d", WEATHER.parameters)]))
        assert json.loads(attrs[SCHEMA_0])["function"]["name"] == f"tool_{i}"
    assert len(content._TOOLS) == content._TOOLS.entries
    huge = ToolDefinition("big", "x" * (content._TOOLS_KEY_BYTES + 1))
    content._TOOLS.clear()
    _model_span(spans, tools=[huge])
    assert len(content._TOOLS) == 0  # past the key bound: rendered, not kept


# ------------------------------------------------------------------ conversation history


def _turn(order: str, status: str, secret: str = "") -> list[ChatMessage]:
    """An agent loop's turn: a tool call and its result (messages that are not one text)."""
    return [ChatMessage("assistant", None, tool_calls=[ToolCallPart("lookup", {"order": order, "key": secret or None},
                                                                    "call_1")]),
            ChatMessage("tool", {"order": order, "status": status, "note": f"paid with {secret}"},
                        tool_call_id="call_1")]


def _history(spans, messages: list[ChatMessage], settings: Settings | None = None) -> dict:
    t = Telemetry(spans.provider, settings=settings or Settings(capture_content=True), framework="test")
    s = t.start_span("model", "m", operation="chat")
    s.set_messages(input=messages)
    s.end()
    return dict(spans.spans[-1].attributes)


def _messages_of(attrs: dict) -> list:
    return json.loads(attrs[A.GEN_AI_INPUT_MESSAGES])


def test_earlier_messages_are_rendered_once_and_alike(spans) -> None:
    question = ChatMessage("user", "Where is order 7?")
    first = _history(spans, [question, *_turn("7", "shipped")])
    assert len(content._MESSAGES) == len(content._FLAT) == 2  # the tool call and result (one text: other caches)
    again = _history(spans, [question, *_turn("7", "shipped"), ChatMessage("user", "thanks")])
    assert len(content._MESSAGES) == len(content._FLAT) == 2
    assert _messages_of(again)[:3] == _messages_of(first)
    assert {k: v for k, v in again.items() if k.startswith(f"{A.LLM_INPUT_MESSAGES}.1.")} == \
        {k: v for k, v in first.items() if k.startswith(f"{A.LLM_INPUT_MESSAGES}.1.")}
    call = _messages_of(first)[1]["parts"][0]
    assert call == {"type": "tool_call", "id": "call_1", "name": "lookup", "arguments": {"order": "7", "key": None}}


def test_changed_messages_give_changed_attributes(spans) -> None:
    _history(spans, _turn("7", "shipped"))
    changed_attrs = _history(spans, _turn("7", "lost"))
    changed = _messages_of(changed_attrs)
    assert changed[1]["parts"][0]["response"]["status"] == "lost"
    assert json.loads(changed_attrs[f"{A.LLM_INPUT_MESSAGES}.1.{A.MESSAGE_CONTENT}"])["status"] == "lost"
    assert changed_attrs[f"{A.LLM_INPUT_MESSAGES}.1.{A.MESSAGE_TOOL_CALL_ID}"] == "call_1"
    other_id = _turn("7", "lost")
    other_id[1].parts[0] = type(other_id[1].parts[0])(other_id[1].parts[0].response, "call_2")
    assert _messages_of(_history(spans, other_id))[1]["parts"][0]["id"] == "call_2"
    no_id = [ChatMessage("assistant", None, tool_calls=[ToolCallPart("lookup", {"order": "7"}, None)])]
    empty_id = [ChatMessage("assistant", None, tool_calls=[ToolCallPart("lookup", {"order": "7"}, "")])]
    assert _messages_of(_history(spans, no_id))[0]["parts"][0]["id"] is None
    assert _messages_of(_history(spans, empty_id))[0]["parts"][0]["id"] == ""
    nan = [ChatMessage("tool", {"x": float("nan")}, tool_call_id="c")]
    none = [ChatMessage("tool", {"x": None}, tool_call_id="c")]
    assert _messages_of(_history(spans, none))[0]["parts"][0]["response"] == {"x": None}
    assert _messages_of(_history(spans, nan))[0]["parts"][0]["response"] == {"x": "nan"}


def test_a_secret_in_cached_messages_is_still_redacted(spans) -> None:
    for _ in range(3):
        attrs = _history(spans, _turn("7", "shipped", SECRET))
        text = json.dumps(attrs)
        assert SECRET not in text and text.count("[REDACTED]") >= 4  # GenAI, OpenInference, input.value


def test_budget_and_hook_apply_to_cached_messages(spans) -> None:
    long_turn = _turn("7", "shipped " * 100)
    full = _history(spans, long_turn)
    cut = _history(spans, long_turn, Settings(capture_content=True, max_content_length=300))
    assert len(full[A.GEN_AI_INPUT_MESSAGES]) > 300 >= len(cut[A.GEN_AI_INPUT_MESSAGES])
    assert cut.get(A.OTEL_AGENTS_TRUNCATED) is True
    oi_result = f"{A.LLM_INPUT_MESSAGES}.1.{A.MESSAGE_CONTENT}"
    assert len(full[oi_result]) > 300 >= len(cut[oi_result])
    small = Settings(capture_content=True, max_content_length=300)
    only_oi = _history(spans, [ChatMessage("user", "hi"), *long_turn], small)  # a hit of _FLAT: still flagged
    assert only_oi[f"{A.LLM_INPUT_MESSAGES}.2.{A.MESSAGE_CONTENT}"] == cut[oi_result]
    assert only_oi.get(A.OTEL_AGENTS_TRUNCATED) is True
    calls = itertools.count()
    hooked = Settings(capture_content=True, redact_hook=lambda key, text: text.replace("shipped", f"S{next(calls)}"))
    first, second = _history(spans, long_turn, hooked), _history(spans, long_turn, hooked)
    result = f"{A.LLM_INPUT_MESSAGES}.1.{A.MESSAGE_CONTENT}"
    for key in (A.GEN_AI_INPUT_MESSAGES, result):  # the hook ran again for each span, on each attribute
        assert first[key] != second[key] and "shipped" not in second[key]


def test_text_messages_cache_changed_secret_budget_bound(spans) -> None:
    said = f"My key is {SECRET}, please store it. " * 3
    for _ in range(2):
        attrs = _history(spans, [ChatMessage("user", said), ChatMessage("assistant", "Stored.")])
        assert SECRET not in json.dumps(attrs) and "[REDACTED]" in attrs[f"{A.LLM_INPUT_MESSAGES}.0.{A.MESSAGE_CONTENT}"]
        assert _messages_of(attrs)[1] == {"role": "assistant", "parts": [{"type": "text", "content": "Stored."}]}
    assert content._text_message.cache_info().hits >= 2
    assert _messages_of(_history(spans, [ChatMessage("user", "Stored!")]))[0]["parts"][0]["content"] == "Stored!"
    assert json.loads(_history(spans, [ChatMessage("system", "Stored.")])[A.INPUT_VALUE])[0]["role"] == "system"
    long_text = "word " * 100
    cut = _history(spans, [ChatMessage("user", long_text)], Settings(capture_content=True, max_content_length=100))
    assert cut[f"{A.LLM_INPUT_MESSAGES}.0.{A.MESSAGE_CONTENT}"].endswith("…") and cut[A.OTEL_AGENTS_TRUNCATED]
    assert _history(spans, [ChatMessage("user", long_text)])[f"{A.LLM_INPUT_MESSAGES}.0.{A.MESSAGE_CONTENT}"] \
        == long_text
    for i in range(140):
        _history(spans, [ChatMessage("user", f"question {i}")])
    assert content._text_message.cache_info().currsize == content._text_message.cache_info().maxsize == 128


def test_system_instructions_cache_changed_secret_budget_bound(spans) -> None:
    def instructions(prompt: str, settings: Settings | None = None) -> object:
        attrs = _history(spans, [ChatMessage("system", prompt), ChatMessage("user", "hi")], settings)
        return json.loads(attrs[A.GEN_AI_SYSTEM_INSTRUCTIONS])

    for _ in range(2):
        assert instructions("Be brief.") == [{"type": "text", "content": "Be brief."}]
    assert content._instructions_json.cache_info().hits >= 1
    assert instructions("Be thorough.") == [{"type": "text", "content": "Be thorough."}]
    leaky = f"Use the key {SECRET} for the API."
    for _ in range(2):
        assert instructions(leaky) == [{"type": "text", "content": "Use the key [REDACTED] for the API."}]
    long_prompt = "Always answer politely. " * 20
    cut = _history(spans, [ChatMessage("system", long_prompt)], Settings(capture_content=True, max_content_length=100))
    assert len(cut[A.GEN_AI_SYSTEM_INSTRUCTIONS]) <= 100 and cut[A.OTEL_AGENTS_TRUNCATED] is True
    assert json.loads(cut[A.GEN_AI_SYSTEM_INSTRUCTIONS])[0]["content"].endswith("…")
    hooked = Settings(capture_content=True, redact_hook=lambda key, text: text.replace("polite", "rude"))
    assert "rudely" in _history(spans, [ChatMessage("system", long_prompt)], hooked)[A.GEN_AI_SYSTEM_INSTRUCTIONS]
    for i in range(40):
        assert instructions(f"Rule {i}.")[0]["content"] == f"Rule {i}."
    assert content._instructions_json.cache_info().currsize == content._instructions_json.cache_info().maxsize


def test_the_message_cache_is_bounded(spans) -> None:
    for i in range(content._MESSAGES.entries // 2 + 10):
        assert _messages_of(_history(spans, _turn(str(i), "ok")))[1]["parts"][0]["response"]["order"] == str(i)
    assert len(content._MESSAGES) == content._MESSAGES.entries and len(content._FLAT) == content._FLAT.entries
    content._MESSAGES.clear()
    _history(spans, _turn("7", "x" * content._MESSAGE_KEY_BYTES))
    assert len(content._MESSAGES) == 1  # the tool call only: the result is past the key bound


def _call(name: str = "lookup", arguments: object = None, call_id: str | None = "call_1") -> ToolCallPart:
    return ToolCallPart(name, {"order": "7"} if arguments is None else arguments, call_id)


def _result(response: object = "shipped", call_id: str | None = "call_1") -> ToolCallResponsePart:
    return ToolCallResponsePart(response, call_id)


# Pairs of messages that differ in one part of their cache key (content._message_key, plus the scan limit or
# the budget the caches add): each renders otherwise, so a key without that part serves the second message the
# first one's rendering. Multi-part or non-text messages: one text takes other caches.
KEY_PARTS = {
    "role": (ChatMessage("assistant", parts=[_call()]), ChatMessage("user", parts=[_call()])),
    "name": (ChatMessage("assistant", parts=[_call()], name="ana"), ChatMessage("assistant", parts=[_call()], name="bo")),
    "part type": (ChatMessage("assistant", parts=[TextPart("hmm"), _call()]),
                  ChatMessage("assistant", parts=[ReasoningPart("hmm"), _call()])),
    "text": (ChatMessage("assistant", parts=[TextPart("hmm"), _call()]),
             ChatMessage("assistant", parts=[TextPart("aha"), _call()])),
    "tool name": (ChatMessage("assistant", parts=[_call("lookup")]), ChatMessage("assistant", parts=[_call("cancel")])),
    "arguments": (ChatMessage("assistant", parts=[_call(arguments={"order": "7"})]),
                  ChatMessage("assistant", parts=[_call(arguments={"order": "8"})])),
    "arguments as text or data": (ChatMessage("assistant", parts=[_call(arguments='{"order":"7"}')]),
                                  ChatMessage("assistant", parts=[_call(arguments={"order": "7"})])),
    "call id": (ChatMessage("assistant", parts=[_call(call_id="call_1")]),
                ChatMessage("assistant", parts=[_call(call_id="call_2")])),
    "result": (ChatMessage("tool", parts=[_result("shipped")]), ChatMessage("tool", parts=[_result("lost")])),
    "result's call id": (ChatMessage("tool", parts=[_result(call_id="call_1")]),
                         ChatMessage("tool", parts=[_result(call_id=None)])),
    "parts' order": (ChatMessage("assistant", parts=[TextPart("hmm"), _call()]),
                     ChatMessage("assistant", parts=[_call(), TextPart("hmm")])),
    "number of parts": (ChatMessage("assistant", parts=[_call()]), ChatMessage("assistant", parts=[_call(), _call()])),
}


@pytest.mark.parametrize("part", list(KEY_PARTS))
def test_each_part_of_a_message_key_changes_the_rendering(spans, part: str) -> None:
    first, second = KEY_PARTS[part]
    alone = _history(spans, [ChatMessage("user", "hi"), second])
    content._MESSAGES.clear()
    content._FLAT.clear()
    _history(spans, [ChatMessage("user", "hi"), first])  # warms both caches with the first message
    after = _history(spans, [ChatMessage("user", "hi"), second])
    assert after[A.GEN_AI_INPUT_MESSAGES] != _history(spans, [ChatMessage("user", "hi"), first])[A.GEN_AI_INPUT_MESSAGES]
    assert after == alone  # GenAI JSON, input.value and the OpenInference attributes alike


def test_the_budget_is_in_the_openinference_message_key(spans) -> None:
    long_result = [ChatMessage("user", "hi"), ChatMessage("tool", parts=[_result("shipped " * 40)])]
    small = Settings(capture_content=True, max_content_length=240)
    alone = _history(spans, long_result, small)
    content._MESSAGES.clear()
    content._FLAT.clear()
    _history(spans, long_result, Settings(capture_content=True, max_content_length=100))  # cut further
    assert _history(spans, long_result, small) == alone


def test_the_scan_limit_is_in_the_genai_message_key(spans) -> None:
    # The budget cuts what is written whatever the scan limit (budget + margin) cut before; a redaction hook
    # sees the text before that cut: here, its length.
    def length(key: str, text: str) -> str:
        return str(len(text)) if key == A.GEN_AI_INPUT_MESSAGES else text

    long_result = [ChatMessage("user", "hi"), ChatMessage("tool", parts=[_result("shipped " * 100)])]

    def seen(budget: int) -> str:
        settings = Settings(capture_content=True, max_content_length=budget, redact_hook=length)
        return _history(spans, long_result, settings)[A.GEN_AI_INPUT_MESSAGES]

    alone = seen(300)
    content._MESSAGES.clear()
    assert seen(100) != alone
    assert seen(300) == alone


# ------------------------------------------------------------------ request parameters


def test_parameters_cache_changed_secret_budget_bound(spans) -> None:
    def params_of(attrs: dict) -> dict:
        return json.loads(attrs[A.LLM_INVOCATION_PARAMETERS])

    assert params_of(_model_span(spans, parameters={"temperature": 0.5}))["temperature"] == 0.5
    assert params_of(_model_span(spans, parameters={"temperature": 0.5}))["temperature"] == 0.5
    assert len(model._PARAMETERS) == 1
    assert params_of(_model_span(spans, parameters={"temperature": 0.7}))["temperature"] == 0.7
    for _ in range(2):
        sent = params_of(_model_span(spans, parameters={"api_key": "hunter2-hunter2", "user": SECRET}))
        assert sent == {"api_key": "[REDACTED]", "user": "[REDACTED]"}
    long_stop = {"stop": "y" * 300}
    assert len(params_of(_model_span(spans, parameters=long_stop))["stop"]) == 300
    assert len(params_of(_model_span(spans, Settings(capture_content=True, max_content_length=100),
                                     parameters=long_stop))["stop"]) == 100
    for i in range(model._PARAMETERS.entries + 5):
        assert params_of(_model_span(spans, parameters={"seed": i}))["seed"] == i
    assert len(model._PARAMETERS) == model._PARAMETERS.entries


# ------------------------------------------------------------------ the memo itself


def test_json_key_is_none_for_what_is_not_plain_json() -> None:
    class Text(str):
        pass

    assert memo.json_key({"a": [1, 2.5, True, None, "x"]}, 100) == b'{"a":[1,2.5,true,null,"x"]}'
    for value in (Text("x"), {"a": float("nan")}, {"a": float("inf")}, {1: 2}, 2 ** 70, object(), {"a": b"x"}):
        assert memo.json_key(value, 100) is None
    assert memo.json_key("x" * 50, 10) is None


def test_memo_drops_the_least_recently_used() -> None:
    m: memo.Memo[str] = memo.Memo(2)
    m.put("a", "1")
    m.put("b", "2")
    assert m.get("a") == "1"  # now the most recent
    m.put("c", "3")
    assert m.get("b") is None and m.get("a") == "1" and m.get("c") == "3" and len(m) == 2


def test_a_label_made_before_is_written_without_a_call(provider, exporter, monkeypatch) -> None:
    """``set_attributes`` takes a value's label from :data:`~otel_agents._spans.pipeline.LABELS` when it was made
    before (no call into ``label``); what it writes is ``label``'s, a secret in the value redacted either way."""
    from otel_agents._spans import pipeline

    t = Telemetry(provider, settings=Settings(capture_content=True), framework="test")
    values = {"app.model": "gpt-4o-mini-2024", "app.key": f"key={SECRET}"}
    first = t.start_span("chain", "c")
    first.set_attributes(values)
    first.end()
    calls: list[str] = []
    real = pipeline.label
    monkeypatch.setattr(pipeline, "label", lambda text: (calls.append(text), real(text))[1])
    second = t.start_span("chain", "c")
    second.set_attributes(values)
    second.end()
    assert not set(calls) & set(values.values())  # (the span's name is labelled as it starts)
    for span in exporter.spans[-2:]:
        assert span.attributes["app.model"] == "gpt-4o-mini-2024"
        assert SECRET not in span.attributes["app.key"] and span.attributes["app.key"] == real(values["app.key"])


def test_a_short_label_and_a_start_attribute_made_before_are_written_without_a_call(provider, exporter,
                                                                                   monkeypatch) -> None:
    """A value shorter than any redaction rule (a model name such as ``gpt-4o``, an operation) is kept in
    :data:`~otel_agents._spans.pipeline.LABELS` too, and a start attribute's string (``otel_value``: run attributes,
    a span's ``attributes=``) is looked up there first: the second span calls ``label`` for neither; what is written
    is ``label``'s (a non-ASCII short value made UTF-8-safe, a secret redacted)."""
    from otel_agents._spans import pipeline

    t = Telemetry(provider, settings=Settings(capture_content=False), framework="test")
    values = {"app.model": "gpt-4o", "app.op": "chat", "app.lone": "a\ud800b"}
    start = {"app.session": "s-1", "app.key": f"key={SECRET}"}
    first = t.start_span("chain", "c", attributes=start)
    first.set_attributes(values)
    first.end()
    calls: list[str] = []
    real = pipeline.label
    monkeypatch.setattr(pipeline, "label", lambda text: (calls.append(text), real(text))[1])
    second = t.start_span("chain", "c", attributes=start)
    second.set_attributes(values)
    second.end()
    assert not set(calls) & {*values.values(), *start.values()}
    for span in exporter.spans[-2:]:
        assert [span.attributes[k] for k in ("app.model", "app.op", "app.session")] == ["gpt-4o", "chat", "s-1"]
        assert span.attributes["app.lone"] == real("a\ud800b") != "a\ud800b"
        assert SECRET not in span.attributes["app.key"] and span.attributes["app.key"] == real(start["app.key"])


def test_the_label_memo_is_bounded_and_keeps_exact_strings_only(monkeypatch) -> None:
    from otel_agents._spans import pipeline

    class Text(str):
        pass

    monkeypatch.setattr(pipeline, "LABELS", {})
    monkeypatch.setattr(pipeline, "_LABELS_MAX", 3)
    assert pipeline.label(Text("a subclass's text")) == "a subclass's text"
    assert pipeline.LABELS == {}  # a subclass's __hash__/__eq__ are never asked
    for i in range(7):
        pipeline.label(f"label number {i}")
    assert 0 < len(pipeline.LABELS) <= 3
    assert pipeline.label("x" * 300) == "x" * 300 and "x" * 300 not in pipeline.LABELS  # past the cached length
