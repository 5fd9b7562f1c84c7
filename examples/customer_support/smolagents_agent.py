"""The customer-support agent in smolagents.

A ``ToolCallingAgent`` over the three tools of :mod:`common` (each a smolagents
``Tool`` whose ``forward`` is the very function), driven by a ``Model`` subclass
whose ``generate`` asks the shared brain what to do next and answers with a tool
call — ``final_answer`` carrying the reply when the brain answers — and with
token usage. Offline, no API key, no Hugging Face Hub.

    agent("Where is my order A100?")         # the correct agent
    faulty_agent("Where is my order A100?")  # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/smolagents_agent.py:agent``.
"""

from __future__ import annotations

import ast
import os
import sys
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from smolagents import Model, Tool, ToolCallingAgent  # noqa: E402
from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole  # noqa: E402
from smolagents.monitoring import LogLevel, TokenUsage  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file (run as a script, served by path, or imported)
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, TOOLS, Answer, ToolResult, count_tokens, decide, side_effect_twin, configure_tracing, serve_as  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("smolagents")

SYSTEM_PROMPT = "You are a customer-support assistant. Use the tools; never issue a refund yourself."


def as_tool(fn: Any) -> Tool:
    """One of :data:`common.TOOLS` as a smolagents ``Tool`` (name, description, one ``order_id`` input)."""

    class FunctionTool(Tool):
        name = fn.__name__
        description = fn.__doc__
        inputs = {"order_id": {"type": "string", "description": "the order id, like A100"}}
        output_type = "string"

        def forward(self, order_id: str) -> str:
            return fn(order_id)

    return FunctionTool()


def _text(message: Any) -> str:
    content = message.content
    if isinstance(content, list):
        return "".join(block.get("text", "") for block in content if isinstance(block, dict))
    return content or ""


def _conversation(messages: list) -> tuple[str, list[ToolResult]]:
    """The customer's question (the last task) and the tool calls with their observations, from smolagents' memory messages."""
    question, results, pending = "", [], None
    for message in messages:
        text = _text(message)
        role = getattr(message.role, "value", message.role)
        if role == "user" and text.startswith("New task:"):
            question, results = text.split("\n", 1)[-1], []
        elif role == "tool-call" and text.startswith("Calling tools:"):
            calls = ast.literal_eval(text.split("\n", 1)[1])
            pending = calls[0]["function"] if calls else None
        elif role == "tool-response" and pending is not None:
            arguments = pending["arguments"] if isinstance(pending["arguments"], dict) else {}
            results.append(ToolResult(pending["name"], arguments, text.split("\n", 1)[-1]))
            pending = None
    return question, results


class BrainModel(Model):
    """A ``Model`` that follows :func:`common.decide`; ``faults`` makes it the faulty twin."""

    def __init__(self, faults: Any = None):
        super().__init__(model_id="support-brain")
        self.faults = faults

    def generate(self, messages: list, stop_sequences: Any = None, response_format: Any = None,
                 tools_to_call_from: Any = None, **kwargs: Any) -> ChatMessage:
        question, results = _conversation(messages)
        action = decide(question, results, self.faults)
        if isinstance(action, Answer):
            name, arguments = "final_answer", {"answer": action.text}
        else:
            name, arguments = action.name, dict(action.arguments)
        usage = TokenUsage(input_tokens=count_tokens(*(_text(m) for m in messages)),
                           output_tokens=count_tokens(name, arguments))
        call = ChatMessageToolCall(function=ChatMessageToolCallFunction(name=name, arguments=arguments),
                                   id=f"call_{len(results) + 1}", type="function")
        return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call], token_usage=usage)


def build(faults: Any = None) -> ToolCallingAgent:
    """The agent; ``faults`` (a plan) builds the faulty twin."""
    return ToolCallingAgent(tools=[as_tool(fn) for fn in TOOLS], model=BrainModel(faults), name="customer_support",
                            instructions=SYSTEM_PROMPT, verbosity_level=LogLevel.OFF, max_steps=8)


_agent = build()
_faulty_agent = build(FAULT_PLANS["smolagents"])


def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    return str(_agent.run(user_input))


def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    return str(_faulty_agent.run(user_input))


side_effect_agent = side_effect_twin(agent)
serve_as(_agent.name, agent, faulty_agent, side_effect_agent)


if __name__ == "__main__":
    for q in sys.argv[1:] or ["Where is my order A100?"]:
        print(agent(q), "|", faulty_agent(q))
