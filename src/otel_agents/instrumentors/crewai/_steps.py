"""One way to turn a wrapped CrewAI call into a span: a plan, then a guarded run.

Every wrapper here follows the same shape. A *plan* function looks at the call
(``plan(instance, args, kwargs)``) and returns a :class:`Step` — which span to
open, how to fill it at the start and from the result, and which contextvars
to set while the call runs — or ``None`` to let the call through untouched
(re-entry, an internal flow, a streamed kickoff). :class:`Hooks` runs the call
inside that span in the calling thread, so the span is current for everything
CrewAI does underneath, including the threads and event loops it hands work to.

Our code (plans, setup, finish) runs under the never-raise guard; the user's
call, its result and its exception pass through unchanged. Under OTel's
``suppress_instrumentation()`` no plan runs: every step wrapper calls straight
through, sets no contextvar and opens no span (observers still run: they only
fill spans already open and wrap newly defined classes).
"""

from __future__ import annotations

import inspect
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any, Callable, Iterator, Mapping


from ..._spans import SemanticSpan, Telemetry, guard, instrumentation_enabled, report_internal_error
from ...semconv import Kind
from . import _scope
from ._patching import Patches

Plan = Callable[[Any, tuple, dict], "Step | None"]


@dataclass
class Step:
    """The span one wrapped call gets.

    Attributes:
        kind, name, workflow, multi_step, attributes: passed to
            :meth:`~otel_agents._spans.Telemetry.start_span`.
        setup: ``setup(span)`` fills the span before the call runs.
        finish: ``finish(span, result)`` fills it from the call's result.
        scope: ``(contextvar, value)`` pairs set while the call runs.
        pauses: ``pauses(exc)``: whether the exception the call raised pauses the run rather than failing it
            (CrewAI's ``HumanFeedbackPending``): the span is marked paused, the exception control flow.
    """

    kind: Kind
    name: str | None
    workflow: bool = False
    multi_step: bool = False
    attributes: Mapping[str, Any] | None = None
    setup: Callable[[SemanticSpan], None] | None = None
    finish: Callable[[SemanticSpan, Any], None] | None = None
    scope: list[tuple[ContextVar, Any]] = field(default_factory=list)
    pauses: Callable[[BaseException], bool] | None = None


class Hooks:
    """The wrappers of one installation: ``patches`` to add and remove them, ``telemetry`` to open spans."""

    def __init__(self, patches: Patches, telemetry: Telemetry):
        self.patches = patches
        self.telemetry = telemetry

    def span(self, owner: Any, name: str, plan: Plan, site: str) -> bool:
        """Wrap ``owner.name`` so each call runs in the span ``plan`` describes (sync or async alike)."""
        target = vars(owner).get(name)
        is_async = inspect.iscoroutinefunction(getattr(target, "__func__", target))
        return self.patches.wrap(owner, name, self._async_wrapper(plan, site) if is_async
                                 else self._sync_wrapper(plan, site))

    def after(self, owner: Any, name: str, observe: Callable[[Any, tuple, dict, Any], None], site: str) -> bool:
        """Wrap ``owner.name`` so ``observe(instance, args, kwargs, result)`` runs after each call (guarded)."""
        patches = self.patches

        def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            result = wrapped(*args, **kwargs)
            # Not skipped under suppression: observers only fill spans that are already open (a
            # provider reporting usage from inside a suppressed HTTP call) or wrap newly defined
            # classes (bookkeeping that must not be lost); under suppression nothing new is opened.
            if patches.active:
                with guard(site):
                    observe(instance, args, kwargs, result)
            return result

        return patches.wrap(owner, name, wrapper)

    def before(self, owner: Any, name: str, observe: Callable[[Any, tuple, dict], None], site: str) -> bool:
        """Wrap ``owner.name`` so ``observe(instance, args, kwargs)`` runs before each call (guarded; as
        :meth:`after`, not skipped under suppression)."""
        patches = self.patches

        def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            if patches.active:
                with guard(site):
                    observe(instance, args, kwargs)
            return wrapped(*args, **kwargs)

        return patches.wrap(owner, name, wrapper)

    # -- the two runners -------------------------------------------------------------
    def _plan(self, plan: Plan, site: str, instance: Any, args: tuple, kwargs: dict) -> Step | None:
        if not self.patches.active or not instrumentation_enabled():
            return None  # removed, or suppressed: nothing could record, so nothing is planned
        try:
            return plan(instance, args, kwargs)
        except Exception as exc:  # noqa: BLE001
            report_internal_error(site, exc)
            return None

    def _sync_wrapper(self, plan: Plan, site: str) -> Callable[..., Any]:
        def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            step = self._plan(plan, site, instance, args, kwargs)
            if step is None:
                return wrapped(*args, **kwargs)
            with self._running(step, site) as span:
                result = wrapped(*args, **kwargs)
                _finish(step, span, result, site)
                return result

        return wrapper

    def _async_wrapper(self, plan: Plan, site: str) -> Callable[..., Any]:
        async def wrapper(wrapped: Any, instance: Any, args: tuple, kwargs: dict) -> Any:
            step = self._plan(plan, site, instance, args, kwargs)
            if step is None:
                return await wrapped(*args, **kwargs)
            with self._running(step, site) as span:
                result = await wrapped(*args, **kwargs)
                _finish(step, span, result, site)
                return result

        return wrapper

    @contextmanager
    def _running(self, step: Step, site: str) -> Iterator[SemanticSpan]:
        """Set the step's contextvars, open its span (current, ended on exit, errors recorded)."""
        tokens = [(var, var.set(value)) for var, value in step.scope]
        try:
            with self.telemetry.span(step.kind, step.name, workflow=step.workflow, multi_step=step.multi_step,
                                     attributes=step.attributes, is_control_flow=step.pauses) as span:
                if step.setup is not None:
                    with guard(site):
                        step.setup(span)
                tokens.append((_scope.SPAN, _scope.SPAN.set(span)))
                try:
                    yield span
                except BaseException as exc:
                    if step.pauses is not None:
                        with guard(site):
                            if step.pauses(exc):
                                span.mark_paused()
                    raise
        finally:
            for var, token in reversed(tokens):
                var.reset(token)


def _finish(step: Step, span: SemanticSpan, result: Any, site: str) -> None:
    if step.finish is not None:
        with guard(site):
            step.finish(span, result)
