"""OpenTelemetry spans for LangChain and LangGraph runs.

Usage::

    from otel_agents.instrumentors.langchain import LangChainInstrumentor

    LangChainInstrumentor().instrument(tracer_provider=provider)   # or otel_agents.instrument()
    ...
    LangChainInstrumentor().uninstrument()

Zero-code: ``opentelemetry-instrument python app.py`` loads it through the
``langchain`` entry point of the ``opentelemetry_instrumentor`` group.
Supported: ``langchain-core >=1.8.3,<2`` (tested on 1.8.3) and, through it,
LangGraph (tested on 1.2) and LangChain 1.x's agents (``langchain.agents.create_agent``
and its agent middleware; tested on ``langchain`` 1.5).

``instrument()`` keyword arguments: ``tracer_provider``, ``meter_provider``,
``capture_content`` (``None`` follows
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``; on by default),
``settings``, and ``max_open_runs`` (the most runs tracked at once, default
10,000; the oldest is ended with ``otel_agents.span.evicted`` past it or after an
hour). Environment variables: those of the span layer
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``,
``OTEL_AGENTS_MAX_CONTENT_LENGTH``, ``OTEL_AGENTS_MAX_MEDIA_BYTES``).

What becomes a span (the kinds of :mod:`otel_agents.semconv.kinds`):

* chat models and LLMs → ``model`` (``chat {model}``/``text_completion {model}``):
  model and provider from LangChain's ``ls_model_name``/``ls_provider``
  metadata, request parameters from ``invocation_params``, the tools bound to
  the model (``bind_tools``: ``gen_ai.tool.definitions``, ``llm.tools.N.tool.json_schema``),
  input and output messages as typed parts (text, reasoning — Anthropic
  ``thinking``, v1 ``reasoning`` blocks, ``reasoning_content`` — never mixed
  into the text and without signatures; tool calls once even when both a
  ``tool_use`` block and a ``tool_calls`` entry; tool results; images, audio and
  documents as media parts: see :mod:`.content`), system messages as
  ``gen_ai.system_instructions``, finish reason, response model and id, and token
  usage from the message's ``usage_metadata`` (cache and reasoning details
  included), which wins over a partial ``llm_output["token_usage"]``; a streamed
  call records the usage and finish reason its chunks carry as they arrive, so a
  stream left before its end keeps what the provider sent;
* tools → ``tool`` (``execute_tool {name}``): name, description, tool call id,
  arguments, result; a tool error LangChain turned into the result
  (``handle_tool_error``, ``handle_validation_error``) is still an error, in-band (``error.type``
  ``tool_error``, the message as the status description; no exception reached us);
* retrievers → ``retriever``: query and documents;
* a LangGraph graph — also one built by an agent factory
  (LangChain 1.x's ``create_agent``, recognised by its ``ls_integration`` metadata
  ``langchain_create_agent``; ``create_react_agent``), and a graph used as a node of another
  graph → ``agent`` (``invoke_agent {graph name}``: a ``create_agent`` run is named by its
  ``name=``); one whose final state has a ``structured_response``
  (``create_agent(response_format=...)``) has that as its output; a graph that hands off with
  ``Command(goto=node, graph=Command.PARENT)`` (a supervisor's or a swarm's
  handoff tool) is recorded as the delegator of the agent that runs next in that
  node: ``otel_agents.agent.parent`` on its span (the ECP fold's ``delegated_by``);
* every other runnable (sequences, lambdas, graph nodes) → ``chain``, named
  after the runnable or node, with its input and output; ``create_agent``'s
  ``before_model``/``after_model``/``before_agent``/``after_agent`` middleware are graph
  nodes (``{middleware name}.{hook}``) and so ``chain`` steps; ``wrap_model_call``/
  ``wrap_tool_call`` middleware run inside the ``model``/``tools`` node, reported by no
  callback: no span of their own (a ``wrap_model_call`` that answers without calling its
  handler — a cache — leaves its ``model`` node with no ``model`` span: no request was
  made; one that retries calls the model again: one ``model`` span per request);
* a tool call ``ToolCallLimitMiddleware`` refuses (a call past its ``thread_limit``/``run_limit``, with
  ``exit_behavior="continue"`` or ``"end"``): its ``after_model`` node answers the call (with ``"end"``,
  also the other calls of the same batch) with an error ``ToolMessage`` ("Tool call limit exceeded…")
  and the tool never runs, which no callback reports
  → one zero-length ``tool`` span per such message under that node's ``chain`` span, made when the
  node ends: the tool's name, the call id (the message's ``tool_call_id``), the arguments the model
  asked with (from the node's input), the message as the result, status ERROR, ``error.type``
  ``usage_limit`` and ``otel_agents.tool.denied`` (the project's refused call, as CrewAI's spent
  ``max_usage_count``); the ECP fold lists it among the run's tool calls as failed;
* a tool call naming a tool LangGraph's ``ToolNode`` does not have: it answers "Error: X is not a valid
  tool…" (an error ``ToolMessage``) and runs nothing, which no callback reports → the same zero-length
  refused ``tool`` span under the ``tools`` node's span, ``error.type`` ``unknown_tool`` (CrewAI's word; see
  :mod:`.patches`, 9);
* a structured output ``create_agent`` rejects (``response_format=ToolStrategy(...)``:
  the output tool's arguments fail the schema, and LangChain asks the model again) →
  a failed ``chain`` step ``structured_output`` (status ERROR, the
  ``StructuredOutputValidationError``) under that ``model`` node (see :mod:`.patches`, 7);
* prompt templates and output parsers get **no span of their own**: they are
  folded into the chain that runs them (that chain's input and output already
  show the prompt and the parsed result), and so are LangGraph's hidden
  bookkeeping runs (tag ``langsmith:hidden``). Their children, if any, nest
  under the chain they were folded into.

Run metadata ``session_id``/``conversation_id``/``thread_id`` (the first one
set, in that order; LangGraph copies ``configurable.thread_id`` into metadata)
becomes ``session.id`` and ``gen_ai.conversation.id``, ``user_id`` becomes
``user.id``, and the caller's tags become ``tag.tags`` (added to those of
``otel_agents.using_tags``), on every span of the run.

Parenting follows LangChain's run tree (``parent_run_id``), not whatever
context is current when a callback fires, so spans nest correctly across
LangChain's thread pools, ``batch``/``abatch``, ``asyncio.gather`` and
LangGraph's executors; a run with no parent nests under the span current at
its start (your application span). Code inside a tool, a ``RunnableLambda``
or a graph node sees that run's span as the current span, so your own spans and
HTTP client spans nest under it; nothing stays current afterwards.

Outcomes: an exception is an error, except control flow — ``GeneratorExit``
and ``asyncio.CancelledError`` (the consumer went away) mark the span
``otel_agents.stream.abandoned``; LangGraph's ``GraphInterrupt`` marks the
run that raised it, every graph (agent) it passed through and the outermost
run ``otel_agents.run.paused`` (the ECP fold reports ``status: "paused"``);
``ParentCommand`` is only ``otel_agents.control_flow``; ``GraphRecursionError`` (the
graph's ``recursion_limit`` reached) is an error and the stop reason ``max_turns``
(``otel_agents.run.stop_reason``) of every graph (agent) it ends; so are LangChain's
``ModelCallLimitExceededError``/``ToolCallLimitExceededError`` (the call-limit middleware
with ``exit_behavior="error"``), and ``PIIDetectionError`` (``PIIMiddleware`` with
``strategy="block"``) gives the stop reason ``guardrail``. ``ModelCallLimitMiddleware``/
``ToolCallLimitMiddleware`` with ``exit_behavior="end"`` (the former's default) end the run
without an error, by a node update that jumps to the end: that node (named by LangChain
``ModelCallLimitMiddleware.before_model``, ``ToolCallLimitMiddleware[...].after_model``: a
subclass, named after itself, is not recognised) gives the agent the stop reason ``max_turns``;
the run's output is the message the middleware ended it with. Any other middleware that
ends the run that way (a ``before_model``/``after_model`` of your own returning
``{"jump_to": "end"}``) records no stop reason: nothing tells why it ended.

A run that ends while runs under it are still open (a ``stream()`` broken out of
early ends with partial output) ends those runs and is itself marked abandoned.
A stream whose end LangChain does not report ends its run all the same, abandoned,
with nothing ended twice: ``astream_events`` closed right after its first event
(LangChain cancels the run before it has set it up, and never reports its end)
ends its root run when the event stream ends;
a model's ``astream()`` dropped unfinished ends its model span when it is
collected (LangChain reports that end only from a task the loop runs later, and
that a loop shutting down — ``asyncio.run`` returning — cancels before it runs);
see :mod:`.patches`. A run whose start or end a callback handler of yours with ``raise_error = True``
interrupted by raising (LangChain reports nothing more of that run) ends with that exception.
Any other run LangChain never reports as ended is ended by
the bounds of the run map (``otel_agents.span.evicted``), and its open children
with it. Static breakpoints
(``interrupt_before``/``interrupt_after``) report no signal through callbacks and
are not marked paused.

Inside ``opentelemetry.instrumentation.utils.suppress_instrumentation()`` no
spans are made for a run and everything under it.

Design decisions, and why:

* **Global handler through ``register_configure_hook``**, not by wrapping
  ``BaseCallbackManager.__init__``. LangChain calls its configure hooks for
  every callback manager it configures; a hook whose ``ContextVar`` has our
  handler as its default puts the handler (inheritable, so child managers keep
  it) into every run with no patching of LangChain's classes, and LangGraph's
  own graph-lifecycle managers (also ``BaseCallbackManager`` subclasses, which
  expect only their own handler type) are left alone. Removal takes our entry
  out of LangChain's hook list; should that ever fail the handler is switched
  off, so ``uninstrument()`` always stops our spans and never touches anything
  another library installed.
* **A sync handler with** ``run_inline = True``: called in the run's own thread
  and task in sync and async code alike.
* **Explicit parents, attachment only where it is safe.** Spans are parented
  through a bounded run-id map. We never attach from callbacks (LangChain ends
  async runs in a shielded task with another context, ``batch`` interleaves
  starts and ends, and another handler attaching its own span in the same
  callbacks would undo our detach, or we its) but make a run's span — a
  tool's too — current inside the body's own copied context (see :mod:`.patches`).
* **LangGraph graphs are recognised** by LangGraph's ``ls_integration`` metadata
  (top-level graphs) and, for graphs nested in other graphs, by the caller of
  the start callback being ``Pregel.stream``/``astream`` (see :mod:`.patches`).

This module imports no LangChain code until ``instrument()`` is called.
"""

