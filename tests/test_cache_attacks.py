"""Attacks on the span layer's content caches (``_spans/content.py``: ``_MESSAGES``, ``_FLAT``, ``_TOOLS``,
``_text_message``, ``_instructions_json``): for each, a span rendered after another span warmed the caches
must carry exactly the attributes it carries when rendered with every cache empty. Inputs: twins in JSON of
other Python types, settings changed between spans (budget, media, vocabularies, content capture, a redaction
hook, the environment), secrets in system prompts, texts at the caches' size bounds, messages changed in place
after a first rendering, and many threads at once."""

from __future__ import annotations

import concurrent.futures
import decimal
import enum
import itertools
import json
import random
import sys
import uuid

import pytest

from otel_agents._spans import ChatMessage, Settings, Telemetry, content
from otel_agents._spans.messages import ReasoningPart, TextPart, ToolCallPart, ToolCallResponsePart, ToolDefinition
from otel_agents.semconv import attributes as A
from tests.spans import ModelSpans, attribute_diff as _diff, clear_content_caches

SECRET = "sk-proj-" + "Z9y8X7w6V5u4T3s2R1q0" * 2


class _Spans(ModelSpans):
    def render(self, messages: list | None = None, *, system: list | None = None, tools: list | None = None,
               settings: Settings | None = None) -> dict:
        return super().render(settings or Settings(capture_content=True),
                              lambda s: s.set_messages(input=messages, system=system, tools=tools))


@pytest.fixture
def spans():
    with _Spans() as s:
        yield s


def _every_pair_served_as_with_empty_caches(cases: list, render_args) -> None:
    """For each ordered pair ``(i, j)`` of ``cases`` (``i != j``), the span of ``render_args(cases[j])`` (render
    keyword arguments) rendered right after ``render_args(cases[i])`` carries what it carries with empty caches, a
    fresh :class:`_Spans` a pair; fails naming every pair that differs. One test for all the pairs of a group: a
    test each (thousands) cost the suite ~15 s of CPU in pytest's own bookkeeping."""
    failed = []
    for i, j in itertools.permutations(range(len(cases)), 2):
        with _Spans() as spans:
            warm, cold = _served_after(spans, render_args(cases[i]), render_args(cases[j]))
        if warm != cold or SECRET in json.dumps(warm):
            failed.append(f"{i} then {j} ({cases[i]!r} then {cases[j]!r}): {_diff(warm, cold)}")
    assert not failed, "\n".join(failed)


def _served_after(spans: _Spans, first: dict, then: dict) -> tuple[dict, dict]:
    """``then``'s attributes rendered right after ``first`` (render keyword arguments), and with empty caches."""
    clear_content_caches()
    cold = spans.render(**then)
    clear_content_caches()
    spans.render(**first)
    return spans.render(**then), cold


# ------------------------------------------------------------------ twins in JSON, other Python types


class Colour(enum.Enum):
    ONE = 1
    X = "x"
    LIST = (1, 2)


class Level(enum.IntEnum):
    ONE = 1


class Word(str, enum.Enum):
    X = "x"


class Text(str):
    pass


class Number(int):
    pass


# Values each pair of which is one JSON text for orjson or for str() (and may render otherwise): a key that
# confuses two of them serves one the other's rendering.
TWINS = {
    "one": ["1", 1, 1.0, True, Level.ONE, Colour.ONE, Number(1), decimal.Decimal("1"), [1], (1,)],
    "x": ["x", Word.X, Colour.X, Text("x"), b"x", ["x"], ("x",), '"x"', {"x": None}],
    "null": [None, "null", float("nan"), float("inf"), {}, [], "", [None], [float("nan")], {"a": float("nan")},
             {"a": None}, "None", b"null"],
    "pair": [[1, 2], (1, 2), Colour.LIST, "[1,2]", "[1, 2]", {"a": 1, "b": 2}, {"b": 2, "a": 1}],
    "float": [0.0, -0.0, 0, False, 1e16, 10 ** 16, 1e-05, 0.00001, 2 ** 70, str(2 ** 70), 2 ** 63 - 1, 2.0 ** 63],
    "id": [uuid.UUID(int=7), str(uuid.UUID(int=7)), decimal.Decimal("7"), "7", 7],
    "secret": [SECRET, {"api_key": "hunter2hunter2"}, {"api_key": None}, {"apiKey": "x"}, [SECRET], f"key={SECRET}",
               {"note": SECRET}, {"note": f"'password': 'pw-{SECRET}'"}],
}

