"""Request parameters (``gen_ai.request.*``) are written by one rule of the span layer, whichever instrumentor
passes them: an int attribute (``max_tokens``, ``seed``; OTel GenAI v1.41) gets an integral number or nothing (``inf``,
``100.5`` and ``True`` are none), a double keeps a NaN or an infinity the caller passed (an OTel double may be
one; every writer serialises it strictly) but never a bool; ``llm.invocation_parameters`` leaves out what its
attribute refused and keeps the rest."""

from __future__ import annotations

import json
import math

import httpx
import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_agents


@pytest.fixture
def memory():
    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel_agents.uninstrument()
    otel_agents.instrument(provider, frameworks=["openai", "langchain"])
    yield exporter
    otel_agents.uninstrument()


def _request(span) -> tuple[dict, dict]:
    a = dict(span.attributes)
    return ({k: v for k, v in a.items() if k.startswith("gen_ai.request.") and k != "gen_ai.request.model"},
            json.loads(a["llm.invocation_parameters"], parse_constant=lambda c: pytest.fail(c)))


def test_openai_client_parameters_of_the_wrong_type_are_not_written(memory) -> None:
    import openai

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={
            "id": "c1", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "hi"}}],
            "usage": {"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}})

    client = openai.OpenAI(api_key="sk-test", http_client=httpx.Client(transport=httpx.MockTransport(answer)))
    client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x"}], max_tokens=True,
                                   seed=7, temperature=True, top_p=0.5, frequency_penalty=1)
    (span,) = memory.get_finished_spans()
    attrs, params = _request(span)
    assert attrs == {"gen_ai.request.seed": 7, "gen_ai.request.top_p": 0.5, "gen_ai.request.frequency_penalty": 1}
    assert params == {"seed": 7, "top_p": 0.5, "frequency_penalty": 1, "stream": False}


def test_langchain_non_finite_parameters(memory) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    model = GenericFakeChatModel(messages=iter(["hi", "ho"]))
    assert model.invoke("x", temperature=math.nan, max_tokens=math.inf, top_p=-math.inf).content == "hi"
    assert model.invoke("x", max_tokens=100.5, seed=3).content == "ho"
    first, second = (_request(s) for s in memory.get_finished_spans())
    attrs, params = first
    assert math.isnan(attrs.pop("gen_ai.request.temperature")) and attrs == {"gen_ai.request.top_p": -math.inf}
    assert params == {"temperature": "nan", "top_p": "-inf"}  # the span layer's text of a non-finite number
    assert second == ({"gen_ai.request.seed": 3}, {"seed": 3})


def test_numbers_of_other_types_are_written_as_python_numbers_and_the_rest_refused(memory) -> None:
    """Through LangChain's model call (what a framework passes on): numpy's numbers and an ``IntEnum`` are numbers
    (written as ``int``/``float``, in ``llm.invocation_parameters`` too, where they were their repr); an int past
    ``int64`` on a double is its float (it was written as text); stop sequences that are not strings are none, nor
    is a ``Decimal`` (found by h-breaker2)."""
    import enum
    from decimal import Decimal

    import numpy as np
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    class Level(enum.IntEnum):
        HIGH = 2

    model = GenericFakeChatModel(messages=iter(["a", "b", "c"]))
    model.invoke("x", max_tokens=np.int64(5), seed=Level.HIGH, temperature=np.float32(0.5), top_k=np.int32(40))
    model.invoke("x", temperature=10**30, top_p=Decimal("0.5"), stop=5, seed=2**70)
    model.invoke("x", stop=("END", "STOP"), frequency_penalty=[1], max_tokens=np.float64(7.0))
    first, second, third = (_request(s) for s in memory.get_finished_spans())
    assert first == ({"gen_ai.request.max_tokens": 5, "gen_ai.request.seed": 2, "gen_ai.request.temperature": 0.5,
                      "gen_ai.request.top_k": 40},
                     {"max_tokens": 5, "seed": 2, "temperature": 0.5, "top_k": 40})
    assert all(type(v) in (int, float) for v in first[0].values()), first
    assert second == ({"gen_ai.request.temperature": 1e30}, {"temperature": 1e30})
    assert third == ({"gen_ai.request.stop_sequences": ("END", "STOP")}, {"stop": ["END", "STOP"]})
