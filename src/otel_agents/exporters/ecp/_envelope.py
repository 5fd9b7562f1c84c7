"""One run's spans → one ECP ``agent/step`` result envelope.

The mapping is documented field by field in ``docs/ecp.md`` ("The envelope") and its shape is the JSON Schema
``otel_agents/exporters/ecp_envelope.schema.json``.
"""

from __future__ import annotations

import functools
import json
import re
from datetime import datetime, timedelta, timezone
from typing import Any, Callable, Iterator

from opentelemetry.trace import StatusCode

from ...semconv import attributes as A
from . import _facts as F
from . import _json
from ._cost import run_cost
from ._evidence import evidence
from ._runs import Run, RunTree, start_order

# Content-bearing gen_ai.* attributes stay out of ``logs``: the content is
# already in public_output, tool_calls and evaluation_context.
_CONTENT_KEYS = frozenset({
    A.GEN_AI_INPUT_MESSAGES, A.GEN_AI_OUTPUT_MESSAGES, A.GEN_AI_SYSTEM_INSTRUCTIONS,
    A.GEN_AI_TOOL_DEFINITIONS, A.GEN_AI_TOOL_CALL_ARGUMENTS, A.GEN_AI_TOOL_CALL_RESULT,
    A.GEN_AI_RETRIEVAL_DOCUMENTS, A.GEN_AI_RETRIEVAL_QUERY_TEXT, A.GEN_AI_AGENT_DESCRIPTION,
})
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)
# ``logs`` as compact JSON; tuples (attribute arrays) encode as arrays, anything else as ``str``.
# No circular-reference check: the records hold attribute values only (strings, numbers, arrays).
_LOGS_JSON = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=str, check_circular=False,
                              allow_nan=False).encode


def _logs(records: list[dict[str, Any]]) -> str:
    """``logs`` as strict JSON: a non-finite attribute value (``NaN``, ``Infinity``) is written as ``null``."""
    try:
        return _json.compact(records, _LOGS_JSON, nan_as_null=True)  # as the fallback below writes them
    except ValueError:
        for record in records:
            record["attributes"] = {k: F.plain(v) for k, v in record["attributes"].items()}
        return _LOGS_JSON(records)


def build_envelope(run: Run, *, include_thoughts: bool = False) -> dict[str, Any] | None:
    """The ECP result envelope of one run (see the module docstring for the mapping).

    ``None`` for a run rooted in another vocabulary's span other than an agent's that holds none of the facts
    an envelope reports (no output, no tool call, no model call, no error): no envelope rather than an empty one.
    An agent's invocation (OTel GenAI ``invoke_agent``, an OpenInference ``AGENT``) is a run even so: with
    content capture off (the OTel GenAI instrumentations' default) an agent that answered without a traced step
    exports exactly that span.
    """
    tree = RunTree(run)
    spans = tree.spans
    models: list[F.FoldSpan] = []
    tool_calls: list[dict[str, Any]] = []
    agents: list[dict[str, Any]] = []
    paused = False
    stop_reason = None  # the outermost span's (spans are in start order, depth first), not a run a tool call
    # delegated to and that returned (its stop is its own)
    for span in spans:
        kind = span.semantic_kind
        a = span.attributes
        if kind == "model":
            models.append(span)
        elif kind == "agent":
            if span.protocol is None or tree.served_call(span) is None:  # an A2A server's side of a call: the
                agents.append(_agent(span, tree))                          # caller's agent line says it
        elif ((kind == "tool" or (kind == "skill" and F.is_tool_call(span)))
              and a.get(A.OTEL_AGENTS_FINAL_ANSWER) is not True  # the answer is not a tool call
              and (span.protocol is None or tree.served_call(span) is None)):  # a call served over MCP counts once
            tool_calls.append(_tool_call(span, tree))
        if not paused and a.get(A.OTEL_AGENTS_PAUSED) is True:
            paused = True
        if stop_reason is None:
            stop = a.get(A.OTEL_AGENTS_STOP_REASON)
            if isinstance(stop, str) and not tree.in_returned_tool_call(span):
                stop_reason = stop
    context, steps, errors, effects = evidence(tree, include_thoughts=include_thoughts)
    public_output = _public_output(run, tree, paused, stop_reason)
    if (public_output is None and not tool_calls and not models and not errors and run.root is not None
            and F.frozen(run.root).foreign and F.frozen(run.root).semantic_kind != "agent"):
        return None
    tool_errors = sum(1 for c in tool_calls if c["status"] == "error")
    trace_hex = F.trace_id_hex(run.trace_id)
    envelope: dict[str, Any] = {
        "status": "paused" if paused else "done",
        "public_output": public_output,
        "tool_calls": tool_calls,
        "evaluation_context": context,
        "logs": _logs(_log_records(spans, run.trace_id, trace_hex, tree.hex_ids)),
    }
    usage = _usage(models, tree)
    if usage is not None:
        envelope["usage"] = usage
    envelope["trace_id"] = trace_hex
    reported_cost = _reported_cost(run)
    envelope["metrics"] = {
        "duration_ms": _duration_ms(spans),
        "steps": steps,
        "model_calls": len(models),
        "tool_calls": len(tool_calls),
        "tool_errors": tool_errors,
        "errors": errors,
        "effects": effects,
        "tool_success_rate": round((len(tool_calls) - tool_errors) / len(tool_calls), 4) if tool_calls else None,
        "cost_usd": reported_cost if reported_cost is not None else run_cost(models, tree.usage),
        "stop_reason": stop_reason,
    }
    envelope["agents"] = agents
    if run.incomplete:
        envelope["incomplete"] = run.incomplete
    return envelope


