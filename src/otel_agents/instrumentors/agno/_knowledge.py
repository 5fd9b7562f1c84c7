"""Retriever spans: ``Knowledge.search``/``asearch`` → ``retrieval {knowledge}``, one per search.

An agent with ``knowledge=`` searches it through its ``search_knowledge_base``
tool (or before the run, with ``add_knowledge_to_context``); either way the
search goes through ``Knowledge.search``/``asearch``, which we wrap: the
query, the documents found (content, id, name, score, metadata) and the
knowledge base's name as ``gen_ai.data_source.id``. Memory and session
storage make no span. A search made inside another (an ``asearch`` that calls
``search``) is one span.
"""

from __future__ import annotations

import inspect
from typing import Any

from opentelemetry import context as otel_context

from ..._spans import SemanticSpan, Telemetry, guard, instrumentation_enabled
from ...semconv import Kind
from ._context import _OURS, activate, parent


def _documents(found: Any) -> list[dict]:
    docs = []
    for d in found or ():
        doc = {"id": getattr(d, "id", None) or getattr(d, "name", None), "content": getattr(d, "content", None),
               "score": getattr(d, "reranking_score", None), "metadata": getattr(d, "meta_data", None) or None}
        docs.append({k: v for k, v in doc.items() if v is not None})
    return docs


class KnowledgeHooks:
    """Wrappers for ``agno.knowledge.knowledge.Knowledge.search``/``asearch``."""

    def __init__(self, telemetry: Telemetry):
        self.telemetry = telemetry

    def _start(self, knowledge: Any, args: tuple, kwargs: dict) -> SemanticSpan:
        source = getattr(knowledge, "name", None) or type(getattr(knowledge, "vector_db", None) or knowledge).__name__
        span = self.telemetry.start_span(Kind.RETRIEVER, source, parent=parent())
        with guard("agno.knowledge.query"):
            span.set_retrieval(query=kwargs.get("query", args[0] if args else None) if span.records_content else None,
                               data_source=source)
        return span

    def _finish(self, span: SemanticSpan, found: Any = None, error: BaseException | None = None) -> None:
        with guard("agno.knowledge.documents"):
            if error is None and span.records_content:
                span.set_retrieval(documents=_documents(found))
        if error is not None:
            span.record_error(error, control_flow=not isinstance(error, Exception))
        span.end()

    def search(self, wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        ours = otel_context.get_value(_OURS)
        if not instrumentation_enabled() or (isinstance(ours, SemanticSpan) and ours.kind is Kind.RETRIEVER
                                                and not ours.ended):
            return wrapped(*args, **kwargs)
        span = None
        with guard("agno.knowledge.start"):
            span = self._start(instance, args, kwargs)
        if span is None:
            return wrapped(*args, **kwargs)
        if inspect.iscoroutinefunction(wrapped):
            return self._asearch(wrapped, args, kwargs, span)
        try:
            with activate(span):
                found = wrapped(*args, **kwargs)
        except BaseException as exc:
            self._finish(span, error=exc)
            raise
        self._finish(span, found)
        return found

    async def _asearch(self, wrapped: Any, args: tuple, kwargs: dict, span: SemanticSpan) -> Any:
        try:
            with activate(span):
                found = await wrapped(*args, **kwargs)
        except BaseException as exc:
            self._finish(span, error=exc)
            raise
        self._finish(span, found)
        return found
