"""Exporter benchmarks: ECP fold throughput, the folding processor's memory over a long
stream, and the OTLP/JSON file exporter's throughput.

* **fold** — ``otel_agents.exporters.ecp.fold`` over a synthetic trace set (copies of
  one six-span agent run, see :mod:`benchmarks.synthetic`), best of a few repeats;
  spans per second. And over each peer's golden trace (``tests/exporters/foreign``:
  OpenInference, PydanticAI native, OTel GenAI), copied to the same size.
* **processor memory** — ``ECPFoldingProcessor`` on a real ``TracerProvider``; runs
  replayed one after another through the SDK tracer with the template's
  attributes (start, children, end: the processor sees exactly what the span layer
  makes), envelopes counted and dropped. RSS (``/proc/self/statm``) and the
  processor's own bookkeeping (``open_runs``, ``tracked_spans``) are sampled along
  the way after a ``gc.collect()``; "flat" = RSS grew by at most
  ``FLAT_TOLERANCE_MIB`` from the first sample after warm-up (10% of the stream)
  to the last, and the bookkeeping is back to zero.
* **file exporter** — ``OTLPJsonFileExporter.export`` in batches of 512 (the
  ``BatchSpanProcessor`` default) into a temporary file; spans/s and MiB/s.

* **streaming fold** — ``otel-agents fold``'s path (``iter_otlp_json`` line by line into
  ``StreamFolder``, each envelope encoded as strict JSON and written) over the same trace
  set stored by ``OTLPJsonFileExporter``; spans/s from the file to the envelopes, and the
  ratio to merely parsing the file's JSON lines (``orjson.loads`` per line, automatic garbage
  collection off as in the command's read: the target's floor). Beside it (``foreign``), each peer's
  golden trace copied to up to 40,000 spans and folded with the default ``--idle-spans`` and with 64:
  ``held_cost`` near 1.0 says a trace folded costs the same however many traces are held. And (``held``)
  peers' traces folded while hundreds of traces of ours wait out the idle window (roots missing), the same
  ``held_cost`` and its ratio to the parse.

The processor's throughput is reported next to its floor: the same replay through a
``TracerProvider`` without the processor (what the SDK itself costs for these spans).

Times are process CPU time (``time.process_time``), as in :mod:`benchmarks.harness`.
"""

from __future__ import annotations

import gc
import os
import tempfile
import time
from typing import Any, Iterator

from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from .harness import bootstrap_ratio, rounded, verdict, versions
from .synthetic import attributes_of, template_run, trace_set

FLAT_TOLERANCE_MIB = 8.0
FOLD_TARGET = 60_000  # spans/s (issue 40), with `logs` as today
PROCESSOR_TARGET = 2.0  # SDK + ECPFoldingProcessor ≤ 2× the SDK alone (the processor's own cost ≤ the SDK's)
PROCESSOR_PROPOSED = 2.2  # proposed restatement (issue 40): the processor's own cost measured at ~1.05× the SDK's
STREAM_TARGET = 3.0  # streaming `otel-agents fold` ≤ 3× parsing the file's JSON lines
# proposed restatement (issue 40, seventh round): against a floor that is only parsing, the command reads, decodes
# (~1.2x the parse's instructions), folds (~1.4x) and writes: ~4.2x the parse by instructions; a throughput says
# what a user waits for, a quarter of `fold()`'s own target
STREAM_PROPOSED = 15_000  # spans/s
FILE_BATCH = 512


def fold_throughput(spans: int, repeats: int = 3) -> dict[str, Any]:
    from otel_agents.exporters.ecp import fold

    data = trace_set(spans)
    rates = []
    envelopes = 0
    for _ in range(repeats):
        gc.collect()
        t0 = time.process_time()
        envelopes = len(fold(data))
        rates.append(len(data) / (time.process_time() - t0))
    # the interval: the slowest and fastest repeat (each folds the whole set; CPU time)
    interval = {"ratio": max(rates), "low": min(rates), "high": max(rates)}
    return {"spans": len(data), "runs": envelopes, "repeats": repeats, "spans_per_s": round(max(rates)),
            "spans_per_s_repeats": [round(r) for r in rates],
            "target": {"target": FOLD_TARGET, **rounded(interval, 0), "verdict": verdict(interval, FOLD_TARGET,
                                                                                    at_least=True)},
            "foreign": foreign_fold_throughput(len(data), repeats)}


FOREIGN_FIXTURES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "tests", "exporters", "foreign")


