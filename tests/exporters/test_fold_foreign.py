"""Issue 25: ECP envelopes from traces recorded by other instrumentations.

The golden fixtures in ``tests/exporters/foreign/`` are the customer-support example
(``examples/customer_support``) traced by the peers themselves, recorded once by
``scripts/fixtures/record_foreign.sh`` in a venv of their own: OpenInference's and OpenLLMetry's LangChain
and LlamaIndex instrumentations, PydanticAI's native instrumentation, and the OTel GenAI ``openai-v2``
instrumentation (model spans) with ``opentelemetry-util-genai`` (agent and tool spans). Each holds one
run per question of the example's manifest.

Each fixture is folded here and its envelopes are graded with the manifest's own checks (ecp-runtime's
``evaluate_step``), then compared field by field with the envelopes folded from our own spans of the
same framework on the same questions (our instrumentor, run in-process).
"""

from __future__ import annotations

import asyncio
import importlib.util
import inspect
import json
import subprocess
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
import yaml
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanKind

from otel_agents import configure, uninstrument
from otel_agents._spans import Usage
from otel_agents.exporters.ecp import fold
from otel_agents.exporters.file import read_otlp_json
from tests.exporters.conftest import check
from tests.exporters.fold_paths import collected, live, stream_file

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = Path(__file__).with_name("foreign")
EXAMPLES = ROOT / "examples" / "customer_support"
MANIFEST = yaml.safe_load((EXAMPLES / "manifest.yaml").read_text(encoding="utf-8"))
STEPS = [step for scenario in MANIFEST["scenarios"] for step in scenario["steps"]]
# fixture → the framework whose example it traces (our envelope of the same run comes from our instrumentor)
PEERS = {
    "openinference_langchain": "langchain",
    "openinference_llama_index": "llama_index",
    "openllmetry_langchain": "langchain",
    "openllmetry_llama_index": "llama_index",
    "pydantic_ai_native": "pydantic_ai",
    "otel_genai_openai_v2": "openai",
}


def peer_envelopes(peer: str) -> list[dict[str, Any]]:
    return fold(read_otlp_json(FIXTURES / f"{peer}.otlp.jsonl"))


@pytest.fixture(scope="module")
def ours() -> dict[str, list[dict[str, Any]]]:
    """The envelopes folded from our own spans: each framework's example on the manifest's questions."""
    out = {}
    for framework in PEERS.values():
        memory = InMemorySpanExporter()
        config = configure(exporters=[memory], frameworks=[framework], set_global=False, capture_content=True)
        try:
            name = f"otel_agents_foreign_{framework}"
            spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{framework}_agent.py")
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module  # pydantic models resolve their annotations through it
            spec.loader.exec_module(module)
            for step in STEPS:
                answer = module.agent(step["input"])
                if inspect.isawaitable(answer):
                    asyncio.run(answer)
        finally:
            config.shutdown()
            uninstrument()
        out[framework] = fold(memory.get_finished_spans())
    return out


def grade(envelope: dict[str, Any], step: dict[str, Any]) -> list[dict[str, Any]]:
    """The manifest step's checks on one envelope, as ``ecp run`` grades them."""
    from ecp_runtime.graders import evaluate_step
    from ecp_runtime.manifest import StepConfig

    return evaluate_step(StepConfig(**step), SimpleNamespace(**envelope))


def _result(value: Any) -> Any:
    if isinstance(value, str):
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


@pytest.mark.parametrize("peer", PEERS)
def test_peer_fixture_folds_one_schema_valid_envelope_per_run(peer: str) -> None:
    envelopes = check(peer_envelopes(peer))
    assert len(envelopes) == len(STEPS)
    assert len({e["trace_id"] for e in envelopes}) == len(STEPS)
    for envelope, step in zip(envelopes, STEPS):
        assert envelope["status"] == "done"
        assert envelope["public_output"].startswith("Order "), envelope["public_output"]
        order_id = step["input"].split("order ")[-1][:4]
        assert order_id in envelope["public_output"]
        calls = envelope["tool_calls"]
        assert calls and all(c["status"] == "ok" for c in calls)
        assert [c["arguments"] for c in calls] == [{"order_id": order_id}] * len(calls)
        assert all(isinstance(_result(c["result"]), dict) and _result(c["result"])["order_id"] == order_id
                   for c in calls)
        usage = envelope["usage"]
        assert usage["total_tokens"] == usage["input_tokens"] + usage["output_tokens"] > 0


