"""Run context: a session, a user, tags and metadata on every span of a run.

::

    import otel_agents

    with otel_agents.using_session("conv-42"), otel_agents.using_user("u-7"):
        graph.invoke(...)                      # every span below carries both

    @otel_agents.using_tags(["beta", "eu"])
    async def handle(request): ...             # also a decorator (sync, async, generators)

Every span opened inside — by an instrumentor or by hand, in this thread, in an
``asyncio`` task started inside (tasks copy the context), or in a thread that
runs with a copy of the context (``contextvars.copy_context().run``; LangChain's
executors do this) — carries:

=====================  ===================================================
``using_session(id)``  ``session.id`` (OpenInference) and
                       ``gen_ai.conversation.id`` (OTel GenAI), both ``id``
``using_user(id)``     ``user.id``
``using_tags([...])``  ``tag.tags``: a list of strings; nested calls add to
                       the outer tags (order kept, no duplicates)
``using_metadata({})`` ``metadata``: a JSON object; nested calls merge into
                       the outer one (inner keys win); cut to the content
                       budget (``OTEL_AGENTS_MAX_CONTENT_LENGTH``) with the
                       JSON kept valid
=====================  ===================================================

The values are set when a span starts: a span already open when the block is
entered does not get them. A span that a callback framework opens with an
explicit parent on another thread inherits its parent's values (the span layer
does that). These are identifiers and labels the application chooses, not
captured content: the content switch does not remove them, as OpenInference's
``TraceConfig``/``OPENINFERENCE_HIDE_*`` masking never touches ``session.id``,
``user.id``, ``metadata`` or ``tag.tags`` (secret-named keys and secret shapes
in metadata are still redacted). Keep prompts and answers out of them.

:func:`current_agent_span` gives the span of the innermost agent run from inside
a tool or model call, to add attributes or events of your own.

Built on :mod:`otel_agents._spans.run_context` (one ``ContextVar``). Each
context manager object is meant for one ``with`` at a time; as a decorator, each
call enters a fresh scope, so one decorated function may run concurrently.
"""

from __future__ import annotations

import functools
import inspect
from contextlib import contextmanager
from typing import Any, Callable, Iterable, Iterator, Mapping, TypeVar

from opentelemetry import trace

from ._spans import AsyncStepIterator, SemanticSpan, StepIterator, current_run_attributes, guard, merged_metadata, pop_run_attributes, push_run_attributes
from ._spans import EnteredStack, call_target, probes, semantic_span_for
from .semconv import Kind, attributes as A

__all__ = ["current_agent_span", "using_metadata", "using_session", "using_tags", "using_user"]

_F = TypeVar("_F", bound=Callable[..., Any])


class RunContext:
    """A context manager and decorator that adds run attributes to every span opened inside it.

    Built by :func:`using_session`, :func:`using_user`, :func:`using_tags` and
    :func:`using_metadata`; ``attributes()`` computes the values to add when the
    scope is entered (tags and metadata merge with the enclosing ones).
    """

    def __init__(self, attributes: Callable[[], Mapping[str, Any]]):
        self._attributes = attributes
        self._tokens = EnteredStack()  # one object may be entered by many tasks and threads at once

    def __enter__(self) -> "RunContext":
        self._tokens.push(_push(self._attributes))
        return self

    def __exit__(self, *exc_info: Any) -> None:
        token, _ = self._tokens.pop()  # popped in another context first, it could not be reset there: here it is
        _pop(token)

    @contextmanager
    def _scope(self) -> Iterator[None]:
        token = _push(self._attributes)
        try:
            yield
        finally:
            _pop(token)

    def __call__(self, fn: _F) -> _F:
        """Decorate a sync, async, generator or async-generator function: each call runs inside the scope (a
        coroutine a sync function returns, when awaited, and a generator it returns, at each step, too).

        Raises:
            TypeError: ``fn`` is not callable.
        """
        if not callable(fn):
            raise TypeError(f"otel_agents run context: cannot decorate {type(fn).__name__!r}, expected a function")
        shape = call_target(fn)  # a callable object by its __call__
        if inspect.isasyncgenfunction(shape):
            @functools.wraps(fn)
            def agen_wrapper(*args: Any, **kwargs: Any) -> Any:
                return AsyncStepIterator(fn(*args, **kwargs), enter=self._scope)
            return agen_wrapper  # type: ignore[return-value]
        if inspect.isgeneratorfunction(shape):
            @functools.wraps(fn)
            def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
                return StepIterator(fn(*args, **kwargs), enter=self._scope)
            return gen_wrapper  # type: ignore[return-value]
        if inspect.iscoroutinefunction(shape):
            @functools.wraps(fn)
            async def async_wrapper(*args: Any, **kwargs: Any) -> Any:
                with self._scope():
                    return await fn(*args, **kwargs)
            return async_wrapper  # type: ignore[return-value]

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with self._scope():
                result = fn(*args, **kwargs)
            # a sync wrapper around async or generator code (another library's plain decorator, a lambda): its
            # coroutine or stream runs later, in the scope too
            if inspect.iscoroutine(result):
                return self._in_scope(result)
            if inspect.isasyncgen(result):
                return AsyncStepIterator(result, enter=self._scope)
            if inspect.isgenerator(result):
                return StepIterator(result, enter=self._scope)
            return result
        return wrapper  # type: ignore[return-value]

    async def _in_scope(self, coroutine: Any) -> Any:
        with self._scope():
            return await coroutine


