"""OpenTelemetry for LlamaIndex (``llama-index-core >=0.14.25,<0.15``): agents, tools, model calls, retrieval.

Usage::

    from otel_agents.instrumentors.llama_index import LlamaIndexInstrumentor

    LlamaIndexInstrumentor().instrument()          # global tracer provider
    LlamaIndexInstrumentor().instrument(tracer_provider=provider, capture_content=False)
    ...
    LlamaIndexInstrumentor().uninstrument()

or ``otel_agents.instrument()``, or with no code change at all:
``opentelemetry-instrument python app.py`` (entry point ``llama_index``).
Only ``llama-index-core`` is needed; no provider package is imported.

Configuration (keyword arguments of ``instrument()`` or environment):

``tracer_provider`` / ``meter_provider``
    where spans and the GenAI metrics go (default: the global providers).
``capture_content`` / ``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``
    record prompts, messages, tool arguments and results, retrieved documents,
    agent descriptions (default: on; ``NO_CONTENT`` or ``false`` turns it off).
``OTEL_AGENTS_MAX_CONTENT_LENGTH``
    the budget of each content attribute, in characters (default 16384).
``OTEL_AGENTS_MAX_MEDIA_BYTES``
    the largest inline image, audio or document kept in a message part, in bytes
    (default 4096); larger ones keep MIME type, modality, size and SHA-256.
``OTEL_AGENTS_STREAM_IDLE_TIMEOUT``
    seconds after which a stream nobody reads is ended as abandoned (default 300).

Inside OpenTelemetry's ``suppress_instrumentation()`` our handlers return at
once (no span, nothing kept, nothing made current). With content off, or on a
sampled-out span, messages, events and tool arguments are not converted at all.

What you get:

* ``FunctionAgent``, ``ReActAgent`` and other workflow agents → an ``agent``
  span ``invoke_agent {agent name}`` with the user message and the answer;
  each workflow step (``setup_agent``, ``run_agent_step``, ``call_tool`` …) a
  ``chain`` span under it, its input and output the step's events (a chat
  history appears as its message count: the model spans carry the messages).
  A run stopped at ``run(max_iterations=...)`` (the ``WorkflowRuntimeError`` the
  ``parse_agent_output`` step raises with the default ``early_stopping_method="force"``)
  has ``otel_agents.run.stop_reason`` ``max_turns`` on its agent span; so has a run
  cut off there with ``early_stopping_method="generate"``, where LlamaIndex asks the
  model for a last answer instead (that answer, a model span under the
  ``parse_agent_output`` step, is the run's output; we wrap the agents'
  ``_generate_early_stopping_response``, which LlamaIndex calls for it, on
  ``BaseWorkflowAgent`` and ``AgentWorkflow``). In an ``AgentWorkflow`` the stop
  reason is on the agent that was active.
* An answer a workflow agent rejects and asks the model again for (an ``AgentOutput``
  with ``retry_messages``: ``ReActAgent``'s output its parser cannot read, an empty
  answer) makes the ``run_agent_step`` step that produced it a failed step: status
  ERROR, ``error.type`` ``output_rejected``, the feedback LlamaIndex sends the model as
  the description (with content on); it is not recorded as an agent's answer.
* ``AgentWorkflow`` → a ``chain`` span ``invoke_workflow AgentWorkflow``; each
  agent that takes over (the root agent, then each handoff) an ``agent`` span
  under it, and the steps it runs under that agent.
* Other ``Workflow`` runs → a ``chain`` named after the class, steps under it.
* Tools (``FunctionTool`` and every ``BaseTool``) → ``tool`` spans
  ``execute_tool {name}`` with arguments, result and the model's tool call id.
  A call naming a tool the workflow agent does not have (it answers "Tool X not found…" and runs
  nothing) → a zero-length refused ``tool`` span under its ``call_tool`` step: the name, call id,
  arguments, the answer as result, status ERROR, ``error.type`` ``unknown_tool`` and
  ``otel_agents.tool.denied`` (as CrewAI's); the ECP fold lists it among the run's tool calls as failed.
* Model calls (``chat``, ``complete`` and their async and streaming forms on any
  ``BaseLLM``) → exactly one ``model`` span per call, with input and output
  messages as typed parts (``ChatMessage.blocks``: text, ``ThinkingBlock`` as
  reasoning, ``ToolCallBlock`` as tool calls, tool results, images, audio, video
  and documents as media parts: see :mod:`._content`), the system prompt as
  ``gen_ai.system_instructions``, the tools offered to a function-calling LLM
  (``gen_ai.tool.definitions``, ``llm.tools.N.tool.json_schema``), finish reason,
  usage (when the provider reports it), model, provider and request parameters. Internal helpers
  (``_prepare_chat_with_tools``, ``predict``, an ``achat`` that falls back to
  ``chat``) add no second span.
* Retrievers → ``retriever`` spans with the query and the documents; embedding
  calls → ``embedding`` spans; query engines, synthesizers and chat engines →
  ``chain`` spans named after their class.
* Errors: the failing call's span and each enclosing span the error passes
  through end with status ERROR. Workflow cancellation (``cancel_run``,
  ``asyncio.CancelledError``) and ``WorkflowDone`` are control flow, not errors; a run
  cancelled (``handler.cancel_run()``, its task cancelled) has ``otel_agents.run.stop_reason``
  ``cancelled`` on its agent span. A span ended by ``asyncio.CancelledError`` (a run whose
  ``stream_events()`` its caller left, which the workflow runtime then cancels; a task cancelled)
  is also marked ``otel_agents.stream.abandoned``: it did not finish.
* Streams: a streamed model call's span ends when its stream does: consumed,
  closed early or garbage-collected (marked ``otel_agents.stream.abandoned``),
  or idle past ``OTEL_AGENTS_STREAM_IDLE_TIMEOUT`` (abandoned). Each step of
  a model stream runs with its model span current (never between chunks), so
  an instrumented provider client (``openai``, ``anthropic``) under
  ``stream_chat``/``astream_chat`` enriches that span rather than opening a
  second one: ``stream_*``/``astream_*`` of every LLM class are wrapped for
  this (``uninstrument()`` takes the wrappers off). A streaming
  query engine keeps its span open until its response is read; the model call
  that starts on the first read nests under it, and the streamed text becomes
  its output (no output when the stream failed, or was left, before its first
  item).

Design decisions, and why:

* **The dispatcher, not patches.** LlamaIndex's instrumentation dispatcher
  already reports every decorated call (span handler) and every model payload
  (event handler) with reliable parent ids across async tasks, ``gather`` and
  the workflow runtime's step tasks. We register one span handler and one event
  handler on the root dispatcher, and wrap only where the dispatcher is silent
  (model streams' steps, tool calls whose end it fails to report, the forced last
  answer of ``early_stopping_method="generate"``). The dispatcher has no remove
  API: ``uninstrument()`` rebuilds its handler lists without our two handlers
  (by identity, leaving everyone else's) and ends the spans still open.
* **Current span.** The span handler runs in the same context as the decorated
  body, so it makes each span current on entry and detaches on exit: the
  user's own spans and calls made inside a tool nest where they happened.
* **Logical calls only.** The dispatcher also reports internal helpers and a
  subclass method calling its base; those pass through (see ``_plan``) so each
  logical call is one span.
* **Streaming responses.** For a streaming query engine the model call only
  starts when the consumer reads ``response.response_gen``, outside every span.
  To nest it and give the query its answer we replace ``response_gen`` with a
  proxy that yields the same items (other attributes are forwarded). It is the
  one place we touch a returned object.

Known limits: a workflow run in another process (a distributed workflow
runtime) starts a new trace; we do not implement the dispatcher's propagation
hooks yet. Messages, responses and usage come from LlamaIndex's own LLM events,
so a custom LLM class must use ``llm_chat_callback``/``llm_completion_callback``
(as LlamaIndex asks) for them to appear; its span is there either way. Spans
still open when ``uninstrument()`` is called end at once, marked
``otel_agents.span.evicted``.
"""

