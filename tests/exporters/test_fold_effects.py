"""Issue 28: evidence a grader can use — the tools each model turn requested (``calls=``) and the
run's side effects (``effect`` lines from the real OpenTelemetry HTTP and database
instrumentations, ``span`` lines for plain user spans), bounded per run, counted in
``metrics.effects``. Every envelope passes ecp-runtime's validation and our schema."""

from __future__ import annotations

from typing import Any, Iterator

import fakeredis
import httpx
import pytest
import requests
from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor
from opentelemetry.instrumentation.redis import RedisInstrumentor
from opentelemetry.instrumentation.requests import RequestsInstrumentor
from opentelemetry import trace
from opentelemetry.trace import SpanKind

from otel_agents._spans import ChatMessage, Settings, Telemetry, ToolCallPart
from otel_agents.exporters.ecp import fold
from otel_agents.exporters.ecp._evidence import MAX_OTHER_LINES
from tests._loopback import QuietHandler, serve

from .conftest import check


class _Mail(QuietHandler):
    """A fake mail service: accepts any POST with 202."""

    def do_POST(self) -> None:  # noqa: N802 (http.server's name)
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        self.send_response(202)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")


@pytest.fixture(scope="module")
def mail_url() -> Iterator[str]:
    with serve(_Mail) as url:
        yield url


@pytest.fixture
def http_instrumented(rec: Any) -> Iterator[None]:
    """The standard httpx and requests instrumentations on the test's provider."""
    HTTPXClientInstrumentor().instrument(tracer_provider=rec.provider)
    RequestsInstrumentor().instrument(tracer_provider=rec.provider)
    yield
    HTTPXClientInstrumentor().uninstrument()
    RequestsInstrumentor().uninstrument()


def _lines(env: dict) -> list[str]:
    return env["evaluation_context"].splitlines()


def _agent_with_tool(tel: Telemetry, body: Any, *, tool: str = "send_reply") -> None:
    with tel.span("agent", "support") as agent:
        agent.set_agent("support")
        agent.set_input("Where is order A100?")
        with tel.span("tool", tool) as span:
            span.set_tool(tool, arguments={"to": "ann@example.com"})
            body()
            span.set_tool_result("sent")


# --- calls= -----------------------------------------------------------------------------------------

def test_a_turn_requesting_two_tools_lists_both(rec: Any) -> None:
    """The policy check and the credit requested by one turn: ``calls=`` names both, in order, on the
    model line (the credit did not wait for the check's result); the next turn requests one."""
    tel = rec.telemetry
    with tel.span("agent", "support") as agent:
        agent.set_agent("support")
        with tel.span("model", "gpt-4o", operation="chat") as model:
            model.set_model(request_model="gpt-4o")
            model.set_messages(output=[ChatMessage("assistant", tool_calls=[
                ToolCallPart("check_credit_policy", {"order": "A100"}),
                ToolCallPart("issue_credit", {"order": "A100", "amount": 10})], finish_reason="tool_calls")])
        with tel.span("model", "gpt-4o", operation="chat") as model:
            model.set_model(request_model="gpt-4o")
            model.set_messages(output=[ChatMessage("assistant", tool_calls=[
                ToolCallPart("check_credit_policy", {"order": "A100"})], finish_reason="tool_calls")])
        with tel.span("model", "gpt-4o", operation="chat") as model:
            model.set_model(request_model="gpt-4o")
            model.set_messages(output=[ChatMessage("assistant", "Done.", finish_reason="stop")])
    [env] = check(fold(rec.spans))
    models = [line for line in _lines(env) if line.startswith("  model ")]
    assert models[0].endswith(" calls=check_credit_policy,issue_credit"), models
    assert models[1].endswith(" calls=check_credit_policy"), models
    assert "calls=" not in models[2]


def test_calls_from_openinference_output_messages(rec: Any) -> None:
    """A model span with only OpenInference's flattened output messages: the calls in message, then
    call order (numeric, not text, order: 10 after 2)."""
    span = rec.app.start_span("ChatOpenAI", attributes={
        "otel_agents.span.kind": "model", "gen_ai.request.model": "m",
        **{f"llm.output_messages.0.message.tool_calls.{j}.tool_call.function.name": f"t{j}" for j in (0, 2, 10)},
        "llm.output_messages.1.message.tool_calls.0.tool_call.function.name": "last"})
    span.end()
    [env] = check(fold(rec.spans))
    assert _lines(env) == ["model m calls=t0,t2,t10,last"]


