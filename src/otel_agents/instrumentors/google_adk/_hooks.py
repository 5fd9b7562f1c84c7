"""The span logic behind our ADK plugin: one method per plugin callback (all return ``None``, none raises).

Parents are explicit: an agent span opens under the transfer tool span that
handed over to it, else under its ``parent_agent``'s span, else (the invocation's
first agent) under the caller's context outside ADK's own ``invocation``/
``invoke_workflow`` span, or under the ``AgentTool`` span that started the run.
Model and tool spans open under their agent's span. None of ours is made
current, so none of ADK's spans (scope ``gcp.vertex.agent``) ever parents ours.
"""

from __future__ import annotations

import time
import weakref
from typing import Any

from opentelemetry import context as otel_context
from opentelemetry import trace
from opentelemetry.trace import NonRecordingSpan

from ..._spans import SemanticSpan, Telemetry, finalize, guard, pop_run_attributes, probes, push_run_attributes
from ..._spans.address import configured_url
from ..._spans.remote import mark_remote_agent
from ...semconv import Kind
from ...semconv import attributes as A
from . import _convert
from ._live import LIVE_AGENT
from ._runs import ACTIVE_TOOL, RUN_IDS, SYNC_CALLER, Invocation, Invocations, ModelCall, end_all, stop_reason

ADK_SCOPE = "gcp.vertex.agent"
"""The instrumentation scope of ADK's own spans (``google.adk.telemetry.tracing.tracer``)."""

_WORKFLOW_AGENTS = ("SequentialAgent", "ParallelAgent", "LoopAgent")


def caller_context() -> Any:
    """The context to open a run's first span in: the current one, taken now (when the run starts), unless ADK's
    own invocation span is current; then that span's parent (the caller's span, or a new root), so our tree
    never hangs from a span of ADK's that the application may not export. Taken now, not when the first agent
    span opens: by then ADK's ``invoke_agent`` span may be current and recording (an application that set
    ADK's module tracer after ``instrument()`` while a module holding our stand-in, imported meanwhile, opens
    the invocation span)."""
    current = trace.get_current_span()
    scope = getattr(getattr(current, "instrumentation_scope", None), "name", None)
    if scope != ADK_SCOPE:
        return otel_context.get_current()
    parent = getattr(current, "parent", None)
    return trace.set_span_in_context(NonRecordingSpan(parent) if parent is not None else trace.INVALID_SPAN)


def _is_workflow(agent: Any) -> bool:
    return any(cls.__name__ in _WORKFLOW_AGENTS for cls in type(agent).__mro__)


def _invocation_context(callback_context: Any) -> Any:
    return getattr(callback_context, "_invocation_context", None)


def _text(content: Any) -> str | None:
    texts = [p.text for p in getattr(content, "parts", None) or () if getattr(p, "text", None)
             and not getattr(p, "thought", None)]
    return "".join(texts) if texts else None


def _provider(agent: Any, model: str | None) -> str | None:
    llm = getattr(agent, "model", None)
    cls = type(llm).__name__ if llm is not None and not isinstance(llm, str) else ""
    if cls == "Claude" or (model or "").startswith("claude"):
        return "anthropic"
    if cls in ("Gemini", "Gemma") or (isinstance(llm, str) or not llm) and (model or "").startswith(("gemini", "gemma")):
        return "gcp.gemini"
    return None


def _base_url(agent: Any) -> str | None:
    """The endpoint an agent's model object was given (``Gemini(base_url=...)``); ``None`` for a model named by a
    string or left at its default endpoint (the genai client's, not read: it is made on first use)."""
    llm = getattr(agent, "model", None)
    return configured_url(llm, ("base_url",)) if llm is not None and not isinstance(llm, str) else None


def _request_output(config: Any) -> tuple[str | None, Any]:
    """What a request's ``GenerateContentConfig`` asks of the output, for :meth:`SemanticSpan.set_request_output`:
    the output type (a JSON MIME type or schema → ``json``, ``text/plain`` → ``text``; none asked, ``None``) and
    ``candidate_count``."""
    if config is None:
        return None, None
    mime = getattr(config, "response_mime_type", None)
    if mime == "application/json" or getattr(config, "response_schema", None) is not None or \
            getattr(config, "response_json_schema", None) is not None:
        output = "json"
    else:
        output = "text" if mime == "text/plain" else None
    return output, getattr(config, "candidate_count", None)


