"""A ``google.adk.models.BaseLlm`` scripted by the conversation, and helpers to run agents offline.

The fake answers each request with the next entry of its script: a function call
(``call("tool", arg=...)``), a text (``"answer"``), a list of partial chunks then a final
text (``Stream([...], "final")``), or an ``LlmResponse`` given whole. Every response carries
usage metadata (``input_tokens``/``output_tokens`` of the entry, default 10/5).
No API key, no network: ADK never sees a real model.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, AsyncGenerator

from google.adk.models.base_llm import BaseLlm
from google.adk.models.llm_request import LlmRequest
from google.adk.models.llm_response import LlmResponse
from google.genai import types
from pydantic import PrivateAttr


@dataclass
class Call:
    """One or more function calls in one model response."""
    calls: list[tuple[str, dict]]
    input_tokens: int = 10
    output_tokens: int = 5


def call(name: str, **args: Any) -> Call:
    return Call([(name, args)])


def calls(*pairs: tuple[str, dict]) -> Call:
    return Call(list(pairs))


@dataclass
class Text:
    text: str
    input_tokens: int = 10
    output_tokens: int = 5


@dataclass
class Stream:
    """Partial chunks (the first after ``first`` seconds), then (unless ``final`` is None) the aggregated final
    response with usage. ``hold``: after its chunks the model waits for ever (until its request is cancelled or
    closed), as a model still answering when the caller leaves."""
    chunks: list[str]
    final: str | None = None
    input_tokens: int = 10
    output_tokens: int = 5
    first: float = 0.0
    hold: bool = False


@dataclass
class Raw:
    response: LlmResponse


@dataclass
class Raise:
    exc: BaseException


def usage(i: int, o: int) -> types.GenerateContentResponseUsageMetadata:
    return types.GenerateContentResponseUsageMetadata(prompt_token_count=i, candidates_token_count=o,
                                                      total_token_count=i + o)


class ScriptedLlm(BaseLlm):
    """Answers from ``script`` (one entry per request, in order; the last text repeats when exhausted)."""

    model: str = "scripted-1"
    _script: list = PrivateAttr(default_factory=list)
    _requests: list = PrivateAttr(default_factory=list)

    def __init__(self, script: list, **kwargs: Any):
        super().__init__(**kwargs)
        self._script = list(script)

    @property
    def requests(self) -> list[LlmRequest]:
        return self._requests

    async def generate_content_async(self, llm_request: LlmRequest, stream: bool = False
                                     ) -> AsyncGenerator[LlmResponse, None]:
        self._requests.append(llm_request)
        entry = self._script.pop(0) if self._script else Text("done")
        if isinstance(entry, str):
            entry = Text(entry)
        await asyncio.sleep(0)
        if isinstance(entry, Raise):
            raise entry.exc
        if isinstance(entry, Raw):
            yield entry.response
            return
        if isinstance(entry, Call):
            parts = [types.Part(function_call=types.FunctionCall(name=n, args=a, id=f"call-{n}-{i}"))
                     for i, (n, a) in enumerate(entry.calls)]
            yield LlmResponse(content=types.Content(role="model", parts=parts), model_version="scripted-1-0001",
                              finish_reason=types.FinishReason.STOP,
                              usage_metadata=usage(entry.input_tokens, entry.output_tokens))
            return
        if isinstance(entry, Stream):
            await asyncio.sleep(entry.first)
            for chunk in entry.chunks:
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=chunk)]), partial=True,
                                  model_version="scripted-1-0001")
                await asyncio.sleep(0)
            if entry.hold:
                await asyncio.Event().wait()
            if entry.final is not None:
                yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=entry.final)]),
                                  model_version="scripted-1-0001", finish_reason=types.FinishReason.STOP,
                                  usage_metadata=usage(entry.input_tokens, entry.output_tokens))
            return
        yield LlmResponse(content=types.Content(role="model", parts=[types.Part(text=entry.text)]),
                          model_version="scripted-1-0001", finish_reason=types.FinishReason.STOP,
                          usage_metadata=usage(entry.input_tokens, entry.output_tokens))


@dataclass
class RunResult:
    events: list = field(default_factory=list)
    error: BaseException | None = None

    @property
    def final_text(self) -> str | None:
        for event in reversed(self.events):
            if event.content and event.content.parts and not event.partial:
                texts = [p.text for p in event.content.parts if p.text and not p.thought]  # a thought is not the answer
                if texts:
                    return "".join(texts)
        return None


async def run_agent_async(agent: Any, message: str = "Where is my order A100?", *, user_id: str = "u1",
                          session_id: str = "sess-1", run_config: Any = None, runner: Any = None) -> RunResult:
    """Run ``agent`` once through a ``Runner`` with an in-memory session service."""
    from google.adk.runners import Runner
    from google.adk.sessions import InMemorySessionService

    if runner is None:
        runner = Runner(app_name="support", agent=agent, session_service=InMemorySessionService())
    if await runner.session_service.get_session(app_name="support", user_id=user_id, session_id=session_id) is None:
        await runner.session_service.create_session(app_name="support", user_id=user_id, session_id=session_id)
    result = RunResult()
    kwargs = {"run_config": run_config} if run_config is not None else {}
    try:
        async for event in runner.run_async(user_id=user_id, session_id=session_id,
                                            new_message=types.Content(role="user", parts=[types.Part(text=message)]),
                                            **kwargs):
            result.events.append(event)
    except Exception as exc:  # noqa: BLE001 - the tests look at it
        result.error = exc
    return result


def run_agent(agent: Any, message: str = "Where is my order A100?", **kwargs: Any) -> RunResult:
    return asyncio.run(run_agent_async(agent, message, **kwargs))
