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
what the provider did not send, by the span layer: a stream without a finish reason is cut short
(:meth:`~otel_agents._spans.outcome.OutcomeSetters.mark_incomplete`: status ERROR, ``error.type``
``stream_incomplete``; no finish reason written after it), and a stream no chunk of which carried usage, or one
cut short, gets no token counts (:meth:`~otel_agents._spans.model.ModelSetters.refuse_usage`). A stream the caller
leaves early never reaches ``finish_reason_handler``: its span stays the framework's to end (abandoned).

:func:`use` installs the wrapper (now, or when the module is imported: importing LiteLLM costs seconds) for as
long as one instrumentor uses it: those of the frameworks that stream through LiteLLM (CrewAI; smolagents, the
OpenAI Agents SDK and Agno, whose LiteLLM models run this same code).
Sources: LiteLLM's ``streaming_handler.py`` (``finish_reason_handler``, ``__next__``/``__anext__``: it is called
when the provider's stream is exhausted, with ``received_finish_reason`` / ``intermittent_finish_reason`` unset
when none came) and ``streaming_chunk_builder_utils.py`` (``calculate_usage``: ``token_counter`` for the counts
no chunk gave).
"""

from __future__ import annotations

from typing import Any

from .._spans import guard
from ._patch import Patch, SharedPatches
from ._sdk_client import current_model_span

MODULE = "litellm.litellm_core_utils.streaming_handler"
TERMINAL = "finish_reason"  # what a cut stream never sent (the chunk LiteLLM makes its own "stop" for)


def _stream_ended(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    """``CustomStreamWrapper.finish_reason_handler``: the provider's stream has ended; tell the current model
    span what it did not send, then let LiteLLM build its closing chunk."""
    with guard("litellm.stream_end"):
        span = current_model_span()
        if span is not None:
            cut = not (instance.received_finish_reason or instance.intermittent_finish_reason)
            if cut:
                span.mark_incomplete(TERMINAL)
            if cut or not any(getattr(chunk, "usage", None) is not None for chunk in instance.chunks):
                span.refuse_usage()
    return wrapped(*args, **kwargs)


_PATCHES = SharedPatches("litellm.patch", {
    MODULE: lambda module: Patch(module.CustomStreamWrapper, "finish_reason_handler", _stream_ended)})
use = _PATCHES.use
"""``use()``: watch LiteLLM's stream ends until the returned use is removed (:class:`~._patch.SharedPatches`)."""
