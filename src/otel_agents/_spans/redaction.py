"""Redaction of known secret shapes in content, on by default.

Two rules: values of mapping keys named like a secret (``password``,
``api_key``, ``access_token``, ``authorization``…) are replaced by
``[REDACTED]``, and secret-shaped substrings (bearer tokens, common API-key
prefixes) are replaced in every string (:func:`redact_data`, applied to the
data before it is encoded, so truncation can never bring a secret back).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any

REDACTED = "[REDACTED]"
_SCALARS = (int, float, type(None))  # bool is an int

_SECRET_KEY = re.compile(
    r"^(?:.*[_\-.])?(?:password|passwd|pwd|secret|token|api[_\-]?key|apikey|authorization|"
    r"auth|credentials?|private[_\-]?key|client[_\-]?secret|session[_\-]?key|cookie)$",
    re.IGNORECASE,
)

_SECRET_TEXT = re.compile(
    r"(?:(?<=Bearer )|(?<=bearer )|(?<=Basic )|(?<=basic ))[A-Za-z0-9\-._~+/]{8,}=*"
    r"|\bsk-(?:proj-|ant-)?[A-Za-z0-9_\-]{16,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bgithub_pat_[A-Za-z0-9_]{30,}"
    r"|\bxox[abposr]-[A-Za-z0-9\-]{10,}"
    r"|\bAIza[0-9A-Za-z_\-]{35}"
    r"|\b(?:pk|sk)-lf-[A-Za-z0-9\-]{8,}"
)


@functools.lru_cache(maxsize=4096)  # keys repeat (role, content, parts…): one regex match per distinct key
def is_secret_key(key: str) -> bool:
    """Whether an argument or field named ``key`` holds a secret (``max_tokens`` does not)."""
    return bool(_SECRET_KEY.match(key))


# Every match of _SECRET_TEXT contains one of these literals. A search for plain literals is
# ~20x faster than the shapes' scan (whose lookbehinds and \b defeat the regex engine's
# first-character skipping), and most text contains none of them: scan only text that does.
_SECRET_TRIGGER = re.compile(r"Bearer |bearer |Basic |basic |sk-|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abposr]-"
                             r"|AIza|pk-lf-")

_SHORTEST_SECRET = 14  # no shape above matches fewer characters ("Basic " + 8, "pk-lf-" + 8)


# A JSON member ("key": value) anywhere in a text. JSON tool arguments and results often arrive as
# text — cut at the budget, with NaN, duplicated keys or leading whitespace, or quoted in an error
# message — so the key rule works on the text itself: a secret-named key's value (a scalar, or an
# object/array up to its closing bracket or the end of the text) is replaced in place and the rest of
# the text is kept as it is. The alternatives are unambiguous, so the scan stays linear.
_JSON_MEMBER = re.compile(r'"([^"\\\n]*(?:\\.[^"\\\n]*)*)"\s*:\s*("[^"\\]*(?:\\.[^"\\]*)*(?:"|$)|[{\[]|[^\s,}\]{\[]+)')
# Every secret-named key contains one of these (lower-cased); text without any, and without an
# escape that could spell one, has no member to redact: skip the scan.
_KEY_WORDS = ("pass", "pwd", "secret", "token", "key", "auth", "credential", "cookie", "\\u")
_SHORTEST_MEMBER = 9  # '"pwd":"x"'


def redact_text(text: str) -> str:
    """``text`` with secret-shaped substrings replaced by ``[REDACTED]``, and the values of
    secret-named keys of any JSON inside it (tool arguments often arrive as JSON text, and JSON
    text may hold more JSON as an escaped string: an API response's ``"arguments"``)."""
    if len(text) < _SHORTEST_MEMBER:  # most strings in a payload (roles, ids, short values): skip the scans
        return text
    if '"' in text and ":" in text:
        lowered = text.lower()
        if any(word in lowered for word in _KEY_WORDS):
            text = _redact_members(text)
    if len(text) < _SHORTEST_SECRET or _SECRET_TRIGGER.search(text) is None:
        return text
    return _SECRET_TEXT.sub(REDACTED, text)


def _redact_members(text: str) -> str:
    parts: list[str] = []
    pos = 0
    for m in _JSON_MEMBER.finditer(text):
        if m.start() < pos:  # inside a value already replaced
            continue
        value, start = m.group(2), m.start(2)
        if _is_secret_json_key(m.group(1)):
            if value in ('""', "null"):
                continue
            end = _container_end(text, start) if value in ("{", "[") else m.end(2)
            parts += [text[pos:start], f'"{REDACTED}"']
            pos = end
        elif value.startswith('"') and '\\"' in value and len(value) > 1 and value.endswith('"'):
            inner = _decoded(value)  # JSON inside a JSON string: redact it too
            redacted = redact_text(inner) if inner is not None else None
            if redacted is not None and redacted != inner:
                parts += [text[pos:start], json.dumps(redacted, ensure_ascii=False)]
                pos = m.end(2)
    if not parts:
        return text
    parts.append(text[pos:])
    return "".join(parts)


def _is_secret_json_key(raw: str) -> bool:
    if "\\" in raw:  # an escaped key ("pass\u0077ord") is read as a decoder reads it
        raw = _decoded(f'"{raw}"') or raw
    if len(raw) > 64:  # any quoted text before a colon looks like a key: keep long ones out of the cache
        return bool(_SECRET_KEY.match(raw))
    return is_secret_key(raw)


def _decoded(literal: str) -> str | None:
    try:
        value = json.loads(literal)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _container_end(text: str, start: int) -> int:
    """The index after the bracket closing the object/array opened at ``start`` (strings
    skipped), or the end of ``text`` when it is cut before that."""
    depth, i, n, in_string = 0, start, len(text), False
    while i < n:
        c = text[i]
        if in_string:
            if c == "\\":
                i += 1
            elif c == '"':
                in_string = False
        elif c == '"':
            in_string = True
        elif c in "{[":
            depth += 1
        elif c in "}]":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def redact_data(data: Any, max_str: int) -> tuple[Any, bool]:
    """Copy of jsonable ``data`` with both rules applied to every key and string, each
    string first cut to ``max_str`` characters; and whether any string was cut.

    Redacting strings (not the encoded text) keeps a later truncation, which
    re-encodes from the data, from bringing a secret back; cutting first keeps
    the scan of a huge value cheap (call with a margin over the budget, so a
    secret that starts inside the budget is still seen whole).
    """
    cut = False

    def walk(d: Any) -> Any:
        nonlocal cut
        if isinstance(d, str):
            if len(d) > max_str:
                cut, d = True, d[:max_str]
            return redact_text(d)
        if isinstance(d, list):
            return [walk(v) for v in d]
        # `type(d) is dict` first: an ABC check per scalar and per dict is most of this walk's cost
        if type(d) is dict or (not isinstance(d, _SCALARS) and isinstance(d, Mapping)):
            return {walk(k): (REDACTED if isinstance(k, str) and is_secret_key(k) and v not in (None, "")
                              else walk(v)) for k, v in d.items()}
        return d

    return walk(data), cut
