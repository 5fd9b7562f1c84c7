"""Redaction of known secret shapes in content, on by default.

Two rules, applied to every string (:func:`redact_data`, on the data before it
is encoded, so truncation can never bring a secret back):

* **Secret-named keys.** The value of a key named like a secret — a secret word
  anywhere in it, camelCase too (``password``, ``api_key``, ``AWS_SECRET_ACCESS_KEY``,
  ``SECRET_KEY``, ``accessToken``, ``authorization``, ``x-api-key``…) — becomes
  ``[REDACTED]`` in every serialisation a value reaches us in: a mapping, JSON
  text (``"password": "…"``), Python ``repr`` text (``{'password': '…'}``, as
  in LangGraph's ``Send(...)`` outputs), keyword/assignment text
  (``password='…'``, ``API_KEY=…``), a URL's query and fragment parameters
  wherever the URL is (``ENDPOINT=https://h/x?api%5Fkey=…#top``: a name read
  percent-decoded, the value up to ``&``, ``;``, ``#`` or the URL's end; a URL nested
  percent-encoded in another's parameter read one level deep), and header or YAML lines
  (``x-api-key: …``, ``Authorization: Token …``). A URL's signature parameter is a secret too,
  though named in no secret word: a presigned URL's ``X-Amz-Signature`` (AWS SigV4),
  ``X-Goog-Signature`` (Cloud Storage V4), ``sig`` (an Azure SAS token), ``Signature`` (version 2).
* **Secret shapes**, wherever they appear: bearer/basic credentials, the API
  keys of OpenAI, Anthropic, AWS, GitHub and Langfuse; Slack tokens (``xoxb-``,
  ``xoxp-``, ``xapp-``, rotating ``xoxe.xoxp-``/``xoxe-``) and webhook URLs;
  Google API keys (``AIza…``), OAuth access and refresh tokens (``ya29.``,
  ``1//0``) and client secrets (``GOCSPX-``); Stripe secret and restricted keys
  (``sk_live_``/``rk_live_``, test keys too) and webhook secrets (``whsec_``);
  bare JWTs (``eyJ….eyJ….…``), PEM private-key blocks, and the password of a URL
  (``scheme://user:…@host``).
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Mapping
from typing import Any
from urllib.parse import unquote_plus

import orjson

REDACTED = "[REDACTED]"
_SCALARS = (int, float, type(None))  # bool is an int

# A secret word anywhere in the key (camelCase split first: see is_secret_key) — ``AWS_SECRET_ACCESS_KEY``,
# ``SECRET_KEY``, ``csrftoken``, ``db_password_hash`` — followed by nothing or by components that still
# name the secret itself (``_key``, ``_value``…), not by others: ``token_count``, ``max_tokens``,
# ``author`` and ``passwordless`` are not secrets.
_SECRET_KEY = re.compile(
    r"^.*?(?:password|passwd|passphrase|pwd|secret|token|api[_\-.]?key|apikey|authorization|"
    r"auth|credentials?|(?:private|signing|encryption|master|session)[_\-.]?key|client[_\-.]?secret|cookie)"
    r"(?:[_\-.]?(?:access[_\-.]?key|key|token|value|string|str|hash|b64|base64|raw|bytes|data|text|file|env))*$"
)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")

# Prefixed shapes start after any non-alphanumeric character (not \b: "STRIPE_sk_live_…" and
# "token_xoxb-…" have a word character, the underscore, before the prefix).
_SECRET_TEXT = re.compile(
    r"(?:(?<=Bearer )|(?<=bearer )|(?<=Basic )|(?<=basic ))[A-Za-z0-9\-._~+/]{8,}=*"
    r"|sk-(?:proj|ant|svcacct|admin)-[A-Za-z0-9_\-]{16,}"  # distinctive: glued to a word too
    r"|\bsk-[A-Za-z0-9_\-]{16,}"
    r"|\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"
    r"|\bgh[pousr]_[A-Za-z0-9]{30,}"
    r"|\bgithub_pat_[A-Za-z0-9_]{30,}"
    # Slack: bot/user/legacy tokens (xoxb-, xoxp-, xoxa-…), rotating ones (xoxe.xoxp-1-…, refresh xoxe-1-…),
    # app-level tokens (xapp-1-…), and incoming-webhook/workflow URLs (their path is the secret)
    r"|(?<![A-Za-z0-9])(?:xox[abposre]|xapp)[.\-][A-Za-z0-9.\-]{10,}"
    r"|(?<=hooks\.slack\.com/)(?:services|workflows|triggers)/[A-Za-z0-9_/\-]{8,}"
    # Google: API keys (AIza + 35), OAuth access tokens (ya29.), refresh tokens (1//0…), OAuth client secrets
    r"|(?<![A-Za-z0-9])AIza[0-9A-Za-z_\-]{35}"
    r"|(?<![A-Za-z0-9])ya29\.[0-9A-Za-z_\-]{10,}"
    r"|(?<![A-Za-z0-9/])1//0[0-9A-Za-z_\-]{10,}"
    r"|(?<![A-Za-z0-9])GOCSPX-[0-9A-Za-z_\-]{10,}"
    r"|\b(?:pk|sk)-lf-[A-Za-z0-9\-]{8,}"
    # Stripe: secret and restricted keys, live and test (sk_live_, rk_test_…), webhook signing secrets
    r"|(?<![A-Za-z0-9])(?:[sr]k_(?:live|test)|whsec)_[A-Za-z0-9]{8,}"
)
# Rarer shapes, each scanned only when its literal is in the text (a longer alternation above would slow
# the scan of every text that triggers it).
_JWT = re.compile(r"\beyJ[A-Za-z0-9_\-]{4,}\.eyJ[A-Za-z0-9_\-]{4,}\.[A-Za-z0-9_\-]*")  # header.payload.signature
_PEM_PRIVATE_KEY = re.compile(r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY-----(?:[^-]|-(?!----END))*"
                              r"(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY-----)?")
# The password of a URL: scheme://user:PASSWORD@host (database URLs, proxies, git remotes).
_URL_PASSWORD = re.compile(r"(\b[A-Za-z][A-Za-z0-9+.\-]*://[^\s/?#@:]*:)([^\s/?#@]+)(?=@)")
# A URL's scheme and user info (RFC 3986 §3.2: the authority ends at / ? or #; its last @ ends the user info)
_URL_USERINFO = re.compile(r"\b([A-Za-z][A-Za-z0-9+.-]*://)[^/?#\s]*@")


def redact_url(text: str) -> str:
    """``text`` (a URL, or a line naming URLs) as a message may show it: each URL's user info (``user:password@``,
    or a token alone before ``@``, which :func:`redact_text` keeps as a user name) as ``[REDACTED]@``, and secret
    query parameters redacted (:func:`redact_text`). For the endpoints a command prints (``otel-agents export
    --to``, ``ecp annotate -o``, ``ecp collect --forward``, ``otel-agents doctor``): the URL given may carry
    credentials, the terminal and the CI log must not."""
    return redact_text(_URL_USERINFO.sub(rf"\1{REDACTED}@", text))


@functools.lru_cache(maxsize=4096)  # keys repeat (role, content, parts…): one regex match per distinct key
def is_secret_key(key: str) -> bool:
    """Whether an argument or field named ``key`` holds a secret (``max_tokens`` does not): a secret word as a
    whole component of it, camelCase included (``accessToken``, ``secretAccessKey``)."""
    return bool(_SECRET_KEY.match(_CAMEL.sub("_", key).lower()))


# Every match of _SECRET_TEXT contains one of these literals. A search for plain literals is
# ~20x faster than the shapes' scan (whose lookbehinds and \b defeat the regex engine's
# first-character skipping), and most text contains none of them: scan only text that does.
_SECRET_TRIGGER = re.compile(r"Bearer |bearer |Basic |basic |sk-|AKIA|ASIA|gh[pousr]_|github_pat_|xox[abposre][.\-]"
                             r"|xapp[.\-]|hooks\.slack\.com/|AIza|ya29\.|1//0|GOCSPX-|pk-lf-|k_live_|k_test_|whsec_")

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


def _has_key_word(lowered: str) -> bool:
    """Whether lower-cased text holds a word of a secret-named key (nine substring tests: several
    times faster than one regex alternation or a generator over the words), or the name of a URL's
    signature parameter followed by ``=`` (plain or percent-encoded: see :data:`_SIGNATURE_PARAMS`)."""
    return ("pass" in lowered or "pwd" in lowered or "secret" in lowered or "token" in lowered
            or "key" in lowered or "auth" in lowered or "credential" in lowered or "cookie" in lowered
            or ("sig" in lowered and ("sig=" in lowered or "signature=" in lowered or "%3d" in lowered)))


def _may_be_percent_encoded_key(text: str) -> bool:
    """Whether ``text`` may hold a URL parameter whose name spells a secret word percent-encoded (``%74oken=``), which
    :func:`_has_key_word` cannot see."""
    return "%" in text and "=" in text


_SHORTEST_MEMBER = 9  # '"pwd":"x"'


# Python repr text: a single-quoted key ('password': ...), its value a quoted string, a container or a
# bare token. Keyword/assignment text: password='...', API_KEY=..., ?token=...&. Header and YAML lines:
# "x-api-key: ...", "Authorization: Token ...", "password: ..." (the rest of the line is the value). A key may
# follow an option's dashes (an argv's --password=...).
_REPR_MEMBER = re.compile(r"'([^'\\\n]*(?:\\.[^'\\\n]*)*)'\s*:\s*('(?:[^'\\]|\\.)*(?:'|$)|\"(?:[^\"\\]|\\.)*(?:\"|$)"
                          r"|[{\[(]|[^\s,}\]{\[()]+)")
_ASSIGNMENT = re.compile(r"(?<![\w\-.])-{0,2}([A-Za-z_][\w\-.]*)[ \t]*=[ \t]*('(?:[^'\\\n]|\\.)*(?:'|$)"
                         r"|\"(?:[^\"\\\n]|\\.)*(?:\"|$)|[^\s,;&)\]}'\"\\]+)")
_HEADER_LINE = re.compile(r"(?m)^([ \t]*[A-Za-z][\w\-.]*[ \t]*:[ \t]*)(\S[^\r\n]*)")
# A URL's query or fragment parameter (``?api_key=…``, ``&access_token=…;``, ``#access_token=…&``; RFC 3986
# sections 3.4 and 3.5) wherever it is, also inside another rule's value (``OTEL_ENDPOINT=https://h/x?token=…``),
# its name read percent-decoded (``api%5Fkey``). Its value runs to the next ``&``, ``;`` or ``#``, or to where the URL
# ends in the text (whitespace, a quote, a bracket): ``/`` and ``?`` belong to a query (a base64 token holds ``/``),
# so ``?token=…/more`` is redacted whole and a fragment after it is kept. A name that is not after ``?&;#`` is read
# here only when percent-encoded (a form body, ``api%5Fkey=…&…``); ``password=a#b`` is the assignment rule's.
_PARAM_VALUE = r"=([^&;#\s'\"<>\\()\[\]{}]+)"
# The signature of a presigned URL, named in no secret word: AWS Signature Version 4 (``X-Amz-Signature``, beside
# ``X-Amz-Credential`` and ``X-Amz-Security-Token``, which the key rule knows), Google Cloud Storage V4
# (``X-Goog-Signature``), an Azure Storage SAS token (``sig``), and the version-2 signatures of S3, Cloud Storage and
# CloudFront (``Signature``). Only as a URL's parameter (``sig`` alone is no secret-named key); read case-insensitively.
_SIGNATURE_PARAMS = frozenset(("x-amz-signature", "x-goog-signature", "sig", "signature"))
# A parameter of a URL nested percent-encoded in another's parameter (``?next=https%3A%2F%2Fh%2F%3Ftoken%3D…``): its
# name after an encoded ``?&;#``, an encoded ``=``, its value up to the next encoded ``&;#``. One level is read (a URL
# encoded twice, ``%253D``, is not).
_ENCODED_SEPARATOR = r"%(?:3[Ff]|26|3[Bb]|23)"
_NESTED_PARAM = re.compile(_ENCODED_SEPARATOR + r"((?:[\w\-.~+]|%(?!3[Dd]|3[Ff]|26|3[Bb]|23)[0-9A-Fa-f]{2})+)%3[Dd]"
                           r"((?:[^%]|%(?!26|3[Bb]|23))+)")
_QUERY_PARAM = re.compile(r"[?&;#]((?:[\w\-.~+]|%[0-9A-Fa-f]{2})+)" + _PARAM_VALUE)
_ENCODED_PARAM = re.compile(r"(?<![\w\-.~%+])((?:[\w\-.~+]*%[0-9A-Fa-f]{2})+[\w\-.~+]*)" + _PARAM_VALUE)


def redact_text(text: str) -> str:
    """``text`` with secret-shaped substrings replaced by ``[REDACTED]``, and the values of
    secret-named keys of any JSON, Python repr, ``key=value`` or header line inside it (tool
    arguments often arrive as text, and JSON text may hold more JSON as an escaped string: an API
    response's ``"arguments"``).

    Texts of :data:`_CACHED_MIN` to :data:`_CACHED_MAX` characters are scanned once and their result
    kept in a small LRU cache (:data:`_CACHED_TEXTS` entries): an agent loop sends the whole
    conversation again with every model request, so the same messages are redacted turn after turn."""
    n = len(text)
    if n < _SHORTEST_MEMBER:  # most strings in a payload (roles, ids, short values): skip the scans
        return text
    if _CACHED_MIN <= n <= _CACHED_MAX and type(text) is str:  # a subclass's __hash__/__eq__ is user code
        return _redact_cached(text)
    return _redact(text)


_CACHED_MIN = 64  # shorter texts are scanned faster than a cache look-up pays for
_CACHED_MAX = 32_768  # longer ones (past any budget) are not kept alive by the cache
_CACHED_TEXTS = 256  # at most 256 × 32 k characters held: a bounded cost


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def _redact_cached(text: str) -> str:
    return _redact(text)


def _redact(text: str) -> str:
    if (":" in text or "=" in text or '"-' in text) and (_has_key_word(lowered := text.lower()) or "\\u" in lowered
                                                          or _may_be_percent_encoded_key(text)):
        if '"' in text and ":" in text:
            text = _redact_members(text)
        head = text.lstrip()[:1]
        # JSON text (decided once: it is a parse) stays JSON as its strings are redacted one by one
        is_json = _is_json_container(text)
        if is_json and '"' in text and "[" in text:
            text = _redact_elements(text)
        inner = _decoded(text) if head == '"' else None
        if inner is not None:  # one JSON string: the rules read its text (a repr inside it, key=value…)
            redacted = redact_text(inner)
            if redacted != inner:
                text = json.dumps(redacted, ensure_ascii=False)
        elif not is_json:  # in JSON text these rules run on each string
            if "'" in text and ":" in text:
                text = _redact_repr_members(text)
            if "=" in text:
                if "?" in text or "&" in text or "#" in text or ";" in text:
                    text = _QUERY_PARAM.sub(_redact_query_param, text)
                if "%" in text:
                    text = _ENCODED_PARAM.sub(_redact_query_param, text)
                text = _ASSIGNMENT.sub(_redact_assignment, text)
            if ":" in text:
                text = _HEADER_LINE.sub(_redact_header_line, text)
    if len(text) < _SHORTEST_SECRET:
        return text
    if _SECRET_TRIGGER.search(text) is not None:
        text = _SECRET_TEXT.sub(REDACTED, text)
    if "eyJ" in text:
        text = _JWT.sub(REDACTED, text)
    if "-----BEGIN " in text:
        text = _PEM_PRIVATE_KEY.sub(REDACTED, text)
    if "://" in text and "@" in text:
        text = _URL_PASSWORD.sub(rf"\g<1>{REDACTED}", text)
    return text


def leaves_unchanged(text: str) -> bool:
    """Whether no rule of :func:`redact_text` can change ``text``, nor any string or key inside it when it is
    JSON text: it holds no word of a secret-named key, no ``\\u``, no literal of a secret shape. Every rule of
    :func:`_redact` needs one of these in the string it changes (keep the two in step), and JSON escaping
    never hides one (it leaves letters, digits, spaces and ``-_./:@`` as they are; a ``\\u`` is written ``\\\\u``).

    Texts of :data:`_CACHED_MIN` to :data:`_CACHED_MAX` characters are scanned once, as in :func:`redact_text`: the
    same JSON text comes again (a workflow event is one step's output and the next step's input)."""
    if _CACHED_MIN <= len(text) <= _CACHED_MAX and type(text) is str:
        return _leaves_unchanged_cached(text)
    return _leaves_unchanged(text)


@functools.lru_cache(maxsize=_CACHED_TEXTS)
def _leaves_unchanged_cached(text: str) -> bool:
    return _leaves_unchanged(text)


def _leaves_unchanged(text: str) -> bool:
    lowered = text.lower()
    return not (_has_key_word(lowered) or "\\u" in lowered or _may_be_percent_encoded_key(text)
                or _SECRET_TRIGGER.search(text) is not None or "eyJ" in text or "-----BEGIN " in text or ("://" in text and "@" in text))


def _is_json_container(text: str) -> bool:
    """JSON text of an object or an array, not Python repr: its strings are redacted one by one, so a
    replacement never crosses a string's end (a JSON string alone is read decoded: see :func:`_redact`)."""
    head = text.lstrip()[:1]
    if head not in ("{", "["):
        return False
    rest = text.lstrip()[1:].lstrip()[:1]
    if head == "{":
        looks = rest in ('"', "}")
    else:  # a JSON array's first element (not repr's '…', Send(…))
        looks = rest != "" and rest in '"{[]-0123456789tfn'
    return looks and _parses(text)  # a repr can begin like JSON: "[{'password': …}]", "[1, {'token': …}]"


def _parses(text: str) -> bool:
    """Whether ``text`` is JSON (orjson; the standard library's decoder for what orjson refuses but JSON
    allows: lone surrogate escapes, integers past 64 bits)."""
    try:
        orjson.loads(text)
        return True
    except orjson.JSONDecodeError:
        pass
    try:
        json.loads(text)
        return True
    except (ValueError, RecursionError):
        return False


def _needs_text_rules(literal: str) -> bool:
    """A JSON string literal that may hold a repr, assignment or header line with a secret-named key (read
    decoded when it escapes a Latin character, ``\\u00XX``: ``p\\u0061ssword`` is ``password`` to every reader)."""
    if "\\u00" in literal:
        literal = _decoded(literal) or literal
    return ("'" in literal or "=" in literal or ":" in literal) and \
        (_has_key_word(literal.lower()) or _may_be_percent_encoded_key(literal))


def _quoted_redacted(value: str) -> str:
    """``[REDACTED]`` in the quotes ``value`` had (so the text around it still parses)."""
    return f"{value[0]}{REDACTED}{value[0]}" if value[:1] in ("'", '"') else REDACTED


def _is_secret_param(key: str) -> bool:
    """Whether a URL parameter named ``key`` (as it is written: percent-encoded or not) holds a secret: a
    secret-named key (:func:`is_secret_key`) or a signature (:data:`_SIGNATURE_PARAMS`)."""
    if "%" in key or "+" in key:
        key = unquote_plus(key)
    return len(key) <= 64 and (is_secret_key(key) or key.lower() in _SIGNATURE_PARAMS)


def _redact_query_param(m: re.Match[str]) -> str:
    key, value = m.group(1), m.group(2)
    if _is_secret_param(key):
        return m.group(0)[:m.start(2) - m.start()] + REDACTED
    if "=" in value and "?" in value:  # a URL in the value (``?next=https://h/cb?token=…``): its own parameters
        return m.group(0)[:m.start(2) - m.start()] + _QUERY_PARAM.sub(_redact_query_param, value)
    if "%3D" in value or "%3d" in value:  # a URL in the value percent-encoded: its own parameters, still encoded
        nested = _NESTED_PARAM.sub(_redact_nested_param, value)
        if nested != value:
            return m.group(0)[:m.start(2) - m.start()] + nested
    return m.group(0)


def _redact_nested_param(m: re.Match[str]) -> str:
    if _is_secret_param(m.group(1)):
        return m.group(0)[:m.start(2) - m.start()] + REDACTED
    return m.group(0)


def _redact_assignment(m: re.Match[str]) -> str:
    key, value = m.group(1), m.group(2)
    if m.string.startswith(REDACTED, m.start(2)):  # a URL's parameter, redacted by _QUERY_PARAM
        return m.group(0)
    if not is_secret_key(key) or value in ("''", '""', "None", "null"):
        return m.group(0)
    return m.group(0)[:m.start(2) - m.start(0)] + _quoted_redacted(value)


def _redact_header_line(m: re.Match[str]) -> str:
    key = m.group(1).strip().rstrip(":").strip()
    if not is_secret_key(key):
        return m.group(0)
    return m.group(1) + REDACTED


def _redact_repr_members(text: str) -> str:
    parts: list[str] = []
    pos = 0
    for m in _REPR_MEMBER.finditer(text):
        if m.start() < pos or not is_secret_key(m.group(1)[:64]):
            continue
        value, start = m.group(2), m.start(2)
        if value in ("''", '""', "None"):
            continue
        end = _container_end(text, start) if value in ("{", "[", "(") else m.end(2)
        parts += [text[pos:start], _quoted_redacted(value)]
        pos = end
    if not parts:
        return text
    parts.append(text[pos:])
    return "".join(parts)


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
        elif value.startswith('"') and len(value) > 1 and value.endswith('"') and \
                ('\\"' in value or _needs_text_rules(value)):
            inner = _decoded(value)  # JSON (or repr, key=value, header lines) inside a JSON string
            redacted = redact_text(inner) if inner is not None else None
            if redacted is not None and redacted != inner:
                parts += [text[pos:start], json.dumps(redacted, ensure_ascii=False)]
                pos = m.end(2)
    if not parts:
        return text
    parts.append(text[pos:])
    return "".join(parts)


# A string that is an element of a JSON array (after "[" or ",", before "," or "]"): an argv, a list of
# header lines. Inside a JSON string every quote is escaped, so a match starts and ends at real quotes.
_JSON_ELEMENT = re.compile(r'(?<=[\[,])(\s*)("(?:[^"\\\n]|\\.)*")(?=\s*[,\]])')
# An argv's option whose value is the next element ("--password", "…"): its name is read as a key.
_OPTION = re.compile(r'"--?([A-Za-z][\w\-.]*)"')
_BARE_OPTION = re.compile(r'--?([A-Za-z][\w\-.]*)')  # the same, as a list's string (data, not JSON text)


def _secret_option_values(items: list[Any]) -> list[int]:
    """The indexes of the non-empty strings in ``items`` that follow an option naming a secret (an argv's
    ``"--password", "…"``)."""
    found = []
    for i in range(len(items) - 1):
        item = items[i]
        if item.__class__ is str and item[:1] == "-":
            option = _BARE_OPTION.fullmatch(item)
            value = items[i + 1]
            if option is not None and isinstance(value, str) and value and is_secret_key(option.group(1)):
                found.append(i + 1)
    return found


def _redact_elements(text: str) -> str:
    """JSON text with each string array element that holds a repr, ``key=value`` or header line with a
    secret-named key redacted by the text rules, as a member's string value is in :func:`_redact_members`,
    and the string element right after a secret-named option (``["mysql", "--password", "…"]``) redacted."""
    after_option = -1  # the end of the last element when it was a secret-named option

    def one(m: re.Match[str]) -> str:
        nonlocal after_option
        literal = m.group(2)
        value_of_option = after_option >= 0 and text[after_option:m.start()].strip() == ","
        after_option = -1
        if value_of_option and literal != '""':
            return m.group(1) + f'"{REDACTED}"'
        option = _OPTION.fullmatch(literal)
        if option is not None and is_secret_key(option.group(1)):
            after_option = m.end()
            return m.group(0)
        if not _needs_text_rules(literal):
            return m.group(0)
        inner = _decoded(literal)
        redacted = redact_text(inner) if inner is not None else None
        if redacted is None or redacted == inner:
            return m.group(0)
        return m.group(1) + json.dumps(redacted, ensure_ascii=False)

    return _JSON_ELEMENT.sub(one, text)


def _is_secret_json_key(raw: str) -> bool:
    if "\\" in raw:  # an escaped key ("pass\u0077ord") is read as a decoder reads it
        raw = _decoded(f'"{raw}"') or raw
    if len(raw) > 64:  # any quoted text before a colon looks like a key: keep long ones out of the cache
        return is_secret_key.__wrapped__(raw)
    return is_secret_key(raw)


def _decoded(literal: str) -> str | None:
    try:
        value = json.loads(literal)
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _container_end(text: str, start: int) -> int:
    """The index after the bracket closing the object/array/tuple opened at ``start`` (strings in
    either quote skipped), or the end of ``text`` when it is cut before that."""
    depth, i, n, quote = 0, start, len(text), ""
    while i < n:
        c = text[i]
        if quote:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = ""
        elif c in "\"'":
            quote = c
        elif c in "{[(":
            depth += 1
        elif c in "}])":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


EXCERPT_CHARS = 60
"""Longest excerpt of bad input an error message quotes (:func:`excerpt`)."""


def excerpt(value: Any, limit: int = EXCERPT_CHARS, *, secret: bool = False) -> str:
    """``repr(value)`` as an error message that names bad input may quote it: at most ``limit`` characters,
    secrets redacted (:func:`redact_text`) before the cut, so that a cut never leaves part of a secret a
    whole one would have shown as ``[REDACTED]``; ``[REDACTED]`` outright when ``secret`` (the value of a
    secret-named key). A container is named by its type (its repr could be the whole input)."""
    if secret:
        return REDACTED
    if isinstance(value, str):
        text = repr(value[:limit * 16])  # a secret starting inside the excerpt is seen whole
    elif isinstance(value, int) and value.bit_length() > 1024:  # repr past 4300 digits raises
        return f"an integer of {value.bit_length()} bits"
    elif value is None or isinstance(value, (int, float)):
        text = repr(value)
    else:
        return f"a {type(value).__name__}"
    text = redact_text(text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


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
            out = [walk(v) for v in d]
            if len(d) > 1 and d[0].__class__ is str:  # maybe an argv: the element after "--password" is its value
                for i in _secret_option_values(d):
                    out[i] = REDACTED
            return out
        # `type(d) is dict` first: an ABC check per scalar and per dict is most of this walk's cost
        if type(d) is dict or (not isinstance(d, _SCALARS) and isinstance(d, Mapping)):
            return {walk(k): (REDACTED if isinstance(k, str) and is_secret_key(k) and v not in (None, "")
                              else walk(v)) for k, v in d.items()}
        return d

    return walk(data), cut
