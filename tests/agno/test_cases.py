"""Agno's field cases AG-1 … AG-4 (``../shared/cases/adk-smolagents-agno-autogen.md``) and its own cases:
tool call, tool error, streaming, parallel tool calls, delegation, a failed run, reasoning, content off,
session ids, uninstrument, folding."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable

import pytest
from agno.agent import Agent
from agno.db.in_memory import InMemoryDb
from agno.tools.function import Function
from opentelemetry import trace

from otel_agents.exporters.ecp import fold
from otel_agents.instrumentors.agno import AgnoInstrumentor
from tests.exporters.conftest import check
from tests.genai_schema import validate_genai_json
from tests.spans import SnapshotExporter, ancestors, assert_system_prompt, parent_of, tree

from .agents import desk_team, lookup_order, support_agent
from .fakes import Reply, ScriptedModel, tool_results, tool_then_answer


def kinds(spans: list) -> list[str]:
    return [s.semantic_kind for s in spans]


# -- AG-1 -------------------------------------------------------------------------------------------------
def test_ag1_team_members_run_under_the_delegation(instrumented: Any, exporter: SnapshotExporter) -> None:
    """AG-1: the team is `invoke_workflow Desk`; the member's agent span is a child of the delegation tool span;
    a second run in the same session is a new root trace."""
    team = desk_team(db=InMemoryDb())
    first = team.run("What is the weather?", session_id="desk-1", user_id="u1")
    assert first.content == "Desk says: sunny in Paris" or "sunny in Paris" in str(first.content)
    second = team.run("And again?", session_id="desk-1", user_id="u1")
    assert second.status.value != "ERROR"
    spans = exporter.semantic()
    roots = [s for s in spans if s.parent_id is None]
    assert [r.name for r in roots] == ["invoke_workflow Desk", "invoke_workflow Desk"], tree(spans)
    assert roots[0].trace_id != roots[1].trace_id
    for root in roots:
        run = [s for s in spans if s.trace_id == root.trace_id]
        assert root.attributes["gen_ai.operation.name"] == "invoke_workflow"
        # OTel GenAI v1.41 invoke_workflow span: named by gen_ai.workflow.name; a team is not an agent
        assert root.semantic_kind == "chain" and root.attributes["gen_ai.workflow.name"] == "Desk"
        assert not any(k.startswith("gen_ai.agent.") for k in root.attributes), root.attributes
        assert root.attributes["session.id"] == "desk-1" and root.attributes["user.id"] == "u1"
        leader_models = [s for s in run if s.semantic_kind == "model" and s.parent_id == root.span_id]
        assert len(leader_models) == 2 and all(s.attributes["gen_ai.request.model"] == "leader-1" for s in leader_models)
        [delegation] = [s for s in run if s.name == "execute_tool delegate_task_to_member"]
        assert delegation.parent_id == root.span_id
        assert '"weather-agent"' in delegation.attributes["gen_ai.tool.call.arguments"]
        [member] = [s for s in run if s.semantic_kind == "agent"]
        assert member.parent_id == delegation.span_id, tree(run)
        assert member.name == "invoke_agent Weather Agent"
        assert member.attributes["otel_agents.agent.parent"] == "Desk"
        assert member.attributes["session.id"] == "desk-1"
        under_member = [s for s in run if s.parent_id == member.span_id]
        assert sorted(kinds(under_member)) == ["model", "model", "tool"]
        assert all(s.attributes["gen_ai.request.model"] == "member-1" for s in under_member if s.semantic_kind == "model")
        assert root.name == "invoke_workflow Desk"  # not overwritten by the member


def test_ag1_async_team_and_streamed_team(instrumented: Any, exporter: SnapshotExporter) -> None:
    """AG-1 with `arun` and with `run(stream=True)`: the member still nests under its delegation."""
    asyncio.run(desk_team().arun("What is the weather?"))
    list(desk_team().run("What is the weather?", stream=True))
    spans = exporter.semantic()
    members = [s for s in spans if s.semantic_kind == "agent"]
    assert len(members) == 2, tree(spans)
    for member in members:
        assert parent_of(member, spans).name == "execute_tool delegate_task_to_member", tree(spans)
        assert parent_of(parent_of(member, spans), spans).name == "invoke_workflow Desk"


# -- AG-2 -------------------------------------------------------------------------------------------------
def test_ag2_abandoned_stream_hands_the_context_back(instrumented: Any, exporter: SnapshotExporter,
                                                     app_tracer: Any) -> None:
    """AG-2: a stream consumed fully ends its spans at exhaustion; one left after two events ends them at
    the break, marked abandoned with the output so far; the application's next span is a root."""
    agent = support_agent(script=lambda m: Reply(text="Your order A100 has shipped with UPS"))
    events = list(agent.run("Where is A100?", stream=True))
    assert events
    done = exporter.semantic()
    assert sorted(kinds(done)) == ["agent", "model"]
    assert all("otel_agents.stream.abandoned" not in s.attributes for s in done)
    assert next(s for s in done if s.semantic_kind == "agent").attributes["output.value"] == \
        "Your order A100 has shipped with UPS"
    with app_tracer.start_as_current_span("app-1"):
        pass
    exporter.clear()

    for i, _ in enumerate(agent.run("Where is A100?", stream=True)):
        if i == 1:
            break
    spans = exporter.semantic()
    assert sorted(kinds(spans)) == ["agent", "model"], "spans did not end at the break"
    for s in spans:
        assert s.attributes.get("otel_agents.stream.abandoned") is True, s.name
    agent_span = next(s for s in spans if s.semantic_kind == "agent")
    assert agent_span.attributes["output.value"].startswith("Your")
    assert not trace.get_current_span().get_span_context().is_valid
    with app_tracer.start_as_current_span("app-2"):
        pass
    app = next(s for s in exporter.spans if s.name == "app-2")
    assert app.parent_id is None


def test_ag2_async_stream_abandoned(instrumented: Any, exporter: SnapshotExporter) -> None:
    """AG-2 for `arun(stream=True)`: breaking out and closing the stream ends both spans, abandoned."""
    agent = support_agent(script=lambda m: Reply(text="one two three four five"))

    async def main() -> None:
        stream = agent.arun("hi", stream=True)
        async for i, _ in _aenumerate(stream):
            if i == 1:
                break
        await stream.aclose()

    asyncio.run(main())
    spans = exporter.semantic()
    assert sorted(kinds(spans)) == ["agent", "model"]
    assert all(s.attributes.get("otel_agents.stream.abandoned") is True for s in spans)


