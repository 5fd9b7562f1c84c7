"""Embeddings (``POST /embeddings``) → one ``embedding`` span (``embeddings {model}``).

The inputs (strings; token arrays are not text and are not recorded) are content;
the vector dimension and ``usage.prompt_tokens`` are not. Vectors are never recorded.
"""

from __future__ import annotations

from typing import Any, Mapping

from ..._spans import SemanticSpan, Usage
from ...semconv import Kind, attributes as A
from .._sdk_client import Endpoint, Outcome, field_of, token_count


class EmbeddingsEndpoint(Endpoint):
    """``POST /embeddings``."""

    kind = Kind.EMBEDDING
    operation = "embeddings"

    def record_request(self, span: SemanticSpan, body: Mapping[str, Any]) -> None:
        span.set_attribute("gen_ai.request.encoding_formats", [body["encoding_format"]]
                           if isinstance(body.get("encoding_format"), str) else None)
        if span.records_content:
            texts = body.get("input")
            texts = [texts] if isinstance(texts, str) else texts
            if isinstance(texts, list) and all(isinstance(t, str) for t in texts):
                span.set_embedding(texts=texts)

    def outcome(self, result: Any, content: bool = True) -> Outcome:
        data = field_of(result, "data", [])
        vector = field_of(data[0], "embedding") if data else None
        usage = field_of(result, "usage")
        prompt = token_count(field_of(usage, "prompt_tokens"))
        return Outcome(response_model=field_of(result, "model"),
                       usage=Usage(input_tokens=prompt, total_tokens=token_count(field_of(usage, "total_tokens")))
                       if prompt is not None else None,
                       attributes={A.GEN_AI_EMBEDDINGS_DIMENSION_COUNT: len(vector)} if isinstance(vector, list)
                       else {})
