"""The customer-support agent in LlamaIndex.

A ``FunctionAgent`` over the three tools of :mod:`common` (``FunctionTool``),
driven by :class:`BrainLLM`: llama-index's own ``MockFunctionCallingLLM`` with a
response generator that asks the shared brain what to do next and answers with
``ToolCallBlock`` tool calls or the final text, plus a model name and token
usage in the response's ``raw`` (as provider LLMs report them). Offline, no API key.

    await agent("Where is my order A100?")         # the correct agent
    await faulty_agent("Where is my order A100?")  # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/llama_index_agent.py:agent``.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Sequence

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, ChatResponse, MessageRole, TextBlock, ToolCallBlock
from llama_index.core.llms.callbacks import llm_chat_callback
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.tools import FunctionTool

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file (run as a script, served by path, or imported)
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, TOOLS, Answer, ToolResult, count_tokens, decide, side_effect_twin, configure_tracing, serve_as  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("llama_index")

SYSTEM_PROMPT = "You are a customer-support assistant. Use the tools; never issue a refund yourself."


def brain_generator(faults: Any = None):
    """A ``response_generator`` for ``MockFunctionCallingLLM`` that follows :func:`common.decide`."""

    def respond(messages: Sequence[ChatMessage], **kwargs: Any) -> ChatMessage:
        question = next((m.content or "" for m in reversed(messages) if m.role == MessageRole.USER), "")
        results = _tool_results(messages)
        action = decide(question, results, faults)
        in_tokens = count_tokens(*(m.content for m in messages))
        if isinstance(action, Answer):
            blocks: list[Any] = [TextBlock(text=action.text)]
            out_tokens = count_tokens(action.text)
        else:
            blocks = [ToolCallBlock(tool_call_id=f"call_{len(results) + 1}", tool_name=action.name,
                                    tool_kwargs=action.arguments)]
            out_tokens = count_tokens(action.name, action.arguments)
        usage = {"prompt_tokens": in_tokens, "completion_tokens": out_tokens, "total_tokens": in_tokens + out_tokens}
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=blocks, additional_kwargs={"usage": usage})

    return respond


class BrainLLM(MockFunctionCallingLLM):
    """``MockFunctionCallingLLM`` whose responses carry ``raw = {model, usage}`` like a provider's."""

    model: str = "support-brain"

    def _respond(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        message = self._get_response_generator()(messages, **kwargs)
        usage = message.additional_kwargs.pop("usage", None)
        return ChatResponse(message=message, delta=message.content or "", raw={"model": self.model, "usage": usage})

    @llm_chat_callback()
    def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
        return self._respond(messages, **kwargs)

    @llm_chat_callback()
    async def astream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any):  # type: ignore[override]
        response = self._respond(messages, **kwargs)

        async def one_chunk():
            yield response

        return one_chunk()


def _tool_results(messages: Sequence[ChatMessage]) -> list[ToolResult]:
    """The tool calls of this conversation with their results, paired by tool-call id."""
    calls = {b.tool_call_id: b for m in messages for b in m.blocks if isinstance(b, ToolCallBlock)}
    results = []
    for m in messages:
        if m.role == MessageRole.TOOL:
            call = calls.get(m.additional_kwargs.get("tool_call_id"))
            if call is not None:
                args = call.tool_kwargs if isinstance(call.tool_kwargs, dict) else {}
                results.append(ToolResult(call.tool_name, args, m.content or ""))
    return results


def build(faults: Any = None) -> FunctionAgent:
    """The agent; ``faults`` (a plan) builds the faulty twin."""
    return FunctionAgent(
        name="customer_support",
        description="Answers questions about orders and refunds.",
        system_prompt=SYSTEM_PROMPT,
        tools=[FunctionTool.from_defaults(fn=fn) for fn in TOOLS],
        llm=BrainLLM(response_generator=brain_generator(faults)),
    )


_agent = build()
_faulty_agent = build(FAULT_PLANS["llama_index"])


async def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    output = await _agent.run(user_msg=user_input)
    return str(output.response.content or "")


async def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    output = await _faulty_agent.run(user_msg=user_input)
    return str(output.response.content or "")


side_effect_agent = side_effect_twin(agent)
serve_as(_agent.name, agent, faulty_agent, side_effect_agent)


if __name__ == "__main__":
    import asyncio

    for q in sys.argv[1:] or ["Where is my order A100?"]:
        print(asyncio.run(agent(q)), "|", asyncio.run(faulty_agent(q)))
