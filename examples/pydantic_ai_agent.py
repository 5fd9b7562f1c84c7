"""PydanticAI, instrumented by otel-agents: offline, no API key.

    python examples/pydantic_ai_agent.py

An agent over PydanticAI's own ``FunctionModel`` (a scripted stand-in for an
LLM) with one tool, run three ways — ``run_sync``, ``run_stream_sync`` consumed
to the end, and ``run_stream_sync`` abandoned after the first chunk — and a
structured-output run whose tool asks for a retry once. The spans are printed as
a tree: each model call with its token usage, each tool call with its arguments and
result, the abandoned stream marked ``abandoned``, the tool call that asked for a
retry ``ERROR``. They also go where your environment sends them
(``OTEL_AGENTS_EXPORTERS``, or ``opentelemetry-instrument``: see ``examples/_tracing.py``).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any, AsyncIterator

from pydantic import BaseModel
from pydantic_ai import Agent, ModelRetry
from pydantic_ai.messages import ModelMessage, ModelResponse, TextPart, ToolCallPart, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, FunctionModel
from pydantic_ai.usage import RequestUsage

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _tracing.py, beside this file
from _tracing import Tracing  # noqa: E402
from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor

# -- a scripted model: call the tool, then answer with what it returned ------------------------------
def weather_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    if returns:
        return ModelResponse(parts=[TextPart(f"It is {returns[0].content}.")], finish_reason="stop",
                             usage=RequestUsage(input_tokens=42, output_tokens=6), model_name="scripted")
    return ModelResponse(parts=[ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="call_1")],
                         finish_reason="tool_call", usage=RequestUsage(input_tokens=30, output_tokens=5),
                         model_name="scripted")


async def weather_model_stream(messages: list[ModelMessage], info: AgentInfo) -> AsyncIterator[Any]:
    returns = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart)]
    if not returns:
        yield {0: DeltaToolCall("get_weather", json.dumps({"city": "Paris"}), tool_call_id="call_1")}
        return
    for word in f"It is {returns[0].content} today, with a light breeze.".split(" "):
        yield word + " "


weather = Agent(FunctionModel(weather_model, stream_function=weather_model_stream, model_name="scripted"),
                name="weather", instructions="Answer with the tool's data.")


@weather.tool_plain
def get_weather(city: str) -> str:
    """Today's weather in a city."""
    return f"sunny in {city}"


class City(BaseModel):
    name: str
    population: int


def census_model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
    answered = [p for p in messages[-1].parts if isinstance(p, ToolReturnPart) and p.outcome != "retried"]
    if answered:
        return ModelResponse(parts=[ToolCallPart(info.output_tools[0].name,
                                                 {"name": "Paris", "population": answered[0].content})])
    return ModelResponse(parts=[ToolCallPart("population", {"city": "Paris"})])


census = Agent(FunctionModel(census_model), name="census", output_type=City)
census_calls: list[str] = []


@census.tool_plain
def population(city: str) -> int:
    """A city's population; the service is busy on the first call."""
    census_calls.append(city)
    if len(census_calls) == 1:
        raise ModelRetry("census service busy, try again")
    return 2_100_000


def main() -> None:
    tracing = Tracing()  # prints the tree; also exports where you configured (see examples/_tracing.py)
    tracing.instrument(PydanticAIInstrumentor())

    print("run_sync:", weather.run_sync("What's the weather in Paris?").output)
    with weather.run_stream_sync("And now, streamed?") as result:
        print("run_stream_sync:", "".join(result.stream_text(delta=True, debounce_by=None)))
    result = weather.run_stream_sync("Streamed, but I stop after one chunk")
    print("abandoned after:", next(iter(result.stream_text(delta=True, debounce_by=None))))
    print("structured:", census.run_sync("How many people live in Paris?").output)

    print("\nspans:")
    print(tracing.tree())
    tracing.close()


if __name__ == "__main__":
    main()