def test_calls_name_an_mcp_call_as_its_tool_line_does(rec: Any) -> None:
    """A call an MCP client runs under the MCP tool's own name, not the one the model requested (the Claude Agent
    SDK's SDK MCP tool ``lookup_order``, requested as ``mcp__support__lookup_order``): ``calls=`` names it as its
    ``tool`` line and ``tool_calls[].name`` do (its ``tools/call`` span, by call id, same agent, after the model
    span), so one call has one name in the evidence and a grader written for it; a requested call that never ran
    keeps the model's name, and so does a call whose id only a non-MCP tool span (another agent's: ids repeat)
    shares. The model span itself still records what the model requested. The same through OpenInference's
    flattened messages (``tool_call.id``)."""
    tel = rec.telemetry
    mcp = {"mcp.method.name": "tools/call"}
    with tel.span("agent", "support") as agent:
        agent.set_agent("support")
        with tel.span("model", "claude", operation="chat") as model:
            model.set_model(request_model="claude")
            model.set_messages(output=[ChatMessage("assistant", tool_calls=[
                ToolCallPart("mcp__support__lookup_order", {"order_id": "A100"}, id="toolu_1"),
                ToolCallPart("mcp__support__refund", {"order_id": "A100"}, id="toolu_2"),
                ToolCallPart("get_weather", {"city": "Paris"}, id="toolu_3")])])
        with tel.span("tool", "lookup_order", attributes=mcp) as tool:
            tool.set_tool("lookup_order", call_id="toolu_1", arguments={"order_id": "A100"})
        with tel.span("tool", "ask_expert") as tool:  # not the weather call: a delegation reusing its id
            tool.set_tool("ask_expert", call_id="toolu_3", arguments={})
    span = rec.app.start_span("ChatOpenAI", attributes={
        "otel_agents.span.kind": "model", "gen_ai.request.model": "m",
        "llm.output_messages.0.message.tool_calls.0.tool_call.function.name": "mcp__support__lookup_order",
        "llm.output_messages.0.message.tool_calls.0.tool_call.id": "call_9"})
    with rec.app.start_as_current_span("lookup", context=trace.set_span_in_context(span),
                                       attributes={"otel_agents.span.kind": "tool", "gen_ai.tool.name": "lookup_order",
                                                   "gen_ai.tool.call.id": "call_9", **mcp}):
        pass
    span.end()
    env, flat = check(fold(rec.spans))
    assert _lines(env)[1].endswith(" calls=lookup_order,mcp__support__refund,get_weather"), _lines(env)
    assert _lines(env)[2].startswith("  tool lookup_order ")
    assert [c["name"] for c in env["tool_calls"]] == ["lookup_order", "ask_expert"]
    assert _lines(flat)[0] == "model m calls=lookup_order" and _lines(flat)[1].startswith("  tool lookup_order ")


def test_calls_absent_with_content_off(rec: Any) -> None:
    tel = Telemetry(rec.provider, framework="manual", settings=Settings(capture_content=False))
    with tel.span("model", "gpt-4o", operation="chat") as model:
        model.set_model(request_model="gpt-4o")
        model.set_messages(output=[ChatMessage("assistant", tool_calls=[ToolCallPart("secret_tool", {})])])
    [env] = check(fold(rec.spans))
    assert "calls=" not in env["evaluation_context"]


# --- effects through the real instrumentations --------------------------------------------------------

