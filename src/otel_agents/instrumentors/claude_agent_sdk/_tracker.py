"""The per-``Query`` state machine: the CLI's stream-json frames → agent, model and tool spans.

One :class:`Tracker` per ``claude_agent_sdk._internal.query.Query`` (one CLI session). It sees
every frame the SDK reads from its transport, on arrival (not when the consumer pulls it from the
SDK's 100-deep buffer; control frames other than the CLI's requests excepted), and every line the SDK
writes (prompts, control responses, interrupts).
All state lives here, never in module globals, and is bounded by what is open now: a model call is
forgotten when its response ends, a tool call when its ``tool_result`` arrives, a turn at its
``result``.

Threads: the main conversation is thread ``None``; a subagent's frames carry the id of the
``Agent``/``Task`` tool call that started it (``parent_tool_use_id``), which is its thread.
"""

from __future__ import annotations

import json
import time
from typing import Any, Callable

from opentelemetry import context as otel_context

from ..._spans import (ChatMessage, SemanticSpan, Telemetry, TextPart, ToolCallResponsePart, ToolDefinition,
                       Usage, guard)
from ...semconv import Kind, guardrail_attributes
from ...semconv import attributes as A
from ..anthropic._messages import block_parts, usage_of

AGENT_NAME = "claude"  # the main agent: the CLI's, which has no name of its own
PROVIDER = "anthropic"
SYNTHETIC_MODEL = "<synthetic>"  # the model of a message the CLI made up (a failed API request: its error text)
DELEGATION_TOOLS = ("Agent", "Task")  # the subagent tool (``Task`` before CLI 2.1.x)
CONTROL_FLOW_INTERRUPT = "interrupt"
# A call still running when its turn's result came: the CLI ended the run (a cap such as max_budget_usd, an error)
# and the call never returned. Not a failure of the call, not a success either (the fold: cancelled, not ok).
CONTROL_FLOW_STOPPED = "stopped"
TERMINAL_TASK_STATUSES = frozenset({"completed", "failed", "stopped", "killed"})  # the SDK's, for task_* frames

# Frame attributes with no standard key (the CLI's own result fields).
COST = A.LLM_COST_TOTAL  # OpenInference: total cost in USD
RESULT_SUBTYPE = "claude_agent_sdk.result.subtype"
# A result subtype or terminal_reason of the CLI's caps → otel_agents.run.stop_reason; ``hook_stopped``: a hook
# answered ``continue: false`` (the CLI stops the run after it: a termination condition of the caller's).
_STOPS = {"error_max_turns": "max_turns", "max_turns": "max_turns", "error_max_budget_usd": "budget",
          "hook_stopped": "termination"}
TERMINAL_REASON = "claude_agent_sdk.terminal_reason"
NUM_TURNS = "claude_agent_sdk.num_turns"
DURATION_API_MS = "claude_agent_sdk.duration_api_ms"
PERMISSION_DENIALS = "claude_agent_sdk.permission_denials"
RESULT_USAGE = "claude_agent_sdk.result.usage"  # JSON {"usage": ..., "modelUsage": ...} as the result reported
API_ERROR_STATUS = "http.response.status_code"  # the API's HTTP status behind an error result
MAX_HELD = 256  # failed tool calls of one turn held for its result (bounded: the rest end at once)
MAX_QUEUED = 64  # prompts written while a turn runs, waiting for the turn that takes them in (bounded)
PERMISSION_DECISION = "claude_agent_sdk.permission.decision"  # can_use_tool's answer: allow / deny
TASK_ID = A.OTEL_AGENTS_TASK_ID
# error.type of what was still running when the CLI's output ended with no exception and no result (the SDK's
# iterator then just ends): the run never completed. (An exception the SDK raised instead, ProcessError and the
# like, is recorded as that exception.)
NO_RESULT = "no_result"
_NO_RESULT_MESSAGE = "the Claude Code CLI's output ended before this finished (no result)"
# The input counts a message_delta may restate (the API's usage there is cumulative: a server tool's searches add
# input tokens after message_start, whose counts the assistant frames repeat).
_INPUT_USAGE_KEYS = ("input_tokens", "cache_creation_input_tokens", "cache_read_input_tokens")


class _ModelCall:
    __slots__ = ("span", "parts", "snapshot", "restated", "output_tokens", "stop_reason", "last", "error", "streamed")

    def __init__(self, span: SemanticSpan):
        self.span = span
        self.parts: list[Any] = []
        self.snapshot: Any = None  # the usage the assistant frames repeat (input and cache counts)
        self.restated: dict = {}  # input and cache counts the message_delta restated (final: server tools add some)
        self.output_tokens: int | None = None  # from the response's message_delta (partial messages)
        self.stop_reason: str | None = None
        self.last = time.time_ns()
        self.error: str | None = None  # the CLI's AssistantMessageError: the API request failed
        self.streamed = False  # its message_start came (partial messages): its message_delta ends the response


class _Thread:
    """One conversation: the main one (``None``) or a subagent's."""

    __slots__ = ("agent", "history", "open_model", "trigger", "streaming", "own")

    def __init__(self, agent: SemanticSpan, own: bool):
        self.agent = agent
        self.own = own  # a subagent span we opened (ended when its tool call returns)
        self.history: list[ChatMessage] = []
        self.open_model: tuple[str, _ModelCall] | None = None  # (message id, call)
        self.trigger = time.time_ns()  # when the request that the next response answers was complete
        self.streaming: str | None = None  # message id announced by the last message_start


