"""The Claude Agent SDK's own cases: the real SDK over the fake CLI (:mod:`.fake_cli`), through the real
subprocess transport (``cli_path``) and, for edge cases, the in-process transport. Ground truth is what the
fake sent: the messages the caller received (message ids, tool ids) and the ``ResultMessage`` totals."""

from __future__ import annotations

import asyncio
import gc
import json
import os
import re
import subprocess
import sys
from typing import Any

import claude_agent_sdk as sdk
import pytest
from opentelemetry import trace

import otel_agents
from tests.exporters.conftest import check
from tests.spans import SnapshotExporter, parent_of, tree

from .conftest import collect, in_process, support_server
from .fake_cli import MODEL, SESSION, FakeCLI

REFUND_VIA_EXPERT = "Can I get a refund for order A100? Please ask the policy expert."


def _one(spans: list, name: str) -> Any:
    found = [s for s in spans if s.name == name]
    assert len(found) == 1, (name, [s.name for s in spans])
    return found[0]


def _result(messages: list) -> sdk.ResultMessage:
    return next(m for m in messages if isinstance(m, sdk.ResultMessage))


def _responses(messages: list) -> set[tuple[str | None, str]]:
    """(parent_tool_use_id, message id) of every API response the caller saw."""
    return {(m.parent_tool_use_id, m.message_id) for m in messages if isinstance(m, sdk.AssistantMessage)}


def test_query_through_the_cli_builds_the_span_tree(instrumented: Any, exporter: SnapshotExporter,
                                                    cli_path: str) -> None:
    """query() over the real subprocess transport: one agent span; one model span per API response (not per
    frame: every response came as 2 frames); one tool span per tool_use id; the subagent under its Agent tool
    span; usage per call that adds up to the result's modelUsage; cost and session id on the agent span."""
    messages = asyncio.run(collect(REFUND_VIA_EXPERT, cli_path=cli_path, system_prompt="You are support."))
    result = _result(messages)
    assert not any(isinstance(m, sdk.StreamEvent) for m in messages), "partial messages we turned on leaked"
    spans = exporter.semantic()
    assert sorted((s.name, parent_of(s, spans).name if parent_of(s, spans) else "") for s in spans if
                  s.semantic_kind != "model") == [
        ("execute_tool Agent", "invoke_agent claude"),
        ("execute_tool check_refund_policy", "invoke_agent policy-expert"),
        ("execute_tool lookup_order", "invoke_agent claude"),
        ("invoke_agent claude", ""),
        ("invoke_agent policy-expert", "execute_tool Agent"),
    ], tree(spans)
    models = exporter.semantic("model")
    assert {(parent_of(s, spans).name, s.attributes["gen_ai.response.id"]) for s in models} == {
        ("invoke_agent claude" if thread is None else "invoke_agent policy-expert", mid)
        for thread, mid in _responses(messages)}
    assert len(models) == len(_responses(messages)) == 5
    for s in models:
        assert s.name == f"chat {MODEL}"
        assert s.attributes["gen_ai.provider.name"] == "anthropic"
        assert s.attributes["gen_ai.usage.output_tokens"] > 1  # the true count, not the frames' snapshot
    usage = result.model_usage[MODEL]
    assert sum(s.attributes["gen_ai.usage.output_tokens"] for s in models) == usage["outputTokens"]
    assert sum(s.attributes["gen_ai.usage.input_tokens"] for s in models) == \
        usage["inputTokens"] + usage["cacheReadInputTokens"] + usage["cacheCreationInputTokens"]
    main = [s for s in models if parent_of(s, spans).name == "invoke_agent claude"]
    assert sum(s.attributes["gen_ai.usage.output_tokens"] for s in main) == result.usage["output_tokens"]

    agent = _one(spans, "invoke_agent claude")
    assert agent.attributes["llm.cost.total"] == result.total_cost_usd
    assert agent.attributes["session.id"] == result.session_id == SESSION
    assert agent.attributes["claude_agent_sdk.num_turns"] == result.num_turns == 3
    assert agent.attributes["claude_agent_sdk.terminal_reason"] == "completed"
    assert json.loads(agent.attributes["claude_agent_sdk.result.usage"]) == {"usage": result.usage,
                                                                            "modelUsage": result.model_usage}
    assert agent.attributes["output.value"] == result.result
    assert agent.attributes["input.value"] == REFUND_VIA_EXPERT
    assert agent.status.name == "UNSET"
    assert all(s.attributes.get("session.id") == SESSION for s in spans)

    delegation = _one(spans, "execute_tool Agent")
    assert delegation.attributes["otel_agents.handoff.target"] == "policy-expert"
    expert = _one(spans, "invoke_agent policy-expert")
    assert expert.attributes["otel_agents.agent.parent"] == "claude"
    assert expert.attributes["otel_agents.task.id"] == "task_1"
    lookup = _one(spans, "execute_tool lookup_order")
    tool_uses = {b.id: b for m in messages if isinstance(m, sdk.AssistantMessage) for b in m.content
                 if isinstance(b, sdk.ToolUseBlock)}
    assert tool_uses[lookup.attributes["gen_ai.tool.call.id"]].name == "mcp__support__lookup_order"
    assert lookup.attributes["gen_ai.tool.name"] == "lookup_order"  # the MCP server's name for it
    assert lookup.attributes["mcp.method.name"] == "tools/call"
    assert json.loads(lookup.attributes["gen_ai.tool.call.arguments"]) == {"order_id": "A100"}
    assert '"A100"' in lookup.attributes["gen_ai.tool.call.result"]

    first = min(models, key=lambda s: s.start_time)
    assert json.loads(first.attributes["gen_ai.system_instructions"]) == [{"type": "text", "content": "You are support."}]
    assert [t["name"] for t in json.loads(first.attributes["gen_ai.tool.definitions"])] == \
        ["Agent", "mcp__support__lookup_order"]  # what the CLI's init listed
    output = json.loads(first.attributes["gen_ai.output.messages"])
    assert [p["type"] for p in output[0]["parts"]] == ["text", "tool_call"]
    assert first.attributes["gen_ai.response.finish_reasons"] == ("tool_call",)
    last = max(main, key=lambda s: s.start_time)
    assert [p["type"] for p in json.loads(last.attributes["gen_ai.output.messages"])[0]["parts"]] == \
        ["reasoning", "text"]
    assert "sig" not in last.attributes["gen_ai.output.messages"]  # the thinking signature is never recorded
    assert all(s.end_time for s in exporter.spans)


def test_the_run_folds_to_an_envelope_whose_usage_is_the_results(instrumented: Any, envelopes: list,
                                                                 cli_path: str) -> None:
    """The ECP envelope: valid; usage = the result's modelUsage (subagent included); every tool call once;
    the subagent delegated by the main agent."""
    messages = asyncio.run(collect(REFUND_VIA_EXPERT, cli_path=cli_path))
    result = _result(messages)
    [env] = check(envelopes)
    usage = result.model_usage[MODEL]
    assert env["usage"]["output_tokens"] == usage["outputTokens"]
    assert env["usage"]["input_tokens"] == usage["inputTokens"] + usage["cacheReadInputTokens"]
    assert env["public_output"] == result.result
    assert sorted(c["name"] for c in env["tool_calls"]) == ["Agent", "check_refund_policy", "lookup_order"]
    assert env["metrics"]["model_calls"] == 5
    assert env["metrics"]["cost_usd"] == result.total_cost_usd  # the CLI's own figure, not a re-pricing
    assert {(a["name"], a["parent"]) for a in env["agents"]} == {("claude", None), ("policy-expert", "claude")}


def test_an_sdk_mcp_tool_call_has_one_name_in_the_evidence_and_the_graders(instrumented: Any, envelopes: list,
                                                                          exporter: SnapshotExporter,
                                                                          cli_path: str) -> None:
    """An SDK MCP tool, which the model calls ``mcp__support__lookup_order`` (what its model span records) and
    its tool span names as the server does (``gen_ai.tool.name`` = ``lookup_order``, ``mcp.method.name`` =
    ``tools/call``): the envelope names the call ``lookup_order`` everywhere a grader looks, on the model line
    (``calls=``) as on the tool line and in ``tool_calls``, so the customer-support manifest's ``tool_usage``
    grader and a ``text_match`` on the model line that requested it both pass on this correct run (before, the
    model line said ``calls=mcp__support__lookup_order``: a grader of the turn's calls failed)."""
    from ecp_runtime.graders import check_text_match, check_tool_usage
    from ecp_runtime.manifest import GraderConfig

    asyncio.run(collect(REFUND_VIA_EXPERT, cli_path=cli_path))
    [env] = check(envelopes)
    lines = [line.strip() for line in env["evaluation_context"].splitlines()]
    assert "calls=mcp__" not in env["evaluation_context"], lines
    graders = [{"type": "tool_usage", "tool_name": "lookup_order", "arguments": {"order_id": "A100"}},
               {"type": "tool_usage", "tool_name": "check_refund_policy", "arguments": {"order_id": "A100"}},
               {"type": "text_match", "field": "evaluation_context", "condition": "regex",
                "pattern": r"calls=lookup_order\n\s*tool lookup_order args=\{\"order_id\":\"A100\"\} status=ok"},
               {"type": "text_match", "field": "evaluation_context", "condition": "regex",
                "pattern": r"calls=check_refund_policy\n\s*tool check_refund_policy "}]
    for grader in graders:
        config = GraderConfig(**grader)
        passed, why = (check_tool_usage(config, env["tool_calls"]) if config.type == "tool_usage"
                       else check_text_match(config, env["evaluation_context"]))
        assert passed, (grader, why, lines)
    requested = [json.loads(s.attributes["gen_ai.output.messages"]) for s in exporter.semantic("model")]
    assert "mcp__support__lookup_order" in [p["name"] for m in requested for msg in m for p in msg["parts"]
                                            if p["type"] == "tool_call"]  # the model span: what the model called