from __future__ import annotations

import contextvars
from typing import Any

from ..._spans import Telemetry, guard
from .._base import OtelAgentsInstrumentor

__all__ = ["LangChainInstrumentor"]


class LangChainInstrumentor(OtelAgentsInstrumentor):
    """Instruments ``langchain-core`` (and LangGraph through it); see the module docstring.

    ``handler`` is the active :class:`~.handler.SpanCallbackHandler` while
    instrumented, else ``None``.
    """

    framework = "langchain"
    handler: Any = None
    _hook_var: contextvars.ContextVar | None = None

    def _instrument(self, **kwargs: Any) -> None:
        self._max_open_runs = kwargs.get("max_open_runs")
        super()._instrument(**kwargs)

    def _install(self, telemetry: Telemetry) -> None:
        from langchain_core.tracers.context import register_configure_hook

        from . import patches
        from .handler import SpanCallbackHandler

        handler = SpanCallbackHandler(telemetry, getattr(self, "_max_open_runs", None))
        var: contextvars.ContextVar = contextvars.ContextVar("otel_agents_langchain_handler", default=handler)
        register_configure_hook(var, True)
        self.handler, self._hook_var = handler, var
        patches.install(handler.span_context_for, handler.tool_runs_failed, handler.run_left, handler.run_dropped,
                        handler.output_rejected, handler.dispatch_failed, handler.tool_unknown)

    def _remove(self) -> None:
        from . import patches

        patches.remove()
        var, handler = self._hook_var, self.handler
        self.handler, self._hook_var = None, None
        if var is not None:
            with guard("langchain.uninstrument"):
                from langchain_core.tracers import context as hooks

                for entry in list(hooks._configure_hooks):
                    if entry[0] is var:
                        hooks._configure_hooks.remove(entry)
        if handler is not None:
            handler.close_all()
