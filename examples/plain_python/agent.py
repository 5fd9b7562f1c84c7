"""The customer-support agent in plain Python: no framework, instrumented with otel-agents' decorators.

The same agent as the framework modules in ``examples/customer_support/``
(same tools, same scripted brain, same answers), written as a hand-rolled
tool-calling loop. Only otel-agents' decorators make it observable:

- ``@otel_agents.agent(name="customer_support")`` on :func:`agent` and :func:`faulty_agent`;
- ``otel_agents.tool`` on each of the three tools of ``common.py``;
- ``@otel_agents.span("model", "support-brain", provider="fake")`` on the fake
  model call, which reports its token usage on its own span
  (``otel_agents.manual.current_span().set_usage(...)``).

One refund question gives the span tree an instrumented framework would (usage on
the model spans), as the script prints it::

    invoke_agent customer_support [agent]
      chat support-brain [model]  tokens in=21 out=3
      execute_tool lookup_order [tool]  {"order_id":"B200"} -> …
      chat support-brain [model]  tokens in=34 out=3
      execute_tool check_refund_policy [tool]  {"order_id":"B200"} -> …
      chat support-brain [model]  tokens in=49 out=17

and, served over ECP, an envelope with ``tool_calls``, ``evaluation_context``
and ``usage``, graded by ``examples/customer_support/manifest.yaml`` like the
framework agents. ``faulty_agent`` is the faulty twin (``FAULT_PLANS["plain_python"]``
in ``common.py``): the same answers by a broken trajectory.

Run it as a script to print the answer and the span tree::

    python examples/plain_python/agent.py "Can I get a refund for order B200?"

Serve it over ECP (``agent`` takes the step input and returns the answer)::

    otel-agents ecp serve examples/plain_python/agent.py:agent
    otel-agents ecp serve examples/plain_python/agent.py:faulty_agent
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any, Callable

import otel_agents
from otel_agents.manual import Usage, current_span

_COMMON = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "customer_support")
if _COMMON not in sys.path:  # the framework-neutral half of the example (tools, brain, fault plans)
    sys.path.insert(0, _COMMON)
from common import FAULT_PLANS, TOOLS, Answer, ToolResult, count_tokens, decide, mail_customer  # noqa: E402

MODEL = "support-brain"
SYSTEM_PROMPT = "You are a customer-support assistant. Use the tools; never issue a refund yourself."
DESCRIPTION = "Answers questions about orders and refunds."

# The shared tool functions, each decorated: a call is an `execute_tool NAME` span.
TOOLS_BY_NAME: dict[str, Callable[..., str]] = {fn.__name__: otel_agents.tool(fn) for fn in TOOLS}

Message = dict[str, Any]  # OpenAI-style: {"role", "content"} plus "tool_calls" / "tool_call_id"


def brain_model(faults: Any = None) -> Callable[[list[Message]], Message]:
    """The fake chat model: follows :func:`common.decide`; ``faults`` (a plan) makes it the faulty twin's.

    The returned function takes the conversation and returns the assistant message:
    either ``{"tool_calls": [{"id", "name", "arguments"}]}`` or ``{"content": answer}``.
    """

    @otel_agents.span("model", MODEL, provider="fake")
    def chat(messages: list[Message]) -> Message:
        question = next((m["content"] for m in reversed(messages) if m["role"] == "user"), "")
        results = _tool_results(messages)
        action = decide(question, results, faults)
        if isinstance(action, Answer):
            reply: Message = {"role": "assistant", "content": action.text}
            out_tokens = count_tokens(action.text)
        else:
            call = {"id": f"call_{len(results) + 1}", "name": action.name, "arguments": dict(action.arguments)}
            reply = {"role": "assistant", "content": "", "tool_calls": [call]}
            out_tokens = count_tokens(action.name, action.arguments)
        span = current_span()  # this model call's span: only the model knows its token counts
        if span is not None:
            span.set_usage(Usage(input_tokens=count_tokens(*(m["content"] for m in messages)),
                                 output_tokens=out_tokens))
            span.set_finish_reasons(["tool_call" if "tool_calls" in reply else "stop"])
        return reply

    return chat


def _tool_results(messages: list[Message]) -> list[ToolResult]:
    """The tool calls of this conversation with their results, paired by tool-call id."""
    calls = {c["id"]: c for m in messages for c in m.get("tool_calls", ())}
    return [ToolResult(calls[m["tool_call_id"]]["name"], calls[m["tool_call_id"]]["arguments"], m["content"])
            for m in messages if m["role"] == "tool" and m.get("tool_call_id") in calls]


def _run(model: Callable[[list[Message]], Message], user_input: str) -> str:
    """The tool-calling loop: ask the model, run the tools it calls, until it answers."""
    messages: list[Message] = [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user_input}]
    for _ in range(10):  # the brain answers after at most six tool calls; this only guards the loop
        reply = model(messages)
        messages.append(reply)
        if not reply.get("tool_calls"):
            return str(reply["content"])
        for call in reply["tool_calls"]:
            output = TOOLS_BY_NAME[call["name"]](**call["arguments"])
            messages.append({"role": "tool", "tool_call_id": call["id"], "content": output})
    return "Sorry, I could not finish this request."


_model = brain_model()
_faulty_model = brain_model(FAULT_PLANS["plain_python"])


@otel_agents.agent(name="customer_support", description=DESCRIPTION)
def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    return _run(_model, user_input)


@otel_agents.agent(name="customer_support", description=DESCRIPTION)
def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    return _run(_faulty_model, user_input)


@otel_agents.agent(name="customer_support", description=DESCRIPTION)
def side_effect_agent(user_input: str) -> str:
    """Answer one customer message correctly, then e-mail the customer behind the chat's back
    (the side-effect twin: the fault is only an HTTP call, see ``common.mail_customer``)."""
    answer = _run(_model, user_input)
    mail_customer(user_input, answer)
    return answer


@otel_agents.agent(name="customer_support", description=DESCRIPTION)
def flaky_agent(user_input: str) -> str:
    """The flaky twin (``otel-agents demo --repeat K``): the faulty trajectory when the run's seed
    (``OTEL_AGENTS_DEMO_SEED``, default 1) is a multiple of 3, the correct one otherwise: it fails one
    run in three, deterministically."""
    seed = int(os.environ.get("OTEL_AGENTS_DEMO_SEED") or 1)
    return _run(_faulty_model if seed % 3 == 0 else _model, user_input)


def _main(argv: list[str]) -> int:
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # examples/, for _tracing
    from _tracing import Tracing

    tracing = Tracing()  # prints the tree; also exports where you configured (see examples/_tracing.py)
    question = " ".join(argv) or "Can I get a refund for order B200?"
    with otel_agents.using_session("demo-session"):
        print(agent(question))
    tracing.close()
    print()
    print(tracing.tree())
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
