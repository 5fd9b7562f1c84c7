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
model      ``model MODEL[ finish=R1,R2][ tokens_in=N][ tokens_out=N][ stream=abandoned|incomplete][ calls=T1,T2]``
           (``stream=incomplete``: its stream ended without the event that closes a response, ``error.type``
           ``stream_incomplete``, a failed step with its ``error`` line; ``calls``: the tools that turn
           requested, in order, names only; a call an MCP client ran under the MCP tool's own name is named
           as its ``tool`` line names it, see
           :meth:`~._runs.RunTree.requested_names`)
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

from opentelemetry.trace import StatusCode

from ...semconv import attributes as A
from . import _facts as F
from . import _json
from ._effects import classify, content_recorded, is_discovery, is_transport
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


one_line = F.one_line


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
    line = f"{kw} {tree.line_name(span)}"
    if kw == "model":
        a = span.attributes
        reasons = F.finish_reasons(span)
        if reasons:
            line += " finish=" + one_line(",".join(reasons), NAME_LIMIT)
        inp, out, _ = tree.usage(span)
        if inp is not None:
            line += f" tokens_in={inp}"
        if out is not None:
            line += f" tokens_out={out}"
        if a.get(A.OTEL_AGENTS_STREAM_ABANDONED) is True:
            line += " stream=abandoned"
        elif a.get(A.ERROR_TYPE) == A.STREAM_INCOMPLETE:
            line += " stream=incomplete"
        calls = tree.requested_names(span)
        if calls:
            line += " calls=" + one_line(",".join(one_line(c, NAME_LIMIT).replace(",", "_") for c in calls),
                                         ARGS_LIMIT)
    elif kw == "tool" or kw == "skill":
        if kw == "tool" or F.is_tool_call(span):
            line += " args=" + one_line(compact_json(tree.arguments(span)), ARGS_LIMIT)
        line += f" status=error latency_ms={round(span.duration_ms)}" if span.error else \
            f" status=ok latency_ms={round(span.duration_ms)}"
    elif kw == "agent":
        parent = tree.delegator(span)
        if parent is not None:
            line += f" delegated_by={tree.line_name(parent)}"
    elif kw == "retrieval":
        docs = F.parse_json(span.attributes.get(A.GEN_AI_RETRIEVAL_DOCUMENTS))
        if isinstance(docs, list):
            line += f" documents={len(docs)}"
    return line


def reports_error(span: F.FoldSpan, tree: RunTree) -> bool:
    """Whether a failed span gets an ``error`` line (case E-1: a failed run never looks clean).

    Every failed step (a span with a keyword), every failed top span of the run
    (its root), and every other failed semantic span (a chain, an embedding)
    where the failure started: none of its children failed. A chain that only
    passes on its child's exception adds nothing the child's line does not say.
    A step a cancellation stopped (control flow, status not ERROR) did not fail: no line (it is not ``ok``
    either; the run's ``stopped … reason=cancelled`` line says it).
    """
    if not _failed(span):
        return False
    if keyword(span) is not None or tree.parent.get(span.span_id) is None:
        return True
    if span.semantic_kind is None:
        return False
    return not any(_failed(child) for child in tree.children.get(span.span_id, ()))


def _failed(span: F.FoldSpan) -> bool:
    """Not ok, and not because a cancellation stopped it (status ERROR is a failure, whatever else it says)."""
    return span.error and (not span.cancelled or span.status_code is StatusCode.ERROR)


def indent(depth: int) -> str:
    """The indentation of a line at ``depth``: two spaces per level, at most :data:`MAX_DEPTH` levels."""
    return _INDENTS[depth] if depth <= MAX_DEPTH else _INDENTS[MAX_DEPTH]