_PARAMS = ("temperature", "top_p", "top_k", "max_output_tokens", "stop_sequences", "seed", "presence_penalty",
           "frequency_penalty")


class Hooks:
    """Span bookkeeping for one ``instrument()`` call."""

    def __init__(self, telemetry: Telemetry):
        self.telemetry = telemetry
        self.invocations = Invocations()

    # -- runs ------------------------------------------------------------------------------------
    def before_run(self, invocation_context: Any) -> None:
        session = getattr(invocation_context, "session", None)
        ids: dict[str, str] = {}
        # An id that cannot be written as text loses only itself (probes.identifier), not the run's spans.
        session_id = probes.identifier(probes.attr(session, "id"), "google_adk.session_id")
        user_id = (probes.identifier(probes.attr(invocation_context, "user_id"), "google_adk.user_id")
                   or probes.identifier(probes.attr(session, "user_id"), "google_adk.user_id"))
        if session_id:
            ids[A.SESSION_ID] = ids[A.GEN_AI_CONVERSATION_ID] = session_id
        if user_id:
            ids[A.USER_ID] = user_id
        tool = ACTIVE_TOOL.get()
        delegated_by = None
        if tool is not None and not tool.ended:
            parent: Any = tool
            delegated_by = _agent_name_of(tool)
        else:
            parent = caller_context()
        self.invocations.add(Invocation(invocation_context.invocation_id, parent, ids, delegated_by))
        run_ids = RUN_IDS.get()
        if run_ids is not None:
            run_ids.append(invocation_context.invocation_id)
        # A caller that abandons the event stream may get no after_run_callback (a generator never
        # finalised, an ADK release that skips it): end the run's spans (marked abandoned) when
        # ADK lets go of the invocation context. Where ADK does call it, the plugin says it ended early.
        finalize(invocation_context, self._abandoned, invocation_context.invocation_id)

    def _abandoned(self, invocation_id: str) -> None:
        with guard("google_adk.abandoned"):
            inv = self.invocations.pop(invocation_id)
            if inv is not None:
                end_all(inv, abandoned=True)

    def after_run(self, invocation_context: Any, error: BaseException | None = None, *,
                  abandoned: bool = False) -> None:
        """The run is over: end what is still open (an agent that transferred gets no after_agent_callback).
        ``abandoned``: the caller left the event stream before the run finished; what is still open is
        marked ``otel_agents.stream.abandoned``."""
        inv = self.invocations.pop(invocation_context.invocation_id)
        if inv is not None:
            self._finish(inv, error, abandoned)

    def run_cancelled(self, invocation_ids: list[str], error: BaseException) -> None:
        """The task running these invocations was cancelled and ADK called no ``after_run``: end what they still
        have open as cancelled (control flow; the agents' stop reason ``cancelled``)."""
        for invocation_id in invocation_ids:
            inv = self.invocations.pop(invocation_id)
            if inv is not None:
                self._finish(inv, error, False)

    def run_left(self, invocation_ids: list[str]) -> None:
        """The ``run_async`` caller of these invocations left their events before the end: what ends from here
        on (as ADK cancels the task running them) was abandoned."""
        for invocation_id in invocation_ids:
            inv = self.invocations.get(invocation_id)
            if inv is not None:
                inv.left = True

    def _finish(self, inv: Invocation, error: BaseException | None, abandoned: bool) -> None:
        for agent_name, call in list(inv.models.items()):
            if abandoned:
                call.span.mark_abandoned()
            self._end_model(call, inv, error=error)
        inv.models.clear()
        for name, span in reversed(inv.named):
            if not span.ended:
                if abandoned:
                    span.mark_abandoned()
                self._end_agent(span, inv, name, error)
        end_all(inv, error=error, abandoned=abandoned)

    def run_error(self, invocation_context: Any, error: BaseException) -> None:
        self.after_run(invocation_context, error)

    def _invocation(self, invocation_context: Any) -> Invocation | None:
        inv_id = getattr(invocation_context, "invocation_id", None)
        return self.invocations.get(inv_id) if inv_id else None

    def _invocation_of(self, callback_context: Any) -> Invocation | None:
        """``self._invocation(_invocation_context(callback_context))`` in one call (a callback's or a tool's
        context): most callbacks of every step start with it."""
        inv_id = getattr(getattr(callback_context, "_invocation_context", None), "invocation_id", None)
        return self.invocations.get(inv_id) if inv_id else None

    # -- agents ----------------------------------------------------------------------------------
    def before_agent(self, agent: Any, callback_context: Any) -> None:
        ictx = _invocation_context(callback_context)
        inv = self._invocation(ictx)
        if inv is None:
            return
        name = getattr(agent, "name", None) or "agent"
        delegated_by = None
        if name in inv.transfers:
            parent, delegated_by = inv.transfers.pop(name)
        else:
            up = getattr(agent, "parent_agent", None)
            parent = inv.agents.get(getattr(up, "name", None)) if up is not None else None
            if parent is None:
                parent, delegated_by = (inv.root or inv.parent), (None if inv.root else inv.delegated_by)
        workflow = _is_workflow(agent)
        token = push_run_attributes(inv.ids) if inv.ids else None
        try:
            span = self.telemetry.start_span(Kind.CHAIN if workflow else Kind.AGENT, name, workflow=workflow,
                                             parent=parent)
        finally:
            if token is not None:
                pop_run_attributes(token)
        with guard("google_adk.agent.attributes"):
            span.set_agent(name, description=getattr(agent, "description", None) or None)
            if delegated_by:
                span.set_attribute(A.OTEL_AGENTS_PARENT_AGENT, delegated_by)
            if span.records_content and inv.root is None:
                content = getattr(ictx, "user_content", None)
                text = _text(content)
                if text is not None:
                    span.set_input(text, messages=[_convert.message(content)] if span.input_as_messages else None)
            if type(agent).__name__ == "RemoteA2aAgent":  # the A2A call inside enriches this span (a2a instrumentor)
                mark_remote_agent(span)
        if inv.root is None:
            inv.root = span
        if getattr(ictx, "live_request_queue", None) is not None:  # run_live: model spans from its connection
            LIVE_AGENT.set((self, inv, name))
        previous = inv.agents.get(name)
        if previous is not None and not previous.ended:  # a LoopAgent's sub-agent running again
            previous.end()
        inv.agents[name] = span
        inv.keeps_answers = span.content_enabled or (bool(inv.order) and inv.keeps_answers)
        inv.order.append(span)
        inv.named.append((name, span))

    def after_agent(self, agent: Any, callback_context: Any, error: BaseException | None = None) -> None:
        inv = self._invocation_of(callback_context)
        if inv is None:
            return
        name = getattr(agent, "name", None) or "agent"
        call = inv.models.pop(name, None)
        if call is not None:
            self._end_model(call, inv, error=error)
        span = inv.agents.pop(name, None)
        if span is None:
            return
        self._end_agent(span, inv, name, error)

    def _end_agent(self, span: SemanticSpan, inv: Invocation, name: str, error: BaseException | None) -> None:
        with guard("google_adk.agent.end"):
            # a workflow's, or a transferring agent's, answer is the last one given under it (looked up only
            # when it is recorded: content off, the answers are not kept, see Invocation.keeps_answers)
            if span.records_content:
                output = _last_output(inv, span) or inv.outputs.get(name)
                if output is not None:
                    span.set_output(output)
            if inv.paused:
                span.mark_paused()
            if _caller_left(inv):
                span.mark_abandoned()
            if error is not None:
                span.record_error(error, control_flow=not isinstance(error, Exception))
                if stop_reason(error) is not None:
                    span.set_stop_reason(stop_reason(error))
        span.end()

    # -- models ----------------------------------------------------------------------------------
    def before_model(self, callback_context: Any, llm_request: Any) -> None:
        ictx = _invocation_context(callback_context)
        inv = self._invocation(ictx)
        if inv is None:
            return
        if getattr(ictx, "live_request_queue", None) is not None:
            return  # run_live calls it only to screen the user's content: the requests are the connection's (_live)
        agent_name = getattr(callback_context, "agent_name", None) or ""
        previous = inv.models.pop(agent_name, None)
        if previous is not None:  # the last request of this agent had no final response: it is over now
            self._end_model(previous, inv)
        inv.models[agent_name] = self.model_call(inv, agent_name, llm_request, time.time_ns(), ictx)

    def model_call(self, inv: Invocation, agent_name: str, llm_request: Any, start: int,
                   ictx: Any = None) -> ModelCall:
        """A model request of ``agent_name`` (its span opens once answered, see :class:`~._runs.ModelCall`)."""
        model = getattr(llm_request, "model", None)
        parent = inv.agents.get(agent_name) or inv.root or inv.parent

        streamed = False
        with guard("google_adk.model.mode"):
            run_config = getattr(ictx, "run_config", None)
            streamed = (getattr(getattr(run_config, "streaming_mode", None), "name", "") or "") == "SSE"

        def opener() -> SemanticSpan:  # when the model has answered, failed or been left (see ModelCall)
            span = self.telemetry.start_span(Kind.MODEL, model, parent=parent, start_time=start)
            with guard("google_adk.model.request"):
                config = getattr(llm_request, "config", None)
                params = {k: getattr(config, k, None) for k in _PARAMS} if config is not None else {}
                if streamed:
                    params["stream"] = True
                span.set_model(request_model=model, provider=_provider(getattr(ictx, "agent", None), model),
                               parameters=params)
                span.set_request_output(*_request_output(config))
                span.set_server(_base_url(getattr(ictx, "agent", None)))
                if span.records_content:
                    span.set_messages(input=_convert.input_messages(llm_request), system=_convert.system(llm_request),
                                      tools=_convert.tool_definitions(llm_request))
            return span

        call = ModelCall(opener, agent_name, llm_request)
        call.streamed = streamed
        return call

    def after_model(self, callback_context: Any, llm_response: Any) -> None:
        inv = self._invocation_of(callback_context)
        if inv is None:
            return
        agent_name = getattr(callback_context, "agent_name", None) or ""
        call = inv.models.get(agent_name)
        if call is None:
            return
        call.last = llm_response
        partial = getattr(llm_response, "partial", None)
        if partial or call.streamed and not call.chunked:
            # a chunk of a streamed (SSE) request: a partial response, or a whole one that came as its first
            # chunk (the aggregate ADK makes of the partials when the stream ends is none)
            call.chunk_arrived()
        if partial:
            call.add_partial(llm_response)
            if not getattr(llm_response, "turn_complete", None):
                return
        else:
            call.final = llm_response
            if not (getattr(llm_response, "finish_reason", None) or getattr(llm_response, "usage_metadata", None)
                    or getattr(llm_response, "error_code", None) or getattr(llm_response, "turn_complete", None)):
                return  # an intermediate aggregate: the request goes on
        inv.models.pop(agent_name, None)
        self._end_model(call, inv)

    def model_error(self, callback_context: Any, error: BaseException) -> None:
        inv = self._invocation_of(callback_context)
        if inv is None:
            return
        call = inv.models.pop(getattr(callback_context, "agent_name", None) or "", None)
        if call is not None:
            self._end_model(call, inv, error=error, asked=True)

    def end_model(self, call: ModelCall, inv: Invocation, error: BaseException | None = None) -> None:
        """Fill and end a model request's span (a live turn's, :mod:`._live`: sent on the connection)."""
        self._end_model(call, inv, error, asked=True)

    def _end_model(self, call: ModelCall, inv: Invocation, error: BaseException | None = None,
                   asked: bool = False) -> None:
        """End ``call``'s span with ``error`` (``None``: answered). ``asked``: the model itself failed with
        ``error`` (``on_model_error_callback``, a live connection). Otherwise an unanswered call ending with an
        ``Exception`` was never made: every exception the model raises reaches ``on_model_error_callback`` first,
        so this one came from a callback before the model (an agent's ``before_model_callback``, a later
        plugin's) and makes no model span, as a callback answering in the model's place makes none. A
        cancellation or interrupt while the model was asked keeps its span (abandoned, or control flow)."""
        if call.unanswered and (error is None or stop_reason(error) == "max_turns"
                                or isinstance(error, Exception) and not asked):
            return  # a callback answered or failed in the model's place, or max_llm_calls refused it: never made
        span = call.span
        with guard("google_adk.model.end"):
            response = call.final or call.last
            reason = _convert.finish_reason(response) if response is not None else None
            if not span.records_content and not inv.keeps_answers:
                parts: list = []  # content off: nothing of the reply is recorded or kept; its finish reason is
            elif call.final is not None and getattr(call.final, "content", None) is not None:
                parts = _convert.parts_of(call.final.content)
            else:
                parts = call.assembled()
            if parts:
                # the model's own finish reason (Gemini sends STOP for a turn that calls functions too): none sent, none
                # recorded (a stream left early)
                message = _convert.message(getattr(call.final, "content", None), finish_reason=reason,
                                           parts=parts)
                message.role = "assistant"
                text = message.text
                if text and not message.tool_calls:
                    inv.outputs[call.agent] = text
                    inv.answers.append((call.agent, text))
                if span.records_content:
                    span.set_messages(output=[message])
                else:
                    span.set_finish_reasons([reason] if reason else [])
            elif reason:
                span.set_finish_reasons([reason])
            if response is not None:
                span.set_model(response_model=getattr(response, "model_version", None) or None)
                usage = _convert.usage(getattr(call.final, "usage_metadata", None) if call.final is not None else None)
                if usage is None:
                    usage = _convert.usage(getattr(call.last, "usage_metadata", None))
                if usage is None and call.usage is not None:
                    usage = _convert.usage(call.usage)
                span.set_usage(usage)
                code = getattr(response, "error_code", None)
                if code and error is None:
                    span.set_error(str(code), getattr(response, "error_message", None) or str(code))
            if call.final is None:
                if _caller_left(inv):
                    span.mark_abandoned()
                elif error is None and getattr(call.last, "partial", None) and \
                        not getattr(call.last, "turn_complete", None):
                    # The model's stream ended by itself after partial chunks, without the final response that
                    # closes it (ADK: "The last event is partial, which is not expected"): cut short.
                    span.mark_incomplete("its final (non-partial) LlmResponse")
            if error is not None:
                span.record_error(error, control_flow=not isinstance(error, Exception))
        span.end()

    def on_event(self, invocation_context: Any, event: Any) -> None:
        """An event the runner hands the caller: a final answer is what the user got from that agent (a
        ``before_model_callback``'s answer in the model's place, an ``after_model_callback``'s replacement of
        the model's), so it is the agent's output; the model span keeps what the model returned."""
        inv = self._invocation(invocation_context)
        author = getattr(event, "author", None)
        if inv is None or not author or getattr(event, "partial", None):
            return
        call = inv.models.get(author)
        if call is not None and call.unanswered:  # answered by a callback: the model was never asked
            inv.models.pop(author, None)
        if not inv.keeps_answers:
            return
        content = getattr(event, "content", None)
        parts = getattr(content, "parts", None) or ()
        if any(getattr(p, "function_call", None) or getattr(p, "function_response", None) for p in parts):
            return
        text = "".join(p.text for p in parts if getattr(p, "text", None) and not getattr(p, "thought", None))
        if text:
            inv.outputs[author] = text
            inv.answers.append((author, text))

    # -- tools -----------------------------------------------------------------------------------
    def before_tool(self, tool: Any, tool_args: Any, tool_context: Any) -> None:
        inv = self._invocation_of(tool_context)
        if inv is None:
            return
        agent_name = getattr(tool_context, "agent_name", None) or ""
        name = getattr(tool, "name", None) or type(tool).__name__
        span = self.telemetry.start_span(Kind.TOOL, name, parent=inv.agents.get(agent_name) or inv.root or inv.parent)
        call_id = getattr(tool_context, "function_call_id", None) or f"{agent_name}:{name}:{id(span)}"
        inv.tools[call_id] = span
        with guard("google_adk.tool.start"):
            span.set_tool(name, call_id=getattr(tool_context, "function_call_id", None),
                          description=getattr(tool, "description", None) or None,
                          arguments=dict(tool_args or {}) if span.records_content else None)
            target = getattr(getattr(tool, "agent", None), "name", None)  # AgentTool
            if target:
                span.set_attribute(A.OTEL_AGENTS_HANDOFF_TARGET, target)
            _AGENT_OF[span] = agent_name
        ACTIVE_TOOL.set(span)
        # Our tool span is current while the tool runs (ADK awaits before_tool, the tool and after_tool or
        # on_tool_error in one task), so the application's spans inside the tool nest under it.
        ctx = trace.set_span_in_context(span.span)
        inv.attached[call_id] = (ctx, otel_context.attach(ctx))

    def after_tool(self, tool: Any, tool_context: Any, result: Any = None, error: BaseException | None = None) -> None:
        inv = self._invocation_of(tool_context)
        if inv is None:
            return
        agent_name = getattr(tool_context, "agent_name", None) or ""
        call_id = getattr(tool_context, "function_call_id", None)
        span = inv.tools.pop(call_id, None) if call_id else None
        if span is None:
            return
        if ACTIVE_TOOL.get() is span:
            ACTIVE_TOOL.set(None)
        attached = inv.attached.pop(call_id, None)
        if attached is not None and otel_context.get_current() is attached[0]:
            otel_context.detach(attached[1])  # only in the context we attached in, never out of order
        with guard("google_adk.tool.end"):
            actions = getattr(tool_context, "actions", None)
            target = getattr(actions, "transfer_to_agent", None)
            if target:
                span.set_attribute(A.OTEL_AGENTS_HANDOFF_TARGET, str(target))
                inv.transfers[str(target)] = (span, agent_name)
            if getattr(actions, "requested_tool_confirmations", None) or getattr(actions, "requested_auth_configs", None) \
                    or (getattr(tool, "is_long_running", False) and error is None):
                span.mark_paused()
                inv.paused = True
            if error is not None:
                span.record_error(error, control_flow=not isinstance(error, Exception))
                from google.adk.tools.base_tool import BaseTool  # here: this module is imported without ADK too

                if type(tool) is BaseTool and isinstance(error, ValueError):  # ADK's stand-in for a name it lacks
                    span.set_denied(A.UNKNOWN_TOOL)
            elif result is not None:
                if span.records_content:
                    span.set_tool_result(result)
                rejected = _rejected_arguments(tool, result)
                if rejected is not None:
                    span.set_denied(A.INVALID_TOOL_ARGUMENTS, rejected)
        span.end()


