"""CrewAI cases CR-1 … CR-5 (``../shared/cases/crewai.md``) on real CrewAI crews over scripted models."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest
from crewai import LLM, Agent, Crew, Process, Task
from crewai.flow.flow import Flow, listen, start
from crewai.llms.base_llm import BaseLLM
from crewai.tools import tool
from opentelemetry import trace
from opentelemetry.trace import StatusCode

from otel_agents.instrumentors.crewai import CrewAIInstrumentor
from tests._loopback import QuietHandler, serve
from tests.crewai.fakes import (GENAI_FINISH, NativeLLM, OrderFlow, ReactLLM, ReplyLLM, clerk, lookup_order,
                                one_agent_crew, order_task)
from tests.spans import SnapshotExporter, SpanSnapshot, parent_of, tree

REPO = Path(__file__).resolve().parents[2]


def one_trace(exporter: SnapshotExporter) -> list[SpanSnapshot]:
    spans = exporter.semantic()
    assert spans, "no spans"
    assert len({s.trace_id for s in spans}) == 1, tree(spans)
    return spans


def of_kind(spans: list[SpanSnapshot], kind: str) -> list[SpanSnapshot]:
    return [s for s in spans if s.semantic_kind == kind]


def assert_direct_parentage(spans: list[SpanSnapshot]) -> None:
    """crew → agent → model/tool: every agent's parent is a crew (or the delegation tool),
    every model and tool span's parent is an agent."""
    for s in spans:
        parent = parent_of(s, spans)
        if s.semantic_kind in ("model", "tool"):
            assert parent is not None and parent.semantic_kind == "agent", f"{s.name}:\n{tree(spans)}"
        if s.semantic_kind == "agent" and parent is not None:
            assert parent.semantic_kind in ("chain", "tool"), f"{s.name}:\n{tree(spans)}"


