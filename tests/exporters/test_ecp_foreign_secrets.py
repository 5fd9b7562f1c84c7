"""Secrets in spans our span layer did not write are redacted in the envelope, on every path that folds.

Other instrumentations (OpenInference, OpenLLMetry, OTel GenAI, PydanticAI's native spans, HTTP clients, a
span opened by hand) write their values as they come: an API key attribute, a password among a tool call's
arguments, a key quoted in an exception's message. ``fold``, ``otel-agents fold``, the receiver of
``otel-agents ecp collect`` (tests/collect) and ``ECPFoldingProcessor`` must redact them as our span layer
redacts what it writes (both rules of ``otel_agents._spans.redaction``), and keep every other value as it was.
"""

from __future__ import annotations

import json
import os
from typing import Any

from opentelemetry import trace
from opentelemetry.trace import Status, StatusCode

from otel_agents._spans import ChatMessage
from otel_agents.cli import main
from otel_agents.exporters.ecp import ECPFoldingProcessor, fold

from .conftest import Recorder, check
from .test_file import write

MARK = "h0st1le"  # in every secret below, and nowhere else
KEY = f"sk-proj-{MARK}{MARK}{MARK}"  # an OpenAI key's shape
GITHUB = f"ghp_{MARK * 5}"
R = "[REDACTED]"


def _span(tracer: Any, name: str, attributes: dict[str, Any], parent: Any = None, *, error: str | None = None,
          kind: trace.SpanKind = trace.SpanKind.INTERNAL) -> Any:
    span = tracer.start_span(name, context=trace.set_span_in_context(parent) if parent is not None else None,
                             attributes=attributes, kind=kind)
    if error is not None:
        span.set_status(Status(StatusCode.ERROR, error))
    return span


