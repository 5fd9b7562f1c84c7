"""A run the Agents SDK stops for a human's approval, for each kind of tool that can ask for it (a function tool's
``needs_approval``, a shell, apply_patch or custom tool's ``needs_approval``, a hosted MCP server's ``mcp_approval_request``),
then resumed from its ``RunState`` with the call approved or rejected: the first run is paused (never an error, no
invented result), the resumed run's tool span is what happened (the tool's result, or what the model is told of a
rejection), every span ends and none is left current.

A computer tool has no approval in the SDK (its ``on_safety_check`` is a callback that answers at once, no
interruption): nothing here to pause."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any, Callable

import pytest

agents = pytest.importorskip("agents")
from agents import Agent, RunConfig, Runner, function_tool  # noqa: E402
from opentelemetry import trace  # noqa: E402
from opentelemetry.trace import StatusCode  # noqa: E402

from tests.exporters.conftest import check  # noqa: E402
from tests.spans import SnapshotExporter, parent_of, tree  # noqa: E402

from .fakes import ScriptedResponses, call, responses_model, say  # noqa: E402

PAUSED = "otel_agents.run.paused"


def _asks_approval(tool_class: str) -> str | None:
    """Why this SDK cannot stop a ``tool_class`` call for approval (``None``: it can), from the SDK itself."""
    names = getattr(getattr(agents, tool_class, None), "__dataclass_fields__", {})
    approval = "needs_approval" if tool_class != "HostedMCPTool" else "on_approval_request"
    return None if approval in names else f"this openai-agents has no {tool_class}.{approval}"


@dataclass
class Kind:
    """One kind of tool: ``tool(ran)`` makes it (each run of it goes into ``ran``), ``item`` is the model's
    output item calling it, ``output`` reads what the model was told of the call from a request's input."""

    name: str
    tool: Callable[[list], Any]
    item: dict
    output: Callable[[dict], Any] | None  # None: the model's server runs the tool (no tool span of ours)


def _function(ran: list) -> Any:
    @function_tool(needs_approval=True)
    def refund(order_id: str) -> str:
        """Refund an order."""
        ran.append(order_id)
        return "refunded"

    return refund


def _shell(ran: list) -> Any:
    def execute(request: Any) -> str:
        ran.append(request.data.action.commands)
        return "total 0"

    return agents.ShellTool(executor=execute, needs_approval=True)


def _apply_patch(ran: list) -> Any:
    class Editor:
        def create_file(self, operation: Any) -> str:
            ran.append(operation.path)
            return "created notes.txt"

        update_file = delete_file = create_file

    return agents.ApplyPatchTool(editor=Editor(), needs_approval=True)


def _custom(ran: list) -> Any:
    def grep(_ctx: Any, text: str) -> str:
        ran.append(text)
        return "2 matches"

    return agents.CustomTool(name="grep", description="Search the notes.", on_invoke_tool=grep, needs_approval=True)


def _hosted_mcp(ran: list) -> Any:
    return agents.HostedMCPTool(tool_config={"type": "mcp", "server_label": "tracker", "require_approval": "always",
                                             "server_url": "https://mcp.invalid/sse"})


def _shell_output(item: dict) -> Any:
    [out] = item["output"]
    return out["stdout"] or out["stderr"]


KINDS = {
    "function": (Kind("refund", _function, call(("refund", {"order_id": "A1"}))["output"][0],
                      lambda item: item["output"]), None),
    "shell": (Kind("shell", _shell, {"type": "shell_call", "id": "sh_1", "call_id": "call_sh", "status": "completed",
                                     "action": {"commands": ["ls"]}}, _shell_output), _asks_approval("ShellTool")),
    "apply_patch": (Kind("apply_patch", _apply_patch,
                         {"type": "apply_patch_call", "id": "ap_1", "call_id": "call_ap", "status": "completed",
                          "operation": {"type": "create_file", "path": "notes.txt", "diff": "+hello"}},
                         lambda item: item["output"]), _asks_approval("ApplyPatchTool")),
    "custom": (Kind("grep", _custom, {"type": "custom_tool_call", "id": "ct_1", "call_id": "call_ct", "name": "grep",
                                      "input": "TODO"}, lambda item: item["output"]), _asks_approval("CustomTool")),
    "hosted_mcp": (Kind("create_issue", _hosted_mcp,
                        {"type": "mcp_approval_request", "id": "mcpr_1", "name": "create_issue",
                         "arguments": json.dumps({"title": "x"}), "server_label": "tracker"}, None),
                   _asks_approval("HostedMCPTool")),
}
# A function tool approved and resumed is test_cases.test_an_approved_tool_runs_and_is_not_paused.
CASES = [(k, d) for k in KINDS for d in ("approve", "reject") if (k, d) != ("function", "approve")]


