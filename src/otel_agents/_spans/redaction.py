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


def redact_text(text: str) -> str:
    """``text`` with secret-shaped substrings replaced by ``[REDACTED]``; when ``text`` is a JSON
    object or array (tool arguments often arrive as JSON text), the values of secret-named keys too
    (the text is then re-encoded compactly; it is left as it is when no such key has a value)."""
    if len(text) < _SHORTEST_SECRET:  # most strings in a payload (roles, ids, short values): skip the scan
        return text
    if text[0] in "{[":
        text = _redact_json_keys(text)
    if _SECRET_TRIGGER.search(text) is None:
        return text
    return _SECRET_TEXT.sub(REDACTED, text)


def _redact_json_keys(text: str) -> str:
    try:
        data = json.loads(text)
    except ValueError:
        return text
    if not _has_secret_value(data):
        return text
    return json.dumps(redact_data(data, len(text))[0], ensure_ascii=False, separators=(",", ":"))


def _has_secret_value(d: Any) -> bool:
    if isinstance(d, dict):
        return any((isinstance(k, str) and is_secret_key(k) and v not in (None, "")) or _has_secret_value(v)
                   for k, v in d.items())
    if isinstance(d, list):
        return any(_has_secret_value(v) for v in d)
    return False


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
