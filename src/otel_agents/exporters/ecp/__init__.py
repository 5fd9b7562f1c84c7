"""The ECP exporter: fold span trees into Evaluation Context Protocol result envelopes.

The same run then feeds an OpenTelemetry backend and ECP graders, with no
per-framework adapter: the instrumentors already produced the spans.

Usage — fold finished spans you already have (a test exporter, a file)::

    from otel_agents.exporters.ecp import fold
    envelopes = fold(spans)            # one dict per run

or fold live, as runs finish::

    from otel_agents.exporters.ecp import ECPFoldingProcessor
    processor = ECPFoldingProcessor(on_envelope=print)   # or drain processor.queue
    tracer_provider.add_span_processor(processor)

or write envelopes as JSON lines from an exporter (the ``ecp`` entry point of
``opentelemetry-instrument --traces_exporter ecp``; see :mod:`._exporter`)::

    provider.add_span_processor(BatchSpanProcessor(ECPFileExporter("envelopes.jsonl", tracer_provider=provider)))

or re-fold stored traces offline: ``otel-agents fold TRACES.jsonl -o ENVELOPES.jsonl``
(see :mod:`otel_agents.exporters.file`), which streams through :class:`StreamFolder`:
each trace is folded once it is idle (``--idle-spans``), memory bounded by the largest trace plus that window.

What is one run: the subtree of each outermost semantic span of a trace (the
first span, from the top down, with ``otel_agents.span.kind`` or a kind of
another vocabulary, below); non-semantic ancestors such as an HTTP server span
are ignored, so a trace may hold several runs.

Traces recorded by others fold too (issue 25): a span without our kind is read
by the vocabulary reader that fits it — OTel GenAI ``gen_ai.operation.name``
(PydanticAI's native instrumentation included), OpenInference
``openinference.span.kind``, OpenLLMetry ``traceloop.span.kind`` — see
:mod:`._vocabularies` and the table in ``docs/ecp.md``. Mixed traces fold as one
run; another instrumentation's view of one of our steps is not a second step (by
name and time, or by its instrumentation scope naming a framework we instrumented: see
:func:`._runs.drop_sibling_views`);
spans of an unknown vocabulary are plain spans; a foreign run with no output, tool
call, model call or error gives no envelope.

Secrets: every span without ``otel_agents.span.kind`` (another vocabulary's, a side
effect's, a hand-made one) is redacted as it is read, on every path above, with the
span layer's rules (:mod:`otel_agents._spans.redaction`): its attributes (a secret-named
key's value becomes ``[REDACTED]``; secret-named keys and secret shapes inside every
string), its name and its status description (:mod:`._redaction`; an attribute value when the fold
first reads it: most never reach the envelope). Our own spans were redacted when they were written.

The envelope (``docs/ecp.md`` shows an example; the JSON Schema is
:data:`SCHEMA_PATH`):

* ``status`` — ``"paused"`` when any span of the run carries
  ``otel_agents.run.paused``, else ``"done"``.
* ``public_output`` — the root's output as text: a string as is; chat messages
  → the last assistant text; structured output → compact JSON; ``null`` when
  not recorded (content capture off).
* ``tool_calls`` — one per tool span and per skill span used as a tool call
  (``gen_ai.operation.name = execute_tool``), in start order: ``name``,
  ``arguments`` (always an object: non-objects are wrapped as
  ``{"input": value}``), ``id``, ``result``, ``status`` (``ok``/``error``),
  ``error``, ``latency_ms``, ``agent`` (nearest enclosing agent), ``span_id``.
* ``evaluation_context`` — evidence lines: steps (a model's with the tool calls
  it requested), side effects and plain spans (format in
  :mod:`otel_agents.exporters.ecp._evidence`, :mod:`._effects` and ``docs/ecp.md``). A model's
  reasoning is left out unless ``include_thoughts=True``.
* ``logs`` — a JSON string: the run's spans as records (``span_id``,
  ``parent_id``, ``kind``, ``name``, ``start``, ``duration_ms``, ``status``,
  ``error``, and the non-content ``gen_ai.*``/``otel_agents.*``/``error.type``
  attributes).
* ``usage`` — ``input_tokens``/``output_tokens``/``total_tokens`` summed over
  model spans only; absent when no model span reported usage.
* extensions (ECP allows extra fields): ``trace_id``; ``metrics``
  (``duration_ms``, ``steps`` = step lines of ``evaluation_context``,
  ``model_calls``, ``tool_calls``, ``tool_errors``, ``errors``, ``effects``
  (side-effect spans of other instrumentations: HTTP, DB, messaging, RPC), ``tool_success_rate``
  (``null`` without tool calls), ``cost_usd`` (the cost the framework reported on the run's root
  span, ``llm.cost.total``, when it did — the Claude Agent SDK's ``total_cost_usd`` —; else
  ``genai-prices``; ``null`` unless every model call could be priced)); ``agents`` (each agent span with its
  parent agent: the delegation tree); ``incomplete`` (only on a run the folding
  processor had to fold before it finished: why).

Every envelope passes ``ecp_runtime.conformance.validate_step_result``.
"""

from __future__ import annotations

import json
import logging
from importlib import resources
from typing import Any, Iterable

from opentelemetry.sdk.trace import ReadableSpan

from ._envelope import build_envelope
from ._exporter import ECPFileExporter
from ._gather import TraceGatherer
from ._processor import ECPFoldingProcessor
from ._runs import Run, group_runs
from ._stream import StreamFolder

logger = logging.getLogger("otel_agents")

SCHEMA_PATH = resources.files("otel_agents.exporters").joinpath("ecp_envelope.schema.json")
"""The JSON Schema (draft 2020-12) of our envelope: the ECP step result plus our extensions."""


def fold(spans: Iterable[ReadableSpan], *, include_thoughts: bool = False,
         problems: list[str] | None = None) -> list[dict[str, Any]]:
    """Fold finished spans into ECP result envelopes, one per run.

    Args:
        spans: SDK ``ReadableSpan``s in any order, from any number of traces.
            Spans of one run should all be present; a span whose parent is
            missing starts a run of its own.
        include_thoughts: add models' reasoning parts (``thought`` lines) to
            ``evaluation_context``; off by default (no raw chain-of-thought).
        problems: receives one message per trace with duplicate span ids, and
            one per trace with spans on a parent cycle (dropped); when
            ``None``, each is logged as a WARNING.

    Returns:
        The envelopes (JSON-ready dicts), ordered by the start time of each
        run's root.
    """
    found: list[str] = []
    runs = group_runs(spans, problems=found)
    if problems is not None:
        problems.extend(found)
    else:
        for problem in found:
            logger.warning("otel_agents: %s", problem)
    runs.reverse()
    envelopes = []
    while runs:  # each run is let go once folded: its span copies are freed early (less memory, less GC work)
        envelope = build_envelope(runs.pop(), include_thoughts=include_thoughts)
        if envelope is not None:
            envelopes.append(envelope)
    return envelopes


def envelope_schema() -> dict[str, Any]:
    """The envelope's JSON Schema as a dict (see :data:`SCHEMA_PATH`)."""
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


__all__ = ["ECPFileExporter", "ECPFoldingProcessor", "Run", "SCHEMA_PATH", "StreamFolder", "TraceGatherer", "envelope_schema", "fold",
           "group_runs"]
