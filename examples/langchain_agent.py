"""A tool-using LangGraph agent, instrumented by otel-agents, offline.

The graph is the usual agent loop — ``agent`` (a chat model with tools bound)
⇄ ``tools`` (LangGraph's ``ToolNode``) until the model answers — over
:class:`TravelModel`, a small ``BaseChatModel`` that needs no network: it asks
for the ``get_weather`` tool, then for ``convert_temperature``, then answers
from the results, and reports token usage like a real provider would.

Run it::

    python examples/langchain_agent.py "Should I pack a coat for Oslo?"

It prints the answer and the span tree the instrumentor produced::

    It is 3°C (37°F) in Oslo: pack a coat.

    invoke_agent travel_agent [agent]
      agent [chain]
        chat travel-sim-1 [model]  tokens in=7 out=12
        tools_condition [chain]
      tools [chain]
        execute_tool get_weather [tool]  {"city":"Oslo"} -> {"city": "Oslo", "celsius": 3}
      agent [chain]
      …
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode, tools_condition
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _tracing.py, beside this file
from _tracing import Tracing  # noqa: E402
from otel_agents.instrumentors.langchain import LangChainInstrumentor

WEATHER = {"oslo": 3, "paris": 14, "lisbon": 21}


@tool
def get_weather(city: str) -> str:
    """Today's temperature in a city, in degrees Celsius."""
    return json.dumps({"city": city, "celsius": WEATHER.get(city.lower(), 18)})


@tool
def convert_temperature(celsius: float) -> str:
    """Convert degrees Celsius to Fahrenheit."""
    return f"{celsius * 9 / 5 + 32:.0f}"


class TravelModel(BaseChatModel):
    """Decides from the conversation alone: weather first, then the conversion, then the answer."""

    model_name: str = "travel-sim-1"

    @property
    def _llm_type(self) -> str:
        return "travel-sim"

    def _get_ls_params(self, stop: Any = None, **kwargs: Any) -> Any:  # what the instrumentor reads
        params = super()._get_ls_params(stop=stop, **kwargs)
        params.update(ls_provider="simulated", ls_model_name=self.model_name)
        return params

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(self, messages: list[BaseMessage], stop: Any = None, run_manager: Any = None,
                  **kwargs: Any) -> ChatResult:
        question = next(str(m.content) for m in messages if isinstance(m, HumanMessage))
        results = [m for m in messages if isinstance(m, ToolMessage)]
        if not results:
            city = next((c.title() for c in WEATHER if c in question.lower()), "Paris")
            reply = AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": city}, "id": "call_1"}])
        elif len(results) == 1:
            celsius = json.loads(results[0].content)["celsius"]
            reply = AIMessage("", tool_calls=[{"name": "convert_temperature", "args": {"celsius": celsius},
                                               "id": "call_2"}])
        else:
            weather = json.loads(results[0].content)
            advice = "pack a coat" if weather["celsius"] < 10 else "a light jacket will do"
            reply = AIMessage(f"It is {weather['celsius']}°C ({results[1].content}°F) in {weather['city']}: {advice}.")
        words_in = sum(len(str(m.content).split()) for m in messages)
        reply.usage_metadata = {"input_tokens": words_in, "output_tokens": 12, "total_tokens": words_in + 12}
        reply.response_metadata = {"model_name": self.model_name,
                                   "finish_reason": "tool_calls" if reply.tool_calls else "stop"}
        return ChatResult(generations=[ChatGeneration(message=reply)])


def build_agent() -> Any:
    """The agent loop as a compiled LangGraph graph named ``travel_agent``."""
    tools = [get_weather, convert_temperature]
    model = TravelModel().bind_tools(tools)

    def agent(state: MessagesState) -> dict[str, Any]:
        return {"messages": [model.invoke(state["messages"])]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(tools))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", tools_condition, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(name="travel_agent")


def main(question: str) -> None:
    tracing = Tracing()  # prints the tree; also exports where you configured (see examples/_tracing.py)
    tracing.instrument(LangChainInstrumentor())
    try:
        result = build_agent().invoke({"messages": [HumanMessage(question)]},
                                      {"configurable": {"thread_id": "demo-thread"}})
    finally:
        tracing.close()
    print(result["messages"][-1].content)
    print()
    print(tracing.tree())


if __name__ == "__main__":
    main(" ".join(sys.argv[1:]) or "Should I pack a coat for Oslo?")
