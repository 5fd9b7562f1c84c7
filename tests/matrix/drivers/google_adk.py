"""Google ADK cells: an ``LlmAgent`` with one function tool over a ``BaseLlm`` subclass (the shape of
``tests/google_adk/fakes.py``'s ``ScriptedLlm``) answering from the matrix's script, each response with its
usage metadata and ``FinishReason.STOP`` (Gemini's finish reason for a function call too). Stops: ``max_turns``
runs with ``RunConfig(max_llm_calls=2)``.

``Runner.run_live``: the same class's ``connect()`` gives a live connection in Gemini Live's shape: each turn a
message with the usage, then the content (a function call, or the answer and ``turn_complete``); no finish
reason. The caller sends the question on a ``LiveRequestQueue`` and closes it when the answer's turn is complete."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any, AsyncGenerator

from google.adk.agents import LiveRequestQueue, LlmAgent, RunConfig
from google.adk.models import BaseLlm, LlmRequest, LlmResponse
from google.adk.models.base_llm_connection import BaseLlmConnection
from google.adk.runners import Runner
from google.adk.tools.agent_tool import AgentTool
from google.adk.sessions import InMemorySessionService
from google.genai import types
from pydantic import PrivateAttr

from otel_agents.instrumentors.google_adk import GoogleADKInstrumentor
from tests.google_adk.fakes import usage
from tests.matrix.truth import CITY, TOOL, Truth

INSTRUMENTOR = GoogleADKInstrumentor
_sessions = itertools.count(1)


def _after_tool(llm_request: LlmRequest) -> bool:
    last = llm_request.contents[-1] if llm_request.contents else None
    return bool(last and last.parts and any(p.function_response for p in last.parts))


class TruthLlm(BaseLlm):
    model: str = "scripted-1"
    _truth: Any = PrivateAttr(default=None)
    _agent: str = PrivateAttr(default="")  # a multi-agent run's member: its own calls count
    _delegate: Any = PrivateAttr(default=None)  # the delegating agent's first call: ``(tool, args)``
    _on_start: Any = PrivateAttr(default=None)  # a member's first call: its delegation ran (``truth -> None``)

    def _call(self, after_tool: bool) -> Any:
        truth = self._truth
        if self._delegate is not None and truth.delegates(self._agent):
            return truth.delegate(self._agent, *self._delegate, as_tool=None)
        if self._agent:
            if self._on_start is not None and truth.delegates(self._agent):
                self._on_start(truth)
            return truth.reply(self._agent)
        return truth.reply(has_tool_result=after_tool)

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        call = self._call(_after_tool(llm_request))
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


class TruthConnection(BaseLlmConnection):
    """A live connection (Gemini Live's shape, see the module docstring): one turn per ``receive()``."""

    def __init__(self, llm: "TruthLlm") -> None:
        self.llm = llm
        self.inbox: asyncio.Queue = asyncio.Queue()

    async def send_history(self, history: list) -> None:
        if history and history[-1].role == "user":
            await self.inbox.put(history[-1])

    async def send_content(self, content: types.Content) -> None:
        await self.inbox.put(content)

    async def send_realtime(self, blob: Any) -> None:
        pass

    async def receive(self) -> AsyncGenerator[LlmResponse, None]:
        content = await self.inbox.get()
        if content is None:  # closed
            return
        call = self.llm._call(bool(content.parts and any(p.function_response for p in content.parts)))
        turn = call.turn
        yield LlmResponse(usage_metadata=usage(*turn.usage))
        call.usage = turn.usage  # (sent)
        if turn.is_tool_call:
            parts = [types.Part(function_call=types.FunctionCall(name=n, args=a, id=f"call-{i}"))
                     for i, (n, a) in enumerate(turn.tool_calls)]
        else:
            parts = [types.Part(text=turn.text)]
        yield LlmResponse(content=types.Content(role="model", parts=parts))
        call.sent(usage=False)
        if not turn.is_tool_call:
            yield LlmResponse(turn_complete=True)

    async def close(self) -> None:
        await self.inbox.put(None)


class LiveTruthLlm(TruthLlm):
    @contextlib.asynccontextmanager
    async def connect(self, llm_request: LlmRequest) -> Any:
        yield TruthConnection(self)


def _llm(truth: Truth, agent: str = "", delegate: Any = None, on_start: Any = None, live: bool = False) -> TruthLlm:
    llm = LiveTruthLlm() if live else TruthLlm()
    llm._truth, llm._agent, llm._delegate, llm._on_start = truth, agent, delegate, on_start
    return llm


def _weather_agent(truth: Truth, member: str = "", on_start: Any = None, live: bool = False) -> LlmAgent:
    async def get_weather(city: str) -> str:
        """Get the weather for a city."""
        return await truth.atool(city=city)

    get_weather.__name__ = TOOL

    def answer_from_cache(callback_context: Any, llm_request: LlmRequest) -> LlmResponse | None:
        """skip_model: the ``before_model_callback`` answers the request after the tool in the model's place."""
        if not _after_tool(llm_request):
            return None
        return LlmResponse(content=types.Content(role="model", parts=[types.Part(text=truth.skip())]))

    callbacks = {"before_model_callback": answer_from_cache} if truth.ending == "skip_model" else {}
    return LlmAgent(name="weather_agent", description="Knows the weather.",
                    model=_llm(truth, member, None, on_start, live=live), tools=[get_weather], **callbacks)


def _transfer(truth: Truth) -> LlmAgent:
    """Multi-agent: ``triage`` transfers (``transfer_to_agent``, a tool that returns at once) to its sub-agent
    ``weather_agent``, whose answer is the run's."""
    args = {"agent_name": "weather_agent"}
    member = _weather_agent(truth, "weather_agent")
    truth.agents = [("triage", None), ("weather_agent", "triage")]
    return LlmAgent(name="triage", description="Routes questions.", sub_agents=[member],
                    model=_llm(truth, "triage", ("transfer_to_agent", args)),
                    before_tool_callback=_started(truth, "triage", spans=False))


def _started(truth: Truth, by: str, spans: bool = True) -> Any:
    """A ``before_tool_callback`` recording the delegation when ADK really runs its tool."""
    def callback(tool: Any, args: dict, tool_context: Any) -> None:
        truth.delegation_started(tool.name, args, by, spans=spans)
    return callback


def _agent_tool(truth: Truth) -> LlmAgent:
    """Multi-agent: ``orchestrator`` calls ``weather_agent`` as a tool (``AgentTool``), then answers."""
    args = {"request": CITY}
    member = _weather_agent(truth, "weather_agent")
    truth.agents = [("orchestrator", None), ("weather_agent", "orchestrator")]
    truth.top = "orchestrator"
    return LlmAgent(name="orchestrator", description="Asks the weather agent.", tools=[AgentTool(agent=member)],
                    model=_llm(truth, "orchestrator", ("weather_agent", args)),
                    before_tool_callback=_started(truth, "orchestrator"))


def _runner(truth: Truth, build: Any = None) -> tuple[Runner, str]:
    truth.agents = [("weather_agent", None)]
    agent = build(truth) if build is not None else _weather_agent(truth)
    runner = Runner(app_name="matrix", agent=agent, session_service=InMemorySessionService())
    session = f"s{next(_sessions)}"
    return runner, session


def _message() -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=CITY)])


