"""A text view of finished spans: one line per span, indented under its parent.

Used by the examples and handy in a REPL::

    print(format_span_tree(in_memory_exporter.get_finished_spans()))

Each line is ``{name} [{kind}]`` followed by what matters for that kind: token
counts for model spans, arguments and result for tool spans, ``ERROR`` for
failed spans, the abandoned marker for streams cut short.
"""

from __future__ import annotations

from typing import Iterable

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from ..semconv import attributes as A


def _details(span: ReadableSpan) -> str:
    a = span.attributes or {}
    kind = a.get(A.OTEL_AGENTS_SPAN_KIND)
    parts = []
    if kind == "model" and A.GEN_AI_USAGE_INPUT_TOKENS in a:
        parts.append(f"tokens in={a.get(A.GEN_AI_USAGE_INPUT_TOKENS)} out={a.get(A.GEN_AI_USAGE_OUTPUT_TOKENS)}")
    if kind in ("tool", "skill") and A.GEN_AI_TOOL_CALL_ARGUMENTS in a:
        parts.append(f"{a.get(A.GEN_AI_TOOL_CALL_ARGUMENTS)} -> {a.get(A.GEN_AI_TOOL_CALL_RESULT)}")
    if a.get(A.OTEL_AGENTS_STREAM_ABANDONED):
        parts.append("abandoned")
    if a.get(A.OTEL_AGENTS_PAUSED):
        parts.append("paused")
    if span.status.status_code is StatusCode.ERROR:
        parts.append("ERROR")
    return "".join(f"  {p}" for p in parts)


def format_span_tree(spans: Iterable[ReadableSpan]) -> str:
    """The spans as an indented tree, children in start order; spans whose parent is
    not among ``spans`` are roots. Returns the text (no trailing newline)."""
    spans = sorted(spans, key=lambda s: s.start_time or 0)
    ids = {s.context.span_id for s in spans}
    children: dict[int | None, list[ReadableSpan]] = {}
    for s in spans:
        parent = s.parent.span_id if s.parent and s.parent.span_id in ids else None
        children.setdefault(parent, []).append(s)
    lines: list[str] = []

    def walk(parent: int | None, depth: int) -> None:
        for s in children.get(parent, []):
            kind = (s.attributes or {}).get(A.OTEL_AGENTS_SPAN_KIND, "-")
            lines.append(f"{'  ' * depth}{s.name} [{kind}]{_details(s)}")
            walk(s.context.span_id, depth + 1)

    walk(None, 0)
    return "\n".join(lines)
