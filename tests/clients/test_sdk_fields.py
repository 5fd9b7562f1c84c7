"""``field_of``, the one reader of request bodies and SDK response models: a pydantic model's fields, extra
fields (an OpenAI-compatible server's ``reasoning_content``), properties and private attributes read as
``getattr`` reads them, a missing field as the default — on the real SDK types and on look-alikes."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import pydantic
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


class _Model(pydantic.BaseModel):
    model_config = pydantic.ConfigDict(extra="allow")
    text: str = "t"
    _secret: str = pydantic.PrivateAttr(default="private")

    @property
    def shout(self) -> str:
        return self.text.upper()


class _Computed(pydantic.BaseModel):
    text: str = "t"

    def __getattr__(self, name: str) -> Any:  # a model that answers every name itself
        return f"computed {name}"


class _MappingModel(pydantic.BaseModel, Mapping):  # type: ignore[misc]
    text: str = "t"

    def __getitem__(self, key: str) -> Any:
        return "item " + key

    def __iter__(self) -> Iterator[str]:
        return iter(["text"])

    def __len__(self) -> int:
        return 1


def test_a_model_is_read_as_getattr_reads_it():
    model = _Model(text="x", other="o")
    for key in ("text", "other", "shout", "_secret", "missing"):
        assert field_of(model, key) == getattr(model, key, None), key
    assert field_of(_Computed(), "anything") == "computed anything"
    assert field_of(_MappingModel(), "text") == "item text"  # a Mapping is read as one


def test_dicts_and_plain_objects():
    assert field_of({"a": 1}, "a") == 1
    assert field_of({"a": None}, "a", 2) == 2
    assert field_of(None, "a", 3) == 3

    class Plain:
        a = 4

    assert field_of(Plain(), "a") == 4
    assert field_of(Plain(), "b", 5) == 5
