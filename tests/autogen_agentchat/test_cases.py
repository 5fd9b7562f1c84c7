"""AutoGen AgentChat: the field cases AU-1 … AU-3 (``../shared/cases/adk-smolagents-agno-autogen.md``) and
the framework's own cases (tool call, tool error, streaming, parallel tools, handoff, failed run,
cancellation, content off, uninstrument). The real AgentChat over fake model clients, the global
tracer provider set so autogen-core's own spans are live."""

from __future__ import annotations

import asyncio
import gc
from typing import Any

import pytest
from autogen_agentchat.agents import AssistantAgent
from autogen_agentchat.conditions import HandoffTermination, MaxMessageTermination, TextMentionTermination
from autogen_agentchat.teams import RoundRobinGroupChat, SelectorGroupChat, Swarm
from autogen_core import CancellationToken
from opentelemetry import trace

from tests.genai_schema import validate_genai_json
from tests.pydantic_misses import misses_of_ours
from tests.spans import (SnapshotExporter, SpanSnapshot, assert_reasoning_then_answer, assert_system_prompt, parent_of,
                         tree)

from .fakes import ScriptedClient, call, calls, lookup_order, replay, text, tool_then_answer
from otel_agents._spans.finalisers import settle


def agent_with_tool(name: str = "support", client: Any = None, **kwargs: Any) -> AssistantAgent:
    client = client or replay(call("lookup_order", {"order_id": "A100"}), text("A100 has shipped."))
    kwargs.setdefault("reflect_on_tool_use", True)  # a tool call, then the model's answer
    return AssistantAgent(name, model_client=client, tools=[lookup_order], **kwargs)


def one(spans: list[SpanSnapshot], name: str) -> SpanSnapshot:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, f"{len(found)} spans named {name!r}:\n{tree(spans)}"
    return found[0]


def kinds(spans: list[SpanSnapshot]) -> list[str | None]:
    return [s.semantic_kind for s in spans]


def assert_one_trace_all_ended(exporter: SnapshotExporter) -> None:
    spans = exporter.spans
    assert len({s.trace_id for s in spans}) == 1, tree(spans)
    ids = {s.span_id for s in spans}
    assert [s for s in spans if s.parent_id is not None and s.parent_id not in ids] == [], tree(spans)
    assert all(s.end_time for s in spans)


# -- AU-1 ------------------------------------------------------------------------------------------
def test_au1_autogen_core_spans_do_not_flood_or_split_the_trace(instrumented: Any, exporter: SnapshotExporter) -> None:
    """AU-1: a RoundRobinGroupChat of two AssistantAgents (one with a tool) on the replay client, global provider
    set: one trace; one agent span per turn and one tool span per call; none of autogen-core's runtime, create_agent,
    invoke_agent or execute_tool spans (suppressed while we are instrumented, see the module docstring)."""
    team = RoundRobinGroupChat([agent_with_tool("support"), AssistantAgent("writer", model_client=replay("Thanks!"))],
                               termination_condition=MaxMessageTermination(3))
    result = asyncio.run(team.run(task="Where is A100?"))
    assert result.messages[-1].content == "Thanks!"
    spans = exporter.spans
    assert_one_trace_all_ended(exporter)
    assert [s for s in spans if not s.scope.startswith("otel_agents")] == [], tree(spans)
    assert not any(s.name.startswith(("create_agent", "autogen ")) for s in spans)
    assert sorted(s.name for s in spans if s.semantic_kind in ("agent", "tool", "chain")) == [
        "execute_tool lookup_order", "invoke_agent support", "invoke_agent writer", "invoke_workflow RoundRobinGroupChat"]
    team_span = one(spans, "invoke_workflow RoundRobinGroupChat")
    assert team_span.parent_id is None and team_span.attributes["gen_ai.operation.name"] == "invoke_workflow"
    # OTel GenAI v1.41 invoke_workflow span: named by gen_ai.workflow.name; a team is not an agent
    assert team_span.attributes["gen_ai.workflow.name"] == "RoundRobinGroupChat"
    assert not any(k.startswith("gen_ai.agent.") for k in team_span.attributes), team_span.attributes
    for name in ("invoke_agent support", "invoke_agent writer"):
        assert parent_of(one(spans, name), spans) == team_span
    assert parent_of(one(spans, "execute_tool lookup_order"), spans).name == "invoke_agent support"


def test_au1_uninstrument_gives_autogen_core_its_spans_back(instrument: Any, exporter: SnapshotExporter) -> None:
    """AU-1 (decision, documented): suppression lasts only while we are instrumented; afterwards autogen-core's
    own create_agent/invoke_agent/execute_tool and runtime spans are emitted again, and none of ours."""
    inst = instrument()
    inst.uninstrument()
    team = RoundRobinGroupChat([agent_with_tool("support")], termination_condition=MaxMessageTermination(2))
    asyncio.run(team.run(task="Where is A100?"))
    names = [s.name for s in exporter.spans]
    assert exporter.semantic() == []
    assert "create_agent support" in names and "execute_tool lookup_order" in names
    assert any(n.startswith("autogen ") for n in names), names


