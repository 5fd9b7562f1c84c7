"""Per-span overhead of the instrumentations of one framework, and the bare-SDK-span floor.

Variants, all in one process and interleaved (see :mod:`harness`):

* ``none`` — the workload, no instrumentation (the baseline);
* ``floor`` — a bare OTel SDK span (start, four attributes, end) through the same
  ``SimpleSpanProcessor`` and no-op exporter, timed per span;
* ``attribute_floor`` — the SDK alone making the very spans ours makes (same names, same
  attributes, captured from one instrumented run): what recording our attributes costs in
  the SDK, whoever computes them. Ours ÷ this floor is the part of our cost that is our code
  and the framework's dispatch, not the amount we record;
* ``dispatch`` (where the framework has callbacks) — a handler that does nothing,
  registered the way ours is: what the framework itself charges any callback-based
  instrumentation before it does any work;
* ``ours``, ``ours_no_content`` (content capture off), ``ours_suppressed``
  (instrumented, but run inside ``suppress_instrumentation()``);
* each peer instrumentor that is installed (``openinference``, ``openllmetry``).

Per-span overhead = (variant's time per run − ``none``'s) / the spans that variant
exports per run (its own count: instrumentations make different numbers of spans
for the same workload). ``ours_suppressed`` and ``dispatch`` export none, so theirs
is divided by ``ours``'s span count (cost per span not made). The per-run overhead
is reported too: it is the fairer comparison when span counts differ.
"""

from __future__ import annotations

import importlib
from typing import Any

from opentelemetry.instrumentation.utils import suppress_instrumentation

from .harness import Variant, counting_provider, median, overhead, time_interleaved, us, versions

FLOOR_SPANS_PER_CALL = 20
SPANLESS = ("ours_suppressed", "dispatch")


def floor_variant(provider: Any) -> Variant:
    """A bare SDK span: start, set four attributes, end (``FLOOR_SPANS_PER_CALL`` per call)."""
    tracer = provider.get_tracer("benchmarks.floor")

    def run() -> None:
        for _ in range(FLOOR_SPANS_PER_CALL):
            span = tracer.start_span("floor")
            span.set_attribute("gen_ai.operation.name", "chat")
            span.set_attribute("gen_ai.request.model", "fake-model-1")
            span.set_attribute("gen_ai.usage.input_tokens", 11)
            span.set_attribute("gen_ai.usage.output_tokens", 7)
            span.end()

    return Variant("floor", run, ops_per_call=FLOOR_SPANS_PER_CALL)


def attribute_floor_variant(provider: Any, module: Any, run: Any) -> tuple[Variant, float]:
    """The SDK alone making the spans one run of ``ours`` makes (names and attributes as exported),
    and the median number of attributes on those spans."""
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    captured = InMemorySpanExporter()
    capture = TracerProvider()
    capture.add_span_processor(SimpleSpanProcessor(captured))
    install, remove = module.install("ours", capture)
    install()
    try:
        run()
    finally:
        remove()
    shapes = [(s.name, s.kind, dict(s.attributes or {})) for s in captured.get_finished_spans()]
    tracer = provider.get_tracer("benchmarks.floor")

    def replay() -> None:
        for name, kind, attributes in shapes:
            tracer.start_span(name, kind=kind, attributes=attributes).end()

    return (Variant("attribute_floor", replay, ops_per_call=max(1, len(shapes))),
            median([len(attributes) for _, _, attributes in shapes]))