class _Tool:
    __slots__ = ("span", "name", "args", "denied", "guardrail", "thread")

    def __init__(self, span: SemanticSpan, name: str, args: Any, thread: str | None = None):
        self.span = span
        self.name = name
        self.args = args
        self.thread = thread  # the conversation that called it (``parent_tool_use_id``; ``None``: the main one)
        self.denied: str | None = None  # the deny message of can_use_tool, when it denied the call
        self.guardrail = False


class _Prompt:
    """A prompt the SDK wrote: its content, its ``uuid`` (when the caller gave one), when it was written and the
    caller's context then (the parent of the turn it starts)."""

    __slots__ = ("content", "uuid", "written", "context")

    def __init__(self, frame: dict):
        self.content = (frame.get("message") or {}).get("content")
        self.uuid = frame.get("uuid")
        self.written = time.time_ns()
        self.context = otel_context.get_current()


class Turn:
    """One agent run: ``query()`` or one ``ClaudeSDKClient.query()`` up to its ``result``."""

    def __init__(self, span: SemanticSpan, own_span: bool = True):
        self.span = span
        self.own_span = own_span  # False: the span belongs to the query() wrapper, which ends it
        self.interrupted = False
        self.done = False
        self.prompted = False  # its prompt was written (its input): a later one waits in Tracker.queued
        self.cost_base: float | None = None  # the CLI's running cost when it began (None: not known)
        self.pending_output: Any = None  # query()'s result while a background subagent works on (the run goes on)
        self.incomplete = False  # the CLI's output ended before its result (see Tracker.on_stream_end)


