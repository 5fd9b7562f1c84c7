"""The open semantic spans by OTel span id: how an OTel span (the current one) leads back to ours."""

from __future__ import annotations

import weakref
from typing import TYPE_CHECKING, Any

from .guard import report_internal_error

if TYPE_CHECKING:
    from .span import SemanticSpan


# Open semantic spans by OTel span id. Weak values, and each entry is removed when
# its span ends, so the index holds only spans that are open and still referenced.
_OPEN: "weakref.WeakValueDictionary[int, SemanticSpan]" = weakref.WeakValueDictionary()


def _index(semantic: SemanticSpan) -> None:
    span_id = semantic.span.get_span_context().span_id
    if span_id:
        semantic._index_key = span_id
        _OPEN[span_id] = semantic


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
        found = _OPEN.get(span.get_span_context().span_id)
        if found is None:
            parent_ctx = getattr(span, "parent", None)
            if parent_ctx is not None:
                found = _OPEN.get(parent_ctx.span_id)
        return found
    except Exception as exc:  # noqa: BLE001
        report_internal_error("span.semantic_span_for", exc)
        return None
