"""smolagents instrumentation: ``agent`` per run, ``chain`` per step, ``model`` per request, ``tool`` per call.

Usage
-----
::

    from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor

    SmolagentsInstrumentor().instrument(tracer_provider=provider)   # or otel_agents.instrument()
    agent.run("Where is my order?")
    SmolagentsInstrumentor().uninstrument()

With no code change: ``opentelemetry-instrument python app.py`` loads it through
the ``smolagents`` entry point. Supported: ``smolagents >=1.26.0,<2`` (tested on
1.26). Importing this module does not import smolagents; ``instrument()`` does
(or the application's own import, when that comes later).

Configuration: ``instrument()`` takes ``tracer_provider``, ``meter_provider``,
``capture_content`` and ``settings`` (see
:class:`~otel_agents.instrumentors.OtelAgentsInstrumentor`); the content switch
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``, ``OTEL_AGENTS_MAX_CONTENT_LENGTH``
and ``OTEL_AGENTS_STREAM_IDLE_TIMEOUT`` work as for every instrumentor.

What you get
------------
``ToolCallingAgent`` (tool calls as JSON) and ``CodeAgent`` (the model writes
Python that calls tools), sync or streamed (``run(stream=True)``,
``stream_outputs=True``):

* ``invoke_agent {name}`` (``agent``) per ``run`` — the agent's ``name`` (its class
  name when it has none), ``description``, the task as input, the final answer as
  output. ``final_answer`` is the answer: its tool span is marked
  ``otel_agents.tool.final_answer`` and the ECP fold leaves it out of
  ``tool_calls``. Reaching ``max_steps`` (smolagents then asks the model for a
  last answer and returns it) ends the run's span with ``AgentMaxStepsError`` and
  ``otel_agents.run.stop_reason`` ``max_turns``; its output is that last answer.
  A run its caller stopped with ``agent.interrupt()`` (smolagents raises
  ``AgentError`` before the next step) is a cancellation, not an error: ``otel_agents.control_flow``
  ``interrupt``, the stop reason ``cancelled``, status unset.
* ``step {n}`` (``chain``) per ``ActionStep`` and ``planning`` (``chain``) per
  ``PlanningStep``, under the agent span. A ``CodeAgent`` step's input is the code
  it ran, its output the execution logs and last value; a failed execution
  (``AgentExecutionError``, ``InterpreterError``…) is the step's error while the
  run goes on. A ``ToolCallingAgent`` step's input is its tool calls. A final
  answer the agent's ``final_answer_checks`` reject (smolagents then steps on and
  asks the model again) fails its step with smolagents' ``AgentError``: a failed
  step in the ECP envelope (``metrics.errors``), the run's output the answer
  accepted later.
* ``chat {model_id}`` (``model``) per ``generate``/``generate_stream`` call, under
  its step: the messages (GenAI parts: text, images as media parts, tool calls),
  the system prompt as ``gen_ai.system_instructions``, the tools offered
  (``gen_ai.tool.definitions``), the model's ``kwargs`` and the stop sequences as
  request parameters (the stop sequences only when smolagents sends them: not to a
  model without the stop parameter, such as OpenAI's o3, nor when the model's own
  ``kwargs`` set ``stop``), the answer, the finish reason when the provider's raw
  response has one (``LiteLLMModel``'s streams: the one LiteLLM received, see
  ``otel_agents.instrumentors._litellm``), and usage from ``ChatMessage.token_usage`` (summed over the
  deltas of a stream). No ``token_usage`` = no token attributes (unknown, not 0).
* ``execute_tool {tool.name}`` (``tool``) per call: name, description, arguments,
  result, errors — from JSON tool calls and from generated code alike (the
  local executor's worker thread runs in the caller's context, so these nest
  under the step that ran the code). A JSON tool call smolagents refuses before
  any tool runs — a tool name the agent lacks, arguments that fail its
  ``validate_tool_arguments`` — fails its step (the next step shows the model the
  error) and is a zero-length ``execute_tool {name}`` span, ERROR,
  ``otel_agents.tool.denied``, ``error.type`` ``unknown_tool`` / ``validation_error``,
  smolagents' error message as its result: the ECP envelope lists the call, failed.
* A managed agent (in another agent's ``managed_agents``), called by the
  manager as a tool or from its code: an ``execute_tool {name}`` span for the
  delegation (the tool name is the managed agent's name) with the managed run's
  ``invoke_agent`` span under it, carrying ``otel_agents.agent.parent`` = the manager
  (one span per call, also when a subclass's ``__call__`` calls its parent's).
  A managed agent's ``run`` called directly nests under the calling step the same way.

Streams end with the consumer: a streamed run's agent, step and model spans are
current only while the stream is advanced (the consumer's own work between
steps is not parented to them) and end when it is exhausted, closed, raises, or
is dropped (``otel_agents.stream.abandoned``; the generators below are closed
first so children end before their parents). A stream left on its last item has
given its whole result and is not abandoned: a run on its ``FinalAnswerStep``, a
step on its ``ActionOutput`` (a final answer the ``final_answer_checks`` reject
leaves its step there too: failed, not abandoned) or a planning step on its
``PlanningStep``.

Design decision, and why
------------------------
smolagents has no tracing of its own and one public observation hook, step
callbacks, which run when a step is over: too late to parent the step's model
and tool calls. Its public extension points are the methods users override —
``Model.generate``/``generate_stream``, ``Tool.__call__``/``forward``,
``MultiStepAgent.run``/``__call__`` — so that is where we hook, with ``wrapt``,
on the base class and on every subclass that defines its own (now and later,
through an ``__init_subclass__`` hook; see :mod:`._hierarchy`). Patching only
the model classes smolagents exports, as a widely used instrumentation does,
misses every user-defined model (field case SM-1). Steps are the two private
generators every step goes through (``_step_stream``, ``_generate_planning_step``),
and ``_validate_final_answer`` for the checks.
The local executor's ``timeout`` helper is wrapped so the code's worker thread
carries the caller's context (field case SM-2).

Limits
------
* Remote executors (E2B, Docker, Modal, WebAssembly) run tools in another
  process: their tool calls are not seen; the step span still shows the code.
* Models called by something other than an agent still get a model span; a
  model object's nested calls to itself give one span.
* ``uninstrument()`` restores every wrapped function; where another
  instrumentation wrapped one after us, ours stays in its chain, inert.
"""

from ._instrumentor import SmolagentsInstrumentor

__all__ = ["SmolagentsInstrumentor"]
