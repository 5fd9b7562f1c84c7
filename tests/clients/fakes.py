"""The real ``anthropic`` and ``openai`` clients over mock HTTP transports, serving JSON and SSE bodies
written from the two APIs' references (no key, no network).

``anthropic`` 2.x sends through ``httpx2``, ``openai`` 2.x through ``httpx``: each client gets the mock
transport of its own HTTP library.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable, Iterable

import httpx
import httpx2

Handler = Callable[[Any], Any]


def sse(events: Iterable[tuple[str | None, Any]]) -> bytes:
    """An SSE body: ``(event name or None, JSON data or the raw string "[DONE]")`` per event."""
    out = []
    for name, data in events:
        head = f"event: {name}\n" if name else ""
        body = data if isinstance(data, str) else json.dumps(data)
        out.append(f"{head}data: {body}\n\n")
    return "".join(out).encode()


def cut_short(body: bytes, at: Callable[[Any], bool]) -> tuple[bytes, list[Any]]:
    """``body`` (an SSE body of :func:`sse`) ended cleanly just before its first event whose data ``at`` accepts,
    as a proxy that closes the connection early sends it: ``(the shorter body, the data of the events kept)`` (the
    ground truth of what the client was served). Raises if no event is accepted (nothing would be cut)."""
    events = [e for e in body.decode().split("\n\n") if e]
    kept: list[Any] = []
    for i, event in enumerate(events):
        data = event.split("data: ", 1)[1]
        data = data if data == "[DONE]" else json.loads(data)
        if at(data):
            return "".join(f"{e}\n\n" for e in events[:i]).encode(), kept
        kept.append(data)
    raise AssertionError("no event to cut at")


class Recorder:
    """A mock-transport handler serving one scripted body per request, in order (the last repeats);
    ``requests`` keeps each request's JSON body."""

    def __init__(self, *bodies: Any, http: Any = httpx):
        self.bodies = list(bodies)
        self.http = http
        self.requests: list[dict[str, Any]] = []

    def __call__(self, request: Any) -> Any:
        self.requests.append(json.loads(request.content or b"{}"))
        body = self.bodies[min(len(self.requests) - 1, len(self.bodies) - 1)]
        if callable(body):
            body = body(self.requests[-1])
        if isinstance(body, bytes):
            return self.http.Response(200, content=body, headers={"content-type": "text/event-stream",
                                                                   "request-id": "req_1"})
        status = body.pop("_status", 200) if isinstance(body, dict) else 200
        return self.http.Response(status, json=body, headers={"request-id": "req_1", "x-request-id": "req_1"})


def _over_the_network(handler: Handler) -> Handler:
    """``handler`` as an async client's transport sees a server: the response comes back a moment later, after
    the event loop has run what fell due meanwhile (a timeout, a cancellation), as a real socket read does. (A bare
    ``sleep(0)`` would not do: the task runs on before timers that are already due.)"""
    async def handle(request: Any) -> Any:
        await asyncio.sleep(0.001)
        return handler(request)
    return handle


def anthropic_client(handler: Handler, *, aio: bool = False, **options: Any) -> Any:
    import anthropic

    if aio:
        transport = httpx2.MockTransport(_over_the_network(handler))
        return anthropic.AsyncAnthropic(api_key="test-key", max_retries=0, **options,
                                        http_client=httpx2.AsyncClient(transport=transport))
    return anthropic.Anthropic(api_key="test-key", max_retries=0, **options,
                               http_client=httpx2.Client(transport=httpx2.MockTransport(handler)))


def openai_client(handler: Handler, *, aio: bool = False) -> Any:
    import openai

    if aio:
        transport = httpx.MockTransport(_over_the_network(handler))
        return openai.AsyncOpenAI(api_key="test-key", max_retries=0, http_client=httpx.AsyncClient(transport=transport))
    return openai.OpenAI(api_key="test-key", max_retries=0,
                         http_client=httpx.Client(transport=httpx.MockTransport(handler)))


# -- Anthropic Messages ------------------------------------------------------------------------

LOOKUP_TOOL = {"name": "lookup_order", "description": "Look up an order by id.",
               "input_schema": {"type": "object", "properties": {"order_id": {"type": "string"}},
                                "required": ["order_id"]}}


def anthropic_message(content: list[dict[str, Any]], *, stop_reason: str = "end_turn", usage: dict | None = None,
                      id: str = "msg_01") -> dict[str, Any]:
    return {"id": id, "type": "message", "role": "assistant", "model": "claude-haiku-4-5", "content": content,
            "stop_reason": stop_reason, "stop_sequence": None,
            "usage": usage if usage is not None else {"input_tokens": 10, "output_tokens": 5}}


# AC-1: the streamed message and the same message returned whole.
AC1_USAGE_START = {"input_tokens": 25, "cache_creation_input_tokens": 20, "cache_read_input_tokens": 100,
                   "output_tokens": 1}
