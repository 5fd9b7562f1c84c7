"""One small offline example run per framework, shared by the backend tests and the zero-code app.

Each run is plain framework code over a fake model (one tool call, then an answer); it never calls
``instrument()`` itself, so the same function serves a test that configured a provider and an app
started under ``opentelemetry-instrument``. ``manual`` is the project's plain-Python example
(``examples/plain_python/agent.py``, decorators only) inside a ``chain`` span.

:func:`skip_reason` says why a run cannot happen in this venv (a framework tested in a venv of its
own); :data:`EXPECTED_KINDS` lists the OpenInference kinds each run must show.
"""

from __future__ import annotations

import asyncio
import importlib.util
import os
import sys
from pathlib import Path
from typing import Any, Callable

REPO = Path(__file__).resolve().parents[2]
QUESTION = "Can I get a refund for order A1001?"
MANUAL_QUESTION = "Can I get a refund for order B200?"  # an order of the customer-support example's table

# CrewAI: no telemetry, no tracing upload, nothing outside the machine (cases README).
for _key, _value in (("CREWAI_DISABLE_TELEMETRY", "true"), ("CREWAI_TRACING_ENABLED", "false"),
                     ("CREWAI_DISABLE_TRACKING", "true")):
    os.environ.setdefault(_key, _value)


def run_manual() -> Any:
    import otel_agents

    spec = importlib.util.spec_from_file_location("otel_agents_example_plain", REPO / "examples/plain_python/agent.py")
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    with otel_agents.span("chain", "support_session") as session:
        session.set_input(MANUAL_QUESTION)
        answer = example.agent(MANUAL_QUESTION)
        session.set_output(answer)
    return answer


def run_langchain() -> Any:
    from langchain_core.language_models import BaseChatModel
    from langchain_core.messages import AIMessage, HumanMessage, ToolMessage
    from langchain_core.outputs import ChatGeneration, ChatResult
    from langchain_core.tools import tool
    from langgraph.graph import END, START, MessagesState, StateGraph
    from langgraph.prebuilt import ToolNode

    @tool
    def lookup_order(order_id: str) -> str:
        """Look up an order by its id."""
        return f"order {order_id}: delivered 12 days ago"

    class ScriptedChat(BaseChatModel):
        """Asks for ``lookup_order`` until a tool result is in the conversation, then answers."""

        model_name: str = "scripted-chat-1"  # LangChain reports it as ls_model_name

        @property
        def _llm_type(self) -> str:
            return "scripted-chat"

        def bind_tools(self, tools: Any, **kwargs: Any) -> Any:
            return self

        def _generate(self, messages: Any, stop: Any = None, run_manager: Any = None, **kwargs: Any) -> ChatResult:
            usage = {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18}
            if any(isinstance(m, ToolMessage) for m in messages):
                reply = AIMessage("Order A1001 can be refunded.", usage_metadata=usage)
            else:
                reply = AIMessage("", tool_calls=[{"name": "lookup_order", "args": {"order_id": "A1001"},
                                                   "id": "call_1", "type": "tool_call"}], usage_metadata=usage)
            return ChatResult(generations=[ChatGeneration(message=reply)])

    model = ScriptedChat().bind_tools([lookup_order])

    # No annotations on the nodes: LangGraph resolves them at run time, and these names are local.
    def call_model(state):  # type: ignore[no-untyped-def]
        return {"messages": [model.invoke(state["messages"])]}

    def route(state):  # type: ignore[no-untyped-def]
        return "tools" if state["messages"][-1].tool_calls else END

    graph = StateGraph(MessagesState)
    graph.add_node("agent", call_model)
    graph.add_node("tools", ToolNode([lookup_order]))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    app = graph.compile(name="support")
    return app.invoke({"messages": [HumanMessage(QUESTION)]})["messages"][-1].content


def run_llama_index() -> Any:
    from llama_index.core.agent.workflow import FunctionAgent
    from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
    from llama_index.core.llms.mock import MockFunctionCallingLLM
    from llama_index.core.tools import FunctionTool

    def lookup_order(order_id: str) -> str:
        """Look up an order by its id."""
        return f"order {order_id}: delivered 12 days ago"

    def respond(messages: Any, **kwargs: Any) -> ChatMessage:
        if any(m.role == MessageRole.TOOL for m in messages):
            return ChatMessage(role=MessageRole.ASSISTANT, content="Order A1001 can be refunded.")
        return ChatMessage(role=MessageRole.ASSISTANT, blocks=[
            ToolCallBlock(tool_call_id="call_1", tool_name="lookup_order", tool_kwargs={"order_id": "A1001"})])

    agent = FunctionAgent(name="support", description="Answers order questions.",
                          tools=[FunctionTool.from_defaults(fn=lookup_order)],
                          llm=MockFunctionCallingLLM(response_generator=respond), streaming=False)
    async def run() -> Any:  # the workflow needs a running loop when it is started
        return await agent.run(user_msg=QUESTION)

    return str(asyncio.run(run()))


