"""``otel-agents ecp serve --replay SOURCE``: stored runs served as an ECP agent, so ``ecp run`` grades them.

A new manifest (a new check) is graded against runs recorded earlier, without
running the agent or calling its model again (the A²E engine's incremental
re-evaluation): each ``agent/step`` is answered with the envelope of a stored run.

SOURCE (:func:`load_runs`) is one file (gzip-compressed, pretty-printed too; read by the reader of
``otel-agents fold``, :func:`~otel_agents.exporters.file.iter_otlp_json`) of any of these, told apart line by line:

* OTLP/JSON trace lines (``ecp serve --trace-file``, the Collector's ``file``
  exporter, another instrumentation's traces): folded as ``otel-agents fold`` does;
* a page of Phoenix's span export (``{"data": [span, ...]}``), folded the same way;
* ECP envelopes, one JSON object per line (``otel-agents fold -o``).

Matching a manifest step to a stored run (:class:`Replayer`):

1. **By scenario and step.** ``ecp serve`` records on each step's root span the
   scenario it belongs to (``otel_agents.ecp.scenario.id``: one id from an
   ``agent/initialize`` to the next, which is how ``ecp run`` starts each
   scenario), the step's 1-based position in it (``otel_agents.ecp.step.index``)
   and, with content capture on, the SHA-256 of its normalised input (``otel_agents.ecp.step.input_sha256``;
   with content off it is not written: a digest of a short input gives it back to a dictionary, and such a
   run records no input to match).
   ECP's ``agent/step`` carries only the input, so a replayed scenario is bound,
   on its first step, to the first stored scenario not yet replayed whose inputs
   so far are the same, in the same positions; its next steps are answered from
   that scenario while they keep matching.
2. **Else by input text**: the first stored run not yet replayed whose input
   is the same after normalisation: Unicode NFC, leading and trailing whitespace
   removed, every run of whitespace one space (:func:`normalise`); nothing else
   (no case folding). A stored run's input is its ``input_sha256`` attribute, or
   the root span's ``input.value`` (ours, OpenInference) for traces recorded
   elsewhere, else its ``gen_ai.input.messages`` (OTel GenAI alone); when that is JSON
   (``input.mime_type`` ``application/json``) holding a ``messages`` list (LangChain/LangGraph's
   input) or GenAI messages, the text of its last human/user message (:func:`stored_input`), read as the fold
   reads a message's text: its text parts or content blocks joined by newlines.

Stored runs are answered in the order they were recorded, each once: ``ecp run``
repeated k times against one replay server (``--http``), or with ``--replay-cursor
FILE`` (which keeps what was replayed across the processes ``ecp run`` starts for a
stdio target, and across ``ecp run``\ s graded at once: each step's choice holds ``FILE.lock``), grades
recorded runs 1, 2, … k. A step with no stored run left is
answered with JSON-RPC error ``-32000`` naming the step's position and input (``ecp
run`` adds the scenario's name); nothing is invented. The reply is the stored
envelope as it was folded, plus one ``logs`` record named ``otel_agents.ecp.replayed``
saying it is a replay and of which stored run (trace id, scenario id, step); a stored step whose agent
raised or timed out under ``ecp serve`` (its ``agent/step`` root ended in error) is answered with the error
``ecp serve`` answered it with (``-32000`` ``agent raised …``, ``-32001``), so it fails as it did live.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import unicodedata
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

from ..semconv import attributes as A
from .jsonrpc import AGENT_ERROR, INVALID_PARAMS, STEP_TIMEOUT, RPCError

if TYPE_CHECKING:
    from ..exporters.file import MalformedLine

logger = logging.getLogger(__name__)

REPLAYED = "otel_agents.ecp.replayed"


def normalise(text: str) -> str:
    """The input as matched: Unicode NFC, stripped, every whitespace run one space."""
    return " ".join(unicodedata.normalize("NFC", text).split())


def input_key(text: str) -> str:
    """The SHA-256 (hex) of the normalised input's UTF-8 (lone surrogates kept as such, ``surrogatepass``: JSON
    can carry them): what ``ecp serve`` records and the replay matches."""
    return hashlib.sha256(normalise(text).encode("utf-8", "surrogatepass")).hexdigest()


class ReplaySourceError(ValueError):
    """The replay source cannot be read or holds no run (the message names the file and line)."""


@dataclass
class StoredRun:
    """One stored step: its envelope and what it is matched by."""

    envelope: dict[str, Any]
    key: str | None            # input_key of its input, when known
    scenario: str | None       # otel_agents.ecp.scenario.id
    index: int | None          # otel_agents.ecp.step.index (1-based)
    start: str                 # the root's start time (ISO 8601), for the recorded order
    id: str = ""               # trace id + root span id: what the replay claims
    line: int | None = None    # the source's line, for an envelope


@dataclass
class _Scenario:
    id: str
    steps: dict[int, StoredRun] = field(default_factory=dict)
    start: str = ""


def _root_record(envelope: Mapping[str, Any]) -> dict[str, Any]:
    with contextlib.suppress(Exception):
        records = json.loads(envelope.get("logs") or "[]")
        if records and isinstance(records[0], dict):
            return records[0]
    return {}


def _attributes(record: Mapping[str, Any]) -> dict[str, Any]:
    attrs = record.get("attributes")
    return attrs if isinstance(attrs, dict) else {}


def _stored(envelope: dict[str, Any], input_text: Any = None) -> StoredRun:
    root = _root_record(envelope)
    attrs = _attributes(root)
    key = attrs.get(A.OTEL_AGENTS_ECP_STEP_INPUT_SHA256)
    if not isinstance(key, str) and isinstance(input_text, str):
        key = input_key(input_text)
    index = attrs.get(A.OTEL_AGENTS_ECP_STEP_INDEX)
    scenario = attrs.get(A.OTEL_AGENTS_ECP_SCENARIO_ID)
    return StoredRun(envelope, key if isinstance(key, str) else None,
                     scenario if isinstance(scenario, str) else None,
                     index if isinstance(index, int) and not isinstance(index, bool) else None,
                     str(root.get("start") or ""), f"{envelope.get('trace_id')}/{root.get('span_id')}")


def stored_input(attributes: Mapping[str, Any]) -> str | None:
    """The input text of a root span recorded elsewhere (see the module docstring), or ``None``."""
    value, json_text = attributes.get(A.INPUT_VALUE), attributes.get(A.INPUT_MIME_TYPE) == A.MIME_JSON
    if value is None:  # OTel GenAI alone (ours, or another instrumentation's agent): its gen_ai.input.messages
        value, json_text = attributes.get(A.GEN_AI_INPUT_MESSAGES), True
    if not isinstance(value, str):
        return None
    if not json_text:
        return value
    from ..exporters.ecp._facts import user_text
    from ..exporters.ecp._json import attribute_json

    with contextlib.suppress(ValueError):  # nested too deeply is a ValueError too
        text = user_text(attribute_json(value))  # read as the fold reads a message (GenAI parts, content blocks)
        if text is not None:
            return text
    return value


def _is_envelope(obj: Any) -> bool:
    return isinstance(obj, dict) and "status" in obj and "public_output" in obj and "resourceSpans" not in obj


def _logs_problem(logs: Any) -> str | None:
    """What is wrong with a stored envelope's ``logs`` (``None`` or absent is nothing): ECP makes it a string of
    JSON text, an array of records; the replay decodes it to add its own record and writes it back as strict JSON,
    so JSON text holding ``NaN`` (in a line that is strict JSON itself) failed that step with an internal error.
    Named as the reader names a field (``logs: …``)."""
    from ..exporters.ecp._json import strict_decode

    if logs is None:
        return None
    if not isinstance(logs, str):
        return f"logs: expected a string (the JSON text of the log records), got {type(logs).__name__}"
    try:
        records = strict_decode(logs)
    except ValueError as exc:
        return f"logs: invalid JSON text: {exc}"
    if not isinstance(records, list):
        return f"logs: its JSON text is a {type(records).__name__}, expected an array of log records"
    return None


def load_runs(path: str, *, errors: list[MalformedLine] | None = None) -> list[StoredRun]:
    """The stored runs of ``path`` (see the module docstring), in recorded order (root start time).

    Read by the one reader of every command that reads OTLP/JSON files
    (:func:`~otel_agents.exporters.file.iter_otlp_json`, as ``otel-agents fold``): gzip, a byte-order mark, a
    pretty-printed document (one record over many lines), bounded lines; its envelope lines are the JSON objects
    that reader hands over as no trace request. A line that is neither an envelope nor OTLP/JSON (not UTF-8, not
    strict JSON, a field of the wrong type, cut short by a writer that was killed), or an envelope whose ``logs``
    is no strict JSON text of an array (:func:`_logs_problem`), is skipped, and a span with a
    bad field left out of its line, with the same :class:`~otel_agents.exporters.file.MalformedLine` as
    ``otel-agents fold`` reports (line number, field path); they go to ``errors``, or are logged as WARNINGs
    when ``errors`` is ``None``; the runs of the other lines are kept.

    Raises:
        ReplaySourceError: the file cannot be read, or it holds no run.
    """
    from ..exporters.ecp import fold
    from ..exporters.file import MalformedLine, iter_otlp_json

    skipped: list[MalformedLine] = []
    envelopes: list[tuple[int, dict[str, Any]]] = []  # (line number in the file, envelope)

    def other(number: int, obj: dict[str, Any]) -> None:
        if _is_envelope(obj):
            problem = _logs_problem(obj.get("logs"))
            if problem is None:
                envelopes.append((number, obj))
            else:  # its answer could not be written as strict JSON: the line is skipped, named, as a bad line is
                skipped.append(MalformedLine(path, number, problem))

    try:
        spans = [s for _, batch in iter_otlp_json(path, errors=skipped, others=other) for s in batch]
    except OSError as exc:
        raise ReplaySourceError(f"cannot read {path}: {exc.strerror or exc}") from None
    skipped.sort(key=lambda problem: problem.line)
    runs = [_stored(env) for _, env in envelopes]
    for run, (number, _) in zip(runs, envelopes):
        run.line = number
    if spans:
        inputs = {f"{s.context.span_id:016x}": stored_input(s.attributes or {}) for s in spans}
        for env in fold(spans):
            runs.append(_stored(env, inputs.get(_root_record(env).get("span_id"))))
    if errors is not None:
        errors.extend(skipped)
    else:
        for problem in skipped:
            logger.warning("otel_agents: replay skipped %s", problem)
    if not runs:
        first = f" ({skipped[0]})" if skipped else ""
        raise ReplaySourceError(f"{path}: no stored run (neither envelopes nor OTLP/JSON spans){first}")
    runs.sort(key=lambda r: r.start)
    return runs


class _Cursor:
    """What was replayed already: in memory, and in a JSON file when given (shared across processes)."""

    def __init__(self, path: str | None) -> None:
        self.path = path
        self._claimed: set[str] = set()

    def claimed(self) -> set[str]:
        """The ids replayed so far (an empty file, as ``mktemp`` makes, is a cursor of none).

        Raises:
            RPCError: ``-32000`` naming the file when it cannot be read or is not ``{"replayed": [id, …]}``
                (replaying from the start instead would grade run 1 again, unnoticed).
        """
        if self.path and os.path.exists(self.path):
            from .._named_files import read_document
            from ..exporters.ecp._json import strict_decode

            try:
                text = read_document(self.path).decode("utf-8")  # bounded: /dev/zero is an error, not all memory
                data = strict_decode(text) if text.strip() else {"replayed": []}  # nested too deeply: ValueError
            except (OSError, ValueError) as exc:
                raise RPCError(AGENT_ERROR, f"replay: cannot read --replay-cursor {self.path}: "
                               f"{getattr(exc, 'strerror', None) or exc}") from None
            ids = data.get("replayed") if isinstance(data, dict) else None
            if not isinstance(ids, list) or not all(isinstance(i, str) for i in ids):
                raise RPCError(AGENT_ERROR, f"replay: --replay-cursor {self.path} is not a replay cursor "
                               '({"replayed": [run id, ...]}); remove it to replay from the first run')
            self._claimed.update(ids)
        return self._claimed

    @contextlib.contextmanager
    def held(self) -> Iterator[None]:
        """The file's lock (``FILE.lock``, an ``flock``) for one read-choose-claim: two ``ecp run``s graded at
        once against one cursor each read it, chose the same stored run and wrote their own claim over the
        other's. Raises: RPCError ``-32000`` when the lock file cannot be opened."""
        if not self.path:
            yield
            return
        import fcntl

        try:
            lock = open(f"{self.path}.lock", "a")  # noqa: SIM115 - closed below
        except OSError as exc:
            raise RPCError(AGENT_ERROR, f"replay: cannot write --replay-cursor {self.path} (its lock, "
                           f"{self.path}.lock): {exc.strerror or exc}") from None
        with lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # held for one step's choice: never long; a killed holder frees it
            yield

    def claim(self, *ids: str) -> None:
        """Mark ``ids`` replayed (in the file too). Raises: RPCError ``-32000`` when the file cannot be written."""
        self.claimed()
        self._claimed.update(ids)
        if self.path:
            tmp = f"{self.path}.{os.getpid()}.tmp"
            try:
                with open(tmp, "w", encoding="utf-8") as f:
                    json.dump({"replayed": sorted(self._claimed)}, f)
                os.replace(tmp, self.path)
            except OSError as exc:
                with contextlib.suppress(OSError):
                    os.unlink(tmp)
                raise RPCError(AGENT_ERROR, f"replay: cannot write --replay-cursor {self.path}: "
                               f"{exc.strerror or exc}") from None


