"""The GenAI client metrics recorded next to model spans (OTel GenAI semconv v1.41, model/gen-ai/metrics.yaml).

``gen_ai.client.operation.duration`` (histogram, seconds),
``gen_ai.client.token.usage`` (histogram, tokens, one point per
``gen_ai.token.type`` of ``input``/``output``) and, for streamed responses only,
``gen_ai.client.operation.time_to_first_chunk`` (seconds from the request to the
first chunk) and ``gen_ai.client.operation.time_per_output_chunk`` (seconds from
the end of one chunk to the end of the next, one point per chunk after the first),
with the semconv's advisory bucket boundaries (docs/gen-ai/gen-ai-metrics.md).
"""

from __future__ import annotations

import itertools
from typing import Any, Mapping, Sequence

from opentelemetry.metrics import NoOpHistogram, get_meter

try:  # the API's stand-in for an instrument made before a global meter provider is set
    from opentelemetry.metrics._internal.instrument import _ProxyHistogram
except ImportError:  # pragma: no cover - a reshaped API: every point is recorded as before
    _ProxyHistogram = None  # type: ignore[assignment,misc]

from .. import __version__
from ..semconv import attributes as A
from .guard import report_internal_error
from .usage import INT64_MAX, token_count

def _idle(histogram: Any) -> bool:
    """Whether recording on ``histogram`` does nothing: OTel's no-op histogram, or the API's proxy one (no meter
    provider was given and no global one set) before it has a real instrument (it gets one when a global provider
    is set, and records from then on). Checked first, so an application that exports no metrics pays no attribute
    mappings built for points nobody keeps; one that does gets the same points as before."""
    t = type(histogram)
    return t is NoOpHistogram or t is _ProxyHistogram and getattr(histogram, "_real_instrument", True) is None


_DURATION_BUCKETS = [0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92]
_TOKEN_BUCKETS = [1, 4, 16, 64, 256, 1024, 4096, 16384, 65536, 262144, 1048576, 4194304, 16777216, 67108864]


class GenAIMetrics:
    """The four GenAI client histograms, on the given (or global) meter provider."""

    def __init__(self, meter_provider: Any = None, scope: str = "otel_agents"):
        meter = get_meter(scope, __version__, meter_provider)
        # (name, unit, description, advisory buckets): the descriptions are the semconv's briefs, shortened
        self.duration, self.tokens, self.first_chunk, self.per_chunk = (
            meter.create_histogram(name, unit=unit, description=description,
                                   explicit_bucket_boundaries_advisory=buckets)
            for name, unit, description, buckets in (
                (A.GEN_AI_CLIENT_OPERATION_DURATION, "s", "GenAI operation duration", _DURATION_BUCKETS),
                (A.GEN_AI_CLIENT_TOKEN_USAGE, "{token}", "Number of input and output tokens used", _TOKEN_BUCKETS),
                (A.GEN_AI_CLIENT_OPERATION_TIME_TO_FIRST_CHUNK, "s",
                 "Time to receive the first chunk of a streamed response", _DURATION_BUCKETS),
                (A.GEN_AI_CLIENT_OPERATION_TIME_PER_OUTPUT_CHUNK, "s",
                 "Time per output chunk after the first one of a streamed response", _DURATION_BUCKETS)))

    def record(self, span: Any, seconds: float, usage: Any, attrs: Mapping[str, Any],
               error_type: str | None) -> None:
        """Record one finished model or embedding call (``seconds``: duration). ``error_type`` goes on the
        duration only: ``gen_ai.client.token.usage``'s attributes are ``metric_attributes.gen_ai`` and
        ``gen_ai.token.type`` (OTel GenAI v1.41, model/gen-ai/metrics.yaml)."""
        try:  # not `with guard(...)`: two calls fewer, on every span that sets this
            if _idle(self.duration) and _idle(self.tokens):
                return
            self.duration.record(seconds, {**attrs, A.ERROR_TYPE: error_type} if error_type else attrs)
            if usage is not None:
                for token_type, value in (("input", usage.input_tokens), ("output", usage.output_tokens)):
                    if value is not None and (type(value) is int and 0 <= value <= INT64_MAX or
                                              (value := token_count(value)) is not None):
                        self.tokens.record(value, {**attrs, A.GEN_AI_TOKEN_TYPE: token_type})
        except Exception as exc:  # noqa: BLE001
            report_internal_error("metrics.record", exc)

    def record_chunks(self, first: float | None, times: Sequence[float], attrs: Mapping[str, Any]) -> None:
        """Record a streamed response's chunk timing: ``first`` (seconds to the first chunk, or ``None`` when
        already recorded) and one ``time_per_output_chunk`` point per gap between consecutive ``times``
        (monotonic seconds at which chunks arrived). Not ``error.type``: the semconv's
        ``metric_attributes.gen_ai`` only."""
        try:
            if _idle(self.first_chunk) and _idle(self.per_chunk):
                return
            if first is not None:
                self.first_chunk.record(first, attrs)
            if len(times) > 1:
                record = self.per_chunk.record
                previous = times[0]
                for at in itertools.islice(times, 1, None):
                    record(at - previous, attrs)
                    previous = at
        except Exception as exc:  # noqa: BLE001
            report_internal_error("metrics.record_chunks", exc)
