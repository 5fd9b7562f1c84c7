"""A client's token counts that are not counts (past 64 bits, negative, a fraction…) are left out, the rest
recorded, and every attribute of the batch, the application's own span included, encodes
(``tests/test_token_counts.py``)."""

from __future__ import annotations

from typing import Any

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.spans import encode_otlp

from .fakes import Recorder, anthropic_client, anthropic_message, chat_completion, httpx2, openai_client

BIG = 2 ** 63


@pytest.fixture
def memory(provider) -> InMemorySpanExporter:
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return memory


def _exported_model(memory: InMemorySpanExporter, provider) -> dict[str, Any]:
    spans = memory.get_finished_spans()
    assert len(spans) == 2  # the application's span and the model span
    encode_otlp(spans)  # every attribute encodes
    model = next(s for s in spans if s.name != "app")
    return {k: v for k, v in model.attributes.items() if "token" in k and "request" not in k}


@pytest.mark.parametrize("bad", [BIG, -3, 2.5], ids=repr)
def test_openai_chat_usage(openai_on: Any, provider, memory, bad) -> None:
    usage = {"prompt_tokens": bad, "completion_tokens": 7, "total_tokens": bad,
             "prompt_tokens_details": {"cached_tokens": bad}, "completion_tokens_details": {"reasoning_tokens": 2}}
    client = openai_client(Recorder(chat_completion(usage=usage)))
    with provider.get_tracer("app").start_as_current_span("app"):
        client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
    assert _exported_model(memory, provider) == {
        "gen_ai.usage.output_tokens": 7, "llm.token_count.completion": 7,
        "gen_ai.usage.reasoning.output_tokens": 2, "llm.token_count.completion_details.reasoning": 2}


@pytest.mark.parametrize("bad", [BIG, -3, 2.5], ids=repr)
def test_anthropic_usage(anthropic_on: Any, provider, memory, bad) -> None:
    usage = {"input_tokens": bad, "output_tokens": 5, "cache_read_input_tokens": 4,
             "cache_creation_input_tokens": bad}
    client = anthropic_client(Recorder(anthropic_message([{"type": "text", "text": "hi"}], usage=usage), http=httpx2))
    with provider.get_tracer("app").start_as_current_span("app"):
        client.messages.create(model="claude-haiku-4-5", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    # input counts every input token (input + cache): with one of its parts not a count, it is not known
    assert _exported_model(memory, provider) == {
        "gen_ai.usage.output_tokens": 5, "llm.token_count.completion": 5,
        "gen_ai.usage.cache_read.input_tokens": 4, "llm.token_count.prompt_details.cache_read": 4}


def test_anthropic_input_whose_parts_sum_past_64_bits(anthropic_on: Any, provider, memory) -> None:
    usage = {"input_tokens": 2 ** 62, "output_tokens": 5, "cache_read_input_tokens": 2 ** 62}
    client = anthropic_client(Recorder(anthropic_message([{"type": "text", "text": "hi"}], usage=usage), http=httpx2))
    with provider.get_tracer("app").start_as_current_span("app"):
        client.messages.create(model="claude-haiku-4-5", max_tokens=16, messages=[{"role": "user", "content": "hi"}])
    attrs = _exported_model(memory, provider)
    assert "gen_ai.usage.input_tokens" not in attrs and attrs["gen_ai.usage.cache_read.input_tokens"] == 2 ** 62
