"""LiteLLM's streams under a framework's model span: what LiteLLM makes up at a stream's end is not the provider's.

LiteLLM's ``CustomStreamWrapper`` (``litellm.litellm_core_utils.streaming_handler``) closes every stream with a
chunk of its own, built by ``finish_reason_handler`` once the provider's stream has ended: its finish reason is the
one the provider sent, or ``"stop"`` (``"tool_calls"`` after tool calls) when none came — a stream cut short
before its terminal chunk, e.g. by a proxy closing the connection cleanly. With
``stream_options.include_usage`` a last chunk follows whose usage is the provider's, or, when no chunk carried one
(the stream was cut, or the server does not report usage), LiteLLM's own count with its tokenizer. A framework
that streams through LiteLLM reports both as the response's (CrewAI's LiteLLM-backed ``LLM`` announces them in its
``LLMCallCompletedEvent``).

So at ``finish_reason_handler``, the model span current (the framework's, around the call that streams) is told
what the provider sent and did not send, by the span layer: the finish reason the provider sent is written
(smolagents, the Agents SDK and Agno pass none on; a framework's own, written later, replaces it); a stream
without one is cut short (:meth:`~otel_agents._spans.outcome.OutcomeSetters.mark_incomplete`: status ERROR,
``error.type`` ``stream_incomplete``; no finish reason written after it), and a stream no chunk of which carried
usage, or one cut short, gets no token counts (:meth:`~otel_agents._spans.model.ModelSetters.refuse_usage`). A
stream whose reading raised (a connection reset or closed midway; before anything was generated, see below) fails
the span with the exception LiteLLM raises (``_handle_stream_fallback_error``, where its sync and async readers send
every failure): CrewAI catches it and answers with the text that arrived, which would otherwise leave a span with
status UNSET; the others raise it through their model span, recorded once. A stream the caller leaves early never
reaches either: its span stays the framework's to end (abandoned).

LiteLLM's ``Router`` with fallbacks sends one call's request again to another deployment inside the same model span:
a request refused before its stream (an HTTP error) never reaches the watch, and the span is the answering
request's. A stream that breaks before anything was generated (``MidStreamFallbackError`` with
``is_pre_first_chunk``, or after chunks with no content, the role alone: what ``Router.acompletion`` falls back on)
is a failed attempt the fallback may yet answer: the span records it pending
(:meth:`~otel_agents._spans.outcome.OutcomeSetters.record_failed_attempt`: its ``exception`` event now, no status);
the fallback's whole stream, whose ``finish_reason_handler`` writes the provider's finish reason, settles it, and
the span is the answer's (status, finish reason, usage, output). Nothing answering it (no Router, the fallback
failing too, the caller leaving the fallback's stream), the span fails with it as it would have at once, recorded
once. Neither failed request has a span of its own: the framework's step is one span, a failed attempt its event
(tests/litellm/test_router.py).

:func:`use` installs the wrappers (now, or when the module is imported: importing LiteLLM costs seconds) for as
long as one instrumentor uses them: those of the frameworks that stream through LiteLLM (CrewAI; smolagents, the
OpenAI Agents SDK and Agno, whose LiteLLM models run this same code), each holding its use as one of its patches
(``PatchSet.keep``). Tested with each framework's LiteLLM-backed model against a fake provider on loopback in
``.venv-litellm`` (tests/litellm, tests/crewai/test_litellm_stream.py; Makefile ISOLATED).
Sources: LiteLLM's ``streaming_handler.py`` (``finish_reason_handler``, ``__next__``/``__anext__``: it is called
when the provider's stream is exhausted, with ``received_finish_reason`` / ``intermittent_finish_reason`` unset
when none came; ``_handle_stream_fallback_error``, which maps the exception and raises it) and
``streaming_chunk_builder_utils.py`` (``calculate_usage``: ``token_counter`` for the counts no chunk gave).
"""

from __future__ import annotations

from typing import Any, Iterator

from .._spans import ChatMessage, guard
from .._spans.streams import FINISH_REASON
from ._patch import PatchSet, SharedPatches
from ._sdk_client import current_model_span

MODULE = "litellm.litellm_core_utils.streaming_handler"