def run_pydantic_ai() -> Any:
    from pydantic_ai import Agent
    from pydantic_ai.messages import ModelResponse, TextPart, ToolCallPart, ToolReturnPart
    from pydantic_ai.models.function import FunctionModel
    from pydantic_ai.usage import RequestUsage

    def respond(messages: Any, info: Any) -> ModelResponse:
        if any(isinstance(p, ToolReturnPart) for p in messages[-1].parts):
            return ModelResponse(parts=[TextPart("Order A1001 can be refunded.")],
                                 usage=RequestUsage(input_tokens=20, output_tokens=7), model_name="fn-model")
        return ModelResponse(parts=[ToolCallPart("lookup_order", {"order_id": "A1001"}, tool_call_id="call_1")],
                             usage=RequestUsage(input_tokens=10, output_tokens=3), model_name="fn-model")

    agent = Agent(FunctionModel(respond), name="support")

    @agent.tool_plain
    def lookup_order(order_id: str) -> str:
        """Look up an order by its id."""
        return f"order {order_id}: delivered 12 days ago"

    return agent.run_sync(QUESTION).output


def run_openai_agents() -> Any:
    """The customer-support example in the OpenAI Agents SDK (examples/customer_support/openai_agents_agent.py)."""
    spec = importlib.util.spec_from_file_location("otel_agents_example_openai_agents",
                                                  REPO / "examples/customer_support/openai_agents_agent.py")
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return asyncio.run(example.agent(MANUAL_QUESTION))


def run_agno() -> Any:
    os.environ.setdefault("AGNO_TELEMETRY", "false")  # Agno reports runs to its own service unless turned off
    from dataclasses import dataclass

    from agno.agent import Agent
    from agno.metrics import MessageMetrics
    from agno.models.base import Model
    from agno.models.response import ModelResponse

    @dataclass
    class ScriptedModel(Model):
        """A tool call on the first request, the answer once a tool result is in the conversation."""

        id: str = "scripted-1"
        provider: str = "scripted"

        def invoke(self, messages: Any, **kwargs: Any) -> ModelResponse:
            if any(m.role == "tool" for m in messages):
                return ModelResponse(role="assistant", content="Order A1001 can be refunded.",
                                     response_usage=MessageMetrics(input_tokens=20, output_tokens=7, total_tokens=27))
            return ModelResponse(role="assistant", tool_calls=[{"id": "call_1", "type": "function", "function": {
                "name": "lookup_order", "arguments": '{"order_id": "A1001"}'}}],
                response_usage=MessageMetrics(input_tokens=10, output_tokens=3, total_tokens=13))

        async def ainvoke(self, messages: Any, **kwargs: Any) -> ModelResponse:
            return self.invoke(messages)

        def invoke_stream(self, messages: Any, **kwargs: Any) -> Any:
            yield self.invoke(messages)

        async def ainvoke_stream(self, messages: Any, **kwargs: Any) -> Any:
            yield self.invoke(messages)

        def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
            return response

        def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
            return response

    def lookup_order(order_id: str) -> str:
        """Look up an order by its id."""
        return f"order {order_id}: delivered 12 days ago"

    agent = Agent(name="support", model=ScriptedModel(), tools=[lookup_order], telemetry=False)
    return agent.run(QUESTION).content


def run_autogen_agentchat() -> Any:
    from autogen_agentchat.agents import AssistantAgent
    from autogen_core import FunctionCall
    from autogen_core.models import CreateResult, RequestUsage
    from autogen_ext.models.replay import ReplayChatCompletionClient

    def lookup_order(order_id: str) -> str:
        """Look up an order by its id."""
        return f"order {order_id}: delivered 12 days ago"

    info = {"vision": False, "function_calling": True, "json_output": False, "family": "scripted-1",
            "structured_output": False}
    client = ReplayChatCompletionClient([
        CreateResult(finish_reason="function_calls", cached=False, usage=RequestUsage(10, 3),
                     content=[FunctionCall(id="call_1", name="lookup_order", arguments='{"order_id": "A1001"}')]),
        CreateResult(finish_reason="stop", cached=False, usage=RequestUsage(20, 7), content="Order A1001 can be refunded."),
    ], model_info=info)
    agent = AssistantAgent("support", model_client=client, tools=[lookup_order], reflect_on_tool_use=True)
    return asyncio.run(agent.run(task=QUESTION)).messages[-1].content


