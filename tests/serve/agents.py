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


class OneAtATime:
    """An agent object that says how many of its calls were running when each began. A step ``hold:PATH``
    runs until the file ``PATH`` exists (the test releases it; at most 60 s)."""

    name = "one_at_a_time"

    def __init__(self) -> None:
        self.running = 0

    def step(self, user_input: str) -> str:
        import os
        import time

        self.running += 1
        try:
            seen = self.running
            if user_input.startswith("hold:"):
                deadline = time.monotonic() + 60
                while not os.path.exists(user_input[5:]) and time.monotonic() < deadline:
                    time.sleep(0.01)
            return f"{user_input} began with {seen} running"
        finally:
            self.running -= 1

    def reset(self) -> None:
        if self.running:
            raise RuntimeError(f"reset while {self.running} step(s) run")


one_at_a_time = OneAtATime()


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


def brief(user_input: str) -> str:
    """Takes a second: finishes within the server's graceful-shutdown window."""
    import time

    time.sleep(1)
    return f"brief answer to {user_input}"


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


def forks_and_terminates(user_input: str) -> str:
    """A multiprocessing child (fork start method) ended with ``Process.terminate()``: SIGTERM must
    reach the child's default handler, not the server's event loop."""
    import multiprocessing
    import time

    child = multiprocessing.get_context("fork").Process(target=time.sleep, args=(60,))
    child.start()
    time.sleep(0.2)  # let the child run
    child.terminate()
    child.join(timeout=10)
    return f"child exit code {child.exitcode}"


def forks_a_pool(user_input: str) -> str:
    """A fork-started ``multiprocessing.Pool`` used as a context manager (``__exit__`` terminates its
    workers with SIGTERM); answers with the workers' pids."""
    import multiprocessing
    import os
    import time

    with multiprocessing.get_context("fork").Pool(2) as pool:
        pids = sorted(set(pool.map(_worker_pid, range(8))))
        time.sleep(0.2)  # the workers wait for the next task when __exit__ terminates them
    return " ".join(map(str, pids))


def _worker_pid(_: int) -> int:
    import os
    import time

    time.sleep(0.01)
    return os.getpid()


def forks_and_returns(user_input: str) -> str:
    """``os.fork()`` whose child returns from the step (never calls ``os._exit``): the child must not
    keep the server's stdout or socket open, nor outlive the step; it leaves its pid in the input file."""
    import os

    pid = os.fork()
    if pid == 0:
        return "the child's answer"  # returns into the server's code, in the child
    with open(user_input, "w") as f:
        f.write(str(pid))
    return "the parent's answer"


class _UnprintableError(Exception):
    def __str__(self) -> str:
        raise RuntimeError("cannot print this error")


def unprintable(user_input: str) -> str:
    """Fails, in a tool, with an exception whose ``__str__`` raises (issue 35)."""
    with _telemetry.span("agent", "unprintable"):
        with _telemetry.span("tool", "lookup_order") as tool:
            tool.set_tool("lookup_order", call_id="c1", arguments={"order_id": "A100"})
            raise _UnprintableError()
