"""The customer-support agent as a hand-written loop on the OpenAI client (Chat Completions).

No framework: the loop calls ``client.chat.completions.create`` and runs the
tools the model asks for. ``@otel_agents.agent`` on the loop and
``otel_agents.tool`` on the tools give the agent and tool spans; the ``openai``
instrumentor gives one ``model`` span per request, with messages, tools offered
and token usage — no model-span code here.

The model is the real ``openai.OpenAI`` client over an ``httpx.MockTransport``
whose handler answers like the Chat Completions API (``tool_calls`` or the
final message, with usage), deciding each step with the shared brain of
:mod:`common`. Offline, no API key.

    agent("Where is my order A100?")          # the correct agent
    faulty_agent("Where is my order A100?")   # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/openai_agent.py:agent``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any

import httpx
import openai

import otel_agents

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file (run as a script, served by path, or imported)
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, TOOLS, Answer, ToolResult, count_tokens, decide, mail_customer, configure_tracing  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("openai", frameworks=["openai"])

MODEL = "gpt-4o-mini"
SYSTEM_PROMPT = "You are a customer-support assistant. Use the tools; never issue a refund yourself."
DESCRIPTION = "Answers questions about orders and refunds."
TOOLS_BY_NAME = {fn.__name__: otel_agents.tool(fn) for fn in TOOLS}  # each call: an `execute_tool NAME` span
TOOL_SPECS = [{"type": "function", "function": {
    "name": fn.__name__, "description": fn.__doc__,
    "parameters": {"type": "object", "properties": {"order_id": {"type": "string"}}, "required": ["order_id"]}}}
    for fn in TOOLS]


def chat_completions_api(faults: Any = None) -> httpx.MockTransport:
    """A mock transport answering ``POST /chat/completions`` as the API would, steered by :func:`common.decide`."""

    def handle(request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content)
        messages = body["messages"]
        question = next(m["content"] for m in messages if m["role"] == "user")
        results = _tool_results(messages)
        action = decide(question, results, faults)
        if isinstance(action, Answer):
            message: dict[str, Any] = {"role": "assistant", "content": action.text}
            finish, out_tokens = "stop", count_tokens(action.text)
        else:
            message = {"role": "assistant", "content": None, "tool_calls": [{
                "id": f"call_{len(results) + 1}", "type": "function",
                "function": {"name": action.name, "arguments": json.dumps(action.arguments)}}]}
            finish, out_tokens = "tool_calls", count_tokens(action.name, action.arguments)
        in_tokens = count_tokens(*(m.get("content") for m in messages))
        return httpx.Response(200, json={
            "id": f"chatcmpl-{len(results) + 1}", "object": "chat.completion", "created": 0, "model": MODEL,
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": in_tokens, "completion_tokens": out_tokens,
                      "total_tokens": in_tokens + out_tokens}})

    return httpx.MockTransport(handle)


def _tool_results(messages: list[dict[str, Any]]) -> list[ToolResult]:
    """The tool calls of this conversation with their results, paired by tool-call id."""
    calls = {c["id"]: c["function"] for m in messages for c in m.get("tool_calls") or ()}
    return [ToolResult(calls[m["tool_call_id"]]["name"], json.loads(calls[m["tool_call_id"]]["arguments"]),
                       m["content"]) for m in messages if m["role"] == "tool" and m.get("tool_call_id") in calls]


def client(faults: Any = None) -> openai.OpenAI:
    """The real OpenAI client over the brain's mock transport; ``faults`` makes it the faulty twin's."""
    return openai.OpenAI(api_key="offline-example", http_client=httpx.Client(transport=chat_completions_api(faults)))


def run(llm: openai.OpenAI, user_input: str) -> str:
    """The tool-calling loop: ask the model, run the tools it calls, until it answers."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": SYSTEM_PROMPT},
                                      {"role": "user", "content": user_input}]
    for _ in range(10):  # the brain answers after at most six tool calls; this only guards the loop
        reply = llm.chat.completions.create(model=MODEL, messages=messages, tools=TOOL_SPECS).choices[0].message
        messages.append(reply.model_dump(exclude_none=True))
        if not reply.tool_calls:
            return reply.content or ""
        for call in reply.tool_calls:
            output = TOOLS_BY_NAME[call.function.name](**json.loads(call.function.arguments))
            messages.append({"role": "tool", "tool_call_id": call.id, "content": output})
    return "Sorry, I could not finish this request."


_client = client()
_faulty_client = client(FAULT_PLANS["openai"])


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
