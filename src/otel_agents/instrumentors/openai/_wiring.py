"""Installing the request hooks on the ``openai`` SDK."""

from __future__ import annotations

import openai._base_client as base_client
from openai._response import APIResponse, AsyncAPIResponse
from openai._streaming import AsyncStream, Stream

from ..._spans import Telemetry
from .._sdk_client import ClientHooks, endpoints
from ._chat import ChatCompletionsEndpoint
from ._embeddings import EmbeddingsEndpoint
from ._responses import ResponsesEndpoint

# Paths relative to the client's base URL (…/v1). Legacy completions, assistants, batches, files: not model calls we trace.
ROUTES = {"/chat/completions": ChatCompletionsEndpoint(), "/responses": ResponsesEndpoint(),
          "/embeddings": EmbeddingsEndpoint()}


def _helper_streams() -> tuple[tuple[type, ...], tuple[type, ...]]:
    """The ``.stream()`` managers' stream helpers (their ``close`` bypasses ``Stream.close``); none if moved."""
    try:
        from openai.lib.streaming.chat import AsyncChatCompletionStream, ChatCompletionStream
        from openai.lib.streaming.responses import AsyncResponseStream, ResponseStream
    except ImportError:  # a release that moved them: streams left by `with` then end when collected
        return (), ()
    return (ChatCompletionStream, ResponseStream), (AsyncChatCompletionStream, AsyncResponseStream)


class Installation:
    """Our hooks on one imported ``openai``; :meth:`remove` takes them off."""

    def __init__(self, telemetry: Telemetry):
        self.hooks = ClientHooks(telemetry, endpoints(ROUTES), sync_client=base_client.SyncAPIClient,
                                 async_client=base_client.AsyncAPIClient, streams=(Stream, AsyncStream),
                                 responses=(APIResponse, AsyncAPIResponse),
                                 provider="openai",
                                 helper_streams=_helper_streams())

    def remove(self) -> None:
        self.hooks.remove()