@dataclass
class ReplayState:
    """One replayed scenario: the input keys of its steps so far and the stored scenario it is bound to."""

    keys: list[str] = field(default_factory=list)
    bound: _Scenario | None = None


class Replayer:
    """Answers steps from stored runs (the matching rules are in the module docstring).

    Args:
        runs: the stored runs, in recorded order.
        source: the source's name, for the ``replayed`` log record.
        cursor: a JSON file keeping what was replayed across processes, or ``None``.
    """

    def __init__(self, runs: Iterable[StoredRun], source: str = "", cursor: str | None = None) -> None:
        self.runs = list(runs)
        self.source = source
        self.cursor = _Cursor(cursor)
        scenarios: dict[str, _Scenario] = {}
        for run in self.runs:
            if run.scenario is not None and run.index is not None:
                sc = scenarios.setdefault(run.scenario, _Scenario(run.scenario, start=run.start))
                sc.steps.setdefault(run.index, run)
        self.scenarios = sorted(scenarios.values(), key=lambda s: s.start)
        self.inputless = [run for run in self.runs if run.key is None]
        self.cut = [run for run in self.runs
                    if _attributes(_root_record(run.envelope)).get(A.OTEL_AGENTS_TRUNCATED) is True]

    def cut_note(self) -> str | None:
        """Which stored runs answer with a ``public_output`` cut to the content budget, or ``None``."""
        if not self.cut:
            return None
        return (f"{len(self.cut)} of the {len(self.runs)} stored runs had their step's input or output cut to the "
                "content budget when recorded (otel_agents.truncated on the root): a cut output is replayed cut, so "
                "a check on its end may fail where it passed live; record with a larger OTEL_AGENTS_MAX_CONTENT_LENGTH")

    def inputless_note(self) -> str | None:
        """Why some stored runs can never answer a step (they record no input), or ``None`` when all can."""
        if not self.inputless:
            return None
        lines = [str(r.line) for r in self.inputless if r.line is not None]
        where = f" (lines {', '.join(lines[:5])}{', …' if len(lines) > 5 else ''})" if lines else ""
        return (f"{len(self.inputless)} of the {len(self.runs)} stored runs record no input{where} and match no "
                "step (an envelope matches only by the otel_agents.ecp.step.input_sha256 that `ecp serve` records "
                "on its root with content capture on, a trace also by its root's input.value): replay those runs' "
                "trace file instead, or record them with OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true")

    def answer(self, state: ReplayState, text: str) -> dict[str, Any]:
        """The envelope for the next step of ``state`` with input ``text`` (marked replayed).

        Raises:
            RPCError: ``-32000`` when no stored run is left for it.
        """
        with self.cursor.held():
            return self._answer(state, text)

    def _answer(self, state: ReplayState, text: str) -> dict[str, Any]:
        key = input_key(text)
        state.keys.append(key)
        n = len(state.keys)
        claimed = self.cursor.claimed()
        run = None
        if state.bound is not None:
            candidate = state.bound.steps.get(n)
            if candidate is not None and candidate.key == key and candidate.id not in claimed:
                run = candidate
            else:
                state.bound = None
        if run is None:
            for sc in self.scenarios:
                if sc.id in claimed or any(sc.steps.get(i + 1) is None or sc.steps[i + 1].key != k
                                           for i, k in enumerate(state.keys)):
                    continue
                if sc.steps[n].id in claimed:
                    continue
                state.bound, run = sc, sc.steps[n]
                break
        how = "scenario"
        if run is None:
            how = "input"
            run = next((r for r in self.runs if r.key == key and r.id not in claimed), None)
        if run is None:
            stored = sum(r.key == key for r in self.runs)
            detail = (f"all {stored} stored run(s) with this input were replayed already" if stored else
                      "no stored run has this input")
            if not stored and self.inputless:
                detail += f"; {self.inputless_note()}"
            raise RPCError(AGENT_ERROR, f"replay: no stored run for step {n} of this scenario, input {text!r} "
                           f"({detail}; source {self.source})",
                           {"step": n, "input": text, "stored_runs_with_input": stored, "source": self.source})
        self.cursor.claim(run.id, *([state.bound.id] if state.bound is not None and how == "scenario" else []))
        failure = _failure(run)
        if failure is not None:
            raise failure
        return _marked(run, self.source, how)


