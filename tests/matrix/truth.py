"""Ground truth for the matrix: what each fake model call returned, what each tool did, and the one
assertion helper every cell goes through (:func:`check_cell`).

The run of every cell follows one script, in each framework's own terms: the model's first call asks for
``get_weather(city="Paris")`` (usage 11 in / 7 out), the tool answers ``"sunny in Paris"``, the second
call answers ``"It is sunny in Paris"`` (usage 13 in / 5 out). A framework's fake calls
:meth:`Truth.reply` for the turn it plays and records in the returned :class:`Call` what it really sent
(usage and finish reason only once the chunk carrying them went out). Tools call :meth:`Truth.tool` /
:meth:`Truth.atool`, which raise (``tool_raises``) or wait to be cancelled (``cancel``) as the cell says.
"""

from __future__ import annotations

import asyncio
import gc
import threading
import time
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Iterator

from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, SpanProcessor
from opentelemetry.trace import SpanKind, StatusCode

from otel_agents._spans.messages import normalize_finish_reason
from otel_agents.exporters.ecp import fold
from otel_agents.semconv import attributes as A
from otel_agents._spans.finalisers import settle

CITY = "Paris"
TOOL = "get_weather"
TOOL_RESULT = f"sunny in {CITY}"
ANSWER = f"It is {TOOL_RESULT}"
USAGE = ((11, 7), (13, 5))  # (input, output) tokens of the first and second call
REJECTED = "sunny"  # output_retry: the first answer, which the framework rejects (the retry answers ANSWER)
RETRY_USAGE = (17, 6)  # output_retry: the usage of the call that answers again
SKIPPED = f"(from the cache) {ANSWER}"  # skip_model: what a callback answers in the model's place


RUN: ContextVar[int] = ContextVar("matrix_run", default=0)
"""Which run of a call that makes several (CrewAI's ``kickoff_for_each``) the code running here belongs to: set by
:meth:`Truth.run_started`; every :class:`Call` and :class:`ToolRun` records it."""


class ToolFailure(RuntimeError):
    """What the tool raises in ``tool_raises`` cells."""


class ModelFailure(RuntimeError):
    """What the fake model raises in ``model_raises`` cells."""


@dataclass
class Turn:
    """What the script says a call returns."""

    text: str | None
    tool_calls: list[tuple[str, dict]]
    usage: tuple[int, int]

    @property
    def is_tool_call(self) -> bool:
        return bool(self.tool_calls)


@dataclass
class Call:
    """One model call as the fake really answered it. ``usage``/``finish`` stay ``None`` until sent."""

    turn: Turn | None
    agent: str = ""
    usage: tuple[int, int] | None = None
    finish: str | None = None
    error: str | None = None
    answered: bool = False  # the whole response went out (last chunk included)
    said: bool = False  # a member's message that is not the run's answer (:meth:`Truth.say`)
    run: int = field(default_factory=RUN.get)  # which run of a call that makes several (:data:`RUN`)

    def sent(self, *, usage: bool = True, finish: str | None = None) -> None:
        """The response (or its last chunk) went out, with the usage of the turn and ``finish``."""
        if usage and self.turn is not None:
            self.usage = self.turn.usage
        if finish is not None:
            self.finish = finish
        self.answered = True


@dataclass
class ToolRun:
    name: str
    args: dict
    outcome: str = "running"  # ok | error | cancelled | delegated (until settled) | either (a race: not compared)
    by: str = ""  # the agent that delegated, for a delegation (:meth:`Truth.delegate`)
    run: int = field(default_factory=RUN.get)  # which run of a call that makes several (:data:`RUN`)


