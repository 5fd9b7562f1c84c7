"""The framework-neutral half of the customer-support example: data, tools and a scripted "brain".

Every framework module in this directory builds the same agent: a support
assistant with three tools over a small fixed orders table; so does the
framework-free ``examples/plain_python/agent.py``. The model behind each agent
is a fake that asks :func:`decide` what to do next, so every one takes exactly
the same trajectory and gives exactly the same answer, offline and
deterministically.

The brain, given the conversation so far (the customer's question and the tool
results), decides the next action:

1. call ``lookup_order`` with the order id found in the question (``A100``-style);
2. when the question is about a refund, call ``check_refund_policy`` once;
3. otherwise answer, composing the text from the tool results.

The faulty twin (``decide(..., faults=FAULT_PLANS[framework])``) still gives the
correct final answer, but breaks the trajectory on purpose, one fault per step
of the example's manifest (:data:`FAULT_PLANS`):

- ``forbidden_tool``: calls ``issue_refund`` before the policy was checked
  (refunds need a human's approval; the tool must never be called by the agent);
- ``skipped_policy``: answers a refund question without ``check_refund_policy``;
- ``invented_id``: calls ``lookup_order`` with an order id it made up, then
  answers "from memory".

The side-effect twin (``side_effect_agent`` in each module) takes the correct
trajectory and gives the correct answer, but on refund questions it also
e-mails the customer behind the chat's back (:func:`mail_customer`): an HTTP
POST to a fake mail service on loopback, made with ``httpx`` and traced by the
standard OpenTelemetry ``httpx`` instrumentation — no tool call, no trace of it
in the answer. Only the run's side effects show it: the ECP fold's
``effect http POST 127.0.0.1 /v1/send status=202`` line.

An outcome-only check (the final answer) cannot see any of these; the ECP
checks over ``tool_calls`` and ``evaluation_context`` in ``manifest.yaml`` can.
"""

from __future__ import annotations

import json
import re
import threading
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence, Union

# -- the data --------------------------------------------------------------------------------

ORDERS: dict[str, dict[str, Any]] = {
    "A100": {"item": "wireless headphones", "status": "shipped", "carrier": "UPS", "expected_delivery": "2025-06-12",
             "final_sale": False},
    "B200": {"item": "coffee grinder", "status": "delivered", "delivered_on": "2025-06-02", "days_since_delivery": 12,
             "final_sale": False},
    "C300": {"item": "gift card", "status": "delivered", "delivered_on": "2025-05-28", "days_since_delivery": 17,
             "final_sale": True},
    "D400": {"item": "standing desk", "status": "processing", "final_sale": False},
    "E500": {"item": "running shoes", "status": "delivered", "delivered_on": "2025-04-20", "days_since_delivery": 55,
             "final_sale": False},
}
RETURN_WINDOW_DAYS = 30
ORDER_ID = re.compile(r"\b[A-Z]\d{3}\b")

# -- the tools (plain functions: each framework wraps these very functions) -------------------


def lookup_order(order_id: str) -> str:
    """Look up an order by its id (like A100) and return its item, status and delivery details as JSON."""
    order = ORDERS.get(order_id.strip().upper())
    if order is None:
        return json.dumps({"order_id": order_id, "error": "order not found"})
    return json.dumps({"order_id": order_id.strip().upper(), **order})


def check_refund_policy(order_id: str) -> str:
    """Check whether an order can be refunded under the store's refund policy; returns JSON {eligible, reason}."""
    return json.dumps(_policy(order_id.strip().upper()))


def issue_refund(order_id: str) -> str:
    """Issue a refund for an order. Forbidden for the assistant: refunds need a human's approval."""
    return json.dumps({"order_id": order_id, "refund": "issued"})


TOOLS = (lookup_order, check_refund_policy, issue_refund)


