"""Google ADK instrumentation: ``agent``, ``chain`` (workflow agents), ``model`` and ``tool`` spans.

Usage
-----
::

    from otel_agents.instrumentors.google_adk import GoogleADKInstrumentor

    GoogleADKInstrumentor().instrument(tracer_provider=provider)   # or otel_agents.instrument()
    runner = Runner(app_name="support", agent=agent, session_service=InMemorySessionService())
    async for event in runner.run_async(user_id="u1", session_id="s1", new_message=...): ...
    GoogleADKInstrumentor().uninstrument()

With no code change: ``opentelemetry-instrument python app.py`` loads it through
the ``google_adk`` entry point. Supported: ``google-adk >=2.13.0,<3`` (tested
on 2.13.0). Importing this module does not import ADK; the instrumentor
installs when the application imports ``google.adk``.

Configuration
-------------
``instrument()`` takes ``tracer_provider``, ``meter_provider``,
``capture_content`` and ``settings`` (see
:class:`~otel_agents.instrumentors.OtelAgentsInstrumentor`); content capture and
budgets follow the same environment variables as every instrumentor of ours
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, ``OTEL_AGENTS_MAX_CONTENT_LENGTH``).

What you get
------------
* Each agent run (``LlmAgent`` or a custom ``BaseAgent``) → ``invoke_agent {agent}``
  (``agent``): ``gen_ai.agent.name``, description, the user's message as input
  (first agent of a run), the agent's last answer as output. A run ADK stopped at
  ``RunConfig.max_llm_calls`` (``LlmCallsLimitExceededError``) is ERROR with
  ``otel_agents.run.stop_reason`` ``max_turns`` on its agent spans (the request it
  refused was never made: no model span). The ADK session id
  → ``session.id`` and ``gen_ai.conversation.id``, the user id → ``user.id``, on
  every span of the run (ids are not content: also with content capture off).
* ``SequentialAgent``, ``ParallelAgent``, ``LoopAgent`` → ``invoke_workflow {agent}``
  (``chain``, a multi-agent orchestration in the semantic map), their sub-agents'
  spans inside; its output is the last answer given under it.
* Each model request → ``chat {model}`` (``model``), one span per request for
  any ``BaseLlm`` (the user's own included): request model and parameters,
  provider (``gcp.gemini`` for Gemini/Gemma, ``anthropic`` for Claude), input
  messages, system instruction, tools offered, the output message, finish
  reason (the model's own ``finish_reason``, normalised: ``STOP`` → ``stop``,
  also for a turn that calls functions, as Gemini sends it; none when the
  response carries none), token usage (input, output incl. thinking, cached, reasoning) from
  the response's ``usage_metadata``. Streaming (``StreamingMode.SSE``, live):
  the partial responses of a request make no span of their own; the output is
  the final response once (or, when every response was partial, the assembled
  text), usage is taken once. A response ADK reports as failed
  (``error_code``/``error_message``, no exception) ends the span with ERROR,
  ``error.type`` = the code, status description = the message.
  Messages are GenAI parts: Gemini ``thought`` text → ``reasoning`` (thought
  signatures never recorded), ``function_call`` → ``tool_call``,
  ``function_response`` → ``tool_call_response``, ``inline_data`` → blob,
  ``file_data`` → uri. A request a ``before_model_callback`` answers or fails
  (the model is never called) has no model span: the span opens, with the request's
  start time, only once the model answered, failed or was left.
* ``Runner.run_live`` (live mode): ADK calls no model callback per request there, so each turn of
  the live connection is one ``chat {model}`` span from the connection itself (every ``BaseLlm``
  subclass's ``connect()`` is wrapped; see :mod:`._live`): its input is what was sent for the turn
  (the user's content, the function responses; the connect request's system instruction and tools),
  its output the turn's content, usage the turn's last ``usage_metadata`` (Gemini Live sends it in a
  message of its own), finish reason only when a response carried one. A turn ends at
  ``turn_complete``/``interrupted``, at the next content sent (after a function call) or when the
  connection closes (then abandoned if the model was still answering; ERROR with the exception if the
  connection raised). Audio sent with
  ``send_realtime`` is not recorded as input.
* The agent's output is what the user got: the final answer event the runner
  hands out (plugin ``on_event_callback``), so a ``before_model_callback``'s
  answer in the model's place, or an ``after_model_callback``'s replacement of
  the model's answer, is the agent span's output (and the ECP envelope's
  ``public_output``), while the model span keeps what the model returned.
* Each tool execution → ``execute_tool {tool}`` (``tool``): name, call id,
  description, arguments, result; a tool that raised ends with ERROR. A call ADK
  answers without running a tool is ERROR with ``otel_agents.tool.denied``: a name
  the agent has no tool for (ADK raises ``ValueError`` for it, kept as the span's
  ``exception`` event, and tells the model so) ``error.type`` ``unknown_tool``;
  arguments a ``FunctionTool`` rejects (failed type validation, a mandatory
  parameter missing: ADK answers ``{"error": ...}`` and never calls the function)
  ``validation_error``, ADK's answer as the result.
  ``transfer_to_agent`` is a tool span recording ``otel_agents.handoff.target``;
  the target agent's span opens under it (``otel_agents.agent.parent`` = the
  agent that transferred), so the delegation tree shows the hand-off. An
  ``AgentTool`` is a tool span (``otel_agents.handoff.target`` = its agent) and
  the agent it runs (through a runner of its own) nests under it. A
  long-running tool, a tool confirmation or an auth request marks the tool and
  the run's agent spans ``otel_agents.run.paused``.
* A failed run (an exception ADK re-raises) ends every open span of the run with
  ERROR and the exception; the application gets ADK's exception unchanged.

Hook, and why
-------------
ADK's own extension point sees every step: a ``BasePlugin`` (before/after run,
agent, model and tool, their error callbacks, and every event) given to the ``Runner``.
Our :class:`~._plugin.OtelAgentsPlugin` opens and ends spans there and returns
``None`` from every callback (it never changes what ADK does). ADK has no
global plugin registry, so ``wrapt`` wraps ``Runner.__init__`` only to put our
plugin first in each runner's list (see :mod:`._wiring`); nothing else of ADK is
patched. The callbacks hand over no span, so we key open spans by ADK's
invocation id, agent name and function-call id (bounded, see :mod:`._runs`) and
give every span its parent explicitly. Only a tool span is made current, while
its tool runs (ADK awaits ``before_tool_callback``, the tool and
``after_tool_callback``/``on_tool_error_callback`` in one task; we detach only
in the context we attached in), so the application's spans inside a tool nest
under it. Agent and model spans are never current: ADK drives them through
async generators whose steps run in whichever context pulls them.

ADK's own spans
---------------
ADK traces itself with one module tracer (scope ``gcp.vertex.agent``:
``invocation``/``invoke_workflow``, ``invoke_agent``, ``call_llm``/
``generate_content``, ``execute_tool``), GenAI-semconv spans of the very steps
ours record, in a tree of its own beside ours: exported together, every run,
model request and tool call would show twice in a backend and in the ECP fold.
So while we are instrumented ADK's tracer is stood down (:mod:`._native`): its
spans do not record, stand in for their parent in the context (our spans keep
their parents) and absorb what ADK writes on "the current span". ``uninstrument()``
gives ADK its tracer back. An application that sets ADK's module tracer itself
after ``instrument()`` gets ADK's spans again; the fold still counts each step
once (a foreign span that duplicates one of our steps — same tool call id, same
request, same agent — is not a step of its own). Why not enrich or re-parent
ADK's spans instead: ADK opens them in its own context scopes around each step,
writes the model attributes of several requests onto one span and makes them
current in ways a plugin cannot follow (case ADK-1). Instrumenting sends
nothing anywhere.

Limits
------
* Application spans opened by a model class or an agent callback (outside a
  tool) nest under ADK's spans or the caller's, not ours: agent and model spans
  are never current.
* A run whose event stream the caller leaves before the end (a ``break`` out of ``async for``, ``aclose()``, the
  events dropped; ``Runner.run``'s generator closed or dropped) ends its spans marked
  ``otel_agents.stream.abandoned``, a model span with what it had streamed and no finish reason; where ADK stops
  the run by cancelling the task running it, the cancellation stays on them as control flow (stop reason
  ``cancelled``), no error. An ADK that calls no ``after_run_callback`` then leaves them to end, abandoned, when
  it drops the invocation context (a ``weakref.finalize``), or at the latest when
  :data:`~._runs.MAX_INVOCATIONS` newer invocations evict it or at ``uninstrument()``.
* A run whose task is cancelled gets no ``after_run_callback`` either (ADK 2.x): the cancellation coming out of
  ``run_async``'s events ends its spans as control flow (``otel_agents.control_flow``
  ``asyncio.exceptions.CancelledError``, no ``error.type``), the agent's stop reason ``cancelled``, as in every
  framework (:class:`~._runs.CancellableRun`).
* A live model span of a turn the caller's content started is found by its agent: the live agent whose
  ``before_agent_callback`` ran last in the task that opens the connection (ADK opens it there);
  a connection opened elsewhere gets no model spans.
* Only ``Runner``s whose root is an agent (``BaseAgent``) are tested; a root that
  is an ADK 2 ``Workflow`` graph node goes through ADK's node runtime.
"""

from ._instrumentor import GoogleADKInstrumentor

__all__ = ["GoogleADKInstrumentor"]
