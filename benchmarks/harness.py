"""Shared pieces of the benchmarks: the provider every variant exports through, the
interleaved timing loop, and the statistics.

Why interleaved rounds: this is a shared, noisy 2-core machine, so an absolute
time means little. Every variant of one comparison runs in the same process, in
short batches, in a shuffled order per round, so each sees the same mix of
quiet and busy periods. Batches are timed in process CPU time
(``time.process_time``), not wall time: time spent waiting for a core that
another tenant holds is not the code's cost. Two estimators are reported: the difference of the
fastest batches (``min``; other tenants' load only ever adds time, so the
fastest batch is the closest to the code's own cost — the estimator the targets
use), and the median over rounds of the difference to the baseline batch *of the
same round* (``paired``), with its inter-quartile range as the noise indicator.
"""

from __future__ import annotations

import gc
import random
import statistics
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult


class CountingExporter(SpanExporter):
    """The no-op exporter of every benchmark: counts spans and drops them."""

    def __init__(self) -> None:
        self.count = 0

    def export(self, spans: Sequence[Any]) -> SpanExportResult:
        self.count += len(spans)
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        pass


def counting_provider() -> tuple[TracerProvider, CountingExporter]:
    """A ``TracerProvider`` → ``SimpleSpanProcessor`` → :class:`CountingExporter` (what every variant uses)."""
    exporter = CountingExporter()
    provider = TracerProvider()
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    return provider, exporter


@dataclass
class Variant:
    """One way of running a workload.

    ``install()``/``remove()`` bracket each timed batch (instrument / uninstrument);
    ``wrap`` (optional) returns a context manager the batch runs inside
    (``suppress_instrumentation``); ``run()`` is one execution of the workload.
    """

    name: str
    run: Callable[[], Any]
    install: Callable[[], Any] = lambda: None
    remove: Callable[[], Any] = lambda: None
    wrap: Callable[[], Any] | None = None
    ops_per_call: int = 1  # units of work one run() does (the floor runs many bare spans per call)


@dataclass
class Timings:
    """Per-round seconds per unit of work, and spans exported per unit, of each variant."""

    seconds: dict[str, list[float]] = field(default_factory=dict)
    spans: dict[str, list[float]] = field(default_factory=dict)


def time_interleaved(variants: Sequence[Variant], exporter: CountingExporter, *, rounds: int, batch: int,
                     warmup: int = 3, seed: int = 1, mark: Callable[[str], Any] | None = None) -> Timings:
    """Run every variant ``batch`` times per round, for ``rounds`` rounds, in a shuffled order per round.

    Returns seconds per unit of work (``run()`` time / ``ops_per_call``) and spans exported per
    unit, one value per round. Garbage is collected before each batch (not inside it). ``mark``
    (optional) is called with the variant's name right before and right after each timed batch
    (the instruction counts' markers, :mod:`instructions`).
    """
    rng = random.Random(seed)
    out = Timings({v.name: [] for v in variants}, {v.name: [] for v in variants})
    order = list(variants)
    for _ in range(rounds):
        rng.shuffle(order)
        for v in order:
            v.install()
            try:
                ctx = v.wrap() if v.wrap else None
                if ctx is not None:
                    ctx.__enter__()
                try:
                    run = v.run
                    for _ in range(warmup):
                        run()
                    gc.collect()
                    before = exporter.count
                    if mark is not None:
                        mark(v.name)
                    t0 = time.process_time()
                    for _ in range(batch):
                        run()
                    elapsed = time.process_time() - t0
                    if mark is not None:
                        mark(v.name)
                    emitted = exporter.count - before
                finally:
                    if ctx is not None:
                        ctx.__exit__(None, None, None)
            finally:
                v.remove()
            units = batch * v.ops_per_call
            out.seconds[v.name].append(elapsed / units)
            out.spans[v.name].append(emitted / units)
    return out


def median(values: Sequence[float]) -> float:
    return statistics.median(values) if values else float("nan")


