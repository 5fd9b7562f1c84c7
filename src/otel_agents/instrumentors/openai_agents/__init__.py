"""OpenAI Agents SDK instrumentation: a workflow span per run, an ``agent`` span per agent, a ``model`` span
per response, a ``tool`` span per tool call, handoff and agent used as a tool.

Usage
-----
::

    from otel_agents.instrumentors.openai_agents import OpenAIAgentsInstrumentor

    OpenAIAgentsInstrumentor().instrument(tracer_provider=provider)   # or otel_agents.instrument()
    await Runner.run(agent, "Where is my order?")
    OpenAIAgentsInstrumentor().uninstrument()        # our processor and wrappers gone, nothing else touched

With no code change: ``opentelemetry-instrument python app.py`` loads it through the
``openai_agents`` entry point. Supported: ``openai-agents >=0.20.0,<0.26`` (tested on 0.20.0 in
``.venv``, the newest release that installs beside CrewAI, and on 0.25.0 with ``openai`` 3 in
``.venv-newest``: 0.21 and later need ``openai`` 3, which CrewAI does not allow yet). Importing this
module does not import the SDK; ``instrument()`` does, or the application's own ``import agents``
when it comes later.

Configuration: ``instrument()`` takes ``tracer_provider``, ``meter_provider``, ``capture_content`` and
``settings`` (see :class:`~otel_agents.instrumentors.OtelAgentsInstrumentor`); the environment
variables are those of every instrumentor (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``,
``OTEL_AGENTS_MAX_CONTENT_LENGTH``).

What you get
------------
Every entry point — ``Runner.run``, ``run_sync``, ``run_streamed`` — gives the same spans:

* ``invoke_workflow {workflow name}`` (``chain``, the run's root, under the application's current
  span): one per SDK trace (one per run, or one for all the runs inside ``with trace(...)``).
  ``gen_ai.workflow.name`` is ``RunConfig.workflow_name``; ``RunConfig.group_id`` becomes the
  ``session.id`` of every span of the run; its input is the run's input, its output the final output.
* ``invoke_agent {agent}`` (``agent``): the agent's input (the last user message of its first
  request) and output (its final text; or the final output its ``tool_use_behavior`` made from the
  tool results — ``stop_on_first_tool``, ``stop_at_tool_names``, a function — when the model is not
  asked again: no model span for that request, which was never made).
* ``chat {model}`` (``model``), one per request to a model: a ``response`` (Responses API) or
  ``generation`` (Chat Completions, LiteLLM) the SDK records, and a request to a model class of the
  user's own (an ``agents.Model`` subclass, which the SDK does not trace: our hook on
  ``get_response``/``stream_response`` of every subclass, defined before or after ``instrument()``,
  opens it; it fills from the ``ModelResponse`` and carries no provider or finish reason the model
  did not give). Never two for one request. System instructions, input and output messages in
  the parts model (reasoning summaries are ``reasoning`` parts, function calls ``tool_call`` parts,
  function outputs ``tool_call_response`` parts), the tools offered, response model and id, finish
  reason (of a Chat Completions request, which the SDK does not keep, the openai client's: our OpenAI
  client instrumentor on), token usage (input, output, cached input, reasoning). It is the current span while the SDK
  calls the OpenAI client, so our OpenAI client instrumentor does not add a second model span.
* ``execute_tool {tool}`` (``tool``): name, call id (matched to the model's call), arguments,
  result. A tool that raised is ERROR with the exception's type and keeps, as its result, the error
  text the model received (``failure_error_function``). User spans opened inside a tool hang under it.
  Arguments the SDK rejects before the function runs (not JSON, not an object, failing the parameters'
  validation: its ``ModelBehaviorError`` "Invalid JSON input for tool ...") make a refused call:
  ``error.type`` ``validation_error``, ``otel_agents.tool.denied``, the exception kept as its event. A call of
  a tool the agent lacks is not answered by the SDK: it raises ``ModelBehaviorError`` and the run fails (the
  agent span's error; no tool span, the SDK traces none).
* a handoff is a ``tool`` span named for the handoff tool (``transfer_to_{agent}``) with
  ``otel_agents.handoff.target``, under the agent that handed off; the receiving agent's span is
  nested under it, and the two stay open until the receiving agent is done, so the fold shows
  ``agent billing delegated_by=triage``; it ends as the receiving agent does (ERROR when it failed,
  abandoned when its run was cancelled or left). An agent used as a tool (``agent.as_tool``) is its tool
  span with the inner agent's span under it.
* input/output guardrails: a ``chain`` span ``guardrail {name}`` (OpenInference ``GUARDRAIL``,
  Langfuse ``guardrail``) with ``otel_agents.guardrail.triggered``; a tripped one is ERROR (``error.type``
  ``tripwire_triggered``, the SDK's word), and so are the agent and the run it stopped (the SDK's exception).
* a tool call the SDK stops for a human's approval (the run returns with ``interruptions``): a function, shell or
  apply_patch tool's ``needs_approval`` (custom tools' too) — its tool span and its agent's are marked
  ``otel_agents.run.paused``, with no result — or a hosted MCP server's ``mcp_approval_request`` with no
  ``on_approval_request`` — its agent is (the model's server runs that tool: no tool span). The ECP envelope is
  ``paused``. Read from where the SDK decides (:mod:`._wiring`): its spans do not say it (0.24 records a pending
  function tool's output as ``None``, as for a tool that returned ``None``, which stays not paused). A computer
  tool asks no approval (its ``on_safety_check`` answers at once). The run resumed from its ``RunState`` has its
  own workflow span (the SDK carries on the first run's trace without starting it again); approved, the tool runs
  and its span has its result; rejected, the tool span's result is what the model is told (the rejection
  message; only with ``trace_include_sensitive_data``), a span of its own where the SDK opens none.
* ``custom_span(name, data)``: a ``chain`` span named ``name`` with ``data`` as its input.
  MCP ``list_tools``, ``task``/``turn`` spans and the voice pipeline's spans are not agent steps:
  they make no span of ours (their children hang under the nearest one that does).

A run that fails — ``MaxTurnsExceeded``, a model error, a tripped guardrail — reaches the caller
unchanged, and the agent span and the workflow root are ERROR with the exception's type. A run the
SDK stopped says why on its agent span, ``otel_agents.run.stop_reason``: ``max_turns`` for
``MaxTurnsExceeded``, ``guardrail`` for a tripped input or output guardrail (from the exception's type, or
the data of the ``SpanError`` the SDK recorded when a streamed run raises it to the consumer only); the
answer an output guardrail blocked is not the agent's nor the run's output. An input guardrail that trips
stops the run before its answer: run in parallel with the first model request (the SDK's default), that
request has its model span when the SDK made it before the tripwire cancelled it (a streamed run does, a
non-streamed one usually does not), none when it never went out; with ``run_in_parallel=False`` there is
never one. A streamed run the caller cancels with ``RunResultStreaming.cancel()`` ends its spans abandoned,
the agent's with the stop reason ``cancelled``, and the tool it interrupted is not ok; with
``cancel(mode="after_turn")`` the SDK finishes the turn in flight (its model request and tools end as they
do) and ends the run without an exception: the agent span that ends with no output gets the stop reason
``cancelled`` (none when the run answered in that turn), and a handoff made in that turn, whose agent never
runs, ends with ``otel_agents.control_flow=interrupt`` (the caller stopped it: not ok, not an error; the ECP
fold reports it cancelled). A streamed
run abandoned half-way (the consumer stops, the event loop cancels the run) ends its spans as
abandoned (``otel_agents.stream.abandoned``), not as errors.

The SDK's own tracing
---------------------
The SDK traces itself, and by default exports every trace to OpenAI's dashboard (its batch
processor, whenever ``OPENAI_API_KEY`` is set). Our instrumentor neither starts nor stops that: it
adds one processor beside the SDK's. To keep your traces off OpenAI's servers and keep ours, call
``agents.set_trace_processors([])`` (or pass your own list), before or after ``instrument()``: our
processor stays registered either way, and ``uninstrument()`` removes only ours, leaving your list
as you set it. Another instrumentation that replaces the list (OpenInference's, exclusive by default)
does not remove ours either: it is registered again before the next run's trace, with one warning; the
fold keeps one step per real step when both trace a run. ``set_tracing_disabled(True)``, ``OPENAI_AGENTS_DISABLE_TRACING=1`` and
``RunConfig(tracing_disabled=True)`` make the SDK create no traces at all, so we see no runs and
record nothing: we honour them as the user's choice, log one warning when the switch is set while
we are instrumented, and ``otel-agents doctor`` says why there are no spans.
``RunConfig(trace_include_sensitive_data=False)`` keeps the SDK from giving processors any
messages or tool arguments: our spans then have structure, usage and errors but no content.

Design decision, and why
------------------------
The SDK's tracing-processor interface (``agents.add_trace_processor``) is its extension point, and it
sees every run, agent, model call, tool, handoff and guardrail, with their data, synchronously in the
task that runs them — which lets us make our span current exactly while the SDK's span is, so the
application's and the OpenAI client's spans nest right. Wrapping ``Runner`` methods instead would miss
hosted and MCP tools and the SDK's own parentage. ``wrapt`` is used only where the interface has no
answer (:mod:`._wiring`): a model class the SDK does not trace (:mod:`._models`), keeping our processor through
``set_trace_processors``, getting the exception object behind an error the SDK records as text,
and warning when tracing is switched off.

Limits
------
* A custom ``TraceProvider`` installed with ``set_trace_provider`` after ``instrument()`` does not
  have our processor: instrument again after setting it.
* The request's model name is not in the SDK's span data: model spans carry the response model.
* Realtime and voice sessions are not instrumented.
"""

from ._instrumentor import OpenAIAgentsInstrumentor

__all__ = ["OpenAIAgentsInstrumentor"]