@pytest.mark.parametrize("client", ["httpx", "requests"])
def test_http_call_inside_a_tool_is_an_effect_line_under_it(client: str, rec: Any, http_instrumented: None,
                                                            mail_url: str) -> None:
    """An email sent over HTTP inside a tool (traced by the standard instrumentation): an ``effect``
    line under the tool's line, no query, no credentials; ``metrics.effects`` counts it."""
    url = mail_url.replace("http://", "http://mailer:hunter2secret@") + "/v1/send?api_key=sk-abcdefghijklmnop1234"
    send = (lambda: httpx.post(url, json={"to": "ann"})) if client == "httpx" else \
        (lambda: requests.post(url, json={"to": "ann"}, timeout=5))
    _agent_with_tool(rec.telemetry, send)
    [env] = check(fold(rec.spans))
    lines = _lines(env)
    tool = next(i for i, line in enumerate(lines) if line.startswith("  tool send_reply "))
    assert lines[tool + 1] == "    effect http POST 127.0.0.1 /v1/send status=202", lines
    assert env["metrics"]["effects"] == 1 and env["metrics"]["steps"] == 2
    for secret in ("hunter2secret", "mailer", "api_key", "sk-abcdefghijklmnop1234"):
        assert secret not in env["evaluation_context"]


def test_http_effect_with_content_off(rec: Any, http_instrumented: None, mail_url: str) -> None:
    """Content capture off: only the method and the host."""
    tel = Telemetry(rec.provider, framework="manual", settings=Settings(capture_content=False))
    _agent_with_tool(tel, lambda: httpx.post(mail_url + "/v1/send/ann@example.com"))
    [env] = check(fold(rec.spans))
    assert _lines(env)[2] == "    effect http POST 127.0.0.1", _lines(env)
    assert "/v1/send" not in env["evaluation_context"] and "ann@" not in env["evaluation_context"]
    assert env["metrics"]["effects"] == 1


def test_secret_shaped_path_is_redacted(rec: Any, http_instrumented: None, mail_url: str) -> None:
    _agent_with_tool(rec.telemetry, lambda: httpx.post(mail_url + "/v1/keys/sk-proj-abcdefghijklmnopqrstuvwx/revoke"))
    [env] = check(fold(rec.spans))
    assert "sk-proj-abcdefghijklmnopqrstuvwx" not in env["evaluation_context"]
    assert any(line.startswith("    effect http POST 127.0.0.1 /v1/keys/[REDACTED]") for line in _lines(env))


def test_an_a2a_agent_card_get_is_discovery_not_an_effect_another_get_is(rec: Any, http_instrumented: None,
                                                                          mail_url: str) -> None:
    """Reading a remote agent's card (``GET /.well-known/agent-card.json``, the older ``agent.json``, under an
    agent's base path too) changes nothing: no line, not in ``metrics.effects`` (it was ``effect http GET …
    agent-card.json``, counted). A ``GET`` of any other path, and another method on the card's path, still are."""
    def body() -> None:
        for path in ("/.well-known/agent-card.json", "/a2a/orders/.well-known/agent.json", "/v1/orders/A100",
                     "/.well-known/agent-card.json.bak", "/.well-known/openid-configuration"):
            httpx.get(mail_url + path)
        httpx.post(mail_url + "/.well-known/agent-card.json")
        requests.get(mail_url + "/.well-known/agent-card.json?v=1", timeout=5)

    _agent_with_tool(rec.telemetry, body)
    with rec.telemetry.span("agent", "support") as agent:  # a span without url.path: its URL is read
        agent.set_agent("support")
        agent.set_input("q")
        for url in ("https://orders.example/.well-known/agent.json", "https://orders.example/v1/cards"):
            rec.app.start_span("GET", kind=SpanKind.CLIENT, attributes={"http.method": "GET", "http.url": url}).end()
    first, second = check(fold(rec.spans))
    assert _lines(first)[2:] == ["    effect http GET 127.0.0.1 /v1/orders/A100 status=501",
                                 "    effect http GET 127.0.0.1 /.well-known/agent-card.json.bak status=501",
                                 "    effect http GET 127.0.0.1 /.well-known/openid-configuration status=501",
                                 "    effect http POST 127.0.0.1 /.well-known/agent-card.json status=202"], _lines(first)
    assert first["metrics"]["effects"] == 4
    assert _lines(second) == ["agent support", "  effect http GET orders.example /v1/cards"]
    assert second["metrics"]["effects"] == 1


