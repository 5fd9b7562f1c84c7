"""How a semantic span ended: errors (raised or reported in-band), control flow, pauses, abandoned
streams, and the opt-in status OK. A mixin of :class:`~.span.SemanticSpan`."""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any, Mapping

from opentelemetry.trace import Status, StatusCode

from ..semconv import Kind, attributes as A
from ..semconv.mapping import OP_INVOKE_WORKFLOW
from . import pipeline, probes
from .guard import guard, report_internal_error

if TYPE_CHECKING:
    from opentelemetry.trace import Span

_NOT_COMPLETED = (A.OTEL_AGENTS_CONTROL_FLOW, A.OTEL_AGENTS_PAUSED, A.OTEL_AGENTS_STREAM_ABANDONED)
# What stops a run rather than failing it: a cancellation, or the program stopping (Ctrl-C, sys.exit() in a tool).
_STOPPED = (asyncio.CancelledError, KeyboardInterrupt, SystemExit)


def _qualified(etype: type) -> str:
    """``error.type`` / ``exception.type`` of an exception class: its qualified name, with its module unless
    built in."""
    return etype.__qualname__ if etype.__module__ in ("builtins", None) else f"{etype.__module__}.{etype.__qualname__}"


class OutcomeSetters:
    """Outcome setters (see :class:`~.span.SemanticSpan`)."""

    __slots__ = ()
    if TYPE_CHECKING:
        span: Span
        _ended: bool
        _mute: bool
        _content: bool
        _budget: int
        _error_type: str | None
        _in_band: bool
        _stored: bool
        _recorded: BaseException | None  # the last exception recorded; None once ended (SemanticSpan.end)
        _unanswered: BaseException | None  # a failed attempt pending (record_failed_attempt)
        _attempt: BaseException | None  # the last failed attempt, pending or answered; unset until one, None once ended
        _usage: Any
        kind: Kind
        _kind_attrs: Mapping[str, str]

        def set_attribute(self, key: str, value: Any) -> None: ...
        def _withdraw_usage(self) -> None: ...
        def _emit(self, attrs: Mapping[str, Any]) -> None: ...

    def record_error(self, exc: BaseException, *, control_flow: bool = False) -> None:
        """Record an exception.

        An error sets status ERROR, ``error.type`` (the exception's qualified class
        name) and an ``exception`` event (its message only when content is on).
        A ``control_flow`` signal (a framework's interrupt, cancellation-as-flow)
        is not an error: it only sets ``otel_agents.control_flow``. A run's span (an agent span, or an
        ``invoke_workflow`` chain: a team, a crew, a workflow) ended by ``asyncio.CancelledError``,
        ``KeyboardInterrupt`` or ``SystemExit`` (the program stopped the run: Ctrl-C, ``sys.exit()`` in a tool)
        also gets the stop reason ``cancelled``. After
        :meth:`set_error` (an in-band failure, e.g. MCP ``isError``), the exception a
        framework made of that failure adds its event only: the in-band ``error.type``
        and status stand (they are the protocol's own, more precise, verdict). An exception already recorded on
        the span adds nothing (a library's failure noted where it happened, then re-raised through the framework's
        call, is one failure), except that a failed attempt (:meth:`record_failed_attempt`), pending or answered,
        recorded again fails the span now: it reached the caller.
        """
        if self._ended:
            return
        if getattr(self, "_recorded", None) is exc:  # unset until the first error (no cost per span)
            if getattr(self, "_attempt", None) is exc:
                self._fail_attempt(exc)
            return
        with guard("span.record_error"):
            etype = type(exc)
            qual = _qualified(etype)
            if isinstance(exc, _STOPPED) and (self.kind is Kind.AGENT or (
                    self.kind is Kind.CHAIN and self._kind_attrs.get(A.GEN_AI_OPERATION_NAME) == OP_INVOKE_WORKFLOW)):
                self.set_stop_reason("cancelled")  # a run's span: an agent's, or a workflow's (team, crew)
            self._recorded = exc
            if not control_flow and not self._in_band:
                self._error_type = qual  # for the duration metric, even when the span is sampled out
            if self._mute:
                return
            if control_flow:
                self._emit({A.OTEL_AGENTS_CONTROL_FLOW: qual})
                return
            message = self._exception_message(exc)
            if not self._in_band:
                self._set_failed(etype, qual, message)
            self._exception_event(exc, qual, message)

    def record_failed_attempt(self, exc: BaseException, *, retried: bool = False) -> None:
        """Record ``exc``, the failure of one attempt of the call this span stands for, which another attempt may
        still answer (LiteLLM's ``Router`` sends the request again to a fallback deployment when a stream breaks
        before its first chunk): its ``exception`` event now, as :meth:`record_error` writes it (type,
        message only when content is on, stacktrace; redacted), but not status ERROR nor ``error.type``: the
        failure is pending. Convention: OTel semantic conventions, general/recording-errors.md: an error that was
        retried, letting the operation complete, is not recorded as the operation's (no error status, no
        ``error.type`` on its span or duration metric); the diagnostic record of it is kept here as the span
        layer's ``exception`` span event (that document's own choice for one is a log record below ERROR severity).

        A finish reason written after it (:meth:`~.model.ModelSetters.set_finish_reasons`: a response ended, so
        the call was answered) settles it: status and ``error.type`` are what the answer makes them. The span's
        token counts (:meth:`~.model.ModelSetters.set_usage`, attributes and token metric) are the answer's:
        those given before ``exc`` were the failed attempt's and are withdrawn; those given while it is pending
        are held and written when a finish reason settles it, whichever a caller writes first (smolagents writes
        a response's usage before its finish reason, LiteLLM's stream the reason first).

        A span that ends with it pending fails with it as :meth:`record_error` would have: status ERROR,
        ``error.type`` its qualified class name, no second event; the counts held are dropped (nothing they
        answered). So does a span that records ``exc`` again, pending or answered: it was raised on to the
        caller, so the call failed (the counts written for an answer stay: that response was generated). An
        error recorded meanwhile (another exception, :meth:`set_error`, :meth:`mark_incomplete`) is the span's:
        the attempt stays an event.

        With ``retried``, the event only: nothing is pending, the span's status, counts and metrics stay what the
        caller records of the call's end (an SDK's own retry loop inside the call an instrumentor wraps: the call
        returns the last attempt's response, or raises the SDK's error, which the instrumentor records)."""
        if self._ended or getattr(self, "_recorded", None) is exc:
            return
        with guard("span.record_failed_attempt"):
            if not retried:
                self._recorded = self._attempt = self._unanswered = exc
                self._withdraw_usage()
            if not self._mute:
                self._exception_event(exc, _qualified(type(exc)), self._exception_message(exc))

    def _fail_attempt(self, exc: BaseException) -> None:
        """The failed attempt ``exc`` (:meth:`record_failed_attempt`) is the call's failure: nothing answered it
        (pending when the span ends) or it was raised on to the caller (recorded again). The counts held for an
        answer, if pending, are dropped; the span fails with it (its event is written), unless it failed otherwise
        meanwhile."""
        if self._unanswered is not None:
            self._unanswered = self._usage = None
        if self._error_type is not None:
            return
        with guard("span.record_failed_attempt"):
            etype = type(exc)
            qual = self._error_type = _qualified(etype)
            if not self._mute:
                self._set_failed(etype, qual, self._exception_message(exc))

    def _exception_message(self, exc: BaseException) -> str:
        """``exc``'s message as the span records it: redacted and cut to the budget with content on, else empty
        (the exception is the user's: its ``__str__`` may raise, which :func:`~.probes.text` never does)."""
        return pipeline.message(probes.text(exc), self._budget) if self._content else ""

    def _set_failed(self, etype: type, qual: str, message: str) -> None:
        """Status ERROR and ``error.type`` ``qual`` for an exception of class ``etype`` (the status is set before
        anything else can fail, so a failed call is never reported as ok)."""
        self._emit({A.ERROR_TYPE: qual})
        self.span.set_status(Status(StatusCode.ERROR, f"{etype.__name__}: {message}"[:512] if self._content
                                    else etype.__name__))  # the message may quote user content

    def _exception_event(self, exc: BaseException, qual: str, message: str) -> None:
        """The ``exception`` event of ``exc``: one formatting of the traceback (the SDK's ``record_exception``
        would format it again)."""
        self.span.add_event("exception", {"exception.type": qual, "exception.message": message,
                                          "exception.stacktrace": pipeline.stacktrace(exc, qual, self._content,
                                                                                      self._budget)})

    def _set_ok(self) -> None:
        """Status OK (opt-in, ``OTEL_AGENTS_STATUS_OK``) for a span that ended normally: not on one whose
        status is already set, nor on a cancelled, interrupted, paused or abandoned one."""
        attrs = getattr(self.span, "attributes", None) or {}
        if any(key in attrs for key in _NOT_COMPLETED):
            return
        status = getattr(self.span, "status", None)
        if status is None or status.status_code is StatusCode.UNSET:
            self.span.set_status(Status(StatusCode.OK))

    def set_error(self, error_type: str, message: str | None = None) -> None:
        """Mark the span failed without an exception: a failure reported in-band (an MCP
        ``CallToolResult`` with ``isError``, a JSON-RPC error code).

        Sets status ERROR and ``error.type`` = ``error_type`` (low cardinality: ``tool_error``,
        ``-32602``); ``message`` (content: it may quote user data) is the status description
        when content is on, else the description is ``error_type``.
        """
        if self._ended:
            return
        self._error_type = error_type
        self._in_band = True
        if self._mute:
            return
        with guard("span.set_error"):
            description = error_type
            if message and self._content:
                description = pipeline.message(probes.text(message), 512)
            if type(error_type) is not str:  # the caller's value: the SDK's to check (see SemanticSpan._stored)
                self._stored = False
            self._emit({A.ERROR_TYPE: error_type})
            self.span.set_status(Status(StatusCode.ERROR, description))

    def set_denied(self, reason: str, message: str | None = None) -> None:
        """Mark a tool call refused without the tool running (a permission denial, a framework's own refusal:
        a spent call limit, a repeated call, an unknown tool): ``otel_agents.tool.denied`` = ``True`` and
        :meth:`set_error` with ``error.type`` = ``reason`` (the framework's word for it when it has one:
        ``usage_limit``, ``repeated_call``…; else ``permission_denied``) and ``message``, what the model was told
        (content)."""
        self.set_attribute(A.OTEL_AGENTS_TOOL_DENIED, True)
        self.set_error(reason, message)

    def set_stop_reason(self, reason: str) -> None:
        """Mark the run this span stands for (an agent span, or an ``invoke_workflow`` chain) as ended other than
        by its agent answering: ``otel_agents.run.stop_reason`` = ``reason``, one of
        :data:`~otel_agents.semconv.attributes.STOP_REASONS` (``max_turns``, ``budget``, ``termination``,
        ``guardrail``, ``cancelled``). The ECP fold reports it
        as the envelope's ``metrics.stop_reason`` and a ``stopped`` evidence line. An unknown value is a bug
        of ours: logged once, not written."""
        if reason not in A.STOP_REASONS:
            report_internal_error("span.set_stop_reason", ValueError(f"unknown stop reason {reason!r}"))
            return
        self.set_attribute(A.OTEL_AGENTS_STOP_REASON, reason)

    def mark_paused(self) -> None:
        """The run stopped waiting for a human (interrupt, deferred tool call): ``otel_agents.run.paused``."""
        self.set_attribute(A.OTEL_AGENTS_PAUSED, True)

    def mark_incomplete(self, missing: str) -> None:
        """The stream this model span covers ended without its terminal event: it was exhausted cleanly at the
        transport level, but ``missing`` (the event that closes a response: ``response.completed``,
        ``message_stop``, a choice's ``finish_reason``; a constant of the instrumentor, not content) never came.
        The response is cut, which is a failure of the call, not a consumer leaving early (that is
        :meth:`mark_abandoned`): status ERROR with the description ``stream ended without MISSING`` and
        ``error.type`` = ``stream_incomplete`` (:data:`~otel_agents.semconv.attributes.STREAM_INCOMPLETE`).
        An exception recorded after this (the stream raised) replaces both. What the caller writes besides is
        its own to keep truthful: no finish reason or usage the terminal event would have given."""
        if self._ended:
            return
        self._error_type = A.STREAM_INCOMPLETE  # for the duration metric, even when the span is sampled out
        if self._mute:
            return
        with guard("span.mark_incomplete"):
            self._emit({A.ERROR_TYPE: A.STREAM_INCOMPLETE})
            self.span.set_status(Status(StatusCode.ERROR, f"stream ended without {missing}"))

    def mark_abandoned(self) -> None:
        """A stream was not consumed to its end: ``otel_agents.stream.abandoned`` (not an error)."""
        self.set_attribute(A.OTEL_AGENTS_STREAM_ABANDONED, True)
