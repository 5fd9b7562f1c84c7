"""A customer-support agent in plain Python, instrumented with otel-agents' decorators.

No framework and no network: the "model" is a deterministic function that
reads the conversation and either asks for a tool or answers. It is decorated
as a ``model`` span and reports token usage; the two tools and the agent are
decorated too, so one question gives the same span tree an instrumented
framework would::

    invoke_agent customer_support
      chat support-sim-1          (usage on the model span)
      execute_tool lookup_order
      chat support-sim-1
      execute_tool check_refund_policy
      chat support-sim-1

Run it as a script to print the answer and the span tree::

    python examples/plain_python/agent.py "Can I get a refund for order A1001?"

Serve it over ECP (``agent`` takes the step input and returns the answer)::

    otel-agents ecp serve examples/plain_python/agent.py:agent
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

import otel_agents
from otel_agents.manual import Usage, current_span

MODEL = "support-sim-1"

ORDERS: dict[str, dict[str, Any]] = {
    "A1001": {"item": "wireless headphones", "status": "delivered", "delivered_on": "2025-03-02",
              "days_since_delivery": 12, "price_usd": 89.0},
    "A1002": {"item": "standing desk", "status": "delivered", "delivered_on": "2025-01-10",
              "days_since_delivery": 61, "price_usd": 420.0},
    "A1003": {"item": "coffee grinder", "status": "shipped", "delivered_on": None,
              "days_since_delivery": None, "price_usd": 129.0},
}
REFUND_WINDOW_DAYS = 30
ORDER_ID = re.compile(r"\b[A-Z]\d{4}\b")


def _order(order_id: str) -> dict[str, Any]:
    order = ORDERS.get(order_id.strip().upper())
    if order is None:
        raise KeyError(f"no order {order_id}")
    return {"order_id": order_id, **order}


@otel_agents.tool
def lookup_order(order_id: str) -> dict[str, Any]:
    """Look up an order by its id: item, status, delivery date and price."""
    return _order(order_id)


@otel_agents.tool
def check_refund_policy(order_id: str) -> dict[str, Any]:
    """Whether an order can be refunded under the 30-day policy, and why."""
    order = _order(order_id)
    if order["status"] != "delivered":
        return {"eligible": False, "reason": "the order has not been delivered yet"}
    days = order["days_since_delivery"]
    if days <= REFUND_WINDOW_DAYS:
        return {"eligible": True, "reason": f"delivered {days} days ago, within the {REFUND_WINDOW_DAYS}-day window"}
    return {"eligible": False, "reason": f"delivered {days} days ago, past the {REFUND_WINDOW_DAYS}-day window"}


TOOLS = {"lookup_order": lookup_order, "check_refund_policy": check_refund_policy}


def _tokens(text: str) -> int:
    return len(text.split())


@otel_agents.span("model", MODEL, provider="otel-agents-fake")
def support_model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """The fake model: asks for the order, then for the policy, then answers."""
    question = next(m["content"] for m in messages if m["role"] == "user")
    results = {m["name"]: m["content"] for m in messages if m["role"] == "tool"}
    match = ORDER_ID.search(question.upper())
    if match is None:
        reply: dict[str, Any] = {"role": "assistant",
                                 "content": "Please tell me your order id (for example A1001)."}
    elif "lookup_order" not in results:
        reply = {"role": "assistant", "tool_call": {"name": "lookup_order", "arguments": {"order_id": match.group()}}}
    elif "error" in results["lookup_order"]:
        reply = {"role": "assistant", "content": f"I could not find order {match.group()}."}
    elif "check_refund_policy" not in results and "refund" in question.lower():
        reply = {"role": "assistant",
                 "tool_call": {"name": "check_refund_policy", "arguments": {"order_id": match.group()}}}
    else:
        reply = {"role": "assistant", "content": _answer(json.loads(results["lookup_order"]),
                                                         results.get("check_refund_policy"))}
    prompt_tokens = sum(_tokens(str(m.get("content", ""))) for m in messages)
    current_span().set_usage(Usage(input_tokens=prompt_tokens, output_tokens=_tokens(json.dumps(reply))))
    current_span().set_finish_reasons(["tool_call" if "tool_call" in reply else "stop"])
    return reply


def _answer(order: dict[str, Any], policy_json: str | None) -> str:
    text = f"Order {order['order_id']} ({order['item']}) "
    text += f"was delivered on {order['delivered_on']}." if order["delivered_on"] else f"is {order['status']}."
    if policy_json is not None:
        policy = json.loads(policy_json)
        verdict = "is eligible for a refund" if policy["eligible"] else "is not eligible for a refund"
        text += f" It {verdict}: {policy['reason']}."
    return text


@otel_agents.agent(name="customer_support", description="Answers questions about orders and refunds.")
def agent(input: str) -> str:
    """The ECP step: one customer question in, the answer out."""
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a customer-support agent. Use the tools; never guess."},
        {"role": "user", "content": input},
    ]
    for _ in range(6):
        reply = support_model(messages)
        call = reply.get("tool_call")
        if call is None:
            return reply["content"]
        messages.append(reply)
        try:
            result: Any = TOOLS[call["name"]](**call["arguments"])
        except Exception as exc:  # the model sees the error and answers; the tool span records it
            result = {"error": str(exc)}
        messages.append({"role": "tool", "name": call["name"], "content": json.dumps(result)})
    return "Sorry, I could not finish this request."


agent.name = "customer_support"  # what `otel-agents ecp serve` reports in agent/initialize


def _main(argv: list[str]) -> int:
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    exporter = InMemorySpanExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    otel_agents.manual.set_providers(provider)

    question = " ".join(argv) or "Can I get a refund for order A1001?"
    with otel_agents.using_session("demo-session"):
        print(agent(question))
    print()
    from otel_agents.exporters.tree import format_span_tree

    print(format_span_tree(exporter.get_finished_spans()))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
