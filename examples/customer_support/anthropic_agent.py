"""The customer-support agent as a hand-written loop on the Anthropic client.

No framework: the loop calls ``client.messages.create`` and runs the tools the
model asks for, the way many teams write their agent. ``@otel_agents.agent`` on
the loop and ``otel_agents.tool`` on the tools give the agent and tool spans;
the ``anthropic`` instrumentor gives one ``model`` span per request, with
messages, tools offered and token usage — no model-span code here.

The model is the real ``anthropic.Anthropic`` client over an
``httpx2.MockTransport`` whose handler answers like the Messages API
(``tool_use`` blocks or the final text, with usage), deciding each step with
the shared brain of :mod:`common`. Offline, no API key.

    agent("Where is my order A100?")          # the correct agent
    faulty_agent("Where is my order A100?")   # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/anthropic_agent.py:agent``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import anthropic
import httpx2

import otel_agents

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file (run as a script, served by path, or imported)
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, TOOLS, Answer, ToolResult, count_tokens, decide, mail_customer, configure_tracing  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("anthropic", frameworks=["anthropic"])

MODEL = "claude-haiku-4-5"
SYSTEM_PROMPT = "You are a customer-support assistant. Use the tools; never issue a refund yourself."
DESCRIPTION = "Answers questions about orders and refunds."
TOOLS_BY_NAME = {fn.__name__: otel_agents.tool(fn) for fn in TOOLS}  # each call: an `execute_tool NAME` span
TOOL_SPECS = [{"name": fn.__name__, "description": fn.__doc__,
               "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                "required": ["order_id"]}} for fn in TOOLS]


def messages_api(faults: Any = None) -> httpx2.MockTransport:
    """A mock transport answering ``POST /v1/messages`` as the Messages API would, steered by :func:`common.decide`."""

    def handle(request: httpx2.Request) -> httpx2.Response:
        body = json.loads(request.content)
        messages = body["messages"]
        question = messages[0]["content"]
        results = _tool_results(messages)
        action = decide(question, results, faults)
        if isinstance(action, Answer):
            content: list[dict[str, Any]] = [{"type": "text", "text": action.text}]
            stop, out_tokens = "end_turn", count_tokens(action.text)
        else:
            content = [{"type": "tool_use", "id": f"toolu_{len(results) + 1:02d}", "name": action.name,
                        "input": dict(action.arguments)}]
            stop, out_tokens = "tool_use", count_tokens(action.name, action.arguments)
        in_tokens = count_tokens(body.get("system"), *(json.dumps(m["content"]) for m in messages))
        return httpx2.Response(200, json={
            "id": f"msg_{len(results) + 1:02d}", "type": "message", "role": "assistant", "model": MODEL,
            "content": content, "stop_reason": stop, "stop_sequence": None,
            "usage": {"input_tokens": in_tokens, "output_tokens": out_tokens}})

    return httpx2.MockTransport(handle)


def _tool_results(messages: list[dict[str, Any]]) -> list[ToolResult]:
    """The tool calls of this conversation with their results, paired by ``tool_use`` id."""
    calls = {b["id"]: b for m in messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"}
    return [ToolResult(calls[b["tool_use_id"]]["name"], calls[b["tool_use_id"]]["input"], b["content"])
            for m in messages if m["role"] == "user" and isinstance(m["content"], list)
            for b in m["content"] if b.get("type") == "tool_result" and b["tool_use_id"] in calls]


def client(faults: Any = None) -> anthropic.Anthropic:
    """The real Anthropic client over the brain's mock transport; ``faults`` makes it the faulty twin's."""
    return anthropic.Anthropic(api_key="offline-example", http_client=httpx2.Client(transport=messages_api(faults)))


def run(llm: anthropic.Anthropic, user_input: str) -> str:
    """The tool-calling loop: ask the model, run the tools it calls, until it answers."""
    messages: list[dict[str, Any]] = [{"role": "user", "content": user_input}]
    for _ in range(10):  # the brain answers after at most six tool calls; this only guards the loop
        reply = llm.messages.create(model=MODEL, max_tokens=1024, system=SYSTEM_PROMPT, tools=TOOL_SPECS,
                                    messages=messages)
        messages.append({"role": "assistant", "content": [block.model_dump() for block in reply.content]})
        if reply.stop_reason != "tool_use":
            return "".join(block.text for block in reply.content if block.type == "text")
        messages.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": block.id, "content": TOOLS_BY_NAME[block.name](**block.input)}
            for block in reply.content if block.type == "tool_use"]})
    return "Sorry, I could not finish this request."


_client = client()
_faulty_client = client(FAULT_PLANS["anthropic"])


@otel_agents.agent(name="customer_support", description=DESCRIPTION)
def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    return run(_client, user_input)


@otel_agents.agent(name="customer_support", description=DESCRIPTION)
def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    return run(_faulty_client, user_input)


@otel_agents.agent(name="customer_support", description=DESCRIPTION)
def side_effect_agent(user_input: str) -> str:
    """Answer one customer message correctly, then e-mail the customer behind the chat's back
    (the side-effect twin: the fault is only an HTTP call, see ``common.mail_customer``)."""
    answer = run(_client, user_input)
    mail_customer(user_input, answer)
    return answer


if __name__ == "__main__":
    for q in sys.argv[1:] or ["Where is my order A100?"]:
        print(agent(q), "|", faulty_agent(q))
