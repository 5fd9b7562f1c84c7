"""Adversarial, differential tests of the span layer's content-keyed caches (issue 40's third round,
``_spans/memo.py``): a span rendered after another span warmed the caches with a *twin* input — the same
JSON, other Python types (an enum and its value, a tuple and a list, ``IntEnum`` and ``int``) — must carry
exactly the attributes it carries when rendered with every cache empty; and any span rendered after others
(settings varied between them) must carry what it carries alone."""

from __future__ import annotations

import enum
import json
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings as hsettings, strategies as st

from otel_agents._spans import ChatMessage, Settings, Telemetry
from otel_agents._spans.messages import ReasoningPart, TextPart, ToolCallPart, ToolCallResponsePart, ToolDefinition
from tests.spans import ModelSpans, attribute_diff as _diff, clear_content_caches

SECRET = "sk-proj-" + "Q1w2E3r4T5y6U7i8O9p0" * 2


class Colour(enum.Enum):
    RED = "red"
    EMPTY = ""
    ONE = 1
    ASSISTANT = "assistant"


class Level(enum.IntEnum):
    ONE = 1
    ZERO = 0


class Word(str, enum.Enum):
    RED = "red"
    ASSISTANT = "assistant"


# Classes of values orjson writes as the same JSON: a cache key cannot tell them apart.
TWINS: list[list[Any]] = [
    ["red", Colour.RED, Word.RED],
    ["assistant", Colour.ASSISTANT, Word.ASSISTANT],
    [1, Level.ONE, Colour.ONE],
    [0, Level.ZERO],
    ["", Colour.EMPTY],
    [SECRET], [f"key={SECRET}"], ["{'password': 'hunter2hunter2'}"], [None], [True], [1.5], [-0.0], [0.0],
    ["call_1"], ["tool"], ["user"], ["lookup"], ["stop"], ["lorem ipsum " * 25],
    # names, roles, ids, reasons, descriptions (labels: only an exact str is keyed, see the tests below)
    ["red", Colour.RED, Word.RED], ["assistant", Colour.ASSISTANT, Word.ASSISTANT], ["", Colour.EMPTY],
]
RED, ASSISTANT, ONE, ZERO, EMPTY, SECRET_C, ASSIGN_C, REPR_C, NONE, TRUE, FLOAT, NEG0, ZERO_F, CALL, TOOL, USER, \
    LOOKUP, STOP, LONG, RED_ID, ASSISTANT_ID, EMPTY_ID = range(len(TWINS))
PAYLOAD = range(RED_ID)  # the classes drawn for values (arguments, results, schemas, parameters)


class Leaf(int):
    """A twin class's index in a drawn shape."""


class Seq(tuple):
    """A list or a tuple, chosen when the shape is made into values."""


def _make(shape: Any, rnd: random.Random) -> Any:
    """Values of ``shape``: each leaf one member of its twin class, each sequence a list or a tuple."""
    if type(shape) is Leaf:
        return rnd.choice(TWINS[shape])
    if type(shape) is Seq:
        items = [_make(v, rnd) for v in shape]
        return items if rnd.random() < 0.5 else tuple(items)
    if type(shape) is dict:
        return {k: _make(v, rnd) for k, v in shape.items()}
    if type(shape) is list:  # a list of shapes (messages, tools): stays a list
        return [_make(v, rnd) for v in shape]
    if isinstance(shape, tuple) and shape and callable(shape[0]):  # (constructor, *field shapes)
        return shape[0](*[_make(v, rnd) for v in shape[1:]])
    if type(shape) is tuple:  # (messages, tools, parameters, settings)
        return tuple(_make(v, rnd) for v in shape)
    return shape


def leaf(*classes: int) -> st.SearchStrategy[Leaf]:
    return st.sampled_from([Leaf(c) for c in (classes or PAYLOAD)])


