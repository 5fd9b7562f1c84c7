"""The customer-support agent in PydanticAI, asking a remote agent over A2A for order records.

The same agent as ``pydantic_ai_agent.py`` (same fake model, same brain), but its ``lookup_order``
tool is not a function of this process: it asks the "Orders Agent" of ``a2a_server.py`` — another
process, another framework (LangGraph), which owns the order system — over A2A (a2a-sdk's client,
JSON-RPC on loopback), and returns the record it answers. ``check_refund_policy`` and
``issue_refund`` stay local. With otel-agents' ``a2a`` and ``pydantic_ai`` instrumentors on, the call
is an ``agent`` span ``invoke_agent Orders Agent`` under the tool span, and the trace context travels
to the remote agent in the request's headers. Offline, no API key.

    await agent("Where is my order A100?")         # the correct agent
    await faulty_agent("Where is my order A100?")  # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/a2a_agent.py:agent --collect 0``: the
Orders Agent's process inherits the address of ``ecp serve``'s OTLP receiver and sends it its spans, so
each step's envelope holds both processes' spans (the remote agent's run and its ``lookup_order``).
Without ``--collect`` each step is graded on this process's spans (the calls and what they returned).
The remote process starts with the first question and stops when this one ends, however it ends.
"""

from __future__ import annotations

import atexit
import os
import socket
import subprocess
import sys
import threading
import time
import uuid
from typing import Any

from a2a.client import ClientConfig, create_client
from a2a.helpers import get_artifact_text
from a2a.types import Message, Part, Role, SendMessageRequest
from pydantic_ai import Agent

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, check_refund_policy, configure_tracing, issue_refund, side_effect_twin, serve_as  # noqa: E402
from pydantic_ai_agent import SYSTEM_PROMPT, brain_model  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("a2a")

SERVER = os.path.join(_HERE, "a2a_server.py")
_lock = threading.Lock()
_remote: dict[str, Any] = {}


def remote_url() -> str:
    """The Orders Agent's URL, starting its process (on a free loopback port) the first time."""
    with _lock:
        if "url" not in _remote:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = s.getsockname()[1]
            # its standard error is this process's (as the MCP example's server's is): why it could not start,
            # or what went wrong serving a request, is shown where this process shows its own errors
            proc = subprocess.Popen([sys.executable, SERVER, str(port), str(os.getpid())], env=dict(os.environ),
                                    stdout=subprocess.DEVNULL)
            atexit.register(proc.terminate)  # and if this process ends without atexit, the server sees it gone
            deadline = time.monotonic() + 120  # generous: a busy machine imports LangGraph slowly
            while True:
                try:
                    socket.create_connection(("127.0.0.1", port), timeout=1).close()
                    break
                except OSError:
                    if proc.poll() is not None or time.monotonic() > deadline:
                        why = ("not listening after 120 s" if proc.returncode is None
                               else f"it exited with status {proc.returncode} (its error is above)")
                        raise RuntimeError(f"the Orders Agent (a2a_server.py) did not start: {why}") from None
                    time.sleep(0.1)
            _remote["url"], _remote["process"] = f"http://127.0.0.1:{port}/", proc
        return _remote["url"]


async def lookup_order(order_id: str) -> str:
    """Look up an order by its id (e.g. ``A100``): status, carrier, expected delivery; asks the Orders Agent."""
    client = await create_client(remote_url(), client_config=ClientConfig(streaming=False))
    try:
        request = SendMessageRequest(message=Message(role=Role.ROLE_USER, message_id=uuid.uuid4().hex,
                                                     parts=[Part(text=f"Where is my order {order_id}?")]))
        async for event in client.send_message(request):
            if event.HasField("task") and event.task.artifacts:
                return get_artifact_text(event.task.artifacts[-1])
        return "{}"
    finally:
        await client.close()


def build(faults: Any = None) -> Agent:
    """The agent, whose ``lookup_order`` asks the remote Orders Agent; ``faults`` builds the faulty twin."""
    return Agent(brain_model(faults), name="customer_support", instructions=SYSTEM_PROMPT,
                 tools=[lookup_order, check_refund_policy, issue_refund])


_agent = build()
_faulty_agent = build(FAULT_PLANS["a2a"])


async def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    return (await _agent.run(user_input)).output


async def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    return (await _faulty_agent.run(user_input)).output


side_effect_agent = side_effect_twin(agent)
serve_as(_agent.name, agent, faulty_agent, side_effect_agent)


if __name__ == "__main__":
    import asyncio

    for q in sys.argv[1:] or ["Where is my order A100?"]:
        print(asyncio.run(agent(q)), "|", asyncio.run(faulty_agent(q)))