def _kw(truth: Truth) -> dict:
    """``max_turns``: ``RunConfig(max_llm_calls=2)`` (ADK raises ``LlmCallsLimitExceededError`` at the third call)."""
    return {"run_config": RunConfig(max_llm_calls=2)} if truth.ending == "max_turns" else {}


def _run(truth: Truth, build: Any = None) -> Any:
    runner, session = _runner(truth, build)
    asyncio.run(runner.session_service.create_session(app_name="matrix", user_id="u", session_id=session))
    return runner.run(user_id="u", session_id=session, new_message=_message(), **_kw(truth))


def _run_async(truth: Truth, build: Any = None) -> Any:
    async def gen() -> Any:
        runner, session = _runner(truth, build)
        await runner.session_service.create_session(app_name="matrix", user_id="u", session_id=session)
        async for event in runner.run_async(user_id="u", session_id=session, new_message=_message(), **_kw(truth)):
            yield event
    return gen()


def _run_live(truth: Truth) -> Any:
    """``Runner.run_live``: the question on a ``LiveRequestQueue``, closed once the answer's turn is complete."""
    async def gen() -> Any:
        runner, session = _runner(truth, lambda t: _weather_agent(t, live=True))
        await runner.session_service.create_session(app_name="matrix", user_id="u", session_id=session)
        queue = LiveRequestQueue()
        queue.send_content(_message())
        async for event in runner.run_live(user_id="u", session_id=session, live_request_queue=queue,
                                           run_config=RunConfig(response_modalities=["TEXT"])):
            yield event
            if event.turn_complete:
                queue.close()
    return gen()


def _event(event: Any) -> Any:
    parts = event.content.parts if event.content and event.content.parts else []
    return (event.author, [p.text or (p.function_call and p.function_call.name) or
                           (p.function_response and p.function_response.name) for p in parts])


ENTRIES = {
    "Runner.run": lambda t: (lambda: _run(t), _event),
    "Runner.run_async": lambda t: (lambda: _run_async(t), _event),
    "sub_agents Runner.run": lambda t: (lambda: _run(t, _transfer), _event),
    "sub_agents Runner.run_async": lambda t: (lambda: _run_async(t, _transfer), _event),
    "AgentTool Runner.run": lambda t: (lambda: _run(t, _agent_tool), _event),
    "AgentTool Runner.run_async": lambda t: (lambda: _run_async(t, _agent_tool), _event),
    "Runner.run_live": lambda t: (lambda: _run_live(t), _event),
}
