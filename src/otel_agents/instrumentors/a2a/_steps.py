"""Running an async generator's steps inside a context, without holding the context across ``yield``.

A span of ours must be current while a stream's producer code runs (the transport's HTTP spans, the
request handler's setup, the context a2a-sdk copies for the agent executor), but never while the
consumer runs between items: the consumer may live in another context (sse-starlette iterates the
response body in a task of its own), where detaching a token attached elsewhere fails. So each
``__anext__`` attaches and detaches around the producer's step only.
"""

from __future__ import annotations

from typing import Any, AsyncIterator, Mapping

from opentelemetry import context as otel_context

from ..._spans import pop_run_attributes, push_run_attributes


async def in_context(stream: Any, ctx: otel_context.Context, run_attributes: Mapping[str, Any] | None = None
                     ) -> AsyncIterator[Any]:
    """Yield ``stream``'s items, each produced with ``ctx`` attached (and ``run_attributes`` pushed)."""
    iterator = stream.__aiter__()
    try:
        while True:
            token = otel_context.attach(ctx)
            pushed = push_run_attributes(run_attributes) if run_attributes else None
            try:
                item = await iterator.__anext__()
            except StopAsyncIteration:
                return
            finally:
                if pushed is not None:
                    pop_run_attributes(pushed)
                otel_context.detach(token)
            yield item
    finally:
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()
