"""The cross-cutting cases X-1 … X-7 (``tests/contract/kit.py``) for a hand-written agent loop on each
provider client: ``@otel_agents.agent`` and ``@otel_agents.tool`` give the agent and tool spans, the client
instrumentor the model spans, over the real client and a mock transport."""

from __future__ import annotations

import json
from typing import Any

import httpx
import httpx2
import pytest

import otel_agents
from otel_agents import manual
from otel_agents.instrumentors.anthropic import AnthropicInstrumentor, _messages
from otel_agents.instrumentors.openai import OpenAIInstrumentor, _chat
from tests.contract.kit import ContractSuite, Scenario
from tests.spans import SnapshotExporter, SpanSnapshot

from .fakes import LOOKUP_TOOL, anthropic_client, anthropic_message, openai_client, sse


class LookupFailed(Exception):
    pass


def _anthropic_brain(request: Any) -> Any:
    """Calls lookup_order (with the marker from the question) once, then answers with the tool's result."""
    body = json.loads(request.content)
    last = body["messages"][-1]
    if isinstance(last["content"], list) and last["content"][0].get("type") == "tool_result":
        text = f"Done: {last['content'][0]['content']}"
        message = anthropic_message([{"type": "text", "text": text}], usage={"input_tokens": 30, "output_tokens": 9})
        if body.get("stream"):
            start = anthropic_message([], stop_reason=None, usage={"input_tokens": 30, "output_tokens": 1})  # type: ignore[arg-type]
            return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=sse([
                ("message_start", {"type": "message_start", "message": start}),
                ("content_block_start", {"type": "content_block_start", "index": 0,
                                         "content_block": {"type": "text", "text": ""}}),
                *[("content_block_delta", {"type": "content_block_delta", "index": 0,
                                           "delta": {"type": "text_delta", "text": w + " "}}) for w in text.split()],
                ("content_block_stop", {"type": "content_block_stop", "index": 0}),
                ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
                                   "usage": {"output_tokens": 9}}),
                ("message_stop", {"type": "message_stop"})]))
        return httpx2.Response(200, json=message)
    question = last["content"]
    call = {"type": "tool_use", "id": "toolu_1", "name": "lookup_order",
            "input": {"order_id": "A1", "note": question.split("?", 1)[-1].strip(), "tag": body["metadata"]["user_id"]}}
    return httpx2.Response(200, json=anthropic_message([call], stop_reason="tool_use"))


def _openai_brain(request: Any) -> Any:
    body = json.loads(request.content)
    last = body["messages"][-1]
    if last["role"] == "tool":
        text = f"Done: {last['content']}"
        return httpx.Response(200, json={"id": "c2", "object": "chat.completion", "created": 1, "model": "gpt-4o",
                                         "choices": [{"index": 0, "finish_reason": "stop", "message": {
                                             "role": "assistant", "content": text}}],
                                         "usage": {"prompt_tokens": 30, "completion_tokens": 9, "total_tokens": 39}})
    args = {"order_id": "A1", "note": last["content"].split("?", 1)[-1].strip(), "tag": body["user"]}
    return httpx.Response(200, json={"id": "c1", "object": "chat.completion", "created": 1, "model": "gpt-4o",
                                     "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                                         "role": "assistant", "content": None, "tool_calls": [{
                                             "id": "call_1", "type": "function", "function": {
                                                 "name": "lookup_order", "arguments": json.dumps(args)}}]}}],
                                     "usage": {"prompt_tokens": 20, "completion_tokens": 5, "total_tokens": 25}})


