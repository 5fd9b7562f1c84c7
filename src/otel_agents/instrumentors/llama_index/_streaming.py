"""Ending spans with the streams LlamaIndex hands out, however they are used.

Two shapes of stream:

* **Model streams** (``stream_chat``, ``astream_chat``, ``stream_complete``,
  ``astream_complete``). The dispatcher span exits as soon as the generator is
  returned, before any chunk exists; progress and the end arrive later as
  events tagged with that span's id. The provider call itself (``OpenAI`` →
  ``openai``) only happens at the consumer's first ``next()``: the stream
  methods of every LLM class are wrapped (:func:`stream_method_wrappers`) so
  that each step of the returned generator runs with the model span current
  (and nothing between steps), and an instrumented provider client enriches
  that span instead of opening a second one. :class:`ModelStreams` keeps the model
  span open under that id and ends it on the LLM end event (consumed), on an
  ``ExceptionEvent`` (``GeneratorExit``: closed early → abandoned; anything
  else → error), when the generator is garbage-collected unfinished (never
  iterated: no event at all), or after ``OTEL_AGENTS_STREAM_IDLE_TIMEOUT``
  seconds without activity (abandoned).
* **Streaming responses** of query engines and synthesizers
  (``StreamingResponse`` / ``AsyncStreamingResponse``). Their
  ``response_gen`` is lazy: the retrieval is done, but the model call starts on
  the consumer's first ``next()``, outside any span. :func:`hold_response_stream`
  keeps the component spans that returned the response open, replaces
  ``response_gen`` with a proxy that yields the very same items while making
  the innermost of those spans current (so the model call nests under it), and
  ends the spans when the stream ends, is closed, collected or idle, the
  streamed text becoming their output.
"""

from __future__ import annotations

import inspect
import weakref
from typing import Any, Callable

from opentelemetry import context as otel_context

from ..._spans import (AsyncStepIterator, SemanticSpan, SpanRegistry, StepIterator, finalize, guard, in_forked_child,
                        watch_stream, wrap_stream)

_HOLDER_ATTR = "_otel_agents_held_spans"
STREAMING_RESPONSES = ("StreamingResponse", "AsyncStreamingResponse")


class ModelStreams:
    """Model spans whose stream is still running, by dispatcher span id (bounded)."""

    def __init__(self) -> None:
        self._open = SpanRegistry()
        self._forget()
        in_forked_child(ModelStreams._forget, self)

    def _forget(self) -> None:
        """No stream known (a forked child's: the parent's running streams are the parent's to end)."""
        self._by_stream: "weakref.WeakKeyDictionary[Any, SemanticSpan]" = weakref.WeakKeyDictionary()

    def __len__(self) -> int:
        return len(self._open)

    def start(self, span_id: str, span: SemanticSpan, stream: Any) -> None:
        """Keep ``span`` open until the stream returned by its model call ends."""
        handle = watch_stream(span, on_end=lambda _span, _abandoned: self._open.pop(span_id))
        finalizer = None
        with guard("llama_index.stream.finalizer"):
            finalizer = finalize(stream, self.finish, span_id, abandoned=True)
        self._open.put(span_id, span, (handle, finalizer))
        with guard("llama_index.stream.by_stream"):
            self._by_stream[stream] = span

    def span_of_stream(self, stream: Any) -> SemanticSpan | None:
        """The open model span of the generator a model call returned, if it is still running."""
        try:
            span = self._by_stream.get(stream)
        except TypeError:  # not weak-referenceable: not one of ours
            return None
        return span if span is not None and not span.ended else None

    def span(self, span_id: str) -> SemanticSpan | None:
        """The open model span of dispatcher span ``span_id``, if its stream is running."""
        return self._open.get(span_id)

    def chunk(self, span_id: str) -> None:
        """A chunk arrived (resets the idle timer)."""
        extra = self._open.get_extra(span_id)
        if extra is not None:
            extra[0].chunk(None)

    def finish(self, span_id: str, *, abandoned: bool = False, error: BaseException | None = None) -> None:
        """End the stream's span (once): consumed, ``abandoned`` or failed with ``error``."""
        extra = self._open.get_extra(span_id)
        if extra is None:
            return
        handle, finalizer = extra
        if finalizer is not None:
            finalizer.detach()
        handle.finish(abandoned=abandoned, error=error)

    def clear(self) -> None:
        """End every open stream span (as evicted); used by ``uninstrument``."""
        self._open.clear()