AC1_CONTENT = [
    {"type": "thinking", "thinking": "The user wants order status.", "signature": "sig-SECRET-abc"},
    {"type": "text", "text": "Let me check that order."},
    {"type": "tool_use", "id": "toolu_01", "name": "lookup_order", "input": {"order_id": "A100"}},
]


def ac1_whole() -> dict[str, Any]:
    return anthropic_message(AC1_CONTENT, stop_reason="tool_use",
                             usage={**AC1_USAGE_START, "output_tokens": 42})


def ac1_stream() -> bytes:
    start = anthropic_message([], stop_reason=None, usage=AC1_USAGE_START)  # type: ignore[arg-type]
    return sse([
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0,
                                 "content_block": {"type": "thinking", "thinking": "", "signature": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "thinking_delta", "thinking": "The user wants order status."}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0,
                                 "delta": {"type": "signature_delta", "signature": "sig-SECRET-abc"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("content_block_start", {"type": "content_block_start", "index": 1,
                                 "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "text_delta", "text": "Let me check "}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 1,
                                 "delta": {"type": "text_delta", "text": "that order."}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 1}),
        ("content_block_start", {"type": "content_block_start", "index": 2,
                                 "content_block": {"type": "tool_use", "id": "toolu_01", "name": "lookup_order",
                                                   "input": {}}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 2,
                                 "delta": {"type": "input_json_delta", "partial_json": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 2,
                                 "delta": {"type": "input_json_delta", "partial_json": "{\"order_id\": "}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 2,
                                 "delta": {"type": "input_json_delta", "partial_json": "\"A100\"}"}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 2}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "tool_use", "stop_sequence": None},
                           "usage": {"output_tokens": 42}}),
        ("message_stop", {"type": "message_stop"}),
    ])


def anthropic_text_stream(text: str, *, usage_in: int = 10, usage_out: int = 5, id: str = "msg_01",
                          cumulative: bool = False) -> bytes:
    """A text answer streamed; ``cumulative``: ``message_delta`` repeats the input count, as the API does today
    (LangChain's ``ChatAnthropic`` reads usage from that event only)."""
    delta_usage = {"input_tokens": usage_in, "output_tokens": usage_out} if cumulative else {"output_tokens": usage_out}
    start = anthropic_message([], stop_reason=None, usage={"input_tokens": usage_in, "output_tokens": 1}, id=id)  # type: ignore[arg-type]
    return sse([
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}),
        ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": text}}),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        ("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": delta_usage}),
        ("message_stop", {"type": "message_stop"}),
    ])


# -- OpenAI Chat Completions and Responses -------------------------------------------------------

CHAT_USAGE = {"prompt_tokens": 11, "completion_tokens": 7, "total_tokens": 18,
              "prompt_tokens_details": {"cached_tokens": 4}, "completion_tokens_details": {"reasoning_tokens": 0}}


def chat_completion(content: str | None = "Order A100 has shipped.", *, tool_calls: list | None = None,
                    finish_reason: str = "stop", usage: dict | None = CHAT_USAGE,
                    service_tier: str | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content, "refusal": None}
    if tool_calls:
        message["tool_calls"] = [{"id": c["id"], "type": "function",
                                  "function": {"name": c["name"], "arguments": json.dumps(c["arguments"])}}
                                 for c in tool_calls]
    body: dict[str, Any] = {"id": "chatcmpl-1", "object": "chat.completion", "created": 1, "model": "gpt-4o-2024-08-06",
                            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason,
                                         "logprobs": None}]}
    if usage is not None:
        body["usage"] = usage
    if service_tier is not None:
        body["service_tier"] = service_tier
    return body


def chat_stream(*, include_usage: bool, tool_call: bool = False, service_tier: str | None = None,
                choices: int = 1) -> bytes:
    """A streamed chat answer (``service_tier``: on every chunk, as the API sends it; ``choices``: that many
    choices, ``n``, the same answer each, their chunks in turn, each with its own finish-reason chunk)."""
    tier = {"service_tier": service_tier} if service_tier is not None else {}

    def chunk(delta: dict, finish: str | None = None, index: int = 0) -> dict:
        return {"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1, "model": "gpt-4o-2024-08-06",
                "choices": [{"index": index, "delta": delta, "finish_reason": finish, "logprobs": None}], **tier}

    steps: list[tuple[dict, str | None]] = [({"role": "assistant", "content": ""}, None)]
    if tool_call:
        steps += [
            ({"tool_calls": [{"index": 0, "id": "call_1", "type": "function",
                              "function": {"name": "lookup_order", "arguments": ""}}]}, None),
            ({"tool_calls": [{"index": 0, "function": {"arguments": "{\"order_id\": "}}]}, None),
            ({"tool_calls": [{"index": 0, "function": {"arguments": "\"A100\"}"}}]}, None),
            ({}, "tool_calls"),
        ]
    else:
        steps += [({"content": "Order A100 "}, None), ({"content": "has shipped."}, None), ({}, "stop")]
    events: list[tuple[str | None, Any]] = [(None, chunk(delta, finish, i)) for delta, finish in steps
                                            for i in range(choices)]
    if include_usage:
        events.append((None, {"id": "chatcmpl-2", "object": "chat.completion.chunk", "created": 1,
                              "model": "gpt-4o-2024-08-06", "choices": [], "usage": CHAT_USAGE, **tier}))
    events.append((None, "[DONE]"))
    return sse(events)