# Where a value goes: the data fields of the parts a message key covers (a message that is not one text).
SLOTS = {
    "text of two": lambda v: ChatMessage("user", parts=[TextPart(v), TextPart("and")]),
    "reasoning": lambda v: ChatMessage("assistant", parts=[ReasoningPart(v), TextPart("so")]),
    "arguments": lambda v: ChatMessage("assistant", parts=[ToolCallPart("lookup", v, "call_1")]),
    "result": lambda v: ChatMessage("tool", parts=[ToolCallResponsePart(v, "call_1")]),
    "one text": lambda v: ChatMessage("user", parts=[TextPart(v)]),
    "system": lambda v: ChatMessage("system", parts=[TextPart(v)]),
}

@pytest.mark.parametrize(("slot", "group"), [(slot, group) for slot in SLOTS for group in TWINS])
def test_a_twin_of_other_type_is_not_served_the_others_rendering(slot: str, group: str) -> None:
    """Every ordered pair of the group's values, in the slot (and no secret shown)."""
    hi = ChatMessage("user", "hi")
    _every_pair_served_as_with_empty_caches(TWINS[group], lambda v: {"messages": [hi, SLOTS[slot](v)]})


# Labels (role, name, finish reason, tool name, call id): a str, an enum member of that value, a str subclass.
LABEL_TWINS = ["x", Word.X, Colour.X, Text("x"), None, ""]
LABELS = {
    "role": lambda v: ChatMessage(v, parts=[ToolCallPart("lookup", {"a": 1}, "call_1")]),
    "name": lambda v: ChatMessage("assistant", parts=[ToolCallPart("lookup", {"a": 1}, "call_1")], name=v),
    "reason": lambda v: ChatMessage("assistant", parts=[ToolCallPart("lookup", {"a": 1}, "call_1")], finish_reason=v),
    "tool name": lambda v: ChatMessage("assistant", parts=[ToolCallPart(v, {"a": 1}, "call_1")]),
    "call id": lambda v: ChatMessage("assistant", parts=[ToolCallPart("lookup", {"a": 1}, v)]),
    "result id": lambda v: ChatMessage("tool", parts=[ToolCallResponsePart("ok", v)]),
}


@pytest.mark.parametrize("label", LABELS)
def test_a_label_twin_is_not_served_the_others_rendering(label: str) -> None:
    """Every ordered pair of the label twins, in the label."""
    _every_pair_served_as_with_empty_caches(LABEL_TWINS, lambda v: {"messages": [LABELS[label](v)]})


TOOL_TWINS = [
    ToolDefinition("f", "d", {"type": "object", "default": 1}),
    ToolDefinition("f", "d", {"type": "object", "default": True}),
    ToolDefinition("f", "d", {"type": "object", "default": 1.0}),
    ToolDefinition("f", "d", {"type": "object", "default": Level.ONE}),
    ToolDefinition("f", "d", {"type": "object", "default": (1,)}),
    ToolDefinition("f", "d", {"type": "object", "default": [1]}),
    ToolDefinition("f", "d", {"default": [1], "type": "object"}),
    ToolDefinition("f", "d", {"type": "object", "default": None}),
    ToolDefinition("f", "d", {"type": "object", "default": float("nan")}),
    ToolDefinition("f", "d", {"type": "object"}),
    ToolDefinition("f", "d", {}),
    ToolDefinition("f", "d", None),
    ToolDefinition("f", "", None),
    ToolDefinition("f", None, None),
    ToolDefinition("f", Word.X, None),
    ToolDefinition("f", "x", None),
    ToolDefinition("f", Text("x"), None),
    ToolDefinition(Text("f"), "x", None),
    ToolDefinition("f", "x", None, Text("function")),
    ToolDefinition("f", "x", {"api_key": "hunter2hunter2"}),
]


def test_a_tools_twin_is_not_served_the_others_rendering() -> None:
    """Every ordered pair of the tool definitions."""
    hi = [ChatMessage("user", "hi")]
    _every_pair_served_as_with_empty_caches(TOOL_TWINS, lambda tool: {"messages": hi, "tools": [tool]})


# ------------------------------------------------------------------ JSON twins the key cannot tell apart


class Labelled(str, enum.Enum):
    """A str enum whose value is not its text (a custom ``__new__``, as the enum docs show): a str to the
    redaction (which renders its text), its value to orjson (which makes the cache key)."""

    def __new__(cls, text: str, value: str) -> "Labelled":
        member = str.__new__(cls, text)
        member._value_ = value
        return member

    SHOWN = ("shown text", "other text")


class Plain(enum.Enum):
    OTHER = "other text"


