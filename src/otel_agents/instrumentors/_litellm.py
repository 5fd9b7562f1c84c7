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
long as one instrumentor uses it: those of the frameworks that stream through LiteLLM (CrewAI; smolagents and the
OpenAI Agents SDK, whose LiteLLM models run this same code).
Sources: LiteLLM's ``streaming_handler.py`` (``finish_reason_handler``, ``__next__``/``__anext__``: it is called
when the provider's stream is exhausted, with ``received_finish_reason`` / ``intermittent_finish_reason`` unset
when none came) and ``streaming_chunk_builder_utils.py`` (``calculate_usage``: ``token_counter`` for the counts
no chunk gave).
"""

from __future__ import annotations

import sys
import threading
from typing import Any

import wrapt
from opentelemetry import trace

from .._spans import guard, semantic_span_for
from ..semconv import Kind
from ._patch import Patch

MODULE = "litellm.litellm_core_utils.streaming_handler"
TERMINAL = "finish_reason"  # what a cut stream never sent (the chunk LiteLLM makes its own "stop" for)

_lock = threading.Lock()
_state: dict[str, Any] = {"users": 0, "patch": None, "hooked": False}


def _stream_ended(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    """``CustomStreamWrapper.finish_reason_handler``: the provider's stream has ended; tell the current model
    span what it did not send, then let LiteLLM build its closing chunk."""
    with guard("litellm.stream_end"):
        span = semantic_span_for(trace.get_current_span())
        if span is not None and span.kind is Kind.MODEL and not span.ended:
            cut = not (instance.received_finish_reason or instance.intermittent_finish_reason)
            if cut:
                span.mark_incomplete(TERMINAL)
            if cut or not any(getattr(chunk, "usage", None) is not None for chunk in instance.chunks):
                span.refuse_usage()
    return wrapped(*args, **kwargs)


def _on_import(module: Any) -> None:
    with guard("litellm.patch"), _lock:
        if _state["users"] and _state["patch"] is None:
            _state["patch"] = Patch(module.CustomStreamWrapper, "finish_reason_handler", _stream_ended)


class Use:
    """One instrumentor's use of the wrapper (:func:`use`); :meth:`remove` ends it (the wrapper comes off with the
    last use), as a :class:`~._patch.Patch` is taken off."""

    __slots__ = ("_removed",)

    def __init__(self) -> None:
        self._removed = False

    def remove(self) -> None:
        with _lock:
            if self._removed:
                return
            self._removed = True
            _state["users"] -= 1
            patch = _state["patch"] if not _state["users"] else None
            if patch is not None:
                _state["patch"] = None
        if patch is not None:
            patch.remove()


def use() -> Use:
    """Watch LiteLLM's stream ends until the returned use is removed: the wrapper now if LiteLLM's stream module
    is imported, else when it is."""
    with _lock:
        _state["users"] += 1
        hook = not _state["hooked"]
        _state["hooked"] = True
    if hook:  # once per process: wrapt cannot take a post-import hook off (it checks the users when it fires)
        wrapt.register_post_import_hook(_on_import, MODULE)
    elif MODULE in sys.modules:
        _on_import(sys.modules[MODULE])
    return Use()
