"""The one path every value takes to become an attribute: to JSON-able → redact → fit the budget.

Redaction is a property of this path, not of the callers: a content value (:func:`render`), a
value rendered into several attributes (:func:`prepare` once, then :func:`render` with
``redacted=True``), a non-content attribute or a span name (:func:`otel_value`, :func:`label`),
an exception message or status description (:func:`message`) and a stack trace
(:func:`stacktrace`) all go through :func:`~.redaction.redact_text`/:func:`~.redaction.redact_data`,
whether content capture is on or off; so do message parts (:func:`redact_message`: once per message,
whatever number of vocabularies it is then written in). :class:`~.span.SemanticSpan` writes only what
comes out of here.
"""

from __future__ import annotations

import traceback
from typing import Any, Callable

import orjson

from ..semconv import attributes as A
from . import encoding, memo
from .guard import call_user
from .messages import (BlobPart, ChatMessage, FilePart, GenericPart, Part, ReasoningPart, TextPart, ToolCallPart,
                       ToolCallResponsePart, UriPart, normalize_finish_reason)
from .redaction import leaves_unchanged, redact_data, redact_text

REDACT_HOOK = "redaction hook (redact_hook)"  # how the log names the user's hook when it raises

REDACTION_MARGIN = 256  # characters scanned past the budget, so a secret starting inside it is seen whole
_LEGAL_SCALARS = (str, bool, int, float)
_CACHED_LABEL = 256  # longer labels (a prompt used as a name) are redacted each time, not cached
_NO_LIMIT = 1 << 62
INT64_MIN, INT64_MAX = -(1 << 63), (1 << 63) - 1  # an OTel attribute's integers (OTLP fails on larger ones)


# Names and ids repeat: one scan per distinct label of 9 to _CACHED_LABEL characters, exactly a str (a subclass's
# __hash__/__eq__ are user code). A dict, not an lru_cache: SemanticSpan.set_attributes looks a value up here
# itself, with no call (most of a label's cost). Bounded: emptied when full.
LABELS: dict[str, str] = {}
_LABELS_MAX = 4096


def _made_label(text: str) -> str:
    """:func:`label` made, not looked up."""
    if len(text) < 9:  # too short for any rule of redact_text
        return text if text.isascii() else encoding.utf8_safe(text)
    return encoding.utf8_safe(redact_text(text))


def label(text: str) -> str:
    """A span name, name, id or other non-content string with secret shapes and secret-named keys
    redacted (content on or off: a key can be anywhere, a tool's name included), made UTF-8-safe."""
    if len(text) > _CACHED_LABEL or type(text) is not str:
        return _made_label(text)
    found = LABELS.get(text)
    if found is None:
        # a short one is cached too, so that callers that look a label up in LABELS first (otel_value,
        # SemanticSpan.set_attributes) find it without a call
        found = _made_label(text)
        if len(LABELS) >= _LABELS_MAX:
            LABELS.clear()
        LABELS[text] = found
    return found


def otel_value(value: Any) -> Any:
    """An OTel-legal, redacted attribute value for ``value``, or ``None`` to skip it.

    Scalars pass (an integer past 64 bits, which OTLP cannot carry, as its decimal text); strings and
    homogeneous lists of strings are :func:`label` s; other homogeneous scalar lists pass (of integers, only
    within 64 bits); anything else becomes JSON text of its redacted JSON-able data.
    """
    t = type(value)
    if t is str:
        found = LABELS.get(value)  # a label made before, without a call
        return found if found is not None else label(value)
    if value is None or t is bool or t is float or t is int and INT64_MIN <= value <= INT64_MAX:
        return value
    if t is int:  # past 64 bits: its decimal text (a placeholder past the length Python writes as text)
        return str(encoding.to_jsonable(value))
    if isinstance(value, str):
        return label(str.__str__(value))
    if isinstance(value, _LEGAL_SCALARS):
        return value
    if isinstance(value, (list, tuple)):
        items = [v for v in value if v is not None]
        for t in (bool, str, int, float):
            if items and all(type(v) is t for v in items):
                if t is int and not all(INT64_MIN <= v <= INT64_MAX for v in items):
                    break  # JSON text, as a mixed list
                return [label(v) for v in items] if t is str else list(items)
        if not items:
            return None
    return encoding.dumps(prepare(value, _NO_LIMIT)[0])


