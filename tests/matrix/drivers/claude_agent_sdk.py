"""Claude Agent SDK cells: ``query()`` and ``ClaudeSDKClient`` over the in-process fake CLI
(``tests/claude_agent_sdk/fake_cli.py``) playing the matrix's script: the first response asks for the SDK MCP
tool ``get_weather`` (its handler is :meth:`Truth.atool`), the second answers, each with the script's usage
(true output tokens in its ``message_delta``: the transport runs with partial messages, which the caller then
also receives). A model that raises is what the CLI reports for a failed API request: an ``assistant`` frame
with ``error``, an error result and exit status 1 (``ResultError``). In the abandoned endings the fake waits,
after its first frame, until the caller has left (the caller's first event is the CLI's ``init``). ``max_turns``
runs with ``ClaudeAgentOptions(max_turns=2)``: after two turns the fake ends as the CLI does, with an
``error_max_turns`` result (``terminal_reason`` ``max_turns``) and exit status 1 (``ResultError``).
``caller_cancel`` (``ClaudeSDKClient`` only: ``query()`` has no handle) calls ``client.interrupt()`` while the tool
runs: the fake cancels the tool call's control request as the CLI does (the SDK cancels the handler) and ends
the turn ``error_during_execution`` / ``aborted_tools``."""

from __future__ import annotations

import asyncio
from typing import Any

import claude_agent_sdk as sdk

from otel_agents.instrumentors.claude_agent_sdk import ClaudeAgentSDKInstrumentor
from tests.claude_agent_sdk.fake_cli import FakeCLI, InProcessTransport
from tests.matrix.truth import CITY, TOOL, ModelFailure, Truth, _until

INSTRUMENTOR = ClaudeAgentSDKInstrumentor
SERVER = "weather"
WIRE_TOOL = f"mcp__{SERVER}__{TOOL}"  # the tool's name as the model calls it (the span names it as the server does)
FINISH = {True: "tool_use", False: "end_turn"}
SUBAGENT = "weather-expert"
SUBAGENT_CALL = {"description": "weather", "prompt": f"The weather in {CITY}?", "subagent_type": SUBAGENT}


def _server(truth: Truth) -> dict:
    @sdk.tool(TOOL, "Get the weather for a city.", {"city": str})
    async def get_weather(args: dict) -> dict:
        return {"content": [{"type": "text", "text": await truth.atool(**args)}]}

    return sdk.create_sdk_mcp_server(SERVER, tools=[get_weather])


class _Interrupted(Exception):
    """The caller's ``interrupt()`` arrived while a tool call was in flight (``caller_cancel``)."""


class _TruthCLI(FakeCLI):
    def __init__(self, truth: Truth, *args: Any, subagent: bool = False) -> None:
        super().__init__(*args)
        self.truth = truth
        self.subagent = subagent  # the main agent delegates to subagent ``weather-expert`` (the ``Agent`` tool)
        argv = args[1]
        self.max_turns = int(argv[argv.index("--max-turns") + 1]) if "--max-turns" in argv else None

    def _failed(self, thread: str | None, history: list[Any]) -> int:
        """A request that failed: what the CLI reports (see the module docstring)."""
        self.respond(thread, [{"type": "text", "text": "API Error: 500 model down"}], history, "stop",
                     error="server_error")
        self.ch.send({**self.result(None, error="error_during_execution", errors=["API Error: 500"]),
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
                self.respond(None, [{"type": "text", "text": "API Error: 500 model down"}], history, "stop",
                             error="server_error")
                self.ch.send({**self.result(None, error="error_during_execution", errors=["API Error: 500"]),
                              "api_error_status": 500})
                return 1
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
            else:
                self.respond(None, [{"type": "text", "text": turn.text}], history, FINISH[False], usage=turn.usage)
                call.sent(finish=FINISH[False])
                self.ch.send(self.result(turn.text))
                return 0
        return 0


def _transport(truth: Truth, subagent: bool = False) -> InProcessTransport:
    cap = ["--max-turns", "2"] if truth.ending == "max_turns" else []
    transport = InProcessTransport(["--include-partial-messages", "--mcp-config", '{"mcpServers": {"weather": {}}}',
                                    *cap])
    transport.cli = _TruthCLI(truth, transport.channel, transport.argv, subagent=subagent)
    return transport


def _query(truth: Truth, subagent: bool = False) -> Any:
    options = sdk.ClaudeAgentOptions(mcp_servers={SERVER: _server(truth)})
    truth.agents = [("claude", None)] + ([(SUBAGENT, "claude")] if subagent else [])
    if subagent:
        truth.top = "claude"
    return sdk.query(prompt=f"What is the weather in {CITY}?", options=options, transport=_transport(truth, subagent))


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
}
