"""Offline smolagents fakes: ``Model`` subclasses returning scripted ``ChatMessage``s (field cases' intro).

``ScriptedModel.generate`` pops the next scripted reply; a reply is a string (text,
e.g. a ``<code>…</code>`` block for a ``CodeAgent``) or a list of ``(tool, arguments)``
tool calls. Every reply carries ``token_usage`` unless ``usage=False``.
"""

from __future__ import annotations

import os
from typing import Any, Callable

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from smolagents import ChatMessage, CodeAgent, Model, ToolCallingAgent, tool  # noqa: E402
from smolagents.models import (ChatMessageStreamDelta, ChatMessageToolCall, ChatMessageToolCallFunction,  # noqa: E402
                               ChatMessageToolCallStreamDelta, MessageRole)
from smolagents.monitoring import LogLevel, TokenUsage  # noqa: E402

MODEL_ID = "scripted-1"
ORDERS = {"A100": "shipped", "B200": "processing"}


def tool_calls(*calls: tuple[str, dict]) -> list[ChatMessageToolCall]:
    return [ChatMessageToolCall(function=ChatMessageToolCallFunction(name=name, arguments=args), id=f"call_{i}",
                                type="function") for i, (name, args) in enumerate(calls)]


def reply(script: Any, usage: bool = True, n: int = 0) -> ChatMessage:
    usage_ = TokenUsage(input_tokens=10 + n, output_tokens=5) if usage else None
    if isinstance(script, str):
        return ChatMessage(role=MessageRole.ASSISTANT, content=script, token_usage=usage_)
    return ChatMessage(role=MessageRole.ASSISTANT, content="", tool_calls=tool_calls(*script), token_usage=usage_)


class ScriptedModel(Model):
    """A ``Model`` subclass written in the test: overrides ``generate()``."""

    def __init__(self, script: list[Any] | Callable[[int, list], Any], usage: bool = True, **kwargs: Any):
        super().__init__(model_id=MODEL_ID, **kwargs)
        self.script = script
        self.usage = usage
        self.calls = 0

    def next_script(self, messages: list) -> Any:
        n = self.calls
        self.calls += 1
        if callable(self.script):
            return self.script(n, messages)
        return self.script[min(n, len(self.script) - 1)]

    def generate(self, messages: list, stop_sequences: Any = None, response_format: Any = None,
                 tools_to_call_from: Any = None, **kwargs: Any) -> ChatMessage:
        return reply(self.next_script(messages), self.usage, self.calls)


class SuperCallingModel(ScriptedModel):
    """A subclass whose ``generate()`` calls ``super().generate()``."""

    def generate(self, messages: list, *args: Any, **kwargs: Any) -> ChatMessage:
        return super().generate(messages, *args, **kwargs)


class InheritingModel(SuperCallingModel):
    """A subclass that only inherits ``generate()`` (three levels under ``Model``)."""


class StreamingModel(ScriptedModel):
    """``generate_stream()`` yields deltas: the text word by word, the tool calls, then a usage-only delta."""

    def generate_stream(self, messages: list, stop_sequences: Any = None, response_format: Any = None,
                        tools_to_call_from: Any = None, **kwargs: Any):
        script = self.next_script(messages)
        if isinstance(script, str):
            for word in script.split(" "):
                yield ChatMessageStreamDelta(content=word + " ")
        else:
            yield ChatMessageStreamDelta(content="Calling a tool. ")
            for i, (name, args) in enumerate(script):
                import json
                yield ChatMessageStreamDelta(tool_calls=[ChatMessageToolCallStreamDelta(
                    index=i, id=f"call_{i}", type="function",
                    function=ChatMessageToolCallFunction(name=name, arguments=json.dumps(args)))])
        yield ChatMessageStreamDelta(content="", token_usage=TokenUsage(input_tokens=20, output_tokens=7))


class LookupFailed(Exception):
    """The tool's own error."""


def make_lookup(probe: Callable[[str], None] | None = None, marker: str = "",
                result: Callable[[Any], Any] | None = None) -> Any:
    @tool
    def lookup_order(order_id: str) -> str:
        """Look up an order's status.

        Args:
            order_id: the order id, e.g. A100.
        """
        if probe is not None:
            probe(order_id)
        if order_id == "FAIL":
            raise LookupFailed("order service down")
        found = f"Order {order_id}: {ORDERS.get(order_id, 'unknown')}{marker}"
        return result(found) if result is not None else found

    return lookup_order


def tool_calling_agent(model: Model, tools: list | None = None, **kwargs: Any) -> ToolCallingAgent:
    return ToolCallingAgent(tools=tools if tools is not None else [make_lookup()], model=model,
                            verbosity_level=LogLevel.OFF, **kwargs)


def code_agent(model: Model, tools: list | None = None, **kwargs: Any) -> CodeAgent:
    return CodeAgent(tools=tools if tools is not None else [make_lookup()], model=model,
                     verbosity_level=LogLevel.OFF, **kwargs)


LOOKUP_THEN_ANSWER = [[("lookup_order", {"order_id": "A100"})], [("final_answer", {"answer": "A100 has shipped"})]]
