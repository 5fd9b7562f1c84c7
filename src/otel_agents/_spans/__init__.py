"""The span layer: the one place that opens, parents, fills and ends spans.

Instrumentors call it; they never touch the OTel SDK or set kind attributes
themselves. It gives:

* :class:`Telemetry` (:mod:`.telemetry`) / :class:`SemanticSpan` (:mod:`.span`) — open a
  span of a semantic kind with an explicit parent or the current context; typed setters
  for inputs, outputs, messages, tools, retrieval (:mod:`.content`), model and usage
  (:mod:`.model`); error and control-flow recording (:mod:`.outcome`); kind attributes at
  start and again at end; GenAI metrics; the vocabularies written
  (``OTEL_AGENTS_VOCABULARIES``, :mod:`otel_agents.semconv.vocabularies`).
* the content policy (:mod:`.settings`): one switch
  (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, default on) over
  every content-bearing attribute and span name; the safe JSON encoder, which
  reads plain data only and never runs the user's code, and the JSON-preserving
  truncation (:mod:`.encoding`); redaction (:mod:`.redaction`); the one path every
  attribute value, span name and stack trace takes — to JSON-able → redact → fit
  the budget (:mod:`.pipeline`);
* :mod:`.probes` — guarded probes of user objects (attributes, protocols, ``str``)
  that never raise into the framework;
* :class:`Activation` — a span current around a block, detached in the context it was attached in
  (:mod:`.activation`; what :meth:`SemanticSpan.activate` returns);
* :class:`StepIterator` / :class:`AsyncStepIterator` — run each step of a stream inside a
  context (the span's), never holding it across a ``yield`` (:mod:`.steps`);
* :func:`wrap_stream` — ends spans with their streams, abandoned ones included, and a model's stream that ended
  without its terminal event as cut short (``missing``: :meth:`SemanticSpan.mark_incomplete`)
  (:func:`watch_stream` when the framework hands the stream out itself); :class:`ChoiceFinishes` — the rule of
  when a streamed chat completion is whole (every choice got its ``finish_reason``), a ``missing`` for both;
* :func:`generic_part` — an item of a type an instrumentor does not know, kept with its fields;
* :func:`from_finaliser` / :func:`finalize` — a finaliser's work (ending an abandoned stream's span), never run
  inside the garbage collector where it could wait for a lock its own thread holds (:mod:`.finalisers`);
* :func:`in_forked_child` — what a forked child forgets: every map of open spans and runs starts empty there
  (the parent's spans are the parent's to end);
* :class:`SpanRegistry` — the bounded run-id → span map;
* :func:`guard` / :func:`guarded` — the never-raise guard for every hook.

Decision on ``opentelemetry-util-genai`` (1.3b0, evaluated for this layer): we
follow its attribute names, content modes and metric instruments, but do not
open spans through its ``TelemetryHandler``. Its invocations own the span and
its context attachment from ``start`` to ``stop``, which fits wrapped calls but
not callback frameworks whose start and end arrive in different contexts; it
reads the content mode once with an off default, has no ``chain``/``skill``
kinds, no truncation, redaction or never-raise guard, and sets the GenAI
attributes itself from its own message types, so every one of our additions
(OpenInference/Langfuse markers, budgets, redaction) would have to be patched
onto spans it finishes. It is beta and moving repositories; we revisit when it
is stable.
"""

from .activation import Activation, settle_context
from .encoding import encode, fit_json, fit_text, to_jsonable
from .entered import EnteredStack
from .finalisers import finalize, from_finaliser, in_forked_child, prepare as prepare_finalisers
from .guard import guard, guarded, report_internal_error
from . import probes
from .messages import (BlobPart, ChatMessage, FilePart, GenericPart, Part, ReasoningPart, TextPart, ToolCallPart,
                       ToolCallRequest, ToolCallResponsePart, ToolDefinition, UriPart, generic_part, media_part,
                       modality_of)
from .model import output_type_of
from .registry import SpanRegistry
from .run_context import current_run_attributes, merged_metadata, pop_run_attributes, push_run_attributes
from .settings import Settings
from .span import SemanticSpan, Telemetry, Usage, non_recording_span, otel_value, semantic_span_for
from .usage import token_count, token_sum
from .steps import AsyncStepIterator, StepIterator, call_target, entered, in_context
from .telemetry import instrumentation_enabled
from .streams import ChoiceFinishes, awaited, watch_stream, wrap_stream

__all__ = [
    "Activation", "AsyncStepIterator", "EnteredStack", "call_target", "StepIterator", "BlobPart", "ChatMessage", "FilePart", "GenericPart", "Part", "ReasoningPart", "TextPart", "ToolCallPart",
    "ToolCallResponsePart", "ToolDefinition", "UriPart", "generic_part", "media_part", "modality_of", "SemanticSpan", "Settings", "SpanRegistry", "Telemetry", "ToolCallRequest", "Usage",
    "current_run_attributes", "probes", "encode", "finalize", "from_finaliser", "in_forked_child", "prepare_finalisers", "fit_json", "fit_text", "guard", "guarded", "instrumentation_enabled", "non_recording_span", "otel_value", "output_type_of",
    "merged_metadata", "pop_run_attributes", "push_run_attributes", "report_internal_error", "semantic_span_for", "settle_context", "to_jsonable", "token_count", "token_sum",
    "awaited", "ChoiceFinishes", "watch_stream", "wrap_stream",
]
