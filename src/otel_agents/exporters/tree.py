"""A text view of finished spans: one line per span, indented under its parent.

Used by the examples and handy in a REPL::

    print(format_span_tree(in_memory_exporter.get_finished_spans()))

Each line is ``{name} [{kind}]`` followed by what matters for that kind: token
counts for model spans, arguments and result for tool spans, ``ERROR`` for
failed spans, the abandoned marker for streams cut short. Line breaks, tabs and
other control characters in names and values are printed escaped (``\\n``,
``\\t``, ``\\x1b``), so every span stays on its own line.
"""

from __future__ import annotations

from typing import Iterable

from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import StatusCode

from ..semconv import attributes as A


# C0 controls and DEL → escapes; ``\n``/``\r``/``\t`` get their short forms.
_ESCAPES = {c: f"\\x{c:02x}" for c in (*range(0x20), 0x7F)} | {0x0A: "\\n", 0x0D: "\\r", 0x09: "\\t"}


def _escape(text: str) -> str:
    """``text`` with control characters escaped (one line)."""
    return text.translate(_ESCAPES)


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
        parent = s.parent.span_id if s.parent and s.parent.span_id in ids and s.parent.span_id != s.context.span_id else None
        children.setdefault(parent, []).append(s)
    lines: list[str] = []
    stack = [(s, 0) for s in reversed(children.get(None, []))]
    while stack:  # depth first without recursion: any depth prints
        s, depth = stack.pop()
        kind = (s.attributes or {}).get(A.OTEL_AGENTS_SPAN_KIND, "-")
        lines.append(f"{'  ' * depth}{_escape(f'{s.name} [{kind}]{_details(s)}')}")
        stack.extend((c, depth + 1) for c in reversed(children.get(s.context.span_id, [])))
    return "\n".join(lines)
