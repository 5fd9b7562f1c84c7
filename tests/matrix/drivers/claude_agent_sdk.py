"""Claude Agent SDK cells: ``query()`` and ``ClaudeSDKClient`` over the in-process fake CLI
(``tests/claude_agent_sdk/fake_cli.py``) playing the matrix's script: the first response asks for the SDK MCP
tool ``get_weather`` (its handler is :meth:`Truth.atool`), the second answers, each with the script's usage
(true output tokens in its ``message_delta``: the transport runs with partial messages, which the caller then
also receives). A model that raises is what the CLI reports for a failed API request: an ``assistant`` frame
with ``error`` (a synthetic message holding the error's text), a result of subtype ``success`` with ``is_error``,
that text as ``result``, ``terminal_reason`` ``api_error`` and ``api_error_status``, and exit status 1
(``ResultError``; ``anthropics/claude-agent-sdk-python``'s ``ResultError`` says it: ``"success"`` when the agent
loop completed but the last turn was an API error). In the abandoned endings the fake waits,
after its first frame, until the caller has left (the caller's first event is the CLI's ``init``). ``max_turns``
runs with ``ClaudeAgentOptions(max_turns=2)``: after two turns the fake ends as the CLI does, with an
``error_max_turns`` result (``terminal_reason`` ``max_turns``) and exit status 1 (``ResultError``); ``budget``
with ``--max-budget-usd`` (``ClaudeAgentOptions(max_budget_usd=...)``) below the first response's cost: after its
tool call the fake ends with an ``error_max_budget_usd`` result and exit status 1, before asking the model again.
``caller_cancel`` (``ClaudeSDKClient`` only: ``query()`` has no handle) calls ``client.interrupt()`` while the tool
runs: the fake cancels the tool call's control request as the CLI does (the SDK cancels the handler) and ends
the turn ``error_during_execution`` / ``aborted_tools``."""

from __future__ import annotations

import asyncio
from typing import Any

import claude_agent_sdk as sdk

from otel_agents.instrumentors.claude_agent_sdk import ClaudeAgentSDKInstrumentor
from tests.claude_agent_sdk.fake_cli import FakeCLI
from tests.claude_agent_sdk.in_process import InProcessTransport
from tests.matrix.truth import CITY, TOOL, ModelFailure, Truth, _until

INSTRUMENTOR = ClaudeAgentSDKInstrumentor
SERVER = "weather"
WIRE_TOOL = f"mcp__{SERVER}__{TOOL}"  # the tool's name as the model calls it (the span names it as the server does)
FINISH = {True: "tool_use", False: "end_turn"}
SUBAGENT = "weather-expert"
SUBAGENT_CALL = {"description": "weather", "prompt": f"The weather in {CITY}?", "subagent_type": SUBAGENT}
BACKGROUND_CALL = {**SUBAGENT_CALL, "run_in_background": True}
LAUNCHED = "Async agent launched successfully."
INTERIM = "An expert is looking it up."
FAILURE = "API Error: 500 model down"  # the text of a failed API request, as the CLI writes it
BUDGET = 0.0001  # USD: the first response (11 in, 7 out at the fake's prices) costs 0.000138


def _server(truth: Truth) -> dict:
    @sdk.tool(TOOL, "Get the weather for a city.", {"city": str})
    async def get_weather(args: dict) -> dict:
        return {"content": [{"type": "text", "text": await truth.atool(**args)}]}

    return sdk.create_sdk_mcp_server(SERVER, tools=[get_weather])


class _Interrupted(Exception):
    """The caller's ``interrupt()`` arrived while a tool call was in flight (``caller_cancel``)."""