def overhead(t: Timings, variant: str, baseline: str) -> dict[str, float]:
    """``variant − baseline`` in seconds per unit: ``min_s`` (fastest batch minus fastest batch),
    ``paired_s`` (median over rounds of the same-round difference) and that difference's quartiles."""
    diffs = [a - b for a, b in zip(t.seconds[variant], t.seconds[baseline])]
    q = statistics.quantiles(diffs, n=4) if len(diffs) >= 2 else [diffs[0]] * 3
    return {"min_s": min(t.seconds[variant]) - min(t.seconds[baseline]), "paired_s": statistics.median(diffs),
            "q1_s": q[0], "q3_s": q[2]}


def us(seconds: float) -> float:
    """Seconds → microseconds, rounded for the JSON."""
    return round(seconds * 1e6, 3)


def machine() -> dict[str, Any]:
    """A short description of the machine and interpreter (for the results and the README)."""
    import os
    import platform

    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            names = [line.split(":", 1)[1].strip() for line in f if line.startswith("model name")]
        if names:
            cpu = names[0]
    except OSError:
        pass
    mem_gib = None
    try:
        with open("/proc/meminfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    mem_gib = round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "memory_gib": mem_gib, "os": platform.platform(),
            "python": platform.python_version(), "implementation": platform.python_implementation()}


def versions(*dists: str) -> dict[str, str | None]:
    """Installed versions of the named distributions (``None`` when absent)."""
    from importlib.metadata import PackageNotFoundError, version

    out: dict[str, str | None] = {}
    for d in dists:
        try:
            out[d] = version(d)
        except PackageNotFoundError:
            out[d] = None
    return out


BOOTSTRAP_RESAMPLES = 2000
CONFIDENCE = 0.95


def bootstrap_ratio(numerator: Sequence[float], denominator: Sequence[float], *, scale: float = 1.0,
                    resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 7) -> dict[str, float]:
    """``scale × median(numerator) / median(denominator)`` over rounds, with a 95% percentile
    bootstrap interval: the rounds are resampled with replacement ``resamples`` times, the same
    rounds for both (a round's numerator and denominator were measured side by side), and the ratio
    recomputed each time. A resample whose denominator median is ≤ 0 counts as +∞ (an overhead the
    noise hid: the interval then reaches infinity, "not resolved"). Returns ``ratio``, ``low``, ``high``."""
    n = len(numerator)
    if n != len(denominator) or n == 0:
        raise ValueError("numerator and denominator need the same, non-zero number of rounds")

    def ratio(a: float, b: float) -> float:
        return scale * a / b if b > 0 else float("inf")

    rng = random.Random(seed)
    values = []
    for _ in range(resamples):
        idx = [rng.randrange(n) for _ in range(n)]
        values.append(ratio(statistics.median(numerator[i] for i in idx),
                            statistics.median(denominator[i] for i in idx)))
    values.sort()
    tail = (1 - CONFIDENCE) / 2
    low, high = values[int(tail * resamples)], values[min(resamples - 1, int((1 - tail) * resamples))]
    return {"ratio": ratio(statistics.median(numerator), statistics.median(denominator)), "low": low, "high": high}


def verdict(interval: dict[str, float], target: float, *, at_least: bool = False) -> str | None:
    """``"met"``, ``"missed"`` or ``None`` (not resolved) for ``ratio ≤ target`` (``≥`` with
    ``at_least``): met when the whole interval is on the target's side, missed when the whole interval
    is beyond it, not resolved when the interval straddles it."""
    low, high = interval["low"], interval["high"]
    if at_least:
        low, high, target = -high, -low, -target
    if high <= target:
        return "met"
    if low > target:
        return "missed"
    return None


def paired_diffs(t: Timings, variant: str, baseline: str) -> list[float]:
    """Per round: the variant's seconds per unit minus the baseline's in the same round."""
    return [a - b for a, b in zip(t.seconds[variant], t.seconds[baseline])]


def rounded(interval: dict[str, float], digits: int = 3) -> dict[str, float | None]:
    """An interval for the JSON (infinity as ``None``: strict JSON)."""
    return {k: (round(v, digits) if v != float("inf") else None) for k, v in interval.items()}


MORE_STEPS = 1.5


def compare_per_span(ours_spans: float, peer_spans: float) -> bool:
    """Whether ours is compared with a peer per span rather than per run: where ours makes over
    :data:`MORE_STEPS` × the peer's spans (it records steps the peer does not). Where ours makes fewer, the
    per-run ratio already credits the peer's extra spans."""
    return ours_spans > MORE_STEPS * peer_spans
