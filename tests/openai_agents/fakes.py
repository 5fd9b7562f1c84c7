"""A scripted Responses API behind ``httpx.MockTransport``: the real ``OpenAIResponsesModel`` over an
``AsyncOpenAI`` client, no network, no key.

Each agent's requests are answered from its own script, picked by the request's ``instructions``
(the agent's instructions; the ``default`` script otherwise). A step is one response:
:func:`say` (a text answer), :func:`call` (function calls), :func:`fail` (an HTTP 500) or a callable
``(request_body) -> step``. Usage of every response: 11 input (4 cached), 7 output (2 reasoning).
Streamed requests (``"stream": true``) get the same response as Server-Sent Events ending with
``response.completed``.
"""

from __future__ import annotations

import itertools
import json
import threading
from typing import Any, Callable

import httpx
from agents import OpenAIResponsesModel
from openai import AsyncOpenAI

USAGE = {"input_tokens": 11, "output_tokens": 7, "total_tokens": 18,
         "input_tokens_details": {"cached_tokens": 4}, "output_tokens_details": {"reasoning_tokens": 2}}
MODEL = "gpt-4.1-mini"
RESPONSE_MODEL = "gpt-4.1-mini-2025-04-14"

_ids = itertools.count(1)


def say(text: str, *, reasoning: str | None = None) -> dict:
    """A final text answer (optionally preceded by a reasoning summary)."""
    items: list[dict] = []
    if reasoning is not None:
        items.append({"type": "reasoning", "id": f"rs_{next(_ids)}",
                      "summary": [{"type": "summary_text", "text": reasoning}]})
    items.append({"type": "message", "id": f"msg_{next(_ids)}", "role": "assistant", "status": "completed",
                  "content": [{"type": "output_text", "text": text, "annotations": []}]})
    return {"output": items}


def call(*calls: tuple[str, dict]) -> dict:
    """One response with function calls ``(name, arguments)`` (several = parallel calls)."""
    items = []
    for name, args in calls:
        n = next(_ids)
        items.append({"type": "function_call", "id": f"fc_{n}", "call_id": f"call_{n}", "name": name,
                      "arguments": json.dumps(args), "status": "completed"})
    return {"output": items}


def cut_off(text: str) -> dict:
    """A response the API ended ``incomplete`` (``max_output_tokens``) after part of its answer, with its usage:
    whole, or streamed with ``response.incomplete`` as its terminal event."""
    return {**say(text), "status": "incomplete", "incomplete_details": {"reason": "max_output_tokens"}}


def fail(message: str = "upstream 500") -> dict:
    """An HTTP 500 from the API."""
    return {"error": message}