def test_partials_the_user_asked_for_are_kept(instrumented: Any, exporter: SnapshotExporter, cli_path: str) -> None:
    """With include_partial_messages set by the user, the StreamEvents reach the caller as without us."""
    messages = asyncio.run(collect("Where is order A100?", cli_path=cli_path, include_partial_messages=True))
    assert sum(isinstance(m, sdk.StreamEvent) for m in messages) == 6  # 3 events x 2 responses
    assert [s.attributes["gen_ai.usage.output_tokens"] > 1 for s in exporter.semantic("model")] == [True, True]


def test_stream_usage_off_reports_no_output_tokens(instrument: Any, exporter: SnapshotExporter,
                                                   cli_path: str) -> None:
    """stream_usage=False: the CLI runs as the user configured it, and model spans record the input counts but
    no output count (the frames' 0-1 snapshot is not the response's count)."""
    instrument(stream_usage=False)
    asyncio.run(collect("Where is order A100?", cli_path=cli_path))
    models = exporter.semantic("model")
    assert len(models) == 2
    for s in models:
        assert "gen_ai.usage.output_tokens" not in s.attributes
        assert s.attributes["gen_ai.usage.input_tokens"] > 100
        assert "gen_ai.response.finish_reasons" not in s.attributes  # the frames carry none


def test_tool_error_and_permission_denial_are_distinct(instrumented: Any, exporter: SnapshotExporter,
                                                       cli_path: str) -> None:
    """A tool whose handler raises: ERROR tool_error. A call can_use_tool denies: ERROR permission_denied with
    otel_agents.tool.denied, cross-checked against the result's permission_denials."""

    async def deny_policy(name: str, args: dict, ctx: Any) -> Any:
        if name.endswith("check_refund_policy"):
            return sdk.PermissionResultDeny(message="policy checks need a human")
        return sdk.PermissionResultAllow()

    async def prompt() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": "Can I get a refund for order A100?"}}

    messages = asyncio.run(collect(prompt(), cli_path=cli_path, can_use_tool=deny_policy,
                                   mcp_servers={"support": support_server(fail={"lookup_order"})}))
    result = _result(messages)
    lookup = _one(exporter.semantic(), "execute_tool lookup_order")
    assert lookup.status.name == "ERROR" and lookup.attributes["error.type"] == "tool_error"
    assert "lookup_order is down" in lookup.attributes["gen_ai.tool.call.result"]
    assert "otel_agents.tool.denied" not in lookup.attributes
    policy = _one(exporter.semantic(), "execute_tool check_refund_policy")
    assert policy.status.name == "ERROR" and policy.attributes["error.type"] == "permission_denied"
    assert policy.attributes["otel_agents.tool.denied"] is True
    assert [d["tool_use_id"] for d in result.permission_denials] == [policy.attributes["gen_ai.tool.call.id"]]
    agent = _one(exporter.semantic(), "invoke_agent claude")
    assert agent.attributes["claude_agent_sdk.permission_denials"] == 1
    assert agent.status.name == "UNSET"  # the run itself succeeded
    spans = exporter.semantic()
    decisions = {(s.name, parent_of(s, spans).name, s.attributes["claude_agent_sdk.permission.decision"])
                 for s in spans if s.name.startswith("permission ")}
    assert decisions == {("permission mcp__support__lookup_order", "execute_tool lookup_order", "allow"),
                         ("permission mcp__support__check_refund_policy", "execute_tool check_refund_policy", "deny")}


def test_a_denial_the_cli_decides_itself_is_a_denial(instrumented: Any, exporter: SnapshotExporter,
                                                     cli_path: str) -> None:
    """Issue 41: ``permission_mode="dontAsk"`` — the CLI denies the tool that is not pre-approved without asking
    anyone, so the tool_result alone looks like a failure. The tool span is ERROR permission_denied with
    otel_agents.tool.denied (from the result's permission_denials, the same tool_use id); a tool that really
    failed in the same turn stays tool_error; the tool spans end when their results came, not at the result."""

    async def prompt() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": "Can I get a refund for order A100?"}}

    messages = asyncio.run(collect(prompt(), cli_path=cli_path, permission_mode="dontAsk",
                                   allowed_tools=["mcp__support__lookup_order"],
                                   mcp_servers={"support": support_server(fail={"lookup_order"})}))
    result = _result(messages)
    spans = exporter.semantic()
    lookup = _one(spans, "execute_tool lookup_order")
    assert lookup.status.name == "ERROR" and lookup.attributes["error.type"] == "tool_error"
    assert "otel_agents.tool.denied" not in lookup.attributes
    policy = _one(spans, "execute_tool check_refund_policy")
    assert policy.status.name == "ERROR" and policy.attributes["error.type"] == "permission_denied"
    assert policy.attributes["otel_agents.tool.denied"] is True
    assert [d["tool_use_id"] for d in result.permission_denials] == [policy.attributes["gen_ai.tool.call.id"]]
    assert not [s for s in spans if s.name.startswith("permission ")]  # nobody was asked
    models = sorted((s for s in spans if s.name.startswith("chat ")), key=lambda s: s.start_time)
    for tool in (lookup, policy):  # ended at its tool_result: before the model call that read it
        assert tool.end_time <= next(m.start_time for m in models if m.start_time >= tool.start_time)
    agent = _one(spans, "invoke_agent claude")
    assert agent.attributes["claude_agent_sdk.permission_denials"] == 1


def test_a_pre_tool_use_deny_is_a_guardrail(instrumented: Any, provider: Any, exporter: SnapshotExporter,
                                            cli_path: str) -> None:
    """A user PreToolUse hook that denies: a guardrail span under the tool span (the user's hook runs inside
    it), triggered; the tool span is a denial. No hook of our own is registered (the CLI is asked once per
    call, by the user's one callback)."""
    asked: list[str] = []
    app = trace.get_tracer("tests.app", tracer_provider=provider)

    async def guard(hook_input: dict, tool_use_id: str | None, ctx: Any) -> dict:
        asked.append(hook_input["tool_name"])
        with app.start_as_current_span("policy lookup"):
            pass
        return {"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                                       "permissionDecisionReason": "no lookups today"}}

    asyncio.run(collect("Where is order A100?", cli_path=cli_path,
                        hooks={"PreToolUse": [sdk.HookMatcher(matcher=None, hooks=[guard])]}))
    assert asked == ["mcp__support__lookup_order"]
    lookup = _one(exporter.semantic(), "execute_tool lookup_order")
    assert lookup.attributes["otel_agents.guardrail.triggered"] is True
    assert lookup.attributes["error.type"] == "permission_denied"
    hook = _one(exporter.spans, "guardrail PreToolUse")
    assert hook.parent_id == lookup.span_id
    assert hook.attributes["otel_agents.guardrail.triggered"] is True
    assert hook.attributes["openinference.span.kind"] == "GUARDRAIL"
    assert _one(exporter.spans, "policy lookup").parent_id == hook.span_id  # the user's hook runs inside it


def test_the_cli_gets_the_agent_span_as_traceparent(instrumented: Any, exporter: SnapshotExporter, cli_path: str,
                                                    tmp_path: Any) -> None:
    """The SDK puts the current context into the CLI's environment at connect(): it names our agent span. The
    CLI's own telemetry stays as the user left it (off)."""
    seen = tmp_path / "cli-env"
    asyncio.run(collect("Where is order A100?", cli_path=cli_path, env={"FAKE_CLI_TRACEPARENT_FILE": str(seen)}))
    agent = _one(exporter.semantic(), "invoke_agent claude")
    [env] = [json.loads(line) for line in seen.read_text().splitlines()]
    assert env["traceparent"].startswith(f"00-{agent.trace_id:032x}-{agent.span_id:016x}-")
    assert env["telemetry"] is None


@pytest.mark.parametrize(("value", "state"), [(None, "off"), ("1", "on"), ("0", "off")])
def test_doctor_reports_the_cli_telemetry(value: str | None, state: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CODE_ENABLE_TELEMETRY"}
    if value is not None:
        env["CLAUDE_CODE_ENABLE_TELEMETRY"] = value
    out = subprocess.run([sys.executable, "-m", "otel_agents.cli", "doctor"], capture_output=True, text=True,
                         env=env, check=True).stdout
    [line] = [line for line in out.splitlines() if "Claude Code CLI telemetry" in line]
    assert f"telemetry {state}" in line and f"CLAUDE_CODE_ENABLE_TELEMETRY={value or '<unset>'}" in line


def test_using_session_wins_over_the_cli_session(instrumented: Any, exporter: SnapshotExporter) -> None:
    with otel_agents.using_session("caller-42"):
        asyncio.run(collect("Where is order A100?", transport=in_process()))
    assert {s.attributes.get("session.id") for s in exporter.semantic()} == {"caller-42"}


def test_early_break_ends_every_span_as_abandoned(instrumented: Any, exporter: SnapshotExporter) -> None:
    """The caller stops iterating before the result (the CLI is still in a tool call): the agent span and the
    open tool span end as abandoned, not as errors, and nothing is left current."""

    async def main() -> None:
        stream = sdk.query(prompt="Where is order A100? Take it slow.", transport=in_process(),
                           options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}))
        async for message in stream:
            if isinstance(message, sdk.AssistantMessage) and any(isinstance(b, sdk.ToolUseBlock)
                                                                 for b in message.content):
                break
        await stream.aclose()

    asyncio.run(main())
    spans = exporter.semantic()
    assert {s.semantic_kind for s in spans} >= {"agent", "model"}
    assert all(s.end_time for s in exporter.spans)
    for name in ("invoke_agent claude", "execute_tool lookup_order"):
        span = _one(spans, name)
        assert span.attributes["otel_agents.stream.abandoned"] is True, name
        assert span.status.name == "UNSET"
    assert not trace.get_current_span().get_span_context().is_valid


