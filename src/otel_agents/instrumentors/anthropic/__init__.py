"""Anthropic SDK instrumentation: one ``model`` span per Messages API call, for agents written on the client.

Usage
-----
::

    from otel_agents.instrumentors.anthropic import AnthropicInstrumentor

    AnthropicInstrumentor().instrument(tracer_provider=provider)   # or otel_agents.instrument()
    client = anthropic.Anthropic()
    client.messages.create(model="claude-sonnet-4-5", max_tokens=1024, messages=[...])
    AnthropicInstrumentor().uninstrument()                          # the SDK exactly as before

With ``@otel_agents.agent`` on the loop and ``@otel_agents.tool`` on the tools, a
hand-written agent becomes a complete trace with no model-span code
(``examples/customer_support/anthropic_agent.py``). With no code change:
``opentelemetry-instrument python app.py`` loads it through the ``anthropic``
entry point. Supported: ``anthropic >=2.14.0,<3`` (tested on 2.14 and 2.17). Importing
this module does not import ``anthropic``; ``instrument()`` hooks it when the
application imports it.

What you get
------------
``chat {model}`` (``model``) for every call of ``messages.create`` (sync and
async, ``stream=True`` included), ``messages.stream()``, the same under
``beta.messages``, and their ``with_raw_response`` / ``with_streaming_response``
forms — retries inside one call are one span, whose outcome is the last attempt's; each attempt the SDK sends
again (a 429, a 529, a timeout) is an ``exception`` event on it, typed as the SDK's error for that status
(``anthropic.OverloadedError``) or the transport's exception, not the span's error. Attributes: request model and
parameters (``max_tokens``, ``temperature``, ``top_p``, ``top_k``,
``stop_sequences``, ``stream``), ``gen_ai.provider.name=anthropic``,
``server.address``/``server.port``, response id and model, finish reason
(``stop_reason`` normalised: ``tool_use`` → ``tool_call``, ``end_turn`` →
``stop``, ``max_tokens`` → ``length``), usage, and with content on: the input
messages, the ``system`` prompt as system instructions, the tools offered, the
output message. Content blocks become GenAI parts: ``text``; ``thinking`` →
``reasoning`` (its signature and ``redacted_thinking`` are never recorded);
``tool_use`` → ``tool_call``; ``tool_result`` → ``tool_call_response`` (a user
turn of only tool results is a ``tool`` message); ``image``/``document`` → blob,
uri or file parts (inline data above ``OTEL_AGENTS_MAX_MEDIA_BYTES`` is
summarised, never inlined as text); anything else a generic part.

Usage follows OTel GenAI semconv v1.41: ``gen_ai.usage.input_tokens`` is all
input tokens (``input_tokens + cache_creation_input_tokens +
cache_read_input_tokens``), with ``gen_ai.usage.cache_read.input_tokens`` and
``gen_ai.usage.cache_creation.input_tokens`` beside it; the same for a streamed
message, whose ``message_start`` gives the input counts and whose last
``message_delta`` gives the final ``output_tokens``. Counts the API did not
report are not written (never zeros).

Streams are assembled, not sampled: text and thinking deltas are joined,
``input_json_delta`` fragments become the tool call's arguments, and the span
ends at ``message_stop`` — or, when the stream is closed, dropped or left idle
(``OTEL_AGENTS_STREAM_IDLE_TIMEOUT``) before it, as abandoned (not an error)
with what had arrived. The stream object you get is the SDK's own.

Not traced: ``messages.count_tokens``, message batches, files, models (not
model calls).

One model span per request
--------------------------
When the client is called inside one of our ``model`` spans — LangChain's
``ChatAnthropic``, PydanticAI's ``AnthropicModel``, CrewAI's native provider,
or your own ``@otel_agents.span("model")`` — no second span is opened: that
span keeps its framework's view and gets the response id, the usage when
it has fewer counts, and the finish reasons the provider sent unless the
framework wrote its own.

The SDK's own tracing
---------------------
``anthropic`` 2.x opens its own ``anthropic.messages.create`` span per call
(``gen_ai.operation.name=chat``, switched by the client's ``open_telemetry``
option and ``ANTHROPIC_OPEN_TELEMETRY=false``). GenAI backends count every
``chat`` span, so with ours beside it each call would count twice. While we are
instrumented the SDK opens no span for Messages calls — whatever its option
says, for clients built before or after ``instrument()`` — and sends no trace
header of its own for them (instrument your HTTP client, or rely on ours being
current around the request). Its other spans (the tool runner's, other
endpoints') are untouched; ``uninstrument()`` brings its Messages span back.

Other instrumentations of this client (OpenInference's, OpenLLMetry's) trace
the same calls: keep one on. ``otel-agents doctor`` names any it finds installed.

Design decision, and why
------------------------
The SDK has no callback or hook API for requests, so we use ``wrapt`` — on the
one method every call goes through, ``SyncAPIClient.request`` /
``AsyncAPIClient.request`` (see :mod:`otel_agents.instrumentors._sdk_client`),
rather than on each resource method: ``create``, ``stream()``, ``beta`` and the
raw-response wrappers all end there exactly once, with the API-shaped body.
Streams are observed by replacing the SDK stream's own iterator, so the object
you hold stays an ``anthropic.Stream``; raw responses are parsed once with the
SDK's ``parse()``, whose per-type cache hands you the same object. The native
span is stood down by a wrapper on the SDK's span starter for that one span name.
"""

from ._instrumentor import AnthropicInstrumentor

__all__ = ["AnthropicInstrumentor"]