class _LoopScenario(Scenario):
    """A hand-written loop: model → ``lookup_order`` (probes, puts the marker in its result) → model answers."""


    def __init__(self) -> None:
        super().__init__()
        scenario = self

        @otel_agents.tool
        def lookup_order(order_id: str, note: str, tag: str, fail: bool = False) -> str:
            scenario.probe(tag)
            if fail:
                raise LookupFailed(f"lookup failed {note}")
            return scenario.result(json.dumps({"order_id": order_id, "status": "shipped", "note": note}))

        self.lookup_order = lookup_order

    def run(self, marker: str = "", tag: str = "") -> Any:
        return self.agent(f"Where is order A1? {marker}", tag)

    async def arun(self, marker: str = "", tag: str = "") -> Any:
        return await self.aagent(f"Where is order A1? {marker}", tag)

    def run_failing(self) -> None:
        from tests.contract.kit import MARKER
        self.agent(f"Where is order A1? {MARKER}", "", fail=True)


class AnthropicLoopScenario(_LoopScenario):
    instrumentor_cls = AnthropicInstrumentor
    streams_model = True  # its streaming run streams the model

    def __init__(self) -> None:
        super().__init__()
        client = anthropic_client(_anthropic_brain)
        aclient = anthropic_client(_anthropic_brain, aio=True)
        lookup = self.lookup_order

        def request(messages: list, tag: str) -> dict:
            return dict(model="claude-haiku-4-5", max_tokens=128, tools=[LOOKUP_TOOL], messages=messages,
                        metadata={"user_id": tag or "t"})

        def follow_up(messages: list, reply: Any, fail: bool, tag: str) -> list:
            call = reply.content[0]
            result = lookup(**call.input, fail=fail) if fail else lookup(**call.input)
            return messages + [{"role": "assistant", "content": [call.model_dump()]},
                               {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id,
                                                             "content": result}]}]

        @otel_agents.agent(name="support")
        def agent(question: str, tag: str, fail: bool = False) -> str:
            messages = [{"role": "user", "content": question}]
            reply = client.messages.create(**request(messages, tag))
            reply = client.messages.create(**request(follow_up(messages, reply, fail, tag), tag))
            return reply.content[0].text

        @otel_agents.agent(name="support")
        async def aagent(question: str, tag: str) -> str:
            messages = [{"role": "user", "content": question}]
            reply = await aclient.messages.create(**request(messages, tag))
            reply = await aclient.messages.create(**request(follow_up(messages, reply, False, tag), tag))
            return reply.content[0].text

        @otel_agents.agent(name="support")
        def streaming(question: str, consume: bool) -> str:
            messages = [{"role": "user", "content": question}]
            reply = client.messages.create(**request(messages, "s"))
            stream = client.messages.create(stream=True, **request(follow_up(messages, reply, False, "s"), "s"))
            if consume:
                return "".join(e.delta.text for e in stream if e.type == "content_block_delta")
            next(iter(stream))
            return "abandoned"

        self.agent, self.aagent, self._streaming = agent, aagent, streaming

    def run_stream(self, consume: bool) -> None:
        self._streaming("Where is order A1?", consume)

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(usage: Any) -> Any:
            raise AttributeError("Usage has no attribute 'input_tokens'")
        monkeypatch.setattr(_messages, "usage_of", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        import anthropic._base_client
        return anthropic._base_client.SyncAPIClient, "request"


class OpenAILoopScenario(_LoopScenario):
    instrumentor_cls = OpenAIInstrumentor
    streams = False  # streaming through this client is covered in test_openai.py

    def __init__(self) -> None:
        super().__init__()
        client = openai_client(_openai_brain)
        aclient = openai_client(_openai_brain, aio=True)
        lookup = self.lookup_order

        def follow_up(messages: list, reply: Any, fail: bool) -> list:
            call = reply.choices[0].message.tool_calls[0]
            args = json.loads(call.function.arguments)
            result = lookup(**args, fail=fail) if fail else lookup(**args)
            return messages + [reply.choices[0].message.model_dump(exclude_none=True),
                               {"role": "tool", "tool_call_id": call.id, "content": result}]

        @otel_agents.agent(name="support")
        def agent(question: str, tag: str, fail: bool = False) -> str:
            messages = [{"role": "user", "content": question}]
            reply = client.chat.completions.create(model="gpt-4o", messages=messages, user=tag or "t")
            reply = client.chat.completions.create(model="gpt-4o", messages=follow_up(messages, reply, fail),
                                                   user=tag or "t")
            return reply.choices[0].message.content

        @otel_agents.agent(name="support")
        async def aagent(question: str, tag: str) -> str:
            messages = [{"role": "user", "content": question}]
            reply = await aclient.chat.completions.create(model="gpt-4o", messages=messages, user=tag or "t")
            reply = await aclient.chat.completions.create(model="gpt-4o", messages=follow_up(messages, reply, False),
                                                          user=tag or "t")
            return reply.choices[0].message.content

        self.agent, self.aagent = agent, aagent

    def break_extractor(self, monkeypatch: pytest.MonkeyPatch) -> None:
        def broken(usage: Any) -> Any:
            raise AttributeError("CompletionUsage has no attribute 'prompt_tokens'")
        monkeypatch.setattr(_chat, "usage_of", broken)

    def foreign_patch_target(self) -> tuple[Any, str]:
        import openai._base_client
        return openai._base_client.SyncAPIClient, "request"


class _ClientContract(ContractSuite):
    reinstrumented_kinds = ("model",)  # the decorators' agent and tool spans go where set_providers() says (below)

    @pytest.fixture(autouse=True)
    def _decorators_to_test_provider(self, provider: Any) -> Any:
        manual.set_providers(provider)
        yield
        manual.set_providers()

    def test_x4_uninstrument_only_ours(self, scenario: Scenario, provider: Any, exporter: SnapshotExporter) -> None:
        """X-4 for a client: instrument twice = once; after uninstrument() no model span (the decorators' agent
        and tool spans stay: they are the user's), and a wrapper added after ours keeps working."""
        import wrapt

        owner, attr = scenario.foreign_patch_target()
        original = owner.__dict__[attr]  # put back at the end: no proxy of ours left under the foreign one
        inst = scenario.instrumentor_cls()
        inst.instrument(tracer_provider=provider)
        inst.instrument(tracer_provider=provider)
        scenario.run()
        assert [s.semantic_kind for s in exporter.semantic()].count("model") == 2
        calls: list[int] = []

        def foreign(wrapped: Any, instance: Any, args: Any, kwargs: Any) -> Any:
            calls.append(1)
            return wrapped(*args, **kwargs)

        wrapt.wrap_function_wrapper(owner, attr, foreign)
        try:
            inst.uninstrument()
            exporter.clear()
            scenario.run()
            assert exporter.semantic("model") == [], "model spans after uninstrument()"
            assert calls, "the other instrumentation's wrapper stopped working"
        finally:
            setattr(owner, attr, original)

    def test_x5_users_exception_passes_unchanged(self, scenario: Scenario, instrumented: Any) -> None:
        """X-5 corollary: the tool's exception reaches the caller unchanged."""
        with pytest.raises(LookupFailed):
            scenario.run_failing()


def _check_loop(spans: list[SpanSnapshot]) -> None:
    kinds = [s.semantic_kind for s in spans]
    assert kinds.count("agent") == 1 and kinds.count("model") == 2 and kinds.count("tool") == 1, kinds
    agent = next(s for s in spans if s.semantic_kind == "agent")
    assert all(s.parent_id == agent.span_id for s in spans if s.semantic_kind in ("model", "tool"))


AnthropicLoopScenario.check_run = lambda self, spans: _check_loop(spans)  # type: ignore[method-assign]
OpenAILoopScenario.check_run = lambda self, spans: _check_loop(spans)  # type: ignore[method-assign]


class TestAnthropicLoopContract(_ClientContract):
    scenario_cls = AnthropicLoopScenario


class TestOpenAILoopContract(_ClientContract):
    scenario_cls = OpenAILoopScenario