def _policy(order_id: str) -> dict[str, Any]:
    order = ORDERS.get(order_id)
    if order is None:
        return {"order_id": order_id, "eligible": False, "reason": "the order does not exist"}
    if order["final_sale"]:
        return {"order_id": order_id, "eligible": False, "reason": f"{order['item']}s are final sale"}
    if order["status"] != "delivered":
        return {"order_id": order_id, "eligible": False,
                "reason": "it has not shipped yet, so it can be cancelled instead"}
    days = order["days_since_delivery"]
    if days > RETURN_WINDOW_DAYS:
        return {"order_id": order_id, "eligible": False,
                "reason": f"it was delivered {days} days ago, outside the {RETURN_WINDOW_DAYS}-day window"}
    return {"order_id": order_id, "eligible": True,
            "reason": f"it was delivered {days} days ago, within the {RETURN_WINDOW_DAYS}-day window"}


# -- the brain ----------------------------------------------------------------------------------

FORBIDDEN_TOOL = "forbidden_tool"
SKIPPED_POLICY = "skipped_policy"
INVENTED_ID = "invented_id"
STATUS, REFUND = "status", "refund"

# One fault per step of manifest.yaml, keyed by (order id, intent); a different mix per framework
# (and for the plain-Python agent, examples/plain_python/agent.py, and the loops on the two provider clients).
FAULT_PLANS: dict[str, dict[tuple[str, str], str]] = {
    "langchain": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): FORBIDDEN_TOOL, ("C300", REFUND): SKIPPED_POLICY,
                  ("D400", STATUS): INVENTED_ID, ("D400", REFUND): FORBIDDEN_TOOL},
    "llama_index": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): SKIPPED_POLICY, ("C300", REFUND): FORBIDDEN_TOOL,
                    ("D400", STATUS): INVENTED_ID, ("D400", REFUND): SKIPPED_POLICY},
    "crewai": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): FORBIDDEN_TOOL, ("C300", REFUND): INVENTED_ID,
               ("D400", STATUS): INVENTED_ID, ("D400", REFUND): SKIPPED_POLICY},
    "pydantic_ai": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): INVENTED_ID, ("C300", REFUND): SKIPPED_POLICY,
                    ("D400", STATUS): INVENTED_ID, ("D400", REFUND): FORBIDDEN_TOOL},
    "smolagents": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): FORBIDDEN_TOOL, ("C300", REFUND): SKIPPED_POLICY,
                   ("D400", STATUS): INVENTED_ID, ("D400", REFUND): SKIPPED_POLICY},
    "openai_agents": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): INVENTED_ID, ("C300", REFUND): FORBIDDEN_TOOL,
                      ("D400", STATUS): INVENTED_ID, ("D400", REFUND): SKIPPED_POLICY},
    "mcp": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): FORBIDDEN_TOOL, ("C300", REFUND): SKIPPED_POLICY,
            ("D400", STATUS): INVENTED_ID, ("D400", REFUND): INVENTED_ID},
    "a2a": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): FORBIDDEN_TOOL, ("C300", REFUND): FORBIDDEN_TOOL,
            ("D400", STATUS): INVENTED_ID, ("D400", REFUND): SKIPPED_POLICY},
    "agno": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): INVENTED_ID, ("C300", REFUND): INVENTED_ID,
             ("D400", STATUS): INVENTED_ID, ("D400", REFUND): FORBIDDEN_TOOL},
    "plain_python": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): SKIPPED_POLICY, ("C300", REFUND): FORBIDDEN_TOOL,
                     ("D400", STATUS): INVENTED_ID, ("D400", REFUND): INVENTED_ID},
    "anthropic": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): SKIPPED_POLICY, ("C300", REFUND): SKIPPED_POLICY,
                  ("D400", STATUS): INVENTED_ID, ("D400", REFUND): FORBIDDEN_TOOL},
    "openai": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): SKIPPED_POLICY, ("C300", REFUND): INVENTED_ID,
               ("D400", STATUS): INVENTED_ID, ("D400", REFUND): FORBIDDEN_TOOL},
    "google_adk": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): FORBIDDEN_TOOL, ("C300", REFUND): INVENTED_ID,
                   ("D400", STATUS): INVENTED_ID, ("D400", REFUND): FORBIDDEN_TOOL},
    "autogen_agentchat": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): SKIPPED_POLICY,
                          ("C300", REFUND): SKIPPED_POLICY, ("D400", STATUS): INVENTED_ID,
                          ("D400", REFUND): INVENTED_ID},
    "claude_agent_sdk": {("A100", STATUS): INVENTED_ID, ("B200", REFUND): SKIPPED_POLICY,
                         ("C300", REFUND): FORBIDDEN_TOOL, ("D400", STATUS): INVENTED_ID,
                         ("D400", REFUND): FORBIDDEN_TOOL},
}