def compare(framework: str, *, rounds: int, batch: int, peers: bool = True) -> dict[str, Any]:
    """Run the comparison for ``framework`` (a module of :mod:`benchmarks.workloads`); a JSON-ready result."""
    module = importlib.import_module(f"benchmarks.workloads.{framework}")
    try:
        run = module.workload()
    except ImportError as e:  # the framework itself is not installed in this environment
        return {"framework": framework, "workload": _title(module),
                "skipped_framework": f"{e.name or e} is not installed here", "variants": {}, "targets": {},
                "versions": versions(*module.FRAMEWORK_DISTS)}
    # Slow workloads (a CrewAI kickoff is ~45 ms) shrink the batch, not the rounds: more, shorter
    # batches give the fastest-batch estimator more chances to see a quiet moment.
    batch = max(2, batch // getattr(module, "BATCH_DIVISOR", 1))
    provider, exporter = counting_provider()
    attribute_floor_v, attributes_per_span = attribute_floor_variant(provider, module, run)
    variants = [Variant("none", run), floor_variant(provider), attribute_floor_v]
    if hasattr(module, "dispatch"):
        variants.append(Variant("dispatch", run, *module.dispatch()))
    install, remove = module.install("ours", provider)
    variants.append(Variant("ours", run, install, remove))
    variants.append(Variant("ours_suppressed", run, install, remove, wrap=suppress_instrumentation))
    variants.append(Variant("ours_no_content", run, *module.install("ours_no_content", provider)))
    skipped: dict[str, str] = {}
    for label, dist in module.PEERS.items():
        if not peers:
            skipped[label] = "peers not requested (--no-peers)"
            continue
        try:
            install, remove = module.install(label, provider)
        except ImportError as e:
            installed = versions(dist)[dist]
            skipped[label] = (f"{dist} {installed} fails to import here ({type(e).__name__}: {e})" if installed else
                              f"{dist} is not installed here (make bench installs it into .bench-venv)")
            continue
        try:  # a peer that cannot instrument this framework version is skipped, not fatal
            install()
            remove()
        except Exception as e:  # noqa: BLE001 - any failure of a third party's instrument() is a skip
            skipped[label] = f"{dist} failed to instrument: {type(e).__name__}: {e}"[:200]
            continue
        variants.append(Variant(label, run, install, remove))

    timings = time_interleaved(variants, exporter, rounds=rounds, batch=batch)
    provider.shutdown()

    spans_per_run = {v.name: median(timings.spans[v.name]) for v in variants if "floor" not in v.name}
    leaked = {name: spans_per_run[name] for name in ("none", *SPANLESS) if spans_per_run.get(name)}
    if leaked:
        raise RuntimeError(f"runs that should export no span exported some: {leaked} "
                           "(an instrumentation was not removed cleanly)")
    floor = min(timings.seconds["floor"])
    attribute_floor = min(timings.seconds["attribute_floor"])
    results: dict[str, Any] = {}
    for v in variants:
        if v.name in ("none", "floor", "attribute_floor"):
            continue
        over = overhead(timings, v.name, "none")
        count = spans_per_run["ours"] if v.name in SPANLESS else spans_per_run[v.name]
        per_span = over["min_s"] / count if count else float("nan")
        results[v.name] = {
            "spans_per_run": 0 if v.name in SPANLESS else count,
            "run_us": us(min(timings.seconds[v.name])),
            "overhead_per_run_us": us(over["min_s"]),
            "overhead_per_run_paired_us": us(over["paired_s"]),
            "overhead_per_run_paired_iqr_us": [us(over["q1_s"]), us(over["q3_s"])],
            "overhead_per_span_us": us(per_span),
            "per_span_vs_floor": round(per_span / floor, 2),
        }
    for name in ("ours", "ours_no_content"):  # the attribute floor is the SDK making *our* spans
        results[name]["per_span_vs_attribute_floor"] = round(results[name]["overhead_per_span_us"] /
                                                             us(attribute_floor), 2)
    ours = results["ours"]
    for label in module.PEERS:
        if label in results:
            peer = results[label]
            peer["ours_per_span_ratio"] = round(ours["overhead_per_span_us"] / peer["overhead_per_span_us"], 3)
            peer["ours_per_run_ratio"] = round(ours["overhead_per_run_us"] / peer["overhead_per_run_us"], 3)
    # None = not resolved: an overhead this machine's noise hides (see resolved()) proves nothing either way.
    targets = {"ours_per_span_le_2x_floor": ours["per_span_vs_floor"] <= 2.0 if resolved(ours) else None}
    if "openinference" in results:
        oi = results["openinference"]
        targets["ours_per_span_le_fifth_of_openinference"] = (
            oi["ours_per_span_ratio"] <= 0.2 if resolved(ours) and resolved(oi) else None)
    return {
        "framework": framework,
        "workload": _title(module),
        "rounds": rounds,
        "runs_per_batch": batch,
        "baseline_run_us": us(min(timings.seconds["none"])),
        "floor_span_us": us(floor),
        "attribute_floor_span_us": us(attribute_floor),
        "attributes_per_span": attributes_per_span,
        "variants": results,
        "skipped": skipped,
        "targets": targets,
        "versions": versions(*module.FRAMEWORK_DISTS, *module.PEERS.values()),
    }


def _title(module: Any) -> str:
    """The first line of a workload module's docstring (the README's description of it)."""
    return (module.__doc__ or "").strip().splitlines()[0]


def resolved(variant: dict[str, Any]) -> bool:
    """Whether a variant's overhead stands out of the noise: the fastest-batch estimate is positive and
    so is the lower quartile of its same-round differences (on a ~40 ms CrewAI kickoff neither holds
    for a peer whose cost is a few % of the run)."""
    return variant["overhead_per_run_us"] > 0 and variant["overhead_per_run_paired_iqr_us"][0] > 0
