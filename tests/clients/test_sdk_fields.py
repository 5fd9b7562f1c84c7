"""``field_of``, the one reader of request bodies and SDK response models, on the real SDK types: fields, extra
fields (an OpenAI-compatible server's ``reasoning_content``), a missing or ``None`` field as the default. How a
model of any shape is read is the span layer's probe's contract (``tests/test_probes.py``)."""

from __future__ import annotations

from openai._models import construct_type
from openai.types.chat import ChatCompletionMessage

from otel_agents.instrumentors._sdk_client import field_of


def test_sdk_model_fields_extras_and_missing_fields():
    message = construct_type(type_=ChatCompletionMessage, value={
        "role": "assistant", "content": "hi", "reasoning_content": "thought"})
    assert field_of(message, "content") == "hi"
    assert field_of(message, "reasoning_content") == "thought"  # an extra field
    assert field_of(message, "refusal", "none") == "none"  # a field that is None
    assert field_of(message, "parsed", "absent") == "absent"  # not a field of this model
    assert field_of(message, "model_fields") == ChatCompletionMessage.model_fields  # a class attribute


def test_dicts_and_plain_objects():
    assert field_of({"a": 1}, "a") == 1
    assert field_of({"a": None}, "a", 2) == 2
    assert field_of(None, "a", 3) == 3

    class Plain:
        a = 4

    assert field_of(Plain(), "a") == 4
    assert field_of(Plain(), "b", 5) == 5
