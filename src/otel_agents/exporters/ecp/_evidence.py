"""``evaluation_context``: one evidence line per semantic step, indented by depth.

The format is stable and documented (``docs/ecp.md``) so that ECP
``text_match`` graders (``contains``, ``regex``) can target it. Each line is
``{two spaces per depth}{keyword} {name}[ key=value ...]``:

=========  =====================================================================
keyword    line
=========  =====================================================================
agent      ``agent NAME`` — an agent was entered; a sub-agent adds
           `` delegated_by=PARENT`` (the delegation)
workflow   ``workflow NAME`` — a multi-agent orchestration (crew, graph, workflow)
model      ``model MODEL[ finish=R1,R2][ tokens_in=N][ tokens_out=N][ stream=abandoned]``
tool       ``tool NAME args=JSON status=ok|error latency_ms=N``
skill      ``skill NAME[ args=JSON] status=ok|error latency_ms=N``
retrieval  ``retrieval SOURCE[ documents=N]``
error      ``error KEYWORD NAME: DESCRIPTION`` — after the failed step's own
           lines (``DESCRIPTION`` is ``Type: message``, or the type alone when
           content capture is off)
paused     ``paused KEYWORD NAME`` — the run stopped here waiting for a human
thought    ``thought TEXT`` — a model's reasoning, only with ``include_thoughts``
=========  =====================================================================

Depth counts only ancestors that have a line of their own, so the generic
chain spans a framework adds between steps do not shift the indentation.
``args`` is compact JSON with sorted keys; names, arguments and descriptions
are kept on one line and cut with ``…`` (names 120, arguments 300, other text
500 characters). Lines follow start order, depth first.
"""

from __future__ import annotations

import json
from typing import Any

from opentelemetry.sdk.trace import ReadableSpan

from ...semconv import attributes as A
from . import _facts as F
from ._runs import RunTree

NAME_LIMIT = 120
ARGS_LIMIT = 300
TEXT_LIMIT = 500
INDENT = "  "


def one_line(text: Any, limit: int) -> str:
    """``text`` on one line (CR, LF, tab → space), at most ``limit`` characters (cut ends with ``…``)."""
    s = str(text).replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\t", " ")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def compact_json(value: Any) -> str:
    return json.dumps(F.plain(value), ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str)


def keyword(span: ReadableSpan) -> str | None:
    """The evidence keyword of a span, or ``None`` when it is not a step of its own."""
    k = F.kind(span)
    if k == "agent":
        return "agent"
    if k == "chain":
        return "workflow" if F.is_workflow(span) else None
    if k == "model":
        return "model"
    if k == "tool":
        return "tool"
    if k == "skill":
        return "skill"
    if k == "retriever":
        return "retrieval"
    return None  # embeddings and plain chains: plumbing, not steps


def step_line(span: ReadableSpan, kw: str, tree: RunTree) -> str:
    """The step line of one span (without indentation)."""
    name = one_line(F.display_name(span), NAME_LIMIT)
    parts = [kw, name]
    if kw == "agent":
        parent = tree.nearest_agent(span)
        if parent is not None:
            parts.append(f"delegated_by={one_line(F.display_name(parent), NAME_LIMIT)}")
    elif kw == "model":
        reasons = F.finish_reasons(span)
        if reasons:
            parts.append("finish=" + one_line(",".join(reasons), NAME_LIMIT))
        inp, out, _ = F.usage(span)
        if inp is not None:
            parts.append(f"tokens_in={inp}")
        if out is not None:
            parts.append(f"tokens_out={out}")
        if F.flag(span, A.OTEL_AGENTS_STREAM_ABANDONED):
            parts.append("stream=abandoned")
    elif kw in ("tool", "skill"):
        if kw == "tool" or F.is_tool_call(span):
            parts.append("args=" + one_line(compact_json(F.tool_arguments(span)), ARGS_LIMIT))
        parts.append(f"status={'error' if F.is_error(span) else 'ok'}")
        parts.append(f"latency_ms={round(F.duration_ms(span))}")
    elif kw == "retrieval":
        docs = F.parse_json(F.attrs(span).get(A.GEN_AI_RETRIEVAL_DOCUMENTS))
        if isinstance(docs, list):
            parts.append(f"documents={len(docs)}")
    return " ".join(parts)


def evidence(tree: RunTree, *, include_thoughts: bool = False) -> tuple[str, int]:
    """The ``evaluation_context`` text of a run and its number of step lines."""
    lines: list[str] = []
    steps = 0
    # ("enter" | "exit", span, depth); exits write the error/paused lines after the subtree.
    stack: list[tuple[str, ReadableSpan, int, str | None]] = [
        ("enter", s, 0, None) for s in reversed(tree.children.get(None, []))]
    while stack:
        action, span, depth, kw = stack.pop()
        if action == "exit":
            name = one_line(F.display_name(span), NAME_LIMIT)
            if F.is_error(span) and keyword(span) is not None:
                lines.append(f"{INDENT * depth}error {kw} {name}: {one_line(F.error_text(span), TEXT_LIMIT)}")
            if F.flag(span, A.OTEL_AGENTS_PAUSED):
                lines.append(f"{INDENT * depth}paused {kw} {name}")
            continue
        kw = keyword(span)
        child_depth = depth
        if kw is not None:
            lines.append(INDENT * depth + step_line(span, kw, tree))
            steps += 1
            child_depth = depth + 1
            if include_thoughts and kw == "model":
                lines += [f"{INDENT * child_depth}thought {one_line(t, TEXT_LIMIT)}" for t in F.reasoning_texts(span)]
            stack.append(("exit", span, depth, kw))
        elif F.flag(span, A.OTEL_AGENTS_PAUSED):
            stack.append(("exit", span, depth, F.kind(span) or "span"))
        for child in reversed(tree.children.get(span.context.span_id, [])):
            stack.append(("enter", child, child_depth, None))
    return "\n".join(lines), steps
