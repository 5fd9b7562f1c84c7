"""The support matrix: every framework's public run entry points × the ways a run ends (issue 34).

This module is plain data (it imports no framework), so every venv reads the same table:
``tests/matrix/test_matrix.py`` runs one test per cell (in the venv that has the framework), and
``python -m tests.matrix.table`` (``make support-matrix``) writes ``docs/support-matrix.md`` from it;
``test_support_matrix_doc_is_current`` fails when the committed file differs.

A cell is supported (its test passes), a known failure (``KNOWN``: the test is
``xfail(strict=True)`` with the reason, so it fails the day the bug is fixed and the entry must go),
or not supported (``UNSUPPORTED``: what we cannot make right, with the reason; collected as a skip
that prints the reason, never silently left out).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

ENDINGS: dict[str, str] = {
    "done": "consumed to the end",
    "break_close": "abandoned after the first event, closed (`close()`/`aclose()`)",
    "break_drop": "abandoned after the first event, dropped without closing (then `gc.collect()`)",
    "cancel": "the asyncio task running it cancelled while a tool runs",
    "tool_raises": "a tool raises",
    "model_raises": "the model raises",
}
"""Ending id → what happens (the doc's legend)."""

STOPS: dict[str, str] = {
    "caller_cancel": "the caller cancels the run with the framework's own handle while a tool runs (a streamed "
                     "result's `cancel()`, a cancellation token): `stop_reason` `cancelled`",
    "guardrail": "an output guardrail blocks the answer: the blocked answer is not the run's output; `stop_reason` "
                 "`guardrail`",
    "max_turns": "the model asks for the tool every turn until the framework's cap on turns, steps, iterations, "
                 "messages or model requests stops the run: `stop_reason` `max_turns`",
    "budget": "a cap on the run's tokens or cost stops it: `stop_reason` `budget`",
    "termination": "a termination condition that is not a cap ends the run: `stop_reason` `termination`",
    "skip_model": "a callback or hook answers instead of the model: no model span for the request never made, the "
                  "run's output is what the user got",
    "output_retry": "the model's first answer is rejected as structured output and the framework asks again: the "
                    "rejected attempt is a failed step, the run's output is the accepted answer",
    "sampling": "the tool server asks the client's model during the tool call (MCP `sampling/createMessage`): that "
                "model call is in the tool call's run, under its tool span",
}
"""Runs that end other than by the agent answering (issue 34): endings an entry point lists in its own
``endings`` where the framework has the feature; ``ALL_ENDINGS`` is both, the doc's second table the latter."""

ALL_ENDINGS: dict[str, str] = {**ENDINGS, **STOPS}

MODE_ENDINGS: dict[str, tuple[str, ...]] = {
    "sync": ("done", "tool_raises", "model_raises"),
    "async": ("done", "cancel", "tool_raises", "model_raises"),
    "stream": ("done", "break_close", "break_drop", "tool_raises", "model_raises"),
    "astream": ("done", "break_close", "break_drop", "cancel", "tool_raises", "model_raises"),
}
"""Which endings apply to an entry point: a sync call cannot be cancelled by asyncio, a call that returns
one result cannot be abandoned after its first event."""


@dataclass(frozen=True)
class Entry:
    """One public run entry point (the framework's own name), or a structural variant of a run."""

    name: str
    mode: str  # key of MODE_ENDINGS
    variant: bool = False  # a structural variant (multi-agent, user-written model class, ...), not a plain entry
    endings: tuple[str, ...] | None = None  # default: MODE_ENDINGS[mode]

    @property
    def applicable(self) -> tuple[str, ...]:
        return self.endings if self.endings is not None else MODE_ENDINGS[self.mode]


@dataclass(frozen=True)
class System:
    """One framework's rows: its entry points, and the cells that are not (yet) supported, with why."""

    name: str  # the framework name of otel_agents.instrumentors._frameworks.FRAMEWORKS
    title: str
    entries: tuple[Entry, ...]
    known: dict[tuple[str, str], str] = field(default_factory=dict)  # (entry, ending) -> bug, xfail(strict)
    unsupported: dict[tuple[str, str], str] = field(default_factory=dict)  # (entry, ending) -> why not


def _e(name: str, mode: str, **kw) -> Entry:
    return Entry(name, mode, **kw)


CLIENT = {"sync": ("done", "model_raises"), "async": ("done", "model_raises"),
          "stream": ("done", "break_close", "break_drop", "model_raises"),
          "astream": ("done", "break_close", "break_drop", "model_raises")}
"""A provider client's call is one model call: no tool of its own to raise; cancelled mid-request is a
framework's cell (the client's own request is cancelled with the task that awaits it)."""


def _c(name: str, mode: str) -> Entry:
    return Entry(name, mode, endings=CLIENT[mode])


SYSTEMS: tuple[System, ...] = (
    System("langchain", "LangChain / LangGraph (`create_agent` of LangChain 1.x and hand-built LangGraph graphs over a "
           "`BaseChatModel` subclass)", (
        *(_e(f"create_agent agent.{m}", mode, endings=(*MODE_ENDINGS[mode], "skip_model", "output_retry", "max_turns",
                                                       "guardrail"))
          for m, mode in (("invoke", "sync"), ("ainvoke", "async"), ("stream", "stream"), ("astream", "astream"))),
        _e("create_agent(middleware=[ToolCallLimitMiddleware(run_limit=1, exit_behavior='end')]) agent.invoke", "sync",
           variant=True, endings=("max_turns",)),
        _e("create_agent(middleware=[ModelCallLimitMiddleware(run_limit=2, exit_behavior='error')]) agent.invoke",
           "sync", variant=True, endings=("max_turns",)),
        _e("graph.invoke", "sync", endings=(*MODE_ENDINGS["sync"], "skip_model", "max_turns")),
        _e("graph.ainvoke", "async", endings=(*MODE_ENDINGS["async"], "skip_model", "max_turns")),
        _e("graph.stream", "stream", endings=(*MODE_ENDINGS["stream"], "skip_model", "max_turns")),
        _e("graph.astream", "astream", endings=(*MODE_ENDINGS["astream"], "skip_model", "max_turns")),
        _e("graph.stream(stream_mode='messages')", "stream", endings=(*MODE_ENDINGS["stream"], "skip_model")),
        _e("graph.astream(stream_mode='updates')", "astream", endings=(*MODE_ENDINGS["astream"], "skip_model")),
        _e("graph.astream_events", "astream", endings=(*MODE_ENDINGS["astream"], "skip_model", "max_turns")),
        _e("graph.batch", "sync", endings=(*MODE_ENDINGS["sync"], "skip_model")),
        _e("graph.stream(stream_mode='values')", "stream"),
        _e("graph.abatch", "async"),
        _e("graph.stream(stream_mode='custom')", "stream"),
        _e("graph.astream(stream_mode='custom')", "astream"),
        _e("graph.stream(stream_mode='debug')", "stream"),
        _e("graph.astream(stream_mode='debug')", "astream"),
        _e("graph.stream(stream_mode='tasks')", "stream"),
        _e("graph.astream(stream_mode='checkpoints')", "astream"),
        _e("supervisor graph.invoke", "sync", variant=True),
        _e("supervisor graph.stream", "stream", variant=True),
        _e("supervisor graph.astream(stream_mode='messages')", "astream", variant=True),
        _e("supervisor graph.astream(stream_mode='values')", "astream", variant=True),
        _e("model.invoke", "sync", endings=("done", "model_raises")),
        _e("model.stream", "stream", endings=("done", "break_close", "break_drop", "model_raises")),
        _e("model.astream", "astream", endings=("done", "break_close", "break_drop", "model_raises")),
        _e("(model | JsonOutputParser()).with_retry().invoke", "sync", variant=True, endings=("output_retry",)),
    )),
    System("llama_index", "LlamaIndex (`FunctionAgent`, `ReActAgent` over the core's `MockFunctionCallingLLM`; query "
           "engines over a `CustomLLM` subclass)", (
        _e("FunctionAgent.run", "async", endings=(*MODE_ENDINGS["async"], "caller_cancel", "max_turns")),
        _e("FunctionAgent.run().stream_events", "astream", endings=(*MODE_ENDINGS["astream"], "max_turns")),
        _e("ReActAgent.run", "async", endings=(*MODE_ENDINGS["async"], "caller_cancel", "max_turns", "output_retry")),
        _e("ReActAgent.run().stream_events", "astream", endings=(*MODE_ENDINGS["astream"], "max_turns",
                                                                 "output_retry")),
        _e("FunctionAgent.run(early_stopping_method='generate')", "async", variant=True, endings=("max_turns",)),
        _e("query_engine.query", "sync", endings=("done", "model_raises")),
        _e("query_engine.aquery", "async", endings=("done", "model_raises")),
        _e("query_engine(streaming=True).query().response_gen", "stream",
           endings=("done", "break_close", "break_drop", "model_raises")),
        _e("query_engine(streaming=True).aquery().response_gen", "astream",
           endings=("done", "break_close", "break_drop", "model_raises")),
        _e("AgentWorkflow.run", "async", variant=True, endings=(*MODE_ENDINGS["async"], "caller_cancel",
                                                                "max_turns")),
        _e("AgentWorkflow.run(early_stopping_method='generate')", "async", variant=True, endings=("max_turns",)),
        _e("AgentWorkflow.run().stream_events", "astream", variant=True, endings=(*MODE_ENDINGS["astream"],
                                                                                  "max_turns")),
    )),
    System("crewai", "CrewAI (crews over a `BaseLLM` subclass, ReAct)", (
        _e("Crew.kickoff", "sync", endings=(*MODE_ENDINGS["sync"], "output_retry", "guardrail", "max_turns")),
        _e("Crew.kickoff_async", "async", endings=(*MODE_ENDINGS["async"], "output_retry", "guardrail",
                                                   "max_turns")),
        _e("Crew.akickoff", "async"),
        _e("Crew.kickoff_for_each", "sync"),
        _e("Crew.kickoff_for_each_async", "async"),
        _e("Crew.akickoff_for_each", "async"),
        _e("Flow.kickoff", "sync"),
        _e("Flow.kickoff_async", "async"),
        _e("Flow.akickoff", "async"),
        _e("Flow.kickoff_async (async step, Crew.akickoff)", "async", variant=True),
        _e("two agents Crew.kickoff", "sync", variant=True),
        _e("two agents Crew.akickoff", "async", variant=True, endings=("done", "tool_raises", "model_raises")),
        _e("delegation Crew.kickoff", "sync", variant=True),
        _e("Process.hierarchical Crew.kickoff", "sync", variant=True),
    ), unsupported={(e, "cancel"): "`kickoff_async` runs the crew in a worker thread "
                    "(`asyncio.to_thread`): cancelling the awaiting task does not stop the run, so the tool is not "
                    "cancelled" for e in ("Crew.kickoff_async", "Crew.kickoff_for_each_async")}
       | {(e, "cancel"): "a flow runs a sync method (here the one that kicks off the crew) in a "
          "worker thread (`asyncio.to_thread`): cancelling the task that awaits the flow does not stop the crew, so "
          "the tool is not cancelled" for e in ("Flow.kickoff_async", "Flow.akickoff")}
       | {(e, "cancel"): "CrewAI's agent executor (itself a `Flow`) runs its tool step (`execute_tool_action`, a sync "
          "flow method) in a worker thread, an async tool under an `asyncio.run` of its own there: cancelling the task "
          "that awaits `akickoff` does not reach the tool, which runs to its end (measured with an async tool, "
          "uninstrumented too)"
          for e in ("Crew.akickoff", "Crew.akickoff_for_each", "Flow.kickoff_async (async step, Crew.akickoff)")}),
    System("pydantic_ai", "PydanticAI (over a model class of the user's own: a `Model` subclass)", (
        _e("run_sync", "sync", endings=(*MODE_ENDINGS["sync"], "skip_model", "output_retry", "max_turns", "budget")),
        _e("run", "async", endings=(*MODE_ENDINGS["async"], "skip_model", "output_retry", "max_turns", "budget")),
        _e("run_stream", "astream", endings=(*MODE_ENDINGS["astream"], "skip_model", "output_retry", "max_turns",
                                             "budget")),
        _e("run_stream_sync", "stream", endings=(*MODE_ENDINGS["stream"], "skip_model", "output_retry", "max_turns",
                                                 "budget")),
        _e("run_stream_events", "astream", endings=(*MODE_ENDINGS["astream"], "skip_model", "output_retry",
                                                     "max_turns", "budget")),
        _e("iter", "astream", endings=(*MODE_ENDINGS["astream"], "skip_model", "output_retry", "max_turns", "budget")),
        _e("run (UsageLimits(input_tokens_limit))", "async", variant=True, endings=("budget",)),
        _e("run (UsageLimits(output_tokens_limit))", "async", variant=True, endings=("budget",)),
        _e("run (UsageLimits(cost_limit))", "async", variant=True, endings=("budget",)),
        _e("delegation run", "async", variant=True),
        _e("delegation run_stream", "astream", variant=True),
        _e("delegation iter", "astream", variant=True),
    ), unsupported={(e, "output_retry"): "`run_stream()` does not retry an output its validator rejects: "
                    "it raises `UnexpectedModelBehavior` (\"retries are not supported in `run_stream()`\"; "
                    "`run_stream_sync()` runs it); the other entry points retry"
                    for e in ("run_stream", "run_stream_sync")}),
    System("openai", "OpenAI client (a single call; chat completions and responses, sync and async)", tuple(
        _c(f"{prefix}{name}", mode) for prefix, aio in (("", False), ("AsyncOpenAI ", True))
        for name, mode in (("chat.completions.create", "sync"), ("chat.completions.create(stream=True)", "stream"),
                           ("chat.completions.stream", "stream"), ("responses.create", "sync"),
                           ("responses.create(stream=True)", "stream"), ("responses.stream", "stream"),
                           ("chat.completions.parse", "sync"), ("responses.parse", "sync"))
        for mode in [("a" + mode if mode == "stream" else "async") if aio else mode])),
    System("openai_agents", "OpenAI Agents SDK (over a model class of the user's own: an `agents.Model` subclass)", (
        _e("Runner.run", "async", endings=(*MODE_ENDINGS["async"], "skip_model", "guardrail", "max_turns")),
        _e("Runner.run_sync", "sync", endings=(*MODE_ENDINGS["sync"], "skip_model", "guardrail", "max_turns")),
        _e("Runner.run_streamed", "astream", endings=(*MODE_ENDINGS["astream"], "skip_model", "caller_cancel",
                                                      "guardrail", "max_turns")),
        _e("handoff Runner.run", "async", variant=True),
        _e("handoff Runner.run_sync", "sync", variant=True),
        _e("handoff Runner.run_streamed", "astream", variant=True),
        _e("agent.as_tool Runner.run", "async", variant=True),
        _e("agent.as_tool Runner.run_streamed", "astream", variant=True),
        _e("Runner.run_streamed cancel(mode='after_turn')", "astream", endings=("caller_cancel",)),
        _e("handoff Runner.run_streamed cancel(mode='after_turn')", "astream", variant=True,
           endings=("caller_cancel",)),
        _e("input_guardrail Runner.run", "async", endings=("guardrail",)),
        _e("input_guardrail Runner.run_sync", "sync", endings=("guardrail",)),
        _e("input_guardrail Runner.run_streamed", "astream", endings=("guardrail",)),
        _e("input_guardrail(run_in_parallel=False) Runner.run", "async", endings=("guardrail",)),
    )),
    System("agno", "Agno", (
        _e("Agent.run", "sync", endings=(*MODE_ENDINGS["sync"], "guardrail", "caller_cancel")),
        _e("Agent.run(stream=True)", "stream", endings=(*MODE_ENDINGS["stream"], "guardrail", "caller_cancel")),
        _e("Agent.arun", "async", endings=(*MODE_ENDINGS["async"], "guardrail", "caller_cancel")),
        _e("Agent.arun(stream=True)", "astream", endings=(*MODE_ENDINGS["astream"], "guardrail", "caller_cancel")),
        _e("Team.run", "sync", variant=True, endings=(*MODE_ENDINGS["sync"], "guardrail", "caller_cancel")),
        _e("Team.run(stream=True)", "stream", variant=True, endings=(*MODE_ENDINGS["stream"], "guardrail", "caller_cancel")),
        _e("Team.arun", "async", variant=True, endings=(*MODE_ENDINGS["async"], "guardrail", "caller_cancel")),
        _e("Team.arun(stream=True)", "astream", variant=True, endings=(*MODE_ENDINGS["astream"], "guardrail", "caller_cancel")),
        _e("Workflow.run", "sync", endings=(*MODE_ENDINGS["sync"], "caller_cancel")),
        _e("Workflow.run(stream=True)", "stream", endings=(*MODE_ENDINGS["stream"], "caller_cancel")),
        _e("Workflow.arun", "async", endings=(*MODE_ENDINGS["async"], "caller_cancel")),
        _e("Workflow.arun(stream=True)", "astream", endings=(*MODE_ENDINGS["astream"], "caller_cancel")),
        _e("broadcast Team.run", "sync", variant=True),
        _e("broadcast Team.arun(stream=True)", "astream", variant=True),
        _e("tasks Team.run", "sync", variant=True),
        _e("tasks Team.arun(stream=True)", "astream", variant=True),
        _e("route Team.run", "sync", variant=True),
        _e("route Team.arun(stream=True)", "astream", variant=True),
    )),
    System("smolagents", "smolagents (`ToolCallingAgent` over a `Model` subclass)", (
        _e("agent.run", "sync", endings=(*MODE_ENDINGS["sync"], "output_retry", "caller_cancel", "max_turns")),
        _e("agent.run(stream=True)", "stream", endings=(*MODE_ENDINGS["stream"], "output_retry", "caller_cancel",
                                                        "max_turns")),
        _e("managed_agents agent.run", "sync", variant=True),
        _e("managed_agents agent.run(stream=True)", "stream", variant=True),
    ), unsupported={(e, "break_close"): "smolagents' own stream generator ignores "
                    "`GeneratorExit`: `close()` raises `RuntimeError` without instrumentation too (dropped without "
                    "closing is supported)"
                    for e in ("agent.run(stream=True)", "managed_agents agent.run(stream=True)")}),
    System("google_adk", "Google ADK (its own venv; a `BaseLlm` subclass)", (
        _e("Runner.run", "stream", endings=(*MODE_ENDINGS["stream"], "skip_model", "max_turns")),
        _e("Runner.run_async", "astream", endings=(*MODE_ENDINGS["astream"], "skip_model", "max_turns")),
        _e("Runner.run_live", "astream"),
        _e("sub_agents Runner.run", "stream", variant=True),
        _e("sub_agents Runner.run_async", "astream", variant=True),
        _e("AgentTool Runner.run", "stream", variant=True),
        _e("AgentTool Runner.run_async", "astream", variant=True),
    )),
    System("autogen_agentchat", "AutoGen AgentChat (its own venv; a `ChatCompletionClient` subclass)", (
        _e("agent.run", "async", endings=(*MODE_ENDINGS["async"], "caller_cancel")),
        _e("agent.run_stream", "astream", endings=(*MODE_ENDINGS["astream"], "caller_cancel")),
        _e("agent.on_messages_stream", "astream"),
        _e("AgentTool agent.run", "async", variant=True),
        _e("AgentTool agent.run_stream", "astream", variant=True),
        _e("RoundRobinGroupChat.run", "async", variant=True),
        _e("RoundRobinGroupChat.run_stream", "astream", variant=True),
        _e("SelectorGroupChat.run", "async", variant=True),
        _e("SelectorGroupChat.run_stream", "astream", variant=True),
        _e("Swarm.run", "async", variant=True),
        _e("Swarm.run_stream", "astream", variant=True),
        _e("MagenticOneGroupChat.run", "async", variant=True,
           endings=(*MODE_ENDINGS["async"], "max_turns", "termination")),
        _e("MagenticOneGroupChat.run_stream", "astream", variant=True,
           endings=(*MODE_ENDINGS["astream"], "max_turns", "termination")),
        _e("GraphFlow.run", "async", variant=True, endings=(*MODE_ENDINGS["async"], "max_turns", "termination")),
        _e("GraphFlow.run_stream", "astream", variant=True,
           endings=(*MODE_ENDINGS["astream"], "max_turns", "termination")),
        _e("TeamTool agent.run", "async", variant=True),
        _e("TeamTool agent.run_stream", "astream", variant=True),
        _e("RoundRobinGroupChat.run (one agent)", "async", variant=True,
           endings=("caller_cancel", "max_turns", "budget", "termination")),
        _e("RoundRobinGroupChat.run_stream (one agent)", "astream", variant=True,
           endings=("caller_cancel", "max_turns", "budget", "termination")),
    ), unsupported={(f"{team}.{m}", "cancel"): "cancelling the task that awaits a team does not stop the team's "
                    "runtime: the agent's turn goes on in the runtime's own task and the tool is not cancelled "
                    "(AutoGen stops a team by its `CancellationToken`)"
                    for team in ("RoundRobinGroupChat", "SelectorGroupChat", "Swarm", "MagenticOneGroupChat", "GraphFlow")
                    for m in ("run", "run_stream")}
       | {(e, "caller_cancel"): "AutoGen 0.7.5 hangs, uninstrumented too, when the run's "
          "`CancellationToken` is cancelled while a tool runs: `AssistantAgent` waits forever on the queue "
          "its tool-call task was to end with `None` (the task dies of `CancelledError` first), and a "
          "team waits for that agent to go idle" for e in ("agent.run", "agent.run_stream",
                                                             "RoundRobinGroupChat.run (one agent)",
                                                             "RoundRobinGroupChat.run_stream (one agent)")}),
    System("claude_agent_sdk", "Claude Agent SDK (over a fake CLI in process: a `Transport` of the user's own; the "
           "tool is an SDK MCP tool)", (
        _e("query", "astream", endings=(*MODE_ENDINGS["astream"], "max_turns", "budget")),
        _e("ClaudeSDKClient.receive_response", "astream", endings=(*MODE_ENDINGS["astream"], "caller_cancel",
                                                                   "max_turns", "budget")),
        _e("subagent query", "astream", variant=True),
        _e("subagent ClaudeSDKClient.receive_response", "astream", variant=True),
        _e("background subagent query", "astream", variant=True),
    )),
    System("a2a", "A2A (a client calling a remote agent; client and server in one process: JSON-RPC and HTTP+JSON "
           "over ASGI, gRPC on a loopback port; the remote agent runs a PydanticAI agent; across processes: "
           "tests/a2a/test_a2a.py)", (
        _e("send_message", "async", variant=True),
        _e("send_message streaming", "astream", variant=True),
        _e("HTTP+JSON send_message", "async", variant=True),
        _e("HTTP+JSON send_message streaming", "astream", variant=True),
        _e("gRPC send_message", "async", variant=True),
        _e("gRPC send_message streaming", "astream", variant=True),
    )),
    System("mcp", "MCP (client and server in one process, in-memory transport)", (
        _e("ClientSession.call_tool", "async", endings=("done", "cancel", "tool_raises", "sampling")),
    )),
    System("anthropic", "Anthropic client (a single call, sync and async)", tuple(
        _c(f"{prefix}{name}", mode) for prefix, aio in (("", False), ("AsyncAnthropic ", True))
        for name, mode in (("messages.create", "sync"), ("messages.create(stream=True)", "stream"),
                           ("messages.stream", "stream"))
        for mode in [("a" + mode if mode == "stream" else "async") if aio else mode])),
)
"""Every system of the matrix, in the README's order."""


PENDING: tuple[str, ...] = (
    "Google ADK's `after_model_callback` replacing an answer (the model was asked: not `skip_model`) is tested in "
    "tests/google_adk, not as a cell. No such hook (so no cell): skip_model in Agno (pre-hooks can only raise), "
    "CrewAI (`before_llm_call` can only block), LlamaIndex, smolagents, AutoGen; output_retry in the OpenAI Agents "
    "SDK (an invalid `output_type` raises `ModelBehaviorError`), Agno (`output_schema` parse failure is logged, not "
    "retried), LlamaIndex `output_cls` (a warning), AutoGen `output_content_type` (raises), Google ADK "
    "(`output_schema` validation raises; its `ReflectAndRetryModelPlugin` retries malformed function calls, a model "
    "error, not a rejected output), LangChain `create_agent` with `ProviderStrategy` (a parse failure raises)",
    "No such feature (so no cell): Agno `tool_call_limit` refuses the calls past it and asks the model again (the run "
    "goes on); no output guardrail in smolagents, PydanticAI, LlamaIndex, LangGraph's own graphs, Google ADK or AutoGen "
    "(their checks that reject an answer and retry are `output_retry`); no caller handle to cancel a run in LangChain, "
    "CrewAI, PydanticAI or Google ADK (a task cancelled is the `cancel` column)",
    "Across processes (A2A, MCP): tested in tests/a2a and tests/mcp with real child processes (every A2A transport, "
    "unary and streaming; a client that leaves a stream, whose server span is then abandoned too; client, server and "
    "`ecp collect` as three processes in tests/a2a/test_collect_a2a.py, a server killed mid-call included), not as "
    "cells",
)
"""What the matrix does not cover yet (issue 34): listed in the doc, so a missing cell is never silent."""


def system(name: str) -> System:
    return next(s for s in SYSTEMS if s.name == name)


def cells(s: System) -> list[tuple[Entry, str, str, str]]:
    """``(entry, ending, verdict, reason)`` for every applicable cell of ``s``; verdict is ``supported``,
    ``known`` or ``unsupported``."""
    out = []
    for entry in s.entries:
        for ending in entry.applicable:
            key = (entry.name, ending)
            if key in s.unsupported:
                out.append((entry, ending, "unsupported", s.unsupported[key]))
            elif key in s.known:
                out.append((entry, ending, "known", s.known[key]))
            else:
                out.append((entry, ending, "supported", ""))
    return out


def _check_table() -> None:
    for s in SYSTEMS:
        names = [e.name for e in s.entries]
        assert len(names) == len(set(names)), f"{s.name}: duplicate entry"
        for key in (*s.known, *s.unsupported):
            entry = next((e for e in s.entries if e.name == key[0]), None)
            assert entry is not None and key[1] in entry.applicable, f"{s.name}: {key} is not a cell"


_SYMBOL = {"supported": "✅", "known": "❌", "unsupported": "⛔"}


def render() -> str:
    """``docs/support-matrix.md``, written from :data:`SYSTEMS`."""
    _check_table()
    lines = [
        "# Support matrix: every entry point, every ending",
        "",
        "<!-- Generated from tests/matrix/table.py by `make support-matrix`; do not edit by hand. -->",
        "",
        "Each cell is one test in `tests/matrix/` (in the venv of its framework: Google ADK and AutoGen AgentChat",
        "run in their own, see the Makefile's `ISOLATED` block). A run over a fake model that records what it",
        "returned call by call; the test asserts one `model` span per call with that call's usage and finish",
        "reason (absent when the model sent none; an abandoned stream has usage only if the provider sent its",
        "final usage), one `tool` span per tool call, every span ended and none left current, the caller's",
        "result the same as without instrumentation, and the ECP envelope folded from the spans",
        "(`public_output` = the top agent's final answer, `usage` = the sum of the calls, `tool_calls` in",
        "order, `agents` = who delegated to whom; a cancelled or failed tool is not `ok`; a failed run has",
        "`error` lines, a cancelled one none: it was stopped, not failed, and its `stop_reason` says so).",
        "",
        "✅ supported (the test passes) · ❌ known failure (a bug: the test is an expected failure until it is",
        "fixed) · ⛔ not supported (with the reason) · blank: the ending does not apply to that entry point.",
        "",
        "Endings:",
        "",
    ]
    for key, text in ENDINGS.items():
        lines.append(f"- `{key}`: {text}")
    lines += ["", "Runs that end other than by the agent answering (where the framework has the feature; each "
              "framework's second table):", ""]
    for key, text in STOPS.items():
        lines.append(f"- `{key}`: {text}")
    lines.append("")
    totals = {"supported": 0, "known": 0, "unsupported": 0}
    for s in SYSTEMS:
        got = cells(s)
        notes: list[str] = []
        lines += [f"## {s.title}", ""]
        for columns in (ENDINGS, STOPS):
            entries = [e for e in s.entries if any(k in columns for k in e.applicable)]
            if entries:
                lines += _table(s, entries, columns, got, notes, totals) + [""]
        for i, note in enumerate(notes, 1):
            lines.append(f"{i}. {note}")
        if notes:
            lines.append("")
    lines += ["## Not in the matrix yet", ""] + [f"- {p}" for p in PENDING] + [""]
    lines += ["## Totals", "",
              f"{totals['supported']} cells supported, {totals['known']} known failures, "
              f"{totals['unsupported']} not supported.", ""]
    return "\n".join(lines)


def _table(s: System, entries: list[Entry], columns: dict[str, str], got: list, notes: list[str],
           totals: dict[str, int]) -> list[str]:
    """One markdown table: ``entries`` × ``columns``; reasons are numbered into ``notes``."""
    lines = ["| entry point | " + " | ".join(f"`{k}`" for k in columns) + " |", "|---|" + "---|" * len(columns)]
    for entry in entries:
        row = []
        for ending in columns:
            found = next((c for c in got if c[0] is entry and c[1] == ending), None)
            if found is None:
                row.append("")
                continue
            verdict, reason = found[2], found[3]
            totals[verdict] += 1
            mark = _SYMBOL[verdict]
            if reason:
                if reason not in notes:
                    notes.append(reason)
                mark += f" [{notes.index(reason) + 1}]"
            row.append(mark)
        label = f"`{entry.name}`" + (" (variant)" if entry.variant else "")
        lines.append(f"| {label} | " + " | ".join(row) + " |")
    return lines


DOC = Path(__file__).resolve().parents[2] / "docs" / "support-matrix.md"

if __name__ == "__main__":
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else DOC
    target.write_text(render(), encoding="utf-8")
    print(f"wrote {target}")