# -- AU-2 ------------------------------------------------------------------------------------------
@pytest.mark.parametrize("variant", ["replay", "subclass", "stream_without_usage"])
def test_au2_every_chat_completion_client_gives_a_model_span(instrumented: Any, exporter: SnapshotExporter,
                                                            variant: str) -> None:
    """AU-2: a tool call then text over (a) ReplayChatCompletionClient, (b) a ChatCompletionClient subclass written in
    the test, (c) create_stream on a client whose stream has no usage chunk (RequestUsage(0, 0)): one model span per
    call, child of the agent span, with the model name and the real usage; in (c) usage is "not reported", never 0."""
    if variant == "replay":
        client, model = replay(call("lookup_order", {"order_id": "A100"}, usage=(11, 3)), text("Shipped.", (17, 5))), \
            "scripted-1"
    else:
        client, model = ScriptedClient(tool_then_answer("lookup_order", {"order_id": "A100"}),
                                       stream_usage=False), "scripted-client-1"
    agent = agent_with_tool(client=client, model_client_stream=variant == "stream_without_usage")
    asyncio.run(agent.run(task="Where is A100?"))
    spans = exporter.semantic()
    agent_span = one(spans, "invoke_agent support")
    models = exporter.semantic("model")
    assert len(models) == 2, tree(spans)
    for m in models:
        assert parent_of(m, spans) == agent_span
        assert m.name == f"chat {model}" and m.attributes["gen_ai.request.model"] == model
        validate_genai_json(m.attributes)
    first, second = sorted(models, key=lambda s: s.start_time)
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    assert parent_of(one(spans, "execute_tool lookup_order"), spans) == agent_span
    if variant == "stream_without_usage":
        assert second.attributes["gen_ai.request.stream"] is True
        assert "gen_ai.usage.input_tokens" not in second.attributes, "RequestUsage(0, 0) recorded as 0 tokens"
        assert second.attributes["output.value"].strip().endswith("(order A100: shipped)")
    else:
        assert (first.attributes["gen_ai.usage.input_tokens"], first.attributes["gen_ai.usage.output_tokens"]) == (11, 3)
        assert second.attributes["gen_ai.usage.output_tokens"] == (5 if variant == "replay" else 5)


def test_au2_subclass_defined_after_instrument_and_super_calls_give_one_span(instrumented: Any,
                                                                               exporter: SnapshotExporter) -> None:
    """AU-2: a client class defined after instrument() is covered, and one whose create() calls super().create()
    still gives one model span per request."""

    class Wrapped(ScriptedClient):
        async def create(self, messages: Any, **kwargs: Any) -> Any:
            return await super().create(messages, **kwargs)

    agent = agent_with_tool(client=Wrapped(tool_then_answer("lookup_order", {"order_id": "A1"})))
    asyncio.run(agent.run(task="Where is A1?"))
    assert len(exporter.semantic("model")) == 2, tree(exporter.spans)


def test_classes_defined_after_instrument_are_wrapped_until_uninstrument(instrument: Any,
                                                                        exporter: SnapshotExporter) -> None:
    """A client class and an agent class defined after instrument(): the client's own create() (no super() into a
    wrapped class) gives the model spans, the agent's on_messages is wrapped; the bases' abstract methods are not.
    uninstrument() unwraps these classes too and takes the hooks off the bases: a class defined afterwards is
    AutoGen's own."""
    from autogen_agentchat.agents import BaseChatAgent
    from autogen_core.models import ChatCompletionClient
    from wrapt import FunctionWrapper

    inst = instrument()

    class Canned(ScriptedClient):
        async def create(self, messages: Any, **kwargs: Any) -> Any:
            return self.script(messages)

    class Desk(AssistantAgent):
        async def on_messages(self, messages: Any, cancellation_token: Any) -> Any:
            return await super().on_messages(messages, cancellation_token)

    asyncio.run(agent_with_tool(client=Canned(tool_then_answer("lookup_order", {"order_id": "A1"}))).run(task="A1?"))
    assert len(exporter.semantic("model")) == 2, tree(exporter.spans)
    assert isinstance(Desk.__dict__["on_messages"], FunctionWrapper)
    assert not isinstance(ChatCompletionClient.__dict__["create"], FunctionWrapper)  # abstract: never runs
    assert not isinstance(BaseChatAgent.__dict__["on_messages"], FunctionWrapper)

    inst.uninstrument()

    class After(ScriptedClient):
        async def create(self, messages: Any, **kwargs: Any) -> Any:
            return self.script(messages)

    for cls, name in ((Canned, "create"), (Desk, "on_messages"), (After, "create")):
        assert not isinstance(cls.__dict__[name], FunctionWrapper), cls
    assert "__init_subclass__" not in BaseChatAgent.__dict__ and "__init_subclass__" not in ChatCompletionClient.__dict__


# -- AU-3 ------------------------------------------------------------------------------------------
def test_au3_selector_model_call_is_the_teams_and_turns_nest_under_the_team(instrumented: Any,
                                                                           exporter: SnapshotExporter) -> None:
    """AU-3: SelectorGroupChat of two agents whose selector has its own replay client naming an agent each round:
    the team is `invoke_workflow {team}`, each turn an agent span under it (run via on_messages_stream), the selector's
    model call a model span directly under the team span and in no agent's usage; one trace."""
    support = agent_with_tool("support")
    writer = AssistantAgent("writer", model_client=replay(text("Anything else? TERMINATE", (30, 4))),
                            description="Writes the closing line.")
    selector = replay(text("support", (40, 1)), text("writer", (50, 1)))
    team = SelectorGroupChat([support, writer], model_client=selector, name="Desk",
                             termination_condition=TextMentionTermination("TERMINATE"), allow_repeated_speaker=True)
    asyncio.run(team.run(task="Where is A100?"))
    spans = exporter.spans
    assert_one_trace_all_ended(exporter)
    team_span = one(spans, "invoke_workflow Desk")
    assert team_span.semantic_kind == "chain" and team_span.attributes["gen_ai.operation.name"] == "invoke_workflow"
    turns = [s for s in spans if s.semantic_kind == "agent"]
    assert sorted(s.name for s in turns) == ["invoke_agent support", "invoke_agent writer"]
    for turn in turns:
        assert parent_of(turn, spans) == team_span
        assert turn.attributes["otel_agents.agent.parent"] == "Desk"
    selector_spans = [s for s in exporter.semantic("model") if parent_of(s, spans) == team_span]
    assert [s.attributes["gen_ai.usage.input_tokens"] for s in selector_spans] == [40, 50]
    agent_models = [s for s in exporter.semantic("model") if parent_of(s, spans) in turns]
    assert sorted(s.attributes["gen_ai.usage.input_tokens"] for s in agent_models) == [11, 17, 30]


