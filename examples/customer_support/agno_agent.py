"""The customer-support agent in Agno.

An Agno ``Agent`` over the three tools of :mod:`common`, driven by a small
subclass of Agno's model base (``agno.models.base.Model``) that asks the
shared brain what to do next and answers with tool calls or the final text,
with token usage. Offline, no API key; Agno's telemetry is off
(``telemetry=False``; ``AGNO_TELEMETRY=false`` turns it off everywhere).

    await agent("Where is my order A100?")         # the correct agent
    await faulty_agent("Where is my order A100?")  # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/agno_agent.py:agent``.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from typing import Any, AsyncIterator, Iterator

os.environ.setdefault("AGNO_TELEMETRY", "false")

from agno.agent import Agent  # noqa: E402
from agno.metrics import MessageMetrics  # noqa: E402
from agno.models.base import Model  # noqa: E402
from agno.models.response import ModelResponse  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file (run as a script, served by path, or imported)
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, TOOLS, Answer, ToolResult, count_tokens, decide, side_effect_twin, configure_tracing, serve_as  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("agno")

SYSTEM_PROMPT = "You are a customer-support assistant. Use the tools; never issue a refund yourself."


@dataclass
class BrainModel(Model):
    """An Agno model that follows :func:`common.decide`; ``faults`` makes it the faulty twin."""

    id: str = "support-brain"
    name: str = "SupportBrain"
    provider: str = "support-brain"
    faults: Any = None

    def invoke(self, messages: list, **kwargs: Any) -> ModelResponse:
        question = next((str(m.content) for m in reversed(messages) if m.role == "user"), "")
        action = decide(question, _tool_results(messages), self.faults)
        in_tokens = count_tokens(*(m.content for m in messages))
        if isinstance(action, Answer):
            out = count_tokens(action.text)
            return ModelResponse(role="assistant", content=action.text,
                                 response_usage=MessageMetrics(input_tokens=in_tokens, output_tokens=out,
                                                               total_tokens=in_tokens + out))
        call_id = f"call_{len(_tool_results(messages)) + 1}"
        out = count_tokens(action.name, action.arguments)
        return ModelResponse(role="assistant", tool_calls=[{"id": call_id, "type": "function", "function": {
            "name": action.name, "arguments": json.dumps(action.arguments)}}],
            response_usage=MessageMetrics(input_tokens=in_tokens, output_tokens=out, total_tokens=in_tokens + out))

    async def ainvoke(self, messages: list, **kwargs: Any) -> ModelResponse:
        return self.invoke(messages, **kwargs)

    def invoke_stream(self, messages: list, **kwargs: Any) -> Iterator[ModelResponse]:
        yield self.invoke(messages, **kwargs)

    async def ainvoke_stream(self, messages: list, **kwargs: Any) -> AsyncIterator[ModelResponse]:
        yield self.invoke(messages, **kwargs)

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response


def _tool_results(messages: list) -> list[ToolResult]:
    """The tool calls of this conversation with their results, paired by tool-call id."""
    calls = {c["id"]: c["function"] for m in messages if m.role == "assistant" for c in (m.tool_calls or ())}
    return [ToolResult(calls[m.tool_call_id]["name"], json.loads(calls[m.tool_call_id]["arguments"] or "{}"),
                       str(m.content))
            for m in messages if m.role == "tool" and m.tool_call_id in calls]


def build(faults: Any = None) -> Agent:
    """The agent; ``faults`` (a plan) builds the faulty twin."""
    return Agent(name="customer_support", model=BrainModel(faults=faults), instructions=SYSTEM_PROMPT,
                 tools=list(TOOLS), telemetry=False)


_agent = build()
_faulty_agent = build(FAULT_PLANS["agno"])


async def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    return (await _agent.arun(user_input)).content


async def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    return (await _faulty_agent.arun(user_input)).content


side_effect_agent = side_effect_twin(agent)
serve_as(_agent.name, agent, faulty_agent, side_effect_agent)


if __name__ == "__main__":
    import asyncio

    for q in sys.argv[1:] or ["Where is my order A100?", "Can I get a refund for B200?"]:
        print(asyncio.run(agent(q)), "|", asyncio.run(faulty_agent(q)))
