"""The customer-support agent in the OpenAI Agents SDK.

An ``Agent`` over the three tools of :mod:`common` (as ``function_tool`` s), driven by a
``Model`` subclass — the SDK's own model interface — that asks the shared brain what to do next
and answers with a ``function_call`` or the final message, with token usage. Like any custom
model it records its call in a ``generation_span``. Offline, no API key.

    await agent("Where is my order A100?")         # the correct agent
    await faulty_agent("Where is my order A100?")  # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/openai_agents_agent.py:agent``.
"""

from __future__ import annotations

import itertools
import json
import os
import sys
from typing import Any

from agents import Agent, Model, ModelResponse, Runner, Usage, function_tool, generation_span, set_trace_processors
from openai.types.responses import ResponseFunctionToolCall, ResponseOutputMessage, ResponseOutputText

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file (run as a script, served by path, or imported)
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, TOOLS, Answer, ToolResult, count_tokens, decide, side_effect_twin, configure_tracing, serve_as  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("openai_agents")

SYSTEM_PROMPT = "You are a customer-support assistant. Use the tools; never issue a refund yourself."
MODEL_NAME = "support-brain"

# The SDK's own processor exports every trace to OpenAI's dashboard; this is its documented off switch.
# otel-agents' spans do not depend on it: our processor stays registered whichever comes first.
set_trace_processors([])

_ids = itertools.count(1)


def _get(item: Any, key: str) -> Any:
    return item.get(key) if isinstance(item, dict) else getattr(item, key, None)


def _conversation(input: Any) -> tuple[str, list[ToolResult]]:
    """The customer's question and the tool calls so far, paired with their outputs by call id."""
    if isinstance(input, str):
        return input, []
    question = next((str(_get(i, "content")) for i in input if _get(i, "role") == "user"), "")
    calls = {_get(i, "call_id"): i for i in input if _get(i, "type") == "function_call"}
    results = [ToolResult(_get(calls[_get(i, "call_id")], "name"), json.loads(_get(calls[_get(i, "call_id")], "arguments")),
                          str(_get(i, "output")))
               for i in input if _get(i, "type") == "function_call_output" and _get(i, "call_id") in calls]
    return question, results


class BrainModel(Model):
    """A ``Model`` that follows :func:`common.decide`; ``faults`` makes it the faulty twin."""

    def __init__(self, faults: Any = None):
        self.faults = faults

    async def get_response(self, system_instructions: str | None, input: Any, model_settings: Any, tools: Any,
                           output_schema: Any, handoffs: Any, tracing: Any, **kwargs: Any) -> ModelResponse:
        question, results = _conversation(input)
        messages = [{"role": "system", "content": system_instructions or ""}, {"role": "user", "content": question}]
        with generation_span(model=MODEL_NAME, input=messages, disabled=tracing.is_disabled()) as span:
            action = decide(question, results, self.faults)
            in_tokens = count_tokens(question, *(r.output for r in results))
            if isinstance(action, Answer):
                output: list[Any] = [ResponseOutputMessage(
                    id=f"msg_{next(_ids)}", type="message", role="assistant", status="completed",
                    content=[ResponseOutputText(type="output_text", text=action.text, annotations=[])])]
                out_tokens = count_tokens(action.text)
                span.span_data.output = [{"role": "assistant", "content": action.text}]
            else:
                call_id = f"call_{next(_ids)}"
                output = [ResponseFunctionToolCall(type="function_call", id=f"fc_{call_id}", call_id=call_id,
                                                   name=action.name, arguments=json.dumps(action.arguments))]
                out_tokens = count_tokens(action.name, action.arguments)
                span.span_data.output = [{"role": "assistant", "content": None, "tool_calls": [
                    {"id": call_id, "type": "function",
                     "function": {"name": action.name, "arguments": json.dumps(action.arguments)}}]}]
            span.span_data.usage = {"input_tokens": in_tokens, "output_tokens": out_tokens}
        return ModelResponse(output=output, response_id=None,
                             usage=Usage(requests=1, input_tokens=in_tokens, output_tokens=out_tokens,
                                         total_tokens=in_tokens + out_tokens))

    async def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # the example runs unstreamed
        raise NotImplementedError("the support brain does not stream")
        yield  # pragma: no cover


def build(faults: Any = None) -> Agent:
    """The agent; ``faults`` (a plan) builds the faulty twin."""
    return Agent(name="customer_support", instructions=SYSTEM_PROMPT, model=BrainModel(faults),
                 tools=[function_tool(t) for t in TOOLS])


_agent = build()
_faulty_agent = build(FAULT_PLANS["openai_agents"])


async def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    return (await Runner.run(_agent, user_input)).final_output


async def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    return (await Runner.run(_faulty_agent, user_input)).final_output


side_effect_agent = side_effect_twin(agent)
serve_as(_agent.name, agent, faulty_agent, side_effect_agent)


if __name__ == "__main__":
    import asyncio

    for q in sys.argv[1:] or ["Where is my order A100?"]:
        print(asyncio.run(agent(q)), "|", asyncio.run(faulty_agent(q)))