def envelopes_of_runs(runs: list[Run], incomplete: str | None, *, include_thoughts: bool, where: str,
                      on_problem: Callable[[str], None]) -> Iterator[dict[str, Any]]:
    """The envelopes of one trace's ``runs`` (:func:`build_envelope`), in the order the runs started, each run
    marked ``incomplete`` (why, or ``None``). A run that cannot be folded (damaged input) is a problem:
    ``on_problem("{where}: the run of span … could not be folded: …")``, and the other runs go on. A foreign run
    with none of the facts gives none. What the streaming fold and ``ecp collect``'s gatherer do with a trace."""
    for run in sorted(runs, key=lambda r: start_order(r.root)):
        run.incomplete = incomplete
        try:
            envelope = build_envelope(run, include_thoughts=include_thoughts)
        except Exception as exc:  # noqa: BLE001 - damaged input must not stop the other runs
            on_problem(f"{where}: the run of span {F.span_id_hex(run.root.span_id)} could not be folded: "
                       f"{exc!r:.300}")
            continue
        if envelope is not None:
            yield envelope


def _public_output(run: Run, tree: RunTree, paused: bool, stop_reason: str | None) -> str | None:
    """The root's output as text; for a paused run only the assistant text it produced before
    pausing (case E-2: the state a paused graph returns holds the user's prompt, not an answer).

    A root of another vocabulary (issue 25) that recorded no output, or whose output only wraps the
    run's answer (LlamaIndex's ``StopEvent(...)`` repr under OpenInference), gives the answer of the
    run's last model response instead (:meth:`RunTree.final_answer`): the answer is in the text, or
    the text is a Python object's repr (``Name(field=...``, often cut short). So does a root of ours
    written in OTel GenAI alone, which has no ``output.value`` — unless the run failed, or a guardrail
    or a cancellation stopped it (``stop_reason``): then the user got no answer, and the model's last
    one (a blocked answer, one the run never returned) is not the run's output. A cancelled run returned
    nothing to its caller: ``None``, whatever its root recorded before it was stopped."""
    if run.root is None or stop_reason == "cancelled":
        return None
    root = F.frozen(run.root)
    if paused:
        return F.assistant_text(F.output_value(root))
    if root.foreign and root.semantic_kind == "model":
        # A provider request alone: another instrumentation's output.value may be the provider's whole
        # response object (OpenInference's openai: a ChatCompletion, a Response; its LangChain: an
        # LLMResult); the answer is the model's text in its output messages, or, when it only requested
        # tools, those calls as the output messages another vocabulary (and ours) would give.
        answer = F.model_answer(root)
        if answer is not None:
            return answer
        calls = F.requested_calls_message(root)
        if calls is not None:
            return json.dumps(calls, ensure_ascii=False, separators=(",", ":"), default=str)
    text = F.output_text(root)
    if text is None and not root.foreign and A.OPENINFERENCE_SPAN_KIND not in root.attributes and \
            A.LANGFUSE_OBSERVATION_TYPE not in root.attributes:
        # Written in OTel GenAI alone (OTEL_AGENTS_VOCABULARIES=gen_ai): no output.value on any span.
        if root.error or stop_reason in _NO_ANSWER:
            return None
        return tree.final_answer()
    if root.foreign and (text is None or root.attributes.get(A.OUTPUT_MIME_TYPE) != A.MIME_JSON):
        answer = tree.final_answer()
        if answer and (text is None or (answer != text and (answer in text or _OBJECT_REPR.match(text)))):
            return answer
    return text


# Stop reasons of a run that returned no answer of the model's to its caller.
_NO_ANSWER = frozenset({"guardrail", "cancelled"})

# A Python object's repr recorded as a span's output (``StopEvent(result=...)``), often cut short.
_OBJECT_REPR = re.compile(r"[A-Z]\w*\(\w+=")


def _tool_call(span: F.FoldSpan, tree: RunTree) -> dict[str, Any]:
    agent = tree.nearest_agent(span)
    error = span.error
    call = {
        "name": tree.name(span),
        "arguments": tree.arguments(span),
        "id": F.tool_call_id(span),
        "result": F.tool_result(span),
        "status": "error" if error else "ok",
        "error": F.error_text(span) if error else None,
        "latency_ms": span.duration_ms,
        "agent": tree.name(agent) if agent is not None else None,
        "span_id": tree.hex(span.span_id),
    }
    server = span.attributes.get(A.OTEL_AGENTS_MCP_SERVER_NAME)
    if isinstance(server, str) and server:
        call["server"] = server  # the MCP server that served the call
    remote = tree.remote_agent(span)
    if remote is not None:
        call["remote_agent"] = remote  # made by a remote agent over A2A (its card's name)
    return call