@pytest.mark.parametrize("what", ["agent.run", "agent.arun", "team.run", "team.arun"])
def test_a_stream_left_on_its_run_completed_is_not_abandoned(what: str, instrumented: Any,
                                                             exporter: SnapshotExporter) -> None:
    """A caller that leaves ``run(stream=True, stream_events=True)`` on the run's ``RunCompleted`` event (Agno yields
    it once the run is stored) got the whole run: every span ends finished, with the answer, none abandoned."""
    runner = desk_team() if what.startswith("team") else support_agent()

    answers: list[Any] = []

    def last(event: Any) -> bool:
        if getattr(event, "event", None) != ("TeamRunCompleted" if what.startswith("team") else "RunCompleted"):
            return False
        answers.append(event.content)
        return True

    if what.endswith("arun"):
        async def main() -> None:
            stream = runner.arun("Where is A100?", stream=True, stream_events=True)
            async for event in stream:
                if last(event):
                    break
            await stream.aclose()

        asyncio.run(main())
    else:
        for event in runner.run("Where is A100?", stream=True, stream_events=True):
            if last(event):
                break
    spans = exporter.semantic()
    assert spans and not [s.name for s in spans if "otel_agents.stream.abandoned" in s.attributes], tree(spans)
    root = next(s for s in spans if parent_of(s, spans) is None)
    assert answers and root.attributes["output.value"] == answers[0], tree(spans)


async def _aenumerate(stream: Any) -> Any:
    i = 0
    async for item in stream:
        yield i, item
        i += 1


# -- AG-3 -------------------------------------------------------------------------------------------------
class DelegatingStreamModel(ScriptedModel):
    """AG-3 variant: ``ainvoke_stream`` delegates to this model's own ``invoke_stream``."""

    async def ainvoke_stream(self, messages: list, **kwargs: Any) -> Any:
        for chunk in self.invoke_stream(messages, **kwargs):
            yield chunk


@pytest.mark.parametrize("mode", ["run", "arun", "stream", "astream"])
def test_ag3_one_model_span_per_provider_request(instrumented: Any, exporter: SnapshotExporter, mode: str) -> None:
    """AG-3: a model class defined outside agno.models; one response loop with two requests gives two model
    spans with their own usage, and the tool span between them is a child of the agent span."""
    model = DelegatingStreamModel(script=tool_then_answer("lookup_order", {"order_id": "A100"}))
    agent = Agent(name="Support", model=model, tools=[lookup_order], telemetry=False)
    if mode == "run":
        agent.run("Where is A100?")
    elif mode == "arun":
        asyncio.run(agent.arun("Where is A100?"))
    elif mode == "stream":
        list(agent.run("Where is A100?", stream=True))
    else:
        async def main() -> None:
            async for _ in agent.arun("Where is A100?", stream=True):
                pass
        asyncio.run(main())
    assert model.requests == 2
    spans = sorted(exporter.semantic(), key=lambda s: s.start_time)
    assert kinds(spans) == ["agent", "model", "tool", "model"], tree(spans)
    agent_span, first, tool, second = spans
    for s in (first, tool, second):
        assert s.parent_id == agent_span.span_id
    assert first.end_time <= tool.start_time and tool.end_time <= second.start_time
    assert first.attributes["gen_ai.request.model"] == "scripted-1"
    assert first.attributes["gen_ai.provider.name"] == "scripted"
    first_in, second_in = first.attributes["gen_ai.usage.input_tokens"], second.attributes["gen_ai.usage.input_tokens"]
    assert 0 < first_in < second_in  # each request's own usage: the second prompt also holds the tool result
    assert first.attributes["gen_ai.usage.output_tokens"] == 2  # the fake counts the arguments' words
    assert second.attributes["gen_ai.usage.output_tokens"] == 4
    assert first.json_attr("gen_ai.output.messages")[0]["parts"][0]["type"] == "tool_call"
    assert second.json_attr("gen_ai.output.messages")[0]["parts"] == [
        {"type": "text", "content": "Found: order A100 shipped"}]
    for s in (first, second):
        validate_genai_json(s.attributes)


# -- AG-4 -------------------------------------------------------------------------------------------------
def test_ag4a_no_vendor_request_with_telemetry_defaults(instrument: Any, exporter: SnapshotExporter,
                                                         monkeypatch: pytest.MonkeyPatch, no_outbound: list) -> None:
    """AG-4 (a): with AGNO_TELEMETRY unset and telemetry not passed, Agno posts one telemetry event per run
    (its own sender, stubbed here; outbound sockets fail anyway): instrumented, the same number and no
    connection of ours; with telemetry off, none — instrumenting never turns it on."""
    import agno.api.agent

    posted: list = []
    monkeypatch.setattr(agno.api.agent, "create_agent_run", lambda run: posted.append(run))
    monkeypatch.delenv("AGNO_TELEMETRY", raising=False)

    def run_with_defaults() -> None:
        model = ScriptedModel(script=tool_then_answer("lookup_order", {"order_id": "A1"}))
        assert Agent(name="Support", model=model, tools=[lookup_order]).run("Where is A1?").content == \
            "Found: order A1 shipped"

    run_with_defaults()
    uninstrumented = len(posted)
    assert uninstrumented >= 1, "Agno's telemetry did not run: the case tests nothing"
    posted.clear()
    instrument()
    run_with_defaults()
    assert len(posted) == uninstrumented  # Agno's own events only: we add none
    assert exporter.semantic(), "no spans"
    posted.clear()
    monkeypatch.setenv("AGNO_TELEMETRY", "false")
    support_agent().run("Where is A1?")  # telemetry=False too
    model = ScriptedModel(script=tool_then_answer("lookup_order", {"order_id": "A1"}))
    Agent(name="Support", model=model, tools=[lookup_order]).run("Where is A1?")  # only the environment says no
    assert posted == []
    assert no_outbound == []


# -- own cases ------------------------------------------------------------------------------------------------
def test_tool_error_is_an_errored_tool_span(instrumented: Any, exporter: SnapshotExporter) -> None:
    def broken(order_id: str) -> str:
        """Always fails."""
        raise RuntimeError("database down")

    agent = support_agent(script=tool_then_answer("broken", {"order_id": "A1"}), tools=[broken])
    result = agent.run("Where is A1?")
    assert "database down" in result.content  # Agno hands the error to the model; the run goes on
    tool = next(s for s in exporter.semantic() if s.semantic_kind == "tool")
    assert tool.status.name == "ERROR" and "database down" in tool.status_description
    # Agno keeps the message, not the exception: an in-band failure (as an MCP tool's), no class of ours named
    assert tool.attributes["error.type"] == "tool_error" and not any(name == "exception" for name, _ in tool.events)
    agent_span = next(s for s in exporter.semantic() if s.semantic_kind == "agent")
    assert agent_span.status.name == "UNSET"


