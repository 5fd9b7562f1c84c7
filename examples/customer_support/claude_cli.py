"""A stand-in for the Claude Code CLI: speaks the CLI's stream-json protocol and plays the shared brain.

The Claude Agent SDK drives the Claude Code CLI as a subprocess (``ClaudeAgentOptions.cli_path``). This
module is such a CLI, offline and with no API key: :func:`launcher` writes an executable that runs it
with the current Python, and the SDK's real subprocess transport spawns it. :class:`BrainCLI` talks the
wire as the real CLI does (shapes from ``/work/shared/design/claude-agent-sdk.md``):

* answers ``initialize`` (keeping the ``PreToolUse`` hook callback ids) and ``interrupt``;
* one API response = several ``assistant`` frames (one block each) sharing a ``message.id``,
  each repeating one usage snapshot whose ``output_tokens`` is 1 and ``stop_reason`` null;
  with ``--include-partial-messages`` also ``stream_event``s (``message_start``,
  ``message_delta`` with the true output count and stop reason, ``message_stop``);
* tools are the SDK MCP server's (``mcp__{server}__{tool}``), called through ``mcp_message``
  control requests (``initialize``, ``notifications/initialized``, ``tools/call`` with
  ``_meta["claudecode/toolUseId"]``); with ``--permission-prompt-tool stdio`` each call is first
  put to ``can_use_tool``, and ``PreToolUse`` hooks are called through ``hook_callback``;
* it can delegate the policy check to subagent ``policy-expert`` through the ``Agent`` tool
  (``task_started``, frames with ``parent_tool_use_id``, ``task_notification``);
* the ``result`` carries the main thread's usage, ``modelUsage`` of every call,
  ``total_cost_usd``, ``permission_denials`` and ``terminal_reason``.

The brain is :func:`common.decide`; ``SUPPORT_BRAIN_FAULTS`` in the CLI's environment names a plan of
:data:`common.FAULT_PLANS` (the faulty twin). ``tests/claude_agent_sdk/fake_cli.py`` adds the test
scenarios (delegation, interrupts, errors) and an in-process transport.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from typing import Any

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file
    sys.path.insert(0, _HERE)
import common  # noqa: E402

MODEL = "claude-sonnet-4-6"
SESSION = "sess-fake-0001"
PRICE_IN, PRICE_OUT = 3e-6, 15e-6  # USD per token, for the fake's total_cost_usd


class Channel:
    """Frames in (dicts; ``None`` at end of input) and out."""

    async def recv(self) -> dict | None:
        raise NotImplementedError

    def send(self, frame: dict) -> None:
        raise NotImplementedError


def _option(argv: list[str], flag: str) -> str | None:
    """The value of option ``flag`` in ``argv``, or ``None`` when it is absent. The SDK passes it as two arguments,
    ``--flag value`` (0.2.189 and before), or as one, ``--flag=value`` (0.2.190 on; a value beginning with "-" always):
    the real CLI's parser reads both."""
    for i, arg in enumerate(argv):
        if arg == flag and i + 1 < len(argv):
            return argv[i + 1]
        if arg.startswith(flag + "="):
            return arg[len(flag) + 1:]
    return None