RESPONSES_USAGE = {"input_tokens": 11, "input_tokens_details": {"cached_tokens": 4}, "output_tokens": 7,
                   "output_tokens_details": {"reasoning_tokens": 3}, "total_tokens": 18}


def response_body(text: str = "Order A100 has shipped.", *, status: str = "completed", function_call: bool = False,
                  usage: dict | None = RESPONSES_USAGE, service_tier: str | None = None) -> dict[str, Any]:
    output: list[dict[str, Any]] = [
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Check the order."}],
         "encrypted_content": "ENCRYPTED-SECRET"},
    ]
    if function_call:
        output.append({"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "lookup_order",
                       "arguments": "{\"order_id\": \"A100\"}", "status": "completed"})
    else:
        output.append({"type": "message", "id": "msg_1", "role": "assistant", "status": "completed",
                       "content": [{"type": "output_text", "text": text, "annotations": []}]})
    body = {"id": "resp_1", "object": "response", "created_at": 1, "model": "gpt-4o-2024-08-06", "status": status,
            "output": output, "parallel_tool_calls": True, "tool_choice": "auto", "tools": [],
            "usage": usage, "error": None, "incomplete_details": None, "instructions": None, "metadata": {},
            "temperature": 1.0, "top_p": 1.0, "text": {"format": {"type": "text"}}}
    if service_tier is not None:
        body["service_tier"] = service_tier
    return body


def responses_stream(text: str = "Order A100 has shipped.", *, usage: dict | None = RESPONSES_USAGE,
                     service_tier: str | None = None) -> bytes:
    """A streamed Responses answer; with ``service_tier``, ``response.created`` echoes ``"auto"`` and the terminal
    ``response.completed`` says the tier that served it."""
    whole = response_body(text, usage=usage, service_tier=service_tier)
    created = {**whole, "status": "in_progress", "output": [], "usage": None}
    if service_tier is not None:
        created["service_tier"] = "auto"
    reasoning, message = whole["output"]
    empty_message = {**message, "status": "in_progress", "content": []}
    part = {"type": "output_text", "text": "", "annotations": []}
    delta = {"item_id": "msg_1", "output_index": 1, "content_index": 0, "logprobs": []}
    events = [
        {"type": "response.created", "response": created},
        {"type": "response.output_item.added", "output_index": 0, "item": reasoning},
        {"type": "response.output_item.done", "output_index": 0, "item": reasoning},
        {"type": "response.output_item.added", "output_index": 1, "item": empty_message},
        {"type": "response.content_part.added", "item_id": "msg_1", "output_index": 1, "content_index": 0,
         "part": part},
        {"type": "response.output_text.delta", **delta, "delta": text[:9]},
        {"type": "response.output_text.delta", **delta, "delta": text[9:]},
        {"type": "response.output_text.done", **delta, "text": text},
        {"type": "response.content_part.done", "item_id": "msg_1", "output_index": 1, "content_index": 0,
         "part": {**part, "text": text}},
        {"type": "response.output_item.done", "output_index": 1, "item": message},
        {"type": "response.completed", "response": whole},
    ]
    return sse((e["type"], {**e, "sequence_number": i}) for i, e in enumerate(events))


def embeddings_body(n: int = 1, dim: int = 3) -> dict[str, Any]:
    return {"object": "list", "model": "text-embedding-3-small",
            "data": [{"object": "embedding", "index": i, "embedding": [0.1] * dim} for i in range(n)],
            "usage": {"prompt_tokens": 6, "total_tokens": 6}}


class Paced:
    """A mock-transport handler serving one SSE ``body`` as a server sends it: nothing for ``first`` seconds, then
    its events one at a time, ``between`` seconds apart (``received``: the monotonic time the request came in;
    ``sent``: the time each event went out)."""

    def __init__(self, body: bytes, *, first: float, between: float, http: Any = httpx):
        self.events = [e + b"\n\n" for e in body.split(b"\n\n") if e.strip()]
        self.first, self.between, self.http = first, between, http
        self.sent: list[float] = []
        self.received = 0.0

    def __call__(self, request: Any) -> Any:
        import time

        self.received = time.monotonic()

        def paced() -> Iterable[bytes]:
            time.sleep(self.first)
            for i, event in enumerate(self.events):
                if i:
                    time.sleep(self.between)
                self.sent.append(time.monotonic())
                yield event

        return self.http.Response(200, content=paced(), headers={"content-type": "text/event-stream",
                                                                 "request-id": "req_1"})