# The two answers ADK's ``FunctionTool.run_async`` gives, without calling the function, to arguments it rejects
# (types that fail its validation; a mandatory parameter missing), after the tool's name.
_REJECTED_ARGUMENTS = ("()` failed due to argument validation errors:",
                       "()` failed as the following mandatory input parameters are not present:")


def _rejected_arguments(tool: Any, result: Any) -> str | None:
    """ADK's message if ``result`` is ``FunctionTool``'s answer to arguments it rejected (the function never ran:
    ``{"error": "Invoking `name()` failed ..."}``, recognised by ADK's own text; were it to change, the call
    reads as an ordinary one), else ``None``."""
    from google.adk.tools.function_tool import FunctionTool  # here: this module is imported without ADK too

    if not isinstance(tool, FunctionTool) or not isinstance(result, dict) or list(result) != ["error"]:
        return None
    message = result["error"]
    prefix = f"Invoking `{tool.name}"
    if isinstance(message, str) and message.startswith(prefix) and \
            message[len(prefix):].startswith(_REJECTED_ARGUMENTS):
        return message
    return None


# The agent that called each tool span (for ``otel_agents.agent.parent`` of an AgentTool's agent); weak keys,
# so an entry goes with its span.
_AGENT_OF: "weakref.WeakKeyDictionary[SemanticSpan, str]" = weakref.WeakKeyDictionary()


def _caller_left(inv: Invocation) -> bool:
    """Whether the caller of ``inv``'s run stopped iterating its events: the ``run_async`` caller
    (:meth:`Hooks.run_left`), or the ``Runner.run`` caller whose background thread runs this step. What ends
    after that ends because the run was abandoned (ADK's cancellation may be absorbed inside the run, so
    agents end through their normal callbacks)."""
    if inv.left:
        return True
    caller = SYNC_CALLER.get()
    return caller is not None and caller.left


def _agent_name_of(tool_span: SemanticSpan) -> str | None:
    return _AGENT_OF.get(tool_span)


def _last_output(inv: Invocation, span: SemanticSpan) -> str | None:
    """The last answer given by an agent under ``span`` (itself included)."""
    inside = {name for name, s in inv.named if s is span}
    for name, agent_span in inv.named:
        parent = agent_span.parent
        while parent is not None and parent is not span:
            parent = parent.parent
        if parent is span:
            inside.add(name)
    for name, text in reversed(inv.answers):
        if name in inside:
            return text
    return None