@pytest.mark.parametrize("slot", ["arguments", "result", "text of two"])
def test_a_str_enum_whose_value_is_not_its_text_is_not_served_its_values_rendering(spans, slot: str) -> None:
    make = SLOTS[slot]
    warm, cold = _served_after(spans, {"messages": [make(Plain.OTHER)]}, {"messages": [make(Labelled.SHOWN)]})
    assert "shown text" in cold[A.GEN_AI_INPUT_MESSAGES]
    assert warm == cold, _diff(warm, cold)


@pytest.mark.parametrize("slot", ["arguments", "result", "text of two"])
def test_an_orjson_fragment_is_not_served_its_jsons_rendering(spans, slot: str) -> None:
    orjson = pytest.importorskip("orjson")
    make = SLOTS[slot]
    warm, cold = _served_after(spans, {"messages": [make([1, 2])]}, {"messages": [make(orjson.Fragment(b"[1,2]"))]})
    assert warm == cold, _diff(warm, cold)


# ------------------------------------------------------------------ settings changed between spans

TURN = [ChatMessage("system", "You are terse. " * 30), ChatMessage("user", "Where is order 7? " * 20),
        ChatMessage("assistant", parts=[TextPart("Let me look. " * 10),
                                        ToolCallPart("lookup", {"order": "7", "note": "n " * 150}, "call_1")]),
        ChatMessage("tool", parts=[ToolCallResponsePart({"status": "shipped " * 60, "api_key": "k-1"}, "call_1")]),
        ChatMessage("assistant", parts=[ReasoningPart("hmm " * 50), TextPart("Shipped.")], finish_reason="stop")]
TOOLS = [ToolDefinition("lookup", "Looks an order up. " * 20, {"type": "object", "properties": {"order": {}}})]


def _mark(key: str, text: str) -> str:
    return text.replace("shipped", "SHIPPED")


def _mark2(key: str, text: str) -> str:
    return text.replace("order", "ORDER")


SETTINGS = {
    "default": Settings(capture_content=True),
    "budget 64": Settings(capture_content=True, max_content_length=64),
    "budget 300": Settings(capture_content=True, max_content_length=300),
    "budget 301": Settings(capture_content=True, max_content_length=301),
    "budget big": Settings(capture_content=True, max_content_length=100_000),
    "media 0": Settings(capture_content=True, max_media_bytes=0),
    "gen_ai": Settings(capture_content=True, vocabularies="gen_ai"),
    "openinference": Settings(capture_content=True, vocabularies="openinference"),
    "langfuse": Settings(capture_content=True, vocabularies="langfuse"),
    "no content": Settings(capture_content=False),
    "hook": Settings(capture_content=True, redact_hook=_mark),
    "other hook": Settings(capture_content=True, redact_hook=_mark2),
    "hook budget 300": Settings(capture_content=True, redact_hook=_mark, max_content_length=300),
}


@pytest.mark.parametrize(("first", "then"), list(itertools.permutations(SETTINGS, 2)))
def test_the_same_turn_under_other_settings_renders_as_with_empty_caches(spans, first: str, then: str) -> None:
    warm, cold = _served_after(spans, {"messages": TURN, "tools": TOOLS, "settings": SETTINGS[first]},
                               {"messages": TURN, "tools": TOOLS, "settings": SETTINGS[then]})
    assert warm == cold, _diff(warm, cold)
    assert "k-1" not in json.dumps(warm)


def test_a_hook_changed_on_the_settings_object_between_spans_is_applied(spans) -> None:
    settings = Settings(capture_content=True)
    spans.render(TURN, tools=TOOLS, settings=settings)
    settings.redact_hook = _mark
    hooked = spans.render(TURN, tools=TOOLS, settings=settings)
    clear_content_caches()
    assert hooked == spans.render(TURN, tools=TOOLS, settings=Settings(capture_content=True, redact_hook=_mark))
    settings.redact_hook = None
    plain = spans.render(TURN, tools=TOOLS, settings=settings)
    clear_content_caches()
    assert plain == spans.render(TURN, tools=TOOLS, settings=Settings(capture_content=True))


ENV = {
    "OTEL_AGENTS_MAX_CONTENT_LENGTH": ["100", "300", "5000"],
    "OTEL_AGENTS_VOCABULARIES": ["gen_ai", "openinference", "langfuse,gen_ai"],
    "OTEL_AGENTS_MAX_MEDIA_BYTES": ["0", "10"],
    "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": ["false", "true"],
}


