"""Offline models and builders for the CrewAI tests: real CrewAI, scripted ``BaseLLM`` subclasses.

* :class:`ReactLLM` drives the ReAct text path: its first turn is
  ``Action: <tool>`` / ``Action Input: <json>``, its next turn a
  ``Final Answer`` quoting the tool's observation. Like CrewAI's provider
  classes it reports usage through ``_emit_call_completed_event``.
* :class:`NativeLLM` drives native function calling as CrewAI's OpenAI provider does:
  ``supports_function_calling()`` is true, its first turn returns the OpenAI SDK's tool
  calls (CrewAI's executor runs them), its next turn the answer, each announced by an
  ``LLMCallCompletedEvent`` with usage, finish reason and response id (recorded in ``sent``).
* :class:`SilentNativeLLM` is a user's own function-calling LLM that emits no event.
* :class:`ActionsLLM` (ReAct) makes a scripted sequence of tool calls before answering.
"""

from __future__ import annotations

import json
from typing import Any

from crewai import Agent, Crew, Task
from crewai.events.types.llm_events import LLMCallType
from crewai.flow.flow import Flow, listen, start
from crewai.llms.base_llm import BaseLLM, llm_call_context
from crewai.tools import tool

FULL_USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18}


class ScriptedFailure(RuntimeError):
    """The scripted model's outage (the user's exception in failing runs)."""


def _observation(messages: Any) -> str | None:
    """The last tool observation in a ReAct conversation, or ``None`` on the first turn."""
    if isinstance(messages, str):
        return None
    for m in reversed(messages):
        content = str(m.get("content") or "")
        if m.get("role") == "assistant" and "\nObservation:" in content:
            return content.split("\nObservation:", 1)[1].strip()
    return None