@dataclass
class Truth:
    """Everything the fakes and tools of one run did, in order."""

    ending: str
    calls: list[Call] = field(default_factory=list)
    tools: list[ToolRun] = field(default_factory=list)
    agents: list[tuple[str, str | None]] | None = None  # expected delegation tree, when the driver knows it
    top: str | None = None  # the agent whose answer is a multi-agent run's output (a team's leader), when not the last
    ends_by: str | None = None  # the stop reason of a run that completes (an AutoGen team: always by a condition)
    error_output: str | None = None  # what a framework that returns a failure as the run's output gave the user
    output: str | None = None  # what the caller got when no model answered it: a bare MCP tool call's result, a
    # callback's reply in place of the model's (skip_model), the text a tripped guardrail put in the answer's place
    skipped: int = 0  # skip_model: requests a callback answered in the model's place (never sent to it)
    runs: list[tuple[int, Any]] | None = None  # a call that makes several runs (:meth:`run_started`): each one's
    # trace id and the asyncio task it runs in (None in a thread)
    withheld: bool = False  # the framework did not give the caller its model's last answer (a run cancelled after it)
    events_race: bool = False  # which events a stream gives before its end races with a cancel from another thread
    _lock: threading.Lock = field(default_factory=threading.Lock)

    # -- the model side --------------------------------------------------------
    def reply(self, agent: str = "", has_tool_result: bool | None = None) -> Call:
        """The next call of ``agent``'s model: raises :class:`ModelFailure` in ``model_raises`` cells
        (recorded as a failed call), else the turn of the script (the tool call first, then the answer;
        ``has_tool_result`` overrides, for fakes that read the conversation)."""
        with self._lock:
            n = sum(1 for c in self.calls if c.agent == agent)
            if self.ending == "model_raises":
                self.calls.append(Call(None, agent, error="ModelFailure"))
                raise ModelFailure("model down")
            second = has_tool_result if has_tool_result is not None else n >= 1
            if self.ending == "max_turns":  # the model never answers: the framework's cap must stop the run
                second = False
            turn = Turn(ANSWER, [], USAGE[1]) if second else Turn(None, [(TOOL, {"city": CITY})], USAGE[0])
            if second and self.ending == "output_retry":  # the first answer is rejected, the retry accepted
                turn = Turn(ANSWER, [], RETRY_USAGE) if self.rejected else Turn(REJECTED, [], USAGE[1])
            call = Call(turn, agent)
            self.calls.append(call)
            return call

    @property
    def rejected(self) -> int:
        """output_retry: the answers the framework rejected (each must be a failed step)."""
        return sum(1 for c in self.calls if c.turn is not None and c.turn.text == REJECTED)

    def skip(self) -> str:
        """skip_model: a callback answers this request in the model's place (the model is not called);
        its answer is the run's output."""
        with self._lock:
            self.skipped += 1
            self.output = SKIPPED
        return SKIPPED

    def delegate(self, agent: str, tool: str, args: dict | None = None, *, as_tool: str | None = "spans") -> Call:
        """A multi-agent run's top ``agent`` delegates (a handoff, an agent used as a tool, a transfer): its
        call asks for ``tool(**args)`` with the first call's usage; it raises in ``model_raises`` cells. The
        agent's next :meth:`reply` is its answer (the script's second turn). ``as_tool``: the framework runs
        the delegation as a tool call, recorded: ``"spans"`` it lasts the member's run and ends as it does
        (:meth:`settle`), ``"returns"`` it returns at once (ok); ``None``: no tool call."""
        with self._lock:
            if self.ending == "model_raises":
                self.calls.append(Call(None, agent, error="ModelFailure"))
                raise ModelFailure("model down")
            call = Call(Turn(None, [(tool, dict(args or {}))], USAGE[0]), agent)
            self.calls.append(call)
            if as_tool:
                self.tools.append(ToolRun(tool, dict(args or {}), outcome="delegated" if as_tool == "spans" else "ok",
                                          by=agent))
            return call

    def delegation_started(self, tool: str, args: dict, by: str, *, spans: bool = True) -> None:
        """For a driver that sees the delegation's tool start (``delegate(..., as_tool=None)`` then): record it
        now, with the outcome of the member's run (``spans``: :meth:`settle`), else ok (it returned at once)."""
        self.tools.append(ToolRun(tool, dict(args), outcome="delegated" if spans else "ok", by=by))

    def say(self, agent: str, text: str) -> Call:
        """A message of a multi-agent run's member that is neither a tool call nor the run's answer (a planner's
        turn in a group chat, a selector's choice of speaker): ``text`` with the first call's usage; it raises in
        ``model_raises`` cells. Not the run's answer (:attr:`answer`)."""
        with self._lock:
            if self.ending == "model_raises":
                self.calls.append(Call(None, agent, error="ModelFailure"))
                raise ModelFailure("model down")
            call = Call(Turn(text, [], USAGE[0]), agent, said=True)
            self.calls.append(call)
            return call

    def settle(self) -> None:
        """A delegation's outcome is its member's run's: ok once the member answered (a failed tool it recovered
        from included), else failed or cancelled as the first of the member's tools that did not end ok, else
        cancelled (left before it answered)."""
        for i, run in enumerate(self.tools):
            if run.outcome != "delegated":
                continue
            after = [t.outcome for t in self.tools[i + 1:] if t.outcome != "delegated"]
            bad = next((o for o in after if o != "ok"), None)
            member_answered = not self.withheld and any(c.answered and c.turn and not c.turn.is_tool_call
                                                        and not c.said and c.agent != run.by for c in self.calls)
            run.outcome = "ok" if member_answered else (bad or "cancelled")
            if member_answered and self.ending in ("break_close", "break_drop", "cancel"):
                run.outcome = "either"  # whether the call returned before the caller left is a race of threads

    def delegates(self, agent: str) -> bool:
        """Whether ``agent``'s next call is its delegation (it has made no call yet)."""
        with self._lock:
            return not any(c.agent == agent for c in self.calls)

    def run_started(self) -> None:
        """A call that makes several runs (CrewAI's ``kickoff_for_each``: one per input) starts its next one here:
        what the fakes and tools record from now on in this context belongs to it (:data:`RUN`); the current
        span's trace is that run's (each run its own trace, its own envelope)."""
        try:
            task = asyncio.current_task()
        except RuntimeError:  # no loop in this thread
            task = None
        with self._lock:
            self.runs = [*(self.runs or []), (trace.get_current_span().get_span_context().trace_id, task)]
            RUN.set(len(self.runs) - 1)

    def part(self, run: int) -> "Truth":
        """Run ``run`` of a call that made several (:meth:`run_started`): its own truth; a run whose task was
        cancelled (its siblings' call failed first, and ``asyncio.run`` cancelled what was left) ended by ``cancel``."""
        task = (self.runs or [])[run][1]
        calls = [c for c in self.calls if c.run == run]
        ending = "cancel" if task is not None and task.done() and task.cancelled() else self.ending
        return Truth(ending, calls=calls,
                     tools=[t for t in self.tools if t.run == run], agents=self.agents, top=self.top,
                     ends_by=self.ends_by, error_output=self.error_output)

    # -- the tool side ---------------------------------------------------------
    def tool(self, name: str = TOOL, **args: Any) -> str:
        run = ToolRun(name, args)
        self.tools.append(run)
        if self.ending == "tool_raises":
            run.outcome = "error"
            raise ToolFailure("weather service down")
        run.outcome = "ok"
        return TOOL_RESULT

    async def atool(self, name: str = TOOL, **args: Any) -> str:
        run = ToolRun(name, args)
        self.tools.append(run)
        if self.ending in ("cancel", "caller_cancel"):
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                run.outcome = "cancelled"
                raise
        if self.ending == "tool_raises":
            run.outcome = "error"
            raise ToolFailure("weather service down")
        run.outcome = "ok"
        return TOOL_RESULT

    def reached(self) -> list[tuple[str, str | None]]:
        """The expected delegation tree (:attr:`agents`) cut to the agents the run reached: those whose model was
        called, and their delegators (a team without a model of its own); all of it when the fakes do not name
        their agent (a single agent)."""
        called = {c.agent for c in self.calls if c.agent}
        if not called or self.agents is None:
            return list(self.agents or [])
        parents = dict(self.agents)
        keep = set()
        for name in called:
            while name is not None and name not in keep:
                keep.add(name)
                name = parents.get(name)
        return [a for a in self.agents if a[0] in keep]

    @property
    def tool_running(self) -> bool:
        return any(t.outcome == "running" for t in self.tools)

    @property
    def answer(self) -> str | None:
        """The final answer the run got from its model, if the last call delivered one."""
        if self.output is not None:
            return self.output
        if self.ending == "guardrail" or self.withheld:  # the answer the model gave was blocked, or withheld
            return None
        last = self.calls[-1] if self.calls else None
        if self.top is not None and last is not None and last.agent != self.top:
            return None  # a member answered, its leader did not: the run has no answer
        if last and last.answered and last.turn and not last.turn.is_tool_call and not last.said:
            return last.turn.text
        return None