class _HeldSpans:
    """The component spans one streaming response keeps open, innermost first."""

    def __init__(self, span: SemanticSpan):
        self.spans = [span]
        self.parts: list[str] = []
        self.error: BaseException | None = None

    def context(self) -> otel_context.Context:
        return self.spans[0].context()

    def add_text(self, item: Any) -> None:
        if isinstance(item, str):
            self.parts.append(item)

    def end(self, _span: SemanticSpan, abandoned: bool) -> None:
        # What was streamed; nothing streamed is an empty answer only when the stream finished (not when it
        # failed or was left before its first item: no answer at all).
        text = "".join(self.parts) if self.parts or not (abandoned or self.error is not None) else None
        for span in self.spans:
            if text is not None:
                span.set_output(text)
            if self.error is not None:
                span.record_error(self.error, control_flow=not isinstance(self.error, Exception))
            elif abandoned:
                span.mark_abandoned()
            span.end()


def _sync_activated(source: Any, held: _HeldSpans) -> Any:
    iterator = iter(source)
    try:
        while True:
            token = otel_context.attach(held.context())
            try:
                item = next(iterator)
            except StopIteration:
                return
            except BaseException as exc:
                held.error = exc
                raise
            finally:
                otel_context.detach(token)
            held.add_text(item)
            yield item
    finally:
        close: Callable[[], Any] | None = getattr(iterator, "close", None)
        if close is not None:
            close()


async def _async_activated(source: Any, held: _HeldSpans) -> Any:
    iterator = source.__aiter__()
    try:
        while True:
            token = otel_context.attach(held.context())
            try:
                item = await iterator.__anext__()
            except StopAsyncIteration:
                return
            except BaseException as exc:
                held.error = exc
                raise
            finally:
                otel_context.detach(token)
            held.add_text(item)
            yield item
    finally:
        aclose = getattr(iterator, "aclose", None)
        if aclose is not None:
            await aclose()


def hold_response_stream(response: Any, span: SemanticSpan) -> bool:
    """Keep ``span`` open until ``response``'s stream ends, if ``response`` is a streaming response.

    The first span to see a response wraps its ``response_gen``; an enclosing
    span that returns the same response (the query engine around its
    synthesizer) joins the same stream and ends after it.

    Returns:
        ``True`` when the span's end now belongs to the stream (the caller must
        not end it); ``False`` for any other response.
    """
    if type(response).__name__ not in STREAMING_RESPONSES:
        return False
    stream = getattr(response, "response_gen", None)
    if stream is None:
        return False
    held = getattr(stream, _HOLDER_ATTR, None)
    if isinstance(held, _HeldSpans):
        held.spans.append(span)
        return True
    held = _HeldSpans(span)
    if hasattr(stream, "__aiter__"):
        activated = _async_activated(stream, held)
    else:
        activated = _sync_activated(stream, held)
    wrapped = wrap_stream(activated, span, on_end=held.end)
    setattr(wrapped, _HOLDER_ATTR, held)
    response.response_gen = wrapped
    return True


# -- the stream methods of LLM classes: each step of the returned generator sees the model span -------
SYNC_STREAM_METHODS = ("stream_chat", "stream_complete")
ASYNC_STREAM_METHODS = ("astream_chat", "astream_complete")


def stream_method_wrappers(streams: ModelStreams) -> dict[str, Callable[..., Any]]:
    """wrapt wrappers for an LLM class's ``stream_*``/``astream_*`` methods (name → wrapper): the generator a
    model call returned is handed back stepping inside its model span; anything else passes through."""

    def in_span(result: Any) -> Any:
        span = streams.span_of_stream(result)
        if span is None:
            return result
        if inspect.isgenerator(result):
            return StepIterator(result, span.context())
        if inspect.isasyncgen(result):
            return AsyncStepIterator(result, span.context())
        return result

    def sync(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        result = wrapped(*args, **kwargs)
        with guard("llama_index.stream_in_span"):
            return in_span(result)
        return result

    def asynchronous(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        result = wrapped(*args, **kwargs)
        if not inspect.isawaitable(result):
            with guard("llama_index.stream_in_span"):
                return in_span(result)
            return result

        async def awaited() -> Any:
            value = await result
            with guard("llama_index.stream_in_span"):
                return in_span(value)
            return value

        return awaited()

    return {**{m: sync for m in SYNC_STREAM_METHODS}, **{m: asynchronous for m in ASYNC_STREAM_METHODS}}
