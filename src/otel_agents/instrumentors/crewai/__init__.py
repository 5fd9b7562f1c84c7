"""OpenTelemetry spans for CrewAI: ``crewai >=1.15.30,<2`` (tested on 1.15.44 in ``.venv`` and ``.venv-litellm``,
1.15.30 in ``.venv-peers``).

Usage::

    from otel_agents.instrumentors.crewai import CrewAIInstrumentor

    CrewAIInstrumentor().instrument()            # or instrument(tracer_provider=provider)
    crew.kickoff()                               # one trace per kickoff
    CrewAIInstrumentor().uninstrument()          # removes exactly what instrument() added

or ``otel_agents.instrument()`` for every installed framework, or zero-code:
``opentelemetry-instrument python app.py`` (entry point ``crewai``).
``instrument()`` keyword arguments: ``tracer_provider``, ``meter_provider``,
``capture_content`` (``None`` follows the environment), ``settings``.

What you get, in one trace per kickoff:

=====================================  ======================================================
CrewAI                                 span
=====================================  ======================================================
``Crew.kickoff`` / ``kickoff_async``   ``chain`` ``invoke_workflow {crew name}``
/ ``akickoff``
a task executed by an agent            ``agent`` ``invoke_agent {role}``; attributes
                                       ``otel_agents.task.name``, ``otel_agents.task.id``
delegated work (a coworker)            ``agent`` nested under the delegating agent's tool
                                       span; ``otel_agents.agent.parent`` = delegator's role
``Agent.kickoff`` (no crew)            ``agent`` ``invoke_agent {role}``
``Flow.kickoff``                       ``chain`` named by the flow, one ``chain`` per method
every ``BaseLLM.call`` / ``acall``     ``model`` ``chat {model}`` — messages as typed parts,
                                       the system prompt as system instructions, the
                                       tools offered, parameters, usage, finish reason,
                                       response id
every tool call                        ``tool`` ``execute_tool {tool}`` — arguments, result,
                                       ``otel_agents.tool.cached`` for cache hits; ERROR when
                                       CrewAI caught a failure (``error.type`` its code, else
                                       ``tool_error``)
a tool call CrewAI refused (the tool   ``tool``, ERROR, ``otel_agents.tool.denied``,
did not run)                           ``error.type`` = CrewAI's reason: ``repeated_call``
                                       (the same input twice in a row), ``usage_limit``,
                                       ``unknown_tool``, ``invalid_input`` (a ReAct action
                                       that does not parse); ``permission_denied`` when a
                                       ``before_tool_call`` hook blocked it. A failed tool
                                       call in the ECP envelope, never an ok one
a ``load_skill`` call                  ``skill`` ``execute_tool load_skill``,
                                       ``otel_agents.skill.name``
a skill injected into the prompt       ``skill`` ``skill {name}`` (zero length)
each check of a task guardrail         ``chain`` ``guardrail {function}``; ERROR
                                       (``error.type`` ``guardrail_rejected``) when it
                                       rejects the output and CrewAI has the agent
                                       execute the task again: a failed step in the ECP
                                       envelope, the accepted output the run's output
=====================================  ======================================================

``kickoff_for_each`` / ``kickoff_for_each_async`` / ``akickoff_for_each`` kick off
one copy of the crew per input: each input's kickoff is a run of its own, with its
own ``invoke_workflow`` span and, called outside any span of yours, its own trace
and ECP envelope (the async variants run them concurrently; when one fails first,
the runs ``asyncio.run`` then cancels end with ``otel_agents.run.stop_reason``
``cancelled``). A flow (``Flow.kickoff`` / ``kickoff_async``) is one run: the crew a
method kicks off nests under that method's span, and the flow's return value is
the run's output.

Cancelling the task that awaits ``kickoff_async``, ``akickoff``, a ``*_for_each``
variant or a flow does not stop the crew: CrewAI runs ``kickoff_async`` and a
flow's sync methods in worker threads, and its agent executor runs each tool
step in a worker thread (an async tool under an ``asyncio.run`` of its own). With
``kickoff_async`` the whole run goes on in its thread and its spans end as it
does; with ``akickoff`` the crew and agent spans end at the cancellation (the
agent's ``otel_agents.run.stop_reason`` ``cancelled``) and the tool span of the
step still running ends when that step does.

Every model is covered, whatever its class: CrewAI's provider classes (what
``LLM(model=...)`` resolves to), the LiteLLM-backed ``LLM`` and your own
``BaseLLM`` subclasses, including ones defined after ``instrument()``. Every
tool call gives exactly one span on every execution path: the ReAct text path
(``ToolUsage``, which bypasses ``BaseTool.run``), native function calling
(also when CrewAI runs several calls in parallel threads), and tools a provider
class runs itself. The trace stays whole across CrewAI's thread pools
(``max_execution_time``), ``kickoff_async``, ``Task(async_execution=True)`` and
flows (which run ``asyncio.run`` and execute sync steps in worker threads):
each span is current while its code runs, so anything you trace inside a tool
nests under the tool span.

Messages: CrewAI's message dicts become the span layer's typed parts (OTel GenAI
semconv v1.41): content-block lists (``text``, ``image_url``, ``input_audio``,
``file``, Anthropic-style ``thinking``/``tool_use``/``image``/``document``) part by
part, inline media under the media budget (``OTEL_AGENTS_MAX_MEDIA_BYTES``), a
tool call given both as a block and in ``tool_calls`` once. The agent's
role/goal/backstory system message is ``gen_ai.system_instructions`` and the first
OpenInference message. Tools offered (``gen_ai.tool.definitions``,
``llm.tools.N.tool.json_schema``): the schemas passed to a function-calling LLM;
on the ReAct text path, the agent executor's tools that the prompt describes.
Files attached through CrewAI's ``input_files`` (the optional ``crewai-files``
package) are formatted by the provider class inside ``call`` and are not recorded.

Content: task descriptions, expected outputs, agent goals, kickoff inputs,
messages, tool arguments and results are content, recorded only while the
content switch is on (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``;
``NO_CONTENT`` turns it off; default on). Backstories reach the spans only
inside the model's system prompt, which is content too. Span names use roles,
crew/flow/method names, tool names and model names only — never a task
description.

Inside OpenTelemetry's ``suppress_instrumentation()`` every step wrapper calls
straight through: no span is opened and nothing is converted. With content off (or on a
sampled-out span) messages and tool arguments are not converted at all.

CrewAI's own telemetry and tracing: independent of ours. Its anonymous
telemetry and its trace collection each build spans on a private
``TracerProvider`` and never make them current, so they neither show up in
your provider nor change our parentage — nothing is doubled. They do talk to
CrewAI's servers; to keep a process quiet set ``CREWAI_DISABLE_TELEMETRY=true``
and ``CREWAI_TRACING_ENABLED=false`` (not ``OTEL_SDK_DISABLED``: CrewAI honours
it, but it also turns your own SDK into a no-op). Our instrumentation does not
use either of them.

Design decision — ``wrapt`` wrappers, not the event bus. Both were tried
(``tests/crewai/test_design.py`` pins the behaviour that decided it). CrewAI's
event bus (``crewai_event_bus``) carries the ids to rebuild the tree, but it
runs each handler later on a worker thread (``CrewAISyncHandler_N``) with a
*copy* of the emitter's context: a span opened in a handler can never be
current for the user's code, the model call or the tool body; start and end
handlers can run out of order; and a custom ``BaseLLM`` that emits no events
would have no model span at all. So every span is opened by a wrapper in the
calling thread, around the method that does the work (by base class wherever
CrewAI has one: ``BaseLLM`` subclasses, ``Task``, ``Flow``, ``ToolUsage``, the
agent executor), and is current while it runs; CrewAI copies the context into
each thread it starts, so the tree survives every hop. Usage and finish
reasons, which ``call`` does not return, are read from
``BaseLLM._emit_call_completed_event`` — the provider calls it synchronously
inside ``call``, so the data lands on the open model span — instead of from
the asynchronous ``LLMCallCompletedEvent``. No handler is registered on the
event bus. ``uninstrument()`` splices our wrappers out of whatever wrapper
chain is on each method (another instrumentation's wrappers stay working) and
restores CrewAI's ``BaseLLM.__init_subclass__``.
"""

from __future__ import annotations

from ..._spans import Telemetry, guard
from .._base import OtelAgentsInstrumentor
from .. import _litellm
from . import _models, _orchestration, _tools  # none imports crewai before install()
from ._patching import Patches
from ._steps import Hooks

__all__ = ["CrewAIInstrumentor"]


class CrewAIInstrumentor(OtelAgentsInstrumentor):
    """Instruments ``crewai`` (see the module documentation for what and how).

    ``instrument()`` twice is the same as once; ``uninstrument()`` removes only
    our wrappers. Supported versions: ``crewai >=1.15.30,<2``.
    """

    framework = "crewai"
    _hooks: Hooks | None = None

    def _install(self, telemetry: Telemetry) -> None:
        self._hooks = hooks = Hooks(Patches(), telemetry)
        for part in (_orchestration, _models, _tools):
            with guard(f"crewai.install.{part.__name__.rsplit('.', 1)[-1]}"):
                part.install(hooks)
        hooks.patches.keep(_litellm.use())  # the LiteLLM-backed LLM's streams (see .._litellm)

    def _remove(self) -> None:
        hooks, self._hooks = self._hooks, None
        if hooks is not None:
            hooks.patches.remove_all()
