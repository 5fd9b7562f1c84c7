"""The customer-support agent in PydanticAI.

An ``Agent`` over the three tools of :mod:`common`, driven by PydanticAI's own
``FunctionModel`` whose function asks the shared brain what to do next and
answers with ``ToolCallPart`` tool calls or the final ``TextPart``, with token
usage. Offline, no API key.

    await agent("Where is my order A100?")         # the correct agent
    await faulty_agent("Where is my order A100?")  # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/pydantic_ai_agent.py:agent``.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from pydantic_ai import Agent
from pydantic_ai.messages import (ModelMessage, ModelRequest, ModelResponse, TextPart, ToolCallPart, ToolReturnPart,
                                  UserPromptPart)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.usage import RequestUsage

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file (run as a script, served by path, or imported)
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, TOOLS, Answer, ToolResult, count_tokens, decide, side_effect_twin, configure_tracing, serve_as  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("pydantic_ai")

SYSTEM_PROMPT = "You are a customer-support assistant. Use the tools; never issue a refund yourself."


def brain_model(faults: Any = None) -> FunctionModel:
    """A ``FunctionModel`` that follows :func:`common.decide`; ``faults`` makes it the faulty twin."""

    def respond(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        parts = [p for m in messages for p in m.parts]
        question = next((str(p.content) for p in reversed(parts) if isinstance(p, UserPromptPart)), "")
        results = _tool_results(messages)
        action = decide(question, results, faults)
        in_tokens = count_tokens(*(getattr(p, "content", None) for p in parts))
        if isinstance(action, Answer):
            out: list[Any] = [TextPart(action.text)]
            out_tokens = count_tokens(action.text)
        else:
            out = [ToolCallPart(action.name, dict(action.arguments), tool_call_id=f"call_{len(results) + 1}")]
            out_tokens = count_tokens(action.name, action.arguments)
        return ModelResponse(parts=out, usage=RequestUsage(input_tokens=in_tokens, output_tokens=out_tokens),
                             model_name="support-brain", finish_reason="stop" if isinstance(action, Answer) else "tool_call")

    return FunctionModel(respond, model_name="support-brain")


def _tool_results(messages: list[ModelMessage]) -> list[ToolResult]:
    """The tool calls of this conversation with their results, paired by tool-call id."""
    calls = {p.tool_call_id: p for m in messages if isinstance(m, ModelResponse)
             for p in m.parts if isinstance(p, ToolCallPart)}
    results = []
    for m in messages:
        if isinstance(m, ModelRequest):
            for p in m.parts:
                if isinstance(p, ToolReturnPart) and p.tool_call_id in calls:
                    results.append(ToolResult(p.tool_name, calls[p.tool_call_id].args_as_dict(),
                                              p.model_response_str()))
    return results


def build(faults: Any = None) -> Agent:
    """The agent; ``faults`` (a plan) builds the faulty twin."""
    return Agent(brain_model(faults), name="customer_support", instructions=SYSTEM_PROMPT, tools=list(TOOLS))


_agent = build()
_faulty_agent = build(FAULT_PLANS["pydantic_ai"])


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
