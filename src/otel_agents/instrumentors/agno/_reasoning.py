"""Agno's reasoning phase: what its reasoning agent says is ``reasoning``, never an answer.

With ``reasoning_model=`` (or ``reasoning_agent=``) on an ``Agent`` or ``Team``,
Agno runs a separate reasoning agent before the answer, through
``ReasoningManager.reason``/``areason`` (generators of reasoning events). That
agent's ``Agent.run`` and its model requests are spans like any other, but what
they produce is the thinking Agno hands to the main model — as
``reasoning_content``, or (OpenAI, Groq and similar reasoners) as the reasoning
agent's plain answer text. We wrap ``reason``/``areason`` so that each of their
steps runs in a context marked "reasoning"; spans opened there are reasoning
spans (:func:`is_reasoning`): a model span's output text becomes ``reasoning``
parts, and the reasoning agent's own output is an assistant message of
``reasoning`` parts (``gen_ai.output.messages``), never ``output.value`` text.

The message Agno then appends for the main model
(``<thinking>\\n{reasoning}\\n</thinking>`` with the same ``reasoning_content``)
is one ``reasoning`` part (see :func:`._convert.message_parts`).
"""

from __future__ import annotations

import weakref
from typing import Any

from opentelemetry import context as otel_context

from ..._spans import AsyncStepIterator, ChatMessage, Part, ReasoningPart, SemanticSpan, StepIterator, TextPart, probes

_REASONING = otel_context.create_key("otel_agents.agno.reasoning")
_REASONING_SPANS: "weakref.WeakSet[SemanticSpan]" = weakref.WeakSet()


def in_reasoning_phase() -> bool:
    """Whether the code running now is inside Agno's reasoning phase."""
    return otel_context.get_value(_REASONING) is True


def mark(span: SemanticSpan) -> None:
    """Remember ``span`` as opened in the reasoning phase."""
    _REASONING_SPANS.add(span)


def is_reasoning(span: SemanticSpan) -> bool:
    """Whether ``span`` was opened in the reasoning phase."""
    return span in _REASONING_SPANS


def as_reasoning(message: ChatMessage) -> ChatMessage:
    """``message`` with its text parts turned into ``reasoning`` parts (other parts unchanged)."""
    parts: list[Part] = [ReasoningPart(p.content) if isinstance(p, TextPart) else p for p in message.parts]
    return ChatMessage(message.role, parts=parts, finish_reason=message.finish_reason, name=message.name)


def _reasoning_context() -> otel_context.Context:
    """The current context, marked "reasoning" (computed at each step: the step's own current context)."""
    return otel_context.set_value(_REASONING, True)


def reason_wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
    """A wrapt wrapper for ``ReasoningManager.reason`` and ``areason``: their steps run marked "reasoning"."""
    result = wrapped(*args, **kwargs)
    if probes.is_async_iterator(result):
        return AsyncStepIterator(result, _reasoning_context)
    if probes.is_iterator(result):
        return StepIterator(result, _reasoning_context)
    return result
