"""A two-agent CrewAI crew traced by otel-agents — offline, no API key.

Run::

    python examples/crewai_crew.py

The support lead gets a customer's question, delegates the order lookup to the
order clerk ("Delegate work to coworker"), and the clerk calls the
``lookup_order`` tool. Both agents run on scripted models (a ``BaseLLM``
subclass that answers from a script), so nothing leaves the machine. The script
prints the span tree: the crew, each agent, every model call with its token
usage, every tool call — the clerk nested under the lead's delegation.

The same spans also go to a backend when your environment names one
(``OTEL_AGENTS_EXPORTERS=otlp``, ``phoenix``…, or ``opentelemetry-instrument``:
see ``examples/_tracing.py``).
"""

from __future__ import annotations

import logging
import os
import sys
from typing import Any

# Keep CrewAI's own anonymous telemetry and trace upload off (they are independent of ours).
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
# CrewAI warns that it estimates token counts for models it does not know; the scripted ones are such.
logging.getLogger("crewai.llms.base_llm").setLevel(logging.ERROR)

from crewai import Agent, Crew, Process, Task  # noqa: E402
from crewai.events.types.llm_events import LLMCallType  # noqa: E402
from crewai.llms.base_llm import BaseLLM, llm_call_context  # noqa: E402
from crewai.tools import tool  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # _tracing.py, beside this file
from _tracing import Tracing  # noqa: E402
from otel_agents.instrumentors.crewai import CrewAIInstrumentor  # noqa: E402


class ScriptedLLM(BaseLLM):
    """A model that follows a script: first it takes ``action`` (ReAct text), then it answers with
    what the tool observed. It reports token usage the way CrewAI's provider classes do."""

    action: str

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> str:
        with llm_call_context():
            self._emit_call_started_event(messages=messages, from_task=from_task, from_agent=from_agent)
            observation = next((str(m["content"]).split("\nObservation:", 1)[1].strip()
                                for m in reversed(messages)
                                if m.get("role") == "assistant" and "\nObservation:" in str(m.get("content"))),
                               None)
            if observation is None:
                text = f"Thought: I know what to do.\n{self.action}"
            else:
                text = f"Thought: I now know the final answer\nFinal Answer: {observation}"
            prompt_tokens = sum(len(str(m.get("content") or "")) for m in messages) // 4
            self._emit_call_completed_event(
                response=text, call_type=LLMCallType.LLM_CALL, from_task=from_task, from_agent=from_agent,
                messages=messages, usage={"prompt_tokens": prompt_tokens, "completion_tokens": len(text) // 4},
                finish_reason="stop")
            return text

    def supports_function_calling(self) -> bool:
        return False


@tool("lookup_order")
def lookup_order(order_id: str) -> str:
    """Look up an order by its id and return its status."""
    return f"Order {order_id} shipped on 2024-05-02 with UPS."


def build_crew() -> Crew:
    lead = Agent(
        role="Support Lead", goal="Resolve customer tickets", backstory="Hands lookups to the right coworker.",
        allow_delegation=True,
        llm=ScriptedLLM(model="scripted-lead", action=(
            "Action: Delegate work to coworker\n"
            'Action Input: {"task": "Find the status of order A100", '
            '"context": "A customer asks where their order is.", "coworker": "Order Clerk"}')),
    )
    clerk = Agent(
        role="Order Clerk", goal="Answer order questions", backstory="Knows the order system.",
        tools=[lookup_order],
        llm=ScriptedLLM(model="scripted-clerk", action='Action: lookup_order\nAction Input: {"order_id": "A100"}'),
    )
    ticket = Task(name="ticket", description="A customer asks: where is my order A100?",
                  expected_output="A short answer for the customer", agent=lead)
    return Crew(name="Support crew", agents=[lead, clerk], tasks=[ticket], process=Process.sequential)


def main() -> None:
    tracing = Tracing()  # prints the tree; also exports where you configured (see examples/_tracing.py)
    tracing.instrument(CrewAIInstrumentor())
    try:
        result = build_crew().kickoff()
    finally:
        tracing.close()
    print(f"\nAnswer: {result.raw}\n")
    print(tracing.tree())


if __name__ == "__main__":
    main()