@pytest.mark.parametrize("peer", PEERS)
def test_peer_envelopes_pass_the_manifest_checks_like_ours(peer: str, ours: dict[str, list[dict[str, Any]]]) -> None:
    """Graded with the customer-support manifest, each peer's envelope passes every check, as ours does,
    and agrees with ours on every graded field: the answer, the tool calls (names, arguments,
    results) and the model's usage."""
    theirs, mine = peer_envelopes(peer), ours[PEERS[peer]]
    assert len(mine) == len(theirs) == len(STEPS)
    for envelope, reference, step in zip(theirs, mine, STEPS):
        checks = grade(envelope, step)
        assert all(c["passed"] for c in checks), checks
        assert [c["passed"] for c in checks] == [c["passed"] for c in grade(reference, step)]
        assert envelope["public_output"] == reference["public_output"]
        assert [(c["name"], c["arguments"], _result(c["result"])) for c in envelope["tool_calls"]] == \
            [(c["name"], c["arguments"], _result(c["result"])) for c in reference["tool_calls"]]
        assert envelope["usage"] == reference["usage"]
        assert envelope["metrics"]["model_calls"] == reference["metrics"]["model_calls"]


def test_cli_folds_a_peer_fixture(tmp_path: Path) -> None:
    out = tmp_path / "envelopes.jsonl"
    proc = subprocess.run([sys.executable, "-m", "otel_agents.cli", "fold",
                           str(FIXTURES / "openinference_langchain.otlp.jsonl"), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    envelopes = check([json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()])
    assert [e["public_output"] for e in envelopes] == \
        [e["public_output"] for e in peer_envelopes("openinference_langchain")]


# -- every fold path agrees, whatever order the spans end in -------------------------------------------

FIXTURE_FILES = sorted(FIXTURES.glob("*.otlp.jsonl"))


@pytest.mark.parametrize("path", FIXTURE_FILES, ids=lambda p: p.name.split(".")[0])
def test_every_fold_path_gives_one_envelope_per_run_as_fold_does(path: Path) -> None:
    """One run, one envelope, in every fold path — the batch ``fold``, the file streamed (``otel-agents
    fold``), the live processor, ``ecp collect`` — whatever order the spans end in. Before, OpenLLMetry's
    LlamaIndex runs (the workflow span ends when ``run()`` returns its handler, the steps start after it)
    were split into several envelopes by the stream, and the live processor folded no foreign span at all
    (their kind attributes are set after the span started)."""
    spans = read_otlp_json(path)
    expected = sorted(map(json.dumps, check(fold(spans))))
    assert len(expected) == len(STEPS)
    for way, got in (("stream", stream_file(path)), ("live", live(spans)), ("collect", collected(spans))):
        assert sorted(map(json.dumps, got)) == expected, way


def _graded(envelope: dict[str, Any]) -> tuple:
    return (envelope["trace_id"], envelope["public_output"], envelope["usage"], envelope["evaluation_context"],
            [(c["name"], c["arguments"], c["id"], c["result"], c["status"]) for c in envelope["tool_calls"]])


def test_phoenix_span_search_page_folds_like_the_otlp_it_was_sent() -> None:
    """Phoenix's JSON export (``GET /v1/projects/{project}/spans/otlpv1``, recorded from a real Phoenix
    by ``scripts/fixtures/record_phoenix_page.py``) is OTLP spans without the resource/scope envelope, with
    proto field names and explicit nulls: ``otel-agents fold`` reads it, and the envelopes are those of
    the OTLP/JSON the spans were sent as (resource and scope are lost; the fold reads neither)."""
    page = FIXTURES / "phoenix_otlpv1_openinference_langchain.json"
    assert "resourceSpans" not in page.read_text(encoding="utf-8")[:200]
    from_phoenix = check(fold(read_otlp_json(page)))
    assert sorted(map(_graded, from_phoenix)) == sorted(map(_graded, peer_envelopes("openinference_langchain")))


# -- the readers on hand-made spans ----------------------------------------------------------------

def test_mixed_trace_folds_as_one_run(rec: Any) -> None:
    """Our agent span at the top, OpenInference and OTel GenAI spans of a framework below: one run,
    the foreign model and tool spans counted as steps of it."""
    app = rec.app
    with rec.telemetry.span("agent", "support") as agent:
        agent.set_agent("support")
        agent.set_input("Where is A100?")
        with app.start_as_current_span("LangGraph", attributes={"openinference.span.kind": "CHAIN"}):
            app.start_span("ChatOpenAI", kind=SpanKind.CLIENT, attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o", "llm.token_count.prompt": 10,
                "llm.token_count.completion": 4, "llm.token_count.total": 14,
                "llm.output_messages.0.message.role": "assistant",
                "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_9",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "lookup_order",
                "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments": '{"order_id": "A100"}',
            }).end()
            app.start_span("execute_tool lookup_order", attributes={
                "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_order",
                "gen_ai.tool.call.id": "call_9", "gen_ai.tool.call.result": "shipped"}).end()
        agent.set_output("A100 has shipped.")
    [env] = check(fold(rec.spans))
    assert env["public_output"] == "A100 has shipped."
    assert env["usage"] == {"input_tokens": 10, "output_tokens": 4, "total_tokens": 14}
    [call] = env["tool_calls"]
    assert (call["name"], call["arguments"], call["id"], call["result"], call["agent"]) == \
        ("lookup_order", {"order_id": "A100"}, "call_9", "shipped", "support")  # arguments: the model's request
    assert env["metrics"]["model_calls"] == 1


def test_another_instrumentations_view_of_our_step_is_not_a_second_step(rec: Any) -> None:
    """A GenAI ``chat`` span of the provider client under our model span, and PydanticAI's own agent span
    under our agent span of the same name, stay plain spans: no double count."""
    app = rec.app
    with rec.telemetry.span("agent", "support") as agent:
        agent.set_agent("support")
        with app.start_as_current_span("invoke_agent support", attributes={
                "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}):
            with rec.telemetry.span("model", "gpt-4o", operation="chat") as model:
                model.set_model(request_model="gpt-4o")
                model.set_usage(Usage(input_tokens=5, output_tokens=2))
                app.start_span("chat gpt-4o", attributes={
                    "gen_ai.operation.name": "chat", "gen_ai.usage.input_tokens": 5,
                    "gen_ai.usage.output_tokens": 2}).end()
        agent.set_output("done")
    [env] = check(fold(rec.spans))
    assert env["metrics"]["model_calls"] == 1
    assert env["usage"]["input_tokens"] == 5
    assert [a["name"] for a in env["agents"]] == ["support"]


def test_a_sibling_tree_of_another_instrumentation_is_not_counted_again(rec: Any) -> None:
    """Issue #34 fault 7: another instrumentation's GenAI tree beside ours under the step's span (Google ADK's
    own ``gcp.vertex.agent`` spans) — an ``invoke_workflow``/``invoke_agent`` of the same name, a
    ``generate_content`` span for the same request, an ``execute_tool`` with the same call id — adds no run,
    no usage and no tool call; a foreign model call that is not one of ours (another model) still counts."""
    app = rec.app
    with app.start_as_current_span("agent/step"):
        with app.start_as_current_span("invoke_workflow support", attributes={
                "gen_ai.operation.name": "invoke_workflow"}):
            with app.start_as_current_span("invoke_agent support", attributes={
                    "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}):
                with rec.telemetry.span("agent", "support") as agent:
                    agent.set_agent("support")
                    with rec.telemetry.span("model", "gemini-2.5-flash", operation="chat") as model:
                        model.set_model(request_model="gemini-2.5-flash", response_model="gemini-2.5-flash-001")
                        model.set_usage(Usage(input_tokens=10, output_tokens=5))
                        app.start_span("generate_content gemini-2.5-flash", attributes={
                            "gen_ai.operation.name": "generate_content", "gen_ai.request.model": "gemini-2.5-flash",
                            "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5}).end()
                    with rec.telemetry.span("tool", "lookup_order") as tool:
                        tool.set_tool("lookup_order", call_id="call-1", arguments={"order_id": "A100"})
                        tool.set_tool_result("shipped")
                        app.start_span("execute_tool lookup_order", attributes={
                            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup_order",
                            "gen_ai.tool.call.id": "call-1"}).end()
                    app.start_span("chat other-model", attributes={
                        "gen_ai.operation.name": "chat", "gen_ai.request.model": "other-model",
                        "gen_ai.usage.input_tokens": 3, "gen_ai.usage.output_tokens": 1}).end()
                    agent.set_output("A100 has shipped.")
    [env] = check(fold(rec.spans))
    assert env["public_output"] == "A100 has shipped."
    assert (env["usage"]["input_tokens"], env["usage"]["output_tokens"]) == (13, 6)
    assert env["metrics"]["model_calls"] == 2
    [call] = env["tool_calls"]
    assert (call["id"], call["result"]) == ("call-1", "shipped")
    assert [a["name"] for a in env["agents"]] == ["support"]


def test_unknown_vocabulary_is_ignored_and_a_run_without_facts_gives_no_envelope(rec: Any) -> None:
    app = rec.app
    app.start_span("job", attributes={"acme.span.kind": "agent", "acme.output": "x"}).end()
    app.start_span("wf", attributes={"openinference.span.kind": "CHAIN"}).end()  # no facts at all
    app.start_span("odd", attributes={"openinference.span.kind": 7, "gen_ai.operation.name": None}).end()
    problems: list[str] = []
    assert fold(rec.spans, problems=problems) == []
    assert problems == []


def test_an_agent_invocation_without_facts_is_a_run(rec: Any) -> None:
    """With content capture off (the OTel GenAI instrumentations' default), an agent that answered without a
    traced step exports one ``invoke_agent`` span and nothing else: that was no run at all, silently (an empty
    CHAIN still gives none)."""
    app = rec.app
    app.start_span("invoke_agent support", attributes={"gen_ai.operation.name": "invoke_agent",
                                                       "gen_ai.agent.name": "support"}).end()
    app.start_span("support", attributes={"openinference.span.kind": "AGENT"}).end()
    app.start_span("wf", attributes={"openinference.span.kind": "CHAIN"}).end()
    envelopes = check(fold(rec.spans))
    assert [(e["status"], e["public_output"], e["tool_calls"], e["evaluation_context"]) for e in envelopes] == [
        ("done", None, [], "agent support")] * 2


def test_openllmetry_spans_fold(rec: Any) -> None:
    """OpenLLMetry: a ``workflow`` root, an ``agent`` below it, a ``tool`` whose decorator recorded
    ``{"args", "kwargs"}``, and a model span known by ``llm.request.type`` with the pre-1.37 usage names."""
    app = rec.app
    with app.start_as_current_span("support.workflow", attributes={
            "traceloop.span.kind": "workflow", "traceloop.entity.name": "support",
            "traceloop.entity.output": json.dumps("A100 has shipped.")}):
        with app.start_as_current_span("support_agent.agent", attributes={
                "traceloop.span.kind": "agent", "traceloop.entity.name": "support_agent"}):
            app.start_span("openai.chat", kind=SpanKind.CLIENT, attributes={
                "llm.request.type": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.prompt_tokens": 12, "gen_ai.usage.completion_tokens": 3,
                "llm.usage.total_tokens": 15}).end()
            app.start_span("lookup_order.tool", attributes={
                "traceloop.span.kind": "tool", "traceloop.entity.name": "lookup_order",
                "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"order_id": "A100"}}),
                "traceloop.entity.output": json.dumps("shipped")}).end()
    [env] = check(fold(rec.spans))
    assert env["public_output"] == "A100 has shipped."
    assert env["usage"] == {"input_tokens": 12, "output_tokens": 3, "total_tokens": 15}
    [call] = env["tool_calls"]
    assert (call["name"], call["arguments"], call["result"], call["agent"]) == \
        ("lookup_order", {"order_id": "A100"}, "shipped", "support_agent")
    assert [a["name"] for a in env["agents"]] == ["support_agent"]


def test_genai_agent_span_without_output_gives_the_models_answer(rec: Any) -> None:
    """An OTel GenAI ``invoke_agent`` root that recorded no output (content off on the agent span):
    ``public_output`` is the last model response's text; older semconv names are read."""
    app = rec.app
    with app.start_as_current_span("invoke_agent support", attributes={
            "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "support"}):
        app.start_span("chat m", kind=SpanKind.CLIENT, attributes={
            "gen_ai.operation.name": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "m",
            "gen_ai.usage.prompt_tokens": 7, "gen_ai.usage.completion_tokens": 2,
            "gen_ai.output.messages": json.dumps([{"role": "assistant",
                                                   "parts": [{"type": "text", "content": "Hello."}]}])}).end()
    [env] = check(fold(rec.spans))
    assert env["public_output"] == "Hello."
    assert env["usage"] == {"input_tokens": 7, "output_tokens": 2, "total_tokens": 9}
    assert env["agents"][0]["name"] == "support"


def test_damaged_foreign_attributes_are_tolerated(rec: Any) -> None:
    """Wrong types and broken JSON in the attributes the readers copy give schema-valid envelopes, no error."""
    app = rec.app
    with app.start_as_current_span("root", attributes={"openinference.span.kind": "AGENT", "output.value": 42,
                                                        "output.mime_type": "application/json"}):
        app.start_span("t1", attributes={"openinference.span.kind": "TOOL", "input.value": '{"kwargs": 3}',
                                         "output.value": '{"type": "tool", "data": 5}', "tool_call.id": 3}).end()
        app.start_span("t2", attributes={"openinference.span.kind": "tool", "input.value": "{broken",
                                         "output.value": '{"raw_output": [1], "tool_name": "x", "raw_input": 1}'}).end()
        app.start_span("m", attributes={"openinference.span.kind": "LLM", "llm.token_count.prompt": "x",
                                        "llm.output_messages.0.message.content": 5}).end()
        app.start_span("a", attributes={"gen_ai.operation.name": "invoke_agent", "final_result": 3.5,
                                        "agent_name": ["x"]}).end()
        app.start_span("w", attributes={"traceloop.span.kind": "tool", "traceloop.entity.input": "{bad",
                                        "traceloop.entity.output": '{"args": [1, 2]}'}).end()
        app.start_span("c", attributes={"llm.request.type": "chat", "gen_ai.usage.prompt_tokens": -1}).end()
    problems: list[str] = []
    [env] = check(fold(rec.spans, problems=problems))
    assert problems == []
    assert env["public_output"] == "42"
    assert [c["name"] for c in env["tool_calls"]] == ["t1", "t2", "w"]


def test_crewai_answers_under_openinference_and_openllmetry(rec: Any) -> None:
    """CrewAI's answer as the peers record it on the run's root: OpenInference the whole ``CrewOutput`` as JSON
    (before: its JSON was the answer), OpenLLMetry ``crewai.crew.result`` on its workflow span, an
    ``invoke_agent`` span (before: no output, so no envelope at all). Shapes as recorded from
    ``openinference-instrumentation-crewai`` 1.1.21 and ``opentelemetry-instrumentation-crewai`` 0.62.4."""
    app = rec.app
    crew_output = {"raw": "Order A100: shipped", "pydantic": None, "json_dict": None, "token_usage": {},
                   "tasks_output": [{"description": "Where is A100?", "expected_output": "The status",
                                     "raw": "Order A100: shipped"}]}
    with app.start_as_current_span("Crew.kickoff", attributes={
            "openinference.span.kind": "CHAIN", "output.value": json.dumps(crew_output),
            "output.mime_type": "application/json"}):
        app.start_span("Order Clerk._execute_core", attributes={
            "openinference.span.kind": "AGENT", "output.value": json.dumps(crew_output["tasks_output"][0]),
            "output.mime_type": "application/json"}).end()
    with app.start_as_current_span("crewai.workflow", attributes={
            "gen_ai.operation.name": "invoke_agent", "crewai.crew.result": "Order A100: shipped"}):
        app.start_span("Where is A100?.task", attributes={
            "traceloop.span.kind": "task", "gen_ai.operation.name": "invoke_agent",
            "traceloop.entity.output": "Order A100: shipped"}).end()
    assert [e["public_output"] for e in check(fold(rec.spans))] == ["Order A100: shipped"] * 2


def test_a_run_that_is_one_request_or_one_call_answers_with_what_it_returned(rec: Any) -> None:
    """A provider client's or a tool's spans alone (OpenLLMetry's openai, OTel GenAI's langchain tool, OpenLLMetry's
    MCP): each is a run of its own, and its answer is what the span returned, as for ours — before, ``null``
    for a model request that called tools (its output is in ``gen_ai.output.messages``) and for a tool (its
    result is in ``gen_ai.tool.call.result``); MCP's ``{"tool_name", "arguments"}`` request gave the
    tool call's arguments whole."""
    app = rec.app
    requested = [{"role": "assistant", "parts": [{"type": "tool_call", "name": "lookup_order", "id": "call_1",
                                                   "arguments": {"order_id": "B200"}}], "finish_reason": "tool_call"}]
    app.start_span("openai.chat", attributes={
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 22,
        "gen_ai.usage.output_tokens": 3, "gen_ai.output.messages": json.dumps(requested)}).end()
    app.start_span("execute_tool get_weather", attributes={
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "get_weather",
        "gen_ai.tool.call.arguments": '{"city": "Paris"}', "gen_ai.tool.call.result": "sunny in Paris"}).end()
    app.start_span("lookup_order.tool", attributes={
        "traceloop.span.kind": "tool", "traceloop.entity.name": "lookup_order",
        "traceloop.entity.input": json.dumps({"tool_name": "lookup_order", "arguments": {"order_id": "B200"}}),
        "traceloop.entity.output": "shipped"}).end()
    model, tool, mcp = check(fold(rec.spans))
    assert json.loads(model["public_output"]) == requested
    assert (tool["public_output"], tool["tool_calls"][0]["result"]) == ("sunny in Paris", "sunny in Paris")
    assert (mcp["public_output"], mcp["tool_calls"][0]["arguments"]) == ("shipped", {"order_id": "B200"})


def test_smolagents_tool_arguments_under_openinference(rec: Any) -> None:
    """OpenInference records smolagents' ``Tool.__call__`` arguments whole, its own ``sanitize_inputs_outputs``
    beside the tool's keyword arguments: before, the arguments were that text (``{"input": "..."}``)."""
    rec.app.start_span("FunctionTool", attributes={
        "openinference.span.kind": "TOOL", "tool.name": "lookup_order",
        "input.value": json.dumps({"args": [], "sanitize_inputs_outputs": True, "kwargs": {"order_id": "B200"}}),
        "output.value": "delivered", "output.mime_type": "text/plain"}).end()
    [env] = check(fold(rec.spans))
    assert [(c["name"], c["arguments"], c["result"]) for c in env["tool_calls"]] == \
        [("lookup_order", {"order_id": "B200"}, "delivered")]


def test_a_provider_request_under_openinference_answers_with_the_models_text(rec: Any) -> None:
    """OpenInference's openai and langchain instrumentations record a model call's ``output.value`` as the
    provider's whole response object (a ``ChatCompletion``, a Responses ``Response``, LangChain's
    ``LLMResult``); its answer is in ``llm.output_messages`` (``message.content``, or the parts of
    ``message.contents`` for the Responses API). A run that is one such request answers with that text: before,
    ``public_output`` was the response object's JSON, which a grader comparing the answer fails."""
    app = rec.app
    completion = {"id": "chatcmpl-1", "object": "chat.completion", "model": "gpt-4o-mini", "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "Order A100 shipped."}}]}
    app.start_span("ChatCompletion", kind=SpanKind.CLIENT, attributes={
        "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 10,
        "output.value": json.dumps(completion), "output.mime_type": "application/json",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Order A100 shipped."}).end()
    response = {"id": "resp_1", "object": "response", "output": [{"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": "Order B200 is late."}]}]}
    app.start_span("Response", kind=SpanKind.CLIENT, attributes={
        "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 3,
        "output.value": json.dumps(response), "output.mime_type": "application/json",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.contents.0.message_content.type": "text",
        "llm.output_messages.0.message.contents.0.message_content.text": "Order B200",
        "llm.output_messages.0.message.contents.1.message_content.type": "text",
        "llm.output_messages.0.message.contents.1.message_content.text": "is late."}).end()
    llm_result = {"generations": [[{"text": "Refunds take 5 days.", "type": "ChatGeneration"}]], "llm_output": {}}
    app.start_span("ChatOpenAI", attributes={
        "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 7,
        "output.value": json.dumps(llm_result), "output.mime_type": "application/json",
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.content": "Refunds take 5 days."}).end()
    completion_env, response_env, langchain_env = check(fold(rec.spans))
    assert completion_env["public_output"] == "Order A100 shipped."
    assert response_env["public_output"] == "Order B200\nis late."  # its text parts, joined as message_text joins them
    assert langchain_env["public_output"] == "Refunds take 5 days."


def test_a_provider_request_under_openinference_that_called_tools_answers_with_the_calls(rec: Any) -> None:
    """A request whose answer is tool calls only, as openinference-instrumentation-openai 0.1.66 records it
    (``output.value`` the whole ``ChatCompletion``, the calls in ``llm.output_messages.*.tool_calls``, the finish
    reason in ``llm.finish_reason``): before, its ``public_output`` was that ``ChatCompletion``'s JSON (ids, usage
    and all), where the OTel GenAI instrumentations' and ours is the output messages, and no model evidence line of
    OpenInference said ``finish=`` (``llm.finish_reason`` was read only off our own spans). Now the calls as
    output messages, and the finish reason in the evidence and the ``logs`` attributes."""
    app = rec.app
    completion = {"id": "c1", "object": "chat.completion", "model": "gpt-4o-mini-2024-07-18", "choices": [
        {"index": 0, "finish_reason": "tool_calls", "message": {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'}}]}}],
        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
    calls = "llm.output_messages.0.message.tool_calls"
    app.start_span("ChatCompletion", kind=SpanKind.CLIENT, attributes={
        "openinference.span.kind": "LLM", "llm.system": "openai", "llm.model_name": "gpt-4o-mini-2024-07-18",
        "llm.token_count.prompt": 10, "llm.token_count.completion": 5,
        "output.value": json.dumps(completion), "output.mime_type": "application/json",
        "llm.output_messages.0.message.role": "assistant", f"{calls}.0.tool_call.id": "call_1",
        f"{calls}.0.tool_call.function.name": "get_weather",
        f"{calls}.0.tool_call.function.arguments": '{"city": "Paris"}', "llm.finish_reason": "tool_calls"}).end()
    with app.start_as_current_span("agent", attributes={"openinference.span.kind": "AGENT", "output.value": "sunny"}):
        app.start_span("ChatCompletion", kind=SpanKind.CLIENT, attributes={
            "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 3,
            "llm.output_messages.0.message.role": "assistant", "llm.output_messages.0.message.content": "sunny",
            "llm.finish_reason": "stop"}).end()
    request, agent = check(fold(rec.spans))
    assert json.loads(request["public_output"]) == [{"role": "assistant", "parts": [
        {"type": "tool_call", "id": "call_1", "name": "get_weather", "arguments": {"city": "Paris"}}],
        "finish_reason": "tool_calls"}]
    assert request["evaluation_context"] == \
        "model gpt-4o-mini-2024-07-18 finish=tool_calls tokens_in=10 tokens_out=5 calls=get_weather"
    assert json.loads(request["logs"])[0]["attributes"]["gen_ai.response.finish_reasons"] == ["tool_calls"]
    assert agent["evaluation_context"].splitlines()[1] == "  model gpt-4o-mini finish=stop tokens_in=3"


def test_a_call_openinference_writes_twice_in_one_message_is_one_call(rec: Any) -> None:
    """openinference-instrumentation-anthropic 3.1.0 writes each requested tool call in the message's
    ``message.tool_calls`` list and again as a part of its ``message.contents`` (``contents.{j}.tool_call.*``):
    the fold read both, ``calls=get_weather,get_weather`` for one call (and two tool_call parts in
    ``public_output``). A message's calls are its list; its contents are read only for a message without one."""
    out = "llm.output_messages.0.message"
    rec.app.start_span("messages.create", kind=SpanKind.CLIENT, attributes={
        "openinference.span.kind": "LLM", "llm.model_name": "claude-sonnet-4-5", "llm.token_count.prompt": 10,
        f"{out}.role": "assistant", "llm.finish_reason": "tool_use",
        f"{out}.tool_calls.0.tool_call.id": "toolu_1", f"{out}.tool_calls.0.tool_call.function.name": "get_weather",
        f"{out}.tool_calls.0.tool_call.function.arguments": '{"city": "Paris"}',
        f"{out}.contents.0.message_content.type": "tool_use", f"{out}.contents.0.tool_call.id": "toolu_1",
        f"{out}.contents.0.tool_call.function.name": "get_weather",
        f"{out}.contents.0.tool_call.function.arguments": '{"city": "Paris"}'}).end()
    rec.app.start_span("messages.create", kind=SpanKind.CLIENT, attributes={  # calls in its contents alone
        "openinference.span.kind": "LLM", "llm.model_name": "claude-sonnet-4-5", "llm.token_count.prompt": 10,
        f"{out}.role": "assistant", f"{out}.contents.0.tool_call.id": "toolu_2",
        f"{out}.contents.0.tool_call.function.name": "lookup_order"}).end()
    listed, in_contents = check(fold(rec.spans))
    assert listed["evaluation_context"] == "model claude-sonnet-4-5 finish=tool_use tokens_in=10 calls=get_weather"
    assert json.loads(listed["public_output"])[0]["parts"] == [
        {"type": "tool_call", "id": "toolu_1", "name": "get_weather", "arguments": {"city": "Paris"}}]
    assert in_contents["evaluation_context"] == "model claude-sonnet-4-5 tokens_in=10 calls=lookup_order"


def test_a_model_request_inside_another_instrumentations_view_of_it_is_one_call(rec: Any) -> None:
    """The ``anthropic`` SDK (2.x) opens its own ``anthropic.messages.create`` span (``gen_ai.operation.name=chat``,
    usage and all) inside the OTel GenAI anthropic instrumentation's ``chat`` span, or OpenInference's
    ``messages.create`` ``LLM`` span, of the same request; OpenInference's openai ``ChatCompletion`` sits inside its
    LangChain ``ChatOpenAI``. The fold counted each such request twice: two model calls, twice the usage and the
    cost. A foreign model (embedding) span under a foreign one of its kind is that request's second view (the
    counts only it recorded fill the outer one's); a tool inside a tool stays a call of its own."""
    native = rec.provider.get_tracer("com.anthropic.sdk.python")
    usage = {"gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5}
    with rec.provider.get_tracer("opentelemetry.instrumentation.genai.anthropic").start_as_current_span(
            "chat claude-sonnet-4-5", attributes={"gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
                                                  "gen_ai.request.model": "claude-sonnet-4-5", **usage}):
        native.start_span("anthropic.messages.create", attributes={
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "anthropic",
            "gen_ai.request.model": "claude-sonnet-4-5", **usage}).end()
    oi = rec.provider.get_tracer("openinference.instrumentation.langchain")
    with oi.start_as_current_span("agent", attributes={"openinference.span.kind": "AGENT", "output.value": "done"}):
        with oi.start_as_current_span("ChatOpenAI", attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.token_count.completion": 3}):
            rec.provider.get_tracer("openinference.instrumentation.openai").start_span("ChatCompletion", attributes={
                "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini", "llm.token_count.prompt": 7,
                "llm.token_count.completion": 3}).end()
        with oi.start_as_current_span("outer_tool", attributes={"openinference.span.kind": "TOOL", "tool.name": "a"}):
            oi.start_span("inner_tool", attributes={"openinference.span.kind": "TOOL", "tool.name": "b"}).end()
    genai, langchain = check(fold(rec.spans))
    assert (genai["metrics"]["model_calls"], genai["usage"]) == \
        (1, {"input_tokens": 10, "output_tokens": 5, "total_tokens": 15})
    assert genai["evaluation_context"] == "model claude-sonnet-4-5 tokens_in=10 tokens_out=5"
    assert (langchain["metrics"]["model_calls"], langchain["usage"]) == \
        (1, {"input_tokens": 7, "output_tokens": 3, "total_tokens": 10})  # the input count only the inner view had
    assert [call["name"] for call in langchain["tool_calls"]] == ["a", "b"]