@pytest.mark.parametrize(("name", "value"), [(n, v) for n, vs in ENV.items() for v in vs])
def test_an_environment_variable_changed_between_spans_is_applied(spans, monkeypatch, name: str, value: str) -> None:
    settings = Settings()  # follows the environment, read per span
    monkeypatch.delenv(name, raising=False)
    spans.render(TURN, tools=TOOLS, settings=settings)
    monkeypatch.setenv(name, value)
    warm = spans.render(TURN, tools=TOOLS, settings=settings)
    clear_content_caches()
    assert warm == spans.render(TURN, tools=TOOLS, settings=Settings()), name


# ------------------------------------------------------------------ secrets in system prompts

PROMPT = f"You are a support agent. Call the API with {SECRET} and never show it."


@pytest.mark.parametrize("first", ["secret", "redacted form", "same prompt as a system parameter", "none"])
@pytest.mark.parametrize("budget", [None, 64, 80, 100_000])
def test_a_secret_in_a_system_prompt_is_redacted_whichever_entry_came_first(spans, first: str,
                                                                            budget: int | None) -> None:
    settings = Settings(capture_content=True, max_content_length=budget)
    firsts = {"secret": {"messages": [ChatMessage("system", PROMPT), ChatMessage("user", "hi")]},
              "redacted form": {"messages": [ChatMessage("system", PROMPT.replace(SECRET, "[REDACTED]")),
                                             ChatMessage("user", "hi")]},
              "same prompt as a system parameter": {"messages": [ChatMessage("user", "hi")], "system": [PROMPT]},
              "none": {}}
    for then in ({"messages": [ChatMessage("system", PROMPT), ChatMessage("user", "hi")]},
                 {"messages": [ChatMessage("user", "hi")], "system": [PROMPT]},
                 {"messages": [ChatMessage("user", "hi")], "system": [TextPart(PROMPT)]}):
        warm, cold = _served_after(spans, {**firsts[first], "settings": settings} if firsts[first] else
                                   {"messages": [], "settings": settings}, {**then, "settings": settings})
        assert warm == cold, _diff(warm, cold)
        assert SECRET not in json.dumps(warm) and SECRET[:24] not in json.dumps(warm)
        if budget is None:
            assert json.loads(warm[A.GEN_AI_SYSTEM_INSTRUCTIONS]) == [
                {"type": "text", "content": PROMPT.replace(SECRET, "[REDACTED]")}]


def test_a_secret_across_the_scan_limit_of_a_system_prompt_is_never_half_shown(spans) -> None:
    for budget in (64, 100, 200):
        for shift in range(-40, 40, 3):
            prompt = "p" * (budget + content._REDACTION_MARGIN + shift) + " " + SECRET + " tail"
            settings = Settings(capture_content=True, max_content_length=budget)
            for _ in range(2):  # a miss, then a hit
                attrs = spans.render([ChatMessage("system", prompt), ChatMessage("user", "hi")], settings=settings)
                assert "Z9y8X7w6V5u4T3s2R1q0Z9y8" not in json.dumps(attrs)


# ------------------------------------------------------------------ texts at the caches' size bounds

BOUND_TEXTS = {
    "ascii": lambda n: ("a" * n),
    "secret at the end": lambda n: ("b" * (n - len(SECRET) - 1) + " " + SECRET),
    "null word": lambda n: ("null " * n)[:n],
    "non-ascii": lambda n: ("é" * n),
    "control characters": lambda n: ("\x00\x01\x1f\x7f\u2028\"\\" * n)[:n],
    "lone surrogate": lambda n: ("\udcff" + "c" * (n - 1)),
}


@pytest.mark.parametrize("kind", list(BOUND_TEXTS))
@pytest.mark.parametrize("delta", [-1, 0, 1])
@pytest.mark.parametrize("where", ["user", "system", "system parameter"])
def test_a_text_at_the_text_caches_bound_renders_as_with_empty_caches(spans, kind: str, delta: int,
                                                                       where: str) -> None:
    text = BOUND_TEXTS[kind](content._CACHED_TEXT + delta)
    settings = Settings(capture_content=True, max_content_length=100_000)
    spec = {"messages": [ChatMessage("user", "hi"), ChatMessage(where, text)], "settings": settings} \
        if where != "system parameter" else {"messages": [ChatMessage("user", "hi")], "system": [text],
                                             "settings": settings}
    clear_content_caches()
    cold = spans.render(**spec)
    warm = spans.render(**spec)
    assert warm == cold, _diff(warm, cold)
    assert SECRET not in json.dumps(warm)
    # the same text in a message subclass (never cached) renders alike
    clear_content_caches()
    twin = {**spec, "messages": [type("Message", (ChatMessage,), {"__slots__": ()})(m.role, parts=m.parts)
                                 for m in spec["messages"]]}
    assert spans.render(**twin) == cold