def _kind(name: str) -> Kind:
    kind, missing = KINDS[name]
    if missing:
        pytest.skip(missing)
    return kind


def _setup(name: str) -> tuple[Kind, list, ScriptedResponses, Agent]:
    kind = _kind(name)
    ran: list = []
    handler = ScriptedResponses([{"output": [kind.item]}, say("Finished.")])
    agent = Agent(name="dev", instructions="x", model=responses_model(handler), tools=[kind.tool(ran)])
    return kind, ran, handler, agent


def _told(handler: ScriptedResponses, kind: Kind) -> Any:
    """What the model was told of the call in its last request: the call's output item (or the MCP approval
    response)."""
    call_id = kind.item.get("call_id")
    [item] = [i for i in handler.requests[-1]["input"] if isinstance(i, dict) and i.get("type", "").endswith(
        ("_output", "mcp_approval_response")) and i.get("call_id", i.get("approval_request_id")) in (
        call_id, kind.item["id"])]
    return item


def _assert_paused(exporter: SnapshotExporter, kind: Kind) -> None:
    tools, [agent_span] = exporter.semantic("tool"), exporter.semantic("agent")
    paused = [agent_span]
    if kind.output is not None:  # a tool we run: its span, under the agent, paused with no result
        [tool] = tools
        assert parent_of(tool, exporter.spans) is agent_span, tree(exporter.semantic())
        assert tool.attributes["gen_ai.tool.name"] == kind.name
        assert "gen_ai.tool.call.result" not in tool.attributes and "output.value" not in tool.attributes
        paused.append(tool)
    else:
        assert tools == [], tree(exporter.semantic())  # the model's server would run it: no tool span
    for span in paused:
        assert span.attributes.get(PAUSED) is True, span.name
        assert span.status != StatusCode.ERROR, span.name
    assert all(s.end_time for s in exporter.spans)
    assert not trace.get_current_span().get_span_context().is_valid


def _run(mode: str, agent: Agent, given: Any, **kwargs: Any) -> Any:
    """The result of one run of ``agent`` on ``given`` (a prompt or a ``RunState``): ``run_sync``, or
    ``run_streamed`` consumed to the end."""
    if mode == "run_sync":
        return Runner.run_sync(agent, given, **kwargs)

    async def streamed() -> Any:
        result = Runner.run_streamed(agent, given, **kwargs)
        async for _ in result.stream_events():
            pass
        return result

    return asyncio.run(streamed())