# -- driving one run to a given ending ----------------------------------------------------------------
Outcome = Any


def raised(exc: BaseException) -> tuple[str, str]:
    return ("raised", type(exc).__name__)


def drive_sync(call: Callable[[], Any], norm: Callable[[Any], Any]) -> Outcome:
    try:
        return norm(call())
    except Exception as exc:  # noqa: BLE001
        return raised(exc)


def drive_async(make: Callable[[], Any], norm: Callable[[Any], Any], truth: Truth) -> Outcome:
    async def main() -> Outcome:
        task = asyncio.ensure_future(make())
        if truth.ending == "cancel":
            await _until(lambda: truth.tool_running or task.done())
            task.cancel()
        try:
            return norm(await task)
        except (Exception, asyncio.CancelledError) as exc:  # noqa: BLE001
            return raised(exc)

    return asyncio.run(main())


def drive_stream(make: Callable[[], Iterator[Any]], norm: Callable[[Any], Any], truth: Truth) -> Outcome:
    out: list[Any] = []
    try:
        stream = make()
        it = iter(stream)
        for event in it:
            out.append(norm(event))
            if truth.ending in ("break_close", "break_drop"):
                break
        if truth.ending == "break_close":
            (getattr(stream, "close", None) or it.close)()
        del it, stream
        if truth.ending == "break_drop":
            gc.collect()
            settle()  # a collected stream's span ends in the finaliser thread
        return out
    except Exception as exc:  # noqa: BLE001
        return [*out, raised(exc)]


