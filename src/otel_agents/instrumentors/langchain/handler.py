"""The LangChain callback handler that turns runs into semantic spans.

One handler instance is registered globally (see the package docstring). It is
a *sync* ``BaseCallbackHandler`` with ``run_inline = True``: LangChain then calls
it directly in the thread and task of the run, also under ``AsyncCallbackManager``
(an async or non-inline handler would run in a copied context or an executor).

Bookkeeping (all bounded): ``spans``, a :class:`~otel_agents._spans.SpanRegistry`
of open runs (run id → span + :class:`_Run`); ``folded``, the runs that get no
span of their own (prompt templates, output parsers, LangGraph's hidden
bookkeeping runs, runs under suppressed instrumentation) → the run whose span
stands in for them. A forked child starts with both empty (the parent's open runs are the parent's to end).

No callback attaches a context: a run's span is made current in its body's own copied context
(:mod:`.patches`), never from a callback (another handler attaching its own span in the same callbacks would
undo our detach, or we its, and leave an ended span current).
"""

from __future__ import annotations

import re
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any, Hashable, Sequence
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages.ai import add_usage
from opentelemetry import context as otel_context

from ..._spans.finalisers import in_forked_child, new_lock
from ..._spans import (ChatMessage, SemanticSpan, SpanRegistry, Telemetry, current_run_attributes, from_finaliser, guard,
                       guarded, instrumentation_enabled, probes)
from ...semconv import Kind
from ...semconv import attributes as A
from ...semconv.mapping import OP_CHAT, OP_TEXT_COMPLETION
from . import extract, patches
from .control_flow import Outcome, classify, control_flow_name, goto_nodes, stop_reason

FOLDED_RUN_TYPES = ("prompt", "parser")
"""``run_type`` values of runs folded into their parent: prompt templates and output parsers."""
HIDDEN_TAG = "langsmith:hidden"
"""The tag LangGraph puts on its own bookkeeping runs (channel writes, ``__start__``)."""
MAX_FOLDED = 10_000
"""The most folded runs remembered."""
MAX_HANDOFFS = 256
"""The most pending handoffs (``goto`` nodes) a graph run remembers."""
GRAPH_INTEGRATIONS = ("langgraph", "langchain_create_agent")
"""``ls_integration`` metadata values of a graph's runs: LangGraph's own (``Pregel.stream`` adds it when the
caller set none) and LangChain 1.x's ``create_agent`` (its compiled graph's config sets it first)."""

LIMIT_NODES = re.compile(r"(ModelCallLimitMiddleware|ToolCallLimitMiddleware)(\[.*\])?\.(before|after)_model")
"""Graph nodes of LangChain 1.x's call-limit agent middleware (``{middleware.name}.{hook}``, the name LangChain
gives a middleware's node): a node of these whose update jumps to the end (``{"jump_to": "end"}``, their
``exit_behavior="end"``) stops the agent run at its cap: stop reason ``max_turns``."""
TOOL_LIMIT_NODE = re.compile(r"ToolCallLimitMiddleware(\[.*\])?\.after_model")
"""The node of ``ToolCallLimitMiddleware``: its update answers each call past the limit with an error ``ToolMessage``
(``status="error"``, "Tool call limit exceeded…") instead of running the tool — a refused call (:data:`REFUSED_LIMIT`)."""
REFUSED_LIMIT = "usage_limit"
"""``error.type`` of a tool call a call-limit middleware refused (CrewAI's ``ToolFailureReason`` for a spent limit)."""
REJECTED_OUTPUT = "structured_output"
"""The name of the failed ``chain`` step for a structured output ``create_agent`` rejected and asked again for."""

_SUPPRESSED = object()  # fold target of runs started under OTel's suppress-instrumentation key
_RESOLVE = object()