@pytest.mark.parametrize("mode", ["run_sync", "run_streamed"])
@pytest.mark.parametrize("name,decision", CASES)
def test_a_call_awaiting_approval_pauses_then_resumes(instrumented: Any, exporter: SnapshotExporter,
                                                      envelopes: list, name: str, decision: str,
                                                      mode: str) -> None:
    """The model calls a tool that needs a human's approval: the run returns with ``interruptions``, the tool not
    run, the tool span (where we run the tool) and the agent span paused, not errors, no result invented; the
    envelope is ``paused``. Resumed from the run's state with the call approved, the tool runs and its span has its
    result; rejected, its span's result is what the SDK tells the model (the rejection message given); neither
    paused, and that run's envelope is done."""
    kind, ran, handler, agent = _setup(name)
    first = _run(mode, agent, "Do it")
    assert first.final_output is None and ran == []
    assert [i.tool_name for i in first.interruptions] == [kind.name]
    _assert_paused(exporter, kind)
    [env] = check(envelopes)
    assert env["status"] == "paused" and env["public_output"] is None
    assert any(line.strip().startswith("paused ") for line in env["evaluation_context"].splitlines())

    before = {s.span_id for s in exporter.spans}
    state = first.to_state()
    if decision == "approve":
        state.approve(first.interruptions[0])
    else:
        state.reject(first.interruptions[0], rejection_message=f"no {kind.name} today")
    resumed = _run(mode, agent, state)
    assert resumed.final_output == "Finished." and not resumed.interruptions
    assert (ran != []) is (decision == "approve" and kind.output is not None)
    spans = [s for s in exporter.semantic() if s.span_id not in before]
    tools, [agent_span] = [s for s in spans if s.semantic_kind == "tool"], \
        [s for s in spans if s.semantic_kind == "agent"]
    [root] = [s for s in spans if s.parent_id is None]  # the resumed run: one tree, its own workflow span
    assert root.name == "invoke_workflow Agent workflow" and parent_of(agent_span, spans) is root, tree(spans)
    told = _told(handler, kind)
    if kind.output is None:  # hosted MCP: the model's server runs it (or not) on the approval response
        assert tools == [] and told["approve"] is (decision == "approve"), tree(spans)
    else:
        [tool] = tools
        # Under the agent, or the run where the SDK settles the call before the agent's span opens (0.20)
        assert parent_of(tool, spans) in (agent_span, root), tree(spans)
        assert tool.attributes["gen_ai.tool.name"] == kind.name
        assert tool.attributes["gen_ai.tool.call.result"] == kind.output(told)
        if decision == "reject":  # (the SDK's shell and apply_patch spans say no call id: only a rejection's has it)
            assert kind.output(told) == f"no {kind.name} today"
            assert tool.attributes["gen_ai.tool.call.id"] == kind.item["call_id"]
        assert tool.status != StatusCode.ERROR
    for span in spans:
        assert PAUSED not in span.attributes, span.name
    assert all(s.end_time for s in exporter.spans)
    assert not trace.get_current_span().get_span_context().is_valid
    assert [e["status"] for e in check(envelopes)][1:] == ["done"]


def test_a_rejected_call_keeps_its_message_back_without_sensitive_data(instrumented: Any,
                                                                       exporter: SnapshotExporter) -> None:
    """``trace_include_sensitive_data=False``: the shell call waiting for approval is still paused, and its
    rejection, resumed, is a tool span with the call's id and no result (the message is content the SDK keeps
    back)."""
    kind, ran, handler, agent = _setup("shell")
    config = RunConfig(trace_include_sensitive_data=False)
    first = Runner.run_sync(agent, "Do it", run_config=config)
    _assert_paused(exporter, kind)
    state = first.to_state()
    state.reject(first.interruptions[0], rejection_message="no shell today")
    before = {s.span_id for s in exporter.spans}
    assert Runner.run_sync(agent, state, run_config=config).final_output == "Finished." and ran == []
    [tool] = [s for s in exporter.semantic("tool") if s.span_id not in before]
    assert tool.attributes["gen_ai.tool.call.id"] == "call_sh" and PAUSED not in tool.attributes
    assert "gen_ai.tool.call.result" not in tool.attributes and "output.value" not in tool.attributes
    assert "no shell today" not in json.dumps([dict(s.attributes) for s in exporter.spans])


def test_a_call_its_on_approval_rejects_has_the_rejection_as_its_result(instrumented: Any,
                                                                        exporter: SnapshotExporter) -> None:
    """A shell tool whose ``on_approval`` rejects the call at once: no interruption, nothing paused; the tool
    span (the SDK's, which records no output for it) has what the model is told, the rejection's reason."""
    _kind("shell")
    ran: list = []
    tool = _shell(ran)
    tool.on_approval = lambda _ctx, _item: {"approve": False, "reason": "not on prod"}
    handler = ScriptedResponses([{"output": [KINDS["shell"][0].item]}, say("Finished.")])
    agent = Agent(name="dev", instructions="x", model=responses_model(handler), tools=[tool])
    assert Runner.run_sync(agent, "Do it").final_output == "Finished." and ran == []
    [span] = exporter.semantic("tool")
    assert span.attributes["gen_ai.tool.call.result"] == _shell_output(_told(handler, KINDS["shell"][0])) \
        == "not on prod"
    for s in exporter.semantic():
        assert PAUSED not in s.attributes, s.name
