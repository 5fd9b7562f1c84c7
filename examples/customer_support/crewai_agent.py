"""The customer-support agent in CrewAI.

A one-agent, one-task ``Crew`` over the three tools of :mod:`common`, driven by
:class:`BrainLLM`, a ``crewai.llms.base_llm.BaseLLM`` with native function
calling that asks the shared brain what to do next: it answers with
OpenAI-style tool calls (which CrewAI's executor runs) or with the final text,
and reports token usage through CrewAI's LLM events as provider classes do.
Offline, no API key.

    agent("Where is my order A100?")         # the correct agent
    faulty_agent("Where is my order A100?")  # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/crewai_agent.py:agent``.

Environment: this module turns CrewAI's own telemetry and tracing off
(``CREWAI_DISABLE_TELEMETRY``, ``CREWAI_TRACING_ENABLED``) before importing
CrewAI, and points its storage (``CREWAI_STORAGE_DIR``) at a temporary
directory unless set, so it needs neither network nor a writable home.
"""

from __future__ import annotations

import json
import os
import re
import sys
import tempfile
from typing import Any

os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_DISABLE_TRACKING", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("CREWAI_STORAGE_DIR", os.path.join(tempfile.gettempdir(), "otel-agents-crewai"))

from crewai import Agent, Crew, Task  # noqa: E402
from crewai.events.types.llm_events import LLMCallType  # noqa: E402
from crewai.llms.base_llm import BaseLLM, llm_call_context  # noqa: E402
from crewai.tools import tool  # noqa: E402

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file (run as a script, served by path, or imported)
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, TOOLS, Answer, ToolResult, count_tokens, decide, side_effect_twin, configure_tracing, serve_as  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("crewai")

_QUESTION = re.compile(r"<customer_message>\n(.*?)\n</customer_message>", re.S)


class BrainLLM(BaseLLM):
    """A native function-calling LLM that follows :func:`common.decide`; ``faults`` makes it the faulty twin."""

    llm_type: str = "support-brain"
    provider: str = "fake"
    faults: Any = None  # a common.FAULT_PLANS entry, or None

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("model", "support-brain")  # BaseLLM's validator wants it in the constructor data
        super().__init__(**kwargs)

    def supports_function_calling(self) -> bool:
        return True

    def get_input_tokens_count(self, messages: Any, tools: Any = None, response_model: Any = None) -> int:
        """Our deterministic count (CrewAI's fallback estimate logs a warning on every call)."""
        if isinstance(messages, str):
            return count_tokens(messages)
        return count_tokens(*(m.get("content") for m in messages))

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> Any:
        if isinstance(messages, str):
            messages = [{"role": "user", "content": messages}]
        with llm_call_context():
            self._emit_call_started_event(messages=messages, tools=tools, callbacks=callbacks,
                                          available_functions=available_functions,
                                          from_task=from_task, from_agent=from_agent)
            question = next((m.group(1) for m in map(_QUESTION.search, (str(x.get("content") or "") for x in messages))
                             if m), "")
            results = _tool_results(messages)
            action = decide(question, results, self.faults)
            if isinstance(action, Answer):
                response: Any = action.text
                out_tokens, call_type = count_tokens(action.text), LLMCallType.LLM_CALL
            else:
                response = [{"id": f"call_{len(results) + 1}", "type": "function",
                             "function": {"name": action.name, "arguments": json.dumps(action.arguments)}}]
                out_tokens, call_type = count_tokens(action.name, action.arguments), LLMCallType.TOOL_CALL
            in_tokens = count_tokens(*(m.get("content") for m in messages))
            self._emit_call_completed_event(
                response=response, call_type=call_type, from_task=from_task, from_agent=from_agent,
                messages=messages, finish_reason="stop" if isinstance(action, Answer) else "tool_calls",
                usage={"prompt_tokens": in_tokens, "completion_tokens": out_tokens,
                       "total_tokens": in_tokens + out_tokens})
            return response


def _tool_results(messages: list[dict[str, Any]]) -> list[ToolResult]:
    """The tool calls of this conversation with their results, paired by tool-call id."""
    calls = {}
    for m in messages:
        for tc in m.get("tool_calls") or ():
            fn = tc.get("function", {}) if isinstance(tc, dict) else {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = {}
            calls[tc.get("id")] = (fn.get("name", ""), args if isinstance(args, dict) else {})
    results = []
    for m in messages:
        if m.get("role") == "tool":
            name, args = calls.get(m.get("tool_call_id"), (m.get("name", ""), {}))
            results.append(ToolResult(name, args, str(m.get("content") or "")))
    return results


_TOOLS = [tool(fn.__name__)(fn) for fn in TOOLS]


def build(user_input: str, faults: Any = None) -> Crew:
    """A crew that answers ``user_input``; ``faults`` (a plan) builds the faulty twin."""
    support = Agent(role="Customer Support Agent", goal="Answer customers' questions about their orders and refunds",
                    backstory="You look orders up and check the refund policy; you never issue refunds yourself.",
                    llm=BrainLLM(faults=faults), tools=_TOOLS, verbose=False, allow_delegation=False)
    task = Task(name="answer_customer",
                description=f"Answer this customer message.\n<customer_message>\n{user_input}\n</customer_message>",
                expected_output="A short, accurate reply to the customer.", agent=support)
    return Crew(agents=[support], tasks=[task], verbose=False, name="customer_support")


def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    return build(user_input).kickoff().raw


def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    return build(user_input, FAULT_PLANS["crewai"]).kickoff().raw


side_effect_agent = side_effect_twin(agent)
serve_as("customer_support", agent, faulty_agent, side_effect_agent)


if __name__ == "__main__":
    for q in sys.argv[1:] or ["Where is my order A100?"]:
        print(agent(q), "|", faulty_agent(q))
