"""The SDKs' own retries inside one call, with the real ``openai`` and ``anthropic`` clients over a mock transport
that fails first (a 429, a 529, a read timeout) and answers after: one span per call, whose outcome is the last
attempt's (the answer's usage and finish reason, no error; or the SDK's error when every attempt failed), and one
``exception`` event per attempt the SDK sent again, typed as the SDK's error for that status or the transport's
exception (OTel general/recording-errors.md: a retried error is not the operation's). Each request the transport
served is counted: the events are the attempts it failed."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Callable

import httpx
import httpx2
import pytest
from opentelemetry.trace import StatusCode

from tests.spans import SnapshotExporter, tree

from .fakes import ac1_whole, chat_completion, embeddings_body

ASK = [{"role": "user", "content": "Where is order A100?"}]
FAST = {"retry-after-ms": "1"}  # the SDKs wait what the server asks: no test sleeps for the default back-off


class Flaky:
    """Answers with ``failures`` in turn (an HTTP status, or an exception class raised as the transport's), then
    with ``body``; ``served`` counts the requests."""

    def __init__(self, http: Any, failures: list[Any], body: dict[str, Any]):
        self.http, self.failures, self.body, self.served = http, failures, body, 0

    def __call__(self, request: Any) -> Any:
        self.served += 1
        if self.served <= len(self.failures):
            failure = self.failures[self.served - 1]
            if isinstance(failure, int):
                return self.http.Response(failure, json={"type": "error", "error": {"type": "x", "message": "later"}},
                                          headers=FAST)
            raise failure("read timed out", request=request)
        return self.http.Response(200, json=self.body)


def _client(sdk: str, handler: Flaky, aio: bool, retries: int) -> Any:
    import anthropic
    import openai

    http = handler.http
    if aio:
        async def handle(request: Any) -> Any:
            return handler(request)

        transport = http.MockTransport(handle)
        sdk_client = anthropic.AsyncAnthropic if sdk == "anthropic" else openai.AsyncOpenAI
        return sdk_client(api_key="k", max_retries=retries, http_client=http.AsyncClient(transport=transport))
    sdk_client = anthropic.Anthropic if sdk == "anthropic" else openai.OpenAI
    return sdk_client(api_key="k", max_retries=retries, http_client=http.Client(transport=http.MockTransport(handler)))


def _openai_http() -> Any:
    import openai

    return httpx2 if int(openai.__version__.split(".")[0]) >= 3 else httpx  # openai 3.x sends through httpx2


# (sdk, status of the first attempt, the call, the body the last attempt answers, its input and output tokens)
CALLS: dict[str, tuple[str, int, Callable[[Any], Any], Callable[[], dict], tuple[int, int | None]]] = {
    "openai_chat": ("openai", 429, lambda c: c.chat.completions.create(model="gpt-4o", messages=ASK),
                    chat_completion, (11, 7)),
    "openai_embeddings": ("openai", 429, lambda c: c.embeddings.create(model="text-embedding-3-small", input="x"),
                          embeddings_body, (6, None)),
    "anthropic_messages": ("anthropic", 529, lambda c: c.messages.create(model="claude-haiku-4-5", max_tokens=64,
                                                                         messages=ASK), ac1_whole, (145, 42)),
}
ERRORS = {429: "openai.RateLimitError", 529: "anthropic.OverloadedError"}


def _run(call: Callable[[Any], Any], client: Any, aio: bool) -> Any:
    if aio:
        async def main() -> Any:
            return await call(client)

        return asyncio.run(main())
    return call(client)


def _one_span(exporter: SnapshotExporter) -> Any:
    spans = exporter.semantic()
    assert len(spans) == 1, tree(exporter.spans)
    return spans[0]


def _attempts(span: Any) -> list[dict[str, Any]]:
    return [attrs for name, attrs in span.events if name == "exception"]


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_a_retried_status_then_an_answer_is_one_span_with_the_attempt(openai_on: Any, anthropic_on: Any,
                                                                      exporter: SnapshotExporter, name: str,
                                                                      aio: bool) -> None:
    """429 (529 for Anthropic: overloaded) then 200: one span, not an error, with the answer's usage, and one
    ``exception`` event naming the SDK's error for the failed attempt (the transport served two requests)."""
    sdk, status, call, body, (tokens_in, tokens_out) = CALLS[name]
    handler = Flaky(httpx2 if sdk == "anthropic" else _openai_http(), [status], body())
    _run(call, _client(sdk, handler, aio, retries=2), aio)
    assert handler.served == 2
    span = _one_span(exporter)
    a = span.attributes
    assert span.status == StatusCode.UNSET and "error.type" not in a, tree([span])
    assert a["gen_ai.usage.input_tokens"] == tokens_in and a.get("gen_ai.usage.output_tokens") == tokens_out
    [attempt] = _attempts(span)
    assert attempt["exception.type"] == ERRORS[status], attempt


@pytest.mark.parametrize("aio", [False, True], ids=["sync", "async"])
def test_a_timed_out_attempt_then_an_answer_is_one_span_with_the_attempt(openai_on: Any, exporter: SnapshotExporter,
                                                                       aio: bool) -> None:
    """A read timeout then an answer: the attempt's event is the transport's own exception."""
    http = _openai_http()
    handler = Flaky(http, [http.ReadTimeout], chat_completion())
    _run(CALLS["openai_chat"][2], _client("openai", handler, aio, retries=1), aio)
    assert handler.served == 2
    span = _one_span(exporter)
    assert span.status == StatusCode.UNSET and span.attributes["gen_ai.response.finish_reasons"] == ("stop",)
    [attempt] = _attempts(span)
    assert attempt["exception.type"] == f"{http.__name__}.ReadTimeout", attempt


def test_every_attempt_failing_is_the_sdks_error_after_each_retried_one(openai_on: Any,
                                                                        exporter: SnapshotExporter) -> None:
    """429 three times with two retries: the call raises the SDK's error; the span fails with it (no usage) and
    has three events: the two attempts sent again, then the error raised to the caller."""
    import openai

    handler = Flaky(_openai_http(), [429, 429, 429], chat_completion())
    with pytest.raises(openai.RateLimitError):
        _run(CALLS["openai_chat"][2], _client("openai", handler, False, retries=2), False)
    assert handler.served == 3
    span = _one_span(exporter)
    assert span.status == StatusCode.ERROR and span.attributes["error.type"] == "openai.RateLimitError"
    assert [e["exception.type"] for e in _attempts(span)] == ["openai.RateLimitError"] * 3
    assert not [k for k in span.attributes if "token" in k], json.dumps(dict(span.attributes), default=str)


def test_a_release_without_the_private_retry_hook_is_still_traced(provider: Any, exporter: SnapshotExporter,
                                                                   monkeypatch: pytest.MonkeyPatch,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    """``_sleep_for_retry`` is private: a release that renames it loses the retry events only, said once; the
    calls are traced as before (a missing private method used to fail the instrumentor's whole installation)."""
    import openai._base_client as base_client
    from otel_agents.instrumentors.openai import OpenAIInstrumentor

    monkeypatch.delattr(base_client.SyncAPIClient, "_sleep_for_retry")
    inst = OpenAIInstrumentor()
    inst.instrument(tracer_provider=provider)
    try:
        assert "SyncAPIClient._sleep_for_retry" in caplog.text, caplog.text
        handler = Flaky(_openai_http(), [], chat_completion())
        _run(CALLS["openai_chat"][2], _client("openai", handler, False, retries=0), False)
        span = _one_span(exporter)
        assert span.status == StatusCode.UNSET and span.attributes["gen_ai.usage.input_tokens"] == 11
    finally:
        inst.uninstrument()
