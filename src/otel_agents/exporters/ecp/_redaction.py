"""Redacting the values of spans our span layer did not write, as the fold reads them.

Our span layer redacts every value it writes (:mod:`otel_agents._spans.redaction`); other
instrumentations write theirs as they come (OpenLLMetry's ``gen_ai.openai.api_key``, a password among
a tool call's arguments, a key quoted in an exception's message), and anyone can send spans to
``otel-agents ecp collect``. :class:`~._facts.FoldSpan` reads every span without our kind attribute
through :func:`redact_attributes` and :func:`redact_status`, so ``fold()``, ``otel-agents fold``, the
receiver and the folding processor copy only redacted values into an envelope, before any cut.

Same rules as the span layer, by its own functions: nothing here decides what a secret is.
"""

from __future__ import annotations

from typing import Any

from opentelemetry.trace import Status

from ..._spans.redaction import REDACTED, is_secret_key, redact_text


def redact_attributes(a: dict[str, Any]) -> None:
    """Redact, in place, the attributes of a span our span layer did not write: the value of a secret-named
    key (``gen_ai.openai.api_key``, ``http.request.header.authorization``) becomes ``[REDACTED]``; every
    other string, and every string of an array, goes through
    :func:`~otel_agents._spans.redaction.redact_text` (secret shapes, and the values of secret-named keys
    inside JSON, repr, ``key=value`` and header text). JSON text stays JSON text; the
    keys the fold reads (``gen_ai.*``, ``input.value``…) name no secret."""
    changed: dict[str, Any] | None = None
    for key, value in a.items():
        if is_secret_key(key):
            new = REDACTED if value is not None and value != "" else value
        elif type(value) is str:
            new = redact_text(value)
        elif type(value) is tuple or type(value) is list:  # an attribute array (a file's decoder may give a list)
            new = type(value)(redact_text(v) if type(v) is str else v for v in value)
        else:
            continue
        if new != value:
            if changed is None:
                changed = {}
            changed[key] = new
    if changed:
        a.update(changed)


def redact_status(status: Any) -> Any:
    """``status`` with its description (an exception's message) redacted: a new ``Status`` when that changes it."""
    description = getattr(status, "description", None)
    if type(description) is not str:
        return status
    redacted = redact_text(description)
    return status if redacted == description else Status(status.status_code, redacted)
