"""Offline LlamaIndex building blocks for the tests: scripted models, a tiny index, agents.

Everything is real ``llama-index-core`` (``FunctionAgent``, ``AgentWorkflow``,
``FunctionTool``, ``VectorStoreIndex``) over the core's own fakes
(``MockLLM``, ``MockFunctionCallingLLM``, ``MockEmbedding``); nothing reads the
global ``Settings`` (which would resolve to OpenAI).
"""

from __future__ import annotations

import itertools
from typing import Any, Callable, Sequence

from llama_index.core import Document, VectorStoreIndex
from llama_index.core.agent.workflow import AgentWorkflow, FunctionAgent
from llama_index.core.base.llms.types import ChatMessage, MessageRole, ToolCallBlock
from llama_index.core.embeddings import MockEmbedding
from llama_index.core.llms import MockLLM
from llama_index.core.llms.mock import MockFunctionCallingLLM
from llama_index.core.memory import ChatMemoryBuffer
from llama_index.core.tools import FunctionTool

EMBED_DIM = 8


def tool_call(name: str, arguments: dict[str, Any], call_id: str = "call-1") -> ChatMessage:
    """An assistant message asking for one tool call."""
    return ChatMessage(role=MessageRole.ASSISTANT,
                       blocks=[ToolCallBlock(tool_call_id=call_id, tool_name=name, tool_kwargs=arguments)])


def scripted_llm(*turns: Any) -> MockFunctionCallingLLM:
    """A function-calling mock that plays ``turns`` in order (the last one repeats).

    A turn is a ``ChatMessage`` (returned as is), a ``str`` (a plain answer), an
    exception (raised by the model call) or a callable ``(messages) -> turn``.
    """
    counter = itertools.count()

    def respond(messages: Sequence[ChatMessage], **_: Any) -> ChatMessage:
        turn = turns[min(next(counter), len(turns) - 1)]
        if callable(turn) and not isinstance(turn, (ChatMessage, BaseException)):
            turn = turn(messages)
        if isinstance(turn, BaseException):
            raise turn
        if isinstance(turn, str):
            return ChatMessage(role=MessageRole.ASSISTANT, content=turn)
        return turn

    return MockFunctionCallingLLM(response_generator=respond)


def last_tool_result(messages: Sequence[ChatMessage]) -> str:
    """The content of the last tool message (for answers that quote the tool)."""
    return next((m.content or "" for m in reversed(messages) if m.role == MessageRole.TOOL), "")


def cheap_memory() -> ChatMemoryBuffer:
    """An in-process chat memory that does not tokenize (the default memory writes to
    SQLite and runs tiktoken over every message: seconds for a 5 MB message)."""
    return ChatMemoryBuffer.from_defaults(token_limit=10**9, tokenizer_fn=lambda _text: [])


def add(a: int, b: int) -> int:
    """Add two integers."""
    return a + b


def calculator(llm: MockFunctionCallingLLM | None = None, **kwargs: Any) -> FunctionAgent:
    """A ``FunctionAgent`` named ``calculator`` that calls ``add(2, 3)`` and answers."""
    return FunctionAgent(
        name="calculator", description="Adds numbers", system_prompt="You are a calculator.",
        tools=[FunctionTool.from_defaults(fn=add)],
        llm=llm or scripted_llm(tool_call("add", {"a": 2, "b": 3}), "The answer is 5."),
        **kwargs,
    )


def handoff_workflow() -> AgentWorkflow:
    """Two agents: ``triage`` hands off to ``calculator``, which calls its tool and answers."""
    triage = FunctionAgent(
        name="triage", description="Routes requests", system_prompt="Route math to the calculator.",
        tools=[], can_handoff_to=["calculator"],
        llm=scripted_llm(tool_call("handoff", {"to_agent": "calculator", "reason": "math"}, "call-h"), "done"),
    )
    return AgentWorkflow(agents=[triage, calculator()], root_agent="triage")


def index(texts: Sequence[str] = ("Paris is the capital of France.", "Berlin is the capital of Germany.",
                                  "Madrid is the capital of Spain.")) -> VectorStoreIndex:
    """A vector index over ``texts`` embedded with ``MockEmbedding``."""
    return VectorStoreIndex.from_documents([Document(text=t) for t in texts],
                                           embed_model=MockEmbedding(embed_dim=EMBED_DIM))


def query_engine(idx: VectorStoreIndex, *, streaming: bool = False, llm: Any = None) -> Any:
    """A query engine over ``idx`` answering with ``MockLLM`` (8 tokens)."""
    return idx.as_query_engine(llm=llm or MockLLM(max_tokens=8), streaming=streaming, similarity_top_k=2)


class FailingLLM(MockLLM):
    """A ``MockLLM`` whose completions raise ``error``."""

    error: Any = None

    def __init__(self, error: BaseException):
        super().__init__(max_tokens=8)
        self.error = error

    def complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise self.error

    def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
        raise self.error


def run_sync(coro_fn: Callable[[], Any]) -> Any:
    """Run a coroutine function in a fresh event loop (workflow runs need a running loop)."""
    import asyncio

    return asyncio.run(coro_fn())
