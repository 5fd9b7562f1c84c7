"""Offline LangChain / LangGraph fakes for the instrumentor's tests.

* :class:`ToolCallingChatModel` — a real ``BaseChatModel`` that decides from the
  conversation alone (no shared script index, so concurrent runs stay apart):
  while the last message is not a tool result it asks for one tool call whose
  argument is the last user text; after a tool result it answers
  ``"It is " + result``. With ``tool=None`` it always answers ``answer``.
  Usage: ``usage_metadata`` complete (11 in, 7 out, 18 total, 3 cache read,
  2 reasoning); ``llm_output["token_usage"]`` partial (completion tokens only),
  absent when streaming. Streams word by word, usage on the last chunk.
* :class:`ScriptedChatModel` — a real ``BaseChatModel`` that answers turn ``n`` of a
  conversation (``n`` = the assistant messages already in it) with ``replies[n]``
  (the last one repeats), as a provider integration would return it (content
  blocks, ``tool_calls``, ``response_metadata``); streams each reply as one content
  chunk plus a last chunk with its tool-call chunks, as Anthropic's integration does.
* :func:`get_weather` — a ``@tool`` returning ``"sunny in <city>"``.
* :class:`FakeRetriever` — a ``BaseRetriever`` returning fixed documents.
* :func:`build_agent_graph` — a hand-built LangGraph agent loop
  (``agent`` → ``tools`` (ToolNode) → ``agent`` → END, routed by a conditional edge).
* :func:`build_lean_agent_graph` — the same loop at the lowest cost (routing by
  ``Command``, tools called in the node itself, no thread pool): the contract
  kit's scenario, run many times by X-3.
"""

from __future__ import annotations

import json
from typing import Any, AsyncIterator, Iterator, Sequence

from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun
from langchain_core.documents import Document
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage, ToolCallChunk
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.retrievers import BaseRetriever
from langchain_core.runnables import RunnableConfig
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.graph import END, START, MessagesState, StateGraph
from langgraph.prebuilt import ToolNode
from langgraph.types import Command
from pydantic import Field

USAGE = {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18,
         "input_token_details": {"cache_read": 3}, "output_token_details": {"reasoning": 2}}
PARTIAL_LLM_OUTPUT_USAGE = {"completion_tokens": 7}


def _text(message: BaseMessage) -> str:
    return message.content if isinstance(message.content, str) else json.dumps(message.content)


class ToolCallingChatModel(BaseChatModel):
    """See the module docstring."""

    model_name: str = "fake-model-1"
    temperature: float = 0.0
    tool: str | None = "get_weather"
    argument: str = "city"
    answer: str = "Hello there, friend."
    usage: dict | None = Field(default_factory=lambda: json.loads(json.dumps(USAGE)))
    llm_output_usage: dict | None = Field(default_factory=lambda: dict(PARTIAL_LLM_OUTPUT_USAGE))

    @property
    def _llm_type(self) -> str:
        return "tool-calling-fake"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_name": self.model_name, "temperature": self.temperature}

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "fakeprovider"
        params["ls_model_name"] = kwargs.get("model", self.model_name)
        params["ls_temperature"] = self.temperature
        return params

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def reply(self, messages: list[BaseMessage]) -> AIMessage:
        """The next assistant message for ``messages`` (pure function of the conversation)."""
        last = messages[-1] if messages else None
        meta = {"model_name": self.model_name, "model_provider": "fakeprovider"}
        if last is not None and last.type == "tool":
            msg = AIMessage(content=f"It is {_text(last)}")
        elif self.tool:
            user = next((_text(m) for m in reversed(messages) if m.type == "human"), "")
            msg = AIMessage(content="", tool_calls=[{"name": self.tool, "args": {self.argument: user},
                                                     "id": "call_1", "type": "tool_call"}])
        else:
            msg = AIMessage(content=self.answer)
        meta["finish_reason"] = "tool_calls" if msg.tool_calls else "stop"
        msg.response_metadata = meta
        msg.id = f"resp-{len(messages)}"
        if self.usage is not None:
            msg.usage_metadata = json.loads(json.dumps(self.usage))
        return msg

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        llm_output: dict[str, Any] = {"model_name": self.model_name}
        if self.llm_output_usage is not None:
            llm_output["token_usage"] = dict(self.llm_output_usage)
        return ChatResult(generations=[ChatGeneration(message=self.reply(messages))], llm_output=llm_output)

    def _chunks(self, msg: AIMessage) -> Iterator[AIMessageChunk]:
        words = _text(msg).split(" ") if _text(msg) else []
        for i, word in enumerate(words):
            yield AIMessageChunk(content=word if i == 0 else " " + word, id=msg.id)
        calls = [ToolCallChunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=i)
                 for i, c in enumerate(msg.tool_calls)]
        yield AIMessageChunk(content="", id=msg.id, tool_call_chunks=calls, usage_metadata=msg.usage_metadata,
                             response_metadata=msg.response_metadata, chunk_position="last")

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        for chunk in self._chunks(self.reply(messages)):
            yield ChatGenerationChunk(message=chunk)

    async def _astream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                       run_manager: AsyncCallbackManagerForLLMRun | None = None,
                       **kwargs: Any) -> AsyncIterator[ChatGenerationChunk]:
        for chunk in self._chunks(self.reply(messages)):
            yield ChatGenerationChunk(message=chunk)