@pytest.mark.parametrize("leave_at", ["result", "first message"])
def test_a_query_dropped_in_asyncio_run_still_exports_its_agent_span(instrumented: Any, exporter: SnapshotExporter,
                                                                    cli_path: str, leave_at: str) -> None:
    """``async for m in query(...): ... break`` in ``asyncio.run`` over the real subprocess transport, the stream
    never closed by the caller: the loop's shutdown closes the SDK's generators beside ours and never finishes
    ours (the SDK logs "aclose(): asynchronous generator is already running"). The agent span still ends and is
    exported: a run left after its result as the run it was, one left at its first message as abandoned."""
    messages: list = []

    async def main() -> None:
        async for message in sdk.query(prompt="Where is order A100?", options=sdk.ClaudeAgentOptions(
                cli_path=cli_path, mcp_servers={"support": support_server()})):
            messages.append(message)
            if leave_at == "first message" or isinstance(message, sdk.ResultMessage):
                break

    asyncio.run(main())
    spans = exporter.semantic()
    agent = _one(spans, "invoke_agent claude")
    assert all(s.end_time for s in exporter.spans)
    assert agent.status.name == "UNSET"
    if leave_at == "result":
        assert agent.attributes["output.value"] == _result(messages).result
        assert "otel_agents.stream.abandoned" not in agent.attributes
    else:
        assert agent.attributes["otel_agents.stream.abandoned"] is True
    assert not trace.get_current_span().get_span_context().is_valid


def test_cli_error_result_then_exit_fails_the_run(instrumented: Any, exporter: SnapshotExporter) -> None:
    """An error result and a non-zero exit: the caller gets the SDK's ResultError unchanged; the agent span is
    ERROR with the result's subtype and errors."""
    with pytest.raises(sdk.ResultError) as raised:
        asyncio.run(collect("crash please, A100", transport=in_process()))
    assert "the API is down" in str(raised.value)
    agent = _one(exporter.semantic(), "invoke_agent claude")
    assert agent.status.name == "ERROR"
    assert agent.attributes["error.type"] == "error_during_execution"
    assert "the API is down" in agent.status_description


@pytest.mark.parametrize("ending", ["vanish", "killed"])
@pytest.mark.parametrize("entry", ["query", "client"])
def test_a_cli_that_ends_without_a_result_fails_the_run(instrumented: Any, exporter: SnapshotExporter,
                                                        cli_path: str, entry: str, ending: str) -> None:
    """The CLI's process ends in the middle of a turn, once its model has asked for a tool and before the
    response's message_delta, with no result: it exits with status 0 (the SDK's iterators just end: no
    ResultMessage, no exception) or is killed (the SDK raises ProcessError, which reaches the caller unchanged).
    The run did not complete and its spans say so: the agent span, the tool call in flight and the cut-off
    response are ERROR, error.type = the SDK's exception, else ``no_result`` (the response: ``stream_incomplete``,
    as any model stream cut before its terminal event; before, ``no_result``); not abandoned (no one walked away)
    and not UNSET. The cut-off response reports no output tokens or finish reason (none came). Before, query()'s
    spans ended UNSET with no mark when the iterator just ended, and a ClaudeSDKClient's turn ended abandoned at
    disconnect either way."""
    raised: list[BaseException] = []
    received: list[Any] = []

    async def main() -> None:
        question = f"Where is order A100? {ending} now."
        try:
            if entry == "query":
                received.extend(await collect(question, cli_path=cli_path))
                return
            options = sdk.ClaudeAgentOptions(cli_path=cli_path, mcp_servers={"support": support_server()})
            async with sdk.ClaudeSDKClient(options=options) as client:
                await client.query(question)
                received.extend([m async for m in client.receive_response()])
        except sdk.ProcessError as exc:
            raised.append(exc)

    asyncio.run(main())
    assert [type(e) for e in raised] == ([sdk.ProcessError] if ending == "killed" else [])
    assert received == [] or not any(isinstance(m, sdk.ResultMessage) for m in received)
    expected = f"{sdk.ProcessError.__module__}.ProcessError" if ending == "killed" else "no_result"
    spans = exporter.semantic()
    for name in ("invoke_agent claude", "execute_tool lookup_order", f"chat {MODEL}"):
        span = _one(spans, name)
        error_type = "stream_incomplete" if name.startswith("chat ") and ending == "vanish" else expected
        assert (span.status.name, span.attributes.get("error.type")) == ("ERROR", error_type), (name, tree(spans))
        assert "otel_agents.stream.abandoned" not in span.attributes, name
    model = _one(spans, f"chat {MODEL}")
    assert model.attributes["gen_ai.usage.input_tokens"] == 12  # what message_start said
    assert "gen_ai.usage.output_tokens" not in model.attributes
    assert "gen_ai.response.finish_reasons" not in model.attributes
    assert all(s.end_time for s in exporter.spans)
    assert not trace.get_current_span().get_span_context().is_valid


def test_a_query_the_sdk_cannot_start_ends_its_span(instrumented: Any, exporter: SnapshotExporter) -> None:
    """InternalClient.process_query given an argument it does not take: the caller gets the TypeError unchanged
    when it iterates, and the run's agent span ends, ERROR with it (before, it was never ended)."""
    from claude_agent_sdk._internal.client import InternalClient

    async def main() -> None:
        async for _ in InternalClient().process_query(prompt="Where is order A100?",
                                                      options=sdk.ClaudeAgentOptions(), not_an_argument=1):
            pass

    with pytest.raises(TypeError, match="not_an_argument"):
        asyncio.run(main())
    agent = _one(exporter.semantic(), "invoke_agent claude")
    assert (agent.status.name, agent.attributes["error.type"]) == ("ERROR", "TypeError")
    assert not trace.get_current_span().get_span_context().is_valid


def test_concurrent_queries_reusing_tool_ids_stay_apart(instrumented: Any, exporter: SnapshotExporter) -> None:
    """Two queries at once whose CLIs use the same message and tool ids: two traces, each complete."""

    async def main() -> None:
        await asyncio.gather(collect("Where is order A100?", transport=in_process()),
                             collect("Where is order A200?", transport=in_process()))

    asyncio.run(main())
    spans = exporter.semantic()
    traces: dict[int, list] = {}
    for s in spans:
        traces.setdefault(s.trace_id, []).append(s)
    assert len(traces) == 2
    for group in traces.values():
        assert sorted(s.semantic_kind for s in group) == ["agent", "model", "model", "tool"], tree(group)
        [tool] = [s for s in group if s.semantic_kind == "tool"]
        assert parent_of(tool, group).semantic_kind == "agent"
    assert {json.loads(s.attributes["gen_ai.tool.call.arguments"])["order_id"] for s in exporter.semantic("tool")} \
        == {"A100", "A200"}


def test_client_turns_and_an_interrupt(instrumented: Any, exporter: SnapshotExporter) -> None:
    """ClaudeSDKClient: each query() up to its result is one agent run; an interrupted turn ends as
    interrupted (control flow), not ERROR, with its open tool span; one session id throughout."""

    async def main() -> None:
        options = sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()})
        async with sdk.ClaudeSDKClient(options=options, transport=in_process()) as client:
            await client.query("Where is order A100?")
            async for _ in client.receive_response():
                pass
            await client.query("Where is order A200? Take it slow.")
            async for message in client.receive_messages():
                if isinstance(message, sdk.AssistantMessage) and any(isinstance(b, sdk.ToolUseBlock)
                                                                     for b in message.content):
                    await client.interrupt()
                if isinstance(message, sdk.ResultMessage):
                    break

    asyncio.run(main())
    spans = exporter.semantic()
    agents = sorted(exporter.semantic("agent"), key=lambda s: s.start_time)
    assert len(agents) == 2 and len({s.trace_id for s in agents}) == 2
    first, second = agents
    assert first.status.name == "UNSET" and "otel_agents.control_flow" not in first.attributes
    assert second.attributes["otel_agents.control_flow"] == "interrupt"
    assert second.status.name == "UNSET"
    assert second.attributes["claude_agent_sdk.terminal_reason"] == "aborted_tools"
    [slow_tool] = [s for s in exporter.semantic("tool") if s.trace_id == second.trace_id]
    assert slow_tool.status.name == "UNSET" and slow_tool.attributes["otel_agents.control_flow"] == "interrupt"
    assert {s.attributes.get("session.id") for s in spans} == {SESSION}
    assert all(s.end_time for s in exporter.spans)


