"""LlamaIndex cells: a ``FunctionAgent`` with one tool over ``tests/llama_index/fakes.py``'s
``scripted_llm`` (the core's ``MockFunctionCallingLLM``) answering from the matrix's script. The mock
reports no usage and no finish reason, so none is expected on the model spans. Stops: ``max_turns`` runs with
``max_iterations=2`` (the default ``early_stopping_method="force"``: LlamaIndex raises ``WorkflowRuntimeError``);
``caller_cancel`` calls the run handler's ``cancel_run()`` while the tool runs."""

from __future__ import annotations

import asyncio
from typing import Any

from llama_index.core.agent.workflow import FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole
from llama_index.core.tools import FunctionTool

from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor
from tests.llama_index.fakes import cheap_memory, scripted_llm, tool_call
from tests.matrix.truth import CITY, TOOL, Truth, _until

INSTRUMENTOR = LlamaIndexInstrumentor


def _agent(truth: Truth) -> FunctionAgent:
    truth.agents = [("weather_agent", None)]

    def respond(messages: Any) -> ChatMessage:
        call = truth.reply(has_tool_result=any(m.role == MessageRole.TOOL for m in messages))
        call.usage, call.answered = None, True  # the mock sends no usage, no finish reason
        turn = call.turn
        if turn.is_tool_call:
            name, args = turn.tool_calls[0]
            return tool_call(name, args, call_id="call_0")
        return ChatMessage(role=MessageRole.ASSISTANT, content=turn.text)

    async def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return await truth.atool(city=city)

    return FunctionAgent(name="weather_agent", description="Weather.", llm=scripted_llm(respond),
                         tools=[FunctionTool.from_defaults(async_fn=get_weather, name=TOOL)])


def _kw(truth: Truth) -> dict:
    return {"max_iterations": 2} if truth.ending == "max_turns" else {}


async def _run(truth: Truth) -> Any:
    handler = _agent(truth).run(user_msg=CITY, memory=cheap_memory(), **_kw(truth))
    if truth.ending == "caller_cancel":  # the caller's own handle: the run's handler, cancel_run()
        async def cancel() -> None:
            await _until(lambda: truth.tool_running or handler.done())
            await handler.cancel_run()
        asyncio.ensure_future(cancel())
    return await handler


def _events(truth: Truth) -> Any:
    async def gen() -> Any:
        handler = _agent(truth).run(user_msg=CITY, memory=cheap_memory(), **_kw(truth))
        async for event in handler.stream_events():
            yield event
        await handler
    return gen()


def _event(event: Any) -> Any:
    return type(event).__name__


ENTRIES = {
    "FunctionAgent.run": lambda t: (lambda: _run(t), lambda r: str(r)),
    "FunctionAgent.run().stream_events": lambda t: (lambda: _events(t), _event),
}