def test_au3_round_robin_team_of_the_same_agents(instrumented: Any, exporter: SnapshotExporter) -> None:
    """AU-3: the same agents in a RoundRobinGroupChat: one trace, every turn an agent span under the team span."""
    team = RoundRobinGroupChat([agent_with_tool("support"), AssistantAgent("writer", model_client=replay("Bye."))],
                               termination_condition=MaxMessageTermination(3))
    asyncio.run(team.run(task="Where is A100?"))
    spans = exporter.spans
    assert_one_trace_all_ended(exporter)
    team_span = one(spans, "invoke_workflow RoundRobinGroupChat")
    assert all(parent_of(s, spans) == team_span for s in spans if s.semantic_kind == "agent")
    assert not [s for s in exporter.semantic("model") if parent_of(s, spans) == team_span]


# -- the framework's own cases -------------------------------------------------------------------------
def test_tool_call_records_arguments_result_and_reflection(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A FunctionTool call with reflect_on_tool_use: two model spans with the tool span between them; arguments,
    result, tools offered and the answer recorded."""
    agent = agent_with_tool(reflect_on_tool_use=True)
    result = asyncio.run(agent.run(task="Where is A100?"))
    spans = exporter.semantic()
    agent_span = one(spans, "invoke_agent support")
    assert agent_span.attributes["output.value"] == result.messages[-1].content == "A100 has shipped."
    assert agent_span.attributes["input.value"] == "Where is A100?"
    tool = one(spans, "execute_tool lookup_order")
    assert tool.json_attr("gen_ai.tool.call.arguments") == {"order_id": "A100"}
    assert tool.attributes["gen_ai.tool.call.result"] == "order A100: shipped"
    assert tool.attributes["gen_ai.tool.call.id"] == "call-1"
    first, second = sorted(exporter.semantic("model"), key=lambda s: s.start_time)
    assert first.end_time <= tool.start_time and tool.end_time <= second.start_time
    assert [d["name"] for d in first.json_attr("gen_ai.tool.definitions")] == ["lookup_order"]
    roles = [m["role"] for m in second.json_attr("gen_ai.input.messages")]
    assert roles == ["user", "assistant", "tool"]
    assert second.json_attr("gen_ai.input.messages")[2]["parts"][0]["type"] == "tool_call_response"


def test_a_run_is_read_without_asking_a_model_for_what_it_lacks(instrumented: Any, exporter: SnapshotExporter,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """The run's ``TaskResult`` (it has ``messages``, no ``chat_message``) is read for its answer without pydantic
    raising ``AttributeError`` (~35,000 instructions a miss, twice a run before); the answer is still recorded."""
    with misses_of_ours(monkeypatch) as misses:
        result = asyncio.run(agent_with_tool().run(task="Where is A100?"))
    assert misses == []
    assert one(exporter.semantic(), "invoke_agent support").attributes["output.value"] == \
        result.messages[-1].content == "A100 has shipped."


def test_m4_the_system_message_is_the_system_prompt(instrumented: Any, exporter: SnapshotExporter) -> None:
    """M-4: an AssistantAgent's system_message is every model span's gen_ai.system_instructions and its first
    OpenInference input message, role system; not a gen_ai.input.messages entry."""
    agent = agent_with_tool(system_message="You are support. Be terse.")
    asyncio.run(agent.run(task="Where is A100?"))
    assert len(exporter.semantic("model")) == 2
    assert_system_prompt(exporter.semantic("model"), "You are support. Be terse.")


def test_m1_a_thought_is_a_reasoning_part_never_the_answer(instrumented: Any, exporter: SnapshotExporter,
                                                            envelopes: list) -> None:
    """M-1: a CreateResult with a thought (a reasoning model's text apart from the answer): the model span's
    output is a reasoning part, then the answer's text part; the OpenInference content, the agent's output and
    the envelope's public_output are the answer alone."""
    answer, thought = "Your refund was approved.", "The user wants a refund; policy allows it."
    result = text(answer)
    result.thought = thought
    agent = AssistantAgent("support", model_client=replay(result))
    assert asyncio.run(agent.run(task="refund?")).messages[-1].content == answer
    [model], [agent_span] = exporter.semantic("model"), exporter.semantic("agent")
    assert_reasoning_then_answer(model, agent_span, thought, answer)
    [envelope] = envelopes
    assert envelope["public_output"] == answer


@pytest.mark.parametrize("stream", [False, True], ids=["create", "create_stream"])
def test_a_thought_beside_tool_calls_is_a_text_part(instrumented: Any, exporter: SnapshotExporter,
                                                     stream: bool) -> None:
    """A client of the user's own that follows AutoGen's documented split: a ``thought`` beside tool calls is text
    the model wrote before them (a ``text`` part, before: ``reasoning``), in the output and in the next request's
    input; beside the answer, reasoning."""
    scripted = tool_then_answer("lookup_order", {"order_id": "A100"})

    def script(messages: Any) -> Any:
        result = scripted(messages)
        result.thought = "Let me check." if not isinstance(result.content, str) else "It has shipped, say so."
        return result

    agent = agent_with_tool(client=ScriptedClient(script), model_client_stream=stream)
    asyncio.run(agent.run(task="Where is A100?"))
    asked, answered = exporter.semantic("model")
    [out] = asked.json_attr("gen_ai.output.messages")
    assert [(p["type"], p.get("content", p.get("name"))) for p in out["parts"]] == \
        [("text", "Let me check."), ("tool_call", "lookup_order")]
    assert answered.json_attr("gen_ai.input.messages")[1]["parts"][0] == {"type": "text", "content": "Let me check."}
    [out] = answered.json_attr("gen_ai.output.messages")
    assert out["parts"][0] == {"type": "reasoning", "content": "It has shipped, say so."}
    validate_genai_json(dict(asked.attributes))


def test_tool_error_marks_the_tool_span_and_the_agent_goes_on(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A tool that raises: its span ends with ERROR and the exception; AutoGen reports the error to the model, so
    the agent span ends normally with the model's answer."""

    def lookup_order(order_id: str) -> str:
        """Look up an order."""
        raise ValueError("order database unavailable")

    agent = AssistantAgent("support", model_client=replay(call("lookup_order", {"order_id": "A1"}), text("Sorry.")),
                           tools=[lookup_order], reflect_on_tool_use=True)
    asyncio.run(agent.run(task="Where is A1?"))
    spans = exporter.semantic()
    tool = one(spans, "execute_tool lookup_order")
    assert tool.status.name == "ERROR" and tool.attributes["error.type"] == "ValueError"
    assert any(name == "exception" for name, _ in tool.events)
    assert one(spans, "invoke_agent support").status.name != "ERROR"


def test_parallel_tool_calls_are_sibling_tool_spans(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Parallel tool calls (two FunctionCalls in one result, run concurrently): two tool spans, both children of the
    agent span, each with its own call id."""
    client = replay(calls([("lookup_order", {"order_id": "A1"}, "c1"), ("lookup_order", {"order_id": "B2"}, "c2")]),
                    text("Both shipped."))
    asyncio.run(agent_with_tool(client=client, reflect_on_tool_use=True).run(task="A1 and B2?"))
    spans = exporter.semantic()
    agent_span = one(spans, "invoke_agent support")
    tools = exporter.semantic("tool")
    assert sorted(t.attributes["gen_ai.tool.call.id"] for t in tools) == ["c1", "c2"]
    assert all(parent_of(t, spans) == agent_span for t in tools)


def test_run_stream_and_an_abandoned_stream(instrumented: Any, exporter: SnapshotExporter, app_tracer: Any) -> None:
    """run_stream consumed to the end: one agent span with the streamed model span inside, ended with the answer.
    A stream closed after its first item: the agent span ends as abandoned, and nothing of ours stays current."""

    async def main() -> None:
        agent = agent_with_tool(client=ScriptedClient(tool_then_answer("lookup_order", {"order_id": "A1"})),
                                model_client_stream=True)
        items = [item async for item in agent.run_stream(task="Where is A1?")]
        assert type(items[-1]).__name__ == "TaskResult"
        assert not trace.get_current_span().get_span_context().is_valid
        other = agent_with_tool("other", client=ScriptedClient(tool_then_answer("lookup_order", {"order_id": "B2"})))
        stream = other.run_stream(task="Where is B2?")
        await stream.__anext__()
        await stream.aclose()
        assert not trace.get_current_span().get_span_context().is_valid

    asyncio.run(main())
    spans = exporter.semantic()
    done = one(spans, "invoke_agent support")
    assert done.attributes["output.value"].startswith("Your order shipped.")
    assert "otel_agents.stream.abandoned" not in done.attributes
    assert all(m.attributes.get("gen_ai.request.stream") for m in spans if m.semantic_kind == "model"
               and parent_of(m, spans) == done)
    assert one(spans, "invoke_agent other").attributes["otel_agents.stream.abandoned"] is True
    with app_tracer.start_as_current_span("app-after"):
        pass
    assert next(s for s in exporter.spans if s.name == "app-after").parent_id is None


def test_swarm_handoff_is_a_tool_span_and_the_delegation(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Swarm: triage hands off to billing (transfer_to_billing); the handoff is a tool span recording the target,
    billing's turn is an agent span under the team recording triage as its delegator."""
    triage = AssistantAgent("triage", model_client=replay(call("transfer_to_billing", {}, "h1"), "unused"),
                            handoffs=["billing"])
    billing = AssistantAgent("billing", model_client=replay(text("Refund issued. TERMINATE")))
    team = Swarm([triage, billing], termination_condition=TextMentionTermination("TERMINATE"))
    asyncio.run(team.run(task="I want a refund"))
    spans = exporter.spans
    assert_one_trace_all_ended(exporter)
    handoff = one(spans, "execute_tool transfer_to_billing")
    assert handoff.attributes["otel_agents.handoff.target"] == "billing"
    assert parent_of(handoff, spans).name == "invoke_agent triage"
    billing_span = one(spans, "invoke_agent billing")
    assert billing_span.attributes["otel_agents.agent.parent"] == "triage"
    assert parent_of(billing_span, spans) == one(spans, "invoke_workflow Swarm")


def test_failed_run_marks_model_agent_and_team(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A model client that raises: the model span and the agent span end with ERROR and the user's exception type;
    inside a team, the team span ends with ERROR too and the user sees AutoGen's own error."""
    client = ScriptedClient(tool_then_answer("lookup_order", {}), error=ConnectionError("provider down"))
    with pytest.raises(ConnectionError):
        asyncio.run(agent_with_tool(client=client).run(task="Where is A1?"))
    spans = exporter.semantic()
    for name in ("invoke_agent support", "chat scripted-client-1"):
        assert one(spans, name).status.name == "ERROR"
        assert one(spans, name).attributes["error.type"] == "ConnectionError"
    exporter.clear()
    team = RoundRobinGroupChat([agent_with_tool(client=client)], termination_condition=MaxMessageTermination(3))
    with pytest.raises(RuntimeError):
        asyncio.run(team.run(task="Where is A1?"))
    spans = exporter.semantic()
    assert one(spans, "invoke_agent support").attributes["error.type"] == "ConnectionError"
    assert one(spans, "invoke_workflow RoundRobinGroupChat").status.name == "ERROR"
    assert_one_trace_all_ended(exporter)


def test_cancellation_ends_every_span_as_control_flow(instrumented: Any, exporter: SnapshotExporter,
                                                      envelopes: list) -> None:
    """A CancellationToken cancelled mid-request: every open span (team, agent, model) ends as control flow
    (``otel_agents.control_flow`` CancelledError, status unset, no error.type), the agent's stop reason
    ``cancelled`` and the team's, none abandoned, nothing current; the envelope has that stop reason and no error
    line."""
    slow = ScriptedClient(tool_then_answer("lookup_order", {}), delay=5.0)
    team = RoundRobinGroupChat([agent_with_tool(client=slow)], termination_condition=MaxMessageTermination(3))

    async def main() -> None:
        token = CancellationToken()
        run = asyncio.ensure_future(team.run(task="Where is A1?", cancellation_token=token))
        await asyncio.sleep(0.2)
        token.cancel()
        with pytest.raises(asyncio.CancelledError):
            await run

    asyncio.run(main())
    spans = exporter.semantic()
    assert sorted(kinds(spans)) == ["agent", "chain", "model"], tree(spans)
    for s in spans:
        assert s.status.name == "UNSET" and "error.type" not in s.attributes, s.name
        assert s.attributes["otel_agents.control_flow"] == "asyncio.exceptions.CancelledError", s.name
        assert "otel_agents.stream.abandoned" not in s.attributes
    assert one(spans, "invoke_agent support").attributes["otel_agents.run.stop_reason"] == "cancelled"
    (team_span,) = [s for s in spans if s.semantic_kind == "chain"]  # the team's run was stopped, as its agent's
    assert team_span.attributes["otel_agents.run.stop_reason"] == "cancelled", tree(spans)
    (env,) = envelopes
    assert env["metrics"]["stop_reason"] == "cancelled" and env["metrics"]["errors"] == 0, env["metrics"]
    assert env["public_output"] is None
    assert not [ln for ln in env["evaluation_context"].splitlines() if ln.startswith("error")], env["evaluation_context"]
    assert_one_trace_all_ended(exporter)


@pytest.mark.parametrize("how", ["suppress_instrumentation", "plain key"])
def test_a_suppressed_run_makes_no_span_of_ours(how: str, instrumented: Any, exporter: SnapshotExporter) -> None:
    """Either suppression key in the context passes every wrapper straight through: the run answers as
    uninstrumented, with no span of ours (autogen-core's own stay stood down while we are instrumented)."""
    from opentelemetry import context as otel_context
    from opentelemetry.instrumentation.utils import suppress_instrumentation

    if how == "suppress_instrumentation":
        with suppress_instrumentation():
            result = asyncio.run(agent_with_tool().run(task="Where is A100?"))
    else:
        token = otel_context.attach(otel_context.set_value("suppress_instrumentation", True))
        try:
            result = asyncio.run(agent_with_tool().run(task="Where is A100?"))
        finally:
            otel_context.detach(token)
    assert result.messages[-1].content == "A100 has shipped."
    assert exporter.spans == []
    asyncio.run(agent_with_tool().run(task="Where is A100?"))  # and afterwards, spans again
    assert kinds(exporter.spans).count("agent") == 1


def test_content_off_records_no_content(instrument: Any, exporter: SnapshotExporter) -> None:
    """Content capture off: no message, argument, result, input or output anywhere; finish reasons and usage stay."""
    instrument(capture_content=False)
    asyncio.run(agent_with_tool(reflect_on_tool_use=True).run(task="Where is SECRET-A100?"))
    spans = exporter.spans
    assert spans
    for s in spans:
        for key, value in s.attributes.items():
            assert "A100" not in str(value), (s.name, key)
    model = sorted(exporter.semantic("model"), key=lambda s: s.start_time)[0]
    assert model.attributes["gen_ai.usage.input_tokens"] == 11
    assert model.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)


def test_uninstrument_restores_autogen(instrument: Any, exporter: SnapshotExporter) -> None:
    """uninstrument(): every patched method is AutoGen's own again (the classes' dicts hold the originals) and no
    span of ours is made; a second instrument() gives one span per step, not two."""
    from autogen_agentchat.agents import BaseChatAgent
    from autogen_core.models import ChatCompletionClient
    from autogen_core.tools import BaseTool
    from autogen_ext.models.replay import ReplayChatCompletionClient

    before = {(c, n): c.__dict__[n] for c, n in ((AssistantAgent, "on_messages_stream"), (BaseTool, "run_json"),
                                                 (ReplayChatCompletionClient, "create"), (BaseChatAgent, "run"))}
    inst = instrument()
    inst.uninstrument()
    assert {(c, n): c.__dict__[n] for c, n in before} == before
    assert "__init_subclass__" not in ChatCompletionClient.__dict__
    asyncio.run(agent_with_tool().run(task="Where is A100?"))
    assert exporter.semantic() == []
    inst = instrument()
    inst.instrument()  # again: no-op
    asyncio.run(agent_with_tool().run(task="Where is A100?"))
    assert sorted(kinds(exporter.semantic())) == ["agent", "model", "model", "tool"]


def test_handoff_to_the_user_marks_the_run_paused(instrumented: Any, exporter: SnapshotExporter) -> None:
    """AgentChat's human-in-the-loop pattern (a handoff to "user" ending the Swarm by HandoffTermination): the team
    span is marked paused (``otel_agents.run.paused``), not failed; the agent's turn is not."""
    triage = AssistantAgent("triage", model_client=replay(call("transfer_to_user", {}, "h1")), handoffs=["user"])
    team = Swarm([triage], termination_condition=HandoffTermination(target="user"))
    asyncio.run(team.run(task="I want a refund"))
    spans = exporter.semantic()
    team_span = one(spans, "invoke_workflow Swarm")
    assert team_span.attributes["otel_agents.run.paused"] is True and team_span.status.name != "ERROR"
    assert "otel_agents.run.paused" not in one(spans, "invoke_agent triage").attributes


def test_agent_tool_nests_the_inner_agent_under_the_tool_span(instrumented: Any, exporter: SnapshotExporter) -> None:
    """An agent used as a tool (AgentTool): the tool span records the agent as its target and the inner agent's
    span is a child of it, inside the outer agent's span; one trace."""
    from autogen_agentchat.tools import AgentTool

    inner = AssistantAgent("researcher", model_client=replay(text("A100 ships Monday.")), description="Researches.")
    outer = AssistantAgent("support", model_client=replay(call("researcher", {"task": "When does A100 ship?"}),
                                                           text("It ships Monday.")),
                           tools=[AgentTool(inner)], reflect_on_tool_use=True)
    asyncio.run(outer.run(task="When does A100 ship?"))
    spans = exporter.spans
    assert_one_trace_all_ended(exporter)
    tool = one(spans, "execute_tool researcher")
    assert tool.attributes["otel_agents.handoff.target"] == "researcher"
    assert parent_of(tool, spans).name == "invoke_agent support"
    assert parent_of(one(spans, "invoke_agent researcher"), spans) == tool


def test_abandoned_model_stream_keeps_the_text_so_far(instrumented: Any, exporter: SnapshotExporter) -> None:
    """create_stream left after two chunks: the model span ends as abandoned with the text received so far."""
    client = ScriptedClient(lambda messages: text("one two three four"))

    async def main() -> None:
        stream = client.create_stream([])
        await stream.__anext__()
        await stream.__anext__()
        await stream.aclose()

    asyncio.run(main())
    [model] = exporter.semantic("model")
    assert model.attributes["otel_agents.stream.abandoned"] is True
    assert model.attributes["output.value"] == "one two "


@pytest.mark.parametrize("what", ["agent.run_stream", "team.run_stream", "agent.on_messages_stream",
                                  "client.create_stream"])
@pytest.mark.parametrize("ending", ["break", "aclose"])
def test_a_stream_left_on_its_last_item_is_not_abandoned(what: str, ending: str, instrumented: Any,
                                                         exporter: SnapshotExporter) -> None:
    """A caller that leaves a stream on its last item (``run_stream``'s ``TaskResult``, ``on_messages_stream``'s
    ``Response``, ``create_stream``'s ``CreateResult``), by ``break`` (the stream dropped) or ``aclose()``, got the
    whole result: every span ends finished, with its output, none abandoned."""
    from autogen_agentchat.base import Response, TaskResult
    from autogen_agentchat.messages import TextMessage
    from autogen_core.models import CreateResult

    async def main() -> None:
        agent = agent_with_tool()
        if what == "team.run_stream":
            team = RoundRobinGroupChat([agent], termination_condition=TextMentionTermination("shipped"))
            source = team.run_stream(task="Where is A100?")
        elif what == "agent.on_messages_stream":
            source = agent.on_messages_stream([TextMessage(content="Where is A100?", source="user")],
                                              CancellationToken())
        elif what == "client.create_stream":
            source = ScriptedClient(lambda messages: text("A100 has shipped.")).create_stream([])
        else:
            source = agent.run_stream(task="Where is A100?")
        async for item in source:
            if isinstance(item, (TaskResult, Response, CreateResult)):
                break
        if ending == "aclose":
            await source.aclose()
        del source
        gc.collect()
        settle()
        for _ in range(1000):  # (a bound, not a timing: a dropped stream is closed on its loop)
            if any(s.name == root_name for s in exporter.spans):
                break
            await asyncio.sleep(0.005)

    root_name = {"team.run_stream": "invoke_workflow RoundRobinGroupChat",
                 "client.create_stream": "chat scripted-client-1"}.get(what, "invoke_agent support")
    asyncio.run(main())
    spans = exporter.semantic()
    assert spans and not [s.name for s in spans if "otel_agents.stream.abandoned" in s.attributes], tree(spans)
    assert "A100 has shipped." in one(spans, root_name).attributes["output.value"], tree(spans)


def test_a_run_of_a_team_already_running_leaves_the_running_one_whole(instrumented: Any,
                                                                      exporter: SnapshotExporter) -> None:
    """``team.run`` called again while the team runs: AutoGen refuses the second run at once (``ValueError``);
    its span ends with that error, and the run under way keeps its stop reason and output."""
    team = RoundRobinGroupChat([AssistantAgent("x", model_client=ScriptedClient(lambda m: text("done TERMINATE"),
                                                                                 delay=0.01))],
                               termination_condition=TextMentionTermination("TERMINATE"))

    async def main() -> list:
        return await asyncio.gather(team.run(task="a"), team.run(task="b"), return_exceptions=True)

    first, second = asyncio.run(main())
    assert isinstance(second, ValueError) and first.stop_reason == "Text 'TERMINATE' mentioned"
    runs = sorted(exporter.semantic("chain"), key=lambda s: s.status.name)
    assert [(s.name, s.status.name) for s in runs] == [("invoke_workflow RoundRobinGroupChat", "ERROR"),
                                                       ("invoke_workflow RoundRobinGroupChat", "UNSET")]
    assert runs[0].attributes["error.type"] == "ValueError"
    assert runs[1].attributes["otel_agents.run.stop_reason"] == "termination", tree(exporter.semantic())
    assert runs[1].attributes["output.value"] == "done TERMINATE"
    assert parent_of(one(exporter.semantic(), "invoke_agent x"), exporter.semantic()) == runs[1]


def test_model_stream_cut_before_its_result_is_incomplete(instrumented: Any, exporter: SnapshotExporter) -> None:
    """create_stream read to its end, which came after the text chunks but before the ``CreateResult`` that closes
    it: the model span failed as cut short (``error.type`` ``stream_incomplete``, not abandoned), with the text
    the client yielded and no finish reason or usage. Fails before: status unset, nothing said."""
    client = ScriptedClient(lambda messages: text("one two three four"), cut=True)

    async def main() -> list[Any]:
        return [item async for item in client.create_stream([])]

    served = asyncio.run(main())
    [model] = exporter.semantic("model")
    a = model.attributes
    assert (model.status.name, a.get("error.type")) == ("ERROR", "stream_incomplete")
    assert "otel_agents.stream.abandoned" not in a
    assert model.json_attr("gen_ai.output.messages") == [
        {"role": "assistant", "parts": [{"type": "text", "content": "".join(served)}], "finish_reason": ""}]
    assert not [k for k in a if k.startswith("gen_ai.usage.") or k == "gen_ai.response.finish_reasons"]


@pytest.mark.parametrize("left", ["closed", "dropped"])
def test_team_run_stream_left_early_runs_on_inside_the_team_span(instrumented: Any, exporter: SnapshotExporter,
                                                                 left: str) -> None:
    """A team's run_stream left after its first item, closed (``aclose()``) or dropped in a running loop: AutoGen's
    run_stream waits, as it closes, for its runtime to finish the run (the loop closes a dropped generator in a
    task), so the agents answer after the caller left. Their turns nest under the team span, which ends after them
    as abandoned, with the team's answer and its stop reason; nothing outlives it."""

    team = RoundRobinGroupChat([agent_with_tool("support"), AssistantAgent("writer", model_client=replay("Bye."))],
                               termination_condition=TextMentionTermination("Bye."))

    async def main() -> None:
        stream = team.run_stream(task="Where is A100?")
        await stream.__anext__()
        if left == "closed":
            await stream.aclose()
        del stream
        gc.collect()
        settle()  # a collected stream's span ends in the finaliser thread
        for _ in range(1000):  # (a bound, not a timing: the loop runs the team's runtime meanwhile)
            if any(s.name == "invoke_workflow RoundRobinGroupChat" for s in exporter.spans):
                break
            await asyncio.sleep(0.005)
        assert not trace.get_current_span().get_span_context().is_valid

    asyncio.run(main())
    spans = exporter.semantic()
    team_span = one(spans, "invoke_workflow RoundRobinGroupChat")
    assert team_span.attributes["otel_agents.stream.abandoned"] is True
    assert team_span.attributes["otel_agents.run.stop_reason"] == "termination"
    assert team_span.attributes["output.value"] == "Bye."
    for name in ("invoke_agent support", "invoke_agent writer"):
        turn = one(spans, name)
        assert parent_of(turn, spans) == team_span and turn.end_time <= team_span.end_time, tree(spans)
    assert all(s.end_time <= team_span.end_time for s in spans), tree(spans)


@pytest.mark.parametrize("stream", [False, True])
def test_a_streamed_answer_is_timed_from_its_first_chunk(instrumented: Any, exporter: SnapshotExporter,
                                                         stream: bool) -> None:
    """create_stream: the answer's model span has gen_ai.response.time_to_first_chunk (its first chunk came 50 ms
    in); the tool call before it streamed no chunk (AutoGen's stream yields only its CreateResult), so it has
    gen_ai.request.stream and no time; create (not streamed) has neither."""
    client = ScriptedClient(tool_then_answer("lookup_order", {"order_id": "A100"}), delay=0.05)
    asyncio.run(agent_with_tool(client=client, model_client_stream=stream).run(task="Where is A100?"))
    first, second = sorted(exporter.semantic("model"), key=lambda s: s.start_time)
    assert "gen_ai.response.time_to_first_chunk" not in first.attributes
    if not stream:
        assert "gen_ai.response.time_to_first_chunk" not in second.attributes
        assert "gen_ai.request.stream" not in first.attributes | second.attributes
        return
    assert first.attributes["gen_ai.request.stream"] is True
    ttfc = second.attributes["gen_ai.response.time_to_first_chunk"]
    assert 0.05 <= ttfc <= (second.end_time - second.start_time) / 1e9
    assert second.attributes["gen_ai.request.stream"] is True


def test_gen_ai_alone_a_task_of_messages_is_the_agent_input_messages(instrument: Any,
                                                                     exporter: SnapshotExporter) -> None:
    """Written in OTel GenAI alone (no ``input.value``), a run given AgentChat messages has them as the agent's
    ``gen_ai.input.messages``, each as the model message AgentChat makes of it (its sender the ``name``): what the
    first model span shows it was sent, not their JSON as one user text."""
    import json

    from autogen_agentchat.messages import TextMessage

    instrument(vocabularies="gen_ai", capture_content=True)
    task = [TextMessage(content="I ordered A100 last week.", source="customer"),
            TextMessage(content="Please check where A100 is.", source="triage")]
    asyncio.run(agent_with_tool().run(task=task))
    agent = one(exporter.spans, "invoke_agent support")
    assert "input.value" not in agent.attributes
    given = json.loads(agent.attributes["gen_ai.input.messages"])
    assert given == [{"role": "user", "name": m.source, "parts": [{"type": "text", "content": m.content}]}
                     for m in task]
    first_model = min(exporter.semantic("model"), key=lambda s: s.start_time)
    assert json.loads(first_model.attributes["gen_ai.input.messages"]) == given


@pytest.mark.parametrize("parallel", [False, True])
@pytest.mark.parametrize("name, arguments, reason, recorded", [
    ("lokup", '{"order_id": "A100"}', "unknown_tool", {"order_id": "A100"}),
    ("lookup_order", "{not json", "validation_error", "{not json")], ids=["unknown-tool", "not-json"])
def test_a_call_autogen_answers_without_running_a_tool_is_a_refused_tool_span(
        name: str, arguments: str, reason: str, recorded: Any, parallel: bool, instrumented: Any,
        exporter: SnapshotExporter, envelopes: list) -> None:
    """The model calls a tool no workbench has, or ``lookup_order`` with arguments that are not JSON (alone, or
    next to a good call): ``AssistantAgent`` answers it with an error ``FunctionExecutionResult`` and runs no
    tool. It is a refused tool span under the agent: ERROR, ``error.type`` ``reason``, ``otel_agents.tool.denied``,
    its id and arguments, AutoGen's error as the result, zero length; the envelope lists it as failed (and the good
    call as ok). Ground truth: the ``ToolCallExecutionEvent``."""
    from autogen_core import FunctionCall
    from autogen_core.models import CreateResult, RequestUsage

    asked = [FunctionCall(id="c1", name=name, arguments=arguments)]
    if parallel:
        asked.append(FunctionCall(id="c2", name="lookup_order", arguments='{"order_id": "B200"}'))
    first = CreateResult(finish_reason="function_calls", cached=False, usage=RequestUsage(11, 3), content=asked)
    result = asyncio.run(agent_with_tool(client=replay(first, text("sorry"))).run(task="Where is A100?"))
    [told] = [r for m in result.messages if type(m).__name__ == "ToolCallExecutionEvent" for r in m.content
              if r.call_id == "c1"]
    assert told.is_error
    spans = exporter.semantic()
    tools = {s.attributes["gen_ai.tool.call.id"]: s for s in exporter.semantic("tool")}
    assert sorted(tools) == (["c1", "c2"] if parallel else ["c1"]), tree(spans)
    refused = tools["c1"]
    assert refused.name == f"execute_tool {name}" and parent_of(refused, spans).name == "invoke_agent support"
    assert refused.status.name == "ERROR" and refused.attributes["error.type"] == reason, refused.attributes
    assert refused.attributes["otel_agents.tool.denied"] is True
    assert refused.json_attr("gen_ai.tool.call.arguments") == recorded
    assert refused.attributes["gen_ai.tool.call.result"] == told.content == refused.status_description
    assert refused.start_time == refused.end_time
    [env] = envelopes
    assert sorted((c["id"], c["status"]) for c in env["tool_calls"]) == [("c1", "error")] + \
        ([("c2", "ok")] if parallel else [])


def test_arguments_the_tool_rejects_before_it_runs_are_a_refused_call(instrumented: Any, exporter: SnapshotExporter,
                                                                     envelopes: list) -> None:
    """``lookup_order`` called without its ``order_id``: ``run_json`` fails validating the arguments against the
    tool's ``args_type`` and the function never runs; the workbench answers the model with the error. The tool span
    is a refused call: ERROR, ``error.type`` ``validation_error`` (not pydantic's class, kept as its ``exception``
    event), ``otel_agents.tool.denied``, the workbench's answer as result and description. A tool that raises a
    ``ValidationError`` of its own stays an ordinary failure (test below)."""
    ran: list = []

    def lookup(order_id: str) -> str:
        """Look up an order."""
        ran.append(order_id)
        return "shipped"

    agent = AssistantAgent("support", model_client=replay(call("lookup", {"zzz": 1}), text("sorry")), tools=[lookup],
                           reflect_on_tool_use=True)
    result = asyncio.run(agent.run(task="Where is A100?"))
    [told] = [r for m in result.messages if type(m).__name__ == "ToolCallExecutionEvent" for r in m.content]
    assert told.is_error and ran == []
    [tool] = exporter.semantic("tool")
    assert tool.status.name == "ERROR" and tool.attributes["error.type"] == "validation_error", tool.attributes
    assert tool.attributes["otel_agents.tool.denied"] is True
    assert [e[1]["exception.type"] for e in tool.events] == ["pydantic_core._pydantic_core.ValidationError"]
    assert tool.attributes["gen_ai.tool.call.result"] == told.content == tool.status_description
    [env] = envelopes
    assert [(c["id"], c["status"]) for c in env["tool_calls"]] == [("call-1", "error")]


def test_a_tool_raising_its_own_validation_error_is_a_failed_call(instrumented: Any,
                                                                  exporter: SnapshotExporter) -> None:
    """A tool whose body raises a pydantic ``ValidationError`` of another model ran: an ordinary failed call."""
    from pydantic import BaseModel

    class Order(BaseModel):
        order_id: int

    def lookup(order_id: str) -> str:
        """Look up an order."""
        return str(Order(order_id=order_id))

    agent = AssistantAgent("support", model_client=replay(call("lookup", {"order_id": "A1"}), text("sorry")),
                           tools=[lookup], reflect_on_tool_use=True)
    asyncio.run(agent.run(task="Where is A1?"))
    [tool] = exporter.semantic("tool")
    assert tool.attributes["error.type"] == "pydantic_core._pydantic_core.ValidationError"
    assert "otel_agents.tool.denied" not in tool.attributes
