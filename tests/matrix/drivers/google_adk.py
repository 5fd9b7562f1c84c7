"""Google ADK cells: an ``LlmAgent`` with one function tool over a ``BaseLlm`` subclass (the shape of
``tests/google_adk/fakes.py``'s ``ScriptedLlm``) answering from the matrix's script, each response with its
usage metadata and ``FinishReason.STOP`` (Gemini's finish reason for a function call too). Stops: ``max_turns``
runs with ``RunConfig(max_llm_calls=2)``."""

from __future__ import annotations

import asyncio
import itertools
from typing import Any, AsyncGenerator

from google.adk.agents import LlmAgent, RunConfig
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.runners import Runner
from google.adk.sessions import InMemorySessionService
from google.genai import types
from pydantic import PrivateAttr

from otel_agents.instrumentors.google_adk import GoogleADKInstrumentor
from tests.google_adk.fakes import usage
from tests.matrix.truth import CITY, TOOL, Truth

INSTRUMENTOR = GoogleADKInstrumentor
_sessions = itertools.count(1)


class TruthLlm(BaseLlm):
    model: str = "scripted-1"
    _truth: Any = PrivateAttr(default=None)

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        last = llm_request.contents[-1] if llm_request.contents else None
        after_tool = bool(last and last.parts and any(p.function_response for p in last.parts))
        call = self._truth.reply(has_tool_result=after_tool)
        turn = call.turn
        await asyncio.sleep(0)
        if turn.is_tool_call:
            parts = [types.Part(function_call=types.FunctionCall(name=n, args=a, id=f"call-{i}"))
                     for i, (n, a) in enumerate(turn.tool_calls)]
        else:
            parts = [types.Part(text=turn.text)]
        call.sent(finish="STOP")
        yield LlmResponse(content=types.Content(role="model", parts=parts), model_version="scripted-1-0001",
                          finish_reason=types.FinishReason.STOP, usage_metadata=usage(*turn.usage))


def _runner(truth: Truth) -> tuple[Runner, str]:
    truth.agents = [("weather_agent", None)]

    async def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return await truth.atool(city=city)

    get_weather.__name__ = TOOL
    llm = TruthLlm()
    llm._truth = truth
    runner = Runner(app_name="matrix", agent=LlmAgent(name="weather_agent", model=llm, tools=[get_weather]),
                    session_service=InMemorySessionService())
    session = f"s{next(_sessions)}"
    return runner, session


def _message() -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=CITY)])


def _kw(truth: Truth) -> dict:
    """``max_turns``: ``RunConfig(max_llm_calls=2)`` (ADK raises ``LlmCallsLimitExceededError`` at the third call)."""
    return {"run_config": RunConfig(max_llm_calls=2)} if truth.ending == "max_turns" else {}


def _run(truth: Truth) -> Any:
    runner, session = _runner(truth)
    asyncio.run(runner.session_service.create_session(app_name="matrix", user_id="u", session_id=session))
    return runner.run(user_id="u", session_id=session, new_message=_message(), **_kw(truth))


def _run_async(truth: Truth) -> Any:
    async def gen() -> Any:
        runner, session = _runner(truth)
        await runner.session_service.create_session(app_name="matrix", user_id="u", session_id=session)
        async for event in runner.run_async(user_id="u", session_id=session, new_message=_message(), **_kw(truth)):
            yield event
    return gen()


def _event(event: Any) -> Any:
    parts = event.content.parts if event.content and event.content.parts else []
    return (event.author, [p.text or (p.function_call and p.function_call.name) or
                           (p.function_response and p.function_response.name) for p in parts])


ENTRIES = {
    "Runner.run": lambda t: (lambda: _run(t), _event),
    "Runner.run_async": lambda t: (lambda: _run_async(t), _event),
}