def test_content_off_records_no_content(instrument: Any, exporter: SnapshotExporter) -> None:
    instrument(capture_content=False)
    asyncio.run(collect("Where is order A100?", transport=in_process()))
    spans = exporter.semantic()
    assert sorted(s.semantic_kind for s in spans) == ["agent", "model", "model", "tool"]
    for s in spans:
        for key in s.attributes:
            assert not key.startswith(("input.", "output.", "gen_ai.input", "gen_ai.output", "llm.input",
                                       "llm.output", "gen_ai.tool.call.arguments", "gen_ai.tool.call.result")), key
    assert all(s.attributes["gen_ai.usage.input_tokens"] > 100 for s in spans if s.semantic_kind == "model")


def test_uninstrument_restores_the_sdk(instrument: Any, exporter: SnapshotExporter) -> None:
    from claude_agent_sdk._internal.client import InternalClient
    from claude_agent_sdk._internal.query import Query

    def patched() -> tuple:
        return (InternalClient.__dict__["process_query"], Query.__dict__["__init__"],
                sdk.ClaudeSDKClient.__dict__["query"], sdk.ClaudeSDKClient.__dict__["receive_messages"])

    originals = patched()
    inst = instrument()
    assert all(now is not before for now, before in zip(patched(), originals))
    inst.uninstrument()
    assert patched() == originals
    messages = asyncio.run(collect("Where is order A100?", transport=in_process()))
    assert _result(messages).subtype == "success"
    assert exporter.semantic() == []


def test_sdk_mcp_server_span_nests_under_the_tool_span(instrument: Any, provider: Any, exporter: SnapshotExporter,
                                                       envelopes: list, cli_path: str) -> None:
    """With our MCP instrumentor on too, the SDK MCP server's tools/call span (the bridge runs the real mcp
    Server) parents on the tool span through params._meta, the handler's own span nests under it, and the
    envelope lists the call once."""
    from otel_agents.instrumentors.mcp import MCPInstrumentor

    app = provider.get_tracer("tests.app")
    mcp = MCPInstrumentor()
    mcp.instrument(tracer_provider=provider)
    try:
        instrument()

        def probe(name: str, args: dict) -> None:
            with app.start_as_current_span(f"db {name}"):
                pass

        asyncio.run(collect("Where is order A100?", cli_path=cli_path,
                            mcp_servers={"support": support_server(probe=probe)}))
    finally:
        mcp.uninstrument()
    spans = exporter.spans
    [tool] = [s for s in spans if s.name == "execute_tool lookup_order" and s.kind == "INTERNAL"]
    server = [s for s in spans if s.parent_id == tool.span_id]
    assert [(s.name, s.kind) for s in server] == [("execute_tool lookup_order", "SERVER")], tree(spans)
    assert tool.kind == "INTERNAL"
    db = _one(spans, "db lookup_order")
    assert db.parent_id == server[0].span_id, tree(spans)
    [env] = check(envelopes)
    assert [c["name"] for c in env["tool_calls"]] == ["lookup_order"]


def test_uninstrument_during_a_session_ends_its_spans(instrument: Any, exporter: SnapshotExporter) -> None:
    """uninstrument() while a ClaudeSDKClient turn is open: its spans end then (abandoned), and the rest of the
    session, a new turn included, makes none."""

    async def main() -> None:
        inst = instrument()
        options = sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()})
        async with sdk.ClaudeSDKClient(options=options, transport=in_process()) as client:
            await client.query("Where is order A100? Take it slow.")
            async for message in client.receive_messages():
                if isinstance(message, sdk.AssistantMessage) and any(isinstance(b, sdk.ToolUseBlock)
                                                                     for b in message.content):
                    break
            inst.uninstrument()
            assert {s.name for s in exporter.semantic()} >= {"invoke_agent claude", "execute_tool lookup_order"}
            ended = len(exporter.spans)
            await client.interrupt()
            async for message in client.receive_messages():
                if isinstance(message, sdk.ResultMessage):
                    break
            await client.query("Where is order A200?")
            async for _ in client.receive_response():
                pass
            assert len(exporter.spans) == ended

    asyncio.run(main())
    agent = _one(exporter.semantic(), "invoke_agent claude")
    assert agent.attributes["otel_agents.stream.abandoned"] is True


class _BackgroundCLI(FakeCLI):
    """The main agent starts ``policy-expert`` in the background (``run_in_background``): the Agent call
    returns at once, the turn ends, then the subagent answers and its task completes."""

    async def turn(self, question: str) -> int:
        self.ch.send({"type": "system", "subtype": "init", "session_id": self.session, "model": MODEL,
                      "tools": ["Agent"], "uuid": self.next_id("uuid")})
        history: list[Any] = [question]
        args = {"description": "audit", "prompt": "Audit order A100.", "subagent_type": "policy-expert",
                "run_in_background": True}
        self.respond(None, [{"type": "tool_use", "id": "toolu_bg", "name": "Agent", "input": args}], history,
                     "tool_use")
        self.ch.send({"type": "system", "subtype": "task_started", "task_id": "task_bg", "tool_use_id": "toolu_bg",
                      "description": "audit", "session_id": self.session, "uuid": self.next_id("uuid")})
        self.tool_result(None, "toolu_bg", "Async agent launched successfully.", False, history)
        self.respond(None, [{"type": "text", "text": "An expert is auditing it."}], history, "end_turn")
        self.ch.send(self.result("An expert is auditing it."))
        self.respond("toolu_bg", [{"type": "text", "text": "A100 is fine."}], ["Audit order A100."], "end_turn")
        self.ch.send({"type": "system", "subtype": "task_notification", "task_id": "task_bg", "status": "completed",
                      "tool_use_id": "toolu_bg", "summary": "done", "output_file": "", "session_id": self.session,
                      "uuid": self.next_id("uuid")})
        return 0