def run_crewai() -> Any:
    from crewai import Agent, Crew, Task
    from crewai.llms.base_llm import BaseLLM
    from crewai.tools import tool

    @tool("lookup_order")
    def lookup_order(order_id: str) -> str:
        """Look up an order by its id."""
        return f"order {order_id}: delivered 12 days ago"

    class ScriptedLLM(BaseLLM):
        """ReAct text: an ``Action`` on the first turn, the ``Final Answer`` once there is an observation."""

        def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
                 from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> str:
            if not isinstance(messages, str) and len(messages) > 2:
                return "Thought: I now know the final answer\nFinal Answer: Order A1001 can be refunded."
            return 'Thought: look it up\nAction: lookup_order\nAction Input: {"order_id": "A1001"}'

        def supports_function_calling(self) -> bool:
            return False

    agent = Agent(role="support", goal="Answer order questions", backstory="A support agent.",
                  llm=ScriptedLLM(model="scripted/react"), tools=[lookup_order], verbose=False)
    task = Task(description="Answer the customer: {question}", expected_output="An answer.", agent=agent)
    return str(Crew(agents=[agent], tasks=[task], verbose=False).kickoff(inputs={"question": QUESTION}))


def run_smolagents() -> Any:
    import os

    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from smolagents import Model, ToolCallingAgent, tool
    from smolagents.models import ChatMessage, ChatMessageToolCall, ChatMessageToolCallFunction, MessageRole
    from smolagents.monitoring import LogLevel, TokenUsage

    @tool
    def lookup_order(order_id: str) -> str:
        """Look up an order by its id.

        Args:
            order_id: the order id.
        """
        return f"order {order_id}: delivered 12 days ago"

    class ScriptedModel(Model):
        """``lookup_order`` first, then ``final_answer`` once the conversation holds an observation."""

        def generate(self, messages: Any, **kwargs: Any) -> ChatMessage:
            answered = any("Observation:" in str(m.content) for m in messages)
            name, arguments = (("final_answer", {"answer": "Order A1001 can be refunded."}) if answered
                               else ("lookup_order", {"order_id": "A1001"}))
            call = ChatMessageToolCall(function=ChatMessageToolCallFunction(name=name, arguments=arguments),
                                       id=f"call_{int(answered)}", type="function")
            return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=[call],
                               token_usage=TokenUsage(input_tokens=20 if answered else 10, output_tokens=5))

    agent = ToolCallingAgent(tools=[lookup_order], model=ScriptedModel(model_id="scripted-1"), name="support",
                             verbosity_level=LogLevel.OFF)
    return str(agent.run(QUESTION))


def _client_loop(name: str) -> Any:
    """The customer-support loop on a provider client (``examples/customer_support/{name}_agent.py``): its
    model spans come from the ``anthropic``/``openai`` client instrumentor, over the client's mock transport."""
    spec = importlib.util.spec_from_file_location(f"otel_agents_example_{name}",
                                                  REPO / f"examples/customer_support/{name}_agent.py")
    assert spec and spec.loader
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    return example.agent(MANUAL_QUESTION)


def run_anthropic() -> Any:
    return _client_loop("anthropic")


def run_openai() -> Any:
    return _client_loop("openai")


