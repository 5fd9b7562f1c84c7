"""An ``ecp run`` JSON report → one :class:`EvaluationResult` per check, each on the span it graded.

Where each step's spans are found, most direct first:

1. the step's ``logs`` (kept verbatim by the report): the records ``otel-agents ecp serve``
   folds carry ``trace_id`` and ``span_id``; the run's root record (the step's ``agent/step``
   span) is the one without a parent among them. A record with a ``span_id`` whose ``span_id``, ``trace_id`` or
   ``parent_id`` is not lowercase hex of its length (16, 32, 16; the other two may be missing) is damaged: it is
   skipped and named (``scenarios[0].steps[0].logs[3].trace_id: 'zz…' is not 32 lowercase hex digits``), its id
   still counted as a parent, so that its children are not taken for the root; when it is the root, the step's
   checks are put on no span, never on a child of it (a record without a ``span_id`` is a note, not a span);
2. ``logs`` records without ``trace_id`` (older envelopes): the trace is looked up by span id
   in the given spans;
3. no ``logs`` at all (a step the agent failed: the report keeps only the error, in which
   ``ecp serve``'s error data names the trace): that trace, and its root span when the spans
   are given (without them the result names the trace only); otherwise the root ``agent/step``
   span, in the given spans, whose ``input.value`` is the step's input (each used once, in
   start order).

Every check, passed or failed, is put on the step's root span, so a backend's per-span statistics
(Phoenix's mean score of an annotation name over root spans) average every agent's result for that
check. A ``tool_usage`` check that passed also names its evidence, the tool span it matched
(:attr:`EvaluationResult.evidence_span_id`; the first of the step's ``tool_calls`` whose name and
arguments satisfy the manifest's grader, ECP's own rule, read from the manifest the report names).
"""

from __future__ import annotations

import json
import logging
import math
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Iterable, Sequence

from .._spans.redaction import redact_text
from .._spans.settings import Settings
from ..semconv import attributes as A

logger = logging.getLogger("otel_agents.evaluations")

EVALUATION_RESULT_EVENT = "gen_ai.evaluation.result"
"""The OTel GenAI event name (semconv v1.38+, ``model/gen-ai/events.yaml``)."""

_ATTR_SCENARIO = "otel_agents.ecp.scenario"
_ATTR_STEP = "otel_agents.ecp.step"
_ATTR_EVIDENCE = "otel_agents.ecp.evidence_span_id"
_ERROR_TRACE = re.compile(r"""['"]trace_id['"]:\s*['"]([0-9a-f]{32})['"]""")  # ecp serve's error data
_TRACE_ID = re.compile(r"[0-9a-f]{32}")
_SPAN_ID = re.compile(r"[0-9a-f]{16}")


def _is_id(value: Any, pattern: re.Pattern[str]) -> bool:
    """Whether ``value`` is a W3C trace or span id as the fold writes it (lowercase hex of ``pattern``'s length)."""
    return isinstance(value, str) and pattern.fullmatch(value) is not None
# ECP runtime's tool_usage reasoning, when the manifest is not at hand (graders.check_tool_usage).
_FOUND_TOOL = re.compile(r"^Found tool call '(.*)' with expected arguments$")
_MISSING_TOOL = re.compile(r"^No matching tool call for name='([^']*)'")