def test_a_background_agent_ends_at_its_own_terminal_state(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A background subagent outlives its Agent call and the turn's result: its span (under the Agent tool span)
    ends at its task's terminal status, with its model call, not at the result."""

    async def main() -> None:
        transport = in_process()
        transport.cli = _BackgroundCLI(transport.channel, transport.argv)
        async with sdk.ClaudeSDKClient(options=sdk.ClaudeAgentOptions(), transport=transport) as client:
            await client.query("Audit A100 in the background.")
            async for _ in client.receive_response():
                pass
            async for message in client.receive_messages():
                if isinstance(message, sdk.TaskNotificationMessage):
                    break

    asyncio.run(main())
    spans = exporter.semantic()
    turn = _one(spans, "invoke_agent claude")
    tool = _one(spans, "execute_tool Agent")
    expert = _one(spans, "invoke_agent policy-expert")
    assert expert.parent_id == tool.span_id and tool.parent_id == turn.span_id
    assert expert.end_time > turn.end_time and expert.status.name == "UNSET"
    assert "otel_agents.stream.abandoned" not in expert.attributes
    [model] = [s for s in exporter.semantic("model") if s.parent_id == expert.span_id]
    assert json.loads(model.attributes["gen_ai.output.messages"])[0]["parts"] == [{"type": "text",
                                                                                  "content": "A100 is fine."}]


class _BudgetCLI(FakeCLI):
    """The CLI ends the run at its ``max_budget_usd`` cap while calls are still running: the model asked for
    ``policy-expert`` (the ``Agent`` tool) and for a Bash command in one response; the subagent asked for a
    lookup; then the budget result, with no ``tool_result`` for any of them."""

    async def turn(self, question: str) -> int:
        self.ch.send({"type": "system", "subtype": "init", "session_id": self.session, "model": MODEL,
                      "tools": ["Agent", "Bash"], "uuid": self.next_id("uuid")})
        history: list[Any] = [question]
        self.respond(None, [{"type": "tool_use", "id": "toolu_agent", "name": "Agent",
                             "input": {"description": "policy", "prompt": "Check A100.",
                                       "subagent_type": "policy-expert"}},
                            {"type": "tool_use", "id": "toolu_bash", "name": "Bash", "input": {"command": "ls"}}],
                     history, "tool_use")
        self.respond("toolu_agent", [{"type": "tool_use", "id": "toolu_sub", "name": "Bash",
                                      "input": {"command": "cat policy.md"}}], ["Check A100."], "tool_use")
        self.ch.send(self.result(None, error="error_max_budget_usd", errors=["Reached maximum budget ($0.01)"]))
        return 0


def test_calls_still_running_at_the_result_were_stopped_not_ok(instrumented: Any, exporter: SnapshotExporter,
                                                               envelopes: list) -> None:
    """The CLI ends the run (here at its budget cap) while tool calls and a subagent are still running: the
    result is all that comes for them. Their spans end at the result marked ``otel_agents.control_flow`` =
    ``stopped`` (never returned: neither a failure of theirs nor a success), so the envelope lists those calls
    as not ok (cancelled) with no result. Before, they ended UNSET with nothing said: the envelope reported
    each call ``ok``, as if it had returned."""

    async def main() -> None:
        transport = in_process()
        transport.cli = _BudgetCLI(transport.channel, transport.argv)
        messages = await collect("Check A100.", transport=transport)
        assert _result(messages).subtype == "error_max_budget_usd"

    asyncio.run(main())
    spans = exporter.semantic()
    turn = _one(spans, "invoke_agent claude")
    assert (turn.status.name, turn.attributes["error.type"]) == ("ERROR", "error_max_budget_usd")
    assert turn.attributes["otel_agents.run.stop_reason"] == "budget"
    assert "otel_agents.control_flow" not in turn.attributes
    expert = _one(spans, "invoke_agent policy-expert")
    tools = exporter.semantic("tool")
    stopped = [expert, *tools]
    assert sorted((t.name, parent_of(t, spans).name) for t in tools) == [
        ("execute_tool Agent", "invoke_agent claude"), ("execute_tool Bash", "invoke_agent claude"),
        ("execute_tool Bash", "invoke_agent policy-expert")], tree(spans)
    for span in stopped:
        assert span.attributes.get("otel_agents.control_flow") == "stopped", (span.name, tree(spans))
        assert span.status.name == "UNSET" and "otel_agents.stream.abandoned" not in span.attributes
    for model in exporter.semantic("model"):  # their responses were whole (finish reason tool_use)
        assert "otel_agents.control_flow" not in model.attributes
    assert all(s.end_time for s in exporter.spans)
    [env] = check(envelopes)
    calls = {c["id"]: c for c in env["tool_calls"]}
    assert set(calls) == {"toolu_agent", "toolu_bash", "toolu_sub"}
    for call in calls.values():
        assert (call["status"], call["result"]) == ("error", None), call
        assert "cancelled" in call["error"], call


class _LimitCLI(FakeCLI):
    """A failed API request as the CLI reports it (its ``-p --output-format stream-json`` output): a synthetic
    assistant message with ``error``, then a result of subtype ``success`` with ``is_error``, the limit's text
    as ``result``, then exit status 1. ``terminal_reason``/``api_error_status``: as the CLI version writes them
    (``None``: left out)."""

    def __init__(self, *args: Any, terminal: str | None, status: int | None) -> None:
        super().__init__(*args)
        self.terminal, self.status = terminal, status

    async def turn(self, question: str) -> int:
        self.ch.send({"type": "system", "subtype": "init", "session_id": self.session, "model": MODEL,
                      "tools": [], "uuid": self.next_id("uuid")})
        text = "You've hit your session limit · resets 4:50pm"
        self.respond(None, [{"type": "text", "text": text}], [question], "stop_sequence", error="rate_limit")
        result = {**self.result(None), "subtype": "success", "is_error": True, "result": text}
        result.pop("terminal_reason")
        result.update({k: v for k, v in (("terminal_reason", self.terminal), ("api_error_status", self.status))
                       if v is not None})
        self.ch.send(result)
        return 1


@pytest.mark.parametrize(("terminal", "status", "expected"), [("api_error", 429, "api_error"),
                                                              (None, 429, "api_error"), (None, None, "error")])
def test_a_failed_api_request_is_not_an_error_of_type_success(instrumented: Any, exporter: SnapshotExporter,
                                                              terminal: str | None, status: int | None,
                                                              expected: str) -> None:
    """The CLI reports a failed API request (a usage limit here) as a result of subtype ``success`` with
    ``is_error``. The agent span is ERROR with ``error.type`` = the result's ``terminal_reason`` (else
    ``api_error`` when it gives the API's HTTP status, else ``error``) and the result's text as description;
    the request's model span is ERROR with the message's own ``error``, named after the requested model, with no
    response model or id (the CLI's stand-in message has model ``<synthetic>``: no model answered). Before,
    ``error.type`` was ``success`` and the model span was ``chat <synthetic>`` with that response model."""

    async def main() -> None:
        transport = in_process()
        transport.cli = _LimitCLI(transport.channel, transport.argv, terminal=terminal, status=status)
        with pytest.raises(sdk.ProcessError):  # exit status 1 after the error result
            await collect("Where is order A100?", transport=transport)

    asyncio.run(main())
    agent = _one(exporter.semantic(), "invoke_agent claude")
    assert (agent.status.name, agent.attributes["error.type"]) == ("ERROR", expected)
    assert agent.status_description.endswith("You've hit your session limit · resets 4:50pm")
    assert agent.attributes.get("http.response.status_code") == status
    assert agent.attributes["claude_agent_sdk.result.subtype"] == "success"  # as the CLI reported it
    [model] = exporter.semantic("model")
    assert (model.status.name, model.attributes["error.type"]) == ("ERROR", "rate_limit")
    # the CLI's stand-in message for the failed request: no model answered it (its model is "<synthetic>")
    assert model.name == f"chat {MODEL}" and model.attributes["gen_ai.request.model"] == MODEL
    assert not {"gen_ai.response.model", "gen_ai.response.id", "gen_ai.usage.input_tokens"} & set(model.attributes)
    assert "<synthetic>" not in json.dumps(dict(model.attributes))


class _MaxTurnsCLI(FakeCLI):
    """The CLI stops at ``max_turns`` right after a response that asked for a tool, with a result of subtype
    ``error_max_turns`` whose ``is_error`` is false, as some CLI versions write it (shapes recorded in public
    fixtures), and no ``terminal_reason``."""

    async def turn(self, question: str) -> int:
        self.ch.send({"type": "system", "subtype": "init", "session_id": self.session, "model": MODEL,
                      "tools": ["Bash"], "uuid": self.next_id("uuid")})
        self.respond(None, [{"type": "tool_use", "id": "toolu_last", "name": "Bash", "input": {"command": "ls"}}],
                     [question], "tool_use")
        result = {**self.result("partial work"), "subtype": "error_max_turns", "is_error": False}
        result.pop("terminal_reason")
        self.ch.send(result)
        return 0


def test_a_cap_the_result_names_is_the_stop_reason_whatever_is_error_says(instrumented: Any,
                                                                           exporter: SnapshotExporter) -> None:
    """A result of subtype ``error_max_turns`` with ``is_error`` false: the run still stopped at its turn cap
    (``otel_agents.run.stop_reason`` ``max_turns``; status as the CLI flagged it), and the tool call it asked
    for never ran (``stopped``). Before, a cap was read only from a result flagged ``is_error``."""

    async def main() -> None:
        transport = in_process()
        transport.cli = _MaxTurnsCLI(transport.channel, transport.argv)
        await collect("List the files.", transport=transport, max_turns=1)

    asyncio.run(main())
    agent = _one(exporter.semantic(), "invoke_agent claude")
    assert agent.attributes["otel_agents.run.stop_reason"] == "max_turns"
    assert agent.status.name == "UNSET"
    assert _one(exporter.semantic(), "execute_tool Bash").attributes["otel_agents.control_flow"] == "stopped"


class _ShellTaskCLI(FakeCLI):
    """The CLI tracks a Bash command as a task of its own (``task_type`` ``local_bash``, as CLI 2.1.x writes it):
    ``task_started`` and ``task_notification`` name the Bash call's ``tool_use_id``, before its ``tool_result``
    (``background``: the command goes on in the background: its result comes at once, the task ends later)."""

    def __init__(self, *args: Any, background: bool) -> None:
        super().__init__(*args)
        self.background = background

    def _task(self, subtype: str, **fields: Any) -> None:
        self.ch.send({"type": "system", "subtype": subtype, "task_id": "bash_1", "tool_use_id": "toolu_sh",
                      "session_id": self.session, "uuid": self.next_id("uuid"), **fields})

    async def turn(self, question: str) -> int:
        self.ch.send({"type": "system", "subtype": "init", "session_id": self.session, "model": MODEL,
                      "tools": ["Bash"], "uuid": self.next_id("uuid")})
        history: list[Any] = [question]
        args = {"command": "sleep 3; echo done", "description": "Sleep 3 seconds then print done",
                **({"run_in_background": True} if self.background else {})}
        self.respond(None, [{"type": "tool_use", "id": "toolu_sh", "name": "Bash", "input": args}], history,
                     "tool_use")
        self._task("task_started", description=args["description"], task_type="local_bash")
        if not self.background:
            self._task("task_notification", status="completed", summary="done", output_file="")
        self.tool_result(None, "toolu_sh", "Command running in background with ID: bash_1" if self.background
                         else "done", False, history)
        self.respond(None, [{"type": "text", "text": "It printed done."}], history, "end_turn")
        self.ch.send(self.result("It printed done."))
        if self.background:
            self._task("task_notification", status="completed", summary="done", output_file="")
        return 0


@pytest.mark.parametrize("background", [False, True])
def test_a_shell_task_is_no_subagent(instrumented: Any, exporter: SnapshotExporter, background: bool) -> None:
    """A Bash command the CLI tracks as a task (``task_started`` with ``task_type`` ``local_bash`` and the Bash
    call's ``tool_use_id``; in the foreground too) is a tool call, not a subagent: one ``execute_tool Bash``
    span ended by its result, no agent span under it. Before, the task opened ``invoke_agent Sleep 3 seconds
    then print done`` under the Bash span (named after the command's description), which the envelope listed as
    a subagent of ``claude``."""

    async def main() -> None:
        transport = in_process()
        transport.cli = _ShellTaskCLI(transport.channel, transport.argv, background=background)
        async with sdk.ClaudeSDKClient(options=sdk.ClaudeAgentOptions(), transport=transport) as client:
            await client.query("Run the sleep.")
            async for _ in client.receive_response():
                pass
            if background:
                async for message in client.receive_messages():
                    if isinstance(message, sdk.TaskNotificationMessage):
                        break

    asyncio.run(main())
    spans = exporter.semantic()
    assert [s.name for s in exporter.semantic("agent")] == ["invoke_agent claude"], tree(spans)
    bash = _one(spans, "execute_tool Bash")
    assert bash.status.name == "UNSET" and parent_of(bash, spans).name == "invoke_agent claude"
    assert all(s.end_time for s in exporter.spans)


class _DeferringCLI(FakeCLI):
    """A ``PreToolUse`` hook answered ``defer`` for the model's ``AskUserQuestion`` call: the CLI stops the run
    with a result carrying ``deferred_tool_use`` (``stop_reason`` ``tool_deferred``) and no ``tool_result``."""

    async def turn(self, question: str) -> int:
        self.ch.send({"type": "system", "subtype": "init", "session_id": self.session, "model": MODEL,
                      "tools": ["AskUserQuestion"], "uuid": self.next_id("uuid")})
        ask = {"questions": [{"question": "Refund to card or store credit?"}]}
        self.respond(None, [{"type": "tool_use", "id": "toolu_ask", "name": "AskUserQuestion", "input": ask}],
                     [question], "tool_use")
        self.ch.send({**self.result(""), "stop_reason": "tool_deferred",
                      "deferred_tool_use": {"id": "toolu_ask", "name": "AskUserQuestion", "input": ask}})
        return 0


def test_a_deferred_tool_call_pauses_the_run(instrumented: Any, exporter: SnapshotExporter, envelopes: list) -> None:
    """A result with ``deferred_tool_use``: the run waits for its caller's decision on that call. The agent span
    and the deferred call's span are paused (``otel_agents.run.paused``), the call not marked ``stopped``: the
    envelope's status is ``paused``."""

    async def main() -> None:
        transport = in_process()
        transport.cli = _DeferringCLI(transport.channel, transport.argv)
        messages = await collect("Refund A100.", transport=transport)
        assert _result(messages).deferred_tool_use.id == "toolu_ask"

    asyncio.run(main())
    agent = _one(exporter.semantic(), "invoke_agent claude")
    ask = _one(exporter.semantic(), "execute_tool AskUserQuestion")
    assert agent.attributes["otel_agents.run.paused"] is True and agent.status.name == "UNSET"
    assert ask.attributes["otel_agents.run.paused"] is True and ask.status.name == "UNSET"
    assert "otel_agents.control_flow" not in ask.attributes
    [env] = check(envelopes)
    assert env["status"] == "paused"


class _HookStopCLI(FakeCLI):
    """A hook answered ``continue: false`` after the model's Bash call ran: the CLI ends the run with a result of
    subtype ``success``, ``is_error`` false, ``terminal_reason`` ``hook_stopped`` and an empty ``result``."""

    async def turn(self, question: str) -> int:
        self.ch.send({"type": "system", "subtype": "init", "session_id": self.session, "model": MODEL,
                      "tools": ["Bash"], "uuid": self.next_id("uuid")})
        history: list[Any] = [question]
        self.respond(None, [{"type": "tool_use", "id": "toolu_sh", "name": "Bash", "input": {"command": "ls"}}],
                     history, "tool_use")
        self.tool_result(None, "toolu_sh", "a.txt", False, history)
        self.ch.send({**self.result(""), "terminal_reason": "hook_stopped"})
        return 0


def test_a_run_a_hook_stopped_says_so(instrumented: Any, exporter: SnapshotExporter, envelopes: list) -> None:
    """``terminal_reason`` ``hook_stopped`` (a hook's ``continue: false``): the run ended other than by its agent
    answering, ``otel_agents.run.stop_reason`` ``termination`` (not an error); before, nothing said so."""

    async def main() -> None:
        transport = in_process()
        transport.cli = _HookStopCLI(transport.channel, transport.argv)
        await collect("List the files.", transport=transport)

    asyncio.run(main())
    agent = _one(exporter.semantic(), "invoke_agent claude")
    assert agent.attributes["otel_agents.run.stop_reason"] == "termination" and agent.status.name == "UNSET"
    [env] = check(envelopes)
    assert env["metrics"]["stop_reason"] == "termination"


class _WakingCLI(_BackgroundCLI):
    """:class:`_BackgroundCLI`, then as the CLI does: the subagent's end wakes the main agent for a follow-up
    turn of its own (no prompt of the caller's), with a second result."""

    async def turn(self, question: str) -> int:
        await super().turn(question)
        self.respond(None, [{"type": "text", "text": "The audit says A100 is fine."}], [question], "end_turn")
        self.ch.send(self.result("The audit says A100 is fine."))
        return 0


def test_a_turn_the_cli_starts_itself_is_a_turn(instrumented: Any, exporter: SnapshotExporter) -> None:
    """The follow-up turn a background subagent's end starts (no prompt of the caller's) gets its own agent span
    on a ClaudeSDKClient, with its model call and the follow-up result as its output: no model call untraced."""

    async def main() -> None:
        transport = in_process()
        transport.cli = _WakingCLI(transport.channel, transport.argv)
        async with sdk.ClaudeSDKClient(options=sdk.ClaudeAgentOptions(), transport=transport) as client:
            await client.query("Audit A100 in the background.")
            async for _ in client.receive_response():
                pass
            async for _ in client.receive_response():  # the follow-up turn, up to its result
                pass

    asyncio.run(main())
    turns = [s for s in exporter.semantic() if s.name == "invoke_agent claude"]
    assert len(turns) == 2, [s.name for s in exporter.semantic()]
    first, follow_up = sorted(turns, key=lambda s: s.start_time)
    expert = _one(exporter.semantic(), "invoke_agent policy-expert")
    assert follow_up.start_time >= first.end_time and follow_up.start_time >= expert.end_time
    assert first.attributes["output.value"] == "An expert is auditing it."
    assert follow_up.attributes["output.value"] == "The audit says A100 is fine."
    [model] = [s for s in exporter.semantic("model") if s.parent_id == follow_up.span_id]
    assert model.start_time >= expert.end_time  # asked once the task that woke it had ended
    assert "otel_agents.stream.abandoned" not in follow_up.attributes and follow_up.status.name == "UNSET"


def _turn_shape(spans: list) -> list[tuple]:
    """One turn's spans as sorted (name, parent's name, kind, status, attributes): what a client connected before
    instrument() must share with one connected after it. The CLI's ids are numbered per process, so they are
    masked; what only partial messages give (output tokens, finish reasons) is left out, and so are the CLI
    process's running totals (they depend on its earlier turns) and the turn's cost (taken from them)."""
    partial_only = ("gen_ai.usage.output_tokens", "llm.token_count.completion", "llm.token_count.total",
                    "gen_ai.response.finish_reasons", "llm.finish_reason", "claude_agent_sdk.result.usage",
                    "llm.cost.total")
    shape = []
    for s in spans:
        parent = parent_of(s, spans)
        attributes = json.dumps({k: v for k, v in s.attributes.items() if k not in partial_only}, sort_keys=True,
                                default=str)
        shape.append((s.name, parent.name if parent else "", s.semantic_kind, s.status.name,
                      re.sub(r'\b(toolu|msg)_\d+|(finish_reason\\":\\")[a-z_]*', r"\1\2#", attributes)))
    return sorted(shape)


def test_a_client_connected_before_instrument_is_traced_from_its_next_turn(instrument: Any, provider: Any,
                                                                          exporter: SnapshotExporter,
                                                                          cli_path: str) -> None:
    """A ClaudeSDKClient connected before instrument() (its SDK reader already iterates the CLI's output) is traced
    from its next turn, with the spans of a client connected after instrument() — its hook, its permission
    callback and its SDK MCP tool handler (a server made before instrument()) nest as they do there; its model
    spans have no output tokens (the CLI was started without partial messages: no false count). uninstrument()
    leaves it untraced; a second instrument() traces it again, and an uninstrument() in the middle of a turn ends
    that turn's spans then (abandoned), nothing made after."""
    app = provider.get_tracer("tests.app")

    def probe(name: str, args: dict) -> None:
        with app.start_as_current_span(f"db {name}"):
            pass

    async def pre_tool_use(hook_input: dict, tool_use_id: str | None, ctx: Any) -> dict:
        with app.start_as_current_span("policy check"):
            return {}

    async def allow(name: str, args: dict, ctx: Any) -> Any:
        return sdk.PermissionResultAllow()

    options = sdk.ClaudeAgentOptions(cli_path=cli_path, mcp_servers={"support": support_server(probe=probe)},
                                     hooks={"PreToolUse": [sdk.HookMatcher(matcher=None, hooks=[pre_tool_use])]},
                                     can_use_tool=allow)
    turns: list[list] = []
    cut: list = []  # every span exported when uninstrument() ended the slow turn

    async def turn(client: Any) -> None:
        before = {s.span_id for s in exporter.spans}
        await client.query("Where is order A100?")
        answers = [m.result async for m in client.receive_response() if isinstance(m, sdk.ResultMessage)]
        assert answers and "A100" in answers[0]
        turns.append([s for s in exporter.spans if s.span_id not in before])

    async def main() -> None:
        async with sdk.ClaudeSDKClient(options=options) as client:
            await turn(client)
            inst = instrument()
            await turn(client)
            inst.uninstrument()
            await turn(client)
            instrument()
            await turn(client)
            await client.query("Where is order A200? Take it slow.")  # waits in its tool call for an interrupt
            async for message in client.receive_messages():
                if isinstance(message, sdk.AssistantMessage) and any(isinstance(b, sdk.ToolUseBlock)
                                                                     for b in message.content):
                    break
            inst.uninstrument()
            cut.extend(exporter.spans)
            await client.interrupt()
            async for message in client.receive_messages():
                if isinstance(message, sdk.ResultMessage):
                    break
            await turn(client)
        instrument()
        async with sdk.ClaudeSDKClient(options=options) as fresh:  # connected after instrument()
            await turn(fresh)

    asyncio.run(main())
    untraced, adopted, uninstrumented, again, after_cut, reference = turns
    for spans in (untraced, uninstrumented, after_cut):  # only the user's own spans, each a root
        assert sorted((s.name, s.parent_id) for s in spans) == [("db lookup_order", None), ("policy check", None)]
    assert sorted((s.name, parent_of(s, reference).name if s.parent_id else "") for s in reference) == [
        ("chat claude-sonnet-4-6", "invoke_agent claude"), ("chat claude-sonnet-4-6", "invoke_agent claude"),
        ("db lookup_order", "execute_tool lookup_order"), ("execute_tool lookup_order", "invoke_agent claude"),
        ("guardrail PreToolUse", "execute_tool lookup_order"), ("invoke_agent claude", ""),
        ("permission mcp__support__lookup_order", "execute_tool lookup_order"),
        ("policy check", "guardrail PreToolUse")], tree(reference)
    assert _turn_shape(adopted) == _turn_shape(again) == _turn_shape(reference), tree(adopted)
    for spans in (adopted, again):
        assert len({s.trace_id for s in spans}) == 1
        # the CLI's cost is its process's running total, and this session's earlier results went unseen: unknown
        assert "llm.cost.total" not in _one(spans, "invoke_agent claude").attributes
        assert all("gen_ai.usage.output_tokens" not in s.attributes for s in spans if s.name.startswith("chat "))
    assert all(s.attributes["gen_ai.usage.output_tokens"] > 1 for s in reference if s.name.startswith("chat "))
    slow = [s for s in cut if s.span_id not in {t.span_id for turn in turns[:4] for t in turn}]
    assert sorted(s.name for s in slow) == ["chat claude-sonnet-4-6", "execute_tool lookup_order",
                                            "invoke_agent claude"], tree(slow)
    assert [s.attributes.get("otel_agents.stream.abandoned") for s in slow if s.semantic_kind != "model"] == [True] * 2
    assert all(s.end_time for s in exporter.spans)


def test_an_sdk_mcp_server_made_before_instrument_runs_its_tools_in_the_tool_span(
        instrument: Any, provider: Any, exporter: SnapshotExporter) -> None:
    """create_sdk_mcp_server() called before instrument() (at import, say): its handler, and the spans it opens,
    run inside the tool span as with a server made after it. Before, on mcp 1.x they ran in no span of ours
    (mcp 2.x runs the handler in the request's trace context itself)."""
    app = provider.get_tracer("tests.app")

    def probe(name: str, args: dict) -> None:
        with app.start_as_current_span(f"db {name}"):
            pass

    server = support_server(probe=probe)
    instrument()
    asyncio.run(collect("Where is order A100?", transport=in_process(), mcp_servers={"support": server}))
    spans = exporter.spans
    assert _one(spans, "db lookup_order").parent_id == _one(spans, "execute_tool lookup_order").span_id, tree(spans)


def test_partials_we_turned_on_stay_hidden_after_uninstrument(instrument: Any, exporter: SnapshotExporter,
                                                              cli_path: str) -> None:
    """A client connected while instrumented runs its CLI with partial messages on (for true output tokens); after
    uninstrument() its caller still gets no StreamEvent it did not ask for (before, they leaked from then on)."""
    received: list[list] = []

    async def main() -> None:
        inst = instrument()
        async with sdk.ClaudeSDKClient(options=sdk.ClaudeAgentOptions(cli_path=cli_path)) as client:
            await client.query("Where is order A100?")
            received.append([m async for m in client.receive_response()])
            inst.uninstrument()
            await client.query("Where is order A100?")
            received.append([m async for m in client.receive_response()])

    asyncio.run(main())
    assert [sum(isinstance(m, sdk.StreamEvent) for m in turn) for turn in received] == [0, 0]
    assert all(isinstance(turn[-1], sdk.ResultMessage) for turn in received)
    assert len(exporter.semantic("agent")) == 1


def test_a_turn_under_way_at_instrument_is_left_untraced(instrument: Any, exporter: SnapshotExporter) -> None:
    """A client connected before instrument() whose turn was asked before it and read after it: that turn is left
    untraced (no agent span made up from its second half), the next one is traced from its prompt."""

    async def main() -> None:
        options = sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()})
        async with sdk.ClaudeSDKClient(options=options, transport=in_process()) as client:
            await client.query("Where is order A100?")
            instrument()
            async for _ in client.receive_response():
                pass
            await client.query("Where is order A200?")
            async for _ in client.receive_response():
                pass

    asyncio.run(main())
    spans = exporter.semantic()
    agent = _one(spans, "invoke_agent claude")
    assert agent.attributes["input.value"] == "Where is order A200?"
    assert sorted(s.semantic_kind for s in spans) == ["agent", "model", "model", "tool"], tree(spans)
    assert json.loads(_one(spans, "execute_tool lookup_order").attributes["gen_ai.tool.call.arguments"]) == \
        {"order_id": "A200"}


