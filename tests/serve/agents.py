"""Small plain-Python agents the ECP server tests serve (no framework, no network)."""

from __future__ import annotations

import asyncio

from otel_agents._spans import Telemetry

_telemetry = Telemetry(framework="test")


def echo(user_input: str) -> str:
    """Answers with a tool call recorded through the span layer."""
    with _telemetry.span("agent", "echo") as agent:
        with _telemetry.span("tool", "lookup_order") as tool:
            tool.set_tool("lookup_order", call_id="c1", arguments={"order_id": "A100"})
            tool.set_tool_result({"status": "shipped"})
        answer = f"echo: {user_input}"
        agent.set_output(answer)
    print("agent chatter on stdout must not corrupt the protocol")
    return answer


async def async_echo(user_input: str) -> str:
    await asyncio.sleep(0)
    return f"async: {user_input}"


def failing(user_input: str) -> str:
    raise ValueError(f"agent failed on {user_input!r}")


class Counter:
    """A stateful multi-turn agent."""

    name = "counter"

    def __init__(self) -> None:
        self.turns = 0

    def step(self, user_input: str) -> str:
        self.turns += 1
        return f"turn {self.turns}: {user_input}"

    def reset(self) -> None:
        self.turns = 0


counter = Counter()


def long_answer(user_input: str) -> str:
    """An answer longer than the content budget, whose end matters."""
    return "x" * 20_000 + " FINAL VERDICT"


def leaky_failure(user_input: str) -> str:
    raise PermissionError("upstream rejected 'SECRET-CONTENT' with key sk-proj-AbCdEfGhIjKlMnOpQrStUv")


def noisy(user_input: str) -> str:
    """Writes to the real stdout file descriptor (a child process), and returns a lone surrogate."""
    import subprocess

    subprocess.run(["printf", "progress 50%%\\n"], check=True)
    return "bad name \udcff and \ud83d"


def exits(user_input: str) -> str:
    import sys

    sys.exit(2)  # e.g. argparse inside a tool


def chunks(user_input: str):
    yield "Hello, "
    yield user_input


def hangs(user_input: str) -> str:
    """Opens a tool span and never returns (until the process ends): a hung agent."""
    import time

    if user_input == "quick":
        return "quick answer"
    with _telemetry.span("tool", "wait_forever"):
        time.sleep(3600)
    return "unreachable"


def slow(user_input: str) -> str:
    import time

    time.sleep(30)
    return "slow answer"


def interrupts(user_input: str) -> str:
    if user_input == "ok":
        return "fine"
    raise KeyboardInterrupt


def reads_stdin(user_input: str) -> str:
    """An agent asking a human on stdin: it must see end of input, never the next protocol request."""
    import sys

    return f"stdin gave {sys.stdin.read()!r}"


def nan_result(user_input: str) -> dict:
    return {"score": float("nan")}


class _UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot print this error")


def unprintable(user_input: str) -> str:
    """Fails, in a tool, with an exception whose ``__str__`` raises (issue 35)."""
    with _telemetry.span("agent", "unprintable"):
        with _telemetry.span("tool", "lookup_order") as tool:
            tool.set_tool("lookup_order", call_id="c1", arguments={"order_id": "A100"})
            raise _UnprintableError()