def test_database_query_through_the_redis_instrumentation(rec: Any) -> None:
    """A database call traced by a real OTel database instrumentation (redis, on fakeredis: no
    server) inside a tool: ``effect db redis SET`` under the tool (operation from the query)."""
    RedisInstrumentor().instrument(tracer_provider=rec.provider)
    try:
        store = fakeredis.FakeRedis()
        _agent_with_tool(rec.telemetry, lambda: store.set("order:A100", "refunded"), tool="record_refund")
    finally:
        RedisInstrumentor().uninstrument()
    [env] = check(fold(rec.spans))
    lines = _lines(env)
    tool = next(i for i, line in enumerate(lines) if line.startswith("  tool record_refund "))
    assert lines[tool + 1] == "    effect db redis SET", lines
    assert "refunded" not in lines[tool + 1] and env["metrics"]["effects"] == 1


# --- conventions, by attribute (stable and older names) -----------------------------------------------

@pytest.mark.parametrize(("attributes", "content_on", "content_off"), [
    ({"db.system.name": "postgresql", "db.operation.name": "INSERT", "db.collection.name": "invoices",
      "db.query.text": "INSERT INTO invoices VALUES ($1)"},
     "effect db postgresql INSERT invoices", "effect db postgresql INSERT"),
    ({"db.system": "sqlite", "db.statement": "  insert into invoices values (?)", "db.name": "shop"},
     "effect db sqlite INSERT", "effect db sqlite INSERT"),
    ({"messaging.system": "kafka", "messaging.operation.type": "send", "messaging.destination.name": "refunds"},
     "effect messaging kafka send refunds", "effect messaging kafka send"),
    ({"rpc.system": "grpc", "rpc.service": "mail.Mailer", "rpc.method": "Send"},
     "effect rpc grpc mail.Mailer/Send", "effect rpc grpc Send"),
    ({"http.request.method": "DELETE", "server.address": "api.crm.example", "url.path": "/v2/users/7",
      "http.response.status_code": 204}, "effect http DELETE api.crm.example /v2/users/7 status=204",
     "effect http DELETE api.crm.example"),
])
def test_effect_line_by_convention(rec: Any, attributes: dict, content_on: str, content_off: str) -> None:
    for capture, expected in ((True, content_on), (False, content_off)):
        rec.memory.clear()
        tel = Telemetry(rec.provider, framework="manual", settings=Settings(capture_content=capture))
        _agent_with_tool(tel, lambda: rec.app.start_span("op", kind=SpanKind.CLIENT, attributes=attributes).end())
        [env] = check(fold(rec.spans))
        assert _lines(env)[2] == "    " + expected, (capture, _lines(env))


def test_plain_user_span_is_a_span_line(rec: Any) -> None:
    """A span the user opened by hand inside the run (no semantic kind, no convention): ``span NAME``,
    with what happens inside it nested under it; not an effect."""
    tel = rec.telemetry
    with tel.span("agent", "support") as agent:
        agent.set_agent("support")
        agent.set_input("q")
        with rec.app.start_as_current_span("send_mail"):
            rec.app.start_span("POST", kind=SpanKind.CLIENT, attributes={
                "http.method": "POST", "http.url": "https://smtp.example/v1/send?x=1", "http.status_code": 200}).end()
    [env] = check(fold(rec.spans))
    assert _lines(env) == ["agent support", "  span send_mail", "    effect http POST smtp.example /v1/send status=200"]
    assert env["metrics"]["effects"] == 1 and env["metrics"]["steps"] == 1


def test_spans_that_are_not_the_runs_own_effects_get_no_line(rec: Any) -> None:
    """The provider call under a model span, a server span, another GenAI instrumentation's span and
    the transport under an effect (urllib3 under requests) get no line and are not effects."""
    tel = rec.telemetry
    app = rec.app
    with tel.span("agent", "support") as agent:
        agent.set_agent("support")
        agent.set_input("q")
        with tel.span("model", "gpt-4o", operation="chat") as model:
            model.set_model(request_model="gpt-4o")
            app.start_span("POST", kind=SpanKind.CLIENT, attributes={"http.request.method": "POST",
                                                                     "server.address": "api.openai.com"}).end()
            # another GenAI instrumentation's view of the same request (issue 25: not a second step)
            app.start_span("chat gpt-4o", attributes={"gen_ai.operation.name": "chat"}).end()
        app.start_span("POST /hook", kind=SpanKind.SERVER, attributes={"http.request.method": "POST",
                                                                       "url.path": "/hook"}).end()
        with app.start_as_current_span("POST", kind=SpanKind.CLIENT, attributes={
                "http.request.method": "POST", "server.address": "mail.example"}):
            app.start_span("POST", kind=SpanKind.CLIENT, attributes={"http.request.method": "POST",
                                                                     "server.address": "mail.example"}).end()
    [env] = check(fold(rec.spans))
    assert _lines(env) == ["agent support", "  model gpt-4o", "  effect http POST mail.example"]
    assert env["metrics"]["effects"] == 1