def test_a_query_under_way_at_instrument_is_left_untraced(instrument: Any, exporter: SnapshotExporter) -> None:
    """query() is one run: a run that started before instrument() makes no span (none made up from its second half,
    its tool call included), the next run is traced whole."""

    async def main() -> None:
        stream = sdk.query(prompt="Where is order A100?", transport=in_process(),
                           options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}))
        await stream.__anext__()
        instrument()
        assert isinstance([m async for m in stream][-1], sdk.ResultMessage)
        await collect("Where is order A200?", transport=in_process())

    asyncio.run(main())
    spans = exporter.semantic()
    assert sorted(s.semantic_kind for s in spans) == ["agent", "model", "model", "tool"], tree(spans)
    assert _one(spans, "invoke_agent claude").attributes["input.value"] == "Where is order A200?"


def _inputs(span: Any) -> list:
    """The text of each message of a model span's input, in order."""
    return [p.get("content") or p.get("response") for m in json.loads(span.attributes["gen_ai.input.messages"])
            for p in m["parts"]]


def test_a_prompt_sent_while_a_turn_runs_is_the_next_turns(instrumented: Any, exporter: SnapshotExporter) -> None:
    """ClaudeSDKClient: a second query() written before the first's result (the CLI queues it and answers it in a
    turn of its own) is the second turn's input, never the first's; the first turn's model calls did not see it,
    and the second turn's carry the conversation so far (the CLI sends it all)."""

    async def main() -> None:
        options = sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()})
        async with sdk.ClaudeSDKClient(options=options, transport=in_process()) as client:
            await client.query("Where is order A100?")
            await client.query("Where is order A200?")
            async for _ in client.receive_response():
                pass
            async for _ in client.receive_response():
                pass

    asyncio.run(main())
    spans = exporter.semantic()
    first, second = sorted(exporter.semantic("agent"), key=lambda s: s.start_time)
    assert first.attributes["input.value"] == "Where is order A100?" and "A100" in first.attributes["output.value"]
    assert second.attributes["input.value"] == "Where is order A200?" and "A200" in second.attributes["output.value"]
    models = sorted(exporter.semantic("model"), key=lambda s: s.start_time)
    assert [parent_of(s, spans).span_id for s in models] == [first.span_id] * 2 + [second.span_id] * 2, tree(spans)
    assert _inputs(models[0]) == ["Where is order A100?"]
    assert "Where is order A200?" not in _inputs(models[1])
    assert _inputs(models[2])[0] == "Where is order A100?" and _inputs(models[2])[-1] == "Where is order A200?"
    assert all(s.end_time for s in exporter.spans)