class ReactLLM(BaseLLM):
    """ReAct text path: one ``Action`` for ``tool_name`` with ``tool_args``, then the final answer."""

    llm_type: str = "scripted"
    tool_name: str = "lookup_order"
    tool_args: dict[str, Any] = {"order_id": "A100"}
    usage: dict[str, Any] | None = FULL_USAGE
    fail: bool = False

    def __init__(self, **data: Any) -> None:
        data.setdefault("model", "scripted-react")  # BaseLLM's validator wants it passed in
        super().__init__(**data)

    def reply(self, messages: Any) -> str:
        observation = _observation(messages)
        if observation is None:
            return (f"Thought: I should use {self.tool_name}.\nAction: {self.tool_name}\n"
                    f"Action Input: {json.dumps(self.tool_args)}")
        return f"Thought: I now know the final answer\nFinal Answer: {observation}"

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> Any:
        with llm_call_context():
            self._emit_call_started_event(messages=messages, tools=tools, from_task=from_task, from_agent=from_agent)
            if self.fail:
                raise ScriptedFailure("the scripted model is down")
            text = self.reply(messages)
            if self._effective_stream():
                for word in text.split(" "):
                    self._emit_stream_chunk_event(chunk=word + " ", from_task=from_task, from_agent=from_agent)
            self._emit_call_completed_event(response=text, call_type=LLMCallType.LLM_CALL, from_task=from_task,
                                            from_agent=from_agent, messages=messages, usage=self.usage,
                                            finish_reason="stop", response_id="resp-1")
            return text

    async def acall(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
                    from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> Any:
        return self.call(messages, tools, callbacks, available_functions, from_task, from_agent, response_model)

    def supports_function_calling(self) -> bool:
        return False

    def get_context_window_size(self) -> int:
        return 10**9  # X-6 sends 5 MB prompts; CrewAI would otherwise summarise them with this model

    def supports_stop_words(self) -> bool:
        return True


class ActionsLLM(ReactLLM):
    """ReAct text path: one ``Action`` per ``(tool, action input)`` of ``actions`` in turn (the input is
    written as given: a dict as JSON, a string as is), then a ``Final Answer`` quoting the last observation."""

    actions: list[tuple[str, Any]] = []

    def reply(self, messages: Any) -> str:
        done = 0 if isinstance(messages, str) else sum(
            1 for m in messages if m.get("role") == "assistant" and "\nObservation:" in str(m.get("content") or ""))
        if done < len(self.actions):
            name, args = self.actions[done]
            text = args if isinstance(args, str) else json.dumps(args)
            return f"Thought: I should use {name}.\nAction: {name}\nAction Input: {text}"
        return f"Thought: I now know the final answer\nFinal Answer: {_observation(messages)}"


# OpenAI's finish reasons as OTel GenAI names them (gen_ai.response.finish_reasons, a message's finish_reason)
GENAI_FINISH = {"tool_calls": "tool_call", "stop": "stop"}
NATIVE_TURNS = ({"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18},
                {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35, "cached_prompt_tokens": 8})


def _function_tool_call(call_id: str, name: str, arguments: str) -> Any:
    """One tool call as the OpenAI SDK parses it (what CrewAI's OpenAI provider returns from ``call``)."""
    try:
        from openai.types.chat import ChatCompletionMessageFunctionToolCall as ToolCall
    except ImportError:  # openai < 1.99: one tool-call class
        from openai.types.chat import ChatCompletionMessageToolCall as ToolCall
    return ToolCall(id=call_id, type="function", function={"name": name, "arguments": arguments})


class NativeLLM(BaseLLM):
    """Native function calling, as CrewAI's OpenAI provider does it (``crewai.llms.providers.openai``,
    Chat Completions): ``n_calls`` tool calls on the first turn, returned as the OpenAI SDK's tool-call objects
    after an ``LLMCallCompletedEvent`` of type ``TOOL_CALL`` with finish reason ``tool_calls``; then the answer,
    after one of type ``LLM_CALL`` with ``stop``. Each completion carries the usage (``NATIVE_TURNS``, turn by
    turn, then the last again) and a response id. ``sent`` records what each call reported, the ground truth
    for the model spans."""

    llm_type: str = "scripted"
    tool_name: str = "lookup_order"
    tool_args: dict[str, Any] = {"order_id": "A100"}
    n_calls: int = 1
    sent: list[dict[str, Any]] = []

    def __init__(self, **data: Any) -> None:
        data.setdefault("model", "scripted-native")
        super().__init__(**data)

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> Any:
        with llm_call_context():
            self._emit_call_started_event(messages=messages, tools=tools, callbacks=callbacks,
                                          available_functions=available_functions, from_task=from_task,
                                          from_agent=from_agent)
            results = [m for m in messages if m.get("role") == "tool"] if not isinstance(messages, str) else []
            sent = {"usage": dict(NATIVE_TURNS[min(len(self.sent), len(NATIVE_TURNS) - 1)]),
                    "response_id": f"chatcmpl-{len(self.sent) + 1}"}
            if tools and not results:
                reply: Any = [_function_tool_call(f"call_{i}", self.tool_name, json.dumps(self.tool_args))
                              for i in range(self.n_calls)]
                sent.update(finish_reason="tool_calls", call_type=LLMCallType.TOOL_CALL)
            else:
                reply = f"Answer: {results[-1]['content'] if results else 'nothing to report'}"
                sent.update(finish_reason="stop", call_type=LLMCallType.LLM_CALL)
            self.sent.append(sent)
            self._emit_call_completed_event(response=reply, from_task=from_task, from_agent=from_agent,
                                            messages=messages, **sent)
            return reply

    def supports_function_calling(self) -> bool:
        return True


class SilentNativeLLM(BaseLLM):
    """A user's own function-calling LLM that calls none of CrewAI's ``_emit_call_*`` helpers: tool calls as
    OpenAI-style dicts on the first turn, then the answer; no event, no usage, no finish reason."""

    llm_type: str = "scripted"

    def __init__(self, **data: Any) -> None:
        data.setdefault("model", "scripted-silent")
        super().__init__(**data)

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> Any:
        results = [m for m in messages if m.get("role") == "tool"] if not isinstance(messages, str) else []
        if tools and not results:
            return [{"id": "call_0", "type": "function",
                     "function": {"name": "lookup_order", "arguments": json.dumps({"order_id": "A100"})}}]
        return f"Answer: {results[-1]['content'] if results else 'nothing to report'}"

    def supports_function_calling(self) -> bool:
        return True


@tool("lookup_order")
def lookup_order(order_id: str) -> str:
    """Look up an order by its id and return its status."""
    return f"Order {order_id}: shipped"


def clerk(llm: BaseLLM | None = None, *, tools: list | None = None, **kw: Any) -> Agent:
    """The order clerk agent (ReAct by default)."""
    kw.setdefault("goal", "Answer order questions")
    kw.setdefault("backstory", "Knows every order.")
    return Agent(role="Order Clerk", llm=llm or ReactLLM(), tools=[lookup_order] if tools is None else tools,
                 max_retry_limit=0, **kw)


def order_task(agent: Agent, **kw: Any) -> Task:
    """The task of looking up order A100."""
    kw.setdefault("description", "What is the status of order A100?")
    kw.setdefault("name", "order_status")
    kw.setdefault("expected_output", "The order's status")
    return Task(agent=agent, **kw)


def one_agent_crew(llm: BaseLLM | None = None, **agent_kw: Any) -> Crew:
    """A crew of one clerk and one task."""
    agent = clerk(llm, **agent_kw)
    return Crew(agents=[agent], tasks=[order_task(agent)])


class ReplyLLM(BaseLLM):
    """Answers every call with ``reply`` (text, or OpenAI-style tool calls) and remembers what it was sent."""

    llm_type: str = "scripted"
    reply: Any = "Final Answer: done"
    seen: list[Any] = []

    def __init__(self, **data: Any) -> None:
        data.setdefault("model", "scripted-reply")
        data.setdefault("seen", [])
        super().__init__(**data)

    def call(self, messages: Any, tools: Any = None, callbacks: Any = None, available_functions: Any = None,
             from_task: Any = None, from_agent: Any = None, response_model: Any = None) -> Any:
        self.seen.append({"messages": messages, "tools": tools})
        return self.reply

    def supports_function_calling(self) -> bool:
        return True

    def supports_multimodal(self) -> bool:
        return True


class OrderFlow(Flow):
    """A flow whose second step kicks off a crew (sync steps run in worker threads; kickoff runs asyncio.run)."""

    @start()
    def receive(self) -> str:
        return "A100"

    @listen(receive)
    def handle(self, order_id: str) -> str:
        return one_agent_crew().kickoff().raw