def test_ten_thousand_effects_fold_with_the_cap_and_the_elided_count(rec: Any) -> None:
    """A run with 10,000 side-effect spans: the first 100 ``effect``/``span`` lines, then one
    ``elided`` line with the rest counted; ``metrics.effects`` counts all of them."""
    tel = rec.telemetry
    app = rec.app
    with tel.span("agent", "bulk") as agent:
        agent.set_agent("bulk")
        agent.set_input("q")
        for i in range(10_000):
            app.start_span("INSERT", kind=SpanKind.CLIENT, attributes={
                "db.system.name": "sqlite", "db.operation.name": "INSERT", "db.collection.name": "rows"}).end()
        app.start_span("checkpoint").end()
    [env] = check(fold(rec.spans))
    lines = _lines(env)
    assert len(lines) == 1 + MAX_OTHER_LINES + 1
    assert lines[1:1 + MAX_OTHER_LINES] == ["  effect db sqlite INSERT rows"] * MAX_OTHER_LINES
    assert lines[-1] == f"elided effect={10_000 - MAX_OTHER_LINES} span=1"
    assert env["metrics"]["effects"] == 10_000


# --- side effects while a model call is open (issue 39, item 4) --------------------------------------------------

@pytest.mark.parametrize("instrumented", [True, False], ids=["openai-instrumentor", "framework-model-span"])
def test_only_the_provider_request_under_a_model_span_is_transport(instrumented: bool, rec: Any, mail_url: str,
                                                                   http_instrumented: None) -> None:
    """While a model call is open, the real ``openai`` client's request (over ``httpx.MockTransport``, traced by
    the OTel httpx instrumentation) is that call's transport: no line. An SMTP-like plain span and an httpx
    POST to another host opened in the same call are effects/spans like anywhere else. With our OpenAI
    instrumentor the host is matched against the model span's ``server.address``; without it (a framework's
    model span naming only ``gen_ai.provider.name=openai``), against the provider's API host."""
    from otel_agents import manual
    from otel_agents.instrumentors.openai import OpenAIInstrumentor

    from ..clients.fakes import Recorder as Fake, chat_completion, openai_client

    fake = Fake(chat_completion())
    client = openai_client(fake)
    HTTPXClientInstrumentor.instrument_client(client._client, tracer_provider=rec.provider)
    inst = OpenAIInstrumentor()
    if instrumented:
        manual.set_providers(rec.provider)
        inst.instrument(tracer_provider=rec.provider)
    try:
        with rec.telemetry.span("agent", "support") as agent:
            agent.set_agent("support")
            agent.set_input("Where is order A100?")
            with rec.telemetry.span("model", "gpt-4o", operation="chat") as model:
                model.set_model(request_model="gpt-4o", provider="openai")
                reply = client.chat.completions.create(model="gpt-4o", messages=[{"role": "user", "content": "hi"}])
                with rec.app.start_as_current_span("smtp.send", attributes={"smtp.to": "ann@example.com"}):
                    pass
                httpx.post(mail_url + "/v1/notify", json={"to": "ann"})
    finally:
        if instrumented:
            inst.uninstrument()
            manual.set_providers()
    assert len(fake.requests) == 1 and reply.choices[0].message.content == "Order A100 has shipped."
    http = [s for s in rec.spans if s.attributes.get("http.request.method") or s.attributes.get("http.method")]
    assert len(http) == 2, [s.attributes for s in http]  # the provider request is traced: it is hidden, not missing
    [env] = check(fold(rec.spans))
    lines = _lines(env)
    assert lines[0] == "agent support" and lines[1].startswith("  model gpt-4o"), lines
    assert lines[2:] == ["    span smtp.send", "    effect http POST 127.0.0.1 /v1/notify status=202"], lines
    assert "api.openai.com" not in env["evaluation_context"]
    assert env["metrics"]["effects"] == 1
