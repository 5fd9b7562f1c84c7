"""A LlamaIndex FunctionAgent with two tools, traced by otel-agents, fully offline.

Run it with ``python examples/llama_index_agent.py``: the agent's model is
llama-index-core's ``MockFunctionCallingLLM`` playing a script (call ``multiply``,
then ``add``, then answer), so no API key or network is needed. It prints the
answer and the span tree the instrumentor produced::

    answer: 6 × 7 + 8 = 50.

    invoke_agent calculator [agent]
      init_run [chain]
      setup_agent [chain]
      run_agent_step [chain]
        chat MockFunctionCallingLLM [model]
      parse_agent_output [chain]
      call_tool [chain]
        execute_tool multiply [tool]  {"a":6,"b":7} -> 42
      …
        execute_tool add [tool]  {"a":42,"b":8} -> 50
      …

The spans also go where your environment sends them (``OTEL_AGENTS_EXPORTERS``, or
``opentelemetry-instrument``: see ``examples/_tracing.py``). With a real model, replace
the mock with any LlamaIndex LLM; nothing else changes.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import sys
from typing import Any, Sequence

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _tracing.py, beside this file
from _tracing import Tracing  # noqa: E402
from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor


def multiply(a: int, b: int) -> int:
    """Multiply two integers."""
    return a * b


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def scripted_model() -> Any:
    """A mock function-calling model: multiply(6, 7), then add(42, 8), then the answer."""
    from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
    from llama_index.core.llms.mock import MockFunctionCallingLLM

    script = [("multiply", {"a": 6, "b": 7}), ("add", {"a": 42, "b": 8}), "6 × 7 + 8 = 50."]
    turn = itertools.count()

    def respond(messages: Sequence[Any], **_: Any) -> Any:
        step = script[min(next(turn), len(script) - 1)]
        if isinstance(step, str):
            return ChatMessage(role=MessageRole.ASSISTANT, content=step)
        name, arguments = step
        block = ToolCallBlock(tool_call_id=f"call-{name}", tool_name=name, tool_kwargs=arguments)
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[block])

    return MockFunctionCallingLLM(response_generator=respond)


async def main() -> str:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.tools import FunctionTool

    agent = FunctionAgent(
        name="calculator",
        description="Does arithmetic with its tools.",
        system_prompt="You are a careful calculator. Use the tools.",
        tools=[FunctionTool.from_defaults(fn=multiply), FunctionTool.from_defaults(fn=add)],
        llm=scripted_model(),
    )
    result = await agent.run(user_msg="What is 6 times 7, plus 8?")
    return str(result)


if __name__ == "__main__":
    tracing = Tracing()  # prints the tree; also exports where you configured (see examples/_tracing.py)
    tracing.instrument(LlamaIndexInstrumentor())
    try:
        answer = asyncio.run(main())
    finally:
        tracing.close()
    print(f"answer: {answer}\n")
    print(tracing.tree())
