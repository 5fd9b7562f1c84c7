"""One run's spans → one ECP ``agent/step`` result envelope.

The mapping is ``../shared/design/ecp-envelope.md``; field by field it is
documented in ``docs/ecp.md`` and its shape is the JSON Schema
``otel_agents/exporters/ecp_envelope.schema.json``.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from ...semconv import attributes as A
from . import _facts as F
from ._cost import run_cost
from ._evidence import evidence
from ._runs import Run, RunTree

# Content-bearing gen_ai.* attributes stay out of ``logs``: the content is
# already in public_output, tool_calls and evaluation_context.
_CONTENT_KEYS = frozenset({
    A.GEN_AI_INPUT_MESSAGES, A.GEN_AI_OUTPUT_MESSAGES, A.GEN_AI_SYSTEM_INSTRUCTIONS,
    A.GEN_AI_TOOL_DEFINITIONS, A.GEN_AI_TOOL_CALL_ARGUMENTS, A.GEN_AI_TOOL_CALL_RESULT,
    A.GEN_AI_RETRIEVAL_DOCUMENTS, A.GEN_AI_RETRIEVAL_QUERY_TEXT, A.GEN_AI_AGENT_DESCRIPTION,
})
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def build_envelope(run: Run, *, include_thoughts: bool = False) -> dict[str, Any]:
    """The ECP result envelope of one run (see the module docstring for the mapping)."""
    tree = RunTree(run)
    spans = run.spans
    models = [s for s in spans if F.kind(s) == "model"]
    tool_calls = [_tool_call(s, tree) for s in spans if F.is_tool_call(s)]
    context, steps = evidence(tree, include_thoughts=include_thoughts)
    tool_errors = sum(1 for c in tool_calls if c["status"] == "error")
    envelope: dict[str, Any] = {
        "status": "paused" if any(F.flag(s, A.OTEL_AGENTS_PAUSED) for s in spans) else "done",
        "public_output": F.output_text(run.root) if run.root is not None else None,
        "tool_calls": tool_calls,
        "evaluation_context": context,
        "logs": json.dumps([_log_record(s) for s in spans], ensure_ascii=False, separators=(",", ":"),
                           default=str),
    }
    usage = _usage(models)
    if usage is not None:
        envelope["usage"] = usage
    envelope["trace_id"] = F.trace_id_hex(run.trace_id)
    envelope["metrics"] = {
        "duration_ms": _duration_ms(spans),
        "steps": steps,
        "model_calls": len(models),
        "tool_calls": len(tool_calls),
        "tool_errors": tool_errors,
        "tool_success_rate": round((len(tool_calls) - tool_errors) / len(tool_calls), 4) if tool_calls else None,
        "cost_usd": run_cost(models),
    }
    envelope["agents"] = [_agent(s, tree) for s in spans if F.kind(s) == "agent"]
    if run.incomplete:
        envelope["incomplete"] = run.incomplete
    return envelope


def _tool_call(span: ReadableSpan, tree: RunTree) -> dict[str, Any]:
    agent = tree.nearest_agent(span)
    return {
        "name": F.display_name(span),
        "arguments": F.tool_arguments(span),
        "id": F.tool_call_id(span),
        "result": F.tool_result(span),
        "status": "error" if F.is_error(span) else "ok",
        "error": F.error_text(span),
        "latency_ms": F.duration_ms(span),
        "agent": F.display_name(agent) if agent is not None else None,
        "span_id": F.span_id_hex(span.context.span_id),
    }


def _agent(span: ReadableSpan, tree: RunTree) -> dict[str, Any]:
    parent = tree.nearest_agent(span)
    return {
        "name": F.display_name(span),
        "span_id": F.span_id_hex(span.context.span_id),
        "parent": F.display_name(parent) if parent is not None else None,
        "parent_span_id": F.span_id_hex(parent.context.span_id) if parent is not None else None,
        "status": "error" if F.is_error(span) else "ok",
    }


def _usage(models: list[ReadableSpan]) -> dict[str, int | None] | None:
    """Token usage summed over model spans; ``None`` when none reported any."""
    sums: list[int | None] = [None, None, None]
    for span in models:
        for i, count in enumerate(F.usage(span)):
            if count is not None:
                sums[i] = (sums[i] or 0) + count
    if sums == [None, None, None]:
        return None
    return {"input_tokens": sums[0], "output_tokens": sums[1], "total_tokens": sums[2]}


def _duration_ms(spans: list[ReadableSpan]) -> float:
    """Wall time from the first start to the last end (late streams included)."""
    starts = [s.start_time for s in spans if s.start_time]
    ends = [s.end_time for s in spans if s.end_time]
    if not starts or not ends:
        return 0.0
    return round(max(0, max(ends) - min(starts)) / 1e6, 3)


def _iso(ns: int | None) -> str | None:
    if not ns:
        return None
    return (_EPOCH + timedelta(microseconds=ns // 1000)).isoformat().replace("+00:00", "Z")


def _log_record(span: ReadableSpan) -> dict[str, Any]:
    status = span.status.status_code if span.status is not None else StatusCode.UNSET
    record: dict[str, Any] = {
        "span_id": F.span_id_hex(span.context.span_id),
        "parent_id": F.span_id_hex(span.parent.span_id) if span.parent is not None else None,
        "kind": F.kind(span),
        "name": span.name,
        "start": _iso(span.start_time),
        "duration_ms": F.duration_ms(span),
        "status": status.name.lower(),
        "attributes": {k: F.plain(v) for k, v in sorted(F.attrs(span).items()) if _semantic_key(k)},
    }
    if status is StatusCode.ERROR:
        record["error"] = F.error_text(span)
    return record


def _semantic_key(key: str) -> bool:
    if key in _CONTENT_KEYS:
        return False
    return key.startswith(("gen_ai.", "otel_agents.")) or key == A.ERROR_TYPE
