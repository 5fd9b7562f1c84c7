"""``evaluation_context``: one evidence line per semantic step, indented by depth.

The format is stable and documented (``docs/ecp.md``) so that ECP
``text_match`` graders (``contains``, ``regex``) can target it. Each line is
``{two spaces per depth}{keyword} {name}[ key=value ...]``:

=========  =====================================================================
keyword    line
=========  =====================================================================
agent      ``agent NAME`` — an agent was entered; a sub-agent adds
           `` delegated_by=PARENT`` (the delegation: its enclosing agent, or
           the agent that handed off to it)
workflow   ``workflow NAME`` — a multi-agent orchestration (crew, graph, workflow)
model      ``model MODEL[ finish=R1,R2][ tokens_in=N][ tokens_out=N][ stream=abandoned][ calls=T1,T2]``
           (``calls``: the tools that turn requested, in order, names only)
tool       ``tool NAME args=JSON status=ok|error latency_ms=N``
skill      ``skill NAME[ args=JSON] status=ok|error latency_ms=N``
retrieval  ``retrieval SOURCE[ documents=N]``
error      ``error KEYWORD NAME: DESCRIPTION`` — after the failed span's own
           lines (``DESCRIPTION`` is ``Type: message``, or the type alone when
           content capture is off); for every failed step, the failed run root
           whatever its kind, and a failed chain where the failure started
           (``KEYWORD`` is then the span kind, e.g. ``chain``)
paused     ``paused KEYWORD NAME`` — the run stopped here waiting for a human
stopped    ``stopped KEYWORD NAME reason=R`` — the run ended other than by its agent
           answering (``otel_agents.run.stop_reason``: ``max_turns``, ``budget``,
           ``termination``, ``guardrail``, ``cancelled``)
thought    ``thought TEXT`` — a model's reasoning, only with ``include_thoughts``
effect     ``effect http|db|messaging|rpc ...`` — a side effect: a span of another
           instrumentation (see :mod:`._effects`)
span       ``span NAME`` — a plain span the user opened inside the run
elided     ``elided effect=N span=M`` — last line, when the run had more than
           :data:`MAX_OTHER_LINES` ``effect``/``span`` lines
=========  =====================================================================

Depth counts only ancestors that have a line of their own, so the generic
chain spans a framework adds between steps do not shift the indentation;
indentation stops growing at 16 levels (:data:`MAX_DEPTH`), so a pathologically
deep tree folds to text proportional to its spans, not to their square.
``args`` is compact JSON with sorted keys; names, arguments and descriptions
are kept on one line and cut with ``…`` (names 120, arguments 300, other text
500 characters). Lines follow start order, depth first.
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from ...semconv import attributes as A
from . import _facts as F
from . import _json
from ._effects import classify, content_recorded, is_transport
from ._runs import RunTree

NAME_LIMIT = 120
ARGS_LIMIT = 300
TEXT_LIMIT = 500
INDENT = "  "
MAX_DEPTH = 16
MAX_OTHER_LINES = 100
"""The most ``effect`` and ``span`` lines one run writes; the rest are counted on an ``elided`` line."""
"""Lines deeper than this are indented as this deep: output stays proportional to the input."""

_COMPACT_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), sort_keys=True, default=str).encode


def _ends_early(span: F.FoldSpan) -> bool:
    """Whether the run stopped at ``span`` (paused for a human, or cut off: ``stop_reason``)."""
    return F.flag(span, A.OTEL_AGENTS_PAUSED) or bool(span.attributes.get(A.OTEL_AGENTS_STOP_REASON))


def one_line(text: Any, limit: int) -> str:
    """``text`` on one line (CR, LF, tab → space), at most ``limit`` characters (cut ends with ``…``)."""
    s = str(text)
    if "\n" in s or "\r" in s or "\t" in s:
        s = s.replace("\r\n", " ").replace("\n", " ").replace("\r", " ").replace("\t", " ")
    return s if len(s) <= limit else s[: limit - 1] + "…"


def compact_json(value: Any) -> str:
    """Compact JSON with sorted keys (tuples as arrays, anything else as ``str``)."""
    return _json.compact(value, _COMPACT_JSON, sort_keys=True)


_KEYWORDS = {"agent": "agent", "model": "model", "tool": "tool", "skill": "skill", "retriever": "retrieval"}


def keyword(span: F.FoldSpan) -> str | None:
    """The evidence keyword of a span, or ``None`` when it is not a step of its own.

    Embeddings and plain chains are plumbing, not steps; a chain that is a
    multi-agent orchestration is a ``workflow``.
    """
    k = span.semantic_kind
    if k == "chain":
        return "workflow" if F.is_workflow(span) else None
    return _KEYWORDS.get(k)  # type: ignore[arg-type]


def step_line(span: F.FoldSpan, kw: str, tree: RunTree) -> str:
    """The step line of one span (without indentation)."""
    name = one_line(tree.name(span), NAME_LIMIT)
    parts = [kw, name]
    if kw == "agent":
        parent = tree.delegator(span)
        if parent is not None:
            parts.append(f"delegated_by={one_line(tree.name(parent), NAME_LIMIT)}")
    elif kw == "model":
        reasons = F.finish_reasons(span)
        if reasons:
            parts.append("finish=" + one_line(",".join(reasons), NAME_LIMIT))
        inp, out, _ = tree.usage(span)
        if inp is not None:
            parts.append(f"tokens_in={inp}")
        if out is not None:
            parts.append(f"tokens_out={out}")
        if F.flag(span, A.OTEL_AGENTS_STREAM_ABANDONED):
            parts.append("stream=abandoned")
        calls = F.requested_calls(span)
        if calls:
            parts.append("calls=" + one_line(",".join(one_line(c, NAME_LIMIT).replace(",", "_") for c in calls),
                                             ARGS_LIMIT))
    elif kw in ("tool", "skill"):
        if kw == "tool" or F.is_tool_call(span):
            parts.append("args=" + one_line(compact_json(tree.arguments(span)), ARGS_LIMIT))
        parts.append(f"status={'error' if span.error else 'ok'}")
        parts.append(f"latency_ms={round(span.duration_ms)}")
    elif kw == "retrieval":
        docs = F.parse_json(span.attributes.get(A.GEN_AI_RETRIEVAL_DOCUMENTS))
        if isinstance(docs, list):
            parts.append(f"documents={len(docs)}")
    return " ".join(parts)


def reports_error(span: F.FoldSpan, tree: RunTree) -> bool:
    """Whether a failed span gets an ``error`` line (case E-1: a failed run never looks clean).

    Every failed step (a span with a keyword), every failed top span of the run
    (its root), and every other failed semantic span (a chain, an embedding)
    where the failure started: none of its children failed. A chain that only
    passes on its child's exception adds nothing the child's line does not say.
    """
    if not span.error:
        return False
    if keyword(span) is not None or tree.parent.get(span.span_id) is None:
        return True
    if span.semantic_kind is None:
        return False
    return not any(child.error for child in tree.children.get(span.span_id, ()))


def indent(depth: int) -> str:
    """The indentation of a line at ``depth``: two spaces per level, at most :data:`MAX_DEPTH` levels."""
    return INDENT * min(depth, MAX_DEPTH)


class Evidence(NamedTuple):
    """The ``evaluation_context`` of a run and the counts ``metrics`` reports."""

    text: str
    steps: int    # step lines (agent, workflow, model, tool, skill, retrieval)
    errors: int   # error lines
    effects: int  # side-effect spans of other instrumentations (``effect`` lines, elided ones included)


def evidence(tree: RunTree, *, include_thoughts: bool = False) -> Evidence:
    """The ``evaluation_context`` text of a run and its counts (see :class:`Evidence`)."""
    lines: list[str] = []
    steps = errors = effects = other_lines = 0
    elided = {"effect": 0, "span": 0}
    content = content_recorded(tree.spans)
    children = tree.children
    # ("enter" | "exit", span, depth, keyword, quiet, model); exits write the error/paused lines after
    # the subtree; under an effect ("quiet"), foreign spans are its transport (urllib3 under requests);
    # under a model/embedding span (``model``), only the provider request is (see ``is_transport``):
    # it and its subtree get no line, any other side effect does.
    stack: list[tuple[str, F.FoldSpan, int, str | None, bool, F.FoldSpan | None]] = [
        ("enter", s, 0, None, False, None) for s in reversed(children.get(None, []))]
    while stack:
        action, span, depth, kw, quiet, model = stack.pop()
        if action == "exit":
            name = one_line(tree.name(span), NAME_LIMIT)
            if reports_error(span, tree):
                lines.append(f"{indent(depth)}error {kw} {name}: {one_line(F.error_text(span), TEXT_LIMIT)}")
                errors += 1
            if F.flag(span, A.OTEL_AGENTS_PAUSED):
                lines.append(f"{indent(depth)}paused {kw} {name}")
            stop = span.attributes.get(A.OTEL_AGENTS_STOP_REASON)
            if stop:
                lines.append(f"{indent(depth)}stopped {kw} {name} reason={one_line(str(stop), NAME_LIMIT)}")
            continue
        served = tree.served_call(span) is not None  # an MCP server's side of a call: the call's line says it all
        kw = keyword(span) if not served else None
        child_depth = depth
        child_quiet = quiet
        child_model = model
        if kw is not None:
            lines.append(indent(depth) + step_line(span, kw, tree))
            steps += 1
            child_depth = depth + 1
            child_quiet = False
            child_model = span if kw == "model" else None
            if include_thoughts and kw == "model":
                lines += [f"{indent(child_depth)}thought {one_line(t, TEXT_LIMIT)}" for t in F.reasoning_texts(span)]
            if span.error or _ends_early(span):
                stack.append(("exit", span, depth, kw, quiet, model))
        elif span.semantic_kind is not None:
            if span.semantic_kind == "embedding":
                child_model = span
            if not served and (span.error or _ends_early(span)):
                stack.append(("exit", span, depth, span.semantic_kind, quiet, model))
        elif model is not None and not quiet and is_transport(span, model):
            child_quiet = True
        elif not quiet:
            found = classify(span, content)
            if found is not None:
                line_kw, text = found
                if line_kw == "effect":
                    effects += 1
                    child_quiet = True
                if other_lines < MAX_OTHER_LINES:
                    lines.append(f"{indent(depth)}{line_kw} {one_line(text, TEXT_LIMIT)}")
                    other_lines += 1
                else:
                    elided[line_kw] += 1
                child_depth = depth + 1
        below = children.get(span.span_id)
        if below:
            stack.extend(("enter", child, child_depth, None, child_quiet, child_model)
                         for child in reversed(below))
    if elided["effect"] or elided["span"]:
        lines.append(f"elided effect={elided['effect']} span={elided['span']}")
    return Evidence("\n".join(lines), steps, errors, effects)