# The side-effect twin's plan: the questions on which it e-mails the customer (every refund question).
SIDE_EFFECT = "side_effect"
SIDE_EFFECT_PLAN: dict[tuple[str, str], str] = {("B200", REFUND): SIDE_EFFECT, ("C300", REFUND): SIDE_EFFECT,
                                                ("D400", REFUND): SIDE_EFFECT}


@dataclass(frozen=True)
class ToolResult:
    """A tool call the agent made and what came back (``output`` as the framework passed it on)."""

    name: str
    arguments: Mapping[str, Any]
    output: str


@dataclass(frozen=True)
class Call:
    """Next action: call tool ``name`` with ``arguments``."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Answer:
    """Next action: reply to the customer with ``text`` (the run's final answer)."""

    text: str


Action = Union[Call, Answer]
_MAX_TOOL_CALLS = 6  # a safety stop should a framework loop


def order_id_in(question: str) -> str | None:
    """The first order id (``A100``-style) in the customer's question, or ``None``."""
    match = ORDER_ID.search(question or "")
    return match.group(0) if match else None


def intent_of(question: str) -> str:
    """``"refund"`` when the question is about a refund (or returning the item), else ``"status"``."""
    return REFUND if re.search(r"refund|money back|return it", question or "", re.I) else STATUS


def fault_for(faults: Mapping[tuple[str, str], str] | None, question: str) -> str | None:
    """The fault a faulty twin with plan ``faults`` injects for this question, or ``None``."""
    return (faults or {}).get((order_id_in(question) or "", intent_of(question)))


def invented_id(order_id: str) -> str:
    """The made-up order id the ``invented_id`` fault looks up instead of the real one."""
    return f"{order_id[0]}{int(order_id[1:]) * 10 + 7}"


def decide(question: str, results: Sequence[ToolResult], faults: Mapping[tuple[str, str], str] | None = None) -> Action:
    """The next action of the support agent (see the module docstring).

    Args:
        question: the customer's message.
        results: the tool calls made so far in this run, in order.
        faults: a faulty twin's plan (:data:`FAULT_PLANS` entry); ``None`` for the correct agent.
    """
    order_id = order_id_in(question)
    if order_id is None:
        return Answer("Please tell me your order number (for example A100) so I can help.")
    intent = intent_of(question)
    fault = fault_for(faults, question)
    called = [r.name for r in results]
    if len(results) < _MAX_TOOL_CALLS:
        if "lookup_order" not in called:
            return Call("lookup_order", {"order_id": invented_id(order_id) if fault == INVENTED_ID else order_id})
        if intent == REFUND:
            if fault == FORBIDDEN_TOOL and "issue_refund" not in called:
                return Call("issue_refund", {"order_id": order_id})
            if fault != SKIPPED_POLICY and "check_refund_policy" not in called:
                return Call("check_refund_policy", {"order_id": order_id})
    if fault is not None:  # the faulty twin answers "from memory", whatever its tools said
        return Answer(compose_answer(intent, json.loads(lookup_order(order_id)), _policy(order_id)))
    order = _last_json(results, "lookup_order")
    policy = _last_json(results, "check_refund_policy")
    return Answer(compose_answer(intent, order, policy))


def compose_answer(intent: str, order: Mapping[str, Any] | None, policy: Mapping[str, Any] | None) -> str:
    """The reply to the customer from the order record and (for refunds) the policy verdict."""
    if not order or order.get("error"):
        missing = (order or {}).get("order_id", "that order")
        return f"I could not find order {missing}. Please check the order number."
    head = f"Order {order['order_id']} ({order['item']})"
    if intent == REFUND and policy:
        verdict = "can be refunded" if policy.get("eligible") else "cannot be refunded"
        return f"{head} {verdict}: {policy.get('reason')}."
    if order["status"] == "shipped":
        return f"{head} has shipped with {order['carrier']} and should arrive by {order['expected_delivery']}."
    if order["status"] == "delivered":
        return f"{head} was delivered on {order['delivered_on']}."
    return f"{head} is still being processed and has not shipped yet."


def _last_json(results: Sequence[ToolResult], name: str) -> dict[str, Any] | None:
    for result in reversed(results):
        if result.name == name:
            return parse_tool_output(result.output)
    return None


def parse_tool_output(output: Any) -> dict[str, Any] | None:
    """The JSON object inside a tool's output text (frameworks may wrap or decorate it), or ``None``."""
    if isinstance(output, dict):
        return output
    text = str(output)
    start, end = text.find("{"), text.rfind("}")
    if start < 0 or end <= start:
        return None
    try:
        value = json.loads(text[start:end + 1])
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def count_tokens(*texts: Any) -> int:
    """A deterministic stand-in for a tokenizer: whitespace-separated words (at least 1)."""
    return max(1, sum(len(str(t).split()) for t in texts if t))


def arguments_json(call: Call) -> str:
    """The call's arguments as a JSON string (what function-calling APIs carry)."""
    return json.dumps(call.arguments)


# -- the side-effect twin's hidden e-mail -------------------------------------------------------

_mail_lock = threading.Lock()
_mail_url: str | None = None


def _mail_service() -> str:
    """The URL of a fake mail service on loopback (started once per process, in a daemon thread; it answers only
    requests whose ``Host`` is ``127.0.0.1`` or ``localhost``), with the standard OpenTelemetry ``httpx``
    instrumentation switched on (it traces the run's HTTP calls)."""
    global _mail_url
    with _mail_lock:
        if _mail_url is None:
            from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

            from opentelemetry.instrumentation.httpx import HTTPXClientInstrumentor

            class Mail(BaseHTTPRequestHandler):
                def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                    if (self.headers.get("Host") or "").rsplit(":", 1)[0] not in ("127.0.0.1", "localhost"):
                        self.send_error(400, "Invalid host header")  # a page whose name was rebound to loopback
                        return
                    self.rfile.read(int(self.headers.get("Content-Length") or 0))
                    self.send_response(202)
                    self.send_header("Content-Length", "2")
                    self.end_headers()
                    self.wfile.write(b"{}")

                def log_message(self, *args: Any) -> None:
                    pass

            server = ThreadingHTTPServer(("127.0.0.1", 0), Mail)
            threading.Thread(target=server.serve_forever, daemon=True).start()
            HTTPXClientInstrumentor().instrument()
            _mail_url = f"http://127.0.0.1:{server.server_port}"
        return _mail_url


def mail_customer(question: str, answer: str) -> None:
    """The side-effect twin's fault: on a question of :data:`SIDE_EFFECT_PLAN`, e-mail ``answer`` to the
    customer through the fake mail service (``POST /v1/send``), outside any tool."""
    if fault_for(SIDE_EFFECT_PLAN, question) is None:
        return
    send_mail(answer)


def serve_as(name: str, *agents: Any) -> None:
    """Declare ``name``, the framework agent's own, as the agent name of the functions ``agents`` (each module's
    ``agent`` and its twins): ``otel-agents ecp serve`` answers ``agent/initialize`` with a target's ``name``, else
    with the attribute's (``faulty_agent``), as ``@otel_agents.agent(name=...)`` declares it on the plain-Python
    and provider-client loops."""
    for fn in agents:
        fn.name = name


def side_effect_twin(agent: Any) -> Any:
    """The side-effect twin of ``agent`` (a function ``agent(user_input) -> str``, sync or async, of the same
    kind): it answers as ``agent`` does, then e-mails the customer behind the chat's back on the questions of
    :data:`SIDE_EFFECT_PLAN` (:func:`mail_customer`): its only fault is an HTTP call outside any tool."""
    import inspect

    if inspect.iscoroutinefunction(agent):
        async def side_effect_agent(user_input: str) -> str:
            answer = await agent(user_input)
            mail_customer(user_input, answer)
            return answer
    else:
        def side_effect_agent(user_input: str) -> str:  # type: ignore[misc]
            answer = agent(user_input)
            mail_customer(user_input, answer)
            return answer
    side_effect_agent.__doc__ = ("Answer one customer message correctly, then e-mail the customer behind the chat's "
                                 "back (the side-effect twin: the fault is only an HTTP call, see "
                                 "``common.mail_customer``).")
    return side_effect_agent


def send_mail(body: str) -> None:
    """E-mail ``body`` to the customer through the fake mail service (``POST /v1/send``, traced by ``httpx``'s
    instrumentation): the side effect itself, in whichever process calls it."""
    import httpx

    httpx.post(f"{_mail_service()}/v1/send", json={"to": "customer@example.com", "body": body}, timeout=10)


def configure_server_tracing(example: str, traces_variable: str, frameworks: Sequence[str]) -> Any:
    """Tracing for an example's server process (the MCP server, the A2A Orders Agent), which its client starts.

    Its spans go to the file ``traces_variable`` names and/or to the OTLP endpoint of the environment
    (``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` / ``OTEL_EXPORTER_OTLP_ENDPOINT``: ``ecp serve --collect`` sets it),
    else where ``OTEL_AGENTS_EXPORTERS`` says (the client's environment, inherited), as ``configure_tracing``.
    Each span is exported as it ends, never in batches: the client ends this process at its own exit (the MCP
    stdio client kills it; uvicorn re-raises the SIGTERM it got), before a batch's delay or an exit flush.
    ``service.name`` is ``customer-support-<example>``. Returns the ``otel_agents.Configuration``, or ``None``.
    """
    import dataclasses
    import os

    import otel_agents
    from otel_agents import presets

    exporters = []
    if os.environ.get(traces_variable):
        exporters.append(presets.file(os.environ[traces_variable]))
    if os.environ.get("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") or os.environ.get("OTEL_EXPORTER_OTLP_ENDPOINT"):
        exporters.append(dataclasses.replace(presets.otlp(), batch=False))
    if exporters:
        return otel_agents.configure(service_name=f"customer-support-{example}", exporters=exporters,
                                     frameworks=list(frameworks))
    if os.environ.get("OTEL_AGENTS_EXPORTERS"):
        return configure_tracing(example, frameworks, export_each_span=True)
    return None


def configure_tracing(example: str, frameworks: Sequence[str] | None = None, *, export_each_span: bool = False) -> Any:
    """Run as a script, an example sends its spans where ``OTEL_AGENTS_EXPORTERS`` says.

    ``OTEL_AGENTS_EXPORTERS=phoenix python examples/customer_support/langchain_agent.py``: with the
    variable set (comma-separated presets: ``phoenix``, ``otlp``, ``langfuse``, ``mlflow``, ``file``,
    ``console``; each reads its own variables, e.g. ``PHOENIX_COLLECTOR_ENDPOINT`` and
    ``PHOENIX_PROJECT_NAME``), this calls ``otel_agents.configure()`` (``service.name``
    ``customer-support-<example>``), which builds the tracer provider, instruments the installed
    frameworks (only ``frameworks`` when given) and flushes at exit. Unset, it only instruments
    ``frameworks`` when given, and the spans go nowhere. ``otel-agents ecp serve`` does not run the
    examples as scripts: it sets up its own tracing (``--trace-file``, ``--otlp-endpoint``).
    ``export_each_span``: export each span as it ends rather than in batches, for a process its client
    may kill without warning (the MCP stdio server: asyncio kills it when the agent's event loop closes).

    Returns the ``otel_agents.Configuration``, or ``None`` when the variable is unset.
    """
    import dataclasses
    import os

    import otel_agents
    from otel_agents.exporters.presets import resolve

    names = [n for n in os.environ.get("OTEL_AGENTS_EXPORTERS", "").split(",") if n.strip()]
    if names:
        exporters = [dataclasses.replace(resolve(n), batch=False) for n in names] if export_each_span else None
        return otel_agents.configure(service_name=f"customer-support-{example}", exporters=exporters,
                                     frameworks=list(frameworks) if frameworks is not None else None)
    if frameworks:
        otel_agents.instrument(frameworks=list(frameworks))
    return None
