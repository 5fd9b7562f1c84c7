"""A scripted Agno model for the offline tests: a subclass of ``agno.models.base.Model`` defined here
(outside ``agno.models``), driven by a function of the conversation, with usage metrics and no API key.

``ScriptedModel(script=fn)``: ``fn(messages)`` returns the next :class:`Reply` (text, tool calls, or
reasoning). ``invoke``/``ainvoke`` return one ``ModelResponse`` with ``response_usage``;
``invoke_stream``/``ainvoke_stream`` yield the words one by one, then a chunk that carries only usage.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Callable, Iterator, Sequence

from agno.metrics import MessageMetrics
from agno.models.base import Model
from agno.models.response import ModelResponse


@dataclass
class Reply:
    """What the scripted model says next: ``text``, or ``tool_calls`` as ``(name, arguments)`` pairs."""

    text: str | None = None
    tool_calls: Sequence[tuple[str, dict]] = ()
    reasoning: str | None = None
    error: BaseException | None = None


def words(*texts: Any) -> int:
    """Whitespace-separated words: the fake's token count."""
    return max(1, sum(len(str(t).split()) for t in texts if t))


def last_user_text(messages: Sequence[Any]) -> str:
    """The content of the last user message."""
    for m in reversed(messages):
        if m.role == "user":
            return str(m.content)
    return ""


def tool_results(messages: Sequence[Any]) -> list[Any]:
    """The tool-result messages so far."""
    return [m for m in messages if m.role == "tool"]


@dataclass
class ScriptedModel(Model):
    """An Agno ``Model`` whose replies come from ``script(messages)``; ``id`` defaults to ``scripted-1``."""

    id: str = "scripted-1"
    name: str = "Scripted"
    provider: str = "scripted"
    script: Callable[[list], Reply] = field(default=lambda messages: Reply(text="ok"))
    requests: int = 0

    def _reply(self, messages: list) -> Reply:
        self.requests += 1
        reply = self.script(list(messages))
        if reply.error is not None:
            raise reply.error
        return reply

    def _usage(self, messages: list, reply: Reply) -> MessageMetrics:
        in_tokens = words(*(m.content for m in messages))
        out_tokens = words(reply.text, *(json.dumps(a) for _, a in reply.tool_calls))
        return MessageMetrics(input_tokens=in_tokens, output_tokens=out_tokens, total_tokens=in_tokens + out_tokens)

    def _calls(self, reply: Reply) -> list[dict]:
        return [{"id": f"call_{self.requests}_{i}", "type": "function",
                 "function": {"name": name, "arguments": json.dumps(args)}}
                for i, (name, args) in enumerate(reply.tool_calls)]

    def invoke(self, messages: list, **kwargs: Any) -> ModelResponse:
        reply = self._reply(messages)
        return ModelResponse(role="assistant", content=reply.text, tool_calls=self._calls(reply),
                             reasoning_content=reply.reasoning, response_usage=self._usage(messages, reply))

    async def ainvoke(self, messages: list, **kwargs: Any) -> ModelResponse:
        return self.invoke(messages, **kwargs)

    def invoke_stream(self, messages: list, **kwargs: Any) -> Iterator[ModelResponse]:
        reply = self._reply(messages)
        if reply.reasoning:
            yield ModelResponse(role="assistant", reasoning_content=reply.reasoning)
        if reply.tool_calls:
            yield ModelResponse(role="assistant", tool_calls=self._calls(reply))
        if reply.text:
            parts = reply.text.split(" ")
            for i, word in enumerate(parts):
                yield ModelResponse(role="assistant", content=word if i == 0 else " " + word)
        yield ModelResponse(response_usage=self._usage(messages, reply))

    async def ainvoke_stream(self, messages: list, **kwargs: Any) -> AsyncIterator[ModelResponse]:
        for chunk in self.invoke_stream(messages, **kwargs):
            yield chunk

    def _parse_provider_response(self, response: Any, **kwargs: Any) -> ModelResponse:
        return response

    def _parse_provider_response_delta(self, response: Any) -> ModelResponse:
        return response


def tool_then_answer(tool: str, arguments: dict, answer: Callable[[str], str] | None = None) -> Callable[[list], Reply]:
    """A script: call ``tool`` once, then answer with the tool's result (or ``answer(result)``)."""

    def script(messages: list) -> Reply:
        results = tool_results(messages)
        if not results:
            return Reply(tool_calls=[(tool, arguments)])
        text = str(results[-1].content)
        return Reply(text=answer(text) if answer else f"Found: {text}")

    return script


@dataclass
class ScriptedReasoner(ScriptedModel):
    """A :class:`ScriptedModel` that Agno takes for a native reasoning model (a "VertexAI" provider with
    ``thinking`` set: Agno's own test of a reasoning model), for ``Agent(reasoning_model=...)``; no network."""

    id: str = "scripted-reasoner"
    provider: str = "VertexAI"
    thinking: dict = field(default_factory=lambda: {"type": "enabled", "budget_tokens": 1024})