def prepare(value: Any, limit: int) -> tuple[Any, bool]:
    """``value`` redacted: a string as text, anything else as JSON-able data (NaN/Infinity become
    strings; see :func:`~.encoding.to_jsonable`); every string cut to ``limit`` characters first.
    Returns ``(value, whether anything was cut)``."""
    if isinstance(value, str):
        return redact_text(value[:limit]), len(value) > limit
    t = type(value)
    if t is dict or t is list:
        plain = _plain_copy(value, limit)
        if plain is not None:
            return plain[0], False
    data, cut, _ = _redacted_jsonable(encoding.to_jsonable(value), limit)
    return data, cut


def prepare_encoded(value: Any, limit: int) -> tuple[Any, bool, str | None]:
    """:func:`prepare`'s ``(value, cut)``, and the value's compact JSON text (exactly :func:`~.encoding.dumps`'s)
    when the way there made it (plain JSON data is copied through its ``orjson`` encoding: :func:`_plain_copy`),
    else ``None``: encoded once, that text serves every attribute written from the value."""
    t = type(value)
    if t is dict or t is list:
        plain = _plain_copy(value, limit)
        if plain is not None:
            return plain[0], False, plain[1]
    elif isinstance(value, str):  # (prepare's steps, written out: this runs for every content value)
        return redact_text(value[:limit]), len(value) > limit, None
    return _redacted_jsonable(encoding.to_jsonable(value), limit)


def _redacted_jsonable(data: Any, limit: int) -> tuple[Any, bool, str | None]:
    """``redact_data(data, limit)`` for ``data`` that :func:`~.encoding.to_jsonable` made, with its
    :func:`~.encoding.dumps` text when that came on the way (else ``None``).

    A container whose ``orjson`` text (C) is at most ``limit`` bytes (no string to cut) and that no redaction
    rule can change (:func:`~.redaction.leaves_unchanged` on that text: no string or key of it could change)
    is ``data`` itself, as ``redact_data``'s walk would copy it: a pydantic event or a tool's result read
    into plain data is then scanned in C once instead of string by string in Python, and encoded once.
    ``to_jsonable``'s output holds exactly ``dict`` (``str`` keys), ``list``, ``str``, ``int``, finite
    ``float``, ``bool`` and ``None``, or a subclass of one (which ``orjson`` refuses here: the walk then runs),
    so ``orjson`` writes it as plain JSON data; a non-finite float is text there, so a ``null`` is a ``None``."""
    t = type(data)
    if t is dict or t is list:
        try:
            raw = orjson.dumps(data, option=_STRICT)
        except (TypeError, orjson.JSONEncodeError):
            raw = None
        if raw is not None and len(raw) <= limit:
            text = raw.decode("utf-8")
            if leaves_unchanged(text):
                return data, False, (text if encoding.is_dumps_text(text, finite=True) else None)
    data, cut = redact_data(data, limit)
    return data, cut, None


_STRICT = memo.STRICT  # orjson refuses subclasses, dataclasses and datetimes (no passthrough to a default)
_PLAIN_MAX = 16_384  # bytes of JSON: no container this short passes to_jsonable's item cut (10,000 items)