def drive_astream(make: Callable[[], AsyncIterator[Any]], norm: Callable[[Any], Any], truth: Truth) -> Outcome:
    async def consume(out: list) -> None:
        stream = make()
        if asyncio.iscoroutine(stream):  # `await client.create(stream=True)` gives the stream
            stream = await stream
        it = aiter(stream)
        async for event in it:
            out.append(norm(event))
            if truth.ending in ("break_close", "break_drop"):
                break
        if truth.ending == "break_close":
            await (getattr(stream, "aclose", None) or getattr(stream, "close", None) or it.aclose)()

    async def main() -> Outcome:
        out: list[Any] = []
        task = asyncio.ensure_future(consume(out))
        if truth.ending == "cancel":
            await _until(lambda: truth.tool_running or task.done())
            task.cancel()
        try:
            await task
        except (Exception, asyncio.CancelledError) as exc:  # noqa: BLE001
            out.append(raised(exc))
        if truth.ending == "break_drop":
            gc.collect()
            settle()  # a collected stream's span ends in the finaliser thread
        return out

    result = asyncio.run(main())
    if truth.ending == "break_drop":
        gc.collect()
        settle()  # a collected stream's span ends in the finaliser thread
    return result


DRIVERS = {"sync": drive_sync, "async": drive_async, "stream": drive_stream, "astream": drive_astream}