@dataclass(frozen=True)
class EvaluationResult:
    """One ECP check as an OTel GenAI ``gen_ai.evaluation.result`` (semconv v1.38+).

    Attributes:
        name: ``gen_ai.evaluation.name``: the grader type and what it graded —
            ``text_match:public_output``, ``llm_judge:evaluation_context``,
            ``tool_usage:lookup_order`` (the tool), ``execution:agent`` (a step that did not complete).
        score: ``gen_ai.evaluation.score.value``: the check's score (ECP: 0.0-1.0).
        label: ``gen_ai.evaluation.score.label``: ``"pass"`` or ``"fail"``.
        explanation: ``gen_ai.evaluation.explanation``: the grader's reasoning (secrets redacted);
            ``None`` when content capture is off, since reasoning quotes what was graded.
        trace_id: 32 hex digits, the trace of the graded step; ``None`` when not found.
        span_id: 16 hex digits, the span the result is put on: the step's root, for every check;
            ``None`` when not found.
        grader: the ECP grader type (``text_match``, ``tool_usage``, ``llm_judge``, ``execution``).
        scenario: the scenario's name; ``step`` its 1-based step; ``check`` the 1-based check of that step.
        tool_name: the tool a ``tool_usage`` check expects (``gen_ai.tool.name``).
        agent_name: ``gen_ai.agent.name`` of the run's (or the matched tool call's) agent.
        model: ``gen_ai.request.model`` when the step used exactly one model.
        evidence_span_id: 16 hex digits, the tool span a passing ``tool_usage`` check matched (named
            in the explanation too, and sent as metadata / ``otel_agents.ecp.evidence_span_id``); else ``None``.
    """

    name: str
    score: float | None
    label: str
    explanation: str | None
    trace_id: str | None
    span_id: str | None
    grader: str
    scenario: str
    step: int
    check: int
    tool_name: str | None = None
    agent_name: str | None = None
    model: str | None = None
    evidence_span_id: str | None = None

    @property
    def passed(self) -> bool:
        """Whether the check passed (its ``label`` is ``"pass"``)."""
        return self.label == "pass"

    @property
    def annotator_kind(self) -> str:
        """Phoenix's annotator kind: ``LLM`` for ``llm_judge``, ``CODE`` for the deterministic graders."""
        return "LLM" if self.grader == "llm_judge" else "CODE"

    @property
    def key(self) -> str:
        """A stable id for this check of this run (``<trace>:<scenario>/<step>/<check>``): sending the
        same report twice updates, rather than duplicates, a Phoenix annotation or a Langfuse score."""
        return f"{self.trace_id or '-'}:{self.scenario}/{self.step}/{self.check}"

    def attributes(self) -> dict[str, Any]:
        """The event's attributes: the ``gen_ai.evaluation.*`` ones, ``gen_ai.tool.name``,
        ``gen_ai.agent.name``, ``gen_ai.request.model`` when known, where in the manifest the
        check is (``otel_agents.ecp.scenario``, ``otel_agents.ecp.step``) and the evidence span
        (``otel_agents.ecp.evidence_span_id``, a passing tool check's tool span)."""
        attrs: dict[str, Any] = {A.GEN_AI_EVALUATION_NAME: self.name, A.GEN_AI_EVALUATION_SCORE_LABEL: self.label}
        if self.score is not None:
            attrs[A.GEN_AI_EVALUATION_SCORE_VALUE] = self.score
        if self.explanation:
            attrs[A.GEN_AI_EVALUATION_EXPLANATION] = self.explanation
        for key, value in ((A.GEN_AI_TOOL_NAME, self.tool_name), (A.GEN_AI_AGENT_NAME, self.agent_name),
                           (A.GEN_AI_REQUEST_MODEL, self.model)):
            if value:
                attrs[key] = value
        attrs[_ATTR_SCENARIO] = self.scenario
        attrs[_ATTR_STEP] = self.step
        if self.evidence_span_id:
            attrs[_ATTR_EVIDENCE] = self.evidence_span_id
        return attrs


@dataclass
class _Step:
    """Where one report step lives in the traces."""

    trace_id: str | None = None
    root_span_id: str | None = None
    agent_name: str | None = None
    model: str | None = None
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