def test_a_prompt_the_running_turn_takes_in_joins_it(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A prompt written while a turn runs that the CLI takes into that turn (its frames list the prompt's uuid in
    user_message_uuids): the model call after it has it as its last input message; no turn of its own; the turn's
    input stays the prompt that started it; the next prompt starts the next turn."""

    async def script(cli: FakeCLI) -> int:
        for _ in range(2):
            first = await cli.ch.recv()
            while first.get("type") != "user":
                cli.ch.send({"type": "control_response", "response": {"subtype": "success",
                                                                      "request_id": first["request_id"]}})
                first = await cli.ch.recv()
            history: list[Any] = [first]
            cli.ch.send({"type": "system", "subtype": "init", "session_id": SESSION, "model": MODEL, "tools": [],
                         "uuid": cli.next_id("uuid")})
            cli.respond(None, [{"type": "text", "text": "Looking."}], history, "end_turn")
            uuids = [first.get("uuid")]
            if first.get("uuid") == "u1":
                later = await cli.ch.recv()  # the caller's follow-up, taken in before the next request
                uuids.append(later["uuid"])
                message_id = cli.next_id("msg")
                cli.ch.send({"type": "assistant", "parent_tool_use_id": None, "session_id": SESSION,
                             "user_message_uuid": later["uuid"], "user_message_uuids": uuids,
                             "message": {"id": message_id, "model": MODEL, "content": [{"type": "text",
                                                                                         "text": "Both done."}],
                                         "usage": {"input_tokens": 9, "output_tokens": 1}}})
            cli.ch.send({**cli.result("Both done."), "user_message_uuids": uuids})
        return 0

    def prompt(text: str, uuid: str) -> Any:
        async def messages() -> Any:
            yield {"type": "user", "uuid": uuid, "message": {"role": "user", "content": text}}
        return messages()

    async def main() -> None:
        async with sdk.ClaudeSDKClient(options=sdk.ClaudeAgentOptions(),
                                       transport=in_process(script=script)) as client:
            await client.query(prompt("Where is order A100?", "u1"))
            await client.query(prompt("And A200?", "u2"))
            async for _ in client.receive_response():
                pass
            await client.query(prompt("Thanks!", "u3"))
            async for _ in client.receive_response():
                pass

    asyncio.run(main())
    spans = exporter.semantic()
    first, last = sorted(exporter.semantic("agent"), key=lambda s: s.start_time)
    assert first.attributes["input.value"] == "Where is order A100?"
    assert last.attributes["input.value"] == "Thanks!"
    models = sorted((s for s in exporter.semantic("model") if s.parent_id == first.span_id), key=lambda s: s.start_time)
    assert [_inputs(s)[-1] for s in models] == ["Where is order A100?", "And A200?"], tree(spans)


def test_a_client_never_disconnected_ends_its_spans(instrumented: Any, exporter: SnapshotExporter) -> None:
    """A ClaudeSDKClient left connected (no `async with`, no disconnect()) in the middle of a turn: once its event
    loop is gone and the session with it, the turn's spans end, abandoned; none is left open."""
    from otel_agents._spans import finalisers

    async def main() -> None:
        client = sdk.ClaudeSDKClient(options=sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()}),
                                     transport=in_process())
        await client.connect()
        await client.query("Where is order A100? Take it slow.")
        async for message in client.receive_messages():
            if isinstance(message, sdk.AssistantMessage) and any(isinstance(b, sdk.ToolUseBlock)
                                                                 for b in message.content):
                break

    asyncio.run(main())
    gc.collect()
    assert finalisers.settle()
    spans = exporter.semantic()
    assert sorted(s.name for s in spans if s.semantic_kind != "model") == ["execute_tool lookup_order",
                                                                           "invoke_agent claude"], tree(spans)
    assert all(s.attributes.get("otel_agents.stream.abandoned") for s in spans if s.semantic_kind != "model")


def test_each_client_turn_costs_what_it_spent_not_the_sessions_running_total(instrumented: Any, envelopes: list,
                                                                              exporter: SnapshotExporter) -> None:
    """One CLI process serves every turn of a ClaudeSDKClient, and each result's total_cost_usd is that process's
    running total (anthropics/claude-code#83239): the second turn's agent span (and its envelope's cost_usd) said
    both turns' cost. Now each turn's cost is its result's total less the one before: the turns add up to it."""
    totals: list[float] = []

    async def main() -> None:
        options = sdk.ClaudeAgentOptions(mcp_servers={"support": support_server()})
        async with sdk.ClaudeSDKClient(options=options, transport=in_process()) as client:
            for question in ("Where is order A100?", "Where is order A200?", "Where is order A100?"):
                await client.query(question)
                totals.extend([m.total_cost_usd async for m in client.receive_response()
                               if isinstance(m, sdk.ResultMessage)])

    asyncio.run(main())
    turns = sorted(exporter.semantic("agent"), key=lambda s: s.start_time)
    spent = [turn.attributes["llm.cost.total"] for turn in turns]
    assert spent == pytest.approx([totals[0], totals[1] - totals[0], totals[2] - totals[1]], abs=1e-12)
    assert spent[2] == pytest.approx(spent[0], abs=1e-12) and spent[1] != pytest.approx(totals[1])  # same question
    assert sum(spent) == pytest.approx(totals[-1], abs=1e-12)
    assert [env["metrics"]["cost_usd"] for env in check(envelopes)] == pytest.approx(spent, abs=1e-12)


def test_input_tokens_a_message_delta_restates_are_the_calls(instrumented: Any, exporter: SnapshotExporter) -> None:
    """The API's message_delta usage is cumulative and may restate the input counts (a server tool's searches add
    input tokens after message_start, whose counts the assistant frames repeat): the model span has the restated,
    final counts (before: message_start's), and the delta's output count."""

    async def script(cli: FakeCLI) -> int:
        frame = await cli.ch.recv()
        while frame.get("type") != "user":
            cli.ch.send({"type": "control_response", "response": {"subtype": "success",
                                                                  "request_id": frame["request_id"]}})
            frame = await cli.ch.recv()
        base = {"parent_tool_use_id": None, "session_id": SESSION}
        start = {"input_tokens": 10, "cache_read_input_tokens": 100, "cache_creation_input_tokens": 0,
                 "output_tokens": 1}
        cli.ch.send({**base, "type": "stream_event", "uuid": "e1", "event": {
            "type": "message_start", "message": {"id": "msg_ws", "model": MODEL, "usage": start}}})
        cli.ch.send({**base, "type": "assistant", "uuid": "a1", "message": {
            "id": "msg_ws", "model": MODEL, "content": [{"type": "text", "text": "Searched."}], "usage": start}})
        cli.ch.send({**base, "type": "stream_event", "uuid": "e2", "event": {
            "type": "message_delta", "delta": {"stop_reason": "end_turn"},
            "usage": {"input_tokens": 2510, "cache_read_input_tokens": 100, "output_tokens": 42,
                      "server_tool_use": {"web_search_requests": 1}}}})
        cli.ch.send(cli.result("Searched."))
        return 0

    asyncio.run(collect("Search the web.", transport=in_process("--include-partial-messages", script=script)))
    [model] = exporter.semantic("model")
    assert model.attributes["gen_ai.usage.input_tokens"] == 2510 + 100
    assert model.attributes["gen_ai.usage.cache_read.input_tokens"] == 100
    assert model.attributes["gen_ai.usage.output_tokens"] == 42


def test_gen_ai_alone_a_prompt_of_blocks_is_the_agent_input_message(instrument: Any,
                                                                     exporter: SnapshotExporter) -> None:
    """Written in OTel GenAI alone (no ``input.value``, which holds only the prompt's text), the turn's agent span
    has the prompt it was given as ``gen_ai.input.messages``: one user message of its blocks, the image kept as a
    media part (as the model span's input has it), not flattened to its text."""
    instrument(vocabularies="gen_ai", capture_content=True)
    image = {"type": "image", "source": {"type": "url", "url": "https://example.test/parcel.jpg"}}

    async def prompt() -> Any:
        yield {"type": "user", "message": {"role": "user", "content": [
            {"type": "text", "text": "Where is order A200?"}, image]}}

    asyncio.run(collect(prompt(), transport=in_process(), mcp_servers={"support": support_server()}))
    spans = exporter.semantic()
    agent = _one(spans, "invoke_agent claude")
    assert "input.value" not in agent.attributes
    [message] = json.loads(agent.attributes["gen_ai.input.messages"])
    assert message["role"] == "user" and message["parts"][0] == {"type": "text", "content": "Where is order A200?"}
    assert [p["type"] for p in message["parts"]] == ["text", "uri"] and \
        message["parts"][1]["uri"] == "https://example.test/parcel.jpg"
    first_model = min((s for s in spans if s.semantic_kind == "model"), key=lambda s: s.start_time)
    assert json.loads(first_model.attributes["gen_ai.input.messages"])[0] == message