class _Run:
    """What we keep about one open run besides its span."""

    __slots__ = ("parent", "children", "interrupted_below", "agent", "handoffs", "usage", "limit", "requested")

    def __init__(self, parent: UUID | None):
        self.parent = parent              # run id of the nearest ancestor with a span
        self.children: set[UUID] = set()  # open child runs (with spans, or folded)
        self.interrupted_below = False    # a LangGraph interrupt came up through this run
        self.agent: str | None = None     # a graph's agent name
        self.handoffs: dict[str, str] | None = None  # a graph's node → the agent that handed off to it
        self.usage: Any = None            # a model stream's usage_metadata so far (summed over its chunks)
        self.limit = False                # a call-limit middleware's node (:data:`LIMIT_NODES`)
        self.requested: dict | None = None  # a tool-call limit node's: the calls its input asks for, id → call


class SpanCallbackHandler(BaseCallbackHandler):
    """Opens a span at each run's start callback and ends it at the end/error callback.

    Args:
        telemetry: the span factory of the instrumentor.
        max_spans: the most open runs kept (oldest ended as evicted past it).
    """

    run_inline = True
    raise_error = False

    def __init__(self, telemetry: Telemetry, max_spans: int | None = None):
        super().__init__()
        self.telemetry = telemetry
        self.spans = SpanRegistry(max_spans) if max_spans else SpanRegistry()
        self.enabled = True
        self._lock = new_lock()
        self._forget()
        in_forked_child(SpanCallbackHandler._forget, self)

    def _forget(self) -> None:
        """No folded runs: a new handler's, and a forked child's (``spans`` forgets the parent's open runs
        itself)."""
        self.folded: OrderedDict[UUID, Any] = OrderedDict()

    # -- bookkeeping ---------------------------------------------------------------
    def open_entries(self) -> int:
        """Open runs we still track (spans, folded runs)."""
        return len(self.spans) + len(self.folded)

    def close_all(self) -> None:
        """Stop handling events and end every open span (as evicted); used by ``uninstrument``."""
        self.enabled = False
        self.spans.clear()
        with self._lock:
            self.folded.clear()

    def span_context_for(self, run_id: UUID) -> otel_context.Context | None:
        """The OTel context with ``run_id``'s span (or the span standing in for it) current, or ``None``."""
        with self._lock:
            target = self.folded.get(run_id, run_id)
        span = self.spans.get(target) if isinstance(target, UUID) else None
        if span is None or not span.span.get_span_context().is_valid:
            return None
        return span.context()

    def _resolve(self, parent_run_id: UUID | None) -> Any:
        """The run id whose span parents a child of ``parent_run_id`` (``None``: the current context)."""
        if parent_run_id is None:
            return None
        with self._lock:
            target = self.folded.get(parent_run_id, parent_run_id)
        if target is _SUPPRESSED or target is None:
            return target
        return target if self.spans.get(target) is not None else None

    def _fold(self, run_id: UUID, parent_run_id: UUID | None, target: Any = _RESOLVE) -> None:
        """Give ``run_id`` no span: its children nest under ``target`` (default: the parent's span)."""
        if target is _RESOLVE:
            target = self._resolve(parent_run_id)
        parent_run = self.spans.get_extra(target) if isinstance(target, UUID) else None
        with self._lock:
            self.folded[run_id] = target
            if parent_run is not None:
                parent_run.children.add(run_id)
            while len(self.folded) > MAX_FOLDED:
                self.folded.popitem(last=False)

    def _open(self, kind: Kind, name: str | None, run_id: UUID, parent_run_id: UUID | None,
              tags: Sequence[str] | None, metadata: Mapping[str, Any] | None, *,
              operation: str | None = None) -> tuple[SemanticSpan, _Run] | None:
        """Open the span of a starting run, parented by ``parent_run_id``'s span; ``None`` when folded."""
        if not self.enabled:
            return None
        parent_key = self._resolve(parent_run_id)
        if parent_key is _SUPPRESSED or not instrumentation_enabled():
            self._fold(run_id, None, _SUPPRESSED)
            return None
        parent_span = self.spans.get(parent_key) if parent_key is not None else None
        attributes: dict[str, Any] = {}
        with guard("langchain.run_ids"):
            attributes.update(extract.session_attributes(metadata))
        with guard("langchain.run_attributes"):  # apart: a failure in one loses only its own attributes
            tags_ = extract.user_tags(tags)
            if tags_:  # added to the tags of otel_agents.using_tags(), not replacing them
                inherited = list(current_run_attributes().get(A.TAG_TAGS) or
                                 (parent_span.run_attributes.get(A.TAG_TAGS) if parent_span else None) or [])
                attributes[A.TAG_TAGS] = inherited + [t for t in tags_ if t not in inherited]
        span = self.telemetry.start_span(kind, name, parent=parent_span, operation=operation, attributes=attributes)
        run = _Run(parent_key if parent_span is not None else None)
        self.spans.put(run_id, span, run)
        patches.run_opened(run_id)  # the first under an astream_events() step is its root run
        if parent_span is not None:
            parent_run = self.spans.get_extra(parent_key)
            if parent_run is not None:
                with self._lock:
                    parent_run.children.add(run_id)
        return span, run

    def _finish(self, run_id: UUID, error: BaseException | None = None, fill: Any = None, site: str = "") -> None:
        """End ``run_id``'s span: ``fill(span, run)`` adds the outputs (guarded), then it is closed."""
        span, run = self.spans.pop_with_extra(run_id)
        if span is None:
            self._unfold(run_id)
            return
        if fill is not None:
            with guard(site or "langchain.fill"):
                fill(span, run)
        self._close(run_id, span, run, error=error)

    def run_left(self, run_id: UUID, error: BaseException | None = None) -> None:
        """End ``run_id`` if it is still open although its stream is over (LangChain never reported its end):
        with ``error`` (what ended the stream), else as abandoned; its open children with it. A run whose end
        LangChain reported has left the map: nothing happens."""
        span, run = self.spans.pop_with_extra(run_id)
        if span is not None:
            self._close(run_id, span, run, error=error, abandoned=error is None)

    def run_dropped(self, run_id: UUID) -> None:
        """:meth:`run_left` (abandoned) from a finaliser: never inside the garbage collector, which may run one in a
        thread holding one of our locks (:func:`~otel_agents._spans.from_finaliser`)."""
        from_finaliser(self.run_left, run_id)

    def _unfold(self, run_id: UUID) -> bool:
        """Forget a folded run; whether it was one."""
        with self._lock:
            target = self.folded.pop(run_id, _RESOLVE)
        if target is _RESOLVE:
            return False
        parent_run = self.spans.get_extra(target) if isinstance(target, UUID) else None
        if parent_run is not None:
            with self._lock:
                parent_run.children.discard(run_id)
        return True

    def _close(self, run_id: Hashable, span: SemanticSpan, run: _Run, *,
               error: BaseException | None = None, abandoned: bool = False) -> None:
        """End a popped span: end what it left open, record the outcome."""
        with self._lock:
            children = list(run.children)
            run.children.clear()
        for child in children:  # a run that ends with children still open was cut short (a broken stream)
            child_span, child_run = self.spans.pop_with_extra(child)
            if child_span is not None:
                self._close(child, child_span, child_run, abandoned=True)
                abandoned = True
            elif self._unfold(child):
                abandoned = True
        if run.parent is not None:
            parent_run = self.spans.get_extra(run.parent)
            if parent_run is not None:
                with self._lock:
                    parent_run.children.discard(run_id)  # type: ignore[arg-type]
        if error is not None:
            outcome = classify(error)
            span.record_error(error, control_flow=outcome is not Outcome.ERROR)
            if span.kind is Kind.AGENT and stop_reason(error) is not None:
                span.set_stop_reason(stop_reason(error))
            if outcome is Outcome.ABANDONED:
                abandoned = True
            elif outcome is Outcome.PAUSED:
                self._mark_paused(span, run)
            elif outcome is Outcome.CONTROL_FLOW and span.kind is Kind.AGENT:
                with guard("langchain.handoff"):
                    self._note_handoff(span, run, error)
        if abandoned:
            span.mark_abandoned()
        span.end()

    def _mark_paused(self, span: SemanticSpan, run: _Run) -> None:
        """A LangGraph interrupt reached ``run``. It bubbles up as an error of every run in
        between; the run where it started, every agent (graph) it passes through and the outermost
        run are marked as waiting for a human, so the ECP fold's evidence says where the run
        stopped and which agents paused, without a line for each node in between."""
        if not run.interrupted_below or span.kind is Kind.AGENT or run.parent is None:
            span.mark_paused()
        key, seen = run.parent, 0
        while key is not None and seen < 256:
            ancestor, ancestor_run = self.spans.get(key), self.spans.get_extra(key)
            if ancestor is None or ancestor_run is None:
                return
            ancestor_run.interrupted_below = True
            if ancestor.kind is Kind.AGENT or ancestor_run.parent is None:
                ancestor.mark_paused()
            key, seen = ancestor_run.parent, seen + 1

    def _agent_above(self, key: UUID | None) -> _Run | None:
        """The bookkeeping of the nearest open agent (graph) run at or above run ``key``."""
        found = self._agent_span_above(key)
        return found[1] if found is not None else None

    def _agent_span_above(self, key: UUID | None) -> tuple[SemanticSpan, _Run] | None:
        """The span and bookkeeping of the nearest open agent (graph) run at or above run ``key``."""
        seen = 0
        while key is not None and seen < 256:
            span, run = self.spans.get(key), self.spans.get_extra(key)
            if span is None or run is None:
                return None
            if span.kind is Kind.AGENT:
                return span, run
            key, seen = run.parent, seen + 1
        return None

    def _node_span(self, run_id: UUID | None) -> SemanticSpan | None:
        """The span a step a patch saw inside node run ``run_id`` nests under (``None``: off, suppressed, unknown)."""
        if not self.enabled or not instrumentation_enabled():
            return None
        key = self._resolve(run_id)
        return self.spans.get(key) if isinstance(key, UUID) else None

    def output_rejected(self, run_id: UUID | None, error: BaseException) -> None:
        """``create_agent`` rejected a structured output (``ToolStrategy``: ``error``, a
        ``StructuredOutputValidationError``) and asks the model again: a failed ``chain`` step,
        :data:`REJECTED_OUTPUT`, under run ``run_id`` (the ``model`` node that got the answer); see
        :mod:`.patches`, 7."""
        parent = self._node_span(run_id)
        if parent is None:
            return
        span = self.telemetry.start_span(Kind.CHAIN, REJECTED_OUTPUT, parent=parent)
        span.record_error(error)
        span.end()

    def tool_unknown(self, run_id: UUID | None, call: Any, message: Any) -> None:
        """LangGraph's ``ToolNode`` (run ``run_id``) answered ``call`` (a ``ToolCall`` dict: ``name``, ``args``, ``id``)
        with ``message``, an error ``ToolMessage``: no tool of that name, nothing ran. A refused ``tool`` span,
        :data:`~otel_agents.semconv.attributes.UNKNOWN_TOOL`, under the node's span; see :mod:`.patches`, 9."""
        parent = self._node_span(run_id)
        if parent is None:
            return
        call = call if isinstance(call, Mapping) else {}
        name, call_id = call.get("name"), call.get("id")
        self.telemetry.refused_tool_call(
            name if isinstance(name, str) else None, A.UNKNOWN_TOOL, parent=parent,
            call_id=call_id if isinstance(call_id, str) else None, arguments=call.get("args"),
            result=probes.text(probes.attr(message, "content", "")))

    def _note_handoff(self, span: SemanticSpan, run: _Run, error: BaseException) -> None:
        """A graph (agent) ended with LangGraph's ``ParentCommand``: a ``Command(goto=...,
        graph=Command.PARENT)`` handoff (a supervisor's or a swarm's). The parent graph — the
        nearest agent above — remembers, per ``goto`` node, which agent handed off, so the agent
        that runs in that node next records it as its delegator (``otel_agents.agent.parent``)."""
        if control_flow_name(error) != "ParentCommand":
            return
        command = error.args[0] if error.args else None
        parent_graph = self._agent_above(run.parent)
        nodes = goto_nodes(getattr(command, "goto", None))
        if parent_graph is None or not nodes or not run.agent:
            return
        with self._lock:
            handoffs = parent_graph.handoffs = parent_graph.handoffs or {}
            for node in nodes:
                if node in handoffs or len(handoffs) < MAX_HANDOFFS:
                    handoffs[node] = run.agent

    def _handed_off_by(self, parent_key: Any, metadata: Mapping[str, Any] | None) -> str | None:
        """The agent that handed off to the graph starting in node ``metadata["langgraph_node"]``
        under run ``parent_key`` (consumed: the next run of that node is a new decision)."""
        node = (metadata or {}).get("langgraph_node")
        graph = self._agent_above(parent_key) if isinstance(parent_key, UUID) and isinstance(node, str) else None
        if graph is None or not graph.handoffs:
            return None
        with self._lock:
            return graph.handoffs.pop(node, None)

    # -- chains, graphs, agents ----------------------------------------------------
    def _is_graph_root(self, metadata: Mapping[str, Any] | None) -> bool:
        md = metadata or {}
        if md.get("ls_integration") not in GRAPH_INTEGRATIONS:
            return False
        return "langgraph_node" not in md or patches.started_by_graph()

    @guarded("langchain.on_chain_start")
    def on_chain_start(self, serialized: dict[str, Any] | None, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, tags: list[str] | None = None,
                       metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """A chain run starts: an ``agent`` span for a LangGraph graph's root, a ``chain`` span otherwise (its
        input when content is recorded); a prompt, a parser or LangGraph's hidden runs get none (folded into
        their parent). Like every callback here: guarded, never raises into LangChain."""
        if not self.enabled:
            return
        if kwargs.get("run_type") in FOLDED_RUN_TYPES or HIDDEN_TAG in (tags or ()):
            self._fold(run_id, parent_run_id)
            return
        name = extract.run_name(serialized, kwargs.get("name"), Kind.CHAIN.value)
        graph = self._is_graph_root(metadata)
        opened = self._open(Kind.AGENT if graph else Kind.CHAIN, name, run_id, parent_run_id, tags, metadata)
        if opened is None:
            return
        span, run = opened
        run.limit = not graph and bool(LIMIT_NODES.fullmatch(name or ""))
        if run.limit and TOOL_LIMIT_NODE.fullmatch(name or ""):
            with guard("langchain.tool_limit"):
                run.requested = _requested_calls(inputs)
        if graph:
            span.set_agent(name)
            run.agent = name
            with guard("langchain.handoff"):
                handed_off_by = self._handed_off_by(self._resolve(parent_run_id), metadata)
                if handed_off_by:
                    span.set_attribute(A.OTEL_AGENTS_PARENT_AGENT, handed_off_by)
        if not kwargs.get("defers_inputs") and span.records_content:
            with guard("langchain.chain_input"):
                span.set_input(extract.io_value(inputs),
                               messages=extract.state_messages(inputs) if span.input_as_messages else None)

    @staticmethod
    def _chain_fill(outputs: Any, inputs: Any) -> Any:
        # A streamed run starts with a placeholder input and reports the real one at its end.
        def fill(span: SemanticSpan, _run: _Run) -> None:
            if not span.records_content:  # else messages in the state would be converted to be dropped
                return
            if inputs is not None:
                span.set_input(extract.io_value(inputs),
                               messages=extract.state_messages(inputs) if span.input_as_messages else None)
            if outputs is None:
                return
            structured = outputs.get("structured_response") if isinstance(outputs, Mapping) else None
            if span.kind is Kind.AGENT and structured is not None:  # create_agent(response_format=...)'s answer
                span.set_output(structured)
            else:
                span.set_output(extract.io_value(outputs),
                                messages=extract.state_answer(outputs) if span.input_as_messages else None)
        return fill

    @guarded("langchain.on_chain_end")
    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """The chain run ended: its span ends with its output (a call-limit node that ended the run marks the
        agent ``max_turns``; the tool calls it refused become refused ``tool`` spans)."""
        run = self.spans.get_extra(run_id)
        if run is None:  # no span of its own (a prompt, a parser, LangGraph's hidden runs) or already ended
            self._unfold(run_id)
            return
        if run.limit and isinstance(outputs, Mapping) and outputs.get("jump_to") == "end":
            agent = self._agent_span_above(run.parent)  # a call-limit middleware ended the run at its cap
            if agent is not None:
                agent[0].set_stop_reason("max_turns")
        if run.requested is not None and isinstance(outputs, Mapping):
            with guard("langchain.tool_limit"):
                self._refused_calls(run_id, run.requested or _requested_calls(kwargs.get("inputs")), outputs)
        self._finish(run_id, fill=self._chain_fill(outputs, kwargs.get("inputs")), site="langchain.chain_output")

    def _refused_calls(self, run_id: UUID, requested: dict, update: Mapping[str, Any]) -> None:
        """The tool calls a ``ToolCallLimitMiddleware`` node (run ``run_id``) refused: one zero-length, refused
        ``tool`` span under the node's span per error ``ToolMessage`` of its state ``update`` (name, call id =
        its ``tool_call_id``, the arguments the model asked with, the message as the result)."""
        node = self.spans.get(run_id)
        messages = update.get("messages")
        if node is None or not isinstance(messages, list):
            return
        for message in messages:
            if probes.attr(message, "type") != "tool" or probes.attr(message, "status") != "error":
                continue
            call_id = probes.attr(message, "tool_call_id")
            call = requested.get(call_id) if isinstance(call_id, str) else None
            name = probes.attr(message, "name") or (call or {}).get("name")
            self.telemetry.refused_tool_call(
                name if isinstance(name, str) else None, REFUSED_LIMIT, parent=node,
                call_id=call_id if isinstance(call_id, str) else None,
                arguments=(call or {}).get("args"), result=probes.text(probes.attr(message, "content", "")))

    @guarded("langchain.on_chain_error")
    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """The chain run raised ``error``: its span ends with it (control flow such as a handoff is no error)."""
        if self.spans.get_extra(run_id) is None:  # no span of its own (see on_chain_end)
            self._unfold(run_id)
            return
        self._finish(run_id, error, fill=self._chain_fill(None, kwargs.get("inputs")), site="langchain.chain_output")

    # -- models ----------------------------------------------------------------------
    def _open_model(self, operation: str, serialized: dict[str, Any] | None, input_messages: Any, *,
                    run_id: UUID, parent_run_id: UUID | None, tags: list[str] | None,
                    metadata: dict[str, Any] | None, invocation_params: dict[str, Any] | None) -> None:
        md, params = metadata or {}, invocation_params or {}
        model = None
        with guard("langchain.model_name"):
            model = extract.request_model(md, params, serialized)
        opened = self._open(Kind.MODEL, model, run_id, parent_run_id, tags, md, operation=operation)
        if opened is None:
            return
        span = opened[0]
        patches.model_run_started(run_id)  # inside a model.stream() step: the provider call sees this span
        with guard("langchain.model_request"):
            span.set_model(request_model=model, provider=extract.provider_name(md.get("ls_provider")),
                           parameters=extract.request_parameters(md, params))
            span.set_server(extract.base_url(params, serialized))
            span.set_request_output(*extract.request_output(params))
        if span.records_content:  # else the messages would be converted to be dropped
            with guard("langchain.model_input"):
                span.set_messages(input=input_messages())
            with guard("langchain.model_tools"):
                span.set_tool_definitions(extract.offered_tools(params))

    @guarded("langchain.on_chat_model_start")
    def on_chat_model_start(self, serialized: dict[str, Any] | None, messages: list[list[Any]], *,
                            run_id: UUID, parent_run_id: UUID | None = None, tags: list[str] | None = None,
                            metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """A chat model call starts: a ``model`` span (``chat``) with the model, provider, request parameters
        and, when content is recorded, the first prompt's messages and the offered tools."""
        self._open_model(OP_CHAT, serialized, lambda: extract.chat_messages(messages[0] if messages else []),
                         run_id=run_id, parent_run_id=parent_run_id, tags=tags, metadata=metadata,
                         invocation_params=kwargs.get("invocation_params"))

    @guarded("langchain.on_llm_start")
    def on_llm_start(self, serialized: dict[str, Any] | None, prompts: list[str], *, run_id: UUID,
                     parent_run_id: UUID | None = None, tags: list[str] | None = None,
                     metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """A text-completion call starts: a ``model`` span (``text_completion``); its first prompt is the input."""
        self._open_model(OP_TEXT_COMPLETION, serialized,
                         lambda: [ChatMessage(role="user", content=p) for p in (prompts or [])[:1]],
                         run_id=run_id, parent_run_id=parent_run_id, tags=tags, metadata=metadata,
                         invocation_params=kwargs.get("invocation_params"))

    @staticmethod
    def _fill_model(span: SemanticSpan, response: Any) -> None:
        with guard("langchain.model_output"):
            if span.records_content:
                span.set_messages(output=extract.output_messages(response))
            else:  # what set_messages keeps of the messages with content off
                span.set_finish_reasons(extract.finish_reasons(response))
        with guard("langchain.model_response"):
            span.set_model(response_model=extract.response_model(response), response_id=extract.response_id(response))
        with guard("langchain.model_usage"):
            for usage in extract.usages(response):
                span.set_usage(usage, prefer_complete=True)

    @guarded("langchain.on_llm_new_token")
    def on_llm_new_token(self, token: Any, *, chunk: Any = None, run_id: UUID, **kwargs: Any) -> None:
        """A streamed chunk carrying usage (``usage_metadata``: what the provider reported, usually on its
        last chunk; summed over chunks as LangChain merges them) or a finish reason: the model span gets them
        now, so a stream left before LangChain ends the call keeps what the provider sent. ``on_llm_end``'s
        response replaces them. Every chunk is timed (time to first chunk, time per output chunk)."""
        span = self.spans.get(run_id)
        if span is None:
            return
        span.chunk_received()
        message = getattr(chunk, "message", None)
        usage = getattr(message, "usage_metadata", None)
        reason = extract.chunk_finish_reason(chunk) if chunk is not None else None
        if not usage and not reason:
            return
        run = self.spans.get_extra(run_id)
        if run is None:
            return
        if usage:
            run.usage = add_usage(run.usage, usage) if run.usage else dict(usage)
            span.set_usage(extract.usage_of_metadata(run.usage), prefer_complete=True)
        if reason:
            span.set_finish_reasons([reason])

    @guarded("langchain.on_llm_end")
    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """The model call ended: its span ends with the response (output messages, usage, finish reasons)."""
        self._finish(run_id, fill=lambda span, _run: self._fill_model(span, response), site="langchain.model_fill")

    @guarded("langchain.on_llm_error")
    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """The model call raised ``error``: its span ends with it."""
        self._finish(run_id, error)

    # -- tools -------------------------------------------------------------------------
    @guarded("langchain.on_tool_start")
    def on_tool_start(self, serialized: dict[str, Any] | None, input_str: str, *, run_id: UUID,
                      parent_run_id: UUID | None = None, tags: list[str] | None = None,
                      metadata: dict[str, Any] | None = None, inputs: dict[str, Any] | None = None,
                      **kwargs: Any) -> None:
        """A tool run starts: a ``tool`` span (name, call id, description, arguments), current while the tool
        body runs (``BaseTool.run``/``arun`` run it in a context made with the tool run's child config, where
        :mod:`.patches` makes the span current)."""
        name = extract.run_name(serialized, kwargs.get("name"), Kind.TOOL.value)
        opened = self._open(Kind.TOOL, name, run_id, parent_run_id, tags, metadata)
        if opened is None:
            return
        span = opened[0]
        with guard("langchain.tool_input"):
            description = serialized.get("description") if isinstance(serialized, dict) else None
            span.set_tool(name, call_id=kwargs.get("tool_call_id"), description=description,
                          arguments=inputs if inputs is not None else input_str)
        patches.tool_run_started(run_id)

    def tool_runs_failed(self, run_ids: list, error: BaseException) -> None:
        """``BaseTool.run``/``arun`` raised ``error`` without reporting the end of ``run_ids`` (LangChain
        failed on the result itself): end those still open, with the error, and detach their spans."""
        for run_id in run_ids:
            self._finish(run_id, error)

    def dispatch_failed(self, run_id: UUID, error: BaseException) -> None:
        """The dispatch of ``run_id``'s start, end or error raised ``error`` (a handler of the user's with
        ``raise_error``): LangChain reports nothing more of that run, so its span, if still open, ends with
        ``error`` (what the caller gets); a folded run is forgotten."""
        self._finish(run_id, error)

    @guarded("langchain.on_tool_end")
    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """The tool run ended: its span ends with the result; an error ``ToolMessage`` (a failure LangChain turned
        into the result: ``handle_tool_error``, ``handle_validation_error``; no exception reaches the callbacks)
        marks it failed in-band: ``error.type`` ``tool_error``, the message as the description (content)."""
        self._finish(run_id, fill=self._tool_fill(output), site="langchain.tool_output")

    @staticmethod
    def _tool_fill(output: Any) -> Any:
        def fill(span: SemanticSpan, _run: _Run) -> None:
            if span.records_content:
                span.set_tool_result(extract.tool_result(output, span.telemetry.settings.media_budget()))
            if probes.attr(output, "type") == "tool" and probes.attr(output, "status") == "error":
                span.set_error(A.TOOL_ERROR, probes.text(probes.attr(output, "content", "")))
        return fill

    @guarded("langchain.on_tool_error")
    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """The tool run raised ``error``: its span ends with it."""
        self._finish(run_id, error)

    # -- retrievers ----------------------------------------------------------------------
    @guarded("langchain.on_retriever_start")
    def on_retriever_start(self, serialized: dict[str, Any] | None, query: str, *, run_id: UUID,
                           parent_run_id: UUID | None = None, tags: list[str] | None = None,
                           metadata: dict[str, Any] | None = None, **kwargs: Any) -> None:
        """A retriever run starts: a ``retriever`` span with the query."""
        name = extract.run_name(serialized, kwargs.get("name"), Kind.RETRIEVER.value)
        opened = self._open(Kind.RETRIEVER, name, run_id, parent_run_id, tags, metadata)
        if opened is not None:
            with guard("langchain.retriever_query"):
                opened[0].set_retrieval(query=query, data_source=name)

    @guarded("langchain.on_retriever_end")
    def on_retriever_end(self, documents: Sequence[Any], *, run_id: UUID, **kwargs: Any) -> None:
        """The retriever run ended: its span ends with the documents."""
        self._finish(run_id, fill=lambda span, _run: span.set_retrieval(documents=extract.documents(documents)),
                     site="langchain.retriever_documents")

    @guarded("langchain.on_retriever_error")
    def on_retriever_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """The retriever run raised ``error``: its span ends with it."""
        self._finish(run_id, error)


def _requested_calls(state: Any) -> dict:
    """The tool calls (``{"name", "args", "id", ...}``) of the last AI message of a graph state, by call id."""
    messages = state.get("messages") if isinstance(state, Mapping) else None
    for message in reversed(messages if isinstance(messages, list) else []):
        if probes.attr(message, "type") == "ai":
            calls = probes.attr(message, "tool_calls") or []
            return {c["id"]: c for c in calls if isinstance(c, Mapping) and isinstance(c.get("id"), str)}
    return {}