@pytest.mark.parametrize("delta", [-2, -1, 0, 1, 2])
def test_a_message_at_the_message_key_bound_renders_as_with_empty_caches(spans, delta: int) -> None:
    settings = Settings(capture_content=True, max_content_length=100_000)
    room = content._MESSAGE_KEY_BYTES - len("tool") - len("call_1")
    spec = {"messages": [ChatMessage("tool", parts=[ToolCallResponsePart("r" * (room + delta), "call_1")])],
            "settings": settings}
    clear_content_caches()
    cold = spans.render(**spec)
    assert len(content._MESSAGES) == (1 if delta <= 0 else 0)
    assert spans.render(**spec) == cold


def test_a_huge_finish_reason_is_not_kept_by_the_message_caches(spans) -> None:
    spans.render([ChatMessage("assistant", parts=[ToolCallPart("lookup", {"a": 1}, "call_1")],
                              finish_reason="r" * (4 * content._MESSAGE_KEY_BYTES))])
    assert len(content._MESSAGES) == 0 and len(content._FLAT) == 0


# ------------------------------------------------------------------ messages changed in place after a rendering


def _conversation() -> list[ChatMessage]:
    return [ChatMessage("user", "Where is order 7?"),
            ChatMessage("assistant", parts=[TextPart("Looking."), ToolCallPart("lookup", {"order": "7"}, "call_1")]),
            ChatMessage("tool", parts=[ToolCallResponsePart({"status": "shipped", "items": [1, 2]}, "call_1")])]


def test_a_message_changed_in_place_after_a_rendering_renders_anew_and_its_old_self_alike(spans) -> None:
    hook = Settings(capture_content=True, redact_hook=lambda key, text: text)  # _FLAT bypassed: _MESSAGES alone
    for settings in (Settings(capture_content=True), hook, Settings(capture_content=True, max_content_length=64)):
        clear_content_caches()
        original = spans.render(_conversation(), settings=settings)
        msgs = _conversation()
        spans.render(msgs, settings=settings)
        msgs[1].parts.append(ToolCallPart("cancel", {"order": "7"}, "call_2"))  # a part appended
        msgs[2].parts[0].response["status"] = "lost"  # its data changed
        msgs[2].parts[0].response["items"].append(3)
        msgs[0].parts[0] = TextPart("Where is order 8?")
        msgs[1].role = "user"
        changed = spans.render(msgs, settings=settings)
        clear_content_caches()
        assert changed == spans.render(msgs, settings=settings)
        spans.render(msgs, settings=settings)
        assert spans.render(_conversation(), settings=settings) == original  # the entries of the old content hold


# ------------------------------------------------------------------ many threads at once


def test_many_threads_rendering_at_once_render_as_one_thread_with_empty_caches(spans) -> None:
    rnd = random.Random(7)
    hooks = [None, _mark]
    specs = []
    for _ in range(160):
        n = rnd.randrange(1, 4)
        msgs = [ChatMessage("user", f"question {rnd.randrange(3)} " * rnd.choice([1, 40]))]
        for _ in range(n):
            msgs.append(ChatMessage("assistant", parts=[TextPart(f"t{rnd.randrange(3)}"),
                                                        ToolCallPart("lookup", {"o": rnd.randrange(3)}, "c")]))
            msgs.append(ChatMessage("tool", parts=[ToolCallResponsePart({"s": "shipped " * rnd.choice([1, 80])},
                                                                        "c")]))
        system = [f"Rule {rnd.randrange(3)}. " * rnd.choice([1, 30])]
        settings = Settings(capture_content=True, max_content_length=rnd.choice([None, 64, 300]),
                            redact_hook=rnd.choice(hooks), vocabularies=rnd.choice([None, "gen_ai", "openinference"]))
        specs.append({"messages": msgs, "system": system, "settings": settings,
                      "tools": [ToolDefinition(f"f{rnd.randrange(3)}", "d", {"type": "object"})]})

    def one(spec: dict) -> dict:
        t = Telemetry(spans.provider, settings=spec["settings"], framework="test")
        s = t.start_span("model", "m", operation="chat")
        s.set_messages(input=spec["messages"], system=spec["system"], tools=spec["tools"])
        attrs = dict(s._pending)
        s.end()
        return attrs

    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            warm = list(pool.map(one, specs * 3))
    finally:
        sys.setswitchinterval(interval)
    for spec, got in zip(specs * 3, warm):
        clear_content_caches()
        assert got == one(spec), _diff(got, one(spec))