class BrainCLI:
    def __init__(self, channel: Channel, argv: list[str], session: str = SESSION, faults: Any = None):
        self.ch = channel
        self.faults = faults
        self.partials = "--include-partial-messages" in argv
        self.ask_permission = _option(argv, "--permission-prompt-tool") is not None
        # ``permission_mode="dontAsk"``: the CLI itself denies every tool not pre-approved (``allowed_tools``)
        self.dont_ask = _option(argv, "--permission-mode") == "dontAsk"
        allowed = _option(argv, "--allowedTools")
        self.allowed = set(allowed.split(",")) if allowed is not None else set()
        self.servers: list[str] = []
        mcp_config = _option(argv, "--mcp-config")
        if mcp_config is not None:
            self.servers = list(json.loads(mcp_config).get("mcpServers", {}))
        self.session = session
        self.pre_tool_hooks: list[str] = []
        self.calls: list[dict] = []  # ground truth: one entry per API response (of the turn)
        self.spent: list[dict] = []  # every API response of this process (its running totals)
        self.denials: list[dict] = []
        self.inbox: list[dict] = []
        self.interrupted = False
        self.mcp_ready: set[str] = set()
        self.seq = 0

    # -- plumbing ---------------------------------------------------------------
    def next_id(self, prefix: str) -> str:
        self.seq += 1
        return f"{prefix}_{self.seq:03d}"

    async def control(self, request: dict) -> dict:
        """Send a control request; wait for its answer (other frames are queued)."""
        request_id = self.next_id("cli_req")
        self.ch.send({"type": "control_request", "request_id": request_id, "request": request})
        while True:
            frame = await self.ch.recv()
            if frame is None:
                raise EOFError("stdin closed while waiting for a control response")
            if frame.get("type") == "control_response" and frame["response"].get("request_id") == request_id:
                response = frame["response"]
                if response.get("subtype") == "error":
                    raise RuntimeError(response.get("error"))
                return response.get("response") or {}
            await self.other(frame)

    async def other(self, frame: dict) -> None:
        if frame.get("type") == "control_request" and frame["request"].get("subtype") == "interrupt":
            self.interrupted = True
            self.ch.send({"type": "control_response",
                          "response": {"subtype": "success", "request_id": frame["request_id"], "response": {}}})
        else:
            self.inbox.append(frame)

    async def run(self) -> int:
        while True:
            frame = self.inbox.pop(0) if self.inbox else await self.ch.recv()
            if frame is None:
                return 0
            kind = frame.get("type")
            if kind == "control_request":
                request = frame["request"]
                if request.get("subtype") == "initialize":
                    for matcher in (request.get("hooks") or {}).get("PreToolUse") or ():
                        self.pre_tool_hooks.extend(matcher.get("hookCallbackIds") or ())
                await self.other(frame) if request.get("subtype") == "interrupt" else self.ch.send(
                    {"type": "control_response",
                     "response": {"subtype": "success", "request_id": frame["request_id"], "response": {}}})
            elif kind == "user":
                content = frame["message"]["content"]
                question = content if isinstance(content, str) else " ".join(
                    b.get("text", "") for b in content if isinstance(b, dict))
                status = await self.turn(question)
                if status:
                    return status

    # -- scenarios (the tests' subclass plays more) ---------------------------------
    def delegates(self, question: str) -> bool:
        """Whether the policy check goes to the ``policy-expert`` subagent."""
        return False

    def slow(self, question: str) -> bool:
        """Whether the first tool call waits for an interrupt."""
        return False

    def crashes(self, question: str) -> bool:
        """Whether the turn fails (an error result, then exit status 1)."""
        return False

    # -- one turn -------------------------------------------------------------------
    def usage(self, prompt_words: int, output_words: int) -> tuple[dict, int]:
        return {"input_tokens": prompt_words, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0,
                "output_tokens": 1}, output_words

    def respond(self, thread: str | None, blocks: list[dict], history: list[Any], stop: str,
                usage: tuple[int, int] | None = None, error: str | None = None) -> str:
        """Emit one API response as one frame per block; return its message id. ``usage`` = (input, output)
        tokens (no cache) instead of the word counts; ``error``: the request failed (the CLI's
        ``AssistantMessageError``, on a synthetic message)."""
        message_id = self.next_id("msg")
        snapshot, output = self.usage(common.count_tokens(*map(json.dumps, history)),
                                      common.count_tokens(*map(json.dumps, blocks)))
        if usage is not None:
            snapshot, output = {"input_tokens": usage[0], "output_tokens": 1}, usage[1]
        self.calls.append({"id": message_id, "thread": thread, "input": snapshot["input_tokens"],
                           "cache_read": snapshot.get("cache_read_input_tokens", 0), "output": output})
        base = {"parent_tool_use_id": thread, "session_id": self.session}
        if error is not None:
            for block in blocks:
                self.ch.send({**base, "type": "assistant", "uuid": self.next_id("uuid"), "error": error,
                              "message": {"id": message_id, "type": "message", "role": "assistant",
                                          "model": "<synthetic>", "content": [block], "stop_reason": "stop_sequence",
                                          "usage": {"input_tokens": 0, "output_tokens": 0}}})
            return message_id
        if self.partials:
            self.ch.send({**base, "type": "stream_event", "uuid": self.next_id("ev"),
                          "event": {"type": "message_start", "message": {"id": message_id, "model": MODEL,
                                                                         "usage": snapshot}}})
        for block in blocks:
            self.ch.send({**base, "type": "assistant", "uuid": self.next_id("uuid"),
                          "message": {"id": message_id, "type": "message", "role": "assistant", "model": MODEL,
                                      "content": [block], "stop_reason": None, "usage": snapshot}})
        if self.partials:
            self.ch.send({**base, "type": "stream_event", "uuid": self.next_id("ev"),
                          "event": {"type": "message_delta", "delta": {"stop_reason": stop},
                                    "usage": {"output_tokens": output}}})
            self.ch.send({**base, "type": "stream_event", "uuid": self.next_id("ev"),
                          "event": {"type": "message_stop"}})
        history.append(blocks)
        return message_id

    async def call_tool(self, server: str, name: str, args: dict, tool_use_id: str) -> tuple[str, bool]:
        """Permission, hooks, then the SDK MCP call: ``(result text, is_error)``."""
        wire_name = f"mcp__{server}__{name}"
        for callback_id in self.pre_tool_hooks:
            answer = await self.control({"subtype": "hook_callback", "callback_id": callback_id,
                                         "tool_use_id": tool_use_id,
                                         "input": {"hook_event_name": "PreToolUse", "tool_name": wire_name,
                                                   "tool_input": args, "tool_use_id": tool_use_id,
                                                   "session_id": self.session}})
            specific = answer.get("hookSpecificOutput") or {}
            if specific.get("permissionDecision") == "deny":
                self.denials.append({"tool_name": wire_name, "tool_use_id": tool_use_id, "tool_input": args})
                return specific.get("permissionDecisionReason") or "denied by hook", True
        if self.dont_ask and wire_name not in self.allowed:  # decided by the CLI: no one is asked
            self.denials.append({"tool_name": wire_name, "tool_use_id": tool_use_id, "tool_input": args})
            return f"Permission to use {wire_name} has been denied.", True
        if self.ask_permission:
            answer = await self.control({"subtype": "can_use_tool", "tool_name": wire_name, "input": args,
                                         "tool_use_id": tool_use_id, "permission_suggestions": []})
            if answer.get("behavior") == "deny":
                self.denials.append({"tool_name": wire_name, "tool_use_id": tool_use_id, "tool_input": args})
                if answer.get("interrupt"):
                    self.interrupted = True
                return answer.get("message") or "denied", True
            args = answer.get("updatedInput") or args
        if server not in self.mcp_ready:
            await self.control({"subtype": "mcp_message", "server_name": server, "message": {
                "jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                           "clientInfo": {"name": "fake-claude", "version": "0"}}}})
            await self.control({"subtype": "mcp_message", "server_name": server,
                                "message": {"jsonrpc": "2.0", "method": "notifications/initialized"}})
            self.mcp_ready.add(server)
        answer = await self.control({"subtype": "mcp_message", "server_name": server, "message": {
            "jsonrpc": "2.0", "id": self.seq, "method": "tools/call",
            "params": {"name": name, "arguments": args, "_meta": {"claudecode/toolUseId": tool_use_id}}}})
        result = answer["mcp_response"].get("result") or {}
        text = "".join(c.get("text", "") for c in result.get("content") or () if c.get("type") == "text")
        return text, bool(result.get("isError"))

    def tool_result(self, thread: str | None, tool_use_id: str, text: str, is_error: bool,
                    history: list[Any]) -> None:
        block = {"type": "tool_result", "tool_use_id": tool_use_id, "content": text, "is_error": is_error}
        self.ch.send({"type": "user", "uuid": self.next_id("uuid"), "parent_tool_use_id": thread,
                      "session_id": self.session, "message": {"role": "user", "content": [block]},
                      "tool_use_result": text})
        history.append([block])

    async def agent_loop(self, question: str, thread: str | None, history: list[Any],
                         tools: tuple[str, ...] | None = None) -> str | None:
        """The brain's loop on one thread; returns the answer (``None`` when interrupted)."""
        server = self.servers[0] if self.servers else "support"
        results: list[common.ToolResult] = []
        delegate = thread is None and self.delegates(question)
        while True:
            action = common.decide(question, results, None if tools is not None else self.faults)
            if tools is not None:  # a subagent: its one tool, then its verdict
                order_id = common.order_id_in(question)
                action = common.Call(tools[0], {"order_id": order_id}) if not results else common.Answer("")
            if delegate and isinstance(action, common.Call) and action.name == "check_refund_policy":
                tool_use_id = self.next_id("toolu")
                prompt = f"Check the refund policy for order {action.arguments['order_id']}."
                args = {"description": "policy check", "prompt": prompt, "subagent_type": "policy-expert"}
                self.respond(thread, [{"type": "tool_use", "id": tool_use_id, "name": "Agent", "input": args}],
                             history, "tool_use")
                self.ch.send({"type": "system", "subtype": "task_started", "task_id": "task_1",
                              "tool_use_id": tool_use_id, "description": "policy check", "session_id": self.session,
                              "uuid": self.next_id("uuid")})
                answer = await self.agent_loop(prompt, tool_use_id, [prompt], tools=("check_refund_policy",))
                self.ch.send({"type": "system", "subtype": "task_notification", "task_id": "task_1",
                              "tool_use_id": tool_use_id, "status": "completed", "summary": "done",
                              "output_file": "", "session_id": self.session, "uuid": self.next_id("uuid")})
                self.tool_result(thread, tool_use_id, answer or "", False, history)
                results.append(common.ToolResult("check_refund_policy", action.arguments,
                                                 json.dumps(json.loads(common.check_refund_policy(
                                                     action.arguments["order_id"])))))
                continue
            if isinstance(action, common.Answer):
                text = action.text
                if tools is not None:  # the subagent reports its policy verdict
                    text = results[-1].output if results else "no verdict"
                self.respond(thread, [{"type": "thinking", "thinking": "I can answer now.", "signature": "sig"},
                                      {"type": "text", "text": text}], history, "end_turn")
                return text
            tool_use_id = self.next_id("toolu")
            self.respond(thread, [{"type": "text", "text": f"Let me call {action.name}."},
                                  {"type": "tool_use", "id": tool_use_id, "name": f"mcp__{server}__{action.name}",
                                   "input": action.arguments}], history, "tool_use")
            if self.slow(question):
                while not self.interrupted:  # a long tool: wait for the user's interrupt
                    frame = await self.ch.recv()
                    if frame is None:
                        return None
                    await self.other(frame)
                self.tool_result(thread, tool_use_id, "Interrupted by user", True, history)
                return None
            text, is_error = await self.call_tool(server, action.name, action.arguments, tool_use_id)
            self.tool_result(thread, tool_use_id, text, is_error, history)
            if self.interrupted:
                return None
            results.append(common.ToolResult(action.name, action.arguments, text))

    async def turn(self, question: str) -> int:
        self.calls.clear()
        self.denials.clear()
        self.interrupted = False
        self.ch.send({"type": "system", "subtype": "init", "session_id": self.session, "model": MODEL,
                      "cwd": "/tmp", "tools": ["Agent"] + [f"mcp__{s}__lookup_order" for s in self.servers],
                      "mcp_servers": [{"name": s, "status": "connected"} for s in self.servers],
                      "permissionMode": "default", "apiKeySource": "none", "claude_code_version": "2.1.332",
                      "uuid": self.next_id("uuid")})
        if self.crashes(question):
            self.ch.send(self.result(None, error="error_during_execution", errors=["the API is down"]))
            return 1
        answer = await self.agent_loop(question, None, [question])
        if answer is None:
            self.ch.send(self.result(None, error="error_during_execution", terminal="aborted_tools"))
        else:
            self.ch.send(self.result(answer))
        return 0

    def result(self, answer: str | None, *, error: str | None = None, errors: list[str] | None = None,
               terminal: str | None = None) -> dict:
        """The turn's ``result``: ``usage`` is the turn's main thread; ``total_cost_usd`` and ``modelUsage`` are
        the running totals of this process, as the real CLI reports them in stream-json mode (every turn of a
        session is served by one process: anthropics/claude-code#83239)."""
        main = [c for c in self.calls if c["thread"] is None]
        counted = {c["id"] for c in self.spent}
        self.spent.extend(c for c in self.calls if c["id"] not in counted)
        spent = self.spent
        cost = sum((c["input"] + c["cache_read"]) * PRICE_IN + c["output"] * PRICE_OUT for c in spent)
        return {"type": "result", "subtype": error or "success", "is_error": error is not None,
                "duration_ms": 12, "duration_api_ms": 10, "num_turns": len(main), "session_id": self.session,
                **({"result": answer} if answer is not None else {}), "stop_reason": "end_turn",
                "total_cost_usd": round(cost, 9),
                "usage": {"input_tokens": sum(c["input"] for c in main),
                          "cache_read_input_tokens": sum(c["cache_read"] for c in main),
                          "cache_creation_input_tokens": 0, "output_tokens": sum(c["output"] for c in main)},
                "modelUsage": {MODEL: {"inputTokens": sum(c["input"] for c in spent),
                                       "outputTokens": sum(c["output"] for c in spent),
                                       "cacheReadInputTokens": sum(c["cache_read"] for c in spent),
                                       "cacheCreationInputTokens": 0, "costUSD": round(cost, 9)}},
                "permission_denials": list(self.denials), "errors": errors or [],
                "terminal_reason": terminal or ("completed" if error is None else "error"),
                "uuid": self.next_id("uuid")}


# -- the subprocess ----------------------------------------------------------------------------

class _StdioChannel(Channel):
    async def recv(self) -> dict | None:
        while True:
            line = await asyncio.to_thread(sys.stdin.readline)
            if not line:
                return None
            if line.strip():
                return json.loads(line)

    def send(self, frame: dict) -> None:
        sys.stdout.write(json.dumps(frame) + "\n")
        sys.stdout.flush()


def main() -> int:
    if "-v" in sys.argv[1:] or "--version" in sys.argv[1:]:
        print("2.1.332 (Claude Code)")
        return 0
    faults = common.FAULT_PLANS.get(os.environ.get("SUPPORT_BRAIN_FAULTS", ""))
    return asyncio.run(BrainCLI(_StdioChannel(), sys.argv[1:], faults=faults).run())


def launcher(directory: Any, module: str = "claude_cli", path: str = _HERE) -> str:
    """Write an executable that runs ``module``'s ``main`` (importable from ``path``) with this Python; return
    its path (what ``ClaudeAgentOptions.cli_path`` takes)."""
    exe = os.path.join(str(directory), "claude")
    with open(exe, "w") as f:
        f.write(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {path!r})\n"
                f"from {module} import main\nsys.exit(main())\n")
    os.chmod(exe, 0o755)
    return exe


if __name__ == "__main__":
    sys.exit(main())