class _TruthCLI(FakeCLI):
    def __init__(self, truth: Truth, *args: Any, subagent: bool = False, background: bool = False) -> None:
        super().__init__(*args)
        self.truth = truth
        self.subagent = subagent  # the main agent delegates to subagent ``weather-expert`` (the ``Agent`` tool)
        self.background = background  # ... in the background (``run_in_background``; see :meth:`_background`)
        argv = args[1]
        self.max_turns = int(argv[argv.index("--max-turns") + 1]) if "--max-turns" in argv else None
        self.max_budget = float(argv[argv.index("--max-budget-usd") + 1]) if "--max-budget-usd" in argv else None

    def _failed(self, thread: str | None, history: list[Any]) -> int:
        """A request that failed: what the CLI reports (see the module docstring)."""
        self.respond(thread, [{"type": "text", "text": FAILURE}], history, "stop", error="server_error")
        self.ch.send({**self.result(FAILURE), "is_error": True, "terminal_reason": "api_error",
                      "api_error_status": 500})
        return 1

    async def _loop(self, agent: str, thread: str | None, history: list[Any]) -> str | None:
        """``agent``'s turns on ``thread`` (``None``: the main agent's): the script's tool call, then its answer;
        the main agent of a subagent cell first delegates. Raises :class:`ModelFailure`."""
        for _ in range(3):
            if self.subagent and thread is None and self.truth.delegates(agent):
                call = self.truth.delegate(agent, "Agent", SUBAGENT_CALL)
                tool_use_id = self.next_id("toolu")
                self.respond(thread, [{"type": "tool_use", "id": tool_use_id, "name": "Agent",
                                       "input": SUBAGENT_CALL}], history, FINISH[True], usage=call.turn.usage)
                call.sent(finish=FINISH[True])
                self.ch.send({"type": "system", "subtype": "task_started", "task_id": "task_1",
                              "tool_use_id": tool_use_id, "description": "weather", "session_id": self.session,
                              "uuid": self.next_id("uuid")})
                answer = await self._loop(SUBAGENT, tool_use_id, [SUBAGENT_CALL["prompt"]])
                self.ch.send({"type": "system", "subtype": "task_notification", "task_id": "task_1",
                              "tool_use_id": tool_use_id, "status": "completed", "summary": "done",
                              "output_file": "", "session_id": self.session, "uuid": self.next_id("uuid")})
                self.tool_result(thread, tool_use_id, answer or "", False, history)
                continue
            call = self.truth.reply(agent)
            turn = call.turn
            if turn.is_tool_call:
                name, args = turn.tool_calls[0]
                tool_use_id = self.next_id("toolu")
                self.respond(thread, [{"type": "tool_use", "id": tool_use_id, "name": WIRE_TOOL, "input": args}],
                             history, FINISH[True], usage=turn.usage)
                call.sent(finish=FINISH[True])
                text, is_error = await self.call_tool(SERVER, name, args, tool_use_id)
                self.tool_result(thread, tool_use_id, text, is_error, history)
            else:
                self.respond(thread, [{"type": "text", "text": turn.text}], history, FINISH[False], usage=turn.usage)
                call.sent(finish=FINISH[False])
                return turn.text
        return None

    async def _background(self, history: list[Any]) -> int:
        """The main agent starts ``weather-expert`` in the background: the Agent call returns at once while the
        subagent's first response (its tool call) comes in; the main agent says so (not the run's answer) and
        its turn ends with a result; then the subagent's tool runs and it answers, its task completes, and
        that wakes the main agent for a follow-up turn (no prompt of the caller's) that answers, with a second
        result (the CLI's behaviour the SDK waits for before it closes stdin:
        ``Query.wait_for_result_and_end_input``). Responses come in the order of their requests. Raises
        :class:`ModelFailure`."""
        call = self.truth.delegate("claude", "Agent", BACKGROUND_CALL, as_tool="returns")
        agent_call = self.next_id("toolu")
        self.respond(None, [{"type": "tool_use", "id": agent_call, "name": "Agent", "input": BACKGROUND_CALL}],
                     history, FINISH[True], usage=call.turn.usage)
        call.sent(finish=FINISH[True])
        self.ch.send({"type": "system", "subtype": "task_started", "task_id": "task_bg", "tool_use_id": agent_call,
                      "task_type": "local_agent", "description": "weather", "session_id": self.session,
                      "uuid": self.next_id("uuid")})
        sub_history: list[Any] = [BACKGROUND_CALL["prompt"]]
        call = self.truth.reply(SUBAGENT)
        name, args = call.turn.tool_calls[0]
        tool_use_id = self.next_id("toolu")
        self.respond(agent_call, [{"type": "tool_use", "id": tool_use_id, "name": WIRE_TOOL, "input": args}],
                     sub_history, FINISH[True], usage=call.turn.usage)
        call.sent(finish=FINISH[True])
        self.tool_result(None, agent_call, LAUNCHED, False, history)
        call = self.truth.say("claude", INTERIM)
        self.respond(None, [{"type": "text", "text": INTERIM}], history, FINISH[False], usage=call.turn.usage)
        call.sent(finish=FINISH[False])
        self.ch.send(self.result(INTERIM))
        text, is_error = await self.call_tool(SERVER, name, args, tool_use_id)  # the subagent's, after the result
        self.tool_result(agent_call, tool_use_id, text, is_error, sub_history)
        call = self.truth.reply(SUBAGENT)
        self.respond(agent_call, [{"type": "text", "text": call.turn.text}], sub_history, FINISH[False],
                     usage=call.turn.usage)
        call.sent(finish=FINISH[False])
        self.ch.send({"type": "system", "subtype": "task_notification", "task_id": "task_bg",
                      "tool_use_id": agent_call, "status": "completed", "summary": call.turn.text,
                      "output_file": "", "session_id": self.session, "uuid": self.next_id("uuid")})
        call = self.truth.reply("claude")
        self.respond(None, [{"type": "text", "text": call.turn.text}], history, FINISH[False], usage=call.turn.usage)
        call.sent(finish=FINISH[False])
        self.ch.send(self.result(call.turn.text))
        return 0

    async def control(self, request: dict) -> dict:
        """As the CLI does: an ``interrupt`` while an MCP tool call is in flight cancels that control request
        (``control_cancel_request``: the SDK cancels the tool's handler) and aborts the turn."""
        message = request.get("message") or {}
        if self.truth.ending != "caller_cancel" or message.get("method") != "tools/call":
            return await super().control(request)
        request_id = self.next_id("cli_req")
        self.ch.send({"type": "control_request", "request_id": request_id, "request": request})
        while True:
            frame = await self.ch.recv()
            if frame is None:
                raise EOFError("stdin closed while waiting for a control response")
            if frame.get("type") == "control_response" and frame["response"].get("request_id") == request_id:
                return frame["response"].get("response") or {}
            await self.other(frame)
            if self.interrupted:
                self.ch.send({"type": "control_cancel_request", "request_id": request_id})
                raise _Interrupted()

    async def turn(self, question: str) -> int:
        self.ch.send({"type": "system", "subtype": "init", "session_id": self.session, "model": "claude-test",
                      "tools": [WIRE_TOOL], "mcp_servers": [{"name": SERVER, "status": "connected"}],
                      "uuid": self.next_id("uuid")})
        if self.truth.ending in ("break_close", "break_drop"):
            await self.ch.recv()  # the model has not answered yet when the caller leaves (this task is cancelled)
            return 0
        history: list[Any] = [question]
        if self.background:
            try:
                return await self._background(history)
            except ModelFailure:
                return self._failed(None, history)
        if self.subagent:
            try:
                answer = await self._loop("claude", None, history)
            except ModelFailure:
                return self._failed(None, history)
            self.ch.send(self.result(answer))
            return 0
        for _ in range(2):
            try:
                call = self.truth.reply()
            except ModelFailure:
                return self._failed(None, history)
            turn = call.turn
            if turn.is_tool_call:
                name, args = turn.tool_calls[0]
                tool_use_id = self.next_id("toolu")
                self.respond(None, [{"type": "tool_use", "id": tool_use_id, "name": WIRE_TOOL, "input": args}],
                             history, FINISH[True], usage=turn.usage)
                call.sent(finish=FINISH[True])
                try:
                    text, is_error = await self.call_tool(SERVER, name, args, tool_use_id)
                except _Interrupted:
                    self.tool_result(None, tool_use_id, "[Request interrupted by user for tool use]", True, history)
                    self.ch.send(self.result(None, error="error_during_execution", terminal="aborted_tools"))
                    return 0
                self.tool_result(None, tool_use_id, text, is_error, history)
                if self.max_turns is not None and len(self.truth.calls) >= self.max_turns:  # the CLI's cap
                    self.ch.send(self.result(None, error="error_max_turns", terminal="max_turns",
                                             errors=[f"Reached maximum number of turns ({self.max_turns})"]))
                    return 1
                spent = self.result(None)["total_cost_usd"]
                if self.max_budget is not None and spent >= self.max_budget:  # the CLI's budget, before asking again
                    self.ch.send(self.result(None, error="error_max_budget_usd",
                                             errors=[f"Reached maximum budget (${self.max_budget})"]))
                    return 1
            else:
                self.respond(None, [{"type": "text", "text": turn.text}], history, FINISH[False], usage=turn.usage)
                call.sent(finish=FINISH[False])
                self.ch.send(self.result(turn.text))
                return 0
        return 0


