"""A tool call the model makes for a tool the agent does not have leaves no trace as a tool call.

LangChain ``create_agent`` (ToolNode answers "Error: nosuch is not a valid tool…"), LlamaIndex ``FunctionAgent``
(answers "Tool with name nosuch not found") and PydanticAI (``ToolReturnPart`` outcome='retried',
retry.cause='unknown_tool', "which no tool hook sees") all answer the call with an error and go on; our trees have
no ``tool`` span for it, so the ECP fold does not count it among the run's tool calls (failed). CrewAI's
instrumentor records the same event as a refused tool span (``otel_agents.tool.denied``, error.type
``unknown_tool``) through ``Telemetry.refused_tool_call``. Fixed on h-breaker4: each prints one refused span.

Run: PYTHONPATH=src:. /work/hv/.venv/bin/python repro/unknown_tool_call_has_no_span.py
"""
import asyncio
import warnings

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import otel_agents

warnings.filterwarnings("ignore", category=DeprecationWarning)
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
otel_agents.instrument(tracer_provider=provider)


def tool_spans() -> list:
    spans = [(s.name, s.attributes.get("gen_ai.tool.call.id"), s.attributes.get("error.type"))
             for s in exporter.get_finished_spans() if s.attributes.get("otel_agents.span.kind") == "tool"]
    exporter.clear()
    return spans


def real(x: int) -> str:
    """A real tool."""
    return "ok"


# -- LangChain create_agent --------------------------------------------------------------------------
from langchain.agents import create_agent  # noqa: E402
from langchain_core.language_models.fake_chat_models import GenericFakeChatModel  # noqa: E402
from langchain_core.messages import AIMessage  # noqa: E402
from langchain_core.tools import tool  # noqa: E402


class Model(GenericFakeChatModel):
    def bind_tools(self, tools, **kw):  # noqa: ANN001, ANN003, ANN201
        return self


model = Model(messages=iter([AIMessage("", tool_calls=[{"name": "nosuch", "args": {"x": 1}, "id": "c1"}]),
                             AIMessage("done")]))
create_agent(model, [tool(real)]).invoke({"messages": [("user", "go")]})
print("langchain  :", spans := tool_spans())
assert spans == [("execute_tool nosuch", "c1", "unknown_tool")], "FAULT"

# -- LlamaIndex FunctionAgent ------------------------------------------------------------------------
from llama_index.core.agent.workflow import FunctionAgent  # noqa: E402
from llama_index.core.tools import FunctionTool  # noqa: E402

from tests.llama_index.fakes import cheap_memory, scripted_llm, tool_call  # noqa: E402


async def llama() -> None:
    agent = FunctionAgent(tools=[FunctionTool.from_defaults(real)], name="calc",
                          llm=scripted_llm(tool_call("nosuch", {"x": 1}, "c1"), "done"))
    await agent.run("go", memory=cheap_memory())


asyncio.run(llama())
print("llama_index:", spans := tool_spans())
assert spans == [("execute_tool nosuch", "c1", "unknown_tool")], "FAULT"

# -- PydanticAI --------------------------------------------------------------------------------------
from pydantic_ai import Agent  # noqa: E402
from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart  # noqa: E402
from pydantic_ai.models.function import FunctionModel  # noqa: E402


def answer(messages, info):  # noqa: ANN001, ANN201
    if len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("nosuch", {"x": 1}, tool_call_id="c1")])
    return ModelResponse(parts=[TextPart("done")])


Agent(FunctionModel(answer), tools=[real]).run_sync("go")
print("pydantic_ai:", spans := tool_spans())
assert spans == [("execute_tool nosuch", "c1", "unknown_tool")], "FAULT"
print("OK")
