"""The customer-support agent in AutoGen AgentChat.

An ``AssistantAgent`` over the three tools of :mod:`common`, driven by a small
``ChatCompletionClient`` subclass that asks the shared brain what to do next and
answers with ``FunctionCall``s or the final text, with ``RequestUsage``. Offline,
no API key. Each question gets a fresh agent (an ``AssistantAgent`` keeps its
conversation between runs).

    await agent("Where is my order A100?")         # the correct agent
    await faulty_agent("Where is my order A100?")  # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/autogen_agentchat_agent.py:agent``.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, AsyncGenerator, Mapping, Sequence

from autogen_agentchat.agents import AssistantAgent
from autogen_core import FunctionCall
from autogen_core.models import ChatCompletionClient, CreateResult, ModelInfo, RequestUsage

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file (run as a script, served by path, or imported)
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, TOOLS, Answer, ToolResult, count_tokens, decide, side_effect_twin, configure_tracing, serve_as  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("autogen_agentchat")

SYSTEM_PROMPT = "You are a customer-support assistant. Use the tools; never issue a refund yourself."
MODEL_INFO: ModelInfo = {"vision": False, "function_calling": True, "json_output": False,
                         "family": "support-brain", "structured_output": False}


class BrainClient(ChatCompletionClient):
    """A model client that follows :func:`common.decide`; ``faults`` makes it the faulty twin."""

    model = "support-brain"

    def __init__(self, faults: Any = None):
        self.faults = faults
        self._usage = RequestUsage(0, 0)

    async def create(self, messages: Sequence[Any], *, tools: Sequence[Any] = [], tool_choice: Any = "auto",
                     json_output: Any = None, extra_create_args: Mapping[str, Any] = {},
                     cancellation_token: Any = None) -> CreateResult:
        question = next((m.content for m in reversed(messages) if type(m).__name__ == "UserMessage"
                         and isinstance(m.content, str)), "")
        results = _tool_results(messages)
        action = decide(question, results, self.faults)
        in_tokens = count_tokens(*(str(m.content) for m in messages))
        if isinstance(action, Answer):
            self._usage = RequestUsage(in_tokens, count_tokens(action.text))
            return CreateResult(finish_reason="stop", content=action.text, usage=self._usage, cached=False)
        self._usage = RequestUsage(in_tokens, count_tokens(action.name, action.arguments))
        call = FunctionCall(id=f"call_{len(results) + 1}", name=action.name, arguments=json.dumps(action.arguments))
        return CreateResult(finish_reason="function_calls", content=[call], usage=self._usage, cached=False)

    async def create_stream(self, messages: Sequence[Any], **kwargs: Any) -> AsyncGenerator[Any, None]:
        yield await self.create(messages, **kwargs)

    async def close(self) -> None:
        pass

    def actual_usage(self) -> RequestUsage:
        return self._usage

    def total_usage(self) -> RequestUsage:
        return self._usage

    def count_tokens(self, messages: Sequence[Any], *, tools: Sequence[Any] = []) -> int:
        return count_tokens(*(str(m.content) for m in messages))

    def remaining_tokens(self, messages: Sequence[Any], *, tools: Sequence[Any] = []) -> int:
        return 100_000

    @property
    def capabilities(self) -> Any:  # deprecated by AutoGen, still abstract
        return MODEL_INFO

    @property
    def model_info(self) -> ModelInfo:
        return MODEL_INFO


def _tool_results(messages: Sequence[Any]) -> list[ToolResult]:
    """The tool calls of this conversation with their results, paired by call id."""
    calls = {c.id: c for m in messages if type(m).__name__ == "AssistantMessage" and isinstance(m.content, list)
             for c in m.content}
    return [ToolResult(calls[r.call_id].name, json.loads(calls[r.call_id].arguments or "{}"), r.content)
            for m in messages if type(m).__name__ == "FunctionExecutionResultMessage"
            for r in m.content if r.call_id in calls]


def build(faults: Any = None) -> AssistantAgent:
    """The agent; ``faults`` (a plan) builds the faulty twin. It calls tools until the brain answers."""
    return AssistantAgent("customer_support", model_client=BrainClient(faults), tools=list(TOOLS),
                          system_message=SYSTEM_PROMPT, max_tool_iterations=8)


async def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    result = await build().run(task=user_input)
    return result.messages[-1].to_text()


async def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    result = await build(FAULT_PLANS["autogen_agentchat"]).run(task=user_input)
    return result.messages[-1].to_text()


side_effect_agent = side_effect_twin(agent)
serve_as("customer_support", agent, faulty_agent, side_effect_agent)


if __name__ == "__main__":
    import asyncio

    for q in sys.argv[1:] or ["Where is my order A100?", "Can I get a refund for B200?"]:
        print(asyncio.run(agent(q)), "|", asyncio.run(faulty_agent(q)))
