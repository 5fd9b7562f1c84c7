"""Claude Agent SDK instrumentation: ``agent``, ``model`` and ``tool`` spans from the CLI's stream.

Usage
-----
::

    from otel_agents.instrumentors.claude_agent_sdk import ClaudeAgentSDKInstrumentor

    ClaudeAgentSDKInstrumentor().instrument(tracer_provider=provider)  # or otel_agents.instrument()
    async for message in query(prompt="Where is my order?", options=options):
        ...
    ClaudeAgentSDKInstrumentor().uninstrument()                         # the SDK exactly as before

With no code change: ``opentelemetry-instrument python app.py`` loads it through the
``claude_agent_sdk`` entry point. Supported: ``claude-agent-sdk >=0.2.140,<0.3`` (tested on
0.2.140 in ``.venv-floor`` and 0.2.190 in ``.venv`` and ``.venv-newest``). Install:
``pip install 'otel-agents[claude-agent-sdk]'`` (the SDK's wheels bundle the Claude Code CLI, ~164 MB); with a
CLI of your own, ``--no-binary claude-agent-sdk`` builds the small sdist without it. Importing this module does not import the SDK.

Configuration
-------------
``instrument()`` takes ``tracer_provider``, ``meter_provider``, ``capture_content``,
``settings`` (see :class:`~otel_agents.instrumentors.OtelAgentsInstrumentor`) and
``stream_usage`` (default ``True``, see *Usage and cost*).

What you get
------------
The SDK runs the Claude Code CLI and talks stream-json to it; each API response reaches it as
several ``assistant`` frames (one content block each, sharing one ``message.id``). We read the
frames as they arrive and build:

* ``query()``, and each ``ClaudeSDKClient.query()`` up to its ``ResultMessage`` (whichever
  receive method the caller iterates) → ``invoke_agent claude`` (``agent``): the prompt as
  input, the result text (``structured_output`` when set) as output, ``session.id`` /
  ``gen_ai.conversation.id`` = the CLI's session id unless ``otel_agents.using_session()`` set
  one (the caller's id wins), ``llm.cost.total`` = the turn's cost (see *Usage and cost*), and the result's
  ``claude_agent_sdk.result.subtype``, ``claude_agent_sdk.terminal_reason``, ``.num_turns``,
  ``.duration_api_ms``, ``.permission_denials`` (a count) and ``claude_agent_sdk.result.usage``
  (JSON: the result's ``usage`` and ``modelUsage``, as reported: ``modelUsage`` is the CLI process's running
  total). An ``is_error`` result is ERROR with
  ``error.type`` = its subtype (``error_max_turns``, ``error_during_execution``…) and the
  result's ``errors`` (else its ``result`` text) as the description; ``api_error_status`` →
  ``http.response.status_code``. A failed API request (a usage or rate limit, no login, an overloaded API)
  the CLI reports as subtype ``success`` with ``is_error``: its ``error.type`` is then the result's
  ``terminal_reason`` (``api_error``), else ``api_error`` when ``api_error_status`` is set, else ``error``. A run
  the CLI stopped at a cap says so: ``otel_agents.run.stop_reason`` ``max_turns`` for the subtype
  ``error_max_turns`` (or ``terminal_reason`` ``max_turns``: ``ClaudeAgentOptions.max_turns``), ``budget``
  for ``error_max_budget_usd`` (``ClaudeAgentOptions.max_budget_usd``), ``termination`` for ``terminal_reason``
  ``hook_stopped`` (a hook answered ``continue: false``), whether or not the result is flagged
  ``is_error`` (some CLI versions write ``false`` for ``error_max_turns``; the status follows the flag).
* A prompt written while a turn runs (a second ``client.query()`` before the first's result, the next
  message of a streamed prompt) is not that turn's input: the CLI either takes it into the running turn
  (its frames list the prompt's ``uuid`` in ``user_message_uuids``: it joins that turn's conversation
  there) or answers it in a turn of its own, whose input it is. A prompt sent without a ``uuid`` (a
  plain string) that the CLI took into the running turn, or merged with another to start one, is taken
  for a later turn's.
* One ``chat {model}`` (``model``) per API response — per ``message.id`` per conversation
  thread, never per frame: from the moment its request was complete (the prompt, or the tool
  results it answers) to its last frame; input messages rebuilt from the stream, the system
  prompt from the options (a string ``system_prompt``), the main agent's tools by name (the CLI's
  ``init`` lists names only; a subagent's are not listed), the conversation so far on a
  ``ClaudeSDKClient``'s later turns (the CLI sends it), output parts (``thinking`` →
  ``reasoning``, ``tool_use`` → ``tool_call``), finish reason, response id and model. A failed request
  (the message the CLI writes for it carries ``error`` and model ``<synthetic>``: no model answered) is
  ERROR with ``error.type`` = that ``error`` (``rate_limit``, ``authentication_failed``…), named after the
  requested model, with no response model, id or usage.
* One ``execute_tool {tool}`` (``tool``) per ``tool_use`` id, opened at its block and ended by
  its ``tool_result``: arguments and result; ``is_error`` → ERROR ``error.type=tool_error``. A
  call that ``can_use_tool`` denied is ERROR ``error.type=permission_denied`` with
  ``otel_agents.tool.denied=true`` (a denial, not a failure); one a ``PreToolUse`` hook denied
  also carries ``otel_agents.guardrail.triggered=true``. A denial the CLI decides itself (settings
  rules, ``permission_mode``) asks no one: its ``tool_result`` looks like a failure, so a failed
  call's span is held (at most 256 per turn) until the turn's ``result``, whose
  ``permission_denials`` names the denied calls (by ``tool_use_id``); it ends with its ``tool_result``'s
  time either way. A turn that ends without a result ends them as failures. A call a ``PreToolUse`` hook
  deferred (``permissionDecision`` ``defer``: the result's ``deferred_tool_use``, ``AskUserQuestion``…) never
  ran: the run waits for its caller's decision, so the call's span and the agent span are marked
  ``otel_agents.run.paused`` (the envelope's status is ``paused``).
* The user's callbacks, each a ``chain`` span under the tool call it is about (else the turn),
  current while it runs so its own spans nest there: a ``PreToolUse`` hook → ``guardrail
  PreToolUse`` (OpenInference ``GUARDRAIL``, ``otel_agents.guardrail.triggered`` = it denied),
  another hook → ``hook {event}``, ``can_use_tool`` → ``permission {tool}``
  (``claude_agent_sdk.permission.decision`` = ``allow``/``deny``); input and answer as content.
* Subagents (the ``Agent`` tool, ``Task`` on older CLIs): the tool span records
  ``otel_agents.handoff.target`` = ``subagent_type`` and parents ``invoke_agent {subagent_type}``
  (``agent``, ``otel_agents.agent.parent=claude``), whose model and tool spans are built from the
  frames carrying its ``parent_tool_use_id``. It ends with its tool call; a background one
  (``run_in_background``: its call returns at once) at its task's terminal status
  (``task_notification``/``task_updated``: ``failed`` → ERROR, ``stopped``/``killed`` → control
  flow), after the turn's result if need be, or when the session closes; its tool calls in flight
  outlive the turn's result too (ended with it if the session closes first: abandoned, or with the
  cancellation or error that closed it). The CLI makes tasks of other calls too (``task_type``
  ``local_bash``: a Bash command, in the foreground as well): their ``task_*`` frames open no agent span,
  the call stays one tool span ended by its result.
* A turn the CLI starts itself — a background subagent's end wakes the main agent for a follow-up
  turn, with a result of its own, without a prompt of the caller's — is traced as a turn: inside
  ``query()`` it belongs to the same run (the ``invoke_agent claude`` span of the call, whose output
  becomes the follow-up's result; a result given while a background subagent still works is the
  run's output only if no later one comes, so a run cancelled before its follow-up has none), on a
  ``ClaudeSDKClient`` it is a new ``invoke_agent claude`` span. Its model calls continue the main
  conversation, each from when its request was made (after the result, or the task's end).

SDK MCP tools
-------------
A tool of an SDK MCP server (``create_sdk_mcp_server``, ``mcp__{server}__{tool}``) runs in this
process: the CLI sends ``tools/call`` through an ``mcp_message`` control request and the SDK's bridge
runs the real ``mcp`` server. Its tool span records ``mcp.method.name=tools/call`` (the CLI is the
MCP client) and names the tool as the server does (``execute_tool lookup_order``, ``gen_ai.tool.name``
``lookup_order``: the name ``tool_calls[].name`` and a manifest's ``tool_usage`` grader use, as for the same
tool in any other framework); the model span keeps what the model called (``mcp__support__lookup_order``),
and the ECP fold's ``calls=`` names the call as its tool line does (its MCP tool span, by call id), so one
call has one name in the evidence. We add the tool span's W3C trace context to the request's ``params._meta``: the
handler runs inside the tool span (so spans the user's code opens nest under it), and with our MCP
instrumentor on, its server span (``SERVER``) nests there too — the fold lists the call once. The
handler's context is the one the request carries: on mcp 1.x we wrap the server's ``tools/call``
handler at its first traced call (it reads ``request_ctx``; the server stays wrapped, whenever it was
made); mcp 2.x runs the handler in that context itself (tested on mcp 1.30 and 2.3).

Usage and cost
--------------
The ``assistant`` frames repeat a usage snapshot whose output count is interim (0–1): the true
output tokens of a response come only in its ``message_delta`` partial-message event (which also restates
the input counts when they grew after ``message_start``, as a server tool's searches make them: those
restated counts are the ones recorded). So, by
default, the instrumentor runs the CLI with ``include_partial_messages`` on and drops those
``StreamEvent`` frames before the SDK sees them (the caller gets exactly the messages it asked
for; the CLI writes more lines). Model spans then carry true input, cache and output tokens per
call, and the ECP envelope's ``usage`` (summed over model spans) is the run's true total,
subagents included — the totals of ``ResultMessage.model_usage``. (``ResultMessage.usage``
counts the main thread only.) With ``stream_usage=False``, or a custom ``transport=``, partial
messages are as the user set them; without them model spans report no output tokens rather
than a false count. The CLI's ``total_cost_usd`` is the running total of its process, which serves
every turn of a session (anthropics/claude-code#83239): the agent span's ``llm.cost.total``, and the
envelope's ``metrics.cost_usd``, is the turn's share, its result's total less the previous result's
(the CLI's own figure, not a re-pricing; a ``query()`` run is its whole process). A client taken up
mid-session (connected before ``instrument()``) has had results we never saw: its turn's cost is left
out until one is seen (the envelope then prices the model spans' usage). On a resumed session
(``resume``/``continue_conversation``) newer CLIs (>= 2.1.277) are reported to restate the session's
earlier totals in the first result too; that is not subtracted (untested against a real CLI).

Endings
-------
Every span ends: at the ``result`` (a response, tool call or subagent still running then — the CLI ended
the run, at a cap such as ``max_budget_usd`` or on an error, before it returned — never returned: it ends marked
``otel_agents.control_flow`` = ``stopped``, status UNSET, and the fold lists such a call as not ok, cancelled,
with no result); when the caller stops iterating ``query()`` early (open spans
marked ``otel_agents.stream.abandoned``; they end as the caller lets the stream go, before the SDK's generator is
closed: a stream dropped in ``asyncio.run`` is closed by a task the loop's shutdown never finishes); on an exception (``ProcessError``, ``ResultError``,
``CLIConnectionError``: ERROR with the exception's type, re-raised unchanged) or cancellation;
when the CLI's output ends before the turn's ``result`` (the CLI crashed, was killed or exited), on either
path: what is still open — the turn, its tool calls and callbacks, a response cut off before its
``message_delta``, its subagents, background ones included — is ERROR with the exception the SDK's reader
raised (``ProcessError`` for a non-zero exit status; a ``ClaudeSDKClient``'s caller gets it from
``receive_messages()``), else ``error.type`` ``no_result`` (exit status 0: the SDK's iterators just end,
with no exception; the cut-off response itself: ``stream_incomplete``, as every model stream that ends without
its terminal event); a cut-off response gets no output tokens or finish reason (none came);
at ``ClaudeSDKClient.disconnect()``, or, for a client never disconnected, when its session is freed
(its event loop closed) or at exit (open spans marked abandoned). An ``interrupt()`` (or a denial with ``interrupt=True``,
or a ``terminal_reason`` ``aborted_*``) ends the turn and its open spans as interrupted —
``otel_agents.control_flow=interrupt`` — not as errors; the turn's agent span has
``otel_agents.run.stop_reason`` ``cancelled``, and the ECP fold reports the interrupted tool
``cancelled``, not ok.

Hooks, and why
--------------
The SDK has no tracing API; its stream is the structure. We wrap, with ``wrapt``:
``InternalClient.process_query`` (what ``query()`` runs, bound under any import name) for the
run's span, current while the SDK's generator runs each step, so the CLI's ``TRACEPARENT``
(the SDK puts the current context in the CLI's environment) names it and the SDK's read task,
hook and permission callbacks inherit it; ``ClaudeSDKClient.connect``/``disconnect``, and
``query``/``receive_messages`` (where a client connected earlier is taken up);
``Query._handle_control_request`` (the user's callbacks, and the CLI's requests as they arrive) and
``_handle_sdk_mcp_request``; and ``Query.__init__``, which taps per instance its message stream
(``_message_send``, which its reader task looks up for each frame, so a running session can be
tapped too: the frames on arrival) and its transport's ``write`` (the prompts, interrupts and
permission answers as written). All state is per ``Query``. We inject no hooks of our own: they
would cost two control round trips per tool call and run beside the user's.

Sessions that started before ``instrument()``
---------------------------------------------
A ``ClaudeSDKClient`` connected before ``instrument()`` (or under an earlier one, kept across
``uninstrument()``) is taken up at its next ``query()`` or ``receive_messages()``/``receive_response()``
call and traced from its next prompt on, with the same spans (hooks, permission callbacks and SDK
MCP tools included); a turn already under way then is left untraced (its frames are skipped up to
its ``result``). Its CLI was started without us: its model spans have output tokens only if the
user turned partial messages on, and the CLI's ``TRACEPARENT`` is what was current at ``connect()``.
A ``query()`` run that started before ``instrument()`` is not traced; the next one is. An SDK MCP
server made before ``instrument()`` (``create_sdk_mcp_server`` at import) runs its handlers inside
the tool span like one made after. After ``uninstrument()`` a session we tapped stays tapped but
feeds nothing, and partial messages we turned on stay hidden from its caller.

Own telemetry
-------------
The SDK makes no spans. The CLI exports its own only when the user sets
``CLAUDE_CODE_ENABLE_TELEMETRY=1``; instrumenting never turns it on.

Limits
------
* Denials the CLI decides itself (settings rules, permission modes) are counted on the agent span
  only; hooks from settings files run in the CLI and are not spans.
"""

from ._instrumentor import ClaudeAgentSDKInstrumentor

__all__ = ["ClaudeAgentSDKInstrumentor"]