def _foreign_copies(spans: int) -> Iterator[tuple[str, list[Any]]]:
    """Each golden fixture of ``tests/exporters/foreign`` (name, spans) copied with fresh trace ids up to
    about ``spans`` spans."""
    from opentelemetry.sdk.trace import ReadableSpan
    from opentelemetry.trace import SpanContext

    from otel_agents.exporters.file import read_otlp_json

    for name in sorted(os.listdir(FOREIGN_FIXTURES)):
        if not name.endswith(".otlp.jsonl"):
            continue
        template = read_otlp_json(os.path.join(FOREIGN_FIXTURES, name))
        data = []
        for copy in range(max(1, spans // len(template))):
            for s in template:
                trace_id = s.context.trace_id ^ (copy << 64)
                context = SpanContext(trace_id, s.context.span_id, False, s.context.trace_flags)
                parent = SpanContext(trace_id, s.parent.span_id, False) if s.parent is not None else None
                data.append(ReadableSpan(name=s.name, context=context, parent=parent, resource=s.resource,
                                         attributes=s.attributes, kind=s.kind, status=s.status,
                                         start_time=s.start_time, end_time=s.end_time))
        yield name.removesuffix(".otlp.jsonl"), data


def foreign_fold_throughput(spans: int, repeats: int) -> dict[str, Any]:
    """``fold`` over traces recorded by other instrumentations (issue 25): each golden fixture of
    ``tests/exporters/foreign`` copied with fresh trace ids up to about ``spans`` spans; spans/s per
    fixture, best of ``repeats``."""
    from otel_agents.exporters.ecp import fold

    out: dict[str, Any] = {}
    for name, data in _foreign_copies(spans):
        best = float("inf")
        for _ in range(repeats):
            gc.collect()
            t0 = time.process_time()
            runs = len(fold(data))
            best = min(best, time.process_time() - t0)
        out[name] = {"spans": len(data), "runs": runs, "spans_per_s": round(len(data) / best)}
    return out


def _store(data: list[Any], path: str) -> None:
    """``data`` written to ``path`` by ``OTLPJsonFileExporter`` in batches of ``FILE_BATCH`` (as a
    ``BatchSpanProcessor`` would hand them over)."""
    from otel_agents.exporters.file import OTLPJsonFileExporter

    exporter = OTLPJsonFileExporter(path)
    for i in range(0, len(data), FILE_BATCH):
        exporter.export(data[i:i + FILE_BATCH])
    exporter.shutdown()


def _fold_seconds(args: Any) -> float:
    """CPU seconds of one ``otel-agents fold`` with the parsed ``args``, after a full collection.

    Raises:
        RuntimeError: the command exited non-zero (its standard error's end in the message).
    """
    import contextlib
    import io

    from otel_agents.cli.fold import run

    gc.collect()
    t0 = time.process_time()
    with contextlib.redirect_stderr(io.StringIO()) as err:
        code = run(args)
    seconds = time.process_time() - t0
    if code != 0:
        raise RuntimeError(f"otel-agents fold exited {code}: {err.getvalue()[-2000:]}")
    return seconds


def foreign_stream_throughput(spans: int, rounds: int) -> dict[str, Any]:
    """``otel-agents fold`` over each foreign fixture copied to about ``spans`` spans (stored by
    ``OTLPJsonFileExporter``), with the default ``--idle-spans`` and with ``--idle-spans 64``; spans/s per
    fixture for both, median of ``rounds``. A peer's trace is folded only when idle, so with the default
    window thousands of small traces are held at once: ``held_cost`` (the default's spans/s ÷ the small
    window's) is ~1.0 when the cost of a trace folded does not grow with the traces held. (It was not:
    each trace folded walked every trace held, ~0.4 on a corpus of 1.5-span traces.)"""
    from otel_agents.cli import build_parser

    out: dict[str, Any] = {}
    for name, data in _foreign_copies(spans):
        entry = out[name] = {"spans": len(data)}
        with tempfile.TemporaryDirectory(prefix="otel-agents-bench-") as tmp:
            path, target = os.path.join(tmp, "traces.jsonl"), os.path.join(tmp, "envelopes.jsonl")
            _store(data, path)
            for key, extra in (("spans_per_s", []), ("spans_per_s_idle_64", ["--idle-spans", "64"])):
                args = build_parser("fold").parse_args(["fold", path, "-o", target, *extra])
                times = [_fold_seconds(args) for _ in range(rounds)]
                entry[key] = round(len(data) / sorted(times)[len(times) // 2])
        entry["held_cost"] = round(entry["spans_per_s"] / entry["spans_per_s_idle_64"], 2)
    return out


def held_stream_throughput(spans: int, rounds: int) -> dict[str, Any]:
    """``otel-agents fold`` over a file where traces of ours are held while peers' traces are folded: the
    synthetic set without its roots (each trace then waits out the idle window: an MCP or A2A server's side of a
    call, a run whose root never ended) interleaved with OTel GenAI's golden trace (2-span peer traces, at
    another time) copied, about ``spans`` spans in all, in batches of ``FILE_BATCH``. Each peer trace folded is
    compared with the traces of ours held (``PeerViews``). Timed with the default ``--idle-spans`` (hundreds
    of traces of ours held at once) and with 64 (a handful), alternating with parsing the file's JSON lines
    in each of ``rounds`` rounds: ``vs_parse_only`` (default window ÷ parse, medians) and ``held_cost`` (the
    default's spans/s ÷ the small window's: ~1.0 when a peer trace's cost does not grow with the traces of ours
    held; each peer trace folded walked every held trace of ours before issue 40's nineteenth round)."""
    from otel_agents.cli import build_parser

    ours = [s for s in trace_set(spans // 2) if s.parent is not None]  # no root: held until idle
    peers = dict(_foreign_copies(spans - len(ours)))["otel_genai_openai_v2"]
    step = max(1, len(peers) // max(1, len(ours)))
    data = [s for i, o in enumerate(ours) for s in (o, *peers[i * step:(i + 1) * step])]
    data += peers[len(ours) * step:]
    with tempfile.TemporaryDirectory(prefix="otel-agents-bench-") as tmp:
        path, target = os.path.join(tmp, "traces.jsonl"), os.path.join(tmp, "envelopes.jsonl")
        _store(data, path)
        default, small, parses = [], [], []
        arguments = build_parser("fold").parse_args(["fold", path, "-o", target])
        idle_64 = build_parser("fold").parse_args(["fold", path, "-o", target, "--idle-spans", "64"])
        for _ in range(rounds):
            parses.append(_parse_only_seconds(path))
            default.append(_fold_seconds(arguments))
            small.append(_fold_seconds(idle_64))

    def median(xs: list[float]) -> float:
        return sorted(xs)[len(xs) // 2]

    return {"spans": len(data), "ours": len(ours), "peers": len(peers), "rounds": rounds,
            "spans_per_s": round(len(data) / median(default)),
            "spans_per_s_idle_64": round(len(data) / median(small)),
            "vs_parse_only": rounded(bootstrap_ratio(default, parses), 2),
            "held_cost": round(median(small) / median(default), 2)}


def _rss_mib() -> float:
    try:
        with open("/proc/self/statm", encoding="ascii") as f:
            pages = int(f.read().split()[1])
        return pages * os.sysconf("SC_PAGE_SIZE") / 2**20
    except (OSError, ValueError):  # not Linux: the peak RSS is the best we have
        import resource

        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def processor_memory(total_spans: int, samples: int = 20) -> dict[str, Any]:
    from otel_agents.exporters.ecp import ECPFoldingProcessor

    envelopes = 0

    def count(_envelope: dict[str, Any]) -> None:
        nonlocal envelopes
        envelopes += 1

    processor = ECPFoldingProcessor(on_envelope=count)
    provider = TracerProvider()
    provider.add_span_processor(processor)
    tracer = provider.get_tracer("benchmarks.memory")
    plan = attributes_of(template_run())
    runs = max(1, total_spans // len(plan))
    every = max(1, runs // samples)
    sdk_only = _sdk_only_spans_per_s(plan, min(runs, max(1, 60_000 // len(plan))))
    points: list[dict[str, Any]] = []
    t0 = time.process_time()
    for i in range(runs):
        _replay(tracer, plan)
        if (i + 1) % every == 0 or i + 1 == runs:
            gc.collect()
            points.append({"spans": (i + 1) * len(plan), "rss_mib": round(_rss_mib(), 2),
                           "open_runs": processor.open_runs, "tracked_spans": processor.tracked_spans})
    elapsed = time.process_time() - t0
    provider.shutdown()
    warm = next((p for p in points if p["spans"] >= 0.1 * runs * len(plan)), points[0])
    growth = points[-1]["rss_mib"] - warm["rss_mib"]
    per_span = elapsed / (runs * len(plan))
    return {"spans": runs * len(plan), "runs": runs, "envelopes": envelopes, "seconds": round(elapsed, 1),
            "spans_per_s": round(runs * len(plan) / elapsed), "sdk_only_spans_per_s": round(sdk_only),
            "processor_us_per_span": round((per_span - 1 / sdk_only) * 1e6, 1),
            "rss_after_warmup_mib": warm["rss_mib"],
            "rss_end_mib": points[-1]["rss_mib"], "rss_growth_mib": round(growth, 2),
            "tolerance_mib": FLAT_TOLERANCE_MIB, "dropped": dict(processor.dropped),
            "flat": growth <= FLAT_TOLERANCE_MIB and points[-1]["open_runs"] == 0
            and points[-1]["tracked_spans"] == 0 and envelopes == runs,
            "samples": points}


def _sdk_only_spans_per_s(plan: list[tuple[str, Any, dict[str, Any], int | None]], runs: int) -> float:
    """The floor of the live target: the same replay through a ``TracerProvider`` with no processor
    (the SDK's own cost of starting and ending these spans with these attributes), best of 3."""
    tracer = TracerProvider().get_tracer("benchmarks.sdk_only")
    best = float("inf")
    for _ in range(3):
        gc.collect()
        t0 = time.process_time()
        for _ in range(runs):
            _replay(tracer, plan)
        best = min(best, time.process_time() - t0)
    return runs * len(plan) / best


def _replay(tracer: Any, plan: list[tuple[str, Any, dict[str, Any], int | None]]) -> None:
    """Start the plan's spans parents first, end them children first (a run of nested calls)."""
    opened: list[Any] = []
    for name, kind, attributes, parent in plan:
        ctx = trace.set_span_in_context(opened[parent]) if parent is not None else None
        opened.append(tracer.start_span(name, context=ctx, kind=kind, attributes=attributes))
    for span in reversed(opened):
        span.end()


def file_throughput(spans: int) -> dict[str, Any]:
    from otel_agents.exporters.file import OTLPJsonFileExporter

    data = trace_set(spans)
    batches = [data[i:i + FILE_BATCH] for i in range(0, len(data), FILE_BATCH)]
    with tempfile.TemporaryDirectory(prefix="otel-agents-bench-") as tmp:
        path = os.path.join(tmp, "traces.jsonl")
        exporter = OTLPJsonFileExporter(path)
        gc.collect()
        t0 = time.process_time()
        for batch in batches:
            exporter.export(batch)
        exporter.shutdown()
        elapsed = time.process_time() - t0
        size = os.path.getsize(path)
    return {"spans": len(data), "batch": FILE_BATCH, "seconds": round(elapsed, 3),
            "spans_per_s": round(len(data) / elapsed), "mib_per_s": round(size / 2**20 / elapsed, 2),
            "bytes_per_span": round(size / len(data)),
            "versions": versions("opentelemetry-exporter-otlp-proto-common", "protobuf")}


def stream_fold_throughput(spans: int, rounds: int = 5) -> dict[str, Any]:
    """``otel-agents fold`` end to end, in this process: read + decode + fold + encode + write; and,
    alternating with it in each of ``rounds`` rounds, merely parsing the same file's JSON lines (the
    target's floor, :func:`_parse_only_seconds`). The ratio is of the medians, with its 95% bootstrap
    interval over rounds. ``parse_with_gc_s``/``vs_parse_with_gc`` keep the floor as measured up to the
    sixth round of issue 40 (automatic collection on), for comparison only."""
    from otel_agents.cli import build_parser

    data = trace_set(spans)
    with tempfile.TemporaryDirectory(prefix="otel-agents-bench-") as tmp:
        path, out = os.path.join(tmp, "traces.jsonl"), os.path.join(tmp, "envelopes.jsonl")
        _store(data, path)
        size = os.path.getsize(path)
        del data
        gc.collect()
        # The CLI's own parser, so every option has its default (a hand-built Namespace broke when
        # `fold` gained --idle-spans).
        args = build_parser("fold").parse_args(["fold", path, "-o", out])
        parses, parses_with_gc, folds = [], [], []
        for _ in range(rounds):
            parses.append(_parse_only_seconds(path))
            parses_with_gc.append(_parse_only_seconds(path, collect=True))
            folds.append(_fold_seconds(args))
        with open(out, encoding="utf-8") as f:
            envelopes = sum(1 for _ in f)
    elapsed = sorted(folds)[len(folds) // 2]
    interval = bootstrap_ratio(folds, parses)
    throughput = {"ratio": round(spans / elapsed), "low": round(spans / max(folds)), "high": round(spans / min(folds))}
    return {"spans": spans, "runs": envelopes, "rounds": rounds, "seconds": round(elapsed, 3),
            "spans_per_s": round(spans / elapsed), "mib_per_s": round(size / 2**20 / elapsed, 2),
            "parse_only_s": round(sorted(parses)[len(parses) // 2], 3), "vs_parse_only": rounded(interval, 2),
            "parse_with_gc_s": round(sorted(parses_with_gc)[len(parses_with_gc) // 2], 3),
            "vs_parse_with_gc": rounded(bootstrap_ratio(folds, parses_with_gc), 2),
            "target": {"target": STREAM_TARGET, **rounded(interval, 2), "verdict": verdict(interval, STREAM_TARGET)},
            "proposed_target": {"target": STREAM_PROPOSED, **throughput,
                                "verdict": verdict(throughput, STREAM_PROPOSED, at_least=True)},
            "versions": versions("orjson")}


def _parse_only_seconds(path: str, collect: bool = False) -> float:
    """The floor of the streaming target: merely reading and parsing the file's JSON lines
    (``orjson.loads`` per line, nothing built from the result), one pass, with the collector's
    automatic passes off as ``otel-agents fold`` has them while it reads. With them on
    (``collect``, the floor up to issue 40's sixth round) each 512-span line's objects, alive until
    the line is parsed, set off full collections (~14 per 30,000 spans) that traverse this whole
    process — the benchmark's imported modules, ~58,000 objects, ~20 ms each — which was ~65% of
    that floor's time, varied with what the harness had imported and, being cache misses, with
    the machine's load; not parsing."""
    import orjson

    gc.collect()
    enabled = gc.isenabled()
    if not collect:
        gc.disable()
    try:
        t0 = time.process_time()
        with open(path, "rb") as f:
            for line in f:
                orjson.loads(line)
        return time.process_time() - t0
    finally:
        if enabled:
            gc.enable()


def processor_overhead(rounds: int, runs: int) -> dict[str, Any]:
    """``ECPFoldingProcessor``'s own cost against the SDK's, interleaved in one process: each round
    replays ``runs`` copies of the template run (6 spans, the span layer's attributes) through a
    ``TracerProvider`` with no processor (the SDK alone) and through one with the processor (folding
    every run as it ends; envelopes counted and dropped), in a shuffled order. The target is on
    (SDK + processor) ÷ SDK alone: ratio of the medians, 95% bootstrap interval over rounds."""
    import random

    from otel_agents.exporters.ecp import ECPFoldingProcessor

    plan = attributes_of(template_run())
    envelopes = 0

    def count(_envelope: dict[str, Any]) -> None:
        nonlocal envelopes
        envelopes += 1

    with_processor = TracerProvider()
    with_processor.add_span_processor(ECPFoldingProcessor(on_envelope=count))
    tracers = {"sdk": TracerProvider().get_tracer("benchmarks.sdk_only"),
               "sdk_processor": with_processor.get_tracer("benchmarks.processor")}
    seconds: dict[str, list[float]] = {name: [] for name in tracers}
    rng = random.Random(3)
    order = list(tracers)
    for name in order:  # warm-up
        for _ in range(min(runs, 50)):
            _replay(tracers[name], plan)
    for _ in range(rounds):
        rng.shuffle(order)
        for name in order:
            gc.collect()
            t0 = time.process_time()
            for _ in range(runs):
                _replay(tracers[name], plan)
            seconds[name].append((time.process_time() - t0) / (runs * len(plan)))
    with_processor.shutdown()
    interval = bootstrap_ratio(seconds["sdk_processor"], seconds["sdk"])
    sdk = sorted(seconds["sdk"])[rounds // 2]
    both = sorted(seconds["sdk_processor"])[rounds // 2]
    return {"rounds": rounds, "runs_per_round": runs, "spans_per_run": len(plan), "envelopes": envelopes,
            "sdk_us_per_span": round(sdk * 1e6, 2), "sdk_processor_us_per_span": round(both * 1e6, 2),
            "processor_us_per_span": round((both - sdk) * 1e6, 2),
            "sdk_spans_per_s": round(1 / sdk), "sdk_processor_spans_per_s": round(1 / both),
            "vs_sdk": rounded(interval, 2),
            "target": {"target": PROCESSOR_TARGET, **rounded(interval, 2),
                       "verdict": verdict(interval, PROCESSOR_TARGET)},
            "proposed_target": {"target": PROCESSOR_PROPOSED, **rounded(interval, 2),
                                "verdict": verdict(interval, PROCESSOR_PROPOSED)}}