def _failure(run: StoredRun) -> RPCError | None:
    """The error ``ecp serve`` answered the stored step with, when its agent raised or timed out (the step's
    ``agent/step`` root ended in error), so the replayed step fails as the live one did; else ``None``."""
    root = _root_record(run.envelope)
    attrs = _attributes(root)
    if root.get("name") != "agent/step" or root.get("status") != "error" or A.OTEL_AGENTS_ECP_SCENARIO_ID not in attrs:
        return None
    error = str(root.get("error") or attrs.get("error.type") or "an error")
    data = {"type": attrs.get("error.type"), "trace_id": run.envelope.get("trace_id"), "replayed": run.id}
    if attrs.get(A.OTEL_AGENTS_STREAM_ABANDONED) and attrs.get("error.type") == "TimeoutError":
        return RPCError(STEP_TIMEOUT, f"agent step timed out (replayed: {error})", data)
    return RPCError(AGENT_ERROR, f"agent raised {error}", data)


def _marked(run: StoredRun, source: str, how: str) -> dict[str, Any]:
    envelope = dict(run.envelope)
    records: list[Any] = []
    with contextlib.suppress(Exception):
        records = json.loads(envelope.get("logs") or "[]")
    records.append({"trace_id": envelope.get("trace_id"), "span_id": None, "parent_id": None, "kind": None,
                    "name": REPLAYED, "start": None, "duration_ms": None, "status": "ok",
                    "attributes": {"otel_agents.replay.source": source, "otel_agents.replay.matched_by": how,
                                   "otel_agents.replay.run": run.id,
                                   A.OTEL_AGENTS_ECP_SCENARIO_ID: run.scenario,
                                   A.OTEL_AGENTS_ECP_STEP_INDEX: run.index}})
    envelope["logs"] = json.dumps(records, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
    return envelope


class _Runner:
    """What the session manager expects of a session's runner: a lock, and nothing to close."""

    def __init__(self) -> None:
        self.lock = asyncio.Lock()

    def close(self) -> None:
        pass


class ReplaySession:
    """The ECP methods answered from a :class:`Replayer` (one per ECP session)."""

    def __init__(self, replayer: Replayer, name: str) -> None:
        self.replayer = replayer
        self.name = name
        self.state = ReplayState()
        self.runner = _Runner()

    def methods(self) -> dict[str, Any]:
        """ECP method name → its handler: ``agent/initialize``, ``agent/step``, ``agent/reset``."""
        return {"agent/initialize": self.initialize, "agent/step": self.astep, "agent/reset": self.areset}

    def initialize(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """A new scenario starts; capabilities as ``ecp serve`` declares them."""
        from .session import PROTOCOL_VERSION

        self.state = ReplayState()
        caps = {"tool_calls": {}, "evaluation_context": {}, "usage": {}, "reset": {}}
        return {"name": self.name, "protocol_version": PROTOCOL_VERSION, "capabilities": caps}

    async def areset(self, params: Mapping[str, Any]) -> bool:
        """``agent/reset``: accepted, ``True``; the replay state is kept (``agent/initialize`` starts anew)."""
        return True

    async def astep(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """``agent/step``: the stored envelope answering ``params["input"]`` (:meth:`Replayer.answer`), one step
        at a time per session.

        Raises:
            RPCError: ``INVALID_PARAMS`` when ``input`` is not a string.
        """
        text = params.get("input")
        if not isinstance(text, str):
            raise RPCError(INVALID_PARAMS, 'invalid params: "input" must be a string')
        async with self.runner.lock:
            return self.replayer.answer(self.state, text)

    def close(self) -> None:
        """Nothing to release (no agent, no worker thread)."""
        pass


def replay_sessions(replayer: Replayer, name: str, **options: Any) -> Any:
    """A :class:`~.sessions.SessionManager` whose sessions replay (same bounds and HTTP session rules)."""
    from .sessions import SessionManager

    class _Manager(SessionManager):
        def __init__(self) -> None:  # no agent target: sessions are made here
            import time
            from collections import OrderedDict

            self.target = None
            self.tracing = None
            self.name = name
            self.step_timeout = None
            self.max_sessions = max(1, options.get("max_sessions", 256))
            self.idle_timeout = options.get("idle_timeout", 900.0)
            self._clock = time.monotonic
            self._shared = None
            self._sessions = OrderedDict()
            self.default = self._new_session()

        def _new_session(self) -> Any:
            return ReplaySession(replayer, name)

    return _Manager()


__all__ = ["REPLAYED", "ReplaySession", "ReplaySourceError", "Replayer", "StoredRun", "input_key", "load_runs",
           "normalise", "replay_sessions"]