def test_failed_run_marks_model_and_agent_spans(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Agno returns status=error instead of raising: the model span and the agent span end with ERROR,
    with the exception the model raised; Agno's own result is unchanged."""
    agent = support_agent(script=lambda m: Reply(error=ValueError("provider down")))
    result = agent.run("hi")
    assert result.status.value.lower() == "error" and result.content == "provider down"
    model = next(s for s in exporter.semantic() if s.semantic_kind == "model")
    agent_span = next(s for s in exporter.semantic() if s.semantic_kind == "agent")
    for s in (model, agent_span):
        assert s.status.name == "ERROR" and s.attributes["error.type"] == "ValueError", s.name
        assert [name for name, _ in s.events] == ["exception"]


def test_parallel_tool_calls(instrumented: Any, exporter: SnapshotExporter) -> None:
    def script(messages: list) -> Reply:
        if not tool_results(messages):
            return Reply(tool_calls=[("lookup_order", {"order_id": "A1"}), ("lookup_order", {"order_id": "B2"})])
        return Reply(text="both found")

    asyncio.run(support_agent(script=script).arun("A1 and B2?"))
    spans = exporter.semantic()
    tools = [s for s in spans if s.semantic_kind == "tool"]
    agent_span = next(s for s in spans if s.semantic_kind == "agent")
    assert len(tools) == 2 and all(t.parent_id == agent_span.span_id for t in tools)
    assert {t.attributes["gen_ai.tool.call.id"] for t in tools} == {"call_1_0", "call_1_1"}
    first_model = min((s for s in spans if s.semantic_kind == "model"), key=lambda s: s.start_time)
    calls = first_model.json_attr("gen_ai.output.messages")[0]["parts"]
    assert [p["type"] for p in calls] == ["tool_call", "tool_call"]


def test_reasoning_is_a_reasoning_part_never_the_answer(instrumented: Any, exporter: SnapshotExporter) -> None:
    agent = support_agent(script=lambda m: Reply(text="It shipped.", reasoning="The user wants A100; it shipped."))
    assert agent.run("Where is A100?").content == "It shipped."
    model = next(s for s in exporter.semantic() if s.semantic_kind == "model")
    parts = model.json_attr("gen_ai.output.messages")[0]["parts"]
    assert parts == [{"type": "reasoning", "content": "The user wants A100; it shipped."},
                     {"type": "text", "content": "It shipped."}]
    agent_span = next(s for s in exporter.semantic() if s.semantic_kind == "agent")
    assert agent_span.attributes["output.value"] == "It shipped."


def test_m4_instructions_are_the_system_prompt(instrumented: Any, exporter: SnapshotExporter) -> None:
    """M-4: an Agent's instructions are every model span's gen_ai.system_instructions and its first OpenInference
    input message, role system; not a gen_ai.input.messages entry."""
    support_agent(instructions="You are support. Be terse.").run("Where is A100?")
    assert len(exporter.semantic("model")) == 2
    assert_system_prompt(exporter.semantic("model"), "You are support. Be terse.")


def test_session_and_user_ids_with_content_off(instrument: Any, exporter: SnapshotExporter,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT", "NO_CONTENT")
    instrument()
    support_agent().run("Where is A100?", session_id="sess-1", user_id="u1")
    spans = exporter.semantic()
    assert len(spans) == 4
    for s in spans:
        assert (s.attributes["session.id"], s.attributes["user.id"], s.attributes["gen_ai.conversation.id"]) == \
            ("sess-1", "u1", "sess-1"), s.name
        assert not any(k in s.attributes for k in ("input.value", "output.value", "gen_ai.input.messages",
                                                   "gen_ai.output.messages", "gen_ai.tool.call.arguments"))
    model = next(s for s in spans if s.semantic_kind == "model")
    assert model.attributes["gen_ai.usage.input_tokens"] > 0  # usage is not content


def test_uninstrument_restores_agno(provider: Any, exporter: SnapshotExporter) -> None:
    from agno.agent import Agent as A
    from agno.models.base import Model
    from agno.tools.function import FunctionCall

    originals = (A.__dict__["run"], Model.__dict__["_process_model_response"], FunctionCall.__dict__["execute"])
    inst = AgnoInstrumentor()
    inst.instrument(tracer_provider=provider)
    assert A.__dict__["run"] is not originals[0]
    inst.uninstrument()
    assert (A.__dict__["run"], Model.__dict__["_process_model_response"], FunctionCall.__dict__["execute"]) == originals
    support_agent().run("Where is A100?")
    assert exporter.semantic() == []


def test_agent_id_is_the_agents_stable_id(instrumented: Any, exporter: SnapshotExporter) -> None:
    """gen_ai.agent.id is the same on every run of an agent: the id given to it, else the one Agno derives from its
    name (before, a first run had none: Agno assigns it as the run starts); a nameless agent, whose id Agno makes up
    at random, has none. The members' ids are those desk_team gives them."""
    named = support_agent()
    named.run("Where is A100?")
    named.run("Where is A100?")
    given = support_agent(id="support-v2")
    given.run("Where is A100?")
    nameless = Agent(model=ScriptedModel(script=tool_then_answer("lookup_order", {"order_id": "A100"})),
                     tools=[lookup_order], telemetry=False)
    nameless.run("Where is A100?")
    nameless.run("Where is A100?")
    desk_team().run("What is the weather?")
    agents = sorted((s for s in exporter.semantic() if s.semantic_kind == "agent"), key=lambda s: s.start_time)
    ids = [a.attributes.get("gen_ai.agent.id") for a in agents]
    assert ids == ["support", "support", "support-v2", None, None, "weather-agent"], ids
    assert nameless.id  # Agno made one up: it is not on the spans


def test_workflow_steps_are_chains_with_agents_inside(instrumented: Any, exporter: SnapshotExporter) -> None:
    from agno.workflow import Step, Workflow

    flow = Workflow(name="Orders", steps=[Step(name="lookup", agent=support_agent()),
                                          Step(name="summarise", team=desk_team())], telemetry=False)
    flow.run("Where is A100?", session_id="wf-1")
    spans = exporter.semantic()
    [root] = [s for s in spans if s.parent_id is None]
    assert root.name == "invoke_workflow Orders" and root.attributes["gen_ai.operation.name"] == "invoke_workflow"
    assert root.attributes["gen_ai.workflow.name"] == "Orders" and "gen_ai.agent.id" not in root.attributes
    steps = [s for s in spans if s.parent_id == root.span_id]
    assert [s.name for s in sorted(steps, key=lambda s: s.start_time)] == ["lookup", "summarise"], tree(spans)
    agent_span = next(s for s in spans if s.name == "invoke_agent Support")
    assert parent_of(agent_span, spans).name == "lookup"
    team = next(s for s in spans if s.name == "invoke_workflow Desk")
    assert parent_of(team, spans).name == "summarise"
    assert all(s.attributes.get("session.id") == "wf-1" for s in spans)


def test_run_folds_into_a_valid_envelope(instrumented: Any, provider: Any) -> None:
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    support_agent().run("Where is A100?")
    desk_team().run("What is the weather?")
    envelopes = check(fold(list(memory.get_finished_spans())))
    assert len(envelopes) == 2
    single = next(e for e in envelopes if e["public_output"] == "Found: order A100 shipped")
    assert [c["name"] for c in single["tool_calls"]] == ["lookup_order"]
    assert single["usage"]["input_tokens"] > 0
    team_env = next(e for e in envelopes if e is not single)
    names = {a["name"] for a in team_env["agents"]}
    assert "Weather Agent" in names


class _VectorDb:
    """The least of a vector db ``Knowledge`` needs: one document for any query."""

    def exists(self) -> bool:
        return True

    def create(self) -> None:
        pass

    def search(self, query: str, limit: int = 5, filters: Any = None, **kwargs: Any) -> list:
        from agno.knowledge.document import Document

        return [Document(content="Refunds within 30 days.", id="doc-1", name="policy")]

    async def async_search(self, query: str, limit: int = 5, filters: Any = None, **kwargs: Any) -> list:
        return self.search(query, limit, filters)

    def __getattr__(self, name: str) -> Any:
        raise AttributeError(name)


@pytest.mark.parametrize("run_async", [False, True])
def test_knowledge_search_is_a_retriever_span(instrumented: Any, exporter: SnapshotExporter, run_async: bool) -> None:
    from agno.knowledge.knowledge import Knowledge

    agent = Agent(name="Support", knowledge=Knowledge(name="faq", vector_db=_VectorDb()), telemetry=False,
                  model=ScriptedModel(script=tool_then_answer("search_knowledge_base", {"query": "refund policy"})))
    asyncio.run(agent.arun("Refund?")) if run_async else agent.run("Refund?")
    spans = exporter.semantic()
    [retriever] = [s for s in spans if s.semantic_kind == "retriever"]
    assert retriever.name == "retrieval faq"
    assert parent_of(retriever, spans).name == "execute_tool search_knowledge_base"
    assert retriever.attributes["gen_ai.retrieval.query.text"] == "refund policy"
    assert retriever.json_attr("gen_ai.retrieval.documents") == [{"id": "doc-1", "content": "Refunds within 30 days."}]


def test_structured_output_is_the_agent_output_as_json(instrumented: Any, exporter: SnapshotExporter) -> None:
    from pydantic import BaseModel

    class Status(BaseModel):
        order_id: str
        status: str

    agent = support_agent(script=lambda m: Reply(text='{"order_id": "A100", "status": "shipped"}'), tools=[],
                          output_schema=Status)
    result = agent.run("Where is A100?")
    assert isinstance(result.content, Status)
    agent_span = next(s for s in exporter.semantic() if s.semantic_kind == "agent")
    assert agent_span.json_attr("output.value") == {"order_id": "A100", "status": "shipped"}


@pytest.mark.parametrize("stream", [False, True])
def test_parallel_and_condition_steps_nest_their_agents(instrumented: Any, exporter: SnapshotExporter,
                                                        stream: bool) -> None:
    from agno.workflow import Condition, Parallel, Step, Workflow

    flow = Workflow(name="W", telemetry=False, steps=[
        Parallel(Step(name="a", agent=support_agent()), Step(name="b", agent=support_agent()), name="both"),
        Condition(name="cond", evaluator=lambda step_input: True, steps=[Step(name="c", agent=support_agent())])])
    if stream:
        list(flow.run("go", stream=True))
    else:
        flow.run("go")
    spans = exporter.semantic()
    assert len({s.trace_id for s in spans}) == 1
    by_name = {s.name: s for s in spans if s.semantic_kind == "chain"}
    assert parent_of(by_name["a"], spans).name == "both" and parent_of(by_name["b"], spans).name == "both"
    assert parent_of(by_name["c"], spans).name == "cond"
    agents = [s for s in spans if s.semantic_kind == "agent"]
    assert sorted(parent_of(a, spans).name for a in agents) == ["a", "b", "c"]


def test_tool_needing_confirmation_pauses_the_run(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A human-in-the-loop wait: the run stops before the tool runs; its agent span is marked paused, not failed."""
    from agno.tools import tool

    @tool(requires_confirmation=True)
    def refund(order_id: str) -> str:
        """Refund an order."""
        return "refunded"

    result = support_agent(script=tool_then_answer("refund", {"order_id": "A1"}), tools=[refund]).run("refund A1")
    assert result.is_paused
    spans = exporter.semantic()
    assert sorted(s.semantic_kind for s in spans) == ["agent", "model"]  # no tool span: the tool never ran
    agent_span = next(s for s in spans if s.semantic_kind == "agent")
    assert agent_span.attributes["otel_agents.run.paused"] is True and agent_span.status.name == "UNSET"


@pytest.mark.parametrize("how", ["continue_run", "continue_run(stream=True)", "acontinue_run"])
def test_a_paused_run_continued_is_a_run(how: str, instrumented: Any, exporter: SnapshotExporter) -> None:
    """A run paused for confirmation and resumed with ``continue_run``/``acontinue_run``: the rest of the run (the
    confirmed tool call, the model's answer) is one agent run of its own, its spans under its agent span in one
    trace, its output the answer; its input is not the paused run's output."""
    from agno.tools import tool

    @tool(requires_confirmation=True)
    def refund(order_id: str) -> str:
        """Refund an order."""
        return "refunded"

    agent = support_agent(script=tool_then_answer("refund", {"order_id": "A1"}), tools=[refund])
    paused = agent.run("refund A1")
    for requirement in paused.active_requirements:
        requirement.confirm()
    exporter.clear()
    if how == "acontinue_run":
        result = asyncio.run(agent.acontinue_run(run_response=paused))
    elif how == "continue_run":
        result = agent.continue_run(run_response=paused)
    else:
        result = [e for e in agent.continue_run(run_response=paused, stream=True, stream_events=True)
                  if getattr(e, "event", None) == "RunCompleted"][0]
    assert result.content == "Found: refunded"
    spans = exporter.semantic()
    assert len({s.trace_id for s in spans}) == 1, tree(spans)
    [run] = [s for s in spans if s.semantic_kind == "agent"]
    assert sorted((s.semantic_kind, parent_of(s, spans).name) for s in spans if s is not run) == [
        ("model", "invoke_agent Support"), ("tool", "invoke_agent Support")], tree(spans)
    assert run.attributes["output.value"] == "Found: refunded" and "input.value" not in run.attributes


@pytest.mark.parametrize("how", ["continue_run", "continue_run(stream=True)", "acontinue_run",
                                 "acontinue_run(stream=True)"])
def test_a_paused_workflow_continued_is_a_workflow_run(how: str, instrumented: Any,
                                                       exporter: SnapshotExporter) -> None:
    """A workflow paused before a step that needs confirmation and resumed with ``continue_run``/``acontinue_run``
    (an ``async def``: awaited, its stream when streaming): the remaining step runs under a workflow span of the
    resumed run, in one trace."""
    from agno.workflow import Step, Workflow
    from agno.workflow.types import HumanReview

    flow = Workflow(name="W", telemetry=False, db=InMemoryDb(), steps=[
        Step(name="first", agent=support_agent()),
        Step(name="second", agent=support_agent(), human_review=HumanReview(requires_confirmation=True))])
    paused = flow.run("go")
    assert paused.is_paused
    for requirement in paused.active_step_requirements:
        requirement.confirm()
    exporter.clear()

    async def resume() -> Any:
        if how == "acontinue_run":
            return await flow.acontinue_run(paused)
        stream = await flow.acontinue_run(paused, stream=True, stream_events=True)
        return [e async for e in stream][-1]

    if how.startswith("acontinue_run"):
        result = asyncio.run(resume())
    elif how == "continue_run":
        result = flow.continue_run(paused)
    else:
        result = list(flow.continue_run(paused, stream=True, stream_events=True))[-1]
    assert result.content == "Found: order A100 shipped"
    spans = exporter.semantic()
    assert len({s.trace_id for s in spans}) == 1, tree(spans)
    [run] = [s for s in spans if parent_of(s, spans) is None]
    assert run.name == "invoke_workflow W" and "input.value" not in run.attributes
    assert [s.name for s in spans if parent_of(s, spans) == run] == ["second"], tree(spans)
    assert run.attributes["output.value"] == "Found: order A100 shipped"


@pytest.mark.parametrize("what", ["agent", "team"])
def test_a_background_run_ends_when_it_does(what: str, instrumented: Any, exporter: SnapshotExporter) -> None:
    """``arun(background=True)`` returns the run pending and Agno runs it in a task of its own: the run's span ends
    when that run does, after its model and tool spans, with the answer as output (not at the call's return)."""
    from agno.run.background import await_background_runs

    runner = desk_team(db=InMemoryDb()) if what == "team" else support_agent(db=InMemoryDb())

    async def main() -> Any:
        pending = await runner.arun("Where is A100?", background=True)
        assert str(pending.status.value).lower() == "pending"
        await await_background_runs()
        return pending

    run = asyncio.run(main())
    assert str(run.status.value).lower() == "completed" and run.content
    spans = exporter.semantic()
    [root] = [s for s in spans if parent_of(s, spans) is None]
    assert len(spans) > 1 and all(s.end_time <= root.end_time for s in spans), tree(spans)
    assert root.attributes["output.value"] == run.content


# -- reasoning: Agno's reasoning agent (reasoning_model=) ------------------------------------------------------
THOUGHT = "A100 is an order id; look it up, then answer."


def _openai_reasoner(text: str) -> Any:
    """Agno's ``OpenAIChat`` as an o3-style reasoner (its answer text is the reasoning) over the real ``openai``
    client and a mock transport: whole or streamed chat completions."""
    import httpx
    import openai
    from agno.models.openai import OpenAIChat

    from tests.clients.fakes import Recorder, chat_completion, sse

    def body(request: dict) -> Any:
        if not request.get("stream"):
            return chat_completion(text)
        chunk = {"id": "chatcmpl-r", "object": "chat.completion.chunk", "created": 1, "model": "o3-mini",
                 "choices": [{"index": 0, "delta": {"role": "assistant", "content": text}, "finish_reason": "stop"}]}
        return sse([(None, chunk), (None, "[DONE]")])

    handler = httpx.MockTransport(Recorder(body))
    return OpenAIChat(id="o3-mini", api_key="test-key",
                      client=openai.OpenAI(api_key="test-key", http_client=httpx.Client(transport=handler)),
                      async_client=openai.AsyncOpenAI(api_key="test-key",
                                                      http_client=httpx.AsyncClient(transport=handler)))


def _reasoning_agent(flavour: str) -> Any:
    from .fakes import ScriptedReasoner

    if flavour == "answer_text":
        reasoner = _openai_reasoner(THOUGHT)
    else:  # a native reasoner: Agno keeps its reasoning_content, drops its draft answer
        reasoner = ScriptedReasoner(script=lambda m: Reply(text="Draft: it shipped.", reasoning=THOUGHT))
    main = ScriptedModel(id="main-1", script=lambda m: Reply(text="It shipped."))
    return Agent(name="Support", model=main, reasoning_model=reasoner, telemetry=False)


def _no_text_anywhere(span: Any, text: str) -> None:
    """``text`` is in no ``output.value`` as text and in no ``text`` part of the span's output messages."""
    assert span.attributes.get("output.value") != text, span.name
    for message in span.json_attr("gen_ai.output.messages") or []:
        assert all(p["type"] != "text" for p in message["parts"]), (span.name, message)


@pytest.mark.parametrize("mode", ["run", "arun", "stream", "astream"])
@pytest.mark.parametrize("flavour", ["answer_text", "reasoning_content"])
def test_reasoning_agent_output_is_reasoning_never_the_answer(instrumented: Any, exporter: SnapshotExporter,
                                                              mode: str, flavour: str) -> None:
    """Issue 21: with ``reasoning_model=``, Agno's reasoning agent runs first. What it produces — its answer
    text (OpenAI-style reasoners) or its native ``reasoning_content`` — is ``reasoning`` parts on its model and
    agent spans, never text or ``output.value``; the main model sees it as one ``reasoning`` part; the run's
    answer is only the main model's text."""
    agent = _reasoning_agent(flavour)
    prompt = "Where is A100?"
    if mode == "run":
        answer = agent.run(prompt).content
    elif mode == "arun":
        answer = asyncio.run(agent.arun(prompt)).content
    elif mode == "stream":
        answer = "".join(e.content for e in agent.run(prompt, stream=True)
                         if str(getattr(e, "event", "")) .endswith("RunContent") and isinstance(e.content, str))
    else:
        async def consume() -> str:
            return "".join([e.content async for e in agent.arun(prompt, stream=True)
                            if str(getattr(e, "event", "")).endswith("RunContent") and isinstance(e.content, str)])
        answer = asyncio.run(consume())
    assert answer == "It shipped."

    spans = exporter.semantic()
    agents = [s for s in spans if s.semantic_kind == "agent"]
    root = next(s for s in agents if s.parent_id is None)
    reasoner = next(s for s in agents if s.parent_id is not None)
    assert root.span_id in [a.span_id for a in ancestors(reasoner, exporter.spans)]
    assert root.attributes["output.value"] == "It shipped."

    # the reasoning agent: its output is an assistant message of reasoning parts, no text
    out = reasoner.json_attr("gen_ai.output.messages")
    assert [(m["role"], m["parts"]) for m in out] == [("assistant", [{"type": "reasoning", "content": THOUGHT}])], out
    _no_text_anywhere(reasoner, THOUGHT)

    models = sorted((s for s in spans if s.semantic_kind == "model"), key=lambda s: s.start_time)
    thinking, answering = models
    assert thinking.attributes["gen_ai.request.model"] in ("scripted-reasoner", "o3-mini")
    _no_text_anywhere(thinking, THOUGHT)
    parts = thinking.json_attr("gen_ai.output.messages")[0]["parts"]
    assert {"type": "reasoning", "content": THOUGHT} in parts and all(p["type"] == "reasoning" for p in parts)

    # the main model gets the thinking as one reasoning part (not also as "<thinking>…" text); its output is text
    sent = answering.json_attr("gen_ai.input.messages")
    given = [p for m in sent for p in m["parts"] if m["role"] == "assistant"]
    assert given == [{"type": "reasoning", "content": THOUGHT}], sent
    assert answering.attributes["output.value"] == "It shipped."
    for span in (reasoner, thinking, answering):
        validate_genai_json(span.attributes)


# -- issue #34 faults 2 and 3 ------------------------------------------------------------------------------
@pytest.mark.parametrize("mode", ["run", "arun"])
def test_fault2_streamed_team_output_is_the_teams_answer(instrumented: Any, provider: Any,
                                                         exporter: SnapshotExporter, mode: str) -> None:
    """Issue #34 fault 2: a team run with stream=True consumed to the end: its stream carries the member's
    events too (RunContent, RunCompleted), yet the team span's output and the envelope's public_output are the
    team's final answer (the leader's last text), the member's answer stays the member's."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    memory = InMemorySpanExporter()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    team = desk_team()
    if mode == "run":
        events = list(team.run("What is the weather?", stream=True))
    else:
        async def main() -> list:
            return [e async for e in team.arun("What is the weather?", stream=True)]
        events = asyncio.run(main())
    told = "".join(e.content for e in events if type(e).__module__ == "agno.run.team"
                   and getattr(e, "event", "") == "TeamRunContent")
    assert told == "Desk says: Found: sunny in Paris"  # the ground truth: what the team itself said
    team_span = next(s for s in exporter.semantic() if s.name == "invoke_workflow Desk")
    member = next(s for s in exporter.semantic() if s.name == "invoke_agent Weather Agent")
    assert team_span.attributes["output.value"] == told
    assert member.attributes["output.value"] == "Found: sunny in Paris"
    [env] = check(fold(list(memory.get_finished_spans())))
    assert env["public_output"] == told


@pytest.mark.parametrize("who", ["agent", "team"])
def test_fault3_async_stream_closed_early_ends_every_span_at_once(instrumented: Any, exporter: SnapshotExporter,
                                                                  who: str) -> None:
    """Issue #34 fault 3: arun(stream=True) closed with aclose() after two events, while the model's stream is
    in progress: every span of the run has ended, abandoned, by the time aclose() returns (not when the event
    loop finalises Agno's generators later, or never), the model span before its run's span."""
    from otel_agents._spans import SemanticSpan
    import gc

    runner = support_agent(script=lambda m: Reply(text="one two three four five")) if who == "agent" \
        else desk_team()
    seen: dict[str, Any] = {}

    async def main() -> None:
        stream = runner.arun("What is the weather?", stream=True)
        async for i, _ in _aenumerate(stream):
            if i == 1:
                break
        await stream.aclose()
        seen["ended"] = exporter.semantic()
        seen["open"] = [o.name for o in gc.get_objects() if isinstance(o, SemanticSpan) and not o.ended]

    asyncio.run(main())
    spans = seen["ended"]
    assert seen["open"] == [], seen["open"]
    run_span = next(s for s in spans if s.parent_id is None)
    assert run_span.attributes.get("otel_agents.stream.abandoned") is True
    assert sorted(kinds(spans)) == (["agent", "model"] if who == "agent" else
                                    ["agent", "chain", "model", "model", "tool"]), tree(spans)
    for s in spans:
        assert s.end_time <= run_span.end_time, tree(spans)
        if s is not run_span:  # left mid-stream, or ended by the generator's close: never an error
            assert s.status.name != "ERROR", tree(spans)
    if who == "agent":  # left while the model was streaming its answer
        [model] = [s for s in spans if s.semantic_kind == "model"]
        assert model.attributes.get("otel_agents.stream.abandoned") is True, tree(spans)
        # the model never finished: no finish reason is invented (issue #34 fault 5's kind)
        assert "gen_ai.response.finish_reasons" not in model.attributes
        assert [m["finish_reason"] for m in model.json_attr("gen_ai.output.messages")] == [""]


@pytest.mark.parametrize("stream", [False, True])
def test_user_model_class_defined_after_instrument(instrumented: Any, exporter: SnapshotExporter,
                                                   stream: bool) -> None:
    """Issue #34 item 3: an ``agno.models.base.Model`` subclass the user writes after instrument() (its own
    invoke/ainvoke/invoke_stream and response parsers) gets one model span per request from our hook on the
    base class, with each request's usage as the model reported it (ground truth kept by the model)."""
    from agno.metrics import MessageMetrics
    from agno.models.base import Model
    from agno.models.response import ModelResponse

    truth: list[tuple[int, int]] = []

    class InHouse(Model):
        def _answer(self, messages: list) -> ModelResponse:
            usage = (len(messages) * 10, 4 if tool_results(messages) else 2)
            truth.append(usage)
            metrics = MessageMetrics(input_tokens=usage[0], output_tokens=usage[1], total_tokens=sum(usage))
            if tool_results(messages):
                return ModelResponse(role="assistant", content=f"Found: {tool_results(messages)[-1].content}",
                                     response_usage=metrics)
            return ModelResponse(role="assistant", response_usage=metrics, tool_calls=[
                {"id": "call_a", "type": "function",
                 "function": {"name": "lookup_order", "arguments": '{"order_id": "A100"}'}}])

        def invoke(self, messages: list, **kwargs: Any) -> ModelResponse:
            return self._answer(messages)

        async def ainvoke(self, messages: list, **kwargs: Any) -> ModelResponse:
            return self._answer(messages)

        def invoke_stream(self, messages: list, **kwargs: Any) -> Any:
            yield self._answer(messages)

        async def ainvoke_stream(self, messages: list, **kwargs: Any) -> Any:
            yield self._answer(messages)

        def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
            return response

        def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
            return response

    agent = Agent(name="Support", model=InHouse(id="in-house-1", provider="in-house"), tools=[lookup_order],
                  telemetry=False)
    if stream:
        list(agent.run("Where is A100?", stream=True))
    else:
        agent.run("Where is A100?")
    models = exporter.semantic("model")
    assert len(models) == len(truth) == 2, tree(exporter.semantic())
    assert [(m.attributes["gen_ai.usage.input_tokens"], m.attributes["gen_ai.usage.output_tokens"])
            for m in models] == truth
    assert all(m.name == "chat in-house-1" for m in models)
    [tool] = exporter.semantic("tool")
    assert tool.attributes["gen_ai.tool.call.id"] == "call_a"


def test_workflow_step_retried_after_a_failed_agent_run_completes(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A streamed step whose agent run fails runs it again (``Step.max_retries``); the second run answers and the
    workflow completes. The failed run's agent span is ERROR; the workflow's and the step's spans are not (the
    member's ``RunError`` event in the workflow's stream is the member's, not the workflow's), and the workflow's
    output is its answer."""
    from agno.workflow import Step, Workflow

    answers = iter([Reply(error=RuntimeError("model down")), Reply(text="sunny in Paris")])
    agent = Agent(name="Weather", model=ScriptedModel(script=lambda messages: next(answers)), telemetry=False)
    flow = Workflow(name="Flow", steps=[Step(name="weather", agent=agent)], telemetry=False)
    events = list(flow.run("Weather?", stream=True))
    assert str(getattr(events[-1], "event", "")) == "WorkflowCompleted" and events[-1].content == "sunny in Paris"
    spans = exporter.semantic()
    agents = sorted((s for s in spans if s.semantic_kind == "agent"), key=lambda s: s.start_time)
    root = next(s for s in spans if s.name == "invoke_workflow Flow")
    step = next(s for s in spans if s.name == "weather")
    assert [a.status.name for a in agents] == ["ERROR", "UNSET"], tree(spans)
    assert root.status.name != "ERROR" and step.status.name != "ERROR", tree(spans)
    assert root.attributes["output.value"] == "sunny in Paris"


def test_tool_definitions_follow_a_tool_changed_between_runs(instrumented: Any, exporter: SnapshotExporter) -> None:
    """The tools' definitions are cached by their content: a tool whose description changes between runs
    is recorded with its new description."""
    tool = Function.from_callable(lookup_order)
    agent = support_agent(tools=[tool])
    agent.run("Where is A100?")
    tool.description = "Look up an order by id, with its carrier."
    agent.run("Where is A100?")
    models = [s for s in exporter.semantic() if s.semantic_kind == "model"]
    assert [json.loads(s.attributes["gen_ai.tool.definitions"])[0]["description"] for s in models] == \
        ["Look up an order by id."] * 2 + ["Look up an order by id, with its carrier."] * 2



def test_model_span_server_and_output_type_as_sent(instrumented: Any, exporter: SnapshotExporter) -> None:
    """OTel GenAI v1.41 inference span, Agno's instrumentor alone, its OpenAIChat over the real ``openai`` client and
    a mock transport: server.address/port of the model's base_url, gen_ai.output.type ``json`` for the agent whose
    output schema Agno sends as a JSON-schema response_format; a plain agent asks for none and gets none. Compared
    with the requests the fake received."""
    import httpx
    from agno.models.openai import OpenAIChat
    from pydantic import BaseModel

    from tests.clients.fakes import Recorder, chat_completion

    class Status(BaseModel):
        order_id: str
        status: str

    recorder = Recorder(chat_completion('{"order_id": "A100", "status": "shipped"}'))

    def model() -> Any:
        return OpenAIChat(id="gpt-4o", api_key="test-key", base_url="http://127.0.0.1:8011/v1",
                          http_client=httpx.Client(transport=httpx.MockTransport(recorder)))

    Agent(name="Support", model=model(), output_schema=Status, telemetry=False).run("Where is A100?")
    Agent(name="Support", model=model(), telemetry=False).run("Where is A100?")
    asked, plain = exporter.semantic("model")
    assert recorder.requests[0]["response_format"]["type"] == "json_schema"
    assert "response_format" not in recorder.requests[1]
    assert asked.attributes["gen_ai.output.type"] == "json"
    assert "gen_ai.output.type" not in plain.attributes
    for span in (asked, plain):
        assert (span.attributes["server.address"], span.attributes["server.port"]) == ("127.0.0.1", 8011)
        assert "gen_ai.request.choice.count" not in span.attributes


def test_gen_ai_alone_an_input_of_messages_is_the_agent_input_messages(instrument: Any,
                                                                       exporter: SnapshotExporter) -> None:
    """Written in OTel GenAI alone (no ``input.value``), a run given Agno ``Message`` s has them as the agent's
    ``gen_ai.input.messages`` (each role its own, an image a media part), converted as the model span's input is:
    what the first model span shows Agno sent, not their ``{role, content}`` JSON as one user text."""
    from agno.media import Image
    from agno.models.message import Message

    instrument(vocabularies="gen_ai", capture_content=True)
    given = [Message(role="user", content="Where is my order?"),
             Message(role="assistant", content="Which order?"),
             Message(role="user", content="A1, the parcel in this photo.",
                     images=[Image(url="https://example.test/parcel.jpg")])]
    support_agent(script=tool_then_answer("lookup_order", {"order_id": "A1"})).run(given)
    agent = next(s for s in exporter.semantic() if s.semantic_kind == "agent")
    assert "input.value" not in agent.attributes
    messages = json.loads(agent.attributes["gen_ai.input.messages"])
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    text, image = messages[2]["parts"]
    assert text == {"type": "text", "content": "A1, the parcel in this photo."}
    assert (image["type"], image["modality"], image["uri"]) == ("uri", "image", "https://example.test/parcel.jpg")
    first_model = min((s for s in exporter.semantic() if s.semantic_kind == "model"), key=lambda s: s.start_time)
    sent = json.loads(first_model.attributes["gen_ai.input.messages"])
    assert sent[-3:] == messages


def test_gen_ai_alone_a_runs_media_are_in_the_agent_input_message(instrument: Any, exporter: SnapshotExporter) -> None:
    """``agent.run(text, images=[...], audio=[...], videos=[...], files=[...])``: Agno builds the user message of
    the text and the media and sends it to the model; written in OTel GenAI alone (no ``input.value``), the agent's
    ``gen_ai.input.messages`` had the text alone. Now the user message Agno built: the text, then each medium a
    media part (images, audio, videos, files, in that order, as a model span's message is converted), as the first
    model span shows Agno sent it."""
    from agno.media import Audio, File, Image, Video

    instrument(vocabularies="gen_ai", capture_content=True)
    support_agent(script=tool_then_answer("lookup_order", {"order_id": "A1"})).run(
        "Where is the parcel in these?", images=[Image(url="https://example.test/parcel.jpg")],
        audio=[Audio(content=b"RIFF-voice-note", format="wav", mime_type="audio/wav")],
        videos=[Video(url="https://example.test/unboxing.mp4")],
        files=[File(url="https://example.test/label.pdf", mime_type="application/pdf")])
    agent = next(s for s in exporter.semantic() if s.semantic_kind == "agent")
    attrs = dict(agent.attributes)
    validate_genai_json(attrs)
    assert "input.value" not in attrs
    [message] = json.loads(attrs["gen_ai.input.messages"])
    assert message["role"] == "user"
    assert [(p["type"], p.get("modality")) for p in message["parts"]] == [
        ("text", None), ("uri", "image"), ("blob", "audio"), ("uri", "video"), ("uri", "document")], message
    assert message["parts"][0]["content"] == "Where is the parcel in these?"
    assert message["parts"][4]["uri"] == "https://example.test/label.pdf"
    first_model = min((s for s in exporter.semantic() if s.semantic_kind == "model"), key=lambda s: s.start_time)
    assert json.loads(first_model.attributes["gen_ai.input.messages"])[-1] == message


def test_a_steps_output_is_not_built_where_it_is_written_nowhere(instrument: Any, exporter: SnapshotExporter,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """In OTel GenAI alone a workflow step's output is written nowhere (``output.value`` is OpenInference's and
    Langfuse's): it is not converted (``_jsonable``) only to be dropped; the workflow's and the agent's answers
    are still written, as their messages. With all three vocabularies the step's output is written."""
    from agno.workflow import Step, Workflow

    from otel_agents.instrumentors.agno import _runs

    converted: list[Any] = []
    real = _runs._jsonable
    monkeypatch.setattr(_runs, "_jsonable", lambda value: converted.append(value) or real(value))

    def flow() -> Workflow:
        return Workflow(name="Flow", steps=[Step(name="lookup", agent=support_agent())], telemetry=False)

    inst = instrument(vocabularies="gen_ai", capture_content=True)
    flow().run("Where is A100?")
    step = next(s for s in exporter.semantic() if s.name == "lookup")
    assert not any(k.startswith(("input.", "output.", "gen_ai.input", "gen_ai.output")) for k in step.attributes)
    for span in exporter.semantic():
        if span.name == "invoke_workflow Flow" or span.semantic_kind == "agent":
            assert "gen_ai.output.messages" in span.attributes, tree(exporter.semantic())
    assert len(converted) == 4, converted  # the workflow's and the agent's input and output; not the step's
    exporter.clear()
    inst.uninstrument()

    converted.clear()
    instrument(capture_content=True)
    flow().run("Where is A100?")
    step = next(s for s in exporter.semantic() if s.name == "lookup")
    assert "output.value" in step.attributes and len(converted) == 5


class _RawArguments(ScriptedModel):
    """A :class:`ScriptedModel` whose tool-call arguments given as a string are sent as they are (not JSON)."""

    def _calls(self, reply: Reply) -> list[dict]:
        return [{"id": f"call_{self.requests}_{i}", "type": "function",
                 "function": {"name": name, "arguments": args if isinstance(args, str) else json.dumps(args)}}
                for i, (name, args) in enumerate(reply.tool_calls)]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("name, arguments, reason, recorded", [
    ("lokup", {"order_id": "A100"}, "unknown_tool", {"order_id": "A100"}),
    ("lookup_order", "{not json", "validation_error", "{not json")], ids=["unknown-tool", "not-json"])
def test_a_call_agno_answers_without_running_a_tool_is_a_refused_tool_span(
        name: str, arguments: Any, reason: str, recorded: Any, stream: bool, instrumented: Any,
        exporter: SnapshotExporter, envelopes: list) -> None:
    """The model calls a tool the agent lacks, or ``lookup_order`` with arguments that are not JSON: Agno answers
    the model with an error tool message and runs nothing (``FunctionCall.execute`` is never reached). It is a
    refused tool span under the agent, between the two model spans: ERROR, ``error.type`` ``reason``,
    ``otel_agents.tool.denied``, the call's id and arguments, Agno's answer as the result, zero length; the
    envelope lists the call as failed. Ground truth: the tool message the model was sent."""
    results: list = []

    def script(messages: list) -> Reply:
        results[:] = tool_results(messages)
        return Reply(text="noted") if results else Reply(tool_calls=[(name, arguments)])

    agent = support_agent()
    agent.model = _RawArguments(script=script)
    run = agent.run("go", stream=stream)
    if stream:
        list(run)
    [told] = results
    spans = exporter.semantic()
    [refused] = exporter.semantic("tool")
    assert refused.name == f"execute_tool {name}" and refused.attributes["gen_ai.tool.call.id"] == told.tool_call_id
    assert refused.status.name == "ERROR" and refused.attributes["error.type"] == reason, refused.attributes
    assert refused.attributes["otel_agents.tool.denied"] is True
    assert refused.json_attr("gen_ai.tool.call.arguments") == recorded
    assert refused.attributes["gen_ai.tool.call.result"] == told.content == refused.status_description
    assert refused.start_time == refused.end_time
    assert parent_of(refused, spans).name == "invoke_agent Support", tree(spans)
    [env] = check(envelopes)
    assert [(c["id"], c["status"]) for c in env["tool_calls"]] == [(told.tool_call_id, "error")]