class ScriptedChatModel(BaseChatModel):
    """See the module docstring."""

    model_name: str = "scripted-model"
    replies: list[AIMessage] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted-fake"

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = "anthropic"
        params["ls_model_name"] = self.model_name
        return params

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def reply(self, messages: list[BaseMessage]) -> AIMessage:
        turn = sum(1 for m in messages if m.type == "ai")
        return self.replies[min(turn, len(self.replies) - 1)].model_copy(deep=True)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> ChatResult:
        return ChatResult(generations=[ChatGeneration(message=self.reply(messages))])

    def _stream(self, messages: list[BaseMessage], stop: list[str] | None = None,
                run_manager: CallbackManagerForLLMRun | None = None, **kwargs: Any) -> Iterator[ChatGenerationChunk]:
        msg = self.reply(messages)
        yield ChatGenerationChunk(message=AIMessageChunk(content=msg.content, id=msg.id))
        calls = [ToolCallChunk(name=c["name"], args=json.dumps(c["args"]), id=c["id"], index=i)
                 for i, c in enumerate(msg.tool_calls)]
        yield ChatGenerationChunk(message=AIMessageChunk(
            content=[], id=msg.id, tool_call_chunks=calls, response_metadata=msg.response_metadata,
            additional_kwargs=msg.additional_kwargs, chunk_position="last"))


@tool
def get_weather(city: str) -> str:
    """Get the weather for a city."""
    return f"sunny in {city}"


class FakeRetriever(BaseRetriever):
    """Returns two fixed documents for any query."""

    def _get_relevant_documents(self, query: str, *, run_manager: Any = None) -> list[Document]:
        return [Document(page_content=f"Paris is in France ({query})", metadata={"source": "atlas", "score": 0.9},
                         id="doc-1"),
                Document(page_content="Lyon is in France", metadata={"source": "atlas"}, id="doc-2")]


def build_agent_graph(model: BaseChatModel, tools: Sequence[Any], *, name: str | None = None,
                      handle_tool_errors: Any = False, checkpointer: Any = None) -> Any:
    """A minimal LangGraph agent: ``agent`` (the model with tools bound) ⇄ ``tools`` (a ToolNode) until
    the model answers without tool calls."""
    bound = model.bind_tools(list(tools))

    def agent(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [bound.invoke(state["messages"], config)]}

    def route(state: MessagesState) -> str:
        return "tools" if getattr(state["messages"][-1], "tool_calls", None) else END

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent)
    graph.add_node("tools", ToolNode(list(tools), handle_tool_errors=handle_tool_errors))
    graph.add_edge(START, "agent")
    graph.add_conditional_edges("agent", route, ["tools", END])
    graph.add_edge("tools", "agent")
    return graph.compile(name=name, checkpointer=checkpointer)


def build_lean_agent_graph(model: BaseChatModel, tools: Sequence[Any], *, name: str) -> Any:
    """``agent`` ⇄ ``tools`` until the model answers; see the module docstring. The nodes are
    sync functions (LangGraph runs them in its executor under ``ainvoke``)."""
    bound = model.bind_tools(list(tools))
    by_name = {t.name: t for t in tools}

    def agent(state: MessagesState, config: RunnableConfig) -> Command:
        reply = bound.invoke(state["messages"], config)
        return Command(goto="tools" if reply.tool_calls else END, update={"messages": [reply]})

    def run_tools(state: MessagesState, config: RunnableConfig) -> dict[str, Any]:
        return {"messages": [by_name[c["name"]].invoke(c, config) for c in state["messages"][-1].tool_calls]}

    graph = StateGraph(MessagesState)
    graph.add_node("agent", agent, destinations=("tools", END))
    graph.add_node("tools", run_tools)
    graph.add_edge(START, "agent")
    graph.add_edge("tools", "agent")
    return graph.compile(name=name)