async def _until(cond: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "the run never reached its tool"
        await asyncio.sleep(0.002)


def drive(mode: str, make: Callable[[], Any], truth: Truth, norm: Callable[[Any], Any] = lambda x: x) -> Outcome:
    """Run ``make()`` (a call, a coroutine factory, a stream factory by ``mode``) to ``truth.ending``;
    the caller's view of what happened, normalised by ``norm``, with any exception as ``("raised", type)``."""
    if mode == "sync":
        return drive_sync(make, norm)
    return DRIVERS[mode](make, norm, truth)


# -- span bookkeeping -------------------------------------------------------------------------------
class OpenSpans(SpanProcessor):
    """Counts spans started and not yet ended, and keeps the ended ones for the fold."""

    def __init__(self) -> None:
        self.open: dict[int, str] = {}
        self.finished: list[ReadableSpan] = []
        self._lock = threading.Lock()

    def on_start(self, span: Any, parent_context: Any = None) -> None:
        with self._lock:
            self.open[span.context.span_id] = span.name

    def on_end(self, span: ReadableSpan) -> None:
        with self._lock:
            self.open.pop(span.context.span_id, None)
            self.finished.append(span)


def _sem(spans: list[ReadableSpan], kind: str) -> list[ReadableSpan]:
    got = [s for s in spans if (s.attributes or {}).get(A.OTEL_AGENTS_SPAN_KIND) == kind]
    return sorted(got, key=lambda s: s.start_time or 0)


def _tree(spans: list[ReadableSpan]) -> str:
    by_parent: dict[Any, list[ReadableSpan]] = {}
    ids = {s.context.span_id for s in spans}
    for s in sorted(spans, key=lambda s: s.start_time or 0):
        parent = s.parent.span_id if s.parent and s.parent.span_id in ids else None
        by_parent.setdefault(parent, []).append(s)
    lines: list[str] = []

    def walk(parent: Any, depth: int) -> None:
        for s in by_parent.get(parent, []):
            a = s.attributes or {}
            lines.append("  " * depth + f"{s.name} [{a.get(A.OTEL_AGENTS_SPAN_KIND)}] {s.status.status_code.name}"
                         f" in={a.get(A.GEN_AI_USAGE_INPUT_TOKENS)} out={a.get(A.GEN_AI_USAGE_OUTPUT_TOKENS)}"
                         f" finish={a.get(A.GEN_AI_RESPONSE_FINISH_REASONS)}"
                         f"{' abandoned' if a.get(A.OTEL_AGENTS_STREAM_ABANDONED) else ''}")
            walk(s.context.span_id, depth + 1)

    walk(None, 0)
    return "\n".join(lines)


def _comparable(truth: Truth, outcome: Outcome) -> Outcome:
    """What must be the same instrumented and not: all of it, but for a stream cancelled from outside while its
    tool runs, only how it ended: which events the consumer had taken by then is a race between two tasks
    (a loaded machine delivers one event more or fewer either way)."""
    if (truth.ending == "cancel" or truth.events_race) and isinstance(outcome, list):
        return outcome[-1:]
    return outcome


STOP_REASON = {"cancel": "cancelled", "caller_cancel": "cancelled", "guardrail": "guardrail",
               "max_turns": "max_turns", "termination": "termination", "budget": "budget"}
"""Ending → the envelope's ``metrics.stop_reason`` (``otel_agents.run.stop_reason``) for a run with an agent."""


def _check_runs(truth: Truth, finished: list[ReadableSpan], tree: str) -> list[dict]:
    """A call that made several runs: each run its own trace and its own envelope, checked as a cell of its own
    against its part of the truth (a run whose model raised is one that failed)."""
    traces = [trace_id for trace_id, _ in truth.runs or ()]
    assert {s.context.trace_id for s in finished} == set(traces) and len(set(traces)) == len(traces), \
        f"{len(traces)} runs, not one trace each:\n{tree}"
    envelopes = []
    for i, trace_id in enumerate(traces):
        part, spans = truth.part(i), OpenSpans()
        spans.finished = [s for s in finished if s.context.trace_id == trace_id]
        outcome = raised(asyncio.CancelledError()) if part.ending == "cancel" else \
            raised(ModelFailure()) if any(c.error for c in part.calls) else None
        envelopes.append(check_cell(part, spans, outcome, outcome))
    return envelopes


def check_cell(truth: Truth, spans: OpenSpans, outcome: Outcome, baseline: Outcome) -> dict:
    """Assert one cell against its ground truth (the module docstring of ``tests/matrix/table.py`` lists
    what); returns the envelope."""
    if truth.ending == "break_drop":
        gc.collect()
        settle()  # a collected stream's span ends in the finaliser thread
    truth.settle()
    assert _comparable(truth, outcome) == _comparable(truth, baseline), \
        f"instrumented result differs:\n{outcome!r}\nuninstrumented:\n{baseline!r}"
    assert not trace.get_current_span().get_span_context().is_valid, "a span was left current"
    assert not spans.open, f"spans never ended: {sorted(spans.open.values())}"
    finished = list(spans.finished)
    tree = _tree(finished)
    if truth.runs is not None:  # a call that made several runs (CrewAI's kickoff_for_each)
        return _check_runs(truth, finished, tree)

    # one model span per call, with that call's usage and finish reason (absent when not sent)
    models = _sem(finished, "model")
    assert len(models) == len(truth.calls), f"{len(truth.calls)} model calls, {len(models)} model spans:\n{tree}"
    for span, call in zip(models, truth.calls):
        a = span.attributes or {}
        got_usage = (a.get(A.GEN_AI_USAGE_INPUT_TOKENS), a.get(A.GEN_AI_USAGE_OUTPUT_TOKENS))
        want_usage = call.usage if call.usage is not None else (None, None)
        assert got_usage == want_usage, f"usage {got_usage}, the model sent {call.usage}:\n{tree}"
        finish = a.get(A.GEN_AI_RESPONSE_FINISH_REASONS)
        want_finish = (normalize_finish_reason(call.finish),) if call.finish is not None else None  # OTel values
        assert (tuple(finish) if finish else None) == want_finish, \
            f"finish reasons {finish}, the model sent {call.finish}:\n{tree}"
        if call.error:
            assert span.status.status_code is StatusCode.ERROR, f"failed call, span not ERROR:\n{tree}"

    # the tool spans of the calls made, failed ones not ok
    tools = [s for s in _sem(finished, "tool") if not (s.attributes or {}).get(A.OTEL_AGENTS_FINAL_ANSWER)
             and s.kind is not SpanKind.SERVER]  # an MCP server's side of a call is not a second call
    assert [(s.attributes or {}).get(A.GEN_AI_TOOL_NAME) for s in tools] == [t.name for t in truth.tools], tree
    for span, run in zip(tools, truth.tools):
        if run.outcome == "either":
            continue
        if run.outcome == "ok":
            assert span.status.status_code is not StatusCode.ERROR, tree
        else:
            assert span.status.status_code is StatusCode.ERROR or \
                (span.attributes or {}).get(A.OTEL_AGENTS_CONTROL_FLOW), f"{run.outcome} tool looks ok:\n{tree}"

    # the envelope
    envelopes = [e for e in fold(finished) if e["tool_calls"] or e["metrics"]["model_calls"]
                 or e["metrics"]["errors"] or e["agents"] or e["public_output"] is not None  # (an MCP client's tools/list: no run)
                 or not truth.calls and not truth.tools and e["metrics"]["steps"]]  # (a workflow left before its first step)
    assert len(envelopes) == 1, f"{len(envelopes)} runs folded:\n{tree}"
    env = envelopes[0]
    calls_usage = [c.usage for c in truth.calls if c.usage is not None]
    if calls_usage:
        for i, key in enumerate(("input_tokens", "output_tokens")):
            counts = [u[i] for u in calls_usage if u[i] is not None]
            assert env["usage"][key] == (sum(counts) if counts else None), env["usage"]
    else:
        assert "usage" not in env, env.get("usage")
    assert [(c["name"], c["arguments"]) for c in env["tool_calls"]] == [(t.name, t.args) for t in truth.tools]
    for c, run in zip(env["tool_calls"], truth.tools):
        assert run.outcome == "either" or (c["status"] == "ok") == (run.outcome == "ok"), (c, run)
    failed = isinstance(baseline, tuple) and baseline[:1] == ("raised",) or \
        isinstance(baseline, list) and any(isinstance(x, tuple) and x[:1] == ("raised",) for x in baseline)
    if truth.ending == "done" or (not failed and truth.answer is not None):
        assert env["public_output"] == truth.answer, f"public_output {env['public_output']!r}:\n{tree}"
    else:
        partial = truth.ending in ("break_close", "break_drop") and isinstance(env["public_output"], str) \
            and ANSWER.startswith(env["public_output"])  # what an abandoned run streamed before it was left
        assert env["public_output"] in (None, truth.answer) or partial or \
            (env["public_output"] == truth.error_output and env["metrics"]["errors"] >= 1), \
            f"public_output {env['public_output']!r}:\n{tree}"
    if truth.ending == "guardrail":
        assert env["public_output"] != ANSWER, f"the blocked answer is the run's output:\n{tree}"
    if truth.ending == "sampling":  # the model call the tool server asked for is under the call's tool span
        by_id = {s.context.span_id: s for s in finished}
        for span in models:
            parent = by_id.get(span.parent.span_id) if span.parent else None
            while parent is not None and (parent.attributes or {}).get(A.OTEL_AGENTS_SPAN_KIND) != "tool":
                parent = by_id.get(parent.parent.span_id) if parent.parent else None
            assert parent is not None, f"the sampled model call is not under the tool call:\n{tree}"
    if truth.ending == "skip_model":  # (the model span count above: none for the request never made)
        assert truth.skipped >= 1 and not failed, f"no callback answered in the model's place:\n{tree}"
    if truth.ending == "output_retry":  # each rejected answer a failed step; the output the accepted one
        assert truth.rejected >= 1 and not failed, f"no answer was rejected:\n{tree}"
        assert env["metrics"]["errors"] >= truth.rejected, \
            f"{truth.rejected} rejected answers, {env['metrics']['errors']} errors:\n{tree}"
    if truth.ending in ("cancel", "caller_cancel"):  # stopped: the cancellation itself adds no error line
        # (a run of kickoff_for_each can have a model call fail, handled by CrewAI, before asyncio.run cancels it)
        real = sum(1 for c in truth.calls if c.error) + sum(1 for t in truth.tools if t.outcome == "error")
        assert env["metrics"]["errors"] == real, f"{real} real error(s), a cancellation counted as one:\n{tree}"
    elif failed:
        assert env["metrics"]["errors"] >= 1, f"the run raised, the envelope has no error:\n{tree}"
    if truth.ending in ("break_close", "break_drop") and truth.answer is None and not failed:
        assert any((s.attributes or {}).get(A.OTEL_AGENTS_STREAM_ABANDONED) for s in finished), \
            f"an abandoned run, no span says so:\n{tree}"
    want_stop = STOP_REASON.get(truth.ending) if env["agents"] else None  # (stop reasons are an agent run's)
    if want_stop is None and truth.ending in ("done", "tool_raises"):
        want_stop = truth.ends_by
    if want_stop is None and truth.ending in ("break_close", "break_drop") and truth.answer is not None:
        want_stop = truth.ends_by  # a run its caller left that went on to its end (an AutoGen team's runtime)
    got_stop = env["metrics"]["stop_reason"]
    if truth.ending in ("break_close", "break_drop") and got_stop == "cancelled":
        want_stop = got_stop  # a run its caller left is cancelled where the framework runs it in a task it cancels
    assert got_stop == want_stop, \
        f"stop_reason {got_stop!r}, the run ended by {truth.ending}:\n{tree}"
    if truth.agents is not None and truth.calls:  # (a run left before its agent started has none)
        got = [(a["name"], a["parent"]) for a in env["agents"]]
        # every agent the run reached, in the tree's order; an agent started but left before its first model
        # call (a stream abandoned mid-delegation) may be there too, never one outside the tree
        assert set(truth.reached()) <= set(got) and got == [a for a in (truth.agents or []) if a in got], \
            env["agents"]
    return env
