"""Evaluation results as Arize Phoenix span annotations (REST API ``POST /v1/span_annotations``).

Each result becomes one annotation on the span it graded: ``name`` (``gen_ai.evaluation.name``),
``annotator_kind`` (``LLM`` for ``llm_judge``, ``CODE`` otherwise), ``result`` ``{label, score,
explanation}`` and ``identifier`` (the check's stable key: annotating the same report twice
updates the annotations, and two checks of one name on one span stay two). They show in the
trace view's Annotations panel. A result without a span but with a trace becomes a trace
annotation (``POST /v1/trace_annotations``); one with neither is not sent.

Requests are ``sync=true``, one per trace, so Phoenix answers whether the spans exist: a 404
(spans not ingested yet — OTLP ingestion is asynchronous) is retried until ``wait`` seconds have
passed, then that trace is reported as not annotated. A request counts as annotated only when the answer is
Phoenix's: JSON ``{"data": [{"id": ...}, ...]}`` (``AnnotateSpansResponseBody``), one id per annotation; any
other 2xx (a proxy's or a login page, reached through a redirect) is a failure that quotes its start, and so is
an answer not read within the request's timeout in all (one trickling in) or larger than 1 MiB.
Phoenix's schema: ``phoenix.server.api.routers.v1.annotations`` (Phoenix 8+; ``identifier`` since 10).
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from .._spans.redaction import redact_url
from ..exporters._accepted import QUOTED_CHARS, open_unfollowed, other_answer, read_answer, redirect
from ._results import EvaluationResult

ENV_PHOENIX_ENDPOINT = "PHOENIX_COLLECTOR_ENDPOINT"
ENV_PHOENIX_API_KEY = "PHOENIX_API_KEY"
DEFAULT_BASE_URL = "http://127.0.0.1:6006"


@dataclass
class Delivery:
    """What a backend took: ``sent`` results, and ``failed`` ones with why (one line each)."""

    sent: int = 0
    failed: list[str] = field(default_factory=list)
    skipped: int = 0  # results with no trace to put them on


def annotation(result: EvaluationResult) -> dict[str, Any]:
    """One Phoenix annotation body (``span_id`` or ``trace_id`` added by the caller)."""
    body: dict[str, Any] = {"label": result.label}
    if result.score is not None:
        body["score"] = result.score
    if result.explanation:
        body["explanation"] = result.explanation
    metadata = {"source": "ecp", "grader": result.grader, "scenario": result.scenario, "step": result.step,
                "check": result.check}
    if result.tool_name:
        metadata["tool"] = result.tool_name
    if result.evidence_span_id:
        metadata["evidence_span_id"] = result.evidence_span_id
    return {"name": result.name, "annotator_kind": result.annotator_kind, "result": body,
            "metadata": metadata, "identifier": result.key}


def annotate_phoenix(results: Sequence[EvaluationResult], base_url: str | None = None, *,
                     api_key: str | None = None, wait: float = 30.0, timeout: float = 10.0) -> Delivery:
    """Send the results to Phoenix as span (or trace) annotations.

    Args:
        base_url: Phoenix's URL (``http://127.0.0.1:6006``; a ``/v1/traces`` suffix is dropped);
            default ``PHOENIX_COLLECTOR_ENDPOINT``, else ``http://127.0.0.1:6006``. Its user info
            (``http://user:password@host``: a proxy in front of Phoenix) is sent as HTTP Basic auth
            (``authorization: Basic base64(user:password)``) and shown as ``[REDACTED]@`` in every message.
        api_key: default ``PHOENIX_API_KEY``; sent as ``authorization: Bearer <key>``.
        wait: seconds to keep retrying a trace whose spans Phoenix does not have yet.
        timeout: seconds per request.

    Returns:
        A :class:`Delivery`; a failure (HTTP error, spans never seen) is listed, never raised.

    Raises:
        ValueError: the URL is not an http(s) URL with a host, or the key cannot be sent as a header
            (a trailing newline), or both a key and user info are given (one Authorization header); the message
            names its argument or variable, never the key or the password.
    """
    from ..exporters._reach import lookup_problem
    from ..exporters.presets import check_header, check_url, split_userinfo

    source = "the base_url= argument" if base_url else ENV_PHOENIX_ENDPOINT
    base = check_url(base_url or os.environ.get(ENV_PHOENIX_ENDPOINT) or DEFAULT_BASE_URL, source)
    # user:password@ as Basic auth (a proxy in front of Phoenix), never as part of the host name
    base, basic = split_userinfo(base.removesuffix("/v1/traces"))
    key = api_key or os.environ.get(ENV_PHOENIX_API_KEY)
    key_source = "the api_key= argument" if api_key else ENV_PHOENIX_API_KEY
    if basic and key:
        raise ValueError(f"{source} carries user info (Basic auth) and {key_source} a key (Bearer auth): a request "
                         "has one Authorization header; give one of them")
    headers = {"content-type": "application/json", "accept": "application/json"}
    if key:  # a key file's trailing newline: urllib's error would quote the key
        headers["authorization"] = f"Bearer {check_header(key, key_source)}"
    elif basic:
        headers["authorization"] = basic
    delivery = Delivery()
    batches: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for result in results:
        if not result.trace_id:
            delivery.skipped += 1
            continue
        item = annotation(result)
        if result.span_id:
            batches.setdefault(("span", result.trace_id), []).append({**item, "span_id": result.span_id})
        else:
            batches.setdefault(("trace", result.trace_id), []).append({**item, "trace_id": result.trace_id})
    unreachable = lookup_problem(base) if batches else None  # urllib's timeout does not cover the name lookup
    if unreachable is not None:
        delivery.failed.append(f"{redact_url(base)}: {unreachable}; {sum(map(len, batches.values()))} annotations not sent")
        return delivery
    deadline = time.monotonic() + wait
    for (kind, trace_id), items in batches.items():
        url = f"{base}/v1/{kind}_annotations?sync=true"
        error = _post(url, {"data": items}, headers, timeout, deadline)
        if error is None:
            delivery.sent += len(items)
        else:
            delivery.failed.append(f"trace {trace_id}: {len(items)} annotations not sent: {error}")
    return delivery


ERROR_DETAIL_CHARS = QUOTED_CHARS  # the start of an error answer quoted


def error_detail(exc: urllib.error.HTTPError, timeout: float) -> str:
    """The start of an error answer's body (at most :data:`ERROR_DETAIL_CHARS` characters), read no further and
    within ``timeout`` seconds (:func:`~otel_agents.exporters._accepted.read_answer`): an endless, huge or trickling
    error body costs one bounded read; ``(its body not read: why)`` when it was not read so. A redirect is not
    followed (:func:`~otel_agents.exporters._accepted.open_unfollowed`: its request carried the key): its
    ``Location`` is named instead."""
    if 300 <= exc.code < 400:
        return f"{redirect(exc.code, exc.headers.get('location'))}, not followed: give the URL it names"
    try:
        start = read_answer(exc, timeout, 4 * ERROR_DETAIL_CHARS, start=True)
    except (ValueError, OSError) as why:  # OSError: an error urllib made up has no socket (fileno)
        return f"(its body not read: {why})"
    return start.decode("utf-8", "replace")[:ERROR_DETAIL_CHARS]


def _post(url: str, payload: dict[str, Any], headers: dict[str, str], timeout: float,
          deadline: float) -> str | None:
    """POST ``payload``; ``None`` on success, else why. A 404 (spans not there yet) is retried."""
    data = json.dumps(payload, ensure_ascii=False).encode("utf-8")
    delay = 0.2
    while True:
        request = urllib.request.Request(url, data=data, headers=headers, method="POST")
        try:
            with open_unfollowed(request, timeout) as response:
                return _not_phoenix(response, len(payload["data"]), timeout)
        except urllib.error.HTTPError as exc:
            detail = error_detail(exc, timeout)
            if exc.code != 404 or time.monotonic() >= deadline:
                return f"HTTP {exc.code} {detail}"
        except OSError as exc:
            return f"{type(exc).__name__}: {exc}"
        time.sleep(delay)
        delay = min(delay * 2, 2.0)


def _not_phoenix(response: Any, count: int, timeout: float) -> str | None:
    """``None`` when a 2xx ``response`` is Phoenix's answer to ``count`` annotations (JSON, ``data`` a list of
    ``count`` ids), else why not (:func:`not_the_answer`)."""
    return not_the_answer(response, timeout,
                          lambda data: isinstance(data, dict) and isinstance(data.get("data"), list)
                          and len(data["data"]) == count,
                          f"Phoenix's answer listing the {count} annotations",
                          f"Phoenix may have stored the {count} annotations but did not say so (annotating again "
                          "updates them, it does not add more)")


def not_the_answer(response: Any, timeout: float, fits: Callable[[Any], bool], expected: str,
                   unread: str) -> str | None:
    """``None`` when a 2xx ``response`` is JSON that ``fits`` (called with the parsed body), else why not: its
    status, content type and the start of its body
    (:func:`~otel_agents.exporters._accepted.other_answer`, ``expected`` naming what was awaited: a proxy's or a
    login page answering 200 is no delivery), or ``HTTP 200, its answer not read (WHY): UNREAD``. The body is read
    within ``timeout`` seconds in all (:func:`~otel_agents.exporters._accepted.read_answer`: one trickling in held
    the command for as long as the server liked), JSON whole (at most 1 MiB), anything else its start only."""
    kind = response.headers.get("content-type") or ""
    is_json = "json" in kind.lower()
    try:
        body = read_answer(response, timeout) if is_json else read_answer(response, timeout, 4 * ERROR_DETAIL_CHARS,
                                                                          start=True)
    except ValueError as exc:
        return f"HTTP {response.status}, its answer not read ({exc}): {unread}"
    try:
        data = json.loads(body) if is_json else None
    except ValueError:
        data = None
    return None if is_json and fits(data) else other_answer(response.status, kind, body, expected)