"""``fold(spans)``: span trees → ECP envelopes (issue 7), over hand-built spans from the real span layer.

Every envelope is checked with ecp-runtime's ``validate_step_result`` and our JSON Schema.
"""

from __future__ import annotations

import contextlib
import json
import random
import socket
from collections.abc import Mapping

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from otel_agents._spans import ChatMessage, Settings, Telemetry, ToolCallRequest, Usage, wrap_stream
from otel_agents.exporters.ecp import fold
from otel_agents.semconv import attributes as A

from .conftest import Recorder, check


def agent_run(tel, *, name="supervisor", answer="It is sunny in Paris.", with_usage=True):
    """An agent that asks a model, calls a tool, delegates to a sub-agent whose tool fails, then answers."""
    with tel.span("agent", name) as agent:
        agent.set_agent(name)
        agent.set_input("What is the weather in Paris?")
        with tel.span("model", "gpt-4o") as model:
            model.set_model(request_model="gpt-4o", response_model="gpt-4o-2024-08-06", provider="openai")
            model.set_messages(
                input=[ChatMessage("system", "be brief"), ChatMessage("user", "What is the weather in Paris?")],
                output=[ChatMessage("assistant", None, [ToolCallRequest("search", {"q": "Paris"}, "call_1")],
                                    finish_reason="tool_calls")])
            if with_usage:
                model.set_usage(Usage(input_tokens=100, output_tokens=20))
        with tel.span("tool", "search") as tool:
            tool.set_tool("search", call_id="call_1", arguments={"q": "Paris"})
            tool.set_tool_result({"forecast": "sunny"})
        with tel.span("agent", "researcher") as sub:
            sub.set_agent("researcher")
            with pytest.raises(ValueError):
                with tel.span("tool", "lookup") as failing:
                    failing.set_tool("lookup", arguments="Atlantis")
                    raise ValueError("unknown city")
        with tel.span("model", "gpt-4o") as model:
            model.set_model(request_model="gpt-4o", response_model="gpt-4o-2024-08-06", provider="openai")
            model.set_messages(output=[ChatMessage("assistant", answer, finish_reason="stop")])
            if with_usage:
                model.set_usage(Usage(input_tokens=150, output_tokens=10, total_tokens=161))
        agent.set_output([{"role": "user", "parts": [{"type": "text", "content": "What is the weather?"}]},
                          {"role": "assistant", "parts": [{"type": "text", "content": answer}]}])
    return agent


def test_agent_run_envelope(rec):
    """Issue 7: status, public_output, enriched tool_calls, evidence lines, usage, metrics, agents."""
    agent_run(rec.telemetry)
    [env] = check(fold(rec.spans))
    spans = {s.name: s for s in rec.spans}

    assert env["status"] == "done"
    assert env["public_output"] == "It is sunny in Paris."
    assert env["trace_id"] == f"{spans['invoke_agent supervisor'].context.trace_id:032x}"
    search, lookup = env["tool_calls"]
    assert search == {**search, "name": "search", "arguments": {"q": "Paris"}, "id": "call_1",
                      "result": {"forecast": "sunny"}, "status": "ok", "error": None, "agent": "supervisor",
                      "span_id": f"{spans['execute_tool search'].context.span_id:016x}"}
    assert search["latency_ms"] >= 0
    assert lookup["status"] == "error" and lookup["error"] == "ValueError: unknown city"
    assert lookup["agent"] == "researcher" and lookup["arguments"] == {"input": "Atlantis"}

    lines = env["evaluation_context"].splitlines()
    assert lines[0] == "agent supervisor"
    assert lines[1] == "  model gpt-4o-2024-08-06 finish=tool_call tokens_in=100 tokens_out=20 calls=search"
    assert lines[2].startswith('  tool search args={"q":"Paris"} status=ok latency_ms=')
    assert lines[3] == "  agent researcher delegated_by=supervisor"
    assert lines[4].startswith('    tool lookup args={"input":"Atlantis"} status=error latency_ms=')
    assert lines[5] == "    error tool lookup: ValueError: unknown city"
    assert lines[6] == "  model gpt-4o-2024-08-06 finish=stop tokens_in=150 tokens_out=10"
    assert len(lines) == 7

    assert env["usage"] == {"input_tokens": 250, "output_tokens": 30, "total_tokens": 281}
    m = env["metrics"]
    assert (m["steps"], m["model_calls"], m["tool_calls"], m["tool_errors"], m["tool_success_rate"]) == (6, 2, 2, 1, 0.5)
    assert m["duration_ms"] >= search["latency_ms"]
    assert m["cost_usd"] is not None and m["cost_usd"] > 0
    assert [(a["name"], a["parent"]) for a in env["agents"]] == [("supervisor", None), ("researcher", "supervisor")]
    assert env["agents"][1]["parent_span_id"] == env["agents"][0]["span_id"]
    assert "incomplete" not in env


def test_logs_are_span_records_without_content(rec):
    """Issue 7: ``logs`` is a JSON string of span records; content stays in the other fields."""
    agent_run(rec.telemetry)
    [env] = check(fold(rec.spans))
    records = json.loads(env["logs"])
    assert [r["kind"] for r in records] == ["agent", "model", "tool", "agent", "tool", "model"]
    assert set(records[0]) == {"trace_id", "span_id", "parent_id", "kind", "name", "start", "duration_ms", "status", "attributes"}
    assert records[0]["parent_id"] is None and records[1]["parent_id"] == records[0]["span_id"]
    assert {r["trace_id"] for r in records} == {env["trace_id"]}  # issue 24: a report keeps logs, not trace_id
    assert records[4]["status"] == "error" and records[4]["error"] == "ValueError: unknown city"
    assert records[1]["attributes"]["gen_ai.usage.input_tokens"] == 100
    assert records[0]["start"].endswith("Z")
    assert "Paris" not in env["logs"]  # messages, tool arguments and results are not repeated here


def test_non_object_tool_arguments_are_wrapped(rec):
    """Issue 7 edge case: tool arguments that are not JSON objects become ``{"input": value}``."""
    tel = rec.telemetry
    cases = [("text", "plain words"), ("number", 42), ("list", [1, "two"]), ("json_text", '{"a": 1}'),
             ("none", None), ("null_json", "null")]
    with tel.span("agent", "a") as agent:
        agent.set_agent("a")
        for name, args in cases:
            with tel.span("tool", name) as tool:
                tool.set_tool(name, arguments=args)
    [env] = check(fold(rec.spans))
    got = {c["name"]: c["arguments"] for c in env["tool_calls"]}
    assert got == {"text": {"input": "plain words"}, "number": {"input": 42}, "list": {"input": [1, "two"]},
                   "json_text": {"a": 1}, "none": {}, "null_json": {"input": None}}


def test_tool_like_skill_is_a_tool_call_and_multi_step_skill_is_not(rec):
    """Issue 7: a skill used through a tool call (execute_tool) is in tool_calls; a multi-step skill is a step only."""
    tel = rec.telemetry
    with tel.span("agent", "a") as agent:
        agent.set_agent("a")
        with tel.span("skill", "pdf") as skill:
            skill.set_tool("pdf", arguments={"path": "x.pdf"})
        with tel.span("skill", "research", multi_step=True) as skill:
            skill.set_attribute("otel_agents.skill.name", "research")
    [env] = check(fold(rec.spans))
    assert [c["name"] for c in env["tool_calls"]] == ["pdf"]
    lines = env["evaluation_context"].splitlines()
    assert lines[1].startswith('  skill pdf args={"path":"x.pdf"} status=ok latency_ms=')
    assert lines[2].startswith("  skill research status=ok latency_ms=")


def test_errored_tool_and_errored_run(rec):
    """Issue 7 edge case: a tool that errored, and the agent that failed because of it."""
    tel = rec.telemetry
    with pytest.raises(RuntimeError):
        with tel.span("agent", "a") as agent:
            agent.set_agent("a")
            with tel.span("tool", "db") as tool:
                tool.set_tool("db", call_id="t1", arguments={"sql": "select 1"})
                raise RuntimeError("connection refused\nretry later")
    [env] = check(fold(rec.spans))
    [call] = env["tool_calls"]
    assert call["status"] == "error" and call["result"] is None
    assert call["error"].startswith("RuntimeError: connection refused")
    assert env["metrics"]["tool_success_rate"] == 0.0
    lines = env["evaluation_context"].splitlines()
    assert lines[2] == "  error tool db: RuntimeError: connection refused retry later"  # one line
    assert lines[3] == "error agent a: RuntimeError: connection refused retry later"
    assert env["agents"][0]["status"] == "error"
    assert env["public_output"] is None


def test_stream_ending_after_its_agent_is_in_the_run(rec):
    """Issue 7 edge case: a model stream that ends after the agent span ended still belongs to the run."""
    tel = rec.telemetry
    with tel.span("agent", "streamer") as agent:
        agent.set_agent("streamer")
        model = tel.start_span("model", "gpt-4o")
        model.set_model(request_model="gpt-4o")
        chunks = []
        stream = wrap_stream(iter(["It ", "is ", "sunny."]), model, on_chunk=chunks.append,
                             on_end=lambda span, abandoned: span.set_messages(
                                 output=[ChatMessage("assistant", "".join(chunks), finish_reason="stop")]))
        agent.set_output("streaming…")
    assert "".join(stream) == "It is sunny."  # consumed after the agent span ended
    spans = {s.name: s for s in rec.spans}
    assert spans["chat gpt-4o"].end_time > spans["invoke_agent streamer"].end_time
    [env] = check(fold(rec.spans))
    assert env["metrics"]["model_calls"] == 1
    assert env["evaluation_context"].splitlines()[1] == "  model gpt-4o finish=stop"
    assert env["metrics"]["duration_ms"] * 1e6 >= spans["chat gpt-4o"].end_time - spans["invoke_agent streamer"].start_time - 1e3


def test_orphan_is_folded_as_its_own_run(rec):
    """Issue 7 edge case: a span whose parent never arrives is the root of a run of its own."""
    tel = rec.telemetry
    ghost = SpanContext(random.getrandbits(128), random.getrandbits(64), is_remote=False,
                        trace_flags=TraceFlags(TraceFlags.SAMPLED))
    parent = trace.set_span_in_context(NonRecordingSpan(ghost))
    with tel.span("tool", "lonely", parent=parent) as tool:
        tool.set_tool("lonely", arguments={"x": 1})
        tool.set_tool_result("done")
    [env] = check(fold(rec.spans))
    assert env["trace_id"] == f"{ghost.trace_id:032x}"
    assert env["public_output"] == "done"
    assert env["tool_calls"][0]["agent"] is None
    assert env["evaluation_context"].startswith('tool lonely args={"x":1} status=ok')


def test_never_ending_root_leaves_its_finished_children(rec):
    """Issue 7 edge case (fold side): a root that never ended is absent; its ended children still fold."""
    tel = rec.telemetry
    root = tel.start_span("agent", "forever")
    root.set_agent("forever")
    with root.activate():
        with tel.span("tool", "step") as tool:
            tool.set_tool("step", arguments={})
    envs = check(fold(rec.spans))  # only the tool has ended
    assert [e["tool_calls"][0]["name"] for e in envs] == ["step"]
    assert envs[0]["tool_calls"][0]["agent"] is None  # the agent span is not there to be named
    root.end()


def test_two_runs_in_one_trace_under_a_non_semantic_root(rec):
    """Issue 7 edge case: an HTTP server span (not semantic) holding two agent runs gives two envelopes."""
    tel = rec.telemetry
    with rec.app.start_as_current_span("POST /chat", kind=trace.SpanKind.SERVER):
        for name in ("first", "second"):
            with tel.span("agent", name) as agent:
                agent.set_agent(name)
                agent.set_output(f"answer from {name}")
                with tel.span("tool", f"{name}_tool") as tool:
                    tool.set_tool(f"{name}_tool", arguments={})
    envs = check(fold(rec.spans))
    assert [e["public_output"] for e in envs] == ["answer from first", "answer from second"]
    assert envs[0]["trace_id"] == envs[1]["trace_id"]
    assert [[c["name"] for c in e["tool_calls"]] for e in envs] == [["first_tool"], ["second_tool"]]
    assert "POST /chat" not in envs[0]["logs"]


def test_semantic_span_below_a_non_semantic_span_stays_in_its_run(rec):
    """A user's own span between an agent and its tool does not split the run; it has a ``span`` line
    (issue 28) and the tool's line is under it."""
    tel = rec.telemetry
    with tel.span("agent", "a") as agent:
        agent.set_agent("a")
        with rec.app.start_as_current_span("helper"):
            with tel.span("chain", "RunnableSequence"):
                with tel.span("tool", "t") as tool:
                    tool.set_tool("t", arguments={})
    [env] = check(fold(rec.spans))
    lines = env["evaluation_context"].splitlines()
    assert lines[1] == "  span helper" and lines[2].startswith("    tool t "), lines
    assert env["tool_calls"][0]["agent"] == "a"
    assert [r["name"] for r in json.loads(env["logs"])] == ["invoke_agent a", "helper", "RunnableSequence", "execute_tool t"]


def test_paused_run(rec):
    """Issue 7 edge case: a run that stopped waiting for a human has status ``paused``."""
    tel = rec.telemetry
    with tel.span("chain", "graph", workflow=True) as graph:
        with tel.span("agent", "approver") as agent:
            agent.set_agent("approver")
            with tel.span("tool", "ask_human") as tool:
                tool.set_tool("ask_human", call_id="h1", arguments={"question": "ok?"})
                tool.mark_paused()
        graph.mark_paused()
    [env] = check(fold(rec.spans))
    assert env["status"] == "paused"
    lines = env["evaluation_context"].splitlines()
    assert lines[0] == "workflow graph"
    assert lines[1] == "  agent approver"
    assert lines[3] == "    paused tool ask_human"
    assert lines[-1] == "paused workflow graph"


def test_run_cut_off_has_its_stop_reason(rec, caplog):
    """Issue 34: a run that ended other than by its agent answering says why, in ``metrics.stop_reason`` (the
    outermost span's) and a ``stopped`` line after the cut-off agent's own lines; a run that answered has
    ``null``. An unknown reason is our bug: logged, not written."""
    tel = rec.telemetry
    with tel.span("agent", "team") as team:
        team.set_agent("team")
        with tel.span("agent", "writer") as writer:
            writer.set_agent("writer")
            writer.set_stop_reason("guardrail")
            with tel.span("model", "m") as model:
                model.set_model(request_model="m")
        team.set_stop_reason("max_turns")
        team.set_stop_reason("bored")  # not a reason: the recorded one stays
    with tel.span("agent", "answered") as done:
        done.set_agent("answered")
    cut, answered = check(fold(rec.spans))
    assert cut["metrics"]["stop_reason"] == "max_turns"
    lines = cut["evaluation_context"].splitlines()
    assert lines == ["agent team", "  agent writer delegated_by=team", "    model m",
                     "  stopped agent writer reason=guardrail", "stopped agent team reason=max_turns"], lines
    assert answered["metrics"]["stop_reason"] is None
    assert "stopped" not in answered["evaluation_context"]
    assert "unknown stop reason 'bored'" in caplog.text


def test_stop_reason_of_a_run_delegated_through_a_tool_call(rec):
    """Issue 34: a run delegated through a tool call (a team used as a tool) that stopped by its own condition
    and returned its result to the caller, who then answered: that stop is the delegated run's, not the run's.
    A handoff tool that returned before its target's run ended (the target running on under it), or a call
    that failed with what is inside it, does not hide the target's stop."""
    tel = rec.telemetry

    def delegation(tool_ends_first: bool, fails: bool) -> None:
        with tel.span("agent", "lead") as lead:
            lead.set_agent("lead")
            tool = tel.start_span("tool", "ask_team")
            tool.set_tool("ask_team", call_id="c1", arguments={"task": "x"})
            inner = tel.start_span("chain", "team", workflow=True, parent=tool)
            inner.set_stop_reason("termination" if not fails else "cancelled")
            if tool_ends_first:
                tool.end()
                inner.end()
            else:
                inner.end()
                if fails:
                    tool.record_error(RuntimeError("team failed"))
                tool.end()

    delegation(tool_ends_first=False, fails=False)
    delegation(tool_ends_first=True, fails=False)
    delegation(tool_ends_first=False, fails=True)
    returned, handed_off, failed = check(fold(rec.spans))
    assert returned["metrics"]["stop_reason"] is None
    assert handed_off["metrics"]["stop_reason"] == "termination"
    assert failed["metrics"]["stop_reason"] == "cancelled"


def test_a_step_a_framework_stopped_is_not_ok(rec):
    """A tool call ended by a cancellation, in asyncio's word or a framework's own (Agno's ``cancelled`` run
    status, the Claude Agent SDK's ``stopped``/``killed`` background task, an ``interrupt()``), is not ``ok``:
    it says ``cancelled (WORD)``. A control-flow signal that is not a cancellation (LangGraph's
    ``GraphInterrupt``, a pause) leaves the call ``ok``."""
    words = ("cancelled", "stopped", "killed", "interrupt", "asyncio.exceptions.CancelledError",
             "langgraph.errors.GraphInterrupt")
    with rec.telemetry.span("agent", "lead") as lead:
        lead.set_agent("lead")
        for i, word in enumerate(words):
            with rec.telemetry.span("tool", f"t{i}") as tool:
                tool.set_tool(f"t{i}", call_id=f"c{i}", arguments={})
                tool.set_attribute(A.OTEL_AGENTS_CONTROL_FLOW, word)
    [env] = check(fold(rec.spans))
    got = [(c["status"], c["error"]) for c in env["tool_calls"]]
    assert got == [("error", "cancelled" if w == "cancelled" else f"cancelled ({w})") for w in words[:-1]] + \
        [("ok", None)], got


def test_a_cancelled_run_is_stopped_not_failed(rec):
    """A run a cancellation stopped (the span layer's control flow: agent, chain and tool ended by
    ``CancelledError``): ``stop_reason`` ``cancelled``, ``public_output`` null (even when its root recorded an
    output before it was stopped: the caller got none), the cancelled tool call not ``ok``,
    and no ``error`` line nor error count for the cancellation itself (it is not a failure). A chain that failed
    (status ERROR) around a cancelled step still has its ``error`` line."""
    import asyncio

    for fails in (False, True):
        with rec.telemetry.span("chain", "wf") as wf:
            wf.set_output("what the workflow had when it was stopped")
            with rec.telemetry.span("agent", "lead") as lead:
                lead.set_agent("lead")
                lead.set_output("half an answer")
                with rec.telemetry.span("tool", "lookup") as tool:
                    tool.set_tool("lookup", call_id="c1", arguments={})
                    tool.record_error(asyncio.CancelledError(), control_flow=True)
                lead.record_error(asyncio.CancelledError(), control_flow=True)
            if fails:
                wf.record_error(RuntimeError("cleanup failed"))
            else:
                wf.record_error(asyncio.CancelledError(), control_flow=True)
    stopped, failed = check(fold(rec.spans))
    for env in (stopped, failed):
        assert env["metrics"]["stop_reason"] == "cancelled", env["metrics"]
        assert env["public_output"] is None
        assert [(c["status"], c["error"]) for c in env["tool_calls"]] == \
            [("error", "cancelled (asyncio.exceptions.CancelledError)")]
        assert "stopped agent lead reason=cancelled" in env["evaluation_context"]
    errors = [ln.strip() for ln in stopped["evaluation_context"].splitlines() if ln.strip().startswith("error")]
    assert errors == [] and stopped["metrics"]["errors"] == 0, stopped["evaluation_context"]
    errors = [ln.strip() for ln in failed["evaluation_context"].splitlines() if ln.strip().startswith("error")]
    assert len(errors) == 1 and "cleanup failed" in errors[0] and failed["metrics"]["errors"] == 1, errors


@pytest.mark.parametrize("how", ["answered", "guardrail", "cancelled", "failed", "agent_output"])
def test_gen_ai_alone_never_takes_an_answer_the_run_did_not_return(how):
    """Written in OTel GenAI alone (no ``output.value``), the run's public output is its agent's output
    (``gen_ai.output.messages`` on the ``invoke_agent`` span: what the user got, a model's answer or not), else
    its last model answer — unless the run did not return it: a guardrail blocked it, the caller cancelled the
    run, or the run failed (a new user found the blocked answer as ``public_output`` with
    ``OTEL_AGENTS_VOCABULARIES=gen_ai``, and ``null`` where a tool's result was the run's answer)."""
    rec = Recorder()
    rec.telemetry = Telemetry(rec.provider, framework="manual",
                              settings=Settings(capture_content=True, vocabularies="gen_ai"))
    with pytest.raises(RuntimeError) if how == "failed" else contextlib.nullcontext():
        with rec.telemetry.span("agent", "writer") as agent:
            agent.set_agent("writer")
            with rec.telemetry.span("model", "m") as model:
                model.set_model(request_model="m")
                model.set_messages(output=[ChatMessage("assistant", "BLOCKED ANSWER", finish_reason="stop")])
            if how in ("guardrail", "cancelled"):
                agent.set_stop_reason(how)
            if how == "agent_output":
                agent.set_output("TOOL says sunny")
            if how == "failed":
                raise RuntimeError("output check failed")
    [env] = check(fold(rec.spans))
    assert env["public_output"] == {"answered": "BLOCKED ANSWER", "agent_output": "TOOL says sunny"}.get(how)
    rec.provider.shutdown()


def test_no_usage_at_all(rec):
    """Issue 7 edge case: no model span reported usage → no ``usage`` field, no cost."""
    agent_run(rec.telemetry, with_usage=False)
    [env] = check(fold(rec.spans))
    assert "usage" not in env
    assert env["metrics"]["cost_usd"] is None
    assert "tokens_in" not in env["evaluation_context"]


def test_run_without_tools_or_models(rec):
    with rec.telemetry.span("agent", "idle") as agent:
        agent.set_agent("idle")
    [env] = check(fold(rec.spans))
    assert env["tool_calls"] == [] and "usage" not in env
    assert env["metrics"]["tool_success_rate"] is None and env["metrics"]["cost_usd"] is None


@pytest.mark.parametrize("output, expected", [
    ("plain text", "plain text"),
    ({"answer": 42, "sources": ["a"]}, '{"answer":42,"sources":["a"]}'),
    ([{"role": "assistant", "content": "hi there"}], "hi there"),
    ({"messages": [{"type": "human", "content": "q"}, {"type": "ai", "content": [{"type": "text", "text": "from ai"}]}]},
     "from ai"),
    ([{"role": "assistant", "parts": [{"type": "tool_call", "name": "x", "arguments": {}}]}],
     '[{"role":"assistant","parts":[{"type":"tool_call","name":"x","arguments":{}}]}]'),
    (["a", "b"], '["a","b"]'),
])
def test_public_output_as_text(rec, output, expected):
    """Issue 7: a string as is; chat messages → last assistant text; structured output → compact JSON."""
    with rec.telemetry.span("agent", "a") as agent:
        agent.set_output(output)
    [env] = check(fold(rec.spans))
    assert env["public_output"] == expected


def test_content_off_still_gives_a_valid_envelope(rec):
    """With content capture off there are no arguments or outputs, and the envelope is still valid."""
    rec.telemetry.settings.capture_content = False
    agent_run(rec.telemetry)
    [env] = check(fold(rec.spans))
    assert env["public_output"] is None
    assert [c["arguments"] for c in env["tool_calls"]] == [{}, {}]
    assert env["tool_calls"][1]["error"] == "ValueError"


def test_thoughts_only_when_opted_in(rec):
    """No raw chain-of-thought in evaluation_context unless ``include_thoughts=True``."""
    with rec.telemetry.span("agent", "a"):
        with rec.telemetry.span("model", "m") as model:
            model.set_model(request_model="m")
            model.set_content("gen_ai.output.messages", [
                {"role": "assistant", "parts": [{"type": "reasoning", "content": "secret\nplan"},
                                                {"type": "text", "content": "ok"}]}], as_json=True)
    assert "secret" not in fold(rec.spans)[0]["evaluation_context"]
    [env] = check(fold(rec.spans, include_thoughts=True))
    assert env["evaluation_context"].splitlines()[2] == "    thought secret plan"


def test_thoughts_from_reasoning_parts_and_answer_from_text_parts(rec):
    """M-1: a model span filled with the span layer's parts (a ReasoningPart, then a TextPart) gives one
    ``thought`` line with include_thoughts and none by default; public_output is the answer text."""
    from otel_agents._spans import ChatMessage, ReasoningPart, TextPart

    with rec.telemetry.span("agent", "a") as agent:
        with rec.telemetry.span("model", "m") as model:
            model.set_model(request_model="m")
            model.set_messages(output=[ChatMessage("assistant", parts=[
                ReasoningPart("check the policy"), TextPart("Approved.")], finish_reason="stop")])
        agent.set_output("Approved.")
    [plain] = check(fold(rec.spans))
    assert "thought" not in plain["evaluation_context"] and plain["public_output"] == "Approved."
    [env] = check(fold(rec.spans, include_thoughts=True))
    assert env["evaluation_context"].splitlines() == ["agent a", "  model m finish=stop", "    thought check the policy"]


def test_media_tool_results_are_summarised(rec):
    """A tool result that is a GenAI blob part (alone or in a list) shows type, MIME type, modality, size and
    SHA-256 in tool_calls[].result, never its base64 data; uri parts and other values are kept."""
    import base64
    import hashlib

    png = b"\x89PNG" + bytes(range(20))
    blob = {"type": "blob", "mime_type": "image/png", "modality": "image", "content": base64.b64encode(png).decode()}
    uri = {"type": "uri", "mime_type": None, "modality": "image", "uri": "https://x.test/a.png"}
    with rec.telemetry.span("agent", "a"):
        for name, result in (("snap", blob), ("album", ["two pictures", blob, uri])):
            with rec.telemetry.span("tool", name) as tool:
                tool.set_tool(name, arguments={})
                tool.set_tool_result(result)
    [env] = check(fold(rec.spans))
    summary = {"type": "blob", "mime_type": "image/png", "modality": "image", "size_bytes": len(png),
               "sha256": hashlib.sha256(png).hexdigest()}
    assert [c["result"] for c in env["tool_calls"]] == [summary, ["two pictures", summary, uri]]
    assert blob["content"] not in json.dumps(env)


def test_fold_is_independent_of_span_order_and_traces(rec):
    """Spans in any order and from several traces give the same envelopes, ordered by run start."""
    for name in ("one", "two", "three"):
        agent_run(rec.telemetry, name=name)
    spans = rec.spans
    shuffled = list(spans)
    random.Random(7).shuffle(shuffled)
    direct = check(fold(spans))
    assert fold(shuffled) == direct
    assert [e["agents"][0]["name"] for e in direct] == ["one", "two", "three"]


def test_cost_is_priced_offline(rec, monkeypatch):
    """cost_usd comes from genai-prices' bundled data: no network is touched."""
    def no_network(*args, **kwargs):
        raise AssertionError("network access while pricing")

    monkeypatch.setattr(socket.socket, "connect", no_network)
    agent_run(rec.telemetry)
    [env] = check(fold(rec.spans))
    # gpt-4o-2024-08-06: 100+150 input, 20+10 output tokens at the bundled prices
    from genai_prices import Usage as PriceUsage, calc_price
    expected = sum(float(calc_price(PriceUsage(input_tokens=i, output_tokens=o), "gpt-4o-2024-08-06",
                                    provider_id="openai").total_price) for i, o in ((100, 20), (150, 10)))
    assert env["metrics"]["cost_usd"] == pytest.approx(expected)


_PRICING_PROBE = """
import sys
{block}
import otel_agents.exporters.ecp
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from otel_agents._spans import Telemetry, Usage
at_import = "genai_prices.data" in sys.modules  # the price table, after importing the fold's modules
memory = InMemorySpanExporter()
provider = TracerProvider()
processor = otel_agents.exporters.ecp.ECPFoldingProcessor()
at_setup = "genai_prices.data" in sys.modules  # ... and once a folding processor is set up, before any run
provider.add_span_processor(processor)
provider.add_span_processor(SimpleSpanProcessor(memory))
tel = Telemetry(provider, framework="manual")
with tel.span("agent", "a"):
    with tel.span("model", "gpt-4o") as span:
        span.set_model(request_model="gpt-4o", provider="openai")
        span.set_usage(Usage(input_tokens=1000, output_tokens=100))
[live] = processor.drain()
[folded] = otel_agents.exporters.ecp.fold(memory.get_finished_spans())
print(at_import, at_setup, live["metrics"]["cost_usd"] is not None, folded["metrics"]["cost_usd"] is not None)
"""