from __future__ import annotations

import threading
from typing import Any

from ..._spans import Telemetry, report_internal_error
from .._base import OtelAgentsInstrumentor

__all__ = ["LlamaIndexInstrumentor"]


class LlamaIndexInstrumentor(OtelAgentsInstrumentor):
    """Instruments ``llama-index-core`` through its root instrumentation dispatcher.

    ``instrument(**kwargs)``: see :class:`~otel_agents.instrumentors.OtelAgentsInstrumentor`
    (``tracer_provider``, ``meter_provider``, ``capture_content``, ``settings``).
    Calling it twice is the same as once; ``uninstrument()`` removes exactly our
    handlers.
    """

    framework = "llama_index"
    _span_handler: Any = None
    _event_handler: Any = None

    def _install(self, telemetry: Telemetry) -> None:
        from llama_index.core.instrumentation import get_dispatcher

        from ._event_handler import LlamaIndexEventHandler
        from ._plan import Bases
        from ._span_handler import LlamaIndexSpanHandler

        spans = LlamaIndexSpanHandler(telemetry, Bases())
        events = LlamaIndexEventHandler(spans)
        dispatcher = get_dispatcher()
        dispatcher.add_span_handler(spans)
        dispatcher.add_event_handler(events)
        self._span_handler, self._event_handler = spans, events
        self._stream_patch = self._tool_patch = None
        self._patches: list = []
        try:  # the last answer a run cut off at max_iterations is asked for: the stop reason max_turns
            from llama_index.core.agent.workflow import AgentWorkflow
            from llama_index.core.agent.workflow.base_agent import BaseWorkflowAgent

            from .._patch import Patch
            from ._span_handler import FORCED_ANSWER_METHOD, forced_answer_wrapper

            for owner in (BaseWorkflowAgent, AgentWorkflow):
                if FORCED_ANSWER_METHOD in owner.__dict__:
                    self._patches.append(Patch(owner, FORCED_ANSWER_METHOD, forced_answer_wrapper))
        except Exception as exc:  # noqa: BLE001 - runs still get their spans, only this stop reason is lost
            report_internal_error("llama_index.patch_forced_answer", exc)
        try:  # the dispatcher's calls of every handler: another handler making its span current stays in between
            self._keep_handlers_apart(dispatcher, spans)
        except Exception as exc:  # noqa: BLE001 - alone, our spans nest as before
            report_internal_error("llama_index.patch_dispatcher", exc)
        try:  # every tool class's call methods: a call whose end LlamaIndex fails to report still ends our spans
            from llama_index.core.tools.types import BaseTool

            from .._hierarchy import HierarchyPatch
            from ._span_handler import tool_call_wrappers

            self._tool_patch = HierarchyPatch(BaseTool, tool_call_wrappers(spans), site="llama_index.patch_tools")
        except Exception as exc:  # noqa: BLE001 - tools still get their spans
            report_internal_error("llama_index.patch_tools", exc)
        try:  # every LLM class's stream methods: the provider call sees the model span (one span per request)
            from llama_index.core.base.llms.base import BaseLLM

            from .._hierarchy import HierarchyPatch
            from ._streaming import stream_method_wrappers

            self._stream_patch = HierarchyPatch(BaseLLM, stream_method_wrappers(spans.model_streams),
                                                site="llama_index.patch")
        except Exception as exc:  # noqa: BLE001 - streams still get their spans, only the nesting is lost
            report_internal_error("llama_index.patch_streams", exc)

    def _keep_handlers_apart(self, root: Any, spans: Any) -> None:
        """``Dispatcher``'s span_enter, span_exit and span_drop wrapped (``dispatcher_wrappers``) now if a span
        handler but ours is on the root dispatcher's way, else once one is added (``add_span_handler`` wrapped):
        with ours alone they change nothing and cost ~7% of our instructions a run (issue 40, twentieth round)."""
        from llama_index.core.instrumentation.dispatcher import Dispatcher

        from .._patch import Patch
        from ._span_handler import dispatcher_wrappers, handler_added_wrapper, other_span_handler

        lock, patches, apart = threading.Lock(), self._patches, []

        def keep_apart() -> None:
            with lock:  # once; not after _remove (self._patches is then another list)
                if not apart and self._patches is patches:
                    apart.append(True)
                    for method, wrapper in dispatcher_wrappers(spans).items():
                        patches.append(Patch(Dispatcher, method, wrapper))

        if other_span_handler(spans, root):
            keep_apart()
        else:
            patches.append(Patch(Dispatcher, "add_span_handler", handler_added_wrapper(spans, keep_apart)))

    def _remove(self) -> None:
        for patch in getattr(self, "_patches", None) or []:
            patch.remove()
        self._patches = []
        for attr in ("_stream_patch", "_tool_patch"):
            patch = getattr(self, attr, None)
            setattr(self, attr, None)
            if patch is not None:
                patch.remove()
        spans, events = self._span_handler, self._event_handler
        self._span_handler = self._event_handler = None
        if spans is None:
            return
        from llama_index.core.instrumentation import get_dispatcher

        dispatcher = get_dispatcher()
        dispatcher.span_handlers = [h for h in dispatcher.span_handlers if h is not spans]
        dispatcher.event_handlers = [h for h in dispatcher.event_handlers if h is not events]
        spans.close_all()

    def open_span_count(self) -> int:
        """How many spans our handlers hold open right now (for tests and ``doctor``)."""
        return self._span_handler.open_count() if self._span_handler is not None else 0