def _stream_ended(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    """``CustomStreamWrapper.finish_reason_handler``: the provider's stream has ended; tell the current model
    span what it did and did not send, then let LiteLLM build its closing chunk."""
    with guard("litellm.stream_end"):
        span = current_model_span()
        if span is not None:
            reason = instance.received_finish_reason or instance.intermittent_finish_reason
            if reason:
                span.set_finish_reasons([reason], unless_set=True)  # the provider's (a framework's own, later, wins)
            else:  # cut short: LiteLLM's closing chunk will carry a "stop" of its own
                span.mark_incomplete(FINISH_REASON)
            if not reason or not _provider_usage(instance):
                span.refuse_usage()
    return wrapped(*args, **kwargs)


def _stream_failed(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    """``CustomStreamWrapper._handle_stream_fallback_error(e)``: reading the provider's stream raised (sync and
    async, after LiteLLM logged it); it maps ``e`` to the exception it raises. Raised before anything was generated
    (``MidStreamFallbackError``: before the first chunk, or after chunks with no content), it is a failed attempt
    a Router's fallback may yet answer: the current model span records it pending (its event now; status ERROR
    only if no answer settles it). Any other
    is recorded on the span (status ERROR, ``error.type`` its class) whatever the framework makes of it (CrewAI
    returns the text that arrived as its answer), the text that arrived is its output (a framework that writes its
    own, later, replaces it: the Agents SDK writes none for a failed call), and it gets no token counts unless the
    provider sent them."""
    try:
        return wrapped(*args, **kwargs)
    except Exception as exc:
        with guard("litellm.stream_failed"):
            span = current_model_span()
            if span is not None and _may_fall_back(exc, instance.chunks):
                span.record_failed_attempt(exc)
            elif span is not None:
                span.record_error(exc)
                text = "".join(_texts(instance.chunks))
                if text:
                    span.set_messages(output=[ChatMessage("assistant", text)])
                if not _provider_usage(instance):
                    span.refuse_usage()
        raise


# The delta fields of a chunk that carry something generated (LiteLLM's router.py,
# ``_stream_chunks_have_generated_content``): a chunk with none of them (the role alone) generated nothing.
_GENERATED = ("content", "tool_calls", "function_call", "reasoning_content", "thinking_blocks", "reasoning_items",
              "audio", "images", "annotations")


def _may_fall_back(exc: Exception, chunks: list) -> bool:
    """Whether ``exc`` is LiteLLM's ``MidStreamFallbackError`` for a stream that had generated nothing when it
    broke, on which ``Router`` falls back (``stream_with_fallbacks``: before its first chunk,
    ``is_pre_first_chunk``, or after chunks that carried no content, such as the role alone)."""
    from litellm.exceptions import MidStreamFallbackError  # imported with the streaming handler we patch

    if not isinstance(exc, MidStreamFallbackError):
        return False
    return exc.is_pre_first_chunk is True or not (exc.generated_content or any(map(_generated, chunks)))


def _generated(chunk: Any) -> bool:
    """Whether the first choice of a LiteLLM chunk (``ModelResponseStream``) carried anything generated."""
    choices = getattr(chunk, "choices", None)
    delta = getattr(choices[0], "delta", None) if choices else None
    return delta is not None and any(getattr(delta, name, None) for name in _GENERATED)


def _texts(chunks: list) -> Iterator[str]:
    """The text deltas of the first choice of LiteLLM's chunks (``ModelResponseStream``)."""
    for chunk in chunks:
        choices = getattr(chunk, "choices", None)
        text = getattr(getattr(choices[0], "delta", None), "content", None) if choices else None
        if isinstance(text, str):
            yield text


def _provider_usage(instance: Any) -> bool:
    """Whether a chunk of the stream carried the provider's usage."""
    return any(getattr(chunk, "usage", None) is not None for chunk in instance.chunks)


def _patches(module: Any) -> PatchSet:
    patches = PatchSet("litellm.patch")
    patches.add(module.CustomStreamWrapper, "finish_reason_handler", _stream_ended)
    patches.add(module.CustomStreamWrapper, "_handle_stream_fallback_error", _stream_failed)
    return patches


_PATCHES = SharedPatches("litellm.patch", {MODULE: _patches})
use = _PATCHES.use
"""``use()``: watch LiteLLM's stream ends and failures until the returned use is removed
(:class:`~._patch.SharedPatches`)."""
