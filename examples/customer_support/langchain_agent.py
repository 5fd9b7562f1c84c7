"""The customer-support agent in LangChain / LangGraph.

A LangGraph ReAct agent (``langgraph.prebuilt.create_react_agent``) over the
three tools of :mod:`common`, driven by :class:`BrainChatModel`, a small
``BaseChatModel`` that asks the shared brain what to do next and answers with
real tool calls (``AIMessage.tool_calls``) and token usage. Offline, no API key.

    agent("Where is my order A100?")         # the correct agent
    faulty_agent("Where is my order A100?")  # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/langchain_agent.py:agent``.
"""

from __future__ import annotations

import os
import sys
import warnings
from typing import Any, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.messages.ai import UsageMetadata
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file (run as a script, served by path, or imported)
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, TOOLS, Answer, ToolResult, count_tokens, decide, side_effect_twin, configure_tracing, serve_as  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("langchain")

SYSTEM_PROMPT = "You are a customer-support assistant. Use the tools; never issue a refund yourself."


class BrainChatModel(BaseChatModel):
    """A chat model that follows :func:`common.decide`; ``faults`` makes it the faulty twin."""

    model_name: str = "support-brain"
    faults: Any = None  # a common.FAULT_PLANS entry, or None

    @property
    def _llm_type(self) -> str:
        return "support-brain"

    def _get_ls_params(self, stop: Any = None, **kwargs: Any):  # type: ignore[override]
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "fake"
        params["ls_model_name"] = self.model_name
        return params

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any):  # type: ignore[override]
        from langchain_core.utils.function_calling import convert_to_openai_tool

        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        question = next((str(m.content) for m in reversed(messages) if isinstance(m, HumanMessage)), "")
        action = decide(question, _tool_results(messages), self.faults)
        if isinstance(action, Answer):
            message = AIMessage(content=action.text)
            out_tokens = count_tokens(action.text)
        else:
            call_id = f"call_{sum(isinstance(m, ToolMessage) for m in messages) + 1}"
            message = AIMessage(content="", tool_calls=[{"name": action.name, "args": action.arguments,
                                                         "id": call_id, "type": "tool_call"}])
            out_tokens = count_tokens(action.name, action.arguments)
        in_tokens = count_tokens(*(m.content for m in messages))
        message.usage_metadata = UsageMetadata(input_tokens=in_tokens, output_tokens=out_tokens,
                                               total_tokens=in_tokens + out_tokens)
        message.response_metadata = {"model_name": self.model_name, "model_provider": "fake",
                                     "finish_reason": "tool_calls" if message.tool_calls else "stop"}
        return ChatResult(generations=[ChatGeneration(message=message)])


def _tool_results(messages: Sequence[BaseMessage]) -> list[ToolResult]:
    """The tool calls of this conversation with their results, paired by tool-call id."""
    calls = {tc["id"]: tc for m in messages if isinstance(m, AIMessage) for tc in m.tool_calls}
    results = []
    for m in messages:
        if isinstance(m, ToolMessage):
            call = calls.get(m.tool_call_id, {})
            results.append(ToolResult(call.get("name") or m.name or "", call.get("args", {}), m.text))  # text of content blocks too
    return results


def build(faults: Any = None, name: str = "customer_support"):
    """The compiled LangGraph agent; ``faults`` (a plan) builds the faulty twin."""
    from langgraph.prebuilt import create_react_agent

    tools = [StructuredTool.from_function(fn) for fn in TOOLS]
    with warnings.catch_warnings():  # create_react_agent is deprecated in favour of langchain.agents (not a dependency)
        warnings.simplefilter("ignore")
        return create_react_agent(BrainChatModel(faults=faults), tools, prompt=SYSTEM_PROMPT, name=name)


_graph = build()
_faulty_graph = build(FAULT_PLANS["langchain"])


def _run(graph: Any, user_input: str) -> str:
    state = graph.invoke({"messages": [HumanMessage(user_input)]})
    return str(state["messages"][-1].content)


def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    return _run(_graph, user_input)


def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    return _run(_faulty_graph, user_input)


side_effect_agent = side_effect_twin(agent)
serve_as(_graph.name, agent, faulty_agent, side_effect_agent)


if __name__ == "__main__":
    for q in sys.argv[1:] or ["Where is my order A100?"]:
        print(agent(q), "|", faulty_agent(q))