def _gunzipped(data: bytes, path: str | os.PathLike[str]) -> bytes:
    """``data`` (one gzip member) decompressed, at most :data:`~otel_agents._named_files.MAX_DOCUMENT_BYTES` (a
    gzip bomb is an error, not all memory). Raises ``ValueError`` naming ``path``: damaged, cut, or too large."""
    import zlib

    from .._named_files import MAX_DOCUMENT_BYTES

    inflate = zlib.decompressobj(wbits=31)
    try:
        out = inflate.decompress(data, MAX_DOCUMENT_BYTES + 1)
    except zlib.error as exc:
        raise ValueError(f"{os.fspath(path)}: a damaged gzip stream ({exc})") from None
    if len(out) > MAX_DOCUMENT_BYTES:
        raise ValueError(f"{os.fspath(path)} is over {MAX_DOCUMENT_BYTES} bytes decompressed; not read")
    if not inflate.eof:
        raise ValueError(f"{os.fspath(path)}: the gzip stream is cut short (the file ends before the stream does)")
    return out


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """Read an ``ecp run --json-out`` report, gzip-compressed too.

    A UTF-8 byte-order mark at the start is ignored (RFC 8259 section 8.1); lone surrogates the JSON escapes
    come back escaped as text (``\\udcff``), so whatever is written from the report is UTF-8.

    Raises:
        OSError: the file cannot be read (the message names it).
        ValueError: over :data:`~otel_agents._named_files.MAX_DOCUMENT_BYTES` (decompressed too), a damaged or
            cut gzip stream, not UTF-8 (the byte and its line
            named), not strict JSON (``NaN``, ``Infinity``, numbers beyond a double, nested too deeply), or not a
            report (no ``scenarios`` list, steps/checks of another shape, a check's ``passed`` not a boolean,
            a duration, token count or cost that is not a number from 0 to 2**63, a score that is not a finite
            number: the field named).
    """
    from .._named_files import read_document
    from ..exporters.ecp._json import NESTED_TOO_DEEPLY, strict_decode, writable

    try:
        data = read_document(path)  # bounded: /dev/zero is an error, not all memory
    except OSError as exc:
        raise type(exc)(f"cannot read {os.fspath(path)}: {exc.strerror or exc}") from None
    if data.startswith(b"\x1f\x8b"):  # gzip's magic number: a compressed report (a CI artifact), read as fold reads
        data = _gunzipped(data, path)
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data.count(b"\n", 0, exc.start) + 1
        raise ValueError(f"{os.fspath(path)}:{line}: not UTF-8 (byte 0x{data[exc.start]:02x} at offset "
                         f"{exc.start}); JSON is UTF-8 (RFC 8259), save the report as UTF-8") from None
    try:
        report = writable(strict_decode(text))  # lone surrogates (JSON text may escape them) made UTF-8-safe
    except ValueError as exc:  # NaN, Infinity and numbers beyond a double too: not JSON (RFC 8259)
        if _YAML_MANIFEST.search(text):  # the manifest given for the report
            raise ValueError(f"{os.fspath(path)}: {_MANIFEST_IS}, not {_REPORT_IS}") from None
        raise ValueError(f"{os.fspath(path)}: not JSON: {exc}") from None
    except RecursionError:  # decoded, but deeper than writable's walk can go
        raise ValueError(f"{os.fspath(path)}: not JSON: {NESTED_TOO_DEEPLY}") from None
    kind = _document_kind(report)
    if kind in ("summary", "manifest"):
        raise ValueError(f"{os.fspath(path)}: {_SUMMARY_IS if kind == 'summary' else _MANIFEST_IS}, not {_REPORT_IS}")
    if not isinstance(report, dict) or not isinstance(report.get("scenarios"), list):
        raise ValueError(f"{os.fspath(path)}: not an ecp run JSON report (no \"scenarios\" list)")
    problem = report_shape_problem(report)
    if problem:
        raise ValueError(f"{os.fspath(path)}: not an ecp run JSON report ({problem})")
    return report


_REPORT_IS = 'an ecp run JSON report (what `ecp run --json-out` writes: "scenarios" whose steps have "checks")'
_MANIFEST_IS = 'an ECP manifest (what `ecp run --manifest` reads: "scenarios" whose steps have "graders")'
_SUMMARY_IS = 'the summary `otel-agents ecp report --json` writes (its "agents")'
_YAML_MANIFEST = re.compile(r"^(?:manifest_version|scenarios):", re.MULTILINE)  # a manifest's top-level keys in YAML