def hostile_runs(rec: Recorder) -> None:
    """Five runs, each hiding secrets where its vocabulary puts values: OpenInference (with an HTTP client span
    and a plain span under it), OpenLLMetry, OTel GenAI, PydanticAI's native spans, and a run of ours with
    another instrumentation's model span and HTTP span inside."""
    t = rec.app
    # OpenInference (LangChain's instrumentation): the agent's input and output, a model's requested call, the tool.
    agent = _span(t, "AgentExecutor", {
        "openinference.span.kind": "AGENT", "agent.name": "support",
        "input.value": json.dumps({"input": "Where is order A100?", "password": f"pw-{MARK}"}),
        "input.mime_type": "application/json",
        "output.value": f"A100 has shipped. Authorization: Bearer {MARK}.abcdefgh"})
    llm = _span(t, "ChatOpenAI", {
        "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o", "llm.provider": "openai",
        "llm.token_count.prompt": 12, "llm.token_count.completion": 5,
        "llm.invocation_parameters": json.dumps({"temperature": 0, "api_key": KEY}),
        "llm.output_messages.0.message.role": "assistant",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_1",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "lookup_order",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.arguments":
            json.dumps({"order": "A100", "api_key": f"k-{MARK}"}),
        "gen_ai.openai.api_key": f"k-{MARK}-attribute"}, agent)
    llm.end()
    tool = _span(t, "lookup_order", {
        "openinference.span.kind": "TOOL", "tool.name": "lookup_order",
        "input.value": json.dumps({"order": "A100", "api_key": f"k-{MARK}"}), "input.mime_type": "application/json",
        "output.value": json.dumps({"status": "shipped", "session_token": f"t-{MARK}"}),
        "output.mime_type": "application/json"}, agent, error=f"AuthError: key {KEY} was refused")
    http = _span(t, f"GET https://bob:{MARK}@api.example.com", {
        "http.request.method": "GET", "url.full": f"https://bob:{MARK}@api.example.com/v1/orders/{GITHUB}?token={MARK}",
        "server.address": "api.example.com", "http.response.status_code": 500}, tool,
        error=f"HTTPError: 500 for password={MARK}", kind=trace.SpanKind.CLIENT)
    http.end()
    tool.end()
    plain = _span(t, f"connect db=orders token={MARK}", {"note": "plain"}, agent)
    plain.end()
    # a URL's parameters: a percent-encoded name, a value with a slash, a fragment after it, the URL as a value
    fetch = _span(t, f"fetch ENDPOINT=https://api.example.com/v1?v=2&api%5Fkey={MARK}/x#top", {"note": "plain"}, agent)
    fetch.end()
    agent.end()
    # OpenLLMetry (Traceloop): a workflow, a model call with its key and prompt, a tool's entity input/output.
    workflow = _span(t, "refunds.workflow", {
        "traceloop.span.kind": "workflow", "traceloop.entity.name": "refunds",
        "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"client_secret": f"cs-{MARK}"}}),
        "traceloop.entity.output": json.dumps(f"Refund issued. Used {KEY}.")})
    chat = _span(t, "openai.chat", {
        "llm.request.type": "chat", "gen_ai.system": "openai", "gen_ai.request.model": "gpt-4o",
        "gen_ai.openai.api_key": KEY, "gen_ai.usage.prompt_tokens": 3, "gen_ai.usage.completion_tokens": 4,
        "gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": f"my key is {KEY}",
        "http.request.header.authorization": (f"Bearer {MARK}-header",)}, workflow)
    chat.end()
    refund = _span(t, "refund.tool", {
        "traceloop.span.kind": "tool", "traceloop.entity.name": "refund",
        "traceloop.entity.input": json.dumps({"args": [], "kwargs": {"order": "A100", "password": f"pw-{MARK}"}}),
        "traceloop.entity.output": json.dumps({"refunded": 42.5, "receipt": "R-7", "api_key": f"k-{MARK}"})},
        workflow)
    refund.end()
    workflow.end()
    # OTel GenAI semconv: an agent, a failing tool with its arguments and result, a model's requested call.
    genai = _span(t, "invoke_agent triage", {"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "triage"})
    call = _span(t, "execute_tool search", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "search", "gen_ai.tool.call.id": "call_9",
        "gen_ai.tool.call.arguments": json.dumps({"q": "refund policy", "access_token": f"at-{MARK}"}),
        "gen_ai.tool.call.result": f"found 3 pages\nx-api-key: {MARK}", "error.type": "TimeoutError"},
        genai, error=f"TimeoutError: GET https://u:{MARK}@search.example.com timed out")
    call.end()
    model = _span(t, "chat gpt-4o", {
        "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o", "gen_ai.usage.input_tokens": 7,
        "gen_ai.usage.output_tokens": 2, "gen_ai.openai.api_key": KEY,
        "gen_ai.output.messages": json.dumps([{"role": "assistant", "parts": [
            {"type": "text", "content": f"Searching. {GITHUB}"},
            {"type": "tool_call", "id": "call_9", "name": "search",
             "arguments": {"q": "refund policy", "access_token": f"at-{MARK}"}}]}])}, genai)
    model.end()
    genai.end()
    # PydanticAI's native instrumentation: OTel GenAI plus its own tool_arguments / tool_response / final_result.
    pyd = _span(t, "agent run", {"gen_ai.operation.name": "invoke_agent", "agent_name": "weather",
                                 "final_result": f"Sunny in Paris.\npassword: {MARK}"})
    ptool = _span(t, "running tool", {
        "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "forecast",
        "tool_arguments": json.dumps({"city": "Paris", "apiKey": f"k-{MARK}"}),
        "tool_response": f"21C, token={MARK}"}, pyd)
    ptool.end()
    pyd.end()
    # Ours, with another instrumentation's spans inside: our values are kept, theirs redacted.
    with rec.telemetry.span("agent", "concierge") as ours:
        ours.set_agent("concierge")
        ours.set_input("Book a table for two.")
        inner = _span(t, "ChatOpenAI", {
            "openinference.span.kind": "LLM", "llm.model_name": "gpt-4o-mini",
            "llm.output_messages.0.message.role": "assistant",
            "llm.output_messages.0.message.content": f"Booked. {KEY}", "gen_ai.openai.api_key": KEY},
            trace.get_current_span())
        inner.end()
        post = _span(t, "POST", {"http.request.method": "POST", "url.full": f"https://api.example.com/book?api_key={MARK}",
                                 "server.address": "api.example.com", "http.response.status_code": 201},
                     trace.get_current_span(), kind=trace.SpanKind.CLIENT)
        post.end()
        with rec.telemetry.span("tool", "book") as booking:
            booking.set_tool("book", call_id="call_b", arguments={"people": 2, "time": "19:00"})
            booking.set_tool_result({"table": 12})
        with rec.telemetry.span("model", "gpt-4o") as ours_model:
            ours_model.set_model(request_model="gpt-4o", provider="openai")
            ours_model.set_messages(output=[ChatMessage("assistant", "Table 12 at 19:00.", finish_reason="stop")])
        ours.set_output("Table 12 at 19:00.")


def _strict(text: str) -> Any:
    def refuse(constant: str) -> None:
        raise ValueError(f"not strict JSON: {constant}")

    return json.loads(text, parse_constant=refuse)


def assert_redacted(envelopes: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """No secret anywhere in the envelopes' strict JSON, every other value as recorded; the envelopes by root
    agent / public output, for the caller's own comparisons."""
    check(envelopes)
    text = json.dumps(envelopes, allow_nan=False, ensure_ascii=False)
    assert MARK not in text, [line for line in text.split("\\n") if MARK in line][:5]
    for envelope in envelopes:
        _strict(envelope["logs"])
    by = {_name(e): e for e in envelopes}
    assert sorted(by) == ["concierge", "refunds", "support", "triage", "weather"], sorted(by)

    support = by["support"]
    assert support["public_output"] == f"A100 has shipped. Authorization: Bearer {R}"
    [lookup] = support["tool_calls"]
    assert (lookup["arguments"], lookup["result"]) == ({"order": "A100", "api_key": R},
                                                       {"status": "shipped", "session_token": R})
    assert lookup["error"] == f"AuthError: key {R} was refused"
    context = support["evaluation_context"].splitlines()
    assert "  model gpt-4o tokens_in=12 tokens_out=5 calls=lookup_order" in context
    assert f"  error tool lookup_order: AuthError: key {R} was refused" in context
    assert f"    effect http GET api.example.com /v1/orders/{R} status=500" in context, context  # user info dropped
    assert f"  span connect db=orders token={R}" in context
    assert f"  span fetch ENDPOINT=https://api.example.com/v1?v=2&api%5Fkey={R}#top" in context, context
    logs = {r["name"]: r for r in _strict(support["logs"])}
    assert logs["ChatOpenAI"]["attributes"]["gen_ai.openai.api_key"] == R
    assert logs["ChatOpenAI"]["attributes"]["gen_ai.request.model"] == "gpt-4o"
    assert logs[f"GET https://bob:{R}@api.example.com"]["error"] == f"HTTPError: 500 for password={R}"

    refunds = by["refunds"]
    assert refunds["public_output"] == f"Refund issued. Used {R}."
    [refund] = refunds["tool_calls"]
    assert (refund["arguments"], refund["result"]) == ({"order": "A100", "password": R},
                                                       {"refunded": 42.5, "receipt": "R-7", "api_key": R})
    chat = next(r for r in _strict(refunds["logs"]) if r["name"] == "openai.chat")["attributes"]
    assert (chat["gen_ai.openai.api_key"], chat["gen_ai.prompt.0.content"]) == (R, f"my key is {R}")
    assert chat["gen_ai.request.model"] == "gpt-4o" and chat["gen_ai.usage.input_tokens"] == 3

    triage = by["triage"]
    [search] = triage["tool_calls"]
    assert (search["arguments"], search["result"]) == ({"q": "refund policy", "access_token": R},
                                                       f"found 3 pages\nx-api-key: {R}")
    assert search["error"] == f"TimeoutError: GET https://u:{R}@search.example.com timed out"
    assert 'tool search args={"access_token":"[REDACTED]","q":"refund policy"} status=error' \
        in triage["evaluation_context"]

    weather = by["weather"]
    assert weather["public_output"] == f"Sunny in Paris.\npassword: {R}"
    [forecast] = weather["tool_calls"]
    assert (forecast["arguments"], forecast["result"]) == ({"city": "Paris", "apiKey": R}, f"21C, token={R}")

    concierge = by["concierge"]  # ours: its values exactly as our span layer wrote them
    assert concierge["public_output"] == "Table 12 at 19:00."
    [book] = concierge["tool_calls"]
    assert (book["arguments"], book["result"]) == ({"people": 2, "time": "19:00"}, {"table": 12})
    assert "effect http POST api.example.com /book status=201" in concierge["evaluation_context"]
    inner = next(r for r in _strict(concierge["logs"]) if r["name"] == "ChatOpenAI")["attributes"]
    assert inner["gen_ai.openai.api_key"] == R and inner["gen_ai.request.model"] == "gpt-4o-mini"
    return by


def _name(envelope: dict[str, Any]) -> str:
    if envelope["agents"]:
        return envelope["agents"][0]["name"]
    return "refunds" if envelope["tool_calls"] and envelope["tool_calls"][0]["name"] == "refund" else "?"


def test_fold_redacts_the_values_of_other_instrumentations(rec):
    """Before, the envelope showed ``gen_ai.openai.api_key`` in ``logs``, the password among a tool call's
    arguments, the key quoted in an exception's message, a URL's password in a span name: as they came."""
    hostile_runs(rec)
    assert_redacted(fold(rec.spans))


def test_otel_agents_fold_redacts_them(rec, tmp_path, capsys):
    """The streaming ``otel-agents fold`` over the same spans stored as OTLP/JSON lines (attribute arrays come
    back as lists there): strict JSON lines, the same envelopes as ``fold``."""
    hostile_runs(rec)
    path, out = tmp_path / "traces.jsonl", tmp_path / "envelopes.jsonl"
    write(path, rec.spans, batch=5)
    assert main(["fold", str(path), "-o", str(out)]) == 0
    envelopes = [_strict(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert_redacted(envelopes)
    key = _name
    assert sorted(envelopes, key=key) == sorted(fold(rec.spans), key=key)


def test_the_folding_processor_redacts_them():
    """Live: the processor folds this process's spans, ours and other instrumentations' (the foreign runs after
    their grace period), with the same envelopes as ``fold``."""
    now = [1000.0]
    got: list[dict[str, Any]] = []
    processor = ECPFoldingProcessor(got.append, clock=lambda: now[0])
    rec = Recorder(processor)
    hostile_runs(rec)
    now[0] += 60
    processor.force_flush()
    assert_redacted(got)
    assert sorted(got, key=_name) == sorted(fold(rec.spans), key=_name)
    rec.provider.shutdown()


def test_a_url_that_urlsplit_refuses_is_a_plain_effect_not_a_failed_fold(rec):
    """An HTTP span's ``url.full`` that ``urlsplit`` raises on (an unclosed IPv6 bracket; the ``[REDACTED]``
    of a URL's password reads as one too) failed the whole fold with ``ValueError``."""
    with rec.telemetry.span("agent", "a") as agent:
        agent.set_agent("a")
        for url in ("http://[oops/v1", f"https://bob:{MARK}@api.example.com/v1/items"):
            _span(rec.app, "GET", {"http.request.method": "GET", "url.full": url, "server.address": "api.example.com"},
                  trace.get_current_span(), kind=trace.SpanKind.CLIENT).end()
        agent.set_output("done")
    [envelope] = check(fold(rec.spans))
    assert envelope["evaluation_context"].splitlines()[1:] == ["  effect http GET api.example.com",
                                                               "  effect http GET api.example.com /v1/items"]


# -- a secret in every value of every foreign span ---------------------------------------------------
FOREIGN = os.path.join(os.path.dirname(__file__), "foreign")
# The values that say which vocabulary and kind a span is, and which message is the model's: tainted, the fixtures'
# runs would not be folded as runs (they are tainted too, in the second pass below).
_SELECTORS = ("gen_ai.operation.name", "openinference.span.kind", "traceloop.span.kind", "llm.request.type")


def _selector(key: str) -> bool:
    return key in _SELECTORS or key.endswith(("mime_type", ".role"))


def _taint_json(data: Any) -> Any:
    if isinstance(data, dict):
        tainted = {k: v if k in ("role", "type") else _taint_json(v) for k, v in data.items()}
        return {**tainted, "password": f"pw-{MARK}"}  # a secret-named member in every object
    if isinstance(data, list):
        return [_taint_json(v) for v in data]
    return f"{data} {KEY}" if isinstance(data, str) else data


def _taint(key: str, value: Any) -> Any:
    if isinstance(value, (tuple, list)):
        return type(value)(f"{v} {KEY}" if isinstance(v, str) else v for v in value)
    if not isinstance(value, str):
        return value
    try:
        data = json.loads(value)
    except ValueError:
        data = None
    if isinstance(data, (dict, list)):
        return json.dumps(_taint_json(data))
    return f"{value} {GITHUB}"


def tainted_fixtures(*, selectors: bool) -> tuple[list[Any], list[Any]]:
    """Every golden foreign trace (``tests/exporters/foreign``), as recorded and tainted: a secret shape after
    every string attribute value, string of an array, string inside JSON text, span name and status description
    (every span gets an error status with one), a secret-named member in every JSON object, and two
    secret-named attributes on every span; with ``selectors``, also in the values that say what a span is."""
    from opentelemetry.sdk.trace import ReadableSpan

    from otel_agents.exporters.file import read_otlp_json

    plain, tainted = [], []
    for name in sorted(os.listdir(FOREIGN)):
        if not name.endswith(".otlp.jsonl"):
            continue
        for s in read_otlp_json(os.path.join(FOREIGN, name)):
            plain.append(s)
            attributes = {k: v if _selector(k) and not selectors else _taint(k, v) for k, v in s.attributes.items()}
            attributes.update({"gen_ai.openai.api_key": f"k-{MARK}",
                               "http.request.header.authorization": (f"Bearer {MARK}",)})
            description = f"{s.status.description or 'Error'}: {KEY}"
            tainted.append(ReadableSpan(name=f"{s.name} {KEY}", context=s.context, parent=s.parent,
                                        resource=s.resource, attributes=attributes, kind=s.kind,
                                        status=Status(StatusCode.ERROR, description), start_time=s.start_time,
                                        end_time=s.end_time))
    return plain, tainted


def _no_secret(envelopes: list[dict[str, Any]]) -> str:
    text = json.dumps(envelopes, allow_nan=False, ensure_ascii=False)
    assert MARK not in text, [line for line in text.split("\\n") if MARK in line][:5]
    for envelope in envelopes:
        _strict(envelope["logs"])
    return text


def test_a_secret_in_every_value_of_every_foreign_span_is_redacted(tmp_path):
    """Values are redacted as the fold reads them (most never reach an envelope): whichever value a fold path
    reads, of whatever vocabulary, it reads redacted. The golden foreign traces with a secret in every place a span
    can carry one fold to as many envelopes as without them (the values were read: tool calls' arguments and results,
    outputs, model names, errors, ``logs``), and no secret is in them, by ``fold()`` and by ``otel-agents fold``
    (whose decoder gives arrays as lists); nor when the values that select a vocabulary are tainted too."""
    plain, tainted = tainted_fixtures(selectors=False)
    envelopes = check(fold(tainted))
    assert len(envelopes) == len(fold(plain)) >= 30
    text = _no_secret(envelopes)
    assert text.count(R) > 500 and '"password":"[REDACTED]"' in text.replace(" ", "")
    assert all(R in e["logs"] for e in envelopes)
    path, out = tmp_path / "traces.jsonl", tmp_path / "envelopes.jsonl"
    write(path, tainted, batch=50)
    assert main(["fold", str(path), "-o", str(out)]) == 0
    streamed = [_strict(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert len(streamed) == len(envelopes)
    _no_secret(streamed)
    _no_secret(fold(tainted_fixtures(selectors=True)[1]))


def test_redacted_attributes_give_every_value_redacted_however_it_is_read():
    """The mapping the fold reads a foreign span's attributes through: each way of reading a value (``[]``,
    ``get``, ``items``, ``values``, ``copy``, ``dict()``, ``**``, ``pop``, ``setdefault``, ``==``, ``repr``, a
    pickle, JSON encoding) gives what redacting every value first gave; the raw values are kept aside."""
    import pickle

    from otel_agents.exporters.ecp._redaction import RedactedAttributes, redacted_value

    raw = {"gen_ai.openai.api_key": f"k-{MARK}", "input.value": json.dumps({"q": "x", "password": MARK}),
           "note": f"key {KEY}", "tags": (f"Bearer {MARK}-token", "ok"), "n": 3, "empty_token": ""}
    want = {k: redacted_value(k, v) for k, v in raw.items()}
    assert MARK not in repr(want) and want["n"] == 3 and want["empty_token"] == ""
    readers = [lambda a: {k: a[k] for k in a}, lambda a: {k: a.get(k) for k in a}, lambda a: dict(a.items()),
               lambda a: dict(zip(a, a.values())), lambda a: a.copy(), dict, lambda a: {**a},
               lambda a: {k: a.setdefault(k) for k in list(a)}, lambda a: pickle.loads(pickle.dumps(a)),
               lambda a: json.loads(json.dumps(a)) | {"tags": want["tags"]}, lambda a: {k: a.pop(k) for k in list(a)}]
    for read in readers:
        a = RedactedAttributes(dict(raw))
        assert read(a) == want
    a = RedactedAttributes(dict(raw))
    assert a == want and not (a != want) and MARK not in repr(RedactedAttributes(dict(raw)))
    assert MARK not in str(dict.values(RedactedAttributes(dict(raw))))  # bypassing the methods shows no value
    assert len(a) == len(raw) and "n" in a and a.get("missing", 7) == 7 and list(a) == list(raw)