values = st.recursive(
    leaf(),
    lambda inner: st.one_of(
        st.lists(inner, max_size=3).map(Seq),
        st.dictionaries(st.sampled_from(["a", "password", "token_count", "api_key"]), inner, max_size=3),
    ),
    max_leaves=6,
)
ids = leaf(NONE, EMPTY_ID, CALL)
names = leaf(LOOKUP, RED_ID)
parts = st.one_of(
    st.tuples(st.just(ToolCallPart), names, values, ids),
    st.tuples(st.just(ToolCallResponsePart), values, ids),
    st.tuples(st.just(TextPart), values),
    st.tuples(st.just(ReasoningPart), leaf(RED_ID, SECRET_C)),
)


def _message(role: Any, ps: list, reason: Any, name: Any) -> ChatMessage:
    return ChatMessage(role, parts=ps, finish_reason=reason, name=name)


messages = st.tuples(st.just(_message), leaf(ASSISTANT_ID, TOOL, USER, RED_ID), st.lists(parts, min_size=1, max_size=2),
                     leaf(NONE, STOP, RED_ID), leaf(NONE, EMPTY_ID, RED_ID))
tools = st.tuples(st.just(ToolDefinition), names, leaf(NONE, EMPTY_ID, RED_ID, LONG),
                  st.one_of(st.just(Leaf(NONE)),
                            st.dictionaries(st.sampled_from(["type", "properties", "default"]), values, max_size=3)),
                  leaf(RED_ID))
params = st.dictionaries(st.sampled_from(["temperature", "seed", "stop", "user", "api_key", "extra"]), values,
                         max_size=3)
span_settings = st.sampled_from([{}, {"max_content_length": 64}, {"max_content_length": 200},
                                 {"vocabularies": "gen_ai"}, {"vocabularies": "openinference"}])
shapes = st.tuples(st.lists(messages, max_size=3), st.lists(tools, max_size=2), params, span_settings)


class _Spans(ModelSpans):
    def render(self, spec: tuple) -> dict:
        msgs, tls, prm, extra = spec

        def fill(s: Any) -> None:
            s.set_model(request_model="m", parameters=prm or None)
            s.set_messages(input=msgs, tools=tls or None)

        return super().render(Settings(capture_content=True, **extra), fill)


@pytest.fixture
def spans():
    with _Spans() as s:
        yield s


def _check_twins(spans: _Spans, shape: tuple, seed: int, twin_settings: dict) -> None:
    rnd = random.Random(seed)
    spec, twin = _make(shape, rnd), _make(shape, rnd)
    twin = (*twin[:3], twin_settings)  # the same content, maybe other settings
    clear_content_caches()
    cold = spans.render(spec)
    clear_content_caches()
    spans.render(twin)
    warm = spans.render(spec)
    assert warm == cold, (spec, _diff(warm, cold))
    assert SECRET not in json.dumps(warm, default=str)


@hsettings(max_examples=400, deadline=None, suppress_health_check=list(HealthCheck))
@given(shape=shapes, seed=st.integers(0, 2 ** 32), twin_settings=span_settings)
def test_a_cache_warmed_by_a_twin_renders_what_an_empty_one_does(spans, shape: tuple, seed: int,
                                                                 twin_settings: dict) -> None:
    _check_twins(spans, shape, seed, twin_settings)


@hsettings(max_examples=200, deadline=None, suppress_health_check=list(HealthCheck))
@given(sequence=st.lists(shapes, min_size=2, max_size=4), seed=st.integers(0, 2 ** 32))
def test_a_warm_cache_renders_what_an_empty_one_does(spans, sequence: list, seed: int) -> None:
    rnd = random.Random(seed)
    specs = [_make(shape, rnd) for shape in sequence]
    clear_content_caches()
    warm = [spans.render(spec) for spec in specs]
    for spec, got in zip(specs, warm):
        clear_content_caches()
        cold = spans.render(spec)
        assert got == cold, (spec, _diff(got, cold))
        assert SECRET not in json.dumps(got, default=str)