def _document_kind(document: Any) -> str | None:
    """Which of our inputs a parsed document is, by the keys only it has: ``"report"`` (``ecp run --json-out``:
    ``exit_reason``, ``total``, or a step with ``checks``), ``"manifest"`` (``manifest_version``, or a step with
    ``graders``), ``"summary"`` (``ecp report --json``: ``agents`` and no ``scenarios``); ``None`` when none is
    told apart (then the reader's own checks say what is wrong). Each is given for another often enough (a
    report as ``--manifest``) that saying which it is beats a silent wrong reading."""
    if not isinstance(document, dict):
        return None
    if isinstance(document.get("agents"), list) and "scenarios" not in document:
        return "summary"
    steps = [step for scenario in _list(document.get("scenarios")) if isinstance(scenario, dict)
             for step in _list(scenario.get("steps")) if isinstance(step, dict)]
    if "exit_reason" in document or "total" in document or any("checks" in step for step in steps):
        return "report"
    if "manifest_version" in document or any("graders" in step for step in steps):
        return "manifest"
    return None


_USAGE_NUMBERS = ("input_tokens", "output_tokens", "total_tokens", "cost", "cost_usd")  # what ecp report sums
# The largest duration, count or cost ecp report sums: an OTLP int64 (a duration in ns, a token count) holds no
# more, and sums of such numbers never overflow a double (1e308 ms twice was an ``inf`` no JSON can hold).
_LARGEST = 2 ** 63