class ScriptedResponses:
    """The handler of the mock transport; ``requests`` keeps every request body received."""

    def __init__(self, scripts: dict[str, list[Any]] | list[Any], *, repeat_last: bool = False):
        self.scripts = {"default": list(scripts)} if isinstance(scripts, list) else {k: list(v) for k, v in scripts.items()}
        self.repeat_last = repeat_last
        self.requests: list[dict] = []
        self._lock = threading.Lock()

    def _next(self, body: dict) -> dict:
        key = body.get("instructions") if body.get("instructions") in self.scripts else "default"
        with self._lock:
            script = self.scripts[key]
            step = script[0] if self.repeat_last and len(script) == 1 else script.pop(0)
        return step(body) if callable(step) else step

    def __call__(self, request: httpx.Request) -> httpx.Response:
        body = json.loads(request.content or b"{}")
        with self._lock:
            self.requests.append(body)
        step = self._next(body)
        if "error" in step:
            return httpx.Response(500, json={"error": {"message": step["error"], "type": "server_error"}})
        response = {
            "id": f"resp_{next(_ids)}", "object": "response", "created_at": 1700000000, "model": RESPONSE_MODEL,
            "status": step.get("status", "completed"), "output": step["output"], "parallel_tool_calls": True, "tool_choice": "auto",
            "tools": body.get("tools", []), "instructions": body.get("instructions"), "usage": USAGE,
            "text": {"format": {"type": "text"}}, "temperature": body.get("temperature"),
            "service_tier": "default" if body.get("service_tier") in (None, "auto") else body["service_tier"],
        }
        if "incomplete_details" in step:
            response["incomplete_details"] = step["incomplete_details"]
        if not body.get("stream"):
            return httpx.Response(200, json=response)
        events = [("response.created", {"response": {**response, "status": "in_progress", "output": [],
                                                     "usage": None}})]
        for i, item in enumerate(step["output"]):
            events.append(("response.output_item.added", {"output_index": i, "item": item}))
            if item["type"] == "message":
                text = item["content"][0]["text"]
                for j, chunk in enumerate((text[: len(text) // 2], text[len(text) // 2:])):
                    events.append(("response.output_text.delta", {"output_index": i, "content_index": 0,
                                                                  "item_id": item["id"], "delta": chunk,
                                                                  "logprobs": []}))
            events.append(("response.output_item.done", {"output_index": i, "item": item}))
        events.append((f"response.{response['status']}", {"response": response}))
        sse = "".join(f"event: {name}\ndata: {json.dumps({'type': name, 'sequence_number': n, **data})}\n\n"
                      for n, (name, data) in enumerate(events))
        return httpx.Response(200, content=sse.encode(), headers={"content-type": "text/event-stream"})


def responses_model(handler: Callable[[httpx.Request], httpx.Response], model: str = MODEL) -> OpenAIResponsesModel:
    """The real ``OpenAIResponsesModel`` over an ``AsyncOpenAI`` whose transport is ``handler``."""
    client = AsyncOpenAI(api_key="sk-test-not-a-key", base_url="http://127.0.0.1:9/v1", max_retries=0,
                         http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))
    return OpenAIResponsesModel(model=model, openai_client=client)


class RaisingResponsesModel(OpenAIResponsesModel):
    """The real ``OpenAIResponsesModel`` whose request raises ``error`` (the model step fails, OA-4 b)."""

    def __init__(self, error: BaseException):
        super().__init__(model=MODEL, openai_client=AsyncOpenAI(api_key="sk-test-not-a-key",
                                                               base_url="http://127.0.0.1:9/v1"))
        self.error = error

    async def _fetch_response(self, *args: Any, **kwargs: Any) -> Any:
        raise self.error.with_traceback(None)  # raised again as new: each raise would add its frames to the last's


def tool_then_answer(tool: str, args: dict) -> Callable[[dict], dict]:
    """A stateless brain: call ``tool`` with ``args``, then answer with the tool's last output."""

    def step(body: dict) -> dict:
        items = body.get("input") if isinstance(body.get("input"), list) else []
        outputs = [i for i in items if isinstance(i, dict) and i.get("type") == "function_call_output"]
        if outputs:
            return say(f"Done: {outputs[-1]['output']}")
        return call((tool, args))

    return step


def user_model_class() -> type:
    """A model class of the user's own (a plain ``agents.Model`` subclass, as the SDK's docs show), created
    when called, so a test can define it after ``instrument()``. An instance answers from ``script`` (steps
    as for :class:`ScriptedResponses`: :func:`say` / :func:`call`), streamed or whole, with usage
    ``(input, output)`` per call, and records the ground truth of every call in ``truth``: text, tool calls
    ``(name, arguments, call id)``, usage, and finish reason: none from ``get_response`` (a ``ModelResponse``
    has no field for it); a stream's terminal ``Response`` says ``status="completed"``, which the Responses API
    defines as ``tool_call`` (output calls tools) or ``stop``. ``cut=True``: its streams end after their items,
    without ``response.completed`` (a stream cut short: no finish reason, no usage in its truth)."""
    from agents import Model, ModelResponse, Usage
    from openai.types.responses import (Response, ResponseCompletedEvent, ResponseCreatedEvent,
                                        ResponseOutputItemDoneEvent)
    from openai.types.responses import ResponseOutputItem, ResponseUsage
    from pydantic import TypeAdapter

    _output_item = TypeAdapter(ResponseOutputItem)

    class InHouseModel(Model):
        def __init__(self, script: list[Any], usage: tuple[int, int] = (13, 5), cut: bool = False):
            self.script = list(script)
            self.usage = usage
            self.cut = cut
            self.truth: list[dict[str, Any]] = []

        def _next(self, streamed: bool = False) -> tuple[list[Any], Any]:
            step = self.script.pop(0)
            items = [_output_item.validate_python(i) for i in step["output"]]
            calls = [(i.name, json.loads(i.arguments), i.call_id) for i in items if i.type == "function_call"]
            texts = [c.text for i in items if i.type == "message" for c in i.content]
            self.truth.append({"text": "".join(texts) or None, "tool_calls": calls,
                               "usage": None if streamed and self.cut else self.usage,
                               "finish_reason": ("tool_call" if calls else "stop") if streamed and not self.cut
                               else None})
            details = ResponseUsage.model_fields
            return items, ResponseUsage.model_construct(
                input_tokens=self.usage[0], output_tokens=self.usage[1], total_tokens=sum(self.usage),
                input_tokens_details=details["input_tokens_details"].annotation.model_construct(cached_tokens=0),
                output_tokens_details=details["output_tokens_details"].annotation.model_construct(reasoning_tokens=0))

        async def get_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                               tracing, *, previous_response_id=None, conversation_id=None, prompt=None):
            items, usage = self._next()
            return ModelResponse(output=items, usage=Usage(requests=1, input_tokens=usage.input_tokens,
                                                           output_tokens=usage.output_tokens,
                                                           total_tokens=usage.total_tokens),
                                 response_id=None)

        async def stream_response(self, system_instructions, input, model_settings, tools, output_schema, handoffs,
                                  tracing, *, previous_response_id=None, conversation_id=None, prompt=None):
            items, usage = self._next(streamed=True)
            n = next(_ids)
            response = Response.model_construct(id=f"inhouse_{n}", object="response", created_at=1, model="in-house-1",
                                                status="completed", output=[], parallel_tool_calls=True,
                                                tool_choice="auto", tools=[], usage=None)
            yield ResponseCreatedEvent.model_construct(type="response.created", response=response, sequence_number=0)
            for i, item in enumerate(items):
                yield ResponseOutputItemDoneEvent.model_construct(type="response.output_item.done", item=item,
                                                                  output_index=i, sequence_number=i + 1)
            if self.cut:
                return
            done = response.model_copy(update={"output": items, "usage": usage})
            yield ResponseCompletedEvent.model_construct(type="response.completed", response=done,
                                                         sequence_number=len(items) + 1)

    return InHouseModel