# --- CR-1: every tool call is a tool span --------------------------------------------------------
def test_cr1_react_path_one_tool_span(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-1: the ReAct text path (ToolUsage → CrewStructuredTool.invoke, no BaseTool.run) gives one
    tool span, a direct child of the agent span, with arguments and result; the tool body runs in it."""
    seen: list[Any] = []

    @tool("lookup_order")
    def probed_lookup(order_id: str) -> str:
        """Look up an order by its id and return its status."""
        seen.append(trace.get_current_span().get_span_context().span_id)
        return f"Order {order_id}: shipped"

    one_agent_crew(tools=[probed_lookup]).kickoff()
    spans = one_trace(exporter)
    (tool_span,) = of_kind(spans, "tool")
    assert tool_span.name == "execute_tool lookup_order"
    assert parent_of(tool_span, spans).name == "invoke_agent Order Clerk"
    assert tool_span.json_attr("gen_ai.tool.call.arguments") == {"order_id": "A100"}
    assert "shipped" in tool_span.attributes["gen_ai.tool.call.result"]
    assert seen == [tool_span.span_id]
    assert_direct_parentage(spans)


def test_cr1_native_path_one_tool_span_per_call(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-1: native function calling with two calls in one turn (CrewAI runs them on pool threads)
    gives two tool spans, both direct children of the agent span, with call ids, arguments and results."""
    one_agent_crew(NativeLLM(n_calls=2)).kickoff()
    spans = one_trace(exporter)
    tools = of_kind(spans, "tool")
    assert len(tools) == 2, tree(spans)
    assert {t.attributes["gen_ai.tool.call.id"] for t in tools} == {"call_0", "call_1"}
    for t in tools:
        assert parent_of(t, spans).semantic_kind == "agent"
        assert t.json_attr("gen_ai.tool.call.arguments") == {"order_id": "A100"}
        assert t.attributes["gen_ai.tool.call.result"] == "Order A100: shipped"
    model = of_kind(spans, "model")[0]
    assert json.loads(model.attributes["gen_ai.output.messages"])[0]["parts"][0]["type"] == "tool_call"
    assert_direct_parentage(spans)


@pytest.mark.parametrize("llm_cls", [ReactLLM, NativeLLM], ids=["react", "native"])
def test_cr1_cached_result_is_one_tool_span_marked_cached(llm_cls: type, instrumented: Any,
                                                          exporter: SnapshotExporter) -> None:
    """CR-1: the second task asks the same tool the same thing; CrewAI (``Crew(cache=True)``) answers
    from its cache without running the tool, and that call is still one tool span, marked
    otel_agents.tool.cached."""
    runs: list[str] = []

    @tool("lookup_order")
    def counted_lookup(order_id: str) -> str:
        """Look up an order by its id and return its status."""
        runs.append(order_id)
        return f"Order {order_id}: shipped"

    agent = clerk(llm_cls(), tools=[counted_lookup])
    tasks = [order_task(agent, name="first"), order_task(agent, name="second")]
    Crew(agents=[agent], tasks=tasks, cache=True).kickoff()
    spans = one_trace(exporter)
    tools = of_kind(spans, "tool")
    assert len(tools) == 2 and len(runs) == 1, tree(spans)
    assert [t.attributes.get("otel_agents.tool.cached") for t in tools] == [None, True]
    assert_direct_parentage(spans)


@pytest.mark.parametrize("llm_cls", [ReactLLM, NativeLLM], ids=["react", "native"])
def test_cr1_failed_tool_call_is_an_error_span(llm_cls: type, instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-1: a tool that raises (CrewAI catches it, retries on the ReAct path, and tells the model)
    is still one tool span, ending in ERROR with the exception's class as error.type."""

    @tool("lookup_order")
    def broken_lookup(order_id: str) -> str:
        """Look up an order by its id and return its status."""
        raise ValueError("order database unavailable")

    one_agent_crew(llm_cls(), tools=[broken_lookup]).kickoff()
    spans = one_trace(exporter)
    (tool_span,) = of_kind(spans, "tool")
    assert tool_span.status.name == "ERROR"
    assert tool_span.attributes["error.type"] == "ValueError"
    assert of_kind(spans, "chain")[0].status.name == "UNSET"


class ProviderStyleLLM(BaseLLM):
    """Runs the tool itself through BaseLLM._handle_tool_execution, as CrewAI's provider classes do
    when handed ``available_functions``."""

    def __init__(self, **data: Any) -> None:
        data.setdefault("model", "scripted-provider")
        super().__init__(**data)

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> Any:
        return self._handle_tool_execution("lookup_order", {"order_id": "A100"}, available_functions or {})


def test_cr1_provider_executed_tool(instrumented: Any, exporter: SnapshotExporter, app_tracer: Any) -> None:
    """CR-1: a tool run by the model class itself (BaseLLM._handle_tool_execution) is one tool span,
    a child of that model call's span; a raising function ends it in ERROR."""

    def boom(order_id: str) -> str:
        raise ValueError("nope")

    llm = ProviderStyleLLM()
    with app_tracer.start_as_current_span("app"):
        assert llm.call("status?", available_functions={"lookup_order": lookup_order.run}) == "Order A100: shipped"
        assert llm.call("status?", available_functions={"lookup_order": boom}) is None
    spans = exporter.semantic()
    tools = of_kind(spans, "tool")
    assert len(tools) == 2 and len(of_kind(spans, "model")) == 2
    for t in tools:
        assert parent_of(t, spans).semantic_kind == "model"
    assert [t.status.name for t in tools] == ["UNSET", "ERROR"]


def test_cr1_planning_step_executor_native_call(instrumented: Any, exporter: SnapshotExporter,
                                                app_tracer: Any) -> None:
    """CR-1: the planning step executor runs native tool calls through its own copy of the logic
    (step_executor.execute_single_native_tool_call); each is one tool span too."""
    from crewai.agents import step_executor

    call = {"id": "call_9", "type": "function", "function": {"name": "lookup_order", "arguments": '{"order_id": "A7"}'}}
    with app_tracer.start_as_current_span("plan step"):
        result = step_executor.execute_single_native_tool_call(
            call, available_functions={"lookup_order": lookup_order.run}, original_tools=[lookup_order],
            structured_tools=None, tools_handler=None, agent=None, task=None, crew=None, event_source=object())
    assert result.result == "Order A7: shipped"
    (tool_span,) = exporter.semantic()
    assert tool_span.name == "execute_tool lookup_order"
    assert tool_span.attributes["gen_ai.tool.call.id"] == "call_9"
    assert tool_span.json_attr("gen_ai.tool.call.arguments") == {"order_id": "A7"}
    assert tool_span.attributes["gen_ai.tool.call.result"] == "Order A7: shipped"


# --- CR-2: every model call is a model span -------------------------------------------------------
def test_cr2_custom_llm_call_is_one_model_span(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-2: each call() of a custom BaseLLM subclass is one model span with model name, messages,
    usage, finish reason and response id (usage read from _emit_call_completed_event)."""
    one_agent_crew().kickoff()
    spans = one_trace(exporter)
    models = of_kind(spans, "model")
    assert len(models) == 2, tree(spans)
    first = models[0]
    assert first.name == "chat scripted-react"
    assert first.attributes["gen_ai.request.model"] == "scripted-react"
    assert first.attributes["gen_ai.usage.input_tokens"] == 11
    assert first.attributes["gen_ai.usage.output_tokens"] == 7
    assert first.attributes["llm.token_count.total"] == 18
    assert first.attributes["gen_ai.response.id"] == "resp-1"
    assert first.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    assert "Order Clerk" in first.attributes["gen_ai.system_instructions"]
    assert json.loads(first.attributes["gen_ai.input.messages"])[0]["role"] == "user"
    assert "Action: lookup_order" in first.attributes["output.value"]
    assert "gen_ai.provider.name" not in first.attributes  # custom class, no provider prefix: not guessed


@pytest.mark.parametrize("content", [True, False], ids=["content", "no-content"])
def test_cr2_native_calls_report_what_the_provider_sent(content: bool, instrument: Any,
                                                         exporter: SnapshotExporter) -> None:
    """CR-2 on the native path, with a fake that behaves as CrewAI's OpenAI provider does (an
    LLMCallCompletedEvent per call: TOOL_CALL with tool_calls, then LLM_CALL with stop, each with usage and a
    response id): each model span has exactly the usage, finish reason and response id its call sent, with
    content capture on or off (none of them is content)."""
    instrument(capture_content=content)
    llm = NativeLLM()
    one_agent_crew(llm).kickoff()
    models = of_kind(one_trace(exporter), "model")
    assert len(models) == len(llm.sent) == 2
    for span, sent in zip(models, llm.sent):
        a, usage = span.attributes, sent["usage"]
        assert a["gen_ai.response.finish_reasons"] == (GENAI_FINISH[sent["finish_reason"]],)
        assert a["gen_ai.response.id"] == sent["response_id"]
        assert a["gen_ai.usage.input_tokens"] == usage["prompt_tokens"]
        assert a["gen_ai.usage.output_tokens"] == usage["completion_tokens"]
        assert a["llm.token_count.total"] == usage["total_tokens"]
        assert a.get("gen_ai.usage.cache_read.input_tokens") == (usage.get("cached_prompt_tokens") or None)
        if content:
            assert json.loads(a["gen_ai.output.messages"])[0]["finish_reason"] == GENAI_FINISH[sent["finish_reason"]]
    assert [sent["finish_reason"] for sent in llm.sent] == ["tool_calls", "stop"]


def test_cr2_partial_usage_stays_partial(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-2: a provider that reports only completion tokens gives output tokens and no invented input count."""
    one_agent_crew(ReactLLM(usage={"completion_tokens": 7})).kickoff()
    model = of_kind(exporter.semantic(), "model")[0]
    assert model.attributes["gen_ai.usage.output_tokens"] == 7
    assert "gen_ai.usage.input_tokens" not in model.attributes


def test_cr2_subclass_defined_later_and_super_call(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-2: a subclass defined after instrument() is patched (BaseLLM.__init_subclass__), and its
    call() that ends in super().call() still gives exactly one model span per call."""

    class LateLLM(ReactLLM):
        def call(self, *args: Any, **kwargs: Any) -> Any:
            return super().call(*args, **kwargs)

    one_agent_crew(LateLLM(model="late-model")).kickoff()
    models = of_kind(one_trace(exporter), "model")
    assert [m.name for m in models] == ["chat late-model", "chat late-model"]


def test_cr2_same_llm_called_again_from_its_own_tool(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-2: the super().call() guard does not swallow a genuine nested call: a tool run inside the
    model's call that calls the same LLM object again gets a model span of its own."""
    llm = ProviderStyleLLM()

    def ask_again(order_id: str) -> str:
        return str(llm.call(f"Status of {order_id}?"))  # no functions this time: a plain call

    llm.call("status?", available_functions={"lookup_order": ask_again})
    spans = exporter.semantic()
    assert [s.semantic_kind for s in spans] == ["model", "tool", "model"], tree(spans)
    assert spans[2].parent_id == spans[1].span_id


@pytest.fixture
def openai_loopback() -> Iterator[str]:
    """An OpenAI-compatible chat completions endpoint on 127.0.0.1 answering with a final answer."""

    class Handler(QuietHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's API
            self.rfile.read(int(self.headers.get("content-length") or 0))
            body = json.dumps({
                "id": "chatcmpl-loopback", "object": "chat.completion", "created": 0, "model": "gpt-4o-2024-08-06",
                "choices": [{"index": 0, "finish_reason": "stop", "message": {
                    "role": "assistant", "content": "Thought: I now know the final answer\nFinal Answer: Hello!"}}],
                "usage": {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17},
            }).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    with serve(Handler) as url:
        yield f"{url}/v1"


def test_cr2_llm_model_resolves_to_a_provider_class(instrumented: Any, exporter: SnapshotExporter,
                                                     openai_loopback: str) -> None:
    """CR-2: LLM(model="openai/gpt-4o") builds CrewAI's OpenAI provider class (not crewai.llm.LLM), loaded
    after instrument(); its call is one model span with provider, model, messages and the usage the
    API reported (served on loopback)."""
    llm = LLM(model="openai/gpt-4o", base_url=openai_loopback, api_key="sk-loopback")
    assert type(llm).__name__ == "OpenAICompletion"
    result = Agent(role="Greeter", goal="Greet", backstory="Friendly.", llm=llm).kickoff("Say hello")
    assert result.raw == "Hello!"
    spans = one_trace(exporter)
    (model,) = of_kind(spans, "model")
    assert model.name == "chat gpt-4o"
    assert model.attributes["gen_ai.provider.name"] == "openai"
    assert model.attributes["gen_ai.usage.input_tokens"] == 12
    assert model.attributes["gen_ai.usage.output_tokens"] == 5
    assert model.attributes["gen_ai.response.id"] == "chatcmpl-loopback"
    assert parent_of(model, spans).name == "invoke_agent Greeter"


# --- CR-3: one trace across CrewAI's threads and loops --------------------------------------------
def test_cr3_max_execution_time_thread_pool(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-3: with max_execution_time CrewAI runs the agent in a thread pool; still one trace,
    crew → agent → model/tool in direct parentage."""
    one_agent_crew(max_execution_time=60).kickoff()
    spans = one_trace(exporter)
    assert Counter(s.semantic_kind for s in spans) == {"chain": 1, "agent": 1, "model": 2, "tool": 1}
    assert_direct_parentage(spans)


def test_cr3_flow_step_kicks_off_a_crew(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-3/CR-4: a Flow is a chain with one chain per method; the crew its step kicks off nests
    under that method, in the same trace; CrewAI's internal executor flow adds no span."""
    assert OrderFlow().kickoff() == "Order A100: shipped"
    spans = one_trace(exporter)
    flow = next(s for s in spans if s.parent_id is None)
    assert flow.name == "OrderFlow" and flow.semantic_kind == "chain"
    assert "gen_ai.operation.name" not in flow.attributes
    methods = [s for s in spans if s.parent_id == flow.span_id]
    assert [m.name for m in methods] == ["receive", "handle"]
    (crew,) = [s for s in spans if s.name == "invoke_workflow crew"]
    assert crew.parent_id == methods[1].span_id
    assert not any("AgentExecutor" in s.name for s in spans)
    assert_direct_parentage(spans)


class AsyncGreetingFlow(Flow):
    """An async flow step that calls Agent.kickoff(): inside a running loop CrewAI hands back a coroutine."""

    @start()
    async def greet(self) -> str:
        result = await clerk().kickoff("What is the status of order A100?")
        return result.raw


def test_cr3_agent_kickoff_inside_async_flow_step(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-3/CR-4: Agent.kickoff() in an async flow step returns kickoff_async()'s coroutine; the agent
    still gets exactly one span, under the step's span."""
    assert AsyncGreetingFlow().kickoff() == "Order A100: shipped"
    spans = one_trace(exporter)
    (agent,) = of_kind(spans, "agent")
    assert parent_of(agent, spans).name == "greet"
    assert_direct_parentage(spans)


def test_cr3_kickoff_async_concurrent_crews(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-3: two crews run at once with kickoff_async (each in a worker thread) give two complete,
    separate traces."""

    async def main() -> None:
        await asyncio.gather(one_agent_crew().kickoff_async(), one_agent_crew().kickoff_async())

    asyncio.run(main())
    spans = exporter.semantic()
    traces: dict[int, list[SpanSnapshot]] = {}
    for s in spans:
        traces.setdefault(s.trace_id, []).append(s)
    assert len(traces) == 2, tree(spans)
    for trace_spans in traces.values():
        assert Counter(s.semantic_kind for s in trace_spans) == {"chain": 1, "agent": 1, "model": 2, "tool": 1}
        assert_direct_parentage(trace_spans)


def test_x1_current_agent_span_inside_concurrent_tools(instrumented: Any, exporter: SnapshotExporter) -> None:
    """X-1: otel_agents.current_agent_span(), called in the tool of each of two concurrent crews
    (kickoff_async, worker threads), returns that crew's own agent span."""
    import otel_agents

    seen: dict[str, int] = {}

    def crew_for(order_id: str) -> Crew:
        @tool("lookup_order")
        def lookup(order_id: str) -> str:
            """Look up an order by its id and return its status."""
            seen[order_id] = otel_agents.current_agent_span().span.get_span_context().span_id
            return f"Order {order_id}: shipped"

        return one_agent_crew(ReactLLM(tool_args={"order_id": order_id}), tools=[lookup])

    async def main() -> None:
        await asyncio.gather(crew_for("A1").kickoff_async(), crew_for("B2").kickoff_async())

    asyncio.run(main())
    spans = exporter.semantic()
    for order_id, agent_span_id in seen.items():
        (tool_span,) = [s for s in of_kind(spans, "tool") if order_id in s.attributes["gen_ai.tool.call.arguments"]]
        assert tool_span.parent_id == agent_span_id
    assert len(seen) == 2


def test_cr3_async_execution_task(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-3: a Task(async_execution=True) runs in its own thread; it and the task that depends on it
    stay in the crew's trace, each agent span directly under the crew."""
    first_agent, second_agent = clerk(), clerk()
    first = order_task(first_agent, async_execution=True)
    second = order_task(second_agent, name="summary", description="Summarise the order status.", context=[first])
    Crew(agents=[first_agent, second_agent], tasks=[first, second]).kickoff()
    spans = one_trace(exporter)
    crew = of_kind(spans, "chain")[0]
    agents = of_kind(spans, "agent")
    assert sorted(a.attributes["otel_agents.task.name"] for a in agents) == ["order_status", "summary"]
    assert all(a.parent_id == crew.span_id for a in agents)
    assert_direct_parentage(spans)


def test_cr3_streamed_crew_is_one_trace(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-3: Crew(stream=True) runs the kickoff on a thread under the chunk iterator: one crew span,
    one trace, the usual tree."""
    agent = clerk()
    streaming = Crew(agents=[agent], tasks=[order_task(agent)], stream=True).kickoff()
    chunks = list(streaming)
    assert chunks and streaming.result.raw == "Order A100: shipped"
    spans = one_trace(exporter)
    assert Counter(s.semantic_kind for s in spans) == {"chain": 1, "agent": 1, "model": 2, "tool": 1}
    assert_direct_parentage(spans)


# --- CR-4: crews, tasks, agents, skills -------------------------------------------------------------
def test_cr4_crew_and_agent_spans(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-4: a crew is an invoke_workflow chain; a task's execution is an agent span named by the role,
    with task name and id as attributes and the task text only as (content) input."""
    crew = one_agent_crew()
    crew.name = "Support crew"
    crew.kickoff()
    spans = one_trace(exporter)
    (chain,) = of_kind(spans, "chain")
    assert chain.name == "invoke_workflow Support crew"
    assert chain.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert chain.attributes["output.value"] == "Order A100: shipped"
    (agent,) = of_kind(spans, "agent")
    task = crew.tasks[0]
    assert agent.name == "invoke_agent Order Clerk"
    assert agent.attributes["gen_ai.agent.name"] == "Order Clerk"
    assert agent.attributes["otel_agents.task.name"] == "order_status"
    assert agent.attributes["otel_agents.task.id"] == str(task.id)
    assert agent.attributes["gen_ai.agent.description"] == "Answer order questions"
    assert agent.json_attr("input.value") == {"description": task.description,
                                              "expected_output": task.expected_output}
    assert all(task.description not in s.name for s in spans)


def test_cr4_replay_is_a_crew_run(instrumented: Any, exporter: SnapshotExporter) -> None:
    """``Crew.replay(task_id)`` runs the crew again from that task on (CrewAI runs the tasks without a kickoff):
    one trace under an ``invoke_workflow`` span, each replayed task's agent span under it, the crew's output that
    of the last task."""
    agent = clerk()
    crew = Crew(agents=[agent], tasks=[order_task(agent), order_task(agent, name="again")])
    crew.kickoff()
    exporter.clear()
    result = crew.replay(str(crew.tasks[0].id))
    spans = one_trace(exporter)
    (chain,) = of_kind(spans, "chain")
    assert chain.name == "invoke_workflow crew" and parent_of(chain, spans) is None
    assert chain.attributes["output.value"] == result.raw == "Order A100: shipped"
    agents = of_kind(spans, "agent")
    assert [parent_of(a, spans) for a in agents] == [chain, chain], tree(spans)
    assert sorted(a.attributes["otel_agents.task.name"] for a in agents) == ["again", "order_status"]
    assert_direct_parentage(spans)


@pytest.mark.parametrize("resume", ["resume", "resume_async"])
def test_cr3_flow_paused_for_feedback_then_resumed(resume: str, instrumented: Any, exporter: SnapshotExporter,
                                                   tmp_path: Path) -> None:
    """A flow whose feedback provider raises ``HumanFeedbackPending`` (CrewAI's "not an error, a control flow
    signal") is paused: its method span and the flow span are marked paused, not ERROR, the flow without output.
    ``Flow.resume``/``resume_async`` is a run of the flow: the methods it runs under a flow span, in one trace."""
    from crewai.flow.async_feedback.types import HumanFeedbackPending
    from crewai.flow.human_feedback import human_feedback
    from crewai.flow.persistence import SQLiteFlowPersistence

    class Later:
        def request_feedback(self, context: Any, flow: Any) -> str:
            raise HumanFeedbackPending(context=context)

    class Review(Flow):
        @start()
        @human_feedback(message="Publish?", provider=Later())
        def draft(self) -> str:
            return "the draft"

        @listen(draft)
        def publish(self, result: Any) -> str:
            return f"published: {result.feedback}"

    db = SQLiteFlowPersistence(str(tmp_path / "flows.db"))
    pending = Review(persistence=db).kickoff()
    assert isinstance(pending, HumanFeedbackPending)
    spans = one_trace(exporter)
    by_name = {s.name: s for s in spans}
    for name in ("Review", "draft"):
        assert by_name[name].attributes.get("otel_agents.run.paused") is True, tree(spans)
        assert by_name[name].status == StatusCode.UNSET and "error.type" not in by_name[name].attributes
    assert "output.value" not in by_name["Review"].attributes
    exporter.clear()
    flow = Review.from_pending(pending.context.flow_id, db)
    result = flow.resume("ok") if resume == "resume" else asyncio.run(flow.resume_async("ok"))
    assert result == "published: ok"
    spans = one_trace(exporter)
    [run] = [s for s in spans if parent_of(s, spans) is None]
    assert run.name == "Review" and run.attributes["output.value"] == "published: ok"
    assert [parent_of(s, spans) for s in spans if s.name == "publish"] == [run], tree(spans)


def test_cr4_delegation_nests_the_coworker(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-4: delegation is visible as nesting: the coworker's agent span sits under the delegating
    agent's 'Delegate work to coworker' tool span, with otel_agents.agent.parent set."""
    manager_llm = ReactLLM(model="scripted-manager", tool_name="Delegate work to coworker",
                           tool_args={"task": "Look up order A100", "context": "A customer asks.",
                                      "coworker": "Order Clerk"})
    manager = Agent(role="Support Lead", goal="Resolve tickets", backstory="Delegates.", llm=manager_llm,
                    allow_delegation=True, max_retry_limit=0)
    worker = clerk()
    task = Task(name="ticket", description="A customer asks about order A100.", expected_output="An answer",
                agent=manager)
    Crew(agents=[manager, worker], tasks=[task], process=Process.sequential).kickoff()
    spans = one_trace(exporter)
    (lead,) = [s for s in spans if s.name == "invoke_agent Support Lead"]
    (delegate,) = [s for s in spans if s.name == "execute_tool Delegate work to coworker"]
    (coworker,) = [s for s in spans if s.name == "invoke_agent Order Clerk"]
    assert delegate.parent_id == lead.span_id
    assert coworker.parent_id == delegate.span_id
    assert coworker.attributes["otel_agents.agent.parent"] == "Support Lead"
    assert [t.name for t in of_kind(spans, "tool") if t.parent_id == coworker.span_id] == ["execute_tool lookup_order"]
    assert_direct_parentage(spans)


def test_cr4_standalone_agent_kickoff(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-4: Agent.kickoff outside any crew is one agent span with its model and tool spans."""
    assert clerk().kickoff("What is the status of order A100?").raw == "Order A100: shipped"
    spans = one_trace(exporter)
    (agent,) = of_kind(spans, "agent")
    assert agent.parent_id is None and agent.name == "invoke_agent Order Clerk"
    assert agent.attributes["input.value"] == "What is the status of order A100?"
    assert "otel_agents.task.name" not in agent.attributes
    assert Counter(s.semantic_kind for s in spans) == {"agent": 1, "model": 2, "tool": 1}
    assert_direct_parentage(spans)


SKILL_MD = "---\nname: order-policy\ndescription: Policy for answering order questions.\n---\n" \
           "Always quote the order id.\n"


def test_cr4_skill_loaded_through_load_skill_is_a_skill_span(instrumented: Any, exporter: SnapshotExporter,
                                                             tmp_path: Path) -> None:
    """CR-4: when the model calls CrewAI's skill loader (load_skill), that call is one skill span
    (not a tool span) naming the skill, a direct child of the agent span."""
    (tmp_path / "order-policy").mkdir()
    (tmp_path / "order-policy" / "SKILL.md").write_text(SKILL_MD)
    llm = ReactLLM(tool_name="load_skill", tool_args={"skill_name": "order-policy"})
    agent = clerk(llm, skills=[tmp_path])
    Crew(agents=[agent], tasks=[order_task(agent)]).kickoff()
    spans = one_trace(exporter)
    (skill,) = of_kind(spans, "skill")
    assert skill.name == "execute_tool load_skill"
    assert skill.attributes["otel_agents.skill.name"] == "order-policy"
    assert "Always quote the order id." in skill.attributes["gen_ai.tool.call.result"]
    assert parent_of(skill, spans).semantic_kind == "agent"
    assert of_kind(spans, "tool") == []


def test_cr4_skill_injected_into_the_prompt(instrumented: Any, exporter: SnapshotExporter) -> None:
    """CR-4: a skill whose instructions CrewAI puts in the task prompt (inline SKILL.md) is recorded as
    a 'skill {name}' span under the agent span."""
    agent = clerk(skills=[SKILL_MD])
    Crew(agents=[agent], tasks=[order_task(agent)]).kickoff()
    spans = one_trace(exporter)
    (skill,) = of_kind(spans, "skill")
    assert skill.name == "skill order-policy"
    assert skill.attributes["otel_agents.skill.name"] == "order-policy"
    assert parent_of(skill, spans).semantic_kind == "agent"


# --- content switch (X-7, CrewAI-specific content) -----------------------------------------------------
def test_x7_goal_and_expected_output_are_content(provider: Any, exporter: SnapshotExporter,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """X-7: agent goals and expected outputs are content too: absent everywhere with NO_CONTENT,
    present on the agent span with content on."""
    marker = "GOAL-MARKER-19"

    def run() -> None:
        agent = clerk(goal=f"Answer order questions {marker}")
        Crew(agents=[agent], tasks=[order_task(agent, expected_output=f"The status {marker}")]).kickoff()

    inst = CrewAIInstrumentor()
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    inst.instrument(tracer_provider=provider)
    try:
        run()
        assert exporter.semantic()
        assert not any(marker in str(v) for s in exporter.spans for v in (s.name, *s.attributes.values()))
        exporter.clear()
        monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "SPAN_ONLY")
        run()
    finally:
        inst.uninstrument()
    (agent,) = of_kind(exporter.semantic(), "agent")
    assert marker in agent.attributes["gen_ai.agent.description"]
    assert marker in agent.json_attr("input.value")["expected_output"]


# --- uninstrument ---------------------------------------------------------------------------------
def test_uninstrument_restores_crewai_exactly(provider: Any, exporter: SnapshotExporter) -> None:
    """X-4 for CrewAI: uninstrument() puts back CrewAI's own functions, BaseLLM.__init_subclass__
    included, also on an LLM class created while instrumented."""
    originals = {(Crew, "kickoff"): vars(Crew)["kickoff"], (ReactLLM, "call"): vars(ReactLLM)["call"],
                 (BaseLLM, "__init_subclass__"): vars(BaseLLM)["__init_subclass__"]}
    inst = CrewAIInstrumentor()
    inst.instrument(tracer_provider=provider)

    class BornInstrumented(ReactLLM):
        def call(self, *args: Any, **kwargs: Any) -> Any:
            return super().call(*args, **kwargs)

    assert vars(Crew)["kickoff"] is not originals[(Crew, "kickoff")]
    crewai_retry_wrapper = vars(BornInstrumented)["call"].__wrapped__
    inst.uninstrument()
    for (owner, name), original in originals.items():
        assert vars(owner)[name] is original, name
    assert vars(BornInstrumented)["call"] is crewai_retry_wrapper
    exporter.clear()
    one_agent_crew(BornInstrumented()).kickoff()
    assert exporter.semantic() == []


# --- CR-5: CrewAI's own telemetry and tracing -------------------------------------------------------------
_CR5_APP = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, sys.argv[1])
    from tests.crewai.netguard import block_network
    refused = block_network()

    from opentelemetry import trace
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    trace.set_tracer_provider(provider)          # the application's own global provider

    import crewai.execution
    sessions = []
    activate = getattr(crewai.execution, "_activate_tracing", None)
    if activate is not None:                     # note whether CrewAI's tracing session really ran
        def spy(tracing, *a, **k):
            sessions.append(type(getattr(tracing, "session", None)).__name__)
            return activate(tracing, *a, **k)
        crewai.execution._activate_tracing = spy

    from otel_agents.instrumentors.crewai import CrewAIInstrumentor
    from tests.crewai.fakes import one_agent_crew
    CrewAIInstrumentor().instrument()
    one_agent_crew().kickoff()
    spans = exporter.get_finished_spans()
    print(json.dumps({
        "ours": [s.name for s in spans if s.instrumentation_scope.name.startswith("otel_agents")],
        "others": [s.name for s in spans if not s.instrumentation_scope.name.startswith("otel_agents")],
        "sessions": sessions,
        "refused": refused,
    }), flush=True)
    # CrewAI's telemetry would now retry its export against the refused network for many seconds.
    import os
    os._exit(0)
""")


def test_cr5_crewai_tracing_at_defaults_does_not_double_our_spans(tmp_path: Path) -> None:
    """CR-5: with CrewAI's telemetry and tracing settings at their defaults (a fresh HOME, nothing set),
    our spans appear exactly once in the application's provider, nothing of CrewAI's lands there, and
    every attempt to reach the network is refused (the subprocess can only reach loopback)."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("CREWAI_DISABLE_TELEMETRY", "CREWAI_DISABLE_TRACKING", "CREWAI_TRACING_ENABLED",
                        "OTEL_SDK_DISABLED", "CREWAI_TESTING")}
    env["HOME"] = str(tmp_path)
    proc = subprocess.run([sys.executable, "-c", _CR5_APP, str(REPO)], env=env, cwd=tmp_path,
                          capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert Counter(report["ours"]) == {"invoke_workflow crew": 1, "invoke_agent Order Clerk": 1,
                                       "chat scripted-react": 2, "execute_tool lookup_order": 1}
    assert report["others"] == []
    assert report["sessions"] == ["TraceSession"], "CrewAI's own tracing did not run at its defaults"


def test_a_guardrail_rejecting_the_output_is_a_failed_step(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A task guardrail rejects the first output (CrewAI has the agent execute the task again): that check is a
    ``guardrail {function}`` chain span, ERROR ``guardrail_rejected``; the check that accepts is not an error,
    and the task's output is the accepted one."""
    answers = iter(["shipped", "Order A100 has shipped."])

    class Answering(ReplyLLM):
        def call(self, messages: Any, *args: Any, **kwargs: Any) -> Any:
            return f"Final Answer: {next(answers)}"

    def whole_sentence(output):  # (CrewAI checks an annotated return against typing.Tuple[bool, Any])
        return (False, "Answer in a sentence.") if " " not in output.raw else (True, output.raw)

    agent = clerk(Answering(), tools=[])
    crew = Crew(agents=[agent], tasks=[order_task(agent, guardrail=whole_sentence, guardrail_max_retries=1)])
    assert crew.kickoff().raw == "Order A100 has shipped."
    checks = sorted((s for s in exporter.spans if s.name == "guardrail whole_sentence"), key=lambda s: s.start_time)
    assert [s.status for s in checks] == [StatusCode.ERROR, StatusCode.UNSET]
    assert checks[0].attributes["error.type"] == "guardrail_rejected" and checks[0].semantic_kind == "chain"
    [agent_span] = [s for s in exporter.spans if s.semantic_kind == "agent"]
    assert agent_span.attributes["output.value"] == "Order A100 has shipped."


class _SlowReact(ReactLLM):
    """The ReAct model, its answer's first chunk 50 ms after the request."""

    def reply(self, messages: Any) -> str:
        import time

        time.sleep(0.05)
        return super().reply(messages)


@pytest.mark.parametrize("stream", [False, True])
def test_a_streamed_llm_call_is_timed_from_its_first_chunk(instrumented: Any, exporter: SnapshotExporter,
                                                          stream: bool) -> None:
    """A provider class streaming its answer (it announces each chunk, ``_emit_stream_chunk_event``): each model
    span has gen_ai.response.time_to_first_chunk (its first chunk came 50 ms in) and gen_ai.request.stream true;
    the same crew not streamed has neither."""
    agent = clerk(_SlowReact(stream=stream))
    Crew(agents=[agent], tasks=[order_task(agent)]).kickoff()
    models = of_kind(one_trace(exporter), "model")
    assert len(models) == 2
    for model in models:
        if not stream:
            assert "gen_ai.response.time_to_first_chunk" not in model.attributes
            assert model.attributes.get("gen_ai.request.stream") is not True
            continue
        ttfc = model.attributes["gen_ai.response.time_to_first_chunk"]
        assert 0.05 <= ttfc <= (model.end_time - model.start_time) / 1e9
        assert model.attributes["gen_ai.request.stream"] is True
