"""OpenAI SDK instrumentation: one ``model`` span per Chat Completions or Responses call, one
``embedding`` span per Embeddings call.

Usage
-----
::

    from otel_agents.instrumentors.openai import OpenAIInstrumentor

    OpenAIInstrumentor().instrument(tracer_provider=provider)   # or otel_agents.instrument()
    client = openai.OpenAI()
    client.chat.completions.create(model="gpt-4o", messages=[...])
    OpenAIInstrumentor().uninstrument()                          # the SDK exactly as before

With ``@otel_agents.agent`` on the loop and ``@otel_agents.tool`` on the tools, a
hand-written agent becomes a complete trace with no model-span code
(``examples/customer_support/openai_agent.py``). With no code change:
``opentelemetry-instrument python app.py`` loads it through the ``openai`` entry
point. Supported: ``openai >=2.30.0,<4`` (tested on 2.30 in ``.venv-floor``, on 2.54 in ``.venv``,
whose ``all`` extra stays on 2.x because CrewAI 1.15 requires ``openai<3``, and on 3.63 in
``.venv-newest``). Importing this module does not import ``openai``; ``instrument()`` hooks it when the
application imports it. Clients for other OpenAI-compatible servers (``base_url=...``) are
traced the same way.

What you get
------------
* ``chat {model}`` (``model``) for ``chat.completions.create`` / ``parse`` /
  ``stream`` and ``responses.create`` / ``parse`` / ``stream``, sync and async,
  streamed or not, through ``with_raw_response`` and ``with_streaming_response``
  too. The SDK's retries inside one call are that call's one span, whose outcome is the last attempt's; each
  attempt it sends again (a 429, a timeout) is an ``exception`` event on it (``openai.RateLimitError``, the
  transport's exception), not the span's error. A ``parse`` is one span (not doubled by the request it makes), whose
  output is the parsed object. Attributes: request model and parameters
  (``temperature``, ``top_p``, ``max_tokens``/``max_completion_tokens``/
  ``max_output_tokens``, ``stop``, ``seed``, penalties, ``stream``),
  ``gen_ai.provider.name=openai``, ``server.address``/``server.port``, response
  id and model, finish reasons (``tool_calls`` → ``tool_call``; the Responses
  API has none: ``stop``/``tool_call`` for a completed response, the
  ``incomplete_details.reason`` otherwise; a ``failed`` response, or a stream's
  ``error`` event, is ERROR with the API's error code as ``error.type``), usage, and with content on: the
  input messages (``system``/``developer`` as system instructions, the Responses
  ``instructions`` too), the tools offered, the output message. Parts: ``text``
  (refusals included), tool calls (arguments decoded from their JSON text),
  tool results, ``image_url``/``input_image``/``input_audio``/files as media
  parts, reasoning summaries (and ``reasoning_content`` from compatible servers)
  as ``reasoning`` — encrypted reasoning is never recorded.
* ``embeddings {model}`` (``embedding``) for ``embeddings.create``: the input
  texts (content), ``gen_ai.embeddings.dimension.count``, input tokens. Vectors
  are never recorded.

Usage is recorded only when the API reports it: input (cached included, as OTel
GenAI semconv v1.41 counts them), output, cached
(``gen_ai.usage.cache_read.input_tokens``) and reasoning tokens. A chat stream
carries usage only with ``stream_options={"include_usage": True}``; without it
the span has no token attributes at all — we never change your request to ask
for usage. Responses streams carry it on their terminal event.

Streams are assembled: chat deltas per choice, tool-call argument fragments per
index, the usage chunk (``choices: []``) at the end; for Responses, the whole
response on ``response.completed`` / ``response.incomplete`` /
``response.failed``, where the span ends — so a consumer that stops reading
there and closes the stream (as the OpenAI Agents SDK does) still records the
usage. A stream closed, dropped or idle (``OTEL_AGENTS_STREAM_IDLE_TIMEOUT``)
before its end ends as abandoned (not an error). The stream object you get is
the SDK's own.

Not traced: legacy completions, assistants/threads, batches, files, images,
audio, moderation, realtime.

One model span per request
--------------------------
When the client is called inside one of our ``model`` spans (``embedding`` for
embeddings) — LangChain's ``ChatOpenAI``, LlamaIndex's ``OpenAI``, PydanticAI's
OpenAI models, CrewAI's native OpenAI provider, the OpenAI Agents SDK's model
span, or your own ``@otel_agents.span("model")`` — no second span is opened:
that span gets the response id, the usage when it has fewer counts, and the
finish reasons the provider sent unless the framework wrote its own (the Agents
SDK keeps no chat completion's: its Chat Completions model spans get them here).

Other instrumentations of this client (OpenInference's, OpenLLMetry's,
``opentelemetry-instrumentation-openai-v2``) trace the same calls: keep one on.
``otel-agents doctor`` names any it finds installed. ``openai`` itself emits no
spans.

Design decision, and why
------------------------
The SDK has no request hook API, so we use ``wrapt`` on the one method every
call goes through, ``SyncAPIClient.request`` / ``AsyncAPIClient.request`` (and a
subclass's own ``request``: OpenInference's instrumentation wraps ``OpenAI.request``;
see :mod:`otel_agents.instrumentors._sdk_client`), not on each resource method:
``create``, ``parse``, the stream managers and the raw-response wrappers all
end there exactly once, with the API-shaped body. That is also why the async
raw-response paths create no coroutine that nobody awaits: the SDK's
``parse()`` we call to see the result is awaited inside your own ``await``.
"""

from ._instrumentor import OpenAIInstrumentor

__all__ = ["OpenAIInstrumentor"]