def _finite_number(value: Any) -> bool:
    """An int or float (not a bool) that a double holds finitely (an integer of 400 digits does not)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return False
    try:
        return math.isfinite(float(value))
    except OverflowError:
        return False


def report_shape_problem(report: Mapping[str, Any]) -> str | None:
    """Where the report's scenarios/steps/checks differ from the shapes ``ecp run`` writes (``scenarios[0].steps
    is not a list``), or ``None``. ``report`` is a dict with a ``scenarios`` list."""
    audit = report.get("audit")  # audit.agent.name names the agent
    if audit is not None and not isinstance(audit, dict):
        return "audit is not an object"
    if isinstance(audit, dict) and audit.get("agent") is not None and not isinstance(audit["agent"], dict):
        return "audit.agent is not an object"
    for i, scenario in enumerate(report["scenarios"]):
        if not isinstance(scenario, dict):
            return f"scenarios[{i}] is not an object"
        steps = scenario.get("steps")
        if steps is not None and not isinstance(steps, list):
            return f"scenarios[{i}].steps is not a list"
        for j, step in enumerate(steps or []):
            if not isinstance(step, dict):
                return f"scenarios[{i}].steps[{j}] is not an object"
            if step.get("usage") is not None and not isinstance(step["usage"], dict):
                return f"scenarios[{i}].steps[{j}].usage is not an object"
            for key in ("checks", "tool_calls"):
                if step.get(key) is not None and not isinstance(step[key], list):
                    return f"scenarios[{i}].steps[{j}].{key} is not a list"
                for k, item in enumerate(step.get(key) or []):
                    if not isinstance(item, dict):
                        return f"scenarios[{i}].steps[{j}].{key}[{k}] is not an object"
            for k, check in enumerate(step.get("checks") or []):  # bool("false") would be a pass
                if check.get("passed") is not None and not isinstance(check["passed"], bool):
                    return f"scenarios[{i}].steps[{j}].checks[{k}].passed is not true or false"
            numbers = [("duration_ms", step.get("duration_ms"))]
            numbers += [(f"usage.{key}", value) for key, value in (step.get("usage") or {}).items()
                        if key in _USAGE_NUMBERS]
            for key, value in numbers:
                if value is not None and not (_finite_number(value) and 0 <= value <= _LARGEST):
                    return f"scenarios[{i}].steps[{j}].{key} is not a number from 0 to 2**63"
            for k, check in enumerate(step.get("checks") or []):
                if check.get("score") is not None and not _finite_number(check["score"]):
                    return f"scenarios[{i}].steps[{j}].checks[{k}].score is not a finite number"
    return None


def evaluation_results(report: Mapping[str, Any], spans: Iterable[Any] | None = None, *,
                       manifest: Mapping[str, Any] | str | os.PathLike[str] | None = None,
                       capture_content: bool | None = None,
                       skipped: list[str] | None = None) -> list[EvaluationResult]:
    """One :class:`EvaluationResult` per check of an ``ecp run`` report, in report order.

    Args:
        report: the parsed JSON report (``ecp run --json-out``; :func:`load_report`).
        spans: optional SDK ``ReadableSpan``s of the graded runs (e.g. ``read_otlp_json(trace_file)``),
            for reports whose steps lack ``logs`` trace ids (see the module docstring).
        manifest: the manifest (parsed YAML, or its path) the report was graded with; default the
            path the report names, when it is a readable regular file (of at most 16 MiB; else a WARNING
            says why and the report alone names the checks). Used to name ``tool_usage`` checks by their tool
            and to find the tool span they matched.
        capture_content: whether explanations (grader reasoning) are kept; ``None`` follows
            ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` (default on).
        skipped: when given, one message is appended per damaged span record of a step's ``logs`` (see the
            module docstring), naming its field, the scenario and the step:
            ``scenarios[0].steps[1].logs[3].trace_id: 'zz…' is not 32 lowercase hex digits (scenario 'order
            status', step 2); the step's root record: its 4 checks are put on no span``.

    Returns:
        The results; a check whose step was not found has ``trace_id``/``span_id`` ``None``.
    """
    settings = Settings(capture_content=capture_content)
    content = settings.content_enabled()
    budget = settings.content_budget()
    graders = (_manifest_graders(manifest) if manifest is not None
               else _manifest_graders(report.get("manifest"), field='report field "manifest"'))
    index = _SpanIndex(spans) if spans is not None else None
    out: list[EvaluationResult] = []
    for s_index, scenario in enumerate(report.get("scenarios") or []):
        scenario_name = str(scenario.get("name") or f"scenario {s_index + 1}")
        steps = scenario.get("steps") or []
        step_graders = graders[s_index] if s_index < len(graders) else []
        for t_index, step in enumerate(steps):
            where, damaged = _locate(step, index)
            checks = step.get("checks") or []
            for field_problem, root in damaged if skipped is not None else []:
                skipped.append(f"scenarios[{s_index}].steps[{t_index}].{field_problem} (scenario {scenario_name!r}, "
                               f"step {t_index + 1})" + (f"; the step's root record: its {len(checks)} checks are "
                                                         "put on no span" if root else ""))
            configs = step_graders[t_index] if t_index < len(step_graders) else []
            if configs and [c.get("type") for c in configs] != [c.get("type") for c in checks]:
                configs = []  # not the manifest this report was graded with: name checks from the report alone
            for c_index, check in enumerate(checks):
                config = configs[c_index] if configs else None
                out.append(_result(check, config, where, scenario_name, t_index + 1, c_index + 1,
                                   content, budget))
    return out


def _result(check: Mapping[str, Any], config: Mapping[str, Any] | None, where: _Step, scenario: str,
            step: int, number: int, content: bool, budget: int) -> EvaluationResult:
    grader = str(check.get("type") or "unknown")
    passed = bool(check.get("passed"))
    reasoning = check.get("reasoning")
    evidence, tool_name, agent = None, None, where.agent_name
    if grader == "tool_usage":
        tool_name, call = _tool_check(check, config, where.tool_calls)
        if passed and call is not None and _is_id(call.get("span_id"), _SPAN_ID) and where.trace_id:
            evidence = str(call["span_id"])
            agent = call.get("agent") or agent
        name = f"tool_usage:{tool_name or check.get('field') or 'tool_calls'}"
    else:
        name = f"{grader}:{check.get('field') or (config or {}).get('field') or 'public_output'}"
    score = check.get("score")
    explanation = None
    if content and isinstance(reasoning, str) and reasoning:
        explanation = redact_text(reasoning[:budget])
        if evidence:
            explanation += f" (evidence: tool span {evidence})"
    return EvaluationResult(
        name=name, score=float(score) if isinstance(score, (int, float)) and not isinstance(score, bool) else None,
        label="pass" if passed else "fail", explanation=explanation,
        trace_id=where.trace_id, span_id=where.root_span_id if where.trace_id else None, grader=grader,
        scenario=scenario, step=step, check=number, tool_name=tool_name, agent_name=agent, model=where.model,
        evidence_span_id=evidence,
    )


def _tool_check(check: Mapping[str, Any], config: Mapping[str, Any] | None,
                calls: Sequence[Mapping[str, Any]]) -> tuple[str | None, Mapping[str, Any] | None]:
    """The tool a ``tool_usage`` check expects, and the call it matched (``None``: none, or unknown)."""
    if config is not None:
        expected = config.get("tool_name")
        arguments = config.get("arguments")
        arguments = arguments if isinstance(arguments, Mapping) else {}
        for call in calls:  # ECP runtime's rule: name equal (when given), expected arguments a subset
            name = call.get("name") or call.get("tool") or call.get("id")
            args = call.get("arguments") or call.get("args") or {}
            if expected and name != expected:
                continue
            if isinstance(args, dict) and all(k in args and args[k] == v for k, v in arguments.items()):
                return expected or name, call
            if not isinstance(args, dict) and not arguments:
                return expected or name, call
        return expected, None
    reasoning = str(check.get("reasoning") or "")
    found = _FOUND_TOOL.match(reasoning)
    if found:  # without the manifest, a call is attributed only when its name is unambiguous
        same = [c for c in calls if (c.get("name") or c.get("tool") or c.get("id")) == found.group(1)]
        return found.group(1), same[0] if len(same) == 1 else None
    missing = _MISSING_TOOL.match(reasoning)
    return (missing.group(1) if missing else None), None


# -- finding the step in the traces ------------------------------------------------------------

class _SpanIndex:
    """The given spans by span id, and the roots of each trace in start order."""

    def __init__(self, spans: Iterable[Any]):
        self.trace_of: dict[str, str] = {}
        self.roots: dict[str, list[Any]] = {}
        self.step_roots: list[Any] = []
        for span in sorted(spans, key=lambda s: s.start_time or 0):
            ctx = span.context
            if ctx is None:
                continue
            trace_hex = f"{ctx.trace_id:032x}"
            self.trace_of[f"{ctx.span_id:016x}"] = trace_hex
            if span.parent is None:
                self.roots.setdefault(trace_hex, []).append(span)
                if span.name == "agent/step":
                    self.step_roots.append(span)
        self._used: set[int] = set()

    def root_by_input(self, text: Any) -> Any | None:
        for span in self.step_roots:
            if id(span) not in self._used and (span.attributes or {}).get(A.INPUT_VALUE) == text:
                self._used.add(id(span))
                return span
        return None


_ID_FIELDS = (("span_id", _SPAN_ID, 16), ("trace_id", _TRACE_ID, 32), ("parent_id", _SPAN_ID, 16))


def _damage(record: Mapping[str, Any]) -> str | None:
    """``trace_id: 'zz…' is not 32 lowercase hex digits``: the first id field of a span record that is not an id
    (``trace_id`` and ``parent_id`` may be missing or null), or ``None``."""
    from .._spans.redaction import excerpt

    for key, pattern, digits in _ID_FIELDS:
        value = record.get(key)
        if (value is not None or key == "span_id") and not _is_id(value, pattern):
            return f"{key}: {excerpt(value)} is not {digits} lowercase hex digits"
    return None


def _locate(step: Mapping[str, Any], index: _SpanIndex | None) -> tuple[_Step, list[tuple[str, bool]]]:
    """Where ``step`` lives, and the damaged span records of its logs: ``(logs[3].trace_id: …, root)``, ``root``
    true for the one that is the step's root record (then the step is placed on no span)."""
    spans = [(i, r) for i, r in indexed_log_records(step.get("logs")) if r.get("span_id") is not None]  # not notes
    ids = {r["span_id"] for _, r in spans if isinstance(r["span_id"], str)}  # damaged ones too: still parents
    records, damaged = [], []
    for i, record in spans:
        problem = _damage(record)
        if problem is None:
            records.append(record)
        else:
            parent = record.get("parent_id")
            damaged.append((f"logs[{i}].{problem}", not (isinstance(parent, str) and parent in ids)))
    where = _Step(tool_calls=[c for c in step.get("tool_calls") or [] if isinstance(c, dict)])
    roots = [r for r in records if r.get("parent_id") not in ids]
    if roots:  # a sound record without a parent among them is the root, a damaged one beside it is not
        damaged = [(problem, False) for problem, _ in damaged]
    root_damaged = any(root for _, root in damaged)
    if records or root_damaged:
        root = roots[0] if roots else None if root_damaged else records[0]
        where.root_span_id = root.get("span_id") if root else None
        where.trace_id = None if root is None else \
            root.get("trace_id") or (index.trace_of.get(str(where.root_span_id)) if index else None)
        agents = [r["attributes"].get(A.GEN_AI_AGENT_NAME) for r in records
                  if r.get("kind") == "agent" and isinstance(r.get("attributes"), dict)]
        where.agent_name = next((a for a in agents if a), None)
        models = {r["attributes"].get(A.GEN_AI_REQUEST_MODEL) for r in records
                  if r.get("kind") == "model" and isinstance(r.get("attributes"), dict)} - {None}
        where.model = models.pop() if len(models) == 1 else None
        if where.trace_id is None:
            where.root_span_id = None
        return where, damaged
    error = _ERROR_TRACE.search(str(step.get("error") or ""))
    if error:  # the trace is known even without spans: results go on the trace
        where.trace_id = error.group(1)
    if index is None:
        return where, damaged
    root = None
    if error and index.roots.get(error.group(1)):
        root = index.roots[error.group(1)][0]
    elif not error and step.get("status") != "skipped":
        root = index.root_by_input(step.get("input"))
    if root is not None:
        where.trace_id = f"{root.context.trace_id:032x}"
        where.root_span_id = f"{root.context.span_id:016x}"
    return where, damaged


def log_records(logs: Any) -> list[dict[str, Any]]:
    """A step's ``logs`` (a JSON string, as ECP defines it, or already a list) as its records (the objects),
    their strings UTF-8-safe (lone surrogates escaped); ``[]`` for anything else (not JSON, nested too deeply)."""
    return [record for _, record in indexed_log_records(logs)]


def indexed_log_records(logs: Any) -> list[tuple[int, dict[str, Any]]]:
    """:func:`log_records` with each record's 0-based place in ``logs`` (items that are no object skipped)."""
    from ..exporters.ecp._json import writable

    if isinstance(logs, str):
        try:
            logs = json.loads(logs)
        except (ValueError, RecursionError):
            return []
    if not isinstance(logs, list):
        return []
    try:
        return [(i, writable(r)) for i, r in enumerate(logs) if isinstance(r, dict)]
    except RecursionError:  # a record nested deeper than writable's walk (a few hundred levels): not usable
        return []


class NeedsYAML(ValueError):
    """A manifest could not be read because PyYAML is not installed (it comes with ``otel-agents[ecp]``)."""


def load_manifest(path: str | os.PathLike[str], *, field: str | None = None) -> dict[str, Any]:
    """Read an ECP manifest (YAML) for its graders. ``field``: the input field that named ``path`` (e.g.
    ``report field "manifest"``) when it did not come from the user; then it is read only if it is a regular
    file of at most :data:`~otel_agents._named_files.MAX_NAMED_FILE_BYTES` (never ``/dev/zero`` or a FIFO).

    Raises:
        OSError: it cannot be read (the message names the file).
        ValueError: over :data:`~otel_agents._named_files.MAX_DOCUMENT_BYTES`, not UTF-8, not YAML
            (``FILE:LINE: problem``; nested too deeply), or no ``scenarios`` list;
            :class:`~otel_agents._named_files.NamedFileError` (``field`` given) not a regular file or too large;
            :class:`NeedsYAML` PyYAML is not installed (the ``ecp`` extra).
    """
    try:
        import yaml
    except ImportError:
        raise NeedsYAML(f"{os.fspath(path)}: reading an ECP manifest needs PyYAML: "
                        "pip install 'otel-agents[ecp]'") from None

    from .._named_files import read_document, read_named_file

    name = os.fspath(path)
    try:
        if field is not None:  # its errors name the field and the path
            text = read_named_file(path, field).decode("utf-8")
        else:
            text = read_document(path).decode("utf-8")  # bounded: /dev/zero is an error, not all memory
        manifest = yaml.safe_load(text)
    except OSError as exc:
        if field is not None:
            raise
        raise type(exc)(f"cannot read manifest {name}: {exc.strerror or exc}") from None
    except UnicodeDecodeError as exc:
        raise ValueError(f"{name}: not UTF-8 (byte offset {exc.start})") from None
    except RecursionError:  # PyYAML composes nested collections recursively
        raise ValueError(f"{name}: not YAML: nested too deeply (deeper than the parser's recursion limit)") from None
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f":{mark.line + 1}" if mark is not None else ""
        raise ValueError(f"{name}{where}: not YAML: {getattr(exc, 'problem', None) or exc}") from None
    kind = _document_kind(manifest)
    if kind in ("summary", "report"):
        raise ValueError(f"{name}: {_SUMMARY_IS if kind == 'summary' else _REPORT_IS}, not {_MANIFEST_IS}")
    if not isinstance(manifest, dict) or not isinstance(manifest.get("scenarios"), list):
        raise ValueError(f"{name}: not an ECP manifest (no \"scenarios\" list)")
    return manifest


def _manifest_graders(manifest: Any, field: str | None = None) -> list[list[list[dict[str, Any]]]]:
    """``graders[scenario][step]``: each grader config of the manifest (``[]`` where unknown); ``field``: the
    input field that named a manifest path (read as :func:`load_manifest` reads one)."""
    if manifest is None:
        return []
    if not isinstance(manifest, Mapping):
        if not isinstance(manifest, (str, os.PathLike)):
            return []  # a report's "manifest" of another type (an int would be opened as a file descriptor)
        from .._named_files import NamedFileError

        try:
            manifest = load_manifest(manifest, field=field)
        except (OSError, ValueError) as exc:  # the report alone still names every check
            # gone (the report was moved) is ordinary; a device, FIFO or huge file named there, or no PyYAML
            # to read it with, is worth saying
            logger.log(logging.WARNING if isinstance(exc, (NamedFileError, NeedsYAML)) else logging.INFO,
                       "manifest not read (%s); tool_usage checks named from the report alone", exc)
            return []
    if not isinstance(manifest, Mapping):
        return []
    out = []
    for scenario in _list(manifest.get("scenarios")):
        steps = _list(scenario.get("steps")) if isinstance(scenario, Mapping) else []
        # a step that is no mapping keeps its place (dropped, the next step's graders named this step's checks)
        out.append([[g for g in _list(s.get("graders")) if isinstance(g, Mapping)] if isinstance(s, Mapping) else []
                    for s in steps])
    return out


def _list(value: Any) -> list[Any]:
    """``value`` when it is a list, else ``[]`` (a malformed manifest names nothing)."""
    return value if isinstance(value, list) else []
