"""PydanticAI instrumentation: one ``agent`` span per run, a ``model`` span per request, a ``tool`` span per call.

Usage
-----
::

    from otel_agents.instrumentors.pydantic_ai import PydanticAIInstrumentor

    PydanticAIInstrumentor().instrument(tracer_provider=provider)   # or otel_agents.instrument()
    agent.run_sync("Where is my order?")
    PydanticAIInstrumentor().uninstrument()                           # pydantic-ai exactly as before

With no code change: ``opentelemetry-instrument python app.py`` loads it through
the ``pydantic_ai`` entry point. Supported: ``pydantic-ai-slim >=2.68.0,<3`` (tested on
2.68 and 2.78). Importing this module does not import pydantic-ai; ``instrument()`` does.

Configuration
-------------
``instrument()`` takes ``tracer_provider``, ``meter_provider``,
``capture_content`` and ``settings`` (see
:class:`~otel_agents.instrumentors.OtelAgentsInstrumentor`). Environment:

* ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`` — ``NO_CONTENT``/``false``
  drops prompts, messages, tool arguments and results, outputs and exception
  messages from our spans (default: recorded). It governs our spans only;
  pydantic-ai's own spans follow its ``include_content``.
* ``OTEL_AGENTS_MAX_CONTENT_LENGTH`` — characters per content attribute (default 16384).
* ``OTEL_AGENTS_STREAM_IDLE_TIMEOUT`` — seconds a sync stream's iterator may sit
  unconsumed before its run is ended as abandoned (default 300).

A run started inside OpenTelemetry's ``suppress_instrumentation()`` makes no
span (our capability, if its agent already holds it, only calls through); with content
off, or on a sampled-out span, messages and tool arguments are not even converted.

What you get
------------
Every entry point — ``run``, ``run_sync``, ``run_stream``, ``run_stream_sync``,
``run_stream_events``, ``iter`` — gives:

* ``invoke_agent {agent name}`` (``agent``): ``gen_ai.agent.name``, the prompt as
  input (a multimodal prompt as GenAI parts, media summarised past the budget), the output as output (a structured output as JSON). Deferred or
  approval-required tool calls that stop the run set ``otel_agents.run.paused``.
  An unnamed agent is named the way pydantic-ai names it (the caller's variable;
  ``agent`` under ``iter()``).
* ``chat {model}`` (``model``), one per request: request and response model,
  provider, request settings, input messages, the output message,
  ``gen_ai.response.finish_reasons`` when the model reports one, token usage
  (cache read/write and reasoning tokens included). The span opens when the
  model is really asked (once the hooks have prepared the request, where
  PydanticAI's own instrumentation records it): a request a capability
  answers instead (``SkipModelRequest`` from ``before_model_request``, a
  ``wrap_model_request`` that never calls its handler) has no model span, and
  its answer is the run's output. Messages are typed parts
  (OTel GenAI semconv v1.41; the mapping is in :mod:`._convert`): multimodal
  prompts (``BinaryContent``, ``ImageUrl``, ``DocumentUrl``, ``AudioUrl``,
  ``VideoUrl``, ``UploadedFile``) as media parts under the media budget
  (``OTEL_AGENTS_MAX_MEDIA_BYTES``), ``ThinkingPart`` as a ``reasoning`` part
  (never its signature), files a tool returned as media parts. ``instructions=``
  and system prompts are ``gen_ai.system_instructions`` and the first
  OpenInference message (role ``system``); the request's function and output
  tools are ``gen_ai.tool.definitions`` / ``llm.tools.N.tool.json_schema``.
  A request that takes more than one attempt (a ``FallbackModel`` or the
  ``ModelFallback`` capability moving on to its next model, a hook's
  ``RetryModelRequest``) stays one span, as PydanticAI's own ``chat`` span: each
  attempt that raised is an ``exception`` event on it (noted where PydanticAI
  records it, ``AttemptLog.record``), its outcome and response model are the
  last attempt's (a ``FallbackExceptionGroup`` when every model failed).
* ``execute_tool {tool}`` (``tool``), one per call: name, call id, description,
  arguments, result (a returned file as a GenAI media part). A ``ModelRetry`` shows as an errored tool span, then the
  retried call's span; arguments the tool rejects give an errored span too.
  ``CallDeferred``/``ApprovalRequired`` are not errors: the span is marked
  paused. A tool needing approval runs (and gets its span) when the run resumes.
  The output tool of a structured output is not a tool span: its value is the
  agent span's output.
  A call naming a tool the agent does not have, which PydanticAI answers with a retry
  ("Unknown tool name…") before any tool hook, is a zero-length refused tool span under the
  agent span, made when the next request sends that answer: status ERROR, ``error.type``
  ``unknown_tool`` (PydanticAI's retry cause) and ``otel_agents.tool.denied`` (as CrewAI's); the
  last such calls of a run that ends with ``UnexpectedModelBehavior`` (retries spent) have none.
* ``validate_output`` (``chain``, status ERROR), one per output PydanticAI
  rejected and asked the model again for (a structured output that fails
  validation, ``ModelRetry`` from an ``@agent.output_validator`` or output
  function): a failed step, counted in the ECP envelope's ``metrics.errors``;
  the rejected request's model span keeps its usage. An accepted output makes
  no such span; partial outputs validated while streaming are not steps. ``run_stream()``,
  which cannot ask again, raises ``UnexpectedModelBehavior`` from the rejection while the
  response's stream is still open: the step is the same (under the agent), the model span is
  not failed nor abandoned (the model answered in full), the agent span has the error.

Streams end when they are done, never only at garbage collection: a streamed
result consumed to the end (``stream_text``/``stream_output``/``stream_response``
or ``get_output``) ends its spans right then, with the output and the model's
token counts, even without ``with`` (pydantic-ai itself only finishes at
``__aexit__``/``__exit__``, or at collection for a ``run_stream_sync`` result
used without ``with``). A stream left unfinished ends with
``otel_agents.stream.abandoned``, not as an error, and its model span keeps the
tokens reported so far: ``run_stream`` at ``__aexit__``, ``run_stream_sync`` when
its iterator is dropped or closed, sits idle past the idle timeout, or at
``__exit__``. Breaking out of an ``iter()`` loop is abandoned the same way.

A run that ``UsageLimitExceeded`` stopped is an error and says which cap (``otel_agents.run.stop_reason``
on its agent span, from the run's ``UsageLimits`` and usage, as PydanticAI tests them): ``budget`` for a
token or cost limit (``input_tokens_limit``, ``output_tokens_limit``, ``total_tokens_limit``,
``cost_limit``: checked first, so a token limit crossed as the request count reaches ``request_limit`` is
``budget``), ``max_turns`` for ``request_limit`` or ``tool_calls_limit`` — on every entry point, also when
a ``run_stream_sync`` result's iterator ends the run. A limit crossed while a response streams stops the
stream: its model span keeps the usage and finish reason the provider sent for it (the response
PydanticAI hands its own instrumentation at the model-call boundary), marked
``otel_agents.stream.abandoned`` as PydanticAI marks the response interrupted, not failed (the run's
agent span has the error). The usage and finish reason hold for any
request whose handler raises after the provider answered (a hook rejecting the response, a stream's
consumer raising).

Inside a tool (sync tools run in worker threads) the current span is its tool
span, so your own spans and nested agent runs hang under it.

With pydantic-ai's own instrumentation
--------------------------------------
``Agent.instrument_all()``, ``agent.instrument = ...`` or the ``Instrumentation``
capability keep working, unchanged, next to ours: each run, request and tool call
appears exactly once in our kinds either way. Our spans step over pydantic-ai's
own spans when choosing their parent, so our tree is the same, and whole,
whether its spans go to the same tracer provider, another one, or nowhere. We
register no span processor, so the order of your processors does not matter.

Design decision, and why
------------------------
pydantic-ai 2.x has a public middleware API, *capabilities*, and its own OTel
instrumentation is one of them. We add our own capability
(:class:`~._capability.OtelAgentsCapability`, id ``otel_agents``) to every run:
its ``wrap_run``, ``wrap_model_request``, ``wrap_tool_execute`` and
``on_tool_validate_error`` hooks see each run, request and tool call exactly once,
in the task that runs it, with typed objects (``RunContext``,
``ModelResponse``, ``RequestUsage``, ``ToolCallPart``). The only wrapt patch on
the run path is ``Agent.iter``, which every entry point goes through once. On
the agent's first run it puts the agent's own capabilities, combined, with our
hooks on the combination (:class:`~._capability.ObservedCapabilities`), in their
place: PydanticAI dispatches every hook to every capability of a run, overridden or
not, each with a copy of the run context (1.38M instructions a run of the
benchmark's agent for one more capability that does nothing), and a run-level capability costs it
~0.9M more, to compose. Our hooks sit where PydanticAI would put our capability,
after the user's (inside their ``wrap_*`` hooks). An agent whose runs PydanticAI
composes anyway from the first (pydantic-ai's instrumentation on, the agent's
event hooks) gets our capability among its own instead, as before; a run that
brings ``capabilities=`` of its own, or that PydanticAI composes of an agent
holding the combination, or an agent that cannot take either, gets the
capability per run (see :mod:`._wiring`).
Verified by testing against the alternatives:

* Building on pydantic-ai's instrumentation (its spans through our tracer
  provider, or rewritten in a span processor) was rejected: adding a second
  ``Instrumentation`` capability per run silently switches off the user's own
  (the agent skips its ``instrument_all`` one when a run brings one), and setting
  it globally fights the user's settings; its spans carry pre-serialised JSON
  whose names change with its ``version`` setting, its ``include_content=False``
  still records message structure, a rewriting processor only works when it is
  registered before the exporter, and its ``run_stream_sync`` spans end at
  garbage collection.
* Wrapping pydantic-ai's internals (``_agent_graph.model_request``,
  ``ToolManager.execute_tool_call``) would tie us to private functions that move
  between minor versions; wrapping ``run``/``run_sync``/``run_stream*`` breaks the
  agent-name inference that reads the caller's frame.

Two refinements need more than the hooks, because ``wrap_run`` returns only at a
stream's ``__aexit__``/``__exit__``: a wrapper on the private
``StreamedRunResult._marked_completed`` (every completion path calls it) ends the
run when the stream is consumed, and wrappers on the public
``StreamedRunResultSync.stream_*`` methods watch the iterators a sync result
hands out. If a future release renames the private method, we log it once and
streamed runs end at ``__aexit__``/``__exit__`` instead.

Limits
------
* An async ``run_stream`` entered by hand (``__aenter__``) and never exited, or
  a sync result that is never iterated, never closed and kept alive, ends when
  pydantic-ai cleans it up.
* Breaking out of a sync stream's iterator and then calling ``get_output()``
  records the run as abandoned at the break.
* ``uninstrument()`` puts the original functions back and gives each agent its
  own capabilities back; when another
  instrumentation wrapped ``Agent.iter`` after us, ours stays in its chain,
  inert, so theirs keeps working (instrumenting again removes it). An agent
  whose capabilities we combined shows the combination in ``agent.root_capability``
  while instrumented; a deep copy made then keeps it after ``uninstrument()``, inert.
* Realtime sessions are not instrumented (an agent holding our hooks
  brings them to them, where they only call through); provider-native tool parts (web
  search and the like run by the provider) are not recorded as messages.
"""

from ._instrumentor import PydanticAIInstrumentor

__all__ = ["PydanticAIInstrumentor"]
