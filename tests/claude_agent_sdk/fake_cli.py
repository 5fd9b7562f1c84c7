"""The fake Claude Code CLI of the tests: the demo's :mod:`claude_cli` (``examples/customer_support``; it speaks
stream-json and plays the shared brain) plus the test scenarios, run as ``cli_path`` by the real subprocess
transport (:func:`launcher`) or in this process behind :class:`.in_process.InProcessTransport` (a module of its
own: the SDK it subclasses, with MCP, cost each process of the fake CLI ~1 s of CPU to import).

Question words that change the script: ``expert`` (the policy check is delegated to subagent
``policy-expert`` through the ``Agent`` tool), ``slow`` (the first tool call waits for an interrupt),
``crash`` (an error result, then exit status 1), ``vanish``/``killed`` (in the middle of the first response,
after its tool call and before its ``message_delta``, the process exits with status 0 / kills itself with
``SIGKILL``: no result; subprocess only). ``FAKE_CLI_TRACEPARENT_FILE`` in the CLI's environment:
a file where it appends its ``TRACEPARENT`` and ``CLAUDE_CODE_ENABLE_TELEMETRY``.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from typing import Any

from examples.customer_support import claude_cli
from examples.customer_support.claude_cli import MODEL, SESSION, BrainCLI, Channel  # noqa: F401 - re-exported

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class FakeCLI(BrainCLI):
    def delegates(self, question: str) -> bool:
        return "expert" in question.lower()

    def slow(self, question: str) -> bool:
        return "slow" in question.lower()

    def crashes(self, question: str) -> bool:
        return "crash" in question.lower()

    async def turn(self, question: str) -> int:
        ending = "killed" if "killed" in question.lower() else "vanish" if "vanish" in question.lower() else None
        if ending is None:
            return await super().turn(question)
        base = {"parent_tool_use_id": None, "session_id": self.session}
        self.ch.send({"type": "system", "subtype": "init", "session_id": self.session, "model": MODEL,
                      "tools": ["mcp__support__lookup_order"], "uuid": self.next_id("uuid")})
        usage = {"input_tokens": 12, "output_tokens": 1}
        if self.partials:
            self.ch.send({**base, "type": "stream_event", "uuid": self.next_id("ev"), "event": {
                "type": "message_start", "message": {"id": "msg_cut", "model": MODEL, "usage": usage}}})
        for block in ({"type": "text", "text": "Let me look."},
                      {"type": "tool_use", "id": "toolu_cut", "name": "mcp__support__lookup_order",
                       "input": {"order_id": "A100"}}):
            self.ch.send({**base, "type": "assistant", "uuid": self.next_id("uuid"), "message": {
                "id": "msg_cut", "type": "message", "role": "assistant", "model": MODEL, "content": [block],
                "stop_reason": None, "usage": usage}})
        sys.stdout.flush()
        if ending == "killed":
            os.kill(os.getpid(), signal.SIGKILL)
        os._exit(0)


def main() -> int:
    trace_file = os.environ.get("FAKE_CLI_TRACEPARENT_FILE")
    if trace_file:
        with open(trace_file, "a") as f:
            f.write(json.dumps({"traceparent": os.environ.get("TRACEPARENT"),
                                "telemetry": os.environ.get("CLAUDE_CODE_ENABLE_TELEMETRY")}) + "\n")
    return asyncio.run(FakeCLI(claude_cli._StdioChannel(), sys.argv[1:]).run())


def launcher(directory: Any) -> str:
    """Write the executable the SDK runs as ``cli_path``; return its path."""
    return claude_cli.launcher(directory, "tests.claude_agent_sdk.fake_cli", ROOT)


if __name__ == "__main__":
    sys.exit(main())