class Tracker:
    """Spans of one CLI session. ``joining``: the session was running before we saw it (a client connected
    before ``instrument()``): a turn it may be in is not ours, so frames are ignored up to the next prompt
    written or the next ``result``."""

    def __init__(self, telemetry: Telemetry, turn: Turn | None = None, system: Any = None,
                 model: str | None = None, joining: bool = False):
        self.telemetry = telemetry
        self.turn = turn
        self.run = turn  # query()'s run (its span lasts the generator): a turn the CLI starts itself reopens it
        self.joining = joining
        self.system = system
        self.request_model = model
        self.session_id: str | None = None
        self.threads: dict[str | None, _Thread] = {}
        self.tools: dict[str, _Tool] = {}
        self.requests: dict[str, tuple[str, str | None]] = {}  # control request id → (subtype, tool_use_id)
        self.callbacks: dict[str, SemanticSpan] = {}  # control request id → the hook/permission span running it
        self.tool_names: list[str] = []
        self.tasks: dict[str, str] = {}  # running task id → the Agent tool_use id of its subagent
        self.background: dict[str, _Thread] = {}  # subagents whose Agent call returned while they run on
        # Failed tool calls held until the turn's result: its ``permission_denials`` says which the CLI itself
        # denied (settings rules, permission mode), which a tool_result alone cannot tell from a failure.
        # tool_use id → (tool, result text, end time ns); at most MAX_HELD, the rest end at once as failures.
        self.held: dict[str, tuple[_Tool, str | None, int]] = {}
        self.history: list[ChatMessage] = []  # the main conversation as the last turn left it
        # Prompts written while a turn runs (a second client.query() before the first's result, a streamed prompt's
        # next message): the CLI takes each in, either into that turn (its frames then list the prompt's uuid in
        # ``user_message_uuids``) or as the start of the next one. Neither is the running turn's input.
        self.queued: list[_Prompt] = []
        # The CLI's total_cost_usd is the running total of its process (stream-json serves every turn from one
        # process; anthropics/claude-code#83239): a turn's cost is its result's total less the one before. A session
        # we join mid-way has had results we never saw: unknown until its next result.
        self.spent: float | None = None if joining else 0.0
        self.idle_since = time.time_ns()  # the last result, or a background task's end after it
        self.failure: BaseException | None = None  # what the SDK's reader raised (its ``error`` frame)
        if turn is not None:
            self._begin(turn)

    # -- the turn ------------------------------------------------------------------
    def _begin(self, turn: Turn) -> None:
        self.turn = turn
        turn.done = False
        if turn.cost_base is None:  # (a query() run the CLI woke for a follow-up keeps the base it began with)
            turn.cost_base = self.spent
        self.threads = {None: _Thread(turn.span, own=False)}
        with guard("claude_agent_sdk.turn"):
            turn.span.set_agent(AGENT_NAME)
            if self.session_id and A.SESSION_ID not in turn.span.run_attributes:
                turn.span.set_attributes({A.SESSION_ID: self.session_id, A.GEN_AI_CONVERSATION_ID: self.session_id})

    def turn_span(self) -> SemanticSpan | None:
        return self.turn.span if self.turn is not None else None

    def open_turn(self, parent: Any = None) -> None:
        """A prompt was written while no turn is open (``ClaudeSDKClient``): a new agent span, under the
        context current in the caller that wrote it (``parent``). The conversation goes on from the last turn's."""
        span = self.telemetry.start_span(Kind.AGENT, AGENT_NAME, parent=parent)
        self._begin(Turn(span))
        self.threads[None].history = list(self.history)

    def _take(self, prompt: _Prompt) -> None:
        """The open turn takes ``prompt`` in: the conversation's next message; the turn's input if it is its first."""
        thread = self.threads.get(None)
        turn = self.turn
        if thread is None or turn is None:
            return
        message = _message("user", prompt.content)
        thread.history.append(message)
        if not turn.prompted:
            turn.prompted = True
            thread.trigger = max(thread.trigger, prompt.written)
            if turn.span.records_content:
                turn.span.set_input(prompt.content if isinstance(prompt.content, str) else _text(message),
                                    messages=[message])  # (its media kept where the input is messages)

    def _taken_in(self, frame: dict) -> None:
        """A main-thread frame that lists the prompts its turn took in (``user_message_uuids``, the CLI's): the
        queued ones it names join the turn's conversation now."""
        if not self.queued or self.turn is None or frame.get("parent_tool_use_id") is not None:
            return
        uuids = frame.get("user_message_uuids")
        uuids = uuids if isinstance(uuids, list) else [frame.get("user_message_uuid")]
        taken = [p for p in self.queued if p.uuid and p.uuid in uuids]
        main = self.threads.get(None)
        if not taken or main is None:
            return
        message = frame.get("message") if frame.get("type") == "assistant" else (frame.get("event") or {}).get("message")
        if main.open_model is not None and main.open_model[0] != (message or {}).get("id"):
            self._end_model(main)  # the response before it ended: the prompt comes after it in the conversation
        for prompt in taken:
            self.queued.remove(prompt)
            self._take(prompt)

    def _wake(self) -> None:
        """The CLI starts a turn of its own on the main thread, with no prompt of the caller's: a background
        subagent's task ended and woke the main agent for a follow-up turn, with a result of its own. Inside
        ``query()`` it is the same run: its turn reopens on the run's span (whose output becomes the new
        result's); on a ``ClaudeSDKClient`` a new agent span. Its conversation goes on from the last turn's,
        its first request from when the CLI went idle (the result, or the task's end after it). A prompt
        written while the last turn ran, and not taken into it, is the one this turn answers."""
        prompt = self.queued.pop(0) if self.queued else None
        run = self.run
        if run is not None and not run.span.ended:
            self._begin(run)
        else:
            self.open_turn(prompt.context if prompt is not None else None)
        main = self.threads[None]
        main.history = list(self.history)
        main.trigger = self.idle_since
        if prompt is not None:
            self._take(prompt)

    def end_turn(self, *, error: BaseException | None = None, abandoned: bool = False,
                 incomplete: bool = False, stopped: bool = False) -> None:
        """End every span still open (the turn's own span only if we opened it), marked as the turn ended: by
        ``error``, ``abandoned`` by its caller, ``incomplete`` (the CLI's output ended before its result), or
        ``stopped`` (by its result: a response, tool call or subagent still running then never returned; the
        user's callbacks are left unmarked: one may be answered and not yet closed)."""
        turn = self.turn
        if turn is None:
            return
        turn.incomplete = turn.incomplete or incomplete
        for thread in list(self.threads.values()):
            call = thread.open_model[1] if thread.open_model is not None else None
            if call is not None and call.streamed and call.stop_reason is None:  # its response was cut off
                if incomplete and error is None and not turn.interrupted and not call.span.ended:
                    # the CLI's output just ended: the response's own stream ended without its message_delta, as
                    # any model stream cut short is told (the run's other spans say no_result)
                    call.span.mark_incomplete("message_delta")
                else:
                    self._mark_unfinished(call.span, turn, error, abandoned, incomplete, stopped)
            self._end_model(thread)
        main = self.threads.get(None)
        self.history = list(main.history[-200:]) if main is not None else []
        self.idle_since = time.time_ns()
        for request_id in list(self.callbacks):
            span = self.callbacks.pop(request_id)
            self._mark_unfinished(span, turn, error, abandoned, incomplete)
            span.end()
        self._end_held(())  # no result came to say which were denials: they failed as their results said
        for tool_id in list(self.tools):
            if self.tools[tool_id].thread in self.background:
                continue  # a background subagent's call: it runs on past the turn (see end_background)
            tool = self.tools.pop(tool_id)
            self._mark_unfinished(tool.span, turn, error, abandoned, incomplete, stopped)
            tool.span.end()
        for thread in self.threads.values():
            if thread.own:
                self._mark_unfinished(thread.agent, turn, error, abandoned, incomplete, stopped)
                thread.agent.end()
        self.threads = {}
        self.turn = None
        turn.done = True
        if turn.own_span:
            self._mark_unfinished(turn.span, turn, error, abandoned, incomplete)
            turn.span.end()

    def on_stream_end(self) -> None:
        """The SDK's reader ended on its own (not closed by its caller): the CLI's output ended. What is still
        open never finished: it ends with the exception the reader raised (``ProcessError``: the CLI crashed or
        was killed; ``CLIJSONDecodeError``…), else as ``no_result`` (the CLI exited without a result: the SDK's
        iterator just ends). A background subagent whose task never ended too."""
        with guard("claude_agent_sdk.stream_end"):
            error = self.failure
            self.end_turn(error=error, incomplete=True)
            self.end_background(error=error, incomplete=True)

    def _on_error(self, frame: dict) -> None:
        """The SDK's reader failed (its ``error`` frame carries the exception its iterators raise), then ends."""
        exc = frame.get("exception")
        self.failure = exc if isinstance(exc, BaseException) else None

    @staticmethod
    def _mark_unfinished(span: SemanticSpan, turn: Turn, error: BaseException | None, abandoned: bool,
                         incomplete: bool = False, stopped: bool = False) -> None:
        if span.ended:
            return
        if turn.interrupted:
            span.set_attribute(A.OTEL_AGENTS_CONTROL_FLOW, CONTROL_FLOW_INTERRUPT)
            if span.kind is Kind.AGENT:
                span.set_stop_reason("cancelled")  # the caller's interrupt() stopped the run
        else:
            _mark_closing(span, error, abandoned, incomplete, stopped)

    def _start(self, kind: Kind, name: Any, parent: Any, attributes_extra: Any = None, **kwargs: Any) -> SemanticSpan:
        """A child span; it carries the CLI's session id unless the caller's run set one."""
        attributes = dict(attributes_extra or {})
        if self.session_id and (self.turn is None or A.SESSION_ID not in self.turn.span.run_attributes):
            attributes.update({A.SESSION_ID: self.session_id, A.GEN_AI_CONVERSATION_ID: self.session_id})
        return self.telemetry.start_span(kind, name, parent=parent, attributes=attributes, **kwargs)

    # -- frames written by the SDK ------------------------------------------------------
    def on_write(self, line: str) -> None:
        with guard("claude_agent_sdk.write"):
            for text in line.splitlines():
                if text.strip():
                    self._written(json.loads(text))

    def _written(self, frame: dict) -> None:
        kind = frame.get("type")
        if kind == "user" and frame.get("parent_tool_use_id") is None:
            self.joining = False
            prompt = _Prompt(frame)
            if self.turn is None:
                self.open_turn(prompt.context)
            if self.turn is not None and not self.turn.prompted:
                self._take(prompt)
            elif len(self.queued) < MAX_QUEUED:
                self.queued.append(prompt)  # asked while a turn runs: not that turn's input
        elif kind == "control_request" and (frame.get("request") or {}).get("subtype") == "interrupt":
            if self.turn is not None:
                self.turn.interrupted = True
        elif kind == "control_response":
            response = frame.get("response") or {}
            callback = self.callbacks.get(response.get("request_id"))
            if callback is not None:
                self._answered(callback, response)
            asked = self.requests.pop(response.get("request_id"), None)
            if asked is None or response.get("subtype") != "success":
                return
            subtype, tool_use_id = asked
            answer = response.get("response") or {}
            tool = self.tools.get(tool_use_id) if tool_use_id else None
            if subtype == "can_use_tool" and answer.get("behavior") == "deny":
                if answer.get("interrupt") and self.turn is not None:
                    self.turn.interrupted = True
                if tool is not None:
                    tool.denied = str(answer.get("message") or "denied")
            elif subtype == "hook_callback" and tool is not None:
                specific = answer.get("hookSpecificOutput") or {}
                if specific.get("permissionDecision") == "deny" or answer.get("decision") == "block":
                    tool.guardrail = True
                    tool.denied = str(specific.get("permissionDecisionReason") or answer.get("reason") or "denied")

    # -- the user's callbacks: hooks and can_use_tool ------------------------------------
    def open_callback(self, request: Any) -> SemanticSpan | None:
        """A span for the user's callback that answers this control request (``hook_callback``: ``hook
        {event}``, a ``PreToolUse`` hook as a guardrail; ``can_use_tool``: ``permission {tool}``), under
        the tool call it is about, else the turn; ``None`` for other requests."""
        data = request.get("request") if isinstance(request, dict) else None
        request_id = request.get("request_id") if isinstance(request, dict) else None
        if not isinstance(data, dict) or self.turn is None or not request_id:
            return None
        subtype = data.get("subtype")
        if subtype not in ("hook_callback", "can_use_tool") or len(self.callbacks) >= 1000:
            return None
        tool = self.tools.get(data.get("tool_use_id") or "")
        parent = tool.span if tool is not None else self.turn.span
        if subtype == "hook_callback":
            hook_input = data.get("input") if isinstance(data.get("input"), dict) else {}
            event = str(hook_input.get("hook_event_name") or "hook")
            if event == "PreToolUse":
                span = self._start(Kind.CHAIN, f"guardrail {event}", parent, attributes_extra=guardrail_attributes())
                span.set_attribute(A.OTEL_AGENTS_GUARDRAIL_TRIGGERED, False)
            else:
                span = self._start(Kind.CHAIN, f"hook {event}", parent)
            if span.records_content:
                span.set_input(hook_input)
        else:
            span = self._start(Kind.CHAIN, f"permission {data.get('tool_name') or 'tool'}", parent)
            if span.records_content:
                span.set_input(data.get("input"))
        self.callbacks[request_id] = span
        return span

    def _answered(self, span: SemanticSpan, response: dict) -> None:
        if response.get("subtype") == "error":
            span.set_error("callback_error", str(response.get("error") or ""))
            return
        answer = response.get("response") or {}
        if span.records_content:
            span.set_output(answer)
        behavior = answer.get("behavior")
        if behavior:
            span.set_attribute(PERMISSION_DECISION, str(behavior))
        specific = answer.get("hookSpecificOutput") or {}
        if specific.get("permissionDecision") == "deny" or answer.get("decision") == "block":
            span.set_attribute(A.OTEL_AGENTS_GUARDRAIL_TRIGGERED, True)

    def close_callback(self, request: Any) -> None:
        span = self.callbacks.pop(request.get("request_id") if isinstance(request, dict) else None, None)
        if span is not None:
            span.end()

    # -- frames read from the CLI ----------------------------------------------------
    def on_frame(self, frame: Any) -> None:
        with guard("claude_agent_sdk.frame"):
            if not isinstance(frame, dict):
                return
            kind = frame.get("type")
            if self.joining:
                self.joining = kind != "result"  # the end of the turn that was under way, if any
                if not self.joining:
                    self.spent = _cost(frame)  # the running total from here on
                return
            handler: Callable[[dict], None] | None = getattr(self, f"_on_{kind}", None)
            if handler is not None:
                handler(frame)

    def _on_control_request(self, frame: dict) -> None:
        request = frame.get("request") or {}
        subtype = request.get("subtype")
        if subtype in ("can_use_tool", "hook_callback") and frame.get("request_id"):
            if len(self.requests) < 1000:  # answered requests are removed; this only bounds a CLI that never waits
                self.requests[frame["request_id"]] = (subtype, request.get("tool_use_id"))

    def _on_system(self, frame: dict) -> None:
        subtype = frame.get("subtype")
        if subtype == "init":
            self.session_id = frame.get("session_id") or self.session_id
            self.tool_names = [t for t in frame.get("tools") or () if isinstance(t, str)][:256]
            if self.turn is not None and self.session_id and A.SESSION_ID not in self.turn.span.run_attributes:
                self.turn.span.set_attributes({A.SESSION_ID: self.session_id,
                                               A.GEN_AI_CONVERSATION_ID: self.session_id})
            self.request_model = self.request_model or frame.get("model")
        elif subtype == "task_started" and self._is_subagent(frame.get("tool_use_id")):
            thread = self._thread(frame["tool_use_id"])
            if thread.own and frame.get("task_id"):
                thread.agent.set_attribute(TASK_ID, str(frame["task_id"]))
                if len(self.tasks) < 1000:
                    self.tasks[str(frame["task_id"])] = frame["tool_use_id"]
        elif subtype in ("task_notification", "task_updated"):
            status = frame.get("status") if subtype == "task_notification" else (frame.get("patch") or {}).get("status")
            if status in TERMINAL_TASK_STATUSES:
                self._task_ended(str(frame.get("task_id")), frame.get("tool_use_id"), status)

    def _is_subagent(self, tool_use_id: Any) -> bool:
        """Whether the task a ``task_started`` names by ``tool_use_id`` is a subagent's: its call is of the
        ``Agent``/``Task`` tool (or its frames opened its thread already). The CLI makes tasks of other calls too
        (``task_type`` ``local_bash``: a Bash command, in the foreground as well): those stay tool calls."""
        if not isinstance(tool_use_id, str) or not tool_use_id:
            return False
        tool = self.tools.get(tool_use_id)
        return tool_use_id in self.threads or (tool is not None and tool.name in DELEGATION_TOOLS)

    def _task_ended(self, task_id: str, tool_use_id: Any, status: str) -> None:
        """A subagent's task reached a terminal status: a background subagent ends now (a foreground one
        ends with its Agent call's result, which follows)."""
        tool_use_id = self.tasks.pop(task_id, None) or tool_use_id
        thread = self.background.pop(tool_use_id, None) if tool_use_id else None
        if thread is None:
            return
        self._end_model(thread)
        if status == "failed":
            thread.agent.set_error("task_failed")
        elif status != "completed":  # stopped, killed
            thread.agent.set_attribute(A.OTEL_AGENTS_CONTROL_FLOW, status)
        thread.agent.end()
        if self.turn is None:
            self.idle_since = time.time_ns()  # the main agent's follow-up request, if any, comes after this

    def end_background(self, *, error: BaseException | None = None, abandoned: bool = False,
                       incomplete: bool = False) -> None:
        """End the background subagents still running (the session is closing, or the CLI's output ended:
        ``incomplete``), and the tool calls they left open."""
        for tool_id in [t for t, tool in self.tools.items() if tool.thread in self.background]:
            span = self.tools.pop(tool_id).span
            _mark_closing(span, error, abandoned, incomplete)
            span.end()
        for thread in list(self.background.values()):
            self._end_model(thread)
            _mark_closing(thread.agent, error, abandoned, incomplete)
            thread.agent.end()
        self.background.clear()
        self.tasks.clear()

    def _on_rate_limit_event(self, frame: dict) -> None:
        if self.turn is not None:
            info = frame.get("rate_limit_info") or {}
            self.turn.span.add_event("claude_agent_sdk.rate_limit",
                                     {k: v for k, v in info.items() if isinstance(v, (str, int, float, bool))})

    def _thread(self, thread_id: str | None) -> _Thread:
        """The thread of ``parent_tool_use_id``; a subagent's thread opens its agent span under its tool span."""
        thread = self.threads.get(thread_id)
        if thread is None and thread_id is not None:
            thread = self.background.get(thread_id)
        if thread is not None:
            return thread
        tool = self.tools.get(thread_id) if thread_id else None
        if tool is None or self.turn is None:  # frames of a tool call we never saw: the main agent's
            return self.threads.get(None) or _Thread(self.turn.span if self.turn else None, own=False)  # type: ignore[arg-type]
        args = tool.args if isinstance(tool.args, dict) else {}
        name = str(args.get("subagent_type") or args.get("description") or "subagent")
        span = self._start(Kind.AGENT, name, tool.span)
        span.set_agent(name)
        span.set_attribute(A.OTEL_AGENTS_PARENT_AGENT, AGENT_NAME)
        if span.records_content and args.get("prompt"):
            span.set_input(args["prompt"])
        thread = self.threads[thread_id] = _Thread(span, own=True)
        if args.get("prompt"):
            thread.history.append(ChatMessage("user", str(args["prompt"])))
        return thread

    def _in_turn(self, frame: dict, wakes: bool = True) -> bool:
        """Whether ``frame`` belongs to a turn: the open one, a background subagent's, or (``wakes``: a frame
        of a model response) a turn the CLI starts itself on the main thread (:meth:`_wake`)."""
        if self.turn is not None:
            return True
        thread = frame.get("parent_tool_use_id")
        if thread is None and wakes:
            self._wake()
            return True
        return thread in self.background

    def _on_assistant(self, frame: dict) -> None:
        if not self._in_turn(frame):
            return
        self._taken_in(frame)
        message = frame.get("message") or {}
        thread = self._thread(frame.get("parent_tool_use_id"))
        if thread.agent is None:
            return
        message_id = message.get("id") or frame.get("uuid") or ""
        model = message.get("model")
        call = self._model(thread, message_id, model, synthetic=model == SYNTHETIC_MODEL)
        for block in message.get("content") or ():
            call.parts.extend(block_parts(block))
            if isinstance(block, dict) and block.get("type") == "tool_use" and block.get("id"):
                self._open_tool(thread, block, frame.get("parent_tool_use_id"))
        if message.get("usage"):
            call.snapshot = message["usage"]
        if message.get("stop_reason"):
            call.stop_reason = message["stop_reason"]
        if frame.get("error"):
            call.error = str(frame["error"])
        call.last = time.time_ns()

    def _model(self, thread: _Thread, message_id: str, model: str | None, synthetic: bool = False) -> _ModelCall:
        """The open model call of ``message_id`` on ``thread``, else a new one (ending the one before).
        ``synthetic``: a message the CLI wrote itself for a failed request: no model answered it, so it has no
        response model or id."""
        if thread.open_model is not None and thread.open_model[0] == message_id:
            return thread.open_model[1]
        self._end_model(thread)
        if synthetic:
            model = None
        span = self._start(Kind.MODEL, model or self.request_model, thread.agent, start_time=thread.trigger)
        span.set_model(request_model=self.request_model or model, response_model=model, provider=PROVIDER,
                       response_id=None if synthetic else message_id or None)
        if span.records_content:
            system = [self.system] if isinstance(self.system, str) and self.system else None
            tools = [ToolDefinition(name) for name in self.tool_names] if thread.agent is self.turn_span() else None
            span.set_messages(input=list(thread.history), system=system, tools=tools or None)
        call = _ModelCall(span)
        thread.open_model = (message_id, call)
        return call

    def _end_model(self, thread: _Thread) -> None:
        if thread.open_model is None:
            return
        _, call = thread.open_model
        thread.open_model = None
        span = call.span
        if call.error:  # a failed request: the text the CLI wrote for it is not the model's, nor is its usage
            span.set_error(call.error, "".join(p.content for p in call.parts if isinstance(p, TextPart)) or None)
            span.end(end_time=call.last)
            thread.trigger = call.last
            return
        output = ChatMessage("assistant", parts=list(call.parts), finish_reason=call.stop_reason)
        thread.history.append(ChatMessage("assistant", parts=list(call.parts)))
        if len(thread.history) > 200:  # bounded: the oldest turns go first
            del thread.history[1:len(thread.history) - 199]
        if span.records_content:
            span.set_messages(output=[output])
        if call.stop_reason:
            span.set_finish_reasons([call.stop_reason])
        usage = usage_of({**(call.snapshot if isinstance(call.snapshot, dict) else {}), **call.restated} or None)
        if usage is not None:
            # The frames' snapshot counts input and cache tokens; its output count (0-1) is interim: only
            # the response's message_delta carries the true one, else output is not reported.
            span.set_usage(Usage(input_tokens=usage.input_tokens, output_tokens=call.output_tokens,
                                 cache_read_tokens=usage.cache_read_tokens,
                                 cache_creation_tokens=usage.cache_creation_tokens))
        span.end(end_time=call.last)
        thread.trigger = call.last

    def _on_stream_event(self, frame: dict) -> None:
        if not self._in_turn(frame):
            return
        event = frame.get("event") or {}
        kind = event.get("type")
        thread = self._thread(frame.get("parent_tool_use_id"))
        if thread.agent is None:
            return
        if kind == "message_start":
            self._taken_in(frame)
            message = event.get("message") or {}
            thread.streaming = message.get("id")
            if thread.streaming:
                call = self._model(thread, thread.streaming, message.get("model"))
                call.snapshot = message.get("usage") or call.snapshot
                call.streamed = True
        elif kind == "message_delta" and thread.open_model is not None and thread.open_model[0] == thread.streaming:
            call = thread.open_model[1]
            usage = event.get("usage") or {}
            if isinstance(usage.get("output_tokens"), int):
                call.output_tokens = usage["output_tokens"]  # cumulative: the response's final count
            call.restated.update((k, usage[k]) for k in _INPUT_USAGE_KEYS if usage.get(k) is not None)
            stop = (event.get("delta") or {}).get("stop_reason")
            if stop:
                call.stop_reason = stop
            call.last = time.time_ns()

    def _open_tool(self, thread: _Thread, block: dict, thread_id: str | None) -> None:
        tool_id = block["id"]
        if tool_id in self.tools:
            return
        name = str(block.get("name") or "tool")
        args = block.get("input")
        # An MCP tool (``mcp__{server}__{tool}``): the CLI calls it as an MCP client, a ``tools/call`` of the
        # server's tool, named as the server names it (OTel MCP conventions; the fold pairs it with a server span).
        server, _, tool_name = name[len("mcp__"):].partition("__") if name.startswith("mcp__") else ("", "", "")
        span = self._start(Kind.TOOL, tool_name or name, thread.agent)
        span.set_tool(tool_name or name, call_id=tool_id, arguments=args if args is not None else {})
        if tool_name:
            span.set_attribute(A.MCP_METHOD_NAME, "tools/call")
        if name in DELEGATION_TOOLS and isinstance(args, dict) and args.get("subagent_type"):
            span.set_attribute(A.OTEL_AGENTS_HANDOFF_TARGET, str(args["subagent_type"]))
        self.tools[tool_id] = _Tool(span, name, args, thread_id)

    def sdk_mcp_tool_span(self, server: Any, params: dict) -> SemanticSpan | None:
        """Our tool span of an SDK MCP ``tools/call``: by the CLI's ``claudecode/toolUseId`` in
        ``params._meta``, else the open call of ``mcp__{server}__{tool}`` with these arguments."""
        meta = params.get("_meta") or {}
        tool = self.tools.get(meta.get("claudecode/toolUseId")) if isinstance(meta, dict) else None
        if tool is None:
            name = f"mcp__{server}__{params.get('name')}"
            arguments = params.get("arguments") or {}
            tool = next((t for t in self.tools.values() if t.name == name and t.args == arguments), None)
        return tool.span if tool is not None else None

    def _on_user(self, frame: dict) -> None:
        if not self._in_turn(frame, wakes=False):
            return
        thread = self._thread(frame.get("parent_tool_use_id"))
        content = (frame.get("message") or {}).get("content")
        if not isinstance(content, list):
            return
        self._end_model(thread)  # a tool result follows the whole response
        results = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_result"]
        arrived = time.time_ns()
        if results:
            thread.history.append(_message("tool", results))
            thread.trigger = arrived
        for block in results:
            self._close_tool(block, arrived)

    def _close_tool(self, block: dict, arrived: int) -> None:
        tool = self.tools.pop(block.get("tool_use_id") or "", None)
        if tool is None:
            return
        parts = block_parts(block)
        result = parts[0].response if parts and isinstance(parts[0], ToolCallResponsePart) else block.get("content")
        span = tool.span
        span.set_tool_result(result)
        sub = self.threads.pop(block.get("tool_use_id"), None)
        if sub is not None and sub.own and block.get("tool_use_id") in self.tasks.values() \
                and not block.get("is_error") and len(self.background) < 256:
            self.background[block["tool_use_id"]] = sub  # its task runs on: it ends at its terminal status
        elif sub is not None and sub.own:
            self._end_model(sub)
            if sub.agent.records_content:
                sub.agent.set_output(result)
            if block.get("is_error"):
                sub.agent.set_error("tool_error", _text_of(result))
            sub.agent.end()
        if tool.guardrail:
            span.set_attribute(A.OTEL_AGENTS_GUARDRAIL_TRIGGERED, True)
        if block.get("is_error"):
            if tool.denied is None and self.turn is not None and self.turn.interrupted:
                span.set_attribute(A.OTEL_AGENTS_CONTROL_FLOW, CONTROL_FLOW_INTERRUPT)  # stopped, not failed
            elif tool.denied is not None:
                span.set_denied("permission_denied", tool.denied)
            elif self.turn is not None and len(self.held) < MAX_HELD:
                self.held[block.get("tool_use_id") or ""] = (tool, _text_of(result), arrived)
                return  # ended by the turn's result: a denial of the CLI's own, or a failure
            else:
                span.set_error("tool_error", _text_of(result))
        span.end()

    def _end_held(self, denials: Any) -> None:
        """End the held failed tool calls: those in the result's ``permission_denials`` (entries
        ``{tool_name, tool_use_id, tool_input}``) as denials, the others as failures."""
        denied = {d.get("tool_use_id") for d in denials if isinstance(d, dict)} if isinstance(denials, list) else set()
        for tool_use_id, (tool, text, end_time) in list(self.held.items()):
            del self.held[tool_use_id]
            with guard("claude_agent_sdk.tool"):
                if tool_use_id in denied:
                    tool.span.set_denied("permission_denied", text)
                else:
                    tool.span.set_error("tool_error", text)
            tool.span.end(end_time=end_time)

    def _on_result(self, frame: dict) -> None:
        turn = self.turn
        if turn is None:
            return
        span = turn.span
        with guard("claude_agent_sdk.result"):
            self._taken_in(frame)
            session = frame.get("session_id")
            if session and not self.session_id:
                self.session_id = session
                if A.SESSION_ID not in span.run_attributes:
                    span.set_attributes({A.SESSION_ID: session, A.GEN_AI_CONVERSATION_ID: session})
            terminal = frame.get("terminal_reason")
            if isinstance(terminal, str) and terminal.startswith("aborted"):
                turn.interrupted = True
            denials = frame.get("permission_denials") or []
            self._end_held(denials)
            self._deferred(frame.get("deferred_tool_use"))
            usage = {k: frame[k] for k in ("usage", "modelUsage") if isinstance(frame.get(k), dict)}
            if usage:  # the CLI's totals (usage: the main thread; modelUsage: every model, subagents included)
                span.set_attribute(RESULT_USAGE, json.dumps(usage, default=str)[:4096])
            total, base = _cost(frame), turn.cost_base
            self.spent = total
            span.set_attributes({COST: round(total - base, 12) if total is not None and base is not None
                                 and total >= base else None, RESULT_SUBTYPE: frame.get("subtype"),
                                 TERMINAL_REASON: terminal, NUM_TURNS: frame.get("num_turns"),
                                 DURATION_API_MS: frame.get("duration_api_ms"),
                                 PERMISSION_DENIALS: len(denials) if isinstance(denials, list) else None})
            if span.records_content and not frame.get("is_error"):  # an error result's text is no answer
                output = frame.get("structured_output")
                output = output if output is not None else frame.get("result")
                if turn is self.run and self.background:
                    # query()'s run goes on (a background subagent works, and its end wakes the main agent):
                    # this result is the run's output only if the run ends without another one
                    turn.pending_output = output
                else:
                    turn.pending_output = None
                    span.set_output(output)
            if turn.interrupted:
                pass  # marked in end_turn: an interrupt is not an error
            else:
                # (a cap's subtype says the run stopped there even where a CLI wrote is_error false for it)
                reason = _STOPS.get(frame.get("subtype")) or _STOPS.get(terminal)
                if reason is not None:
                    span.set_stop_reason(reason)
            if not turn.interrupted and frame.get("is_error"):
                errors = frame.get("errors")
                message = "; ".join(map(str, errors)) if isinstance(errors, list) and errors else frame.get("result")
                span.set_error(_error_type(frame), message if isinstance(message, str) else None)
                if frame.get("api_error_status") is not None:
                    span.set_attribute(API_ERROR_STATUS, frame.get("api_error_status"))
        self.end_turn(stopped=True)


    def _deferred(self, deferred: Any) -> None:
        """The result's ``deferred_tool_use`` (``{id, name, input}``: a ``PreToolUse`` hook answered ``defer``): the
        run stopped to wait for its caller's decision on that call (``AskUserQuestion``…), which never ran: the
        turn and the call are paused, not stopped."""
        call_id = deferred.get("id") if isinstance(deferred, dict) else None
        if not isinstance(call_id, str) or self.turn is None:
            return
        self.turn.span.mark_paused()
        tool = self.tools.pop(call_id, None)
        if tool is not None:
            tool.span.mark_paused()
            tool.span.end()


