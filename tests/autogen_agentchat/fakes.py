"""Fake models for the AutoGen tests: ``ReplayChatCompletionClient`` scripts, and a ``ChatCompletionClient``
subclass of our own (cases file: "Some cases use a small ChatCompletionClient subclass instead")."""

from __future__ import annotations

import asyncio
import json
from typing import Any, AsyncGenerator, Callable, Mapping, Sequence

from autogen_core import FunctionCall
from autogen_core.models import ChatCompletionClient, CreateResult, ModelInfo, RequestUsage
from autogen_ext.models.replay import ReplayChatCompletionClient

INFO: ModelInfo = {"vision": False, "function_calling": True, "json_output": False, "family": "scripted-1",
                   "structured_output": False}
"""Declares function calling (the agent refuses tools otherwise); the family is the model name we record."""


def call(name: str, arguments: dict, call_id: str = "call-1", usage: tuple[int, int] = (11, 3)) -> CreateResult:
    """A model result asking for one tool call."""
    return calls([(name, arguments, call_id)], usage)


def calls(items: Sequence[tuple[str, dict, str]], usage: tuple[int, int] = (11, 3)) -> CreateResult:
    """A model result asking for several tool calls at once (parallel tool calls)."""
    return CreateResult(finish_reason="function_calls", cached=False, usage=RequestUsage(*usage),
                        content=[FunctionCall(id=i, name=n, arguments=json.dumps(a)) for n, a, i in items])


def text(value: str, usage: tuple[int, int] = (17, 5)) -> CreateResult:
    return CreateResult(finish_reason="stop", content=value, usage=RequestUsage(*usage), cached=False)


def replay(*results: CreateResult | str) -> ReplayChatCompletionClient:
    return ReplayChatCompletionClient(list(results), model_info=INFO)


Script = Callable[[Sequence[Any]], CreateResult]


class ScriptedClient(ChatCompletionClient):
    """A ``ChatCompletionClient`` written here: ``script(messages)`` gives each result. Its stream yields
    the answer word by word, then the result; ``stream_usage=False`` makes it report ``RequestUsage(0, 0)``,
    as a provider stream without a usage chunk does, ``cut=True`` ends it after the words, without the result
    (a stream cut short). ``delay`` (s) before each answer."""

    model = "scripted-client-1"

    def __init__(self, script: Script, *, stream_usage: bool = True, delay: float = 0.0,
                 error: BaseException | None = None, cut: bool = False):
        self.script, self.stream_usage, self.delay, self.error, self.cut = script, stream_usage, delay, error, cut
        self.calls = 0

    async def create(self, messages: Sequence[Any], *, tools: Sequence[Any] = [], tool_choice: Any = "auto",
                     json_output: Any = None, extra_create_args: Mapping[str, Any] = {},
                     cancellation_token: Any = None) -> CreateResult:
        self.calls += 1
        if self.delay:  # a slow request, cancellable as AutoGen's clients are (they link their future to the token)
            wait = asyncio.ensure_future(asyncio.sleep(self.delay))
            if cancellation_token is not None:
                cancellation_token.link_future(wait)
            await wait
        if self.error is not None:
            raise self.error
        return self.script(messages)

    async def create_stream(self, messages: Sequence[Any], *, tools: Sequence[Any] = [], tool_choice: Any = "auto",
                            json_output: Any = None, extra_create_args: Mapping[str, Any] = {},
                            cancellation_token: Any = None) -> AsyncGenerator[str | CreateResult, None]:
        self.calls += 1
        if self.delay:  # before the first chunk
            await asyncio.sleep(self.delay)
        result = self.script(messages)
        if isinstance(result.content, str):
            for word in result.content.split(" "):
                yield word + " "
            if not self.stream_usage:
                result = CreateResult(finish_reason=result.finish_reason, content=result.content,
                                      usage=RequestUsage(0, 0), cached=False)
        if not self.cut:
            yield result

    async def close(self) -> None:
        pass

    def actual_usage(self) -> RequestUsage:
        return RequestUsage(0, 0)

    def total_usage(self) -> RequestUsage:
        return RequestUsage(0, 0)

    def count_tokens(self, messages: Sequence[Any], *, tools: Sequence[Any] = []) -> int:
        return 0

    def remaining_tokens(self, messages: Sequence[Any], *, tools: Sequence[Any] = []) -> int:
        return 1000

    @property
    def capabilities(self) -> Any:  # deprecated by AutoGen, still abstract
        return INFO

    @property
    def model_info(self) -> ModelInfo:
        return INFO


def tool_then_answer(name: str, arguments: dict, answer: str = "Your order shipped.") -> Script:
    """Ask for ``name`` until a tool result is in the messages, then answer ``answer`` + the result."""

    def script(messages: Sequence[Any]) -> CreateResult:
        results = [r for m in messages if type(m).__name__ == "FunctionExecutionResultMessage" for r in m.content]
        if not results:
            return call(name, arguments)
        return text(f"{answer} ({results[-1].content})")

    return script


def lookup_order(order_id: str) -> str:
    """Look up an order by its id."""
    return f"order {order_id}: shipped"
