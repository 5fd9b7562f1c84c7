"""The open semantic spans by OTel span id: how an OTel span (the current one) leads back to ours."""

from __future__ import annotations

import weakref
from _weakref import _remove_dead_weakref  # type: ignore[attr-defined]
from typing import TYPE_CHECKING, Any

from .finalisers import in_forked_child
from .sdk_write import _SdkSpan
from .guard import report_internal_error

if TYPE_CHECKING:
    from .span import SemanticSpan


# Open semantic spans by OTel span id, as weak references: each entry is removed when its span ends, and by the
# reference's callback when a span that never ended is collected (`_remove_dead_weakref`, what
# `weakref.WeakValueDictionary` itself uses: removes the key only while its value is a dead reference), so the
# index holds only spans that are open and still referenced. A plain dict rather than a WeakValueDictionary: its
# Python-level set and pop (three frames a span) cost more than the rest of the index.
_OPEN: dict[int, "weakref.ReferenceType[SemanticSpan]"] = {}

PARENTS = "started in another process"
"""What ``SemanticSpan._ended`` holds (truthy: every setter does nothing, as after ``end``) in a forked child for a
span open in the parent at the fork: see :func:`_leave_to_the_parent`."""


def _leave_to_the_parent() -> None:
    """In a forked child: every semantic span open at the fork is the parent's, which ends and exports it. The child
    that unwinds through it (a tool forked, the child calls ``sys.exit()`` or raises through the ``with`` blocks
    of the parent's agent and tool spans) or that a framework's bookkeeping leads to it must neither write to it
    nor end it: ending it would export it a second time, from the child. And the child finds none of them: a
    model request made there gets a span of its own rather than filling the parent's model span, and its spans
    are parented by the OTel context alone."""
    for ref in tuple(_OPEN.values()):
        semantic = ref()
        if semantic is not None and not semantic._ended:
            semantic._ended = PARENTS
    _OPEN.clear()


in_forked_child(_leave_to_the_parent)


def _index(semantic: SemanticSpan) -> None:
    span = semantic.span
    # (the SDK's own span: its context read without the two calls of get_span_context())
    span_id = (span._context if type(span) is _SdkSpan else span.get_span_context()).span_id
    if span_id:
        semantic._index_key = span_id
        _OPEN[span_id] = weakref.ref(semantic, lambda _, key=span_id: _remove_dead_weakref(_OPEN, key))


def _get(span_id: int) -> SemanticSpan | None:
    ref = _OPEN.get(span_id)
    return ref() if ref is not None else None


def semantic_span_for(span: Any) -> SemanticSpan | None:
    """The open :class:`SemanticSpan` behind an OTel span, or ``None``.

    Args:
        span: an OTel ``Span`` (e.g. ``trace.get_current_span()``). When it is
            not one of ours (an application span opened inside a tool), the
            semantic span that is its direct parent is returned, if the SDK span
            exposes its parent.

    Never raises. Cost: one or two dictionary look-ups.
    """
    try:
        found = _get(span.get_span_context().span_id)
        if found is None:
            parent_ctx = getattr(span, "parent", None)
            if parent_ctx is not None:
                found = _get(parent_ctx.span_id)
        return found
    except Exception as exc:  # noqa: BLE001
        report_internal_error("span.semantic_span_for", exc)
        return None