def _transport(truth: Truth, subagent: bool = False, background: bool = False) -> InProcessTransport:
    cap = ["--max-turns", "2"] if truth.ending == "max_turns" else []
    if truth.ending == "budget":  # ClaudeAgentOptions(max_budget_usd=...): the first response costs more
        cap = ["--max-budget-usd", str(BUDGET)]
    transport = InProcessTransport(["--include-partial-messages", "--mcp-config", '{"mcpServers": {"weather": {}}}',
                                    *cap])
    transport.cli = _TruthCLI(truth, transport.channel, transport.argv, subagent=subagent, background=background)
    return transport


def _query(truth: Truth, subagent: bool = False, background: bool = False) -> Any:
    options = sdk.ClaudeAgentOptions(mcp_servers={SERVER: _server(truth)})
    subagent = subagent or background
    truth.agents = [("claude", None)] + ([(SUBAGENT, "claude")] if subagent else [])
    if subagent:
        truth.top = "claude"
    return sdk.query(prompt=f"What is the weather in {CITY}?", options=options,
                     transport=_transport(truth, subagent, background))


async def _client(truth: Truth, subagent: bool = False) -> Any:
    options = sdk.ClaudeAgentOptions(mcp_servers={SERVER: _server(truth)})
    truth.agents = [("claude", None)] + ([(SUBAGENT, "claude")] if subagent else [])
    if subagent:
        truth.top = "claude"
    async with sdk.ClaudeSDKClient(options=options, transport=_transport(truth, subagent)) as client:
        await client.query(f"What is the weather in {CITY}?")
        watcher = None
        if truth.ending == "caller_cancel":  # the caller's own handle: interrupt() while the tool runs
            async def interrupt() -> None:
                await _until(lambda: truth.tool_running)
                await client.interrupt()
            watcher = asyncio.ensure_future(interrupt())
        try:
            async for message in client.receive_response():
                yield message
        finally:
            if watcher is not None:
                watcher.cancel()


def _message(message: Any) -> Any:
    if isinstance(message, sdk.ResultMessage):
        return ("ResultMessage", message.subtype, message.result)
    if isinstance(message, sdk.StreamEvent):
        return ("StreamEvent", message.event.get("type"))
    return (type(message).__name__, getattr(message, "subtype", None))


ENTRIES = {
    "query": lambda t: (lambda: _query(t), _message),
    "ClaudeSDKClient.receive_response": lambda t: (lambda: _client(t), _message),
    "subagent query": lambda t: (lambda: _query(t, subagent=True), _message),
    "subagent ClaudeSDKClient.receive_response": lambda t: (lambda: _client(t, subagent=True), _message),
    "background subagent query": lambda t: (lambda: _query(t, background=True), _message),
}
