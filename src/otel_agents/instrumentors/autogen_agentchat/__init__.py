"""AutoGen AgentChat instrumentation: ``agent``, ``chain`` (teams), ``model`` and ``tool`` spans.

Usage
-----
::

    from otel_agents.instrumentors.autogen_agentchat import AutoGenAgentChatInstrumentor

    AutoGenAgentChatInstrumentor().instrument(tracer_provider=provider)  # or otel_agents.instrument()
    await agent.run(task="Where is my order?")
    AutoGenAgentChatInstrumentor().uninstrument()                         # AutoGen exactly as before

With no code change: ``opentelemetry-instrument python app.py`` loads it through
the ``autogen_agentchat`` entry point. Supported: ``autogen-agentchat >=0.7.5,<0.8``
(tested on 0.7.5, with ``autogen-core`` and ``autogen-ext`` of the same version).
Importing this module does not import AutoGen; the instrumentor installs when the
application imports ``autogen_agentchat``. Instrument before building agents:
an agent built earlier has already emitted autogen-core's ``create_agent`` span.

Configuration
-------------
``instrument()`` takes ``tracer_provider``, ``meter_provider``,
``capture_content`` and ``settings`` (see
:class:`~otel_agents.instrumentors.OtelAgentsInstrumentor`); content capture,
budgets and the stream idle timeout follow the same environment variables as
every instrumentor of ours (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``,
``OTEL_AGENTS_MAX_CONTENT_LENGTH``).

What you get
------------
* ``BaseChatAgent.run``/``run_stream`` and each agent class's ``on_messages``/
  ``on_messages_stream`` (``AssistantAgent``, ``UserProxyAgent``,
  ``SocietyOfMindAgent``, the user's own) → ``invoke_agent {agent}`` (``agent``):
  ``gen_ai.agent.name``, the description, the task or new messages as input, the
  final response's text as output. One call chain of one agent is one span.
* A team — ``BaseGroupChat.run``/``run_stream``: ``RoundRobinGroupChat``,
  ``SelectorGroupChat``, ``Swarm``, ``MagenticOneGroupChat``, ``GraphFlow`` →
  ``invoke_workflow {team}`` (``chain``). Each agent turn (the team's runtime
  calls ``on_messages_stream``) is an ``agent`` span under the team span, with
  ``otel_agents.agent.parent`` = the agent that handed off to it (Swarm) or
  else the team (its speaker choice): the ECP fold's ``delegated_by``. How the team
  run stopped is ``otel_agents.run.stop_reason`` on the team span, read from the
  ``StopMessage`` the group chat manager signals (the ``TaskResult.stop_reason`` text's
  source): a termination condition's ``source`` names it (``MaxMessageTermination``
  → ``max_turns``, ``TokenUsageTermination`` → ``budget``, any other, e.g.
  ``TextMentionTermination`` → ``termination``); the team's own ``max_turns`` →
  ``max_turns`` (``MagenticOneGroupChat``: its orchestrator past its ``max_turns``
  rounds). A run cut off by a cap has no output (its last message is not an
  answer), except ``MagenticOneGroupChat``'s, whose orchestrator still writes a final
  answer, the run's output. ``MagenticOneGroupChat`` ending by its orchestrator's final answer and
  ``GraphFlow`` ending by completing its graph have no stop reason (they finished).
  The ``SelectorGroupChat`` speaker selector's model request, and each of
  ``MagenticOneGroupChat``'s orchestrator's (facts, plan, progress ledgers, the
  final answer, which is the team's output), is a ``model`` span directly under
  the team span, in no agent's usage. A team used as a participant, ``AgentTool``
  or ``TeamTool`` nests the same way; the stop reason of a team used as a tool is
  that team's, not the run's (the ECP fold reads the run's outside its tool calls).
* Each ``ChatCompletionClient.create``/``create_stream`` call → ``chat {model}``
  (``model``), for every client class — autogen_ext's, ``ReplayChatCompletionClient``,
  the user's own subclass (classes defined after ``instrument()`` included):
  request model (the client's ``model``, else its ``model_info`` family), provider
  (autogen_ext's OpenAI/Azure/Anthropic/Ollama clients), input messages as GenAI
  parts (``thought`` → ``reasoning`` or ``text``, as below; ``FunctionCall`` → ``tool_call``,
  ``FunctionExecutionResult`` → ``tool_call_response``, images → media parts),
  tools offered, output, finish reason (``function_calls`` → ``tool_call``),
  usage from ``CreateResult.usage`` (``RequestUsage``). ``RequestUsage(0, 0)``
  (a stream that carried no usage chunk) is recorded as not reported, not as 0.
  ``reflect_on_tool_use`` is a second model span; parallel tool calls are sibling
  tool spans between the two.

  ``thought`` (of a ``CreateResult``, and of an ``AssistantMessage`` in the input) holds two things, which
  AutoGen documents together ("the reasoning text for the completion if available. Used for reasoning models
  and additional text content besides function calls"); each is written as the GenAI part it is:

  - beside a text answer (``content`` a ``str``): reasoning, in every ``autogen_ext`` client (an
    OpenAI-compatible API's ``reasoning_content``, the ``<think>`` block of an R1-family model, Anthropic's
    thinking blocks) → ``reasoning``;
  - beside tool calls (``content`` a list of ``FunctionCall``): the text the model wrote before its calls (the
    OpenAI, Azure OpenAI, Azure AI Inference, Ollama and llama.cpp clients put the message's text there, and
    drop any reasoning) → ``text``; except from ``autogen_ext``'s Anthropic clients (direct or Bedrock, a
    subclass of either, also behind ``ChatCompletionCache``) asked for extended thinking (``thinking`` in the
    call's ``extra_create_args``, else in the client's create arguments, of a type other than ``disabled``),
    which put Claude's thinking blocks there → ``reasoning``;
  - a client of the user's own is taken to follow AutoGen's documented split (the two rules above).
* Each tool execution (``BaseTool.run_json``, ``BaseStreamTool.run_json_stream``)
  → ``execute_tool {tool}`` (``tool``): name, call id, description, arguments,
  result; a tool that raised ends with ERROR. A handoff (``transfer_to_…``) is a
  tool span recording ``otel_agents.handoff.target``; so is ``AgentTool``/``TeamTool``.
  A call ``AssistantAgent`` answers with an error and no tool run (a name no
  workbench has, arguments that are not JSON) is a zero-length refused tool span:
  ERROR, ``otel_agents.tool.denied``, ``error.type`` ``unknown_tool`` /
  ``validation_error``, AutoGen's error text as the result. So is a call whose
  arguments ``run_json`` rejects (its ``args_type`` validation) before the tool
  runs: its span ERROR, ``otel_agents.tool.denied``, ``validation_error``.

Every span ends: on the result, on an exception, when a stream is exhausted, or
when it is closed/dropped unfinished (``otel_agents.stream.abandoned``, output so
far); one left on its last item (``run_stream``'s ``TaskResult``, ``on_messages_stream``'s
``Response``, ``create_stream``'s ``CreateResult``) has given its whole result: finished,
not abandoned. A stream dropped unfinished is closed on its loop, as the loop itself closes a
dropped async generator, and its span ends once that is done. A team's ``run_stream``
left by its caller (closed or dropped) waits, as it closes, for the team's runtime to
finish the run (AutoGen's own ``finally``): the agents' remaining turns nest under the
team span, which ends after them, abandoned, with the team's last message as its output
and its stop reason once the manager signalled the end. A ``CancellationToken`` cancellation ends every open span
as control flow, as in every framework: ``otel_agents.control_flow`` ``asyncio.exceptions.CancelledError``, no
``error.type``, status unset (not abandoned); a cancelled agent span, and the span of a team it
stopped, have ``otel_agents.run.stop_reason`` ``cancelled``. (AutoGen 0.7.5 itself hangs
when the token is cancelled while a tool runs: see ``docs/support-matrix.md``.) Our spans are current only
while AutoGen's code runs a step, never between the items a caller receives from
``run_stream``.

Hooks, and why
--------------
AgentChat has no tracing processor or callback API; its observable outputs are the
message stream and Python logging (``EVENT_LOGGER_NAME``), which see messages but
not when a model request or a tool starts and ends, nor their context. So we wrap,
with ``wrapt``, the methods every run goes through: ``BaseChatAgent.run``/
``run_stream``, ``on_messages``/``on_messages_stream`` on every agent class,
``BaseGroupChat.run``/``run_stream``, ``create``/``create_stream`` on every
``ChatCompletionClient`` class (an ``__init_subclass__`` on the base classes
covers classes defined later; a ``create`` that calls another — ``super()``, a
cache around a client — is one span), and ``BaseTool.run_json``/
``BaseStreamTool.run_json_stream``. ``uninstrument()`` puts the originals back.

autogen-core's own spans
------------------------
autogen-core emits OpenTelemetry spans with the global tracer provider: GenAI
``create_agent``/``invoke_agent``/``execute_tool`` spans and, for each message in
a team's runtime, ``autogen create/send/publish/process/ack`` spans. While we are
instrumented they are suppressed (non-recording, the context untouched): the GenAI
ones duplicate ours and ``create_agent`` spans would be roots of their own traces;
the messaging ones are plumbing (dozens per team run). So a team run is one trace
with one span per step. ``uninstrument()`` restores them. See :mod:`._native`.

Provider clients: with our ``openai`` instrumentor on too, ``OpenAIChatCompletionClient``'s
request runs while our model span is current, so the client enriches it (response id, usage)
instead of opening a second one: one model span per request, streamed or not
(``tests/autogen_agentchat/test_provider_client.py``).

Limits
------
* A team whose runtime is passed in (not the embedded one) gets the selector's
  model span under whatever context that runtime was started in.
* The usage of a cached response (``ChatCompletionCache``) is the cached usage.
* With the runtime's messaging spans suppressed, a distributed runtime
  (``GrpcWorkerAgentRuntime``) no longer links the spans of one message across
  processes; an agent hosted in another process starts its own trace.
"""

from ._instrumentor import AutoGenAgentChatInstrumentor

__all__ = ["AutoGenAgentChatInstrumentor"]