def _agent(span: F.FoldSpan, tree: RunTree) -> dict[str, Any]:
    parent = tree.delegator(span)
    return {
        "name": tree.name(span),
        "span_id": tree.hex(span.span_id),
        "parent": tree.name(parent) if parent is not None else None,
        "parent_span_id": tree.hex(parent.span_id) if parent is not None else None,
        "status": "error" if span.error else "ok",
    }


def _reported_cost(run: Run) -> float | None:
    """The run's cost in USD as its framework reported it on the root span (``llm.cost.total``: the Claude
    Agent SDK's ``total_cost_usd``, which the CLI computes with its own prices), else ``None``."""
    if run.root is None:
        return None
    cost = F.frozen(run.root).attributes.get(A.LLM_COST_TOTAL)
    return float(cost) if isinstance(cost, (int, float)) and not isinstance(cost, bool) and cost >= 0 else None


def _usage(models: list[F.FoldSpan], tree: RunTree) -> dict[str, int | None] | None:
    """Token usage summed over model spans; ``None`` when none reported any."""
    inp = out = total = None
    for span in models:
        i, o, t = tree.usage(span)
        if i is not None:
            inp = (inp or 0) + i
        if o is not None:
            out = (out or 0) + o
        if t is not None:
            total = (total or 0) + t
    if inp is None and out is None and total is None:
        return None
    return {"input_tokens": inp, "output_tokens": out, "total_tokens": total}


def _duration_ms(spans: list[F.FoldSpan]) -> float:
    """Wall time from the first start to the last end (late streams included)."""
    first = last = None
    for s in spans:
        start, end = s.start_time, s.end_time
        if start and (first is None or start < first):
            first = start
        if end and (last is None or end > last):
            last = end
    if first is None or last is None:
        return 0.0
    return round(max(0, last - first) / 1e6, 3)


@functools.lru_cache(maxsize=1024)
def _iso_seconds(seconds: int) -> str:
    # Cached: the spans of a run, and runs folded together, mostly start within the same few seconds.
    return (_EPOCH + timedelta(seconds=seconds)).isoformat().replace("+00:00", "")


_STATUS_NAMES = {code: code.name.lower() for code in StatusCode}
_UNSET, _OK, _ERROR = StatusCode.UNSET, StatusCode.OK, StatusCode.ERROR


def _log_records(spans: list[F.FoldSpan], trace_id: int | None, trace_hex: str | None,
                 hex_ids: dict[int, str]) -> list[dict[str, Any]]:
    """The ``logs`` records of the run's spans; ``trace_hex`` is ``trace_id`` in hex (the run's: its spans'
    trace, written once); ``hex_ids``: span ids in hex (:attr:`RunTree.hex_ids`; another id is formatted here).
    One loop, not a call a span: the records are most of a fold's Python work."""
    records = []
    span_hex = F.span_id_hex
    for span in spans:
        status = span.status_code
        a = span.attributes
        keys = _log_keys(tuple(a))
        start = span.start_time
        if start:  # ISO 8601 UTC, microseconds kept (``…T12:00:00.123456Z``; no fraction when it is 0: isoformat's text)
            seconds, micros = divmod(start // 1000, 1_000_000)
            start = f"{_iso_seconds(seconds)}.{micros:06d}Z" if micros else f"{_iso_seconds(seconds)}Z"
        else:
            start = None
        span_id, parent_id, span_trace = span.span_id, span.parent_id, span.trace_id
        record: dict[str, Any] = {
            "trace_id": (trace_hex if span_trace == trace_id else _trace_hex(span_trace))
            if span.context is not None else None,
            "span_id": hex_ids.get(span_id) or span_hex(span_id),
            "parent_id": (hex_ids.get(parent_id) or span_hex(parent_id)) if parent_id is not None else None,
            "kind": span.semantic_kind,
            "name": span.name,
            "start": start,
            "duration_ms": span.duration_ms,
            # the three codes by identity (a dict lookup would hash the enum member through Python code)
            "status": "unset" if status is _UNSET else "ok" if status is _OK else "error" if status is _ERROR
            else _STATUS_NAMES.get(status) or status.name.lower(),
            "attributes": {k: a[k] for k in keys} if keys else {},
        }
        if status is _ERROR:
            record["error"] = F.error_text(span)
        records.append(record)
    return records


_trace_hex = functools.lru_cache(maxsize=256)(F.trace_id_hex)  # every span of a run repeats it: cached


@functools.lru_cache(maxsize=1024)
def _log_keys(keys: tuple[str, ...]) -> list[str]:
    """The keys ``logs`` keeps, sorted: non-content ``gen_ai.*``/``otel_agents.*`` attributes and ``error.type``.
    Cached by the span's whole key tuple: spans made by one code path carry the same keys, so a fold sees
    few distinct tuples (and a miss costs only this filter)."""
    return sorted(k for k in keys
                  if k not in _CONTENT_KEYS and (k.startswith(("gen_ai.", "otel_agents.")) or k == A.ERROR_TYPE))