_INDENTS = [INDENT * depth for depth in range(MAX_DEPTH + 1)]


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
    content: bool | None = None  # content_recorded(tree.spans), read when a plain span first needs it
    children = tree.children
    name = tree.line_name
    indents, deepest = _INDENTS, _INDENTS[MAX_DEPTH]
    # (exit?, span, depth, keyword, quiet, model); exits write the error/paused lines after
    # the subtree; under an effect ("quiet"), foreign spans are its transport (urllib3 under requests),
    # until the server's span of a call served by another process; under a model/embedding span or an
    # A2A call (``model``), only the request to its server is (see ``is_transport``): it and its subtree
    # get no line, any other side effect does.
    stack: list[tuple[bool, F.FoldSpan, int, str | None, bool, F.FoldSpan | None]] = [
        (False, s, 0, None, False, None) for s in reversed(children.get(None, []))]
    while stack:
        exit_, span, depth, kw, quiet, model = stack.pop()
        ind = indents[depth] if depth <= MAX_DEPTH else deepest
        a = span.attributes
        if exit_:
            if reports_error(span, tree):
                lines.append(f"{ind}error {kw} {name(span)}: {one_line(F.error_text(span), TEXT_LIMIT)}")
                errors += 1
            if a.get(A.OTEL_AGENTS_PAUSED) is True:
                lines.append(f"{ind}paused {kw} {name(span)}")
            stop = a.get(A.OTEL_AGENTS_STOP_REASON)
            if stop:
                lines.append(f"{ind}stopped {kw} {name(span)} reason={one_line(str(stop), NAME_LIMIT)}")
            continue
        # an MCP server's side of a call: the call's line says it all
        served = span.protocol is not None and tree.served_call(span) is not None
        k = span.semantic_kind
        if served:
            kw = None
        elif k == "chain":
            kw = "workflow" if F.is_workflow(span) else None
        else:
            kw = _KEYWORDS.get(k)  # type: ignore[arg-type]
        child_depth = depth
        child_quiet = quiet
        child_model = model
        if kw is not None:
            lines.append(ind + step_line(span, kw, tree))
            steps += 1
            child_depth = depth + 1
            child_quiet = False
            child_model = span if kw == "model" or span.protocol == "a2a" else None
            if include_thoughts and kw == "model":
                lines += [f"{indent(child_depth)}thought {one_line(t, TEXT_LIMIT)}" for t in F.reasoning_texts(span)]
            if span.error or a.get(A.OTEL_AGENTS_PAUSED) is True or a.get(A.OTEL_AGENTS_STOP_REASON):
                stack.append((True, span, depth, kw, quiet, model))
        elif k is not None:
            if k == "embedding":
                child_model = span
            elif served:  # the other process's work for the call, not the call's transport (an effect above)
                child_quiet, child_model = False, None
            if not served and (span.error or a.get(A.OTEL_AGENTS_PAUSED) is True or
                               a.get(A.OTEL_AGENTS_STOP_REASON)):
                stack.append((True, span, depth, k, quiet, model))
        elif model is not None and not quiet and is_transport(span, model):
            child_quiet = True
        elif not quiet and is_discovery(span):  # an A2A agent-card GET: discovery, no side effect
            child_quiet = True
        elif not quiet:
            if content is None:
                content = content_recorded(tree.spans)
            found = classify(span, content)
            if found is not None:
                line_kw, text = found
                if line_kw == "effect":
                    effects += 1
                    child_quiet = True
                if other_lines < MAX_OTHER_LINES:
                    lines.append(f"{ind}{line_kw} {one_line(text, TEXT_LIMIT)}")
                    other_lines += 1
                else:
                    elided[line_kw] += 1
                child_depth = depth + 1
        below = children.get(span.span_id)
        if below:
            for child in reversed(below):  # a loop, not a generator: most spans have one or two children
                stack.append((False, child, child_depth, None, child_quiet, child_model))
    if elided["effect"] or elided["span"]:
        lines.append(f"elided effect={elided['effect']} span={elided['span']}")
    return Evidence("\n".join(lines), steps, errors, effects)
