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

import functools
import re
from typing import Any

import orjson
from opentelemetry.trace import Status

from ..._spans.redaction import REDACTED, is_secret_key, leaves_unchanged, redact_text

_SHORTEST_REDACTABLE = 9  # redact_text changes no shorter string
_JSON_WALK_MIN = 64  # shorter JSON text is scanned by redact_text as fast as it is parsed and walked


def redact_attributes(a: dict[str, Any]) -> None:
    """Redact, in place, the attributes of a span our span layer did not write: the value of a secret-named
    key (``gen_ai.openai.api_key``, ``http.request.header.authorization``) becomes ``[REDACTED]``; every
    other string, and every string of an array, is :func:`redact_value`'s (secret shapes, and the values of
    secret-named keys inside JSON, repr, ``key=value`` and header text). JSON text stays JSON text; the
    keys the fold reads (``gen_ai.*``, ``input.value``…) name no secret."""
    changed: dict[str, Any] | None = None
    for key, value in a.items():
        if is_secret_key(key):
            new = REDACTED if value is not None and value != "" else value
        elif type(value) is str:
            new = redact_value(value)
        elif type(value) is tuple or type(value) is list:  # an attribute array (a file's decoder may give a list)
            new = type(value)(redact_value(v) if type(v) is str else v for v in value)
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
    if type(description) is not str or len(description) < _SHORTEST_REDACTABLE:
        return status
    redacted = redact_text(description)
    return status if redacted == description else Status(status.status_code, redacted)


def redact_value(text: str) -> str:
    """:func:`~otel_agents._spans.redaction.redact_text` of ``text``, without its member-by-member scan of
    JSON text in which nothing can be redacted.

    Most of what other instrumentations record is JSON text (a chain's input and output, LangChain's
    serialised messages), and a key word in any of its keys (``input_tokens``) sends ``redact_text``
    through every member, in Python: ~10× the cost of parsing the text (``orjson``, C) and walking it
    (:func:`_nothing_to_redact`). Text in which something can be redacted is ``redact_text``'s as before."""
    if len(text) < _JSON_WALK_MIN or text[0] not in "{[":
        return redact_text(text)
    if leaves_unchanged(text) or _nothing_to_redact(text):
        return text
    return redact_text(text)


def _nothing_to_redact(text: str) -> bool:
    """Whether JSON ``text`` holds nothing any rule of ``redact_text`` redacts: it parses; no key is
    secret-named (with a value) nor holds a secret shape; no string holds anything a rule reads
    (:func:`~otel_agents._spans.redaction.leaves_unchanged`: a key word, a shape's literal, an escape). The
    member rule needs a secret-named key; the text rules inside a string, and an argv's secret-named option,
    a key word in that string; a shape, its literal inside one string or key (a JSON string's quotes
    separate it from any other). Every member of the text is walked: text with a duplicated key (whose first
    value the parse drops) has more key ends (``"key":``) than members walked, and is left to ``redact_text``;
    so is text that does not parse (``NaN``, a cut, too deep, past 64 bits)."""
    try:
        data = orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    members = 0
    strings: list[str] = []
    stack = [data]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            members += len(node)
            for key, value in node.items():
                if is_secret_key(key) and value is not None and value != "" or not _plain_key(key):
                    return False
                if type(value) is str:
                    strings.append(value)
                elif type(value) is dict or type(value) is list:
                    stack.append(value)
        else:  # a list (the root, or pushed above)
            for value in node:
                if type(value) is str:
                    strings.append(value)
                elif type(value) is dict or type(value) is list:
                    stack.append(value)
    if members != len(_MEMBER_END.findall(text)):
        return False
    return all(len(s) < _SHORTEST_REDACTABLE or leaves_unchanged(s) for s in strings)


@functools.lru_cache(maxsize=4096)  # keys repeat (role, content, kwargs…): one scan per distinct key
def _plain_key(key: str) -> bool:
    """Whether no rule of ``redact_text`` changes ``key`` (a member's name: a secret shape in it)."""
    return len(key) < _SHORTEST_REDACTABLE or redact_text(key) == key


# The end of a member's key (``"key":``, ``"key" :``); inside a string every quote is escaped (``\\"``), so
# this counts every member of the text, and perhaps more.
_MEMBER_END = re.compile(r'"\s*:')
