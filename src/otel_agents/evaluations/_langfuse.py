"""Evaluation results as Langfuse scores (public API ``POST /api/public/scores``, Basic auth).

Each result becomes one score on the observation it graded — Langfuse's trace id and observation id
are the OTel trace and span ids (hex) of spans ingested over OTLP — with ``name``
(``gen_ai.evaluation.name``), ``value`` (the check's score, ``dataType`` ``NUMERIC``), ``comment``
(the explanation, only with content capture on) and ``metadata`` (label, grader, scenario, step).
The score ``id`` is a UUID derived from the check's stable key, so sending a report twice updates its scores.
A score counts as sent when Langfuse answers 2xx with its ``CreateScoreResponse``, JSON with the score's ``id``
(Langfuse's public API reference); any other 2xx answer (a proxy's or a login page) is a failure quoting it.
A result without a span but with a trace is scored on the trace; one with neither is not sent.
Langfuse accepts a score before the trace it names has been ingested.
"""

from __future__ import annotations

import base64
import json
import os
import urllib.error
import urllib.request
import uuid
from typing import Any, Sequence

from ..exporters._accepted import open_unfollowed
from ._phoenix import Delivery, error_detail, not_the_answer
from ._results import EvaluationResult

ENV_LANGFUSE_HOST = "LANGFUSE_HOST"
ENV_LANGFUSE_PUBLIC_KEY = "LANGFUSE_PUBLIC_KEY"
ENV_LANGFUSE_SECRET_KEY = "LANGFUSE_SECRET_KEY"
DEFAULT_HOST = "https://cloud.langfuse.com"
SCORES_PATH = "/api/public/scores"


def score(result: EvaluationResult) -> dict[str, Any]:
    """One Langfuse ``CreateScoreRequest`` body (the result must have a ``trace_id``)."""
    body: dict[str, Any] = {"id": str(uuid.uuid5(uuid.NAMESPACE_URL, "otel-agents:ecp:" + result.key)), "traceId": result.trace_id, "name": result.name}
    if result.span_id:
        body["observationId"] = result.span_id
    body["value"] = result.score if result.score is not None else (1.0 if result.passed else 0.0)
    body["dataType"] = "NUMERIC"
    if result.explanation:
        body["comment"] = result.explanation
    metadata: dict[str, Any] = {"label": result.label, "grader": result.grader, "source": "ecp",
                                "scenario": result.scenario, "step": result.step, "check": result.check}
    if result.tool_name:
        metadata["tool"] = result.tool_name
    if result.evidence_span_id:
        metadata["evidence_span_id"] = result.evidence_span_id
    body["metadata"] = metadata
    return body


def score_langfuse(results: Sequence[EvaluationResult], host: str | None = None, *,
                   public_key: str | None = None, secret_key: str | None = None,
                   timeout: float = 10.0) -> Delivery:
    """Send the results to Langfuse as scores, one request each.

    Args:
        host: Langfuse's base URL; default ``LANGFUSE_HOST``, else ``https://cloud.langfuse.com``. Its user
            info (``https://PUBLIC:SECRET@host``), when it has one, is the Basic credential (as the ``langfuse``
            preset's exporter takes it; the keys are then not needed), shown as ``[REDACTED]@`` in messages.
        public_key, secret_key: default ``LANGFUSE_PUBLIC_KEY`` / ``LANGFUSE_SECRET_KEY``.
        timeout: seconds per request.

    Returns:
        A :class:`Delivery`; a failed request is listed, never raised: a refusal, or a 2xx that is not Langfuse's
        ``CreateScoreResponse`` (its body read within ``timeout``, at most 1 MiB).

    Raises:
        ValueError: a key is missing or cannot be sent (a trailing newline; the message names the variable,
            never a value), or the URL is not an
            http(s) URL with a host (named as its argument or variable).
    """
    from .._spans.redaction import redact_url
    from ..exporters._reach import lookup_problem
    from ..exporters.presets import check_langfuse_keys, check_url, split_userinfo

    source = "the host= argument" if host else ENV_LANGFUSE_HOST
    base = check_url(host or os.environ.get(ENV_LANGFUSE_HOST) or DEFAULT_HOST, source)
    base, basic = split_userinfo(base)  # public:secret@ as the Basic credential, as the langfuse preset's exporter
    if basic is None:
        public = public_key or os.environ.get(ENV_LANGFUSE_PUBLIC_KEY)
        secret = secret_key or os.environ.get(ENV_LANGFUSE_SECRET_KEY)
        missing = [name for name, value in ((ENV_LANGFUSE_PUBLIC_KEY, public), (ENV_LANGFUSE_SECRET_KEY, secret))
                   if not value]
        if missing:
            raise ValueError(f"Langfuse scores need {' and '.join(missing)}")
        check_langfuse_keys(public_key, secret_key, str(public), str(secret))
        basic = f"Basic {base64.b64encode(f'{public}:{secret}'.encode()).decode('ascii')}"
    headers = {"authorization": basic, "content-type": "application/json", "accept": "application/json"}
    delivery = Delivery()
    traced = sum(1 for result in results if result.trace_id)
    unreachable = lookup_problem(base) if traced else None  # urllib's timeout does not cover the name lookup
    if unreachable is not None:
        delivery.failed.append(f"{redact_url(base)}: {unreachable}; {traced} scores not sent")
        delivery.skipped = len(results) - traced
        return delivery
    for result in results:
        if not result.trace_id:
            delivery.skipped += 1
            continue
        data = json.dumps(score(result), ensure_ascii=False).encode("utf-8")
        request = urllib.request.Request(base + SCORES_PATH, data=data, headers=headers, method="POST")
        try:
            with open_unfollowed(request, timeout) as response:
                why = not_the_answer(response, timeout, _is_created, "Langfuse's answer with the score's id",
                                     "Langfuse may have stored the score but did not say so (scoring again updates "
                                     "it, it does not add another)")
            if why is None:
                delivery.sent += 1
            else:
                delivery.failed.append(f"{result.key}: {why}")
        except urllib.error.HTTPError as exc:
            delivery.failed.append(f"{result.key}: HTTP {exc.code} {error_detail(exc, timeout)}")
        except OSError as exc:
            delivery.failed.append(f"{result.key}: {type(exc).__name__}: {exc}")
    return delivery


def _is_created(answer: Any) -> bool:
    """Whether ``answer`` (parsed JSON) is a ``CreateScoreResponse``: an object with the score's ``id``, a string."""
    return isinstance(answer, dict) and isinstance(answer.get("id"), str)
