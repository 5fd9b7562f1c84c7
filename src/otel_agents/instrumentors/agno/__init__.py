"""Agno instrumentation: ``agent``, ``chain`` (teams, workflows, steps), ``model`` and ``tool`` spans.

Usage
-----
::

    from otel_agents.instrumentors.agno import AgnoInstrumentor

    AgnoInstrumentor().instrument(tracer_provider=provider)   # or otel_agents.instrument()
    agent.run("Where is my order?")
    AgnoInstrumentor().uninstrument()                          # Agno exactly as before

With no code change: ``opentelemetry-instrument python app.py`` loads it through
the ``agno`` entry point. Supported: ``agno >=3.1.10,<4`` (tested on 3.1.10). Importing
this module does not import Agno; the instrumentor installs when the
application imports it.

Configuration
-------------
``instrument()`` takes ``tracer_provider``, ``meter_provider``,
``capture_content`` and ``settings`` (see
:class:`~otel_agents.instrumentors.OtelAgentsInstrumentor`); content capture,
budgets and the stream idle timeout follow the same environment variables as
every instrumentor of ours (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``,
``OTEL_AGENTS_MAX_CONTENT_LENGTH``, ``OTEL_AGENTS_STREAM_IDLE_TIMEOUT``).

What you get
------------
* ``Agent.run``/``arun`` (plain, ``stream=True``, awaited or iterated) →
  ``invoke_agent {agent}`` (``agent``): ``gen_ai.agent.name``; ``gen_ai.agent.id``, the
  agent's stable id (the one given to it, or the one Agno derives from its name; none for a
  nameless agent, whose id Agno makes up at random); the input, the output (a structured output as JSON); ``session.id``,
  ``gen_ai.conversation.id`` and ``user.id`` from ``session_id``/``user_id``
  (argument or agent attribute), on the run span and every span under it.
  A run Agno reports as failed (it returns ``status=error`` rather than
  raising) ends with ERROR and the exception the failed step raised (none raised: ``error.type``
  ``_OTHER``, OTel's fallback, and Agno's message); a paused
  run (human in the loop) is marked ``otel_agents.run.paused``, and its
  ``continue_run``/``acontinue_run`` (``Agent``'s, ``Team``'s, ``Workflow``'s) is a
  run of its own (what it runs under it: the confirmed tool calls and model
  requests, a team's resumed member, a workflow's remaining steps; no input).
  ``arun(background=True)`` (Agno returns the run pending and runs it in a task
  of its own, ``agno.run.background._spawn_background``): the run's span ends
  when that run does, with its answer. An agent's
  or a team's post-hook (an output guardrail) that rejects the answer with ``OutputCheckError``
  ends the run ERROR with that exception and ``otel_agents.run.stop_reason``
  ``guardrail``; the rejected answer, which Agno still returns as the failed
  run's content, is not the span's output. (``tool_call_limit`` does not stop a
  run: Agno refuses the calls past it and asks the model again.) A run cancelled
  with ``Agent.cancel_run(run_id)``/``Team.cancel_run``/``workflow.cancel_run`` (Agno's cooperative
  cancellation: the run stops at its next check, after the running tool returns,
  and returns status ``cancelled`` or streams ``RunCancelled``) or by cancelling
  the task running it has ``otel_agents.run.stop_reason`` ``cancelled`` and no
  output: the content Agno returns then is its cancellation notice, or the text
  streamed before the cancel (in the model span), not an answer. What the cancelled run stopped with it
  is control flow, not an error: a team's ``delegate_task_to_member`` call ended by the member's
  ``RunCancelledException`` and a workflow step whose run was cancelled have ``otel_agents.control_flow``
  (that exception's name, ``cancelled``) and no ``error.type``.
* ``Team.run``/``arun`` → ``invoke_workflow {team}`` (``chain``, ``gen_ai.workflow.name`` = the team); the leader's
  model requests are ``model`` spans under it; ``delegate_task_to_member`` (and
  the other team tools) are ``tool`` spans, and the member's ``agent`` span is
  a child of its delegation tool span, with ``otel_agents.agent.parent`` = the
  team. Every team mode works the same way: members always run through
  ``Agent.run``/``arun`` inside a team tool. A streamed delegation the caller
  left unfinished ends abandoned with ``otel_agents.control_flow`` ``GeneratorExit``.
* ``Workflow.run``/``arun`` (plain or ``stream=True``) → ``invoke_workflow {workflow}``;
  its ``Step``, ``Steps``, ``Loop``, ``Condition``, ``Parallel`` and ``Router`` executions
  → ``chain`` spans named after the step, with agent and team runs inside. A step's
  output is its ``StepOutput``'s content; a ``StepOutput`` with ``success=False`` (a
  step that failed after its retries) ends the step span with ERROR. A workflow's or a
  step's stream carries its agents' and teams' events: those are theirs, not the
  workflow's, so an agent run that failed and that its step ran again does not fail
  the workflow. (Agno passes a failed agent run's content, or its "Step skipped due to
  error" notice, on as the workflow's content: that is the workflow span's output.)
* Each provider request → ``chat {model id}`` (``model``), for any subclass of
  ``agno.models.base.Model`` (the user's own included): request model,
  provider, input messages and tools offered, the output message, token usage
  (input, output, cache read/write, reasoning; absent when the model reports
  none). Messages are GenAI parts: ``reasoning_content`` → ``reasoning`` part
  (never text, redacted thinking never recorded), tool calls → ``tool_call``,
  tool results → ``tool_call_response``, media → media parts.
* Reasoning: Agno's separate reasoning agent (``reasoning_model=`` /
  ``reasoning_agent=``; Agno 3 replaced ``reasoning=True`` by these) runs
  through ``Agent.run``/``arun``, so it is an ``agent`` span of its own under
  the agent it reasons for, with its model spans inside. What it produces is
  thinking, never an answer: its model spans' output text and its own output
  are ``reasoning`` parts (``gen_ai.output.messages``; no ``output.value``
  text), and the ``<thinking>…</thinking>`` message Agno then hands the main
  model is one ``reasoning`` part of that model span's input. The run's
  ``output.value`` is the main model's answer only.
* With our ``openai``/``anthropic`` client instrumentors on as well, an Agno
  model class that calls those clients (``OpenAIChat``, ``Claude``…) still
  gives one ``model`` span per request — ours, current while the request runs
  (for a stream: while each step of it runs), which the client instrumentor
  enriches with the response id instead of opening a second span.
* Each tool call → ``execute_tool {tool}`` (``tool``): name, call id,
  description, arguments, result; a tool that raised ends with ERROR, ``error.type`` ``tool_error``
  (Agno keeps its message, not the exception).
  Memory and storage calls make no span.
* Each knowledge search (``Knowledge.search``/``asearch``, e.g. through the
  agent's ``search_knowledge_base`` tool) → ``retrieval {knowledge}``
  (``retriever``): query, documents found, ``gen_ai.data_source.id``.

Streams end when they do: an event stream consumed to the end ends its spans
then, one left early (``break``, ``close()``, dropped, idle past the timeout)
ends them as ``otel_agents.stream.abandoned`` with the output so far. One left
on an agent's or a team's ``RunCompleted`` event (``stream_events=True``; Agno
yields it once the run is stored) has given its whole run: finished, not
abandoned. Our spans are current only while Agno's code runs a step, never between the
events the caller receives, so after a ``break`` the application's next span
is a root.

Hooks, and why
--------------
Agno has no tracing processor or callback API of its own; its extension
points are tool hooks and pre/post hooks, which see tools and runs but not
model requests, and would have to be added to each agent. So we wrap, with
``wrapt``, the methods every run goes through on Agno's base classes:
``Agent.run``/``arun``, ``Team.run``/``arun``, ``Workflow.run``/``arun``, the
step classes' ``execute``/``aexecute``/``execute_stream``/``aexecute_stream``,
``Model._process_model_response``/``_aprocess_model_response``/``process_response_stream``/
``aprocess_response_stream`` (one call per provider request, on the base
class, so any model class is covered and none twice) and
``FunctionCall.execute``/``aexecute`` (one call per tool execution, inside
which the user's tool hooks run), ``Knowledge.search``/``asearch`` and
``ReasoningManager.reason``/``areason`` (to know the reasoning phase). ``uninstrument()`` puts the originals back.

Agno's own telemetry and tracing
--------------------------------
Agno sends usage telemetry about each run to its own service unless it is
turned off: set ``AGNO_TELEMETRY=false`` in the environment, or pass
``telemetry=False`` to ``Agent``, ``Team`` and ``Workflow``. Instrumenting
neither turns it on nor changes it, and sends nothing anywhere itself.
Agno's optional tracing (``agno.tracing.setup_tracing(db=...)``) installs
OpenInference's Agno instrumentation and its own tracer provider; when both
are on, its spans are a separate set and ours are unchanged (one span of ours
per run, request and tool call). Our ``uninstrument()`` leaves it working.

Limits
------
* A model request that Agno retries is one span covering the attempts.
* The tool span of a tool Agno caches (``cache_results``) still appears.
"""

from ._instrumentor import AgnoInstrumentor

__all__ = ["AgnoInstrumentor"]
