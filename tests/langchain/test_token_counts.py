"""A framework's token counts that are not counts are left out, the rest recorded, and every attribute encodes
(``tests/test_token_counts.py``): LangChain's ``usage_metadata`` and ``llm_output`` as a model reported them."""

from __future__ import annotations

import math
from typing import Any

import pytest
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from tests.langchain.fakes import ToolCallingChatModel
from tests.spans import encode_otlp


# A stream's chunks are pydantic models that take integers only (LangChain refuses the rest itself).
@pytest.mark.parametrize("mode, bad", [("invoke", v) for v in (2 ** 63, -4, 2.5, math.nan, math.inf, True, "12")] +
                         [("stream", v) for v in (2 ** 63, -4)], ids=repr)
def test_usage_metadata_counts_that_are_not_counts(mode: str, bad: Any, instrumentor: Any, provider) -> None:
    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    model = ToolCallingChatModel(tool=None, llm_output_usage={"completion_tokens": bad})
    model.usage = {"input_tokens": bad, "output_tokens": 7, "total_tokens": bad,
                   "input_token_details": {"cache_read": 3}, "output_token_details": {"reasoning": bad}}
    with provider.get_tracer("app").start_as_current_span("app"):
        model.invoke("hi") if mode == "invoke" else list(model.stream("hi"))
    spans = memory.get_finished_spans()
    encode_otlp(spans)  # every attribute encodes
    (span,) = [s for s in spans if s.attributes.get("otel_agents.span.kind") == "model"]
    tokens = {k: v for k, v in span.attributes.items() if "token" in k and "request" not in k}
    assert tokens == {"gen_ai.usage.output_tokens": 7, "llm.token_count.completion": 7,
                      "gen_ai.usage.cache_read.input_tokens": 3, "llm.token_count.prompt_details.cache_read": 3}
