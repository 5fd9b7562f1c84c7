"""Manual instrumentation: decorators and a context manager for plain-Python agents.

Not every agent is built on a framework. These open the same semantic spans
the instrumentors do, through the same span layer (kind attributes for OTel
GenAI, OpenInference and Langfuse; the content switch, redaction and budgets)::

    import otel_agents

    @otel_agents.tool
    def lookup_order(order_id: str) -> dict: ...

    @otel_agents.span("model", "support-model-1", provider="acme")
    def call_model(messages: list) -> dict:
        reply = ...
        otel_agents.manual.current_span().set_usage(otel_agents.manual.Usage(12, 5))
        return reply

    @otel_agents.agent(name="support")
    def support_agent(question: str) -> str: ...

    with otel_agents.span("chain", "rerank") as s:   # anything else, by hand
        s.set_input(candidates)
        ...

Model messages
    A model span's messages are recorded with the span layer's part model
    (OTel GenAI semconv v1.41 message parts), exported here: inside a model span,
    ``current_span().set_messages(input=[...], output=[...], system=[...], tools=[...])``
    takes :class:`ChatMessage` objects made of :class:`TextPart`,
    :class:`ReasoningPart`, :class:`ToolCallPart`, :class:`ToolCallResponsePart`
    and media parts (:class:`BlobPart` for bytes, :class:`UriPart`,
    :class:`FilePart`; :func:`media_part` turns a URL or ``data:`` URL into one),
    system instructions as strings, and the tools offered as
    :class:`ToolDefinition` objects::

        from otel_agents.manual import ChatMessage, ReasoningPart, TextPart, UriPart, current_span

        @otel_agents.span("model", "acme-vision-1", provider="acme")
        def describe(url: str) -> str:
            reply = client.describe(url)
            current_span().set_messages(
                system=["You describe pictures."],
                input=[ChatMessage("user", parts=[TextPart("What is this?"), UriPart(url, "image")])],
                output=[ChatMessage("assistant", parts=[ReasoningPart(reply.thinking), TextPart(reply.text)],
                                    finish_reason="stop")])
            return reply.text

    This gives ``gen_ai.input.messages`` / ``gen_ai.output.messages`` /
    ``gen_ai.system_instructions`` / ``gen_ai.tool.definitions`` and their
    OpenInference twins, under the content switch, redaction and the media budget
    (``OTEL_AGENTS_MAX_MEDIA_BYTES``), exactly as the instrumentors record them.

What is recorded
    ``agent(name=, id=, description=)`` → ``invoke_agent {name}``;
    ``tool(name=, description=)`` → ``execute_tool {name}`` (arguments as a JSON
    object in ``gen_ai.tool.call.arguments``, result in ``gen_ai.tool.call.result``);
    ``chain(name=, workflow=)`` → a chain span (``invoke_workflow {name}`` for a
    multi-agent orchestration); ``skill(name=, multi_step=)`` → a tool-like skill,
    or ``skill {name}`` wrapping several steps; ``span(kind, name, ...)`` → any
    kind, also as a decorator (``model``: ``chat {model}`` with
    ``gen_ai.request.model`` = ``name`` and ``provider=``; ``retriever``,
    ``embedding``). The name defaults to the function's ``__name__`` (model and
    embedding spans have no default: the name is the model's). The call's
    arguments, bound with :func:`inspect.signature` (defaults applied,
    ``self``/``cls`` dropped, ``**kwargs`` merged), become the input — the bare
    value when there is exactly one argument, else an object; tools always get
    an object — and the return value the output, both under the content policy
    (``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT``).

Function shapes
    Sync, ``async``, generator and async-generator functions (and methods,
    ``classmethod``/``staticmethod`` included), and callable objects, by the
    shape of their ``__call__`` (named after their class by default). The span is current while the
    function's own code runs, so nested decorated calls and framework calls
    become its children. A sync callable that returns a coroutine (an async
    function under another library's plain sync decorator, ``lambda q:
    agent.run(q)``) returns one of ours that awaits it: the span stays open,
    current inside, until the coroutine is done (its result the output), and
    ends as abandoned if the coroutine is never awaited; one that returns a
    generator or async generator is treated as a generator function is.
    A generator's span opens at the call and ends with the
    stream (exhausted, closed, failed, or abandoned: garbage-collected
    unfinished or idle past ``OTEL_AGENTS_STREAM_IDLE_TIMEOUT``, marked
    ``otel_agents.stream.abandoned``); its output is the items (joined when they
    are strings). A decorated generator returns an iterator proxy (not a
    ``types.GeneratorType``); ``send``/``throw`` (``asend``/``athrow``) are
    tracked as iteration is: a generator they drive to its end ends its span
    then, an exception ``throw`` makes it raise is its error, and what it yields
    to them is output.

Errors
    An exception raised by the function is recorded on the span (status ERROR,
    ``error.type``, an ``exception`` event; its message only with content on) and
    re-raised unchanged; ``BaseException`` that is not an ``Exception``
    (cancellation, ``KeyboardInterrupt``, ``GeneratorExit``) is marked
    ``otel_agents.control_flow`` instead. A failure inside our own code is logged
    once and never reaches the caller.

Where spans go
    The providers of the last :func:`otel_agents.instrument` or
    :func:`otel_agents.configure` call, so decorated spans and framework spans
    share one provider and one trace; before any such call, the global tracer and
    meter providers (set them before or after decorating: the tracer resolves
    lazily). :func:`set_providers` overrides both. Spans
    carry ``otel_agents.framework = manual`` and the run context of
    :mod:`otel_agents.context` (session, user, tags, metadata).

Design decision: a decorated tool (or tool-like skill) that a framework calls
as its tool — the framework's tool span of the same name is the current span —
opens no second span, so a tool call is never counted twice in the ECP
envelope's ``tool_calls``; called anywhere else it opens its own.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Mapping, TypeVar

from opentelemetry import trace

from .._spans import (AsyncStepIterator, EnteredStack, StepIterator, awaited, call_target, BlobPart, ChatMessage, FilePart, ReasoningPart, SemanticSpan, Settings, Telemetry, TextPart,
                      ToolCallPart, ToolCallResponsePart, ToolDefinition, UriPart, Usage, guard, media_part,
                      non_recording_span, semantic_span_for, wrap_stream)
from .._spans.finalisers import new_lock
from ..semconv import Kind, span_name

__all__ = ["BlobPart", "ChatMessage", "FilePart", "ReasoningPart", "SpanSpec", "TextPart", "ToolCallPart",
           "ToolCallResponsePart", "ToolDefinition", "UriPart", "Usage", "agent", "chain", "current_span",
           "media_part", "set_providers", "skill", "span", "tool"]

_F = TypeVar("_F", bound=Callable[..., Any])
_TOOL_LIKE = (Kind.TOOL, Kind.SKILL)
_MODEL_KINDS = (Kind.MODEL, Kind.EMBEDDING)
_STREAM_ITEMS_MAX = 10_000  # a stream's output keeps at most this many items (and ~ the content budget)

_telemetry: Telemetry | None = None
_telemetry_lock = new_lock()  # released in a forked child (see _spans.finalisers)
_explicit = False  # set_providers() chose the providers: instrument()/configure() leave them alone
# the providers, vocabularies and content switch of the last instrument()/configure()
_followed: tuple[Any, Any, Any, Any] = (None, None, None, None)


def set_providers(tracer_provider: Any = None, *, meter_provider: Any = None,
                  settings: Settings | None = None) -> None:
    """Send the spans and metrics of decorated code to these providers, whatever
    :func:`otel_agents.instrument` or :func:`otel_agents.configure` is called with later.

    Args:
        tracer_provider: an OTel ``TracerProvider``; ``None`` = the global one.
        meter_provider: an OTel ``MeterProvider``; ``None`` = the global one.
        settings: content policy and budgets; ``None`` = the environment's.

    Takes effect for every call made afterwards, including calls of functions
    decorated earlier. Without this call the decorators follow the providers of
    the last ``instrument()``/``configure()`` (so framework spans and decorated
    spans share one provider and one trace), else the global ones;
    ``set_providers()`` with no argument returns to that default.

    Raises:
        TypeError: a provider that is not one (a class, a string).
    """
    global _telemetry, _explicit
    with _telemetry_lock:
        explicit = tracer_provider is not None or meter_provider is not None or settings is not None
        # built before anything is set: a provider that is not one (TypeError) changes nothing
        _telemetry = Telemetry(tracer_provider, meter_provider, settings=settings, framework="manual",
                               scope="otel_agents.manual") if explicit else _following()
        _explicit = explicit


def follow_providers(tracer_provider: Any = None, meter_provider: Any = None, *,
                     vocabularies: frozenset[str] | None = None, capture_content: bool | None = None) -> None:
    """Called by ``instrument()``/``configure()``: decorated code follows their providers, vocabulary
    selection and content switch, unless :func:`set_providers` chose others. ``None`` = the global
    provider (the environment's vocabularies and content switch)."""
    global _telemetry, _followed
    with _telemetry_lock:
        _followed = (tracer_provider, meter_provider, vocabularies, capture_content)
        if not _explicit:
            _telemetry = _following()


def _following() -> Telemetry:
    tracer_provider, meter_provider, vocabularies, capture_content = _followed
    settings = Settings(vocabularies=vocabularies, capture_content=capture_content)
    return Telemetry(tracer_provider, meter_provider, settings=settings, framework="manual",
                     scope="otel_agents.manual")


def _get_telemetry() -> Telemetry:
    if _telemetry is None:
        with _telemetry_lock:
            if _telemetry is None:
                globals()["_telemetry"] = Telemetry(framework="manual", scope="otel_agents.manual")
    return _telemetry  # type: ignore[return-value]


def current_span() -> SemanticSpan:
    """The innermost open semantic span of the current context.

    Works inside any decorated function and any span an instrumentor made
    current (also through one application span opened inside it). Use it to
    add what only the function knows, e.g. ``current_span().set_usage(Usage(12, 5))``
    in a model function or ``current_span().set_attribute("app.step", 3)``.

    Never ``None``: outside any semantic span, or where nothing records (no SDK tracer provider,
    ``OTEL_SDK_DISABLED=true``), a span that records nothing (``is_recording`` is ``False``; its setters do
    nothing), as OTel's ``trace.get_current_span()`` returns ``INVALID_SPAN``. So the calls above never break
    the program; test ``current_span().is_recording`` to know whether what you set is kept.
    """
    return semantic_span_for(trace.get_current_span()) or non_recording_span()


class _Arguments:
    """Binds a call's arguments to the function's parameters (computed once per function)."""

    __slots__ = ("signature", "receiver")

    def __init__(self, fn: Callable[..., Any]):
        try:
            self.signature: inspect.Signature | None = inspect.signature(fn)
        except (TypeError, ValueError):
            self.signature = None
        first = next(iter(self.signature.parameters.values()), None) if self.signature else None
        self.receiver = first.name if first is not None and first.name in ("self", "cls") and \
            first.kind in (first.POSITIONAL_ONLY, first.POSITIONAL_OR_KEYWORD) else None

    def bind(self, args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> dict[str, Any] | None:
        """``{parameter: value}`` of one call (defaults applied, receiver dropped, ``**kwargs``
        merged), or ``None`` when the arguments do not fit (the call itself will raise)."""
        if self.signature is None:
            out: dict[str, Any] = {}
            if args:
                out["args"] = list(args)
            out.update(kwargs)
            return out
        try:
            bound = self.signature.bind(*args, **kwargs)
        except TypeError:
            return None
        bound.apply_defaults()
        out = {}
        for name, value in bound.arguments.items():
            if name == self.receiver:
                continue
            if self.signature.parameters[name].kind is inspect.Parameter.VAR_KEYWORD:
                out.update({str(k): v for k, v in value.items()})
            else:
                out[name] = value
        return out


class _StreamOutput:
    """Collects a stream's items for its output, bounded by the content budget."""

    __slots__ = ("items", "size", "budget")

    def __init__(self, budget: int):
        self.items: list[Any] = []
        self.size = 0
        self.budget = budget

    def add(self, item: Any) -> None:
        if self.size > self.budget or len(self.items) >= _STREAM_ITEMS_MAX:
            return  # past the budget: the encoder cuts and marks the output anyway
        self.items.append(item)
        self.size += len(item) if isinstance(item, str) else 64

    def value(self) -> Any:
        if self.items and all(isinstance(i, str) for i in self.items):
            return "".join(self.items)
        return list(self.items)


class SpanSpec:
    """What :func:`span` returns: a context manager that yields the open
    :class:`~otel_agents._spans.SemanticSpan`, and a decorator.

    As a context manager the span is current inside the ``with`` body; an
    exception is recorded and re-raised unchanged. One object (a module-level
    ``STEP = span("chain", "step")``) may be entered by several ``with`` at once,
    in threads and asyncio tasks: each exit ends the span its own task opened. An exit in a thread or task
    that entered nothing (``__exit__`` called by hand elsewhere) ends the newest span still open, logged once;
    the task that opened it detaches at its own exit.
    """

    def __init__(self, kind: Kind | str, name: str | None = None, *, provider: str | None = None,
                 operation: str | None = None, workflow: bool = False, multi_step: bool = False,
                 description: str | None = None, id: str | None = None,
                 attributes: Mapping[str, Any] | None = None):
        self.kind = Kind(kind)
        self.name = name
        self.provider = provider
        self.operation = operation
        self.workflow = workflow
        self.multi_step = multi_step
        self.description = description
        self.id = id
        self.attributes = dict(attributes) if attributes else None
        self._entered = EnteredStack()  # one object may be entered by many tasks and threads at once

    # -- context manager ---------------------------------------------------------
    def __enter__(self) -> SemanticSpan:
        cm = self._open()
        semantic = cm.__enter__()
        self._entered.push(cm)
        return semantic

    def __exit__(self, *exc_info: Any) -> Any:
        entered, first = self._entered.pop()
        if not first:  # ended by an exit in another thread or task: what is left is this context's detach
            entered.keep_open()
        return entered.__exit__(*exc_info)

    # -- decorator ---------------------------------------------------------------
    def __call__(self, fn: _F) -> _F:
        """Decorate ``fn`` (sync, async, generator or async generator; see the module docstring).

        Raises:
            TypeError: ``fn`` is not callable.
        """
        if isinstance(fn, (staticmethod, classmethod)):
            return type(fn)(self(fn.__func__))  # type: ignore[return-value]
        if not callable(fn):
            raise TypeError(f"otel_agents.{self.kind.value}: cannot decorate {type(fn).__name__!r}, "
                            "expected a function")
        spec = self._named_after(fn)
        arguments = _Arguments(fn)
        shape = call_target(fn)

        if inspect.isasyncgenfunction(shape):
            @functools.wraps(fn)
            def agen_wrapper(*args: Any, **kwargs: Any) -> Any:
                return spec._call_stream(fn, arguments, args, kwargs, AsyncStepIterator)
            return self._declared(agen_wrapper)

        if inspect.isgeneratorfunction(shape):
            @functools.wraps(fn)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                return spec._call_stream(fn, arguments, args, kwargs, StepIterator)
            return self._declared(gen_wrapper)

        if inspect.iscoroutinefunction(shape):
            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                if spec._framework_has_it():
                    return await fn(*args, **kwargs)
                with spec._open() as s:
                    spec._record_input(s, arguments, args, kwargs)
                    result = await fn(*args, **kwargs)
                    spec._record_output(s, result)
                return result
            return self._declared(async_wrapper)

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            if spec._framework_has_it():
                return fn(*args, **kwargs)
            opened = spec._open()
            with opened as s:
                spec._record_input(s, arguments, args, kwargs)
                result = fn(*args, **kwargs)
                if inspect.iscoroutine(result) or inspect.isgenerator(result) or inspect.isasyncgen(result):
                    # a sync wrapper around async or generator code: the span covers the await or the stream
                    handed = spec._hand_over(opened, s, result)
                    if handed is not None:
                        return handed
                spec._record_output(s, result)
            return result
        return self._declared(wrapper)

    def _declared(self, wrapper: Callable[..., Any]) -> Any:
        """``wrapper``, carrying as ``name`` the agent name an ``@agent(name=...)`` declared: what a server reads as
        the agent's own name (``otel-agents ecp serve`` answers ``agent/initialize`` with it)."""
        if self.kind is Kind.AGENT and self.name:
            wrapper.name = self.name  # type: ignore[attr-defined]
        return wrapper

    # -- internals ---------------------------------------------------------------
    def _named_after(self, fn: Callable[..., Any]) -> "SpanSpec":
        """A copy with the defaults a decorated function gives (name, tool description)."""
        spec = SpanSpec(self.kind, self.name, provider=self.provider, operation=self.operation,
                        workflow=self.workflow, multi_step=self.multi_step, description=self.description,
                        id=self.id, attributes=self.attributes)
        if spec.name is None and self.kind not in _MODEL_KINDS:
            spec.name = getattr(fn, "__name__", None) or type(fn).__name__  # a callable object: its class
        if spec.description is None and spec._tool_like:
            doc = inspect.getdoc(fn)
            spec.description = doc.strip().split("\n\n")[0].replace("\n", " ") if doc else None
        return spec

    @property
    def _tool_like(self) -> bool:
        return self.kind in _TOOL_LIKE and not (self.kind is Kind.SKILL and self.multi_step)

    def _open(self) -> Any:
        """``Telemetry.span`` (opens, makes current, records errors, ends) with this span's identity."""
        return _Opened(self)

    def _identify(self, s: SemanticSpan) -> None:
        if self.kind is Kind.AGENT:
            s.set_agent(self.name, id=self.id, description=self.description)
        elif self._tool_like:
            s.set_tool(self.name, description=self.description)
        elif self.kind in _MODEL_KINDS:
            s.set_model(request_model=self.name, provider=self.provider)
        elif self.kind is Kind.RETRIEVER:
            s.set_retrieval(data_source=self.name)

    def _framework_has_it(self) -> bool:
        """A framework called this tool as its own tool: its span is current and carries our name."""
        if not self._tool_like:
            return False
        with guard("manual.framework_has_it"):
            current = trace.get_current_span()
            s = semantic_span_for(current)
            return (s is not None and s.kind in _TOOL_LIKE and s.telemetry.framework not in (None, "manual")
                    and s.span is current and s.name == span_name(self.kind, self.name))
        return False

    def _record_input(self, s: SemanticSpan, arguments: _Arguments, args: tuple[Any, ...],
                      kwargs: Mapping[str, Any]) -> None:
        if not s.is_recording or not s.content_enabled:
            return
        with guard("manual.record_input"):
            bound = arguments.bind(args, kwargs)
            if bound is None:
                return
            if self._tool_like:
                s.set_tool(self.name, arguments=bound)
            elif len(bound) == 1:
                s.set_input(next(iter(bound.values())))
            elif bound:
                s.set_input(bound)

    def _record_output(self, s: SemanticSpan, result: Any) -> None:
        if self._tool_like:
            s.set_tool_result(result)
        else:
            s.set_output(result)

    def _hand_over(self, opened: "_Opened", s: SemanticSpan, result: Any) -> Any:
        """The coroutine, generator or async generator a decorated sync callable returned, as one that ends ``s``
        when it is done (its result, or its items, the output), as a decorated async or generator function does;
        ``s`` stays open past the ``with``. ``None`` when ours failed: the caller gets its own object and the span
        ends now, as before."""
        with guard("manual.hand_over"):
            if inspect.iscoroutine(result):
                handed = awaited(result, s, on_result=self._record_output)
            else:
                handed = self._stream(s, result, AsyncStepIterator if inspect.isasyncgen(result) else StepIterator)
            opened.keep_open()
            return handed
        return None

    def _call_stream(self, fn: Callable[..., Any], arguments: _Arguments, args: tuple[Any, ...],
                     kwargs: Mapping[str, Any], stepper: type) -> Any:
        if self._framework_has_it():
            return fn(*args, **kwargs)
        s = _get_telemetry().start_span(self.kind, self.name, **self._start_options())
        self._identify(s)
        self._record_input(s, arguments, args, kwargs)
        try:
            stream = fn(*args, **kwargs)
        except BaseException as exc:
            s.record_error(exc, control_flow=not isinstance(exc, Exception))
            s.end()
            raise
        return self._stream(s, stream, stepper)

    def _stream(self, s: SemanticSpan, stream: Any, stepper: type) -> Any:
        """``stream`` with each step run with ``s`` current, ending ``s`` when it ends (its items the output)."""
        output = _StreamOutput(s.telemetry.settings.content_budget()) if s.content_enabled else None

        def on_end(span: SemanticSpan, abandoned: bool) -> None:
            if output is not None and output.items:
                self._record_output(span, output.value())

        return wrap_stream(stepper(stream, s.context()), s, on_chunk=output.add if output else None,
                           on_end=on_end)

    def _start_options(self) -> dict[str, Any]:
        return {"operation": self.operation, "workflow": self.workflow, "multi_step": self.multi_step,
                "attributes": self.attributes}


class _Opened:
    """One opened :class:`SpanSpec`: ``Telemetry.span`` plus the span's identity."""

    __slots__ = ("spec", "cm")

    def __init__(self, spec: SpanSpec):
        self.spec = spec
        self.cm: Any = None

    def __enter__(self) -> SemanticSpan:
        self.cm = _get_telemetry().span(self.spec.kind, self.spec.name, **self.spec._start_options())
        s = self.cm.__enter__()
        self.spec._identify(s)
        return s

    def __exit__(self, *exc_info: Any) -> Any:
        return self.cm.__exit__(*exc_info)

    def keep_open(self) -> None:
        """The span outlives the ``with``: its exit detaches only (see ``_SpanScope.keep_open``)."""
        self.cm.keep_open()


def span(kind: Kind | str, name: str | None = None, *, provider: str | None = None,
         operation: str | None = None, workflow: bool = False, multi_step: bool = False,
         description: str | None = None, id: str | None = None,
         attributes: Mapping[str, Any] | None = None) -> SpanSpec:
    """A semantic span of any kind, as a context manager or a decorator.

    Args:
        kind: ``agent``, ``chain``, ``model``, ``tool``, ``skill``, ``retriever``,
            ``embedding`` (or a :class:`~otel_agents.Kind`).
        name: the agent/tool/component name, or the model's name for ``model`` and
            ``embedding`` (low cardinality: never user text). As a decorator the
            default is the function's ``__name__`` (no default for models).
        provider: the model provider (``gen_ai.provider.name``; model/embedding only).
        operation: overrides ``gen_ai.operation.name`` (``text_completion`` …).
        workflow: a chain that orchestrates several agents (``invoke_workflow``).
        multi_step: a skill wrapping several steps rather than one tool call.
        description: an agent's description (content) or a tool's description.
        id: the agent id (``gen_ai.agent.id``).
        attributes: extra non-content attributes set when the span starts.

    Returns:
        A :class:`SpanSpec`: ``with span(...) as s`` yields the open semantic span
        (set input, output, usage… on it); ``@span(...)`` decorates a function.

    Raises:
        ValueError: ``kind`` is not a known kind.
    """
    return SpanSpec(kind, name, provider=provider, operation=operation, workflow=workflow,
                    multi_step=multi_step, description=description, id=id, attributes=attributes)


def _decorator(kind: Kind, fn: Any, options: dict[str, Any]) -> Any:
    """``@kind``, ``@kind(...)`` and ``@kind("name")`` all work."""
    if isinstance(fn, str):
        options["name"] = fn
        fn = None
    spec = SpanSpec(kind, **options)
    return spec if fn is None else spec(fn)


def agent(fn: Any = None, *, name: str | None = None, id: str | None = None, description: str | None = None,
          attributes: Mapping[str, Any] | None = None) -> Any:
    """Decorate an agent function: each call is an ``invoke_agent {name}`` span.

    ``name`` defaults to the function's name; ``description`` (content) and ``id``
    go to ``gen_ai.agent.description`` / ``gen_ai.agent.id``. Usable bare
    (``@agent``), with options (``@agent(name="support")``) or with the name
    alone (``@agent("support")``).
    """
    return _decorator(Kind.AGENT, fn, {"name": name, "id": id, "description": description,
                                       "attributes": attributes})


def tool(fn: Any = None, *, name: str | None = None, description: str | None = None,
         attributes: Mapping[str, Any] | None = None) -> Any:
    """Decorate a tool function: each call is an ``execute_tool {name}`` span.

    Arguments are recorded as a JSON object (``gen_ai.tool.call.arguments``), the
    return value as the result. ``description`` defaults to the docstring's
    first paragraph.
    """
    return _decorator(Kind.TOOL, fn, {"name": name, "description": description, "attributes": attributes})


def chain(fn: Any = None, *, name: str | None = None, workflow: bool = False,
          attributes: Mapping[str, Any] | None = None) -> Any:
    """Decorate a step or pipeline function: a chain span named after it
    (``invoke_workflow {name}`` with ``workflow=True``, for a multi-agent orchestration)."""
    return _decorator(Kind.CHAIN, fn, {"name": name, "workflow": workflow, "attributes": attributes})


def skill(fn: Any = None, *, name: str | None = None, description: str | None = None, multi_step: bool = False,
          attributes: Mapping[str, Any] | None = None) -> Any:
    """Decorate a skill: a tool-like ``execute_tool {name}`` span, or with
    ``multi_step=True`` a ``skill {name}`` span wrapping several steps."""
    return _decorator(Kind.SKILL, fn, {"name": name, "description": description, "multi_step": multi_step,
                                       "attributes": attributes})
