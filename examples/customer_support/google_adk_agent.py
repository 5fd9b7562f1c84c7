"""The customer-support agent in Google ADK.

An ADK ``LlmAgent`` over the three tools of :mod:`common`, run by a ``Runner``
with an in-memory session service and driven by a small subclass of ADK's model
base (``google.adk.models.BaseLlm``) that asks the shared brain what to do next
and answers with function calls or the final text, with usage metadata.
Offline, no API key, no Google Cloud project.

    await agent("Where is my order A100?")         # the correct agent
    await faulty_agent("Where is my order A100?")  # same answer, broken trajectory

Serve it over ECP: ``otel-agents ecp serve examples/customer_support/google_adk_agent.py:agent``.
"""

from __future__ import annotations

import os
import sys
import uuid
from typing import Any, AsyncGenerator

from google.adk.agents import LlmAgent
from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types

_HERE = os.path.dirname(os.path.abspath(__file__))
if _HERE not in sys.path:  # common.py sits next to this file (run as a script, served by path, or imported)
    sys.path.insert(0, _HERE)
from common import FAULT_PLANS, TOOLS, Answer, ToolResult, count_tokens, decide, side_effect_twin, configure_tracing, serve_as  # noqa: E402

if __name__ == "__main__":  # run as a script: spans go where OTEL_AGENTS_EXPORTERS says, before any agent is built
    configure_tracing("google_adk")

SYSTEM_PROMPT = "You are a customer-support assistant. Use the tools; never issue a refund yourself."
APP = "customer_support"


class BrainLlm(BaseLlm):
    """An ADK model that follows :func:`common.decide`; ``faults`` makes it the faulty twin."""

    model: str = "support-brain"
    faults: Any = None

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        contents = llm_request.contents
        question = next((p.text for c in reversed(contents) if c.role == "user" for p in c.parts or ()
                         if p.text), "")
        results = _tool_results(contents)
        action = decide(question, results, self.faults)
        in_tokens = count_tokens(*(p.text or p.function_response or p.function_call
                                   for c in contents for p in c.parts or ()))
        if isinstance(action, Answer):
            part, out = types.Part(text=action.text), count_tokens(action.text)
        else:
            part = types.Part(function_call=types.FunctionCall(name=action.name, args=action.arguments,
                                                               id=f"call_{len(results) + 1}"))
            out = count_tokens(action.name, action.arguments)
        yield LlmResponse(content=types.Content(role="model", parts=[part]), model_version=self.model,
                          finish_reason=types.FinishReason.STOP,
                          usage_metadata=types.GenerateContentResponseUsageMetadata(
                              prompt_token_count=in_tokens, candidates_token_count=out, total_token_count=in_tokens + out))


def _tool_results(contents: list) -> list[ToolResult]:
    """The function calls of this conversation with their responses, paired by call id."""
    calls = {p.function_call.id: p.function_call for c in contents for p in c.parts or () if p.function_call}
    results = []
    for c in contents:
        for p in c.parts or ():
            response = p.function_response
            if response is not None and response.id in calls:
                call = calls[response.id]
                output = (response.response or {}).get("result", response.response)
                results.append(ToolResult(call.name, dict(call.args or {}), str(output)))
    return results


def build(faults: Any = None) -> Runner:
    """A runner of the agent; ``faults`` (a plan) builds the faulty twin's."""
    support = LlmAgent(name="customer_support", model=BrainLlm(faults=faults), instruction=SYSTEM_PROMPT,
                       tools=list(TOOLS))
    return Runner(app_name=APP, agent=support, session_service=InMemorySessionService())


_runners: dict[str, Runner] = {}


async def _answer(kind: str, user_input: str) -> str:
    runner = _runners.get(kind)
    if runner is None:  # built on first use, so an instrumentor set up after import still sees the Runner
        runner = _runners[kind] = build(FAULT_PLANS["google_adk"] if kind == "faulty" else None)
    session = await runner.session_service.create_session(app_name=APP, user_id="customer",
                                                          session_id=str(uuid.uuid4()))
    answer = ""
    async for event in runner.run_async(user_id="customer", session_id=session.id,
                                        new_message=types.Content(role="user", parts=[types.Part(text=user_input)])):
        if event.is_final_response() and event.content and event.content.parts:
            answer = "".join(p.text for p in event.content.parts if p.text) or answer
    return answer


async def agent(user_input: str) -> str:
    """Answer one customer message (the correct agent)."""
    return await _answer("agent", user_input)


async def faulty_agent(user_input: str) -> str:
    """Answer one customer message with a broken trajectory but the same final answer."""
    return await _answer("faulty", user_input)


side_effect_agent = side_effect_twin(agent)
serve_as("customer_support", agent, faulty_agent, side_effect_agent)


if __name__ == "__main__":
    import asyncio

    for q in sys.argv[1:] or ["Where is my order A100?", "Can I get a refund for B200?"]:
        print(asyncio.run(agent(q)), "|", asyncio.run(faulty_agent(q)))
