"""Running an async generator's steps inside a context, without holding the context across ``yield``.

A span of ours must be current while a stream's producer code runs (the transport's HTTP spans, the
request handler's setup, the context a2a-sdk copies for the agent executor), but never while the
consumer runs between items: the consumer may live in another context (sse-starlette iterates the
response body in a task of its own), where detaching a token attached elsewhere fails. So each
``__anext__`` attaches and detaches around the producer's step only.
"""

from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator, Mapping

from opentelemetry import context as otel_context

from ..._spans import AsyncStepIterator, pop_run_attributes, push_run_attributes


def in_context(stream: Any, ctx: otel_context.Context, run_attributes: Mapping[str, Any] | None = None
               ) -> AsyncStepIterator:
    """``stream``'s items, each produced with ``ctx`` attached (and ``run_attributes`` pushed): the span
    layer's :class:`~otel_agents._spans.AsyncStepIterator`."""
    return AsyncStepIterator(stream, ctx, (lambda: _pushed(run_attributes)) if run_attributes else None)


@contextmanager
def _pushed(run_attributes: Mapping[str, Any]) -> Iterator[None]:
    token = push_run_attributes(run_attributes)
    try:
        yield
    finally:
        pop_run_attributes(token)