def run_google_adk() -> Any:
    from typing import AsyncGenerator

    from google.adk.agents import LlmAgent
    from google.adk.models.base_llm import BaseLlm
    from google.adk.models.llm_response import LlmResponse
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService
    from google.genai import types

    class ScriptedLlm(BaseLlm):
        """A function call on the first request, the answer once a function response is in the conversation."""

        model: str = "scripted-1"

        async def generate_content_async(self, llm_request: Any, stream: bool = False) -> AsyncGenerator[LlmResponse, None]:
            answered = any(p.function_response for c in llm_request.contents for p in c.parts or ())
            part = types.Part(text="Order A1001 can be refunded.") if answered else types.Part(
                function_call=types.FunctionCall(name="lookup_order", args={"order_id": "A1001"}, id="call_1"))
            usage = (20, 7) if answered else (10, 3)
            yield LlmResponse(content=types.Content(role="model", parts=[part]), finish_reason=types.FinishReason.STOP,
                              usage_metadata=types.GenerateContentResponseUsageMetadata(
                                  prompt_token_count=usage[0], candidates_token_count=usage[1],
                                  total_token_count=sum(usage)))

    def lookup_order(order_id: str) -> str:
        """Look up an order by its id."""
        return f"order {order_id}: delivered 12 days ago"

    async def main() -> str:
        runner = Runner(app_name="support", agent=LlmAgent(name="support", model=ScriptedLlm(), tools=[lookup_order]),
                        session_service=InMemorySessionService())
        await runner.session_service.create_session(app_name="support", user_id="u1", session_id="s1")
        answer = ""
        async for event in runner.run_async(user_id="u1", session_id="s1",
                                            new_message=types.Content(role="user", parts=[types.Part(text=QUESTION)])):
            if event.is_final_response() and event.content and event.content.parts:
                answer = "".join(p.text for p in event.content.parts if p.text)
        return answer

    return asyncio.run(main())


RUNS: dict[str, Callable[[], Any]] = {
    "manual": run_manual,
    "langchain": run_langchain,
    "llama_index": run_llama_index,
    "pydantic_ai": run_pydantic_ai,
    "crewai": run_crewai,
    "smolagents": run_smolagents,
    "openai_agents": run_openai_agents,
    "anthropic": run_anthropic,
    "openai": run_openai,
    "agno": run_agno,
    "google_adk": run_google_adk,
    "autogen_agentchat": run_autogen_agentchat,
}

# OpenInference kinds each run must show (CHAIN too where the framework has an orchestration span).
EXPECTED_KINDS: dict[str, set[str]] = {
    "manual": {"CHAIN", "AGENT", "LLM", "TOOL"},
    "langchain": {"AGENT", "LLM", "TOOL"},
    "llama_index": {"AGENT", "LLM", "TOOL"},
    "pydantic_ai": {"AGENT", "LLM", "TOOL"},
    "crewai": {"CHAIN", "AGENT", "LLM", "TOOL"},
    "smolagents": {"CHAIN", "AGENT", "LLM", "TOOL"},
    "openai_agents": {"CHAIN", "AGENT", "LLM", "TOOL"},
    "anthropic": {"AGENT", "LLM", "TOOL"},
    "openai": {"AGENT", "LLM", "TOOL"},
    "agno": {"AGENT", "LLM", "TOOL"},
    "google_adk": {"AGENT", "LLM", "TOOL"},
    "autogen_agentchat": {"AGENT", "LLM", "TOOL"},
}

# Client loops: their agent and tool spans come from the decorators (otel_agents.framework=manual), their
# model spans from the client instrumentor; a backend shows them in one trace.
CLIENT_LOOPS = {"anthropic", "openai"}

# The runs whose fake model reports token usage.
REPORTS_USAGE = {"manual", "langchain", "pydantic_ai", "smolagents", "openai_agents", "anthropic", "openai", "agno",
                 "google_adk", "autogen_agentchat"}


def skip_reason(name: str) -> str | None:
    """Why the run of ``name`` cannot happen in this venv: only a framework tested in a venv of its own
    (``tests/frameworks.py``), which runs it there. Any other framework missing here is a failure."""
    from tests.frameworks import tested_here

    if name == "manual" or tested_here([name]):
        return None
    return f"{name} is tested in its own venv (Makefile ISOLATED)"


def others_disabled(*names: str) -> str:
    """``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` for an ``opentelemetry-instrument`` app that runs ``names`` alone:
    every other instrumentor of ours that the launcher would load (each imports its framework: all of them cost
    ~6 s of CPU a launch, LangChain's alone ~2 s). For a test of what the launcher does with these frameworks'
    runs, not of loading them all (``test_zero_code_console_finds_our_spans`` loads them all)."""
    from importlib.metadata import entry_points

    return ",".join(sorted({e.name for e in entry_points(group="opentelemetry_instrumentor")
                            if e.value.startswith("otel_agents.") and e.name not in names}))


def main(argv: list[str]) -> int:
    """``python runs.py NAME...``: run the named examples in this process (the zero-code app)."""
    for name in argv:
        result = RUNS[name]()
        print(f"{name}: {result}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
