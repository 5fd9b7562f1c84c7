"""Installing the request hooks on the ``anthropic`` SDK, and standing its own request span down."""

from __future__ import annotations

from typing import Any

import anthropic._base_client as base_client
from anthropic._response import APIResponse, AsyncAPIResponse
from anthropic._streaming import AsyncStream, Stream

from ..._spans import Telemetry
from .._sdk_client import ClientHooks, endpoints
from .._patch import Patch
from ._messages import MessagesEndpoint

ROUTES = {"/v1/messages": MessagesEndpoint()}  # batches and count_tokens are left out on purpose
_NATIVE_SPAN = "anthropic.messages.create"  # the SDK's own span name for a Messages call


class Installation:
    """Our hooks on one imported ``anthropic``; :meth:`remove` takes them all off."""

    def __init__(self, telemetry: Telemetry):
        self.hooks = ClientHooks(telemetry, endpoints(ROUTES), sync_client=base_client.SyncAPIClient,
                                 async_client=base_client.AsyncAPIClient, streams=(Stream, AsyncStream),
                                 responses=(APIResponse, AsyncAPIResponse),
                                 provider="anthropic")
        self.native = _stand_down_native_span()

    def remove(self) -> None:
        self.hooks.remove()
        if self.native is not None:
            self.native.remove()


def _stand_down_native_span() -> Any:
    """anthropic >= 2.x opens its own ``anthropic.messages.create`` span (``gen_ai.operation.name=chat``)
    per Messages call: with ours, every GenAI backend would count two model calls. Its span starter
    returns no span for that one name while we are instrumented (its other spans — tool runner, other
    endpoints — are untouched). Releases without native spans have nothing to stand down."""
    if "start_api_call_span" not in vars(base_client):
        return None

    def start(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
        options = args[2] if len(args) > 2 else kwargs.get("options")
        if getattr(options, "span_name", None) == _NATIVE_SPAN:
            return None  # the SDK then sends the request without a span of its own
        return wrapped(*args, **kwargs)

    return Patch(base_client, "start_api_call_span", start)  # type: ignore[arg-type] # a module works too