@pytest.mark.parametrize("installed", [True, False])
def test_pricing_is_loaded_by_the_folding_processor_not_by_the_fold_modules(installed):
    """genai-prices and its price table (0.3-0.4 s of CPU) are not imported with the fold's modules, which
    every ``otel-agents`` command imports for its ``--help``, but by a folding processor when it is set up,
    so that no thread ending a run waits for them (they made a process's first fold slower); without
    genai-prices the fold still works and leaves cost_usd null."""
    import subprocess
    import sys

    block = "" if installed else "sys.modules['genai_prices'] = None  # import fails as if not installed"
    done = subprocess.run([sys.executable, "-c", _PRICING_PROBE.format(block=block)], capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == (["False", "True", "True", "True"] if installed else ["False"] * 4)


@pytest.mark.parametrize("model, provider, priced", [
    ("claude-3-5-sonnet-latest", "anthropic", True),
    ("gemini-1.5-flash", "gcp.gemini", True),      # OTel provider name mapped to genai-prices' id
    ("gpt-4o", None, True),                          # provider inferred from the model name
    ("my-finetune-v3", "openai", False),             # unknown model
    ("gpt-4o", "acme-cloud", False),                 # named provider unknown to genai-prices: not guessed
])
def test_cost_needs_a_known_model_and_provider(rec, model, provider, priced):
    with rec.telemetry.span("agent", "a"):
        with rec.telemetry.span("model", model) as span:
            span.set_model(request_model=model, provider=provider)
            span.set_usage(Usage(input_tokens=1000, output_tokens=100))
    [env] = check(fold(rec.spans))
    assert (env["metrics"]["cost_usd"] is not None) is priced


@pytest.mark.parametrize("key", [A.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS,  # what we write (v1.41)
                                 A.GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS])  # the conventions' main branch (PR #440)
def test_cache_writes_are_priced_under_either_name(rec, key):
    """Cache-write tokens are priced at the cache-write rate whether a span names them as the released GenAI
    conventions do (v1.41: ``gen_ai.usage.cache_creation.input_tokens``) or as their main branch does
    (``gen_ai.usage.cache_write.input_tokens``, unreleased; written by opentelemetry-util-genai and, for a few
    hours, by this library)."""
    with rec.telemetry.span("agent", "a"):
        with rec.telemetry.span("model", "claude-3-5-sonnet-latest") as span:
            span.set_model(request_model="claude-3-5-sonnet-latest", provider="anthropic")
            span.set_usage(Usage(input_tokens=1000, output_tokens=100, cache_creation_tokens=800))
    spans = list(rec.spans)
    [model] = [s for s in spans if s.attributes.get(A.OTEL_AGENTS_SPAN_KIND) == "model"]
    assert model.attributes[A.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS] == 800
    assert A.GEN_AI_USAGE_CACHE_WRITE_INPUT_TOKENS not in model.attributes
    attrs = {k: v for k, v in model.attributes.items() if k != A.GEN_AI_USAGE_CACHE_CREATION_INPUT_TOKENS}
    attrs[key] = 800
    spans[spans.index(model)] = ReadableSpan(name=model.name, context=model.context, parent=model.parent,
                                             attributes=attrs, start_time=model.start_time,
                                             end_time=model.end_time, status=model.status, kind=model.kind)
    [env] = check(fold(spans))
    from genai_prices import Usage as PriceUsage, calc_price
    expected = float(calc_price(PriceUsage(input_tokens=1000, output_tokens=100, cache_write_tokens=800),
                                "claude-3-5-sonnet-latest", provider_id="anthropic").total_price)
    without = float(calc_price(PriceUsage(input_tokens=1000, output_tokens=100),
                               "claude-3-5-sonnet-latest", provider_id="anthropic").total_price)
    assert expected != pytest.approx(without)  # the cache-write rate differs from the input rate
    assert env["metrics"]["cost_usd"] == pytest.approx(expected)


class _PlainMapping(Mapping):
    """An attribute mapping without ``copy()`` (a foreign exporter's own type)."""

    def __init__(self, data):
        self._data = dict(data)

    def __getitem__(self, key):
        return self._data[key]

    def __iter__(self):
        return iter(self._data)

    def __len__(self):
        return len(self._data)


@pytest.mark.parametrize("wrap", [dict, _PlainMapping], ids=["dict", "mapping-without-copy"])
def test_spans_built_outside_the_sdk_span(wrap):
    """Robustness: a ``ReadableSpan`` built by hand (any attribute mapping) folds; ``start`` is ISO 8601
    UTC with microseconds, and without a fraction on a whole second (``datetime.isoformat``'s text)."""
    second = 1_700_000_000 * 10**9  # 2023-11-14T22:13:20Z
    attributes = {"otel_agents.span.kind": "agent", "gen_ai.agent.name": "a", "input.value": "hi"}
    spans = [ReadableSpan(name="invoke_agent a", context=SpanContext(7, 1, False, TraceFlags(1)),
                          attributes=wrap(attributes), start_time=second, end_time=second + 2_500_000),
             ReadableSpan(name="chat m", context=SpanContext(7, 2, False, TraceFlags(1)),
                          parent=SpanContext(7, 1, False, TraceFlags(1)),
                          attributes=wrap({"otel_agents.span.kind": "model", "gen_ai.request.model": "m"}),
                          start_time=second + 123_456_789, end_time=second + 200_000_000)]
    [env] = check(fold(spans))
    agent, model = json.loads(env["logs"])
    assert agent["start"] == "2023-11-14T22:13:20Z" and agent["duration_ms"] == 2.5
    assert model["start"] == "2023-11-14T22:13:20.123456Z" and model["parent_id"] == agent["span_id"]
    assert agent["attributes"] == {"gen_ai.agent.name": "a", "otel_agents.span.kind": "agent"}
    assert env["evaluation_context"] == "agent a\n  model m"
