"""A provider's SSE answer served lazily through a mock transport, one event per chunk, so the ground
truth knows which events (the one carrying usage, the one carrying the finish reason) really went out
before the caller stopped reading."""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable

from tests.matrix.truth import Call, Truth

Event = tuple[str | None, Any, Callable[[Call], None] | None]  # (SSE event name, data, what sending it tells)


def _bytes(name: str | None, data: Any) -> bytes:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {data if isinstance(data, str) else json.dumps(data)}\n\n".encode()


class Server:
    """A mock-transport handler: each request is one model call of ``truth`` (a failed call when the truth says
    the model raises: HTTP 500); ``whole(call)`` gives the JSON body, ``events(call)`` the SSE events."""

    def __init__(self, truth: Truth, http: Any, whole: Callable[[Call], dict], events: Callable[[Call], list[Event]],
                 aio: bool) -> None:
        self.truth, self.http, self.whole, self.events, self.aio = truth, http, whole, events, aio

    def __call__(self, request: Any) -> Any:
        body = json.loads(request.content or b"{}")
        try:
            call = self.truth.reply(has_tool_result=True)
        except Exception:  # noqa: BLE001 - the model's outage, as the API reports it
            return self.http.Response(500, json={"error": {"type": "api_error", "message": "model down"}})
        if not body.get("stream"):
            call.sent(finish=None)
            return self.http.Response(200, json=self.whole(call), headers={"request-id": "req_1"})
        events = self.events(call)
        if self.aio:
            async def agen() -> Any:
                for name, data, effect in events:
                    if effect:
                        effect(call)
                    yield _bytes(name, data)
            content: Any = agen()
        else:
            def gen() -> Iterable[bytes]:
                for name, data, effect in events:
                    if effect:
                        effect(call)
                    yield _bytes(name, data)
            content = gen()
        return self.http.Response(200, content=content, headers={"content-type": "text/event-stream"})


def usage(call: Call) -> None:
    call.usage = call.turn.usage


def finish(reason: str) -> Callable[[Call], None]:
    def effect(call: Call) -> None:
        call.finish = reason
        call.answered = True
    return effect


def both(reason: str) -> Callable[[Call], None]:
    def effect(call: Call) -> None:
        usage(call)
        finish(reason)(call)
    return effect