def _plain_copy(value: dict[Any, Any] | list[Any], limit: int) -> tuple[Any, str | None] | None:
    """What ``redact_data(to_jsonable(value), limit)`` gives plain JSON data that it leaves unchanged, made
    by ``orjson`` in C (a tool call's arguments, a tool's result: a dict of a few strings), with its
    :func:`~.encoding.dumps` text (``None`` where that is the standard library's); else ``None``.

    Taken only when all of these hold, each making one step of the slow path an identity: ``value`` has a
    :func:`~.memo.json_key` (no subclass, dataclass or datetime in it) of at most ``limit`` characters (no
    string to cut) and :data:`_PLAIN_MAX` bytes (no container to cut) with at most :data:`~.encoding.MAX_DEPTH`
    brackets (no level past the depth cut); no redaction rule can change any string or key of it
    (:func:`~.redaction.leaves_unchanged`); and ``value`` equals the data read back from that JSON, which
    rules out what ``orjson`` writes but is not plain JSON data (a tuple, a UUID, an ``orjson.Fragment``,
    an ``Enum`` that is not an ``int`` or ``str``, a NaN or an infinity, which it writes as ``null``)."""
    # None for a subclass, a dataclass, a big int…; NaN and infinity, written null, fail the equality below
    raw = memo.json_key(value, min(limit, _PLAIN_MAX), finite=True)
    if raw is None or raw.count(b"[") + raw.count(b"{") > encoding.MAX_DEPTH:
        return None
    text = raw.decode("utf-8")
    if not leaves_unchanged(text):
        return None
    copy = orjson.loads(raw)
    if copy != value:
        return None
    # orjson writes the copy as it wrote the value (the copy is read back from that text, and has no NaN: a NaN
    # or an infinity, written null, is None in the copy, which then differs from the value)
    return copy, (text if encoding.is_dumps_text(text, finite=True) else None)


def render(key: str, value: Any, *, budget: int, hook: Callable[[str, str], str] | None = None,
           as_json: bool | None = None, redacted: bool = False, encoded: str | None = None) -> tuple[str, str, bool]:
    """One content value as attribute text: :func:`prepare`, the user's redaction ``hook(key, text)``,
    then cut to ``budget`` characters (JSON stays valid JSON).

    ``redacted``: ``value`` already came out of :func:`prepare` (with the budget plus
    :data:`REDACTION_MARGIN`); ``encoded``: its compact JSON text, if the caller has it. Strings stay
    text unless ``as_json``. Returns ``(text, mime_type, truncated)``.
    """
    if redacted and encoded is not None and hook is None and len(encoded) <= budget and not isinstance(value, str):
        # what the steps below give it: nothing to cut (utf8_safe's ASCII case written out: every content value)
        return (encoded if encoded.isascii() else encoding.utf8_safe(encoded)), A.MIME_JSON, False
    limit = budget + REDACTION_MARGIN  # past this nothing can survive the cut: skip scanning it
    if isinstance(value, str) and not as_json:
        text, precut = (value[:limit], len(value) > limit) if redacted else prepare(value, limit)
        if hook is not None:
            text = call_user(REDACT_HOOK, hook, key, text)
        cut, truncated = (text, False) if len(text) <= budget else encoding.fit_text(text, budget)
        return (cut if cut.isascii() else encoding.utf8_safe(cut)), A.MIME_TEXT, truncated or precut
    if isinstance(value, str):  # as_json and already text: keep valid JSON as is
        try:
            value = encoding.json.loads(value)
        except Exception:  # noqa: BLE001 - not JSON, or too deep to decode: a JSON string
            pass
        redacted = False  # the key rule has not seen the decoded fields
    data, precut, made = (value, False, encoded) if redacted else prepare_encoded(value, limit)
    text = made if made is not None else encoding.dumps(data)
    if hook is not None:
        hooked = call_user(REDACT_HOOK, hook, key, text)
        if hooked != text:
            text = hooked
            try:
                data = encoding.json.loads(text)
            except ValueError:
                data = text
                text = encoding.dumps(text)
    cut, truncated = encoding.fit_json(data, text, budget)
    return (cut if cut.isascii() else encoding.utf8_safe(cut)), A.MIME_JSON, truncated or precut


def message(text: str, budget: int) -> str:
    """An exception message or status description: redacted, at most ``budget`` characters."""
    return encoding.utf8_safe(redact_text(text[:budget + REDACTION_MARGIN])[:budget])


def stacktrace(exc: BaseException, qualname: str, content: bool, budget: int) -> str:
    """``exception.stacktrace`` for ``exc``: redacted with content on or off (a key written in the
    failing source line is as secret as one in a message), cut to ``budget`` keeping the innermost
    frames. With content off the message is left out (its last line may quote user content): the
    frames, then ``qualname``."""
    try:
        stack = "".join(traceback.format_exception(exc) if content else traceback.format_tb(exc.__traceback__))
    except Exception:  # noqa: BLE001 - a hostile exception (its notes, its cause) cannot be formatted
        stack = ""
    if not content:
        stack += qualname
    stack = redact_text(stack if len(stack) <= budget else stack[-(budget + REDACTION_MARGIN):])
    return encoding.utf8_safe(stack if len(stack) <= budget else "…" + stack[-(budget - 1):])


