"""Hugging Face's inference client streamed under a framework's model span: a stream cut short is told so.

``huggingface_hub``'s ``InferenceClient.chat_completion`` / ``AsyncInferenceClient.chat_completion`` with
``stream=True`` (smolagents' ``InferenceClientModel``, PydanticAI's ``HuggingFaceModel``, Agno's ``HuggingFace``)
yields OpenAI-shaped ``ChatCompletionStreamOutput`` chunks until ``data: [DONE]`` or the end of the response, and
stops quietly at either: a stream a proxy cut before its last choice's ``finish_reason`` reads as a whole answer,
and the framework's model span said so. Its iterator is wrapped to pass the chunks on unchanged, noting each
choice's finish reason; when it ends by itself with a choice that never got one (or no choice at all: the span
layer's rule, :class:`~otel_agents._spans.ChoiceFinishes`), the model span current at the call (the framework's) is
marked cut short by the span layer (:meth:`~otel_agents._spans.outcome.OutcomeSetters.mark_incomplete`: status
ERROR, ``error.type`` ``stream_incomplete``, no finish reason written after it). A stream the caller leaves, or that
raises, is left to the framework's span (abandoned, failed); closing ours (PydanticAI's ``request_stream`` does, on
leaving) closes the client's at once, as closing it unwrapped would (an async generator's ``async for`` does not:
the client's generator would wait for the event loop's finaliser). The client's usage is only what the server
sent: nothing to refuse.

:func:`use` installs the wrappers (now, or when the client modules are imported) for as long as one instrumentor
uses them. Source: ``huggingface_hub/inference/_common.py`` (``_stream_chat_completion_response``,
``_format_chat_completion_stream_output``).
"""

from __future__ import annotations

from typing import Any, Callable

from .._spans import ChoiceFinishes, SemanticSpan, guard
from ._patch import Patch, SharedPatches
from ._sdk_client import current_model_span


class _Finishes:
    """Each choice's finish reason seen so far, and the model span a cut stream marks."""

    __slots__ = ("span", "choices")

    def __init__(self, span: SemanticSpan):
        self.span, self.choices = span, ChoiceFinishes()

    def note(self, chunk: Any) -> None:
        with guard("hf_inference.chunk"):
            self.choices.note_chunk(chunk)

    def ended(self) -> None:
        """The stream ended by itself: cut short unless every choice got its finish reason."""
        with guard("hf_inference.end"):
            missing = self.choices.missing()
            if missing:
                self.span.mark_incomplete(missing)


def _watch(chunks: Any, finishes: _Finishes) -> Any:
    try:
        for chunk in chunks:
            finishes.note(chunk)
            yield chunk
    finally:  # closed early (or raising): the client's stream too, now
        close = getattr(chunks, "close", None)
        if close is not None:
            close()
    finishes.ended()


async def _awatch(chunks: Any, finishes: _Finishes) -> Any:
    try:
        async for chunk in chunks:
            finishes.note(chunk)
            yield chunk
    finally:  # closed early (or raising): the client's stream too, now, not at the event loop's finalising
        aclose = getattr(chunks, "aclose", None)
        if aclose is not None:
            await aclose()
    finishes.ended()


def _watched(result: Any, kwargs: dict, watch: Callable[[Any, _Finishes], Any]) -> Any:
    """``chat_completion``'s ``result``, its chunks watched (``watch``) when it is a stream under a model span."""
    if kwargs.get("stream"):
        with guard("hf_inference.stream"):
            span = current_model_span()
            if span is not None:
                return watch(result, _Finishes(span))
    return result


def _chat_completion(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    return _watched(wrapped(*args, **kwargs), kwargs, _watch)


def _async_chat_completion(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    async def call() -> Any:
        return _watched(await wrapped(*args, **kwargs), kwargs, _awatch)

    return call()


_PATCHES = SharedPatches("hf_inference.patch", {
    "huggingface_hub.inference._client":
        lambda module: Patch(module.InferenceClient, "chat_completion", _chat_completion),
    "huggingface_hub.inference._generated._async_client":
        lambda module: Patch(module.AsyncInferenceClient, "chat_completion", _async_chat_completion)})
use = _PATCHES.use
"""``use()``: watch the inference clients' chat streams until the returned use is removed
(:class:`~._patch.SharedPatches`)."""