def _push(attributes: Callable[[], Mapping[str, Any]]) -> Any:
    attrs: Mapping[str, Any] = {}
    with guard("context.attributes"):
        attrs = attributes()
    return push_run_attributes(attrs)


def _pop(token: Any) -> None:
    with guard("context.pop"):  # a token from another context (a generator moved between tasks)
        pop_run_attributes(token)


def using_session(session_id: str | int | None) -> RunContext:
    """Spans opened inside carry ``session.id`` and ``gen_ai.conversation.id`` = ``str(session_id)`` (a ``str``
    subclass's value).

    ``None`` (or an empty id) adds nothing, so an optional id can be passed as is; so does an id that cannot be
    written as text (logged once).
    """
    def attributes() -> dict[str, Any]:
        value = probes.identifier(session_id, "context.using_session")
        return {} if value is None else {A.SESSION_ID: value, A.GEN_AI_CONVERSATION_ID: value}
    return RunContext(attributes)


def using_user(user_id: str | int | None) -> RunContext:
    """Spans opened inside carry ``user.id`` = ``str(user_id)`` (a ``str`` subclass's value); ``None``, an empty
    id and one that cannot be written as text (logged once) add nothing."""
    def attributes() -> dict[str, Any]:
        value = probes.identifier(user_id, "context.using_user")
        return {} if value is None else {A.USER_ID: value}
    return RunContext(attributes)


def using_tags(tags: Iterable[str] | str) -> RunContext:
    """Spans opened inside carry ``tag.tags``: the enclosing tags plus ``tags``
    (strings; a single string is one tag; duplicates dropped, order kept)."""
    new = [tags] if isinstance(tags, str) else list(tags)

    def attributes() -> dict[str, Any]:
        merged = list(current_run_attributes().get(A.TAG_TAGS, ()))
        for tag in new:
            tag = str(tag)
            if tag not in merged:
                merged.append(tag)
        return {A.TAG_TAGS: tuple(merged)} if merged else {}
    return RunContext(attributes)


def using_metadata(metadata: Mapping[str, Any]) -> RunContext:
    """Spans opened inside carry ``metadata``: a JSON object, the enclosing
    metadata updated with ``metadata`` (any values: the safe encoder turns them
    into JSON), cut to the content budget with the JSON kept valid.

    Raises:
        TypeError: ``metadata`` is not a mapping (nor pairs a ``dict`` can be made of), naming its type.
    """
    try:
        new = dict(metadata)
    except (TypeError, ValueError):  # a str, a list of words: dict() says "dictionary update sequence element #0"
        raise TypeError(f"using_metadata takes a mapping of labels, not {type(metadata).__name__}") from None
    return RunContext(lambda: merged_metadata(new))


def current_agent_span() -> SemanticSpan | None:
    """The span of the innermost agent run around the current code, or ``None``.

    Call it from inside a tool, a model call or any code running under an agent
    span, whether the agent was opened by an instrumentor or by
    ``@otel_agents.agent``; it follows the semantic spans' parents up from the
    current span, so concurrent runs each get their own. Use the result's
    ``set_attribute(key, value)``, or ``.span.add_event(name, attributes)`` for
    events; setters do nothing once the span has ended. Never raises.
    """
    with guard("context.current_agent_span"):
        s = semantic_span_for(trace.get_current_span())
        while s is not None and s.kind is not Kind.AGENT:
            s = s.parent
        return s
    return None