def _mark_closing(span: SemanticSpan, error: BaseException | None, abandoned: bool, incomplete: bool,
                  stopped: bool = False) -> None:
    """Mark a span cut short (a background subagent's or its tool call's, by the session's end: no interrupt
    applies): by ``error``, by the CLI's output ending (``incomplete``), ``abandoned`` by its caller, or
    ``stopped`` by its turn's result."""
    if span.ended:
        return
    if error is not None:
        span.record_error(error, control_flow=not isinstance(error, Exception))
    elif incomplete:
        span.set_error(NO_RESULT, _NO_RESULT_MESSAGE)
    elif abandoned:
        span.mark_abandoned()
    elif stopped:
        span.set_attribute(A.OTEL_AGENTS_CONTROL_FLOW, CONTROL_FLOW_STOPPED)


def _error_type(frame: dict) -> str:
    """``error.type`` of an ``is_error`` result: its subtype (``error_max_turns``, ``error_during_execution``…),
    except that the CLI reports a failed API request (a rate or usage limit, a login missing, an overloaded API)
    as subtype ``success`` with ``is_error``: then its ``terminal_reason`` (``api_error``), else ``api_error``
    when it names the API's HTTP status (``api_error_status``; CLIs before ``terminal_reason``), else ``error``."""
    subtype, terminal = frame.get("subtype"), frame.get("terminal_reason")
    if isinstance(subtype, str) and subtype and subtype != "success":
        return subtype
    if isinstance(terminal, str) and terminal and terminal != "completed":
        return terminal
    return "api_error" if frame.get("api_error_status") is not None else "error"


def _cost(frame: dict) -> float | None:
    """A result's ``total_cost_usd`` (the CLI process's running total), when it is a number."""
    total = frame.get("total_cost_usd")
    return float(total) if isinstance(total, (int, float)) and not isinstance(total, bool) and total >= 0 else None


def _message(role: str, content: Any) -> ChatMessage:
    if isinstance(content, str):
        return ChatMessage(role, parts=[TextPart(content)])
    parts: list[Any] = []
    for block in content or ():
        parts.extend(block_parts(block))
    return ChatMessage(role, parts=parts)


def _text(message: ChatMessage) -> str:
    return "".join(p.content for p in message.parts if isinstance(p, TextPart))


def _text_of(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, default=str)[:512]


__all__ = ["Tracker", "Turn"]