# ------------------------------------------------------------------ found: plain Enum members in identity fields
# memo.json_key writes an Enum member as its value (orjson), so a message or tool whose role, name, id or
# description is ``Colour.RED`` would have the key of one whose field is ``"red"``; but those fields are not
# rendered through to_jsonable: a role or name goes through otel_value (a non-str value becomes JSON text,
# '"red"') and ids and descriptions are tested for truth (``Colour.EMPTY`` is true, ``""`` false). So only a
# label that is exactly a str (or None) is keyed: whichever comes first, the other renders as with empty caches.


def _served_after(spans: _Spans, first: tuple, then: tuple) -> tuple[dict, dict]:
    """``then``'s attributes rendered with empty caches, and rendered right after ``first``."""
    clear_content_caches()
    cold = spans.render(then)
    clear_content_caches()
    spans.render(first)
    return spans.render(then), cold


def test_a_str_role_is_not_served_an_enum_roles_rendering(spans) -> None:
    def turn(role: Any) -> tuple:
        return [ChatMessage(role, parts=[ToolCallPart("lookup", {"order": 7}, "call_1")])], [], {}, {}

    warm, cold = _served_after(spans, turn(Colour.ASSISTANT), turn("assistant"))
    assert cold["llm.input_messages.0.message.role"] == "assistant"
    assert warm == cold, _diff(warm, cold)


def test_an_empty_tool_call_id_is_not_served_an_enum_ids_rendering(spans) -> None:
    def result(call_id: Any) -> tuple:
        return [ChatMessage("tool", parts=[ToolCallResponsePart({"status": "ok"}, call_id)])], [], {}, {}

    warm, cold = _served_after(spans, result(Colour.EMPTY), result(""))
    assert "llm.input_messages.0.message.tool_call_id" not in cold
    assert warm == cold, _diff(warm, cold)


def test_an_empty_tool_description_is_not_served_an_enum_descriptions_rendering(spans) -> None:
    def offered(description: Any) -> tuple:
        return [ChatMessage("user", "hi")], [ToolDefinition("lookup", description, {"type": "object"})], {}, {}

    warm, cold = _served_after(spans, offered(Colour.EMPTY), offered(""))
    assert "description" not in json.loads(cold["gen_ai.tool.definitions"])[0]
    assert warm == cold, _diff(warm, cold)


# ------------------------------------------------------------------ the redaction hook sees every content value
_HOOKED = "⟦hooked⟧"
_HOOKED_ENDINGS = (".message.content", ".message_content.text", ".function.arguments", ".tool.json_schema")


def _hook(key: str, text: str) -> str:
    return text + _HOOKED


@hsettings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(sequence=st.lists(shapes, min_size=1, max_size=3), seed=st.integers(0, 2 ** 32))
def test_a_redaction_hook_sees_every_content_value_whatever_the_caches_hold(spans, sequence: list, seed: int) -> None:
    """Spans without a hook warm the caches; the same inputs rendered with a hook then carry its mark in every
    content attribute (a cached rendering never stands in for the hook's)."""
    rnd = random.Random(seed)
    specs = [_make(shape, rnd) for shape in sequence]
    for spec in specs:
        spans.render((*spec[:3], {}))
    for spec in specs:
        msgs, tls, prm, _ = spec
        t = Telemetry(spans.provider, settings=Settings(capture_content=True, redact_hook=_hook), framework="test")
        s = t.start_span("model", "m", operation="chat")
        s.set_model(request_model="m", parameters=prm or None)
        s.set_messages(input=msgs, tools=tls or None)
        s.end()
        attrs = dict(spans.exporter.spans[-1].attributes)
        hooked = {k: v for k, v in attrs.items() if k in ("gen_ai.input.messages", "gen_ai.system_instructions",
                                                            "gen_ai.tool.definitions", "input.value")
                  or k.startswith(("llm.input_messages.", "llm.tools.")) and k.endswith(_HOOKED_ENDINGS)}
        for key, value in hooked.items():
            assert _HOOKED in value, (key, value)