def _label_of(value: Any) -> Any:
    """A name, id or MIME type of a message part, redacted (see :func:`label`)."""
    return label(value) if isinstance(value, str) and value else value


def finish_reason(reason: Any) -> str:
    """A finish reason as every attribute carries it (``gen_ai.response.finish_reasons``, ``llm.finish_reason``,
    an output message's ``finish_reason``): redacted as a :func:`label`, its case intact (a secret's shape is
    case-sensitive: ``AKIA…``, :func:`_reason_of`, as a message's), then normalised
    (:func:`~.messages.normalize_finish_reason`, which takes the text of a reason that needed no redaction)."""
    return normalize_finish_reason(_reason_of(reason))


def _reason_of(reason: Any) -> Any:
    """A message's finish reason with secrets redacted (:func:`label`), or itself when there is none to redact."""
    text = reason if type(reason) is str else str(reason)
    found = label(text)
    return reason if found == text else found


def redact_message(m: ChatMessage, limit: int, encoded: dict[int, str] | None = None) -> ChatMessage:
    """``m`` with every part :func:`redact_part`-ed and its name redacted: redacted once, then encoded in
    as many vocabularies as are written (GenAI JSON, OpenInference flattened, ``input.value``). ``encoded``:
    see :func:`redact_part`."""
    parts = m.parts
    reason = m.finish_reason
    if reason:  # (an output message's: a call only then)
        reason = _reason_of(reason)
    if len(parts) == 1 and m.name is None and type(m) is ChatMessage and reason is m.finish_reason:  # in short
        p = parts[0]
        if type(p) is TextPart and type(p.content) is str and redact_text(p.content[:limit]) is p.content:
            return m
    parts = [redact_part(p, limit, encoded) for p in parts]
    name = _label_of(m.name)
    if name is m.name and reason is m.finish_reason and all(a is b for a, b in zip(parts, m.parts)) and \
            type(m) is ChatMessage:
        return m  # nothing to redact or cut (the common case): the message itself, unchanged
    return ChatMessage(m.role, parts=parts, finish_reason=reason, name=name)


def redact_part(p: Part, limit: int, encoded: dict[int, str] | None = None) -> Part:
    """``p`` with its content :func:`prepare`-d (strings cut to ``limit`` first) and the token shapes in
    its names and ids redacted (media bytes are not text to scan). ``encoded``: where a tool call's
    redacted arguments' JSON text is kept when redaction made it (:func:`prepare_encoded`), under the ``id``
    of the arguments' copy in the part returned (valid while that part is held)."""
    t = type(p)
    if t is TextPart or t is ReasoningPart:
        content = p.content
        if type(content) is str:
            redacted = redact_text(content[:limit])
            return p if redacted is content else t(redacted)  # unchanged (the common case): the part itself
        return t(prepare(content, limit)[0])
    if t is ToolCallPart:
        if encoded is None:
            return ToolCallPart(_label_of(p.name), prepare(p.arguments, limit)[0], _label_of(p.id))
        arguments, _, text = prepare_encoded(p.arguments, limit)
        if text is not None:
            encoded[id(arguments)] = text
        return ToolCallPart(_label_of(p.name), arguments, _label_of(p.id))
    if t is ToolCallResponsePart:
        return ToolCallResponsePart(prepare(p.response, limit)[0], _label_of(p.id))
    if t is UriPart:
        return UriPart(prepare(p.uri, limit)[0], p.modality, _label_of(p.mime_type))
    if t is FilePart:
        return FilePart(_label_of(p.file_id), p.modality, _label_of(p.mime_type))
    if t is BlobPart:
        return BlobPart(p.data, p.modality, _label_of(p.mime_type))
    if t is GenericPart:
        return GenericPart(_label_of(p.type), prepare(dict(p.fields), limit)[0])
    return p
