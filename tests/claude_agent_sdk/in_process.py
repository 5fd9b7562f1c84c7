"""The fake Claude Code CLI (:mod:`.fake_cli`) in the test's own process, behind a ``claude_agent_sdk``
transport; kept out of :mod:`.fake_cli`, which the subprocess transport runs as the CLI: importing the SDK
(and MCP) there cost each of those processes ~1 s of CPU."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from claude_agent_sdk import ProcessError, Transport

from examples.customer_support.claude_cli import Channel
from .fake_cli import FakeCLI


class _QueueChannel(Channel):
    def __init__(self) -> None:
        self.inbound: asyncio.Queue[dict | None] = asyncio.Queue()
        self.outbound: asyncio.Queue[dict | None] = asyncio.Queue()

    async def recv(self) -> dict | None:
        return await self.inbound.get()

    def send(self, frame: dict) -> None:
        self.outbound.put_nowait(frame)


class InProcessTransport(Transport):
    """A ``claude_agent_sdk.Transport`` running :class:`FakeCLI` in this process.

    ``argv`` stands for the CLI's flags (``--include-partial-messages``, ``--mcp-config``,
    ``--permission-prompt-tool``); ``script``, when given, replaces the brain: a coroutine
    ``script(cli)`` that sends frames itself.
    """

    def __init__(self, argv: list[str] | None = None, script: Any = None, exit_status: int = 0):
        self.argv = list(argv or [])
        self.script = script
        self.exit_status = exit_status
        self.channel = _QueueChannel()
        self.cli = FakeCLI(self.channel, self.argv)
        self.task: asyncio.Task | None = None
        self.written: list[dict] = []

    async def connect(self) -> None:
        async def run() -> None:
            try:
                status = await (self.script(self.cli) if self.script else self.cli.run())
                self.exit_status = status or self.exit_status
            finally:
                self.channel.outbound.put_nowait(None)

        self.task = asyncio.get_running_loop().create_task(run())

    async def write(self, data: str) -> None:
        for line in data.splitlines():
            if line.strip():
                frame = json.loads(line)
                self.written.append(frame)
                self.channel.inbound.put_nowait(frame)

    async def read_messages(self) -> Any:
        while True:
            frame = await self.channel.outbound.get()
            if frame is None:
                break
            yield frame
        if self.exit_status:
            raise ProcessError("Command failed", exit_code=self.exit_status, stderr="")

    async def close(self) -> None:
        if self.task is not None and not self.task.done():
            self.task.cancel()

    def is_ready(self) -> bool:
        return True

    async def end_input(self) -> None:
        self.channel.inbound.put_nowait(None)
