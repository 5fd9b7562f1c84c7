"""The README's results table, rebuilt from ``benchmarks/results/*.json``."""

from __future__ import annotations

import glob
import json
import os
from typing import Any

_LABELS = {
    "dispatch": "framework dispatch only (no-op handler)",
    "ours": "**otel-agents**",
    "ours_no_content": "otel-agents, content capture off",
    "ours_suppressed": "otel-agents, suppressed",
    "native": "framework's native instrumentation",
    "openinference": "OpenInference",
    "openllmetry": "OpenLLMetry",
}


_ORDER = ("langchain", "pydantic_ai", "llama_index", "crewai")  # the order of the README's sections


def _load(results: str) -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted(glob.glob(os.path.join(results, "*.json"))):
        with open(path, encoding="utf-8") as f:
            out[os.path.basename(path)[:-5]] = json.load(f)
    return out


def _yes(flag: bool | None) -> str:
    if flag is None:
        return "not resolved (below this machine's noise)"
    return "met" if flag else "**missed**"


def table(results: str) -> str:
    """Markdown for every result file in ``results``."""
    data = _load(results)
    if not data:
        return "_No results yet: run `make bench`._"
    first = next(iter(data.values()))
    m = first["machine"]
    dates = sorted({r["date"] for r in data.values()})
    when = dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"
    lines = [f"Run {when} on {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}, "
             f"{m['implementation']} {m['python']}" + (" — **quick run: the numbers mean nothing**"
                                                       if first.get("quick") else "") + ".", ""]
    targets: list[tuple[str, str, str]] = []
    overheads = [(n, r) for n, r in data.items() if n.startswith("overhead-")]
    overheads.sort(key=lambda item: (_ORDER.index(item[1]["framework"]) if item[1]["framework"] in _ORDER
                                     else len(_ORDER), item[0]))
    for name, r in overheads:
        if "skipped_framework" in r:
            lines += [f"### Overhead: {r['framework']}", "", f"{r['workload']} Skipped: {r['skipped_framework']}.", ""]
            continue
        v = r["variants"]
        versions = ", ".join(f"{k} {x}" for k, x in r["versions"].items() if x)
        lines += [f"### Overhead: {r['framework']}", "",
                  f"{r['workload']} Baseline run {r['baseline_run_us']:.0f} µs; bare SDK span (floor) "
                  f"{r['floor_span_us']:.1f} µs; the SDK alone making our spans ({r['attributes_per_span']:g} "
                  f"attributes each, median) {r['attribute_floor_span_us']:.1f} µs per span. "
                  f"{r['rounds']} rounds × {r['runs_per_batch']} runs. {versions}.", "",
                  "| variant | spans/run | overhead/run µs | overhead/span µs | × floor | ours ÷ it (span) "
                  "| ours ÷ it (run) | paired/run µs [IQR] |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for key, label in _LABELS.items():
            if key not in v:
                continue
            x = v[key]
            ratio_span = f"{x['ours_per_span_ratio']:.2f}" if "ours_per_span_ratio" in x else ""
            ratio_run = f"{x['ours_per_run_ratio']:.2f}" if "ours_per_run_ratio" in x else ""
            q1, q3 = x["overhead_per_run_paired_iqr_us"]
            lines.append(f"| {label} | {x['spans_per_run']:g} | {x['overhead_per_run_us']:.0f} | "
                         f"{x['overhead_per_span_us']:.0f} | {x['per_span_vs_floor']:.1f} | {ratio_span} | {ratio_run} | "
                         f"{x['overhead_per_run_paired_us']:.0f} [{q1:.0f}, {q3:.0f}] |")
        for label, why in r.get("skipped", {}).items():
            lines.append(f"| {_LABELS.get(label, label)} | skipped: {why} | | | | | | |")
        lines.append("")
        targets.append((f"{r['framework']}: ours per span ≤ 2× bare SDK span",
                        f"{v['ours']['per_span_vs_floor']:.1f}× (content off {v['ours_no_content']['per_span_vs_floor']:.1f}×; "
                        f"{v['ours']['per_span_vs_attribute_floor']:.1f}× the SDK alone making our spans)",
                        _yes(r["targets"]["ours_per_span_le_2x_floor"])))
        if "openinference" in v:
            targets.append((f"{r['framework']}: ours per span ≤ 1/5 of OpenInference's",
                            f"{v['openinference']['ours_per_span_ratio']:.2f}",
                            _yes(r["targets"]["ours_per_span_le_fifth_of_openinference"])))
    if "spans" in data:
        r = data["spans"]
        lines += ["### The span layer alone (no framework)", "",
                  f"One semantic span of each shape, opened, filled and ended; bare SDK span (floor) "
                  f"{r['floor_span_us']:.1f} µs. {r['rounds']} rounds.", "",
                  "| shape | µs per span | × floor |", "|---|---:|---:|"]
        lines += [f"| {_shape_label(name)} | {x['span_us']:.0f} | {x['vs_floor']:.1f} |"
                  for name, x in r["shapes"].items()]
        lines.append("")
    lines += ["### Exporters", "", "| what | result |", "|---|---|"]
    if "fold" in data:
        r = data["fold"]
        lines.append(f"| ECP `fold()` | {r['spans_per_s']:,} spans/s ({r['spans']:,} spans, {r['runs']:,} runs) |")
        for peer, x in r.get("foreign", {}).items():
            lines.append(f"| ECP `fold()` of a peer's trace: `{peer}` | {x['spans_per_s']:,} spans/s "
                         f"({x['spans']:,} spans, {x['runs']:,} runs) |")
        targets.append(("ECP fold ≥ 100,000 spans/s", f"{r['spans_per_s']:,}", _yes(r["target_met"])))
    if "memory" in data:
        r = data["memory"]
        lines.append(f"| `ECPFoldingProcessor` over {r['spans']:,} spans | RSS {r['rss_after_warmup_mib']} MiB after "
                     f"warm-up → {r['rss_end_mib']} MiB at the end ({r['rss_growth_mib']:+} MiB); "
                     f"{r['envelopes']:,} envelopes; {r['spans_per_s']:,} spans/s through SDK + processor"
                     + (f" (the SDK alone, no processor: {r['sdk_only_spans_per_s']:,} spans/s; the processor's "
                        f"own cost {r['processor_us_per_span']} µs per span)" if "sdk_only_spans_per_s" in r else "")
                     + " |")
        if "sdk_only_spans_per_s" in r:
            targets.append(("`ECPFoldingProcessor` behind a real `TracerProvider` ≥ 40,000 spans/s",
                            f"{r['spans_per_s']:,} (the SDK alone: {r['sdk_only_spans_per_s']:,})",
                            _yes(r["target_met"])))
        targets.append(("flat memory over the stream", f"{r['rss_growth_mib']:+} MiB", _yes(r["flat"])))
    if "file" in data:
        r = data["file"]
        lines.append(f"| `OTLPJsonFileExporter` | {r['spans_per_s']:,} spans/s, {r['mib_per_s']} MiB/s, "
                     f"{r['bytes_per_span']} bytes/span (batches of {r['batch']}) |")
    if "stream" in data:
        r = data["stream"]
        lines.append(f"| `otel-agents fold` (streaming, file → envelopes) | {r['spans_per_s']:,} spans/s, "
                     f"{r['mib_per_s']} MiB/s of OTLP/JSON ({r['spans']:,} spans, {r['runs']:,} runs)"
                     + (f"; {r['vs_parse_only']}× the time of parsing its JSON lines" if "vs_parse_only" in r else "")
                     + " |")
        if "vs_parse_only" in r:
            targets.append(("`otel-agents fold FILE` ≤ 3× parsing the file's JSON lines",
                            f"{r['vs_parse_only']}× ({r['spans_per_s']:,} spans/s)", _yes(r["target_met"])))
    if "collect" in data:
        r = data["collect"]
        lines.append(f"| `otel-agents ecp collect` (one process, OTLP/HTTP protobuf in batches of {r['batch']} "
                     f"→ envelopes) | {r['spans_per_s']:,} spans/s of its CPU ({r['spans']:,} spans, "
                     f"{r['envelopes']:,} envelopes); the in-process `ECPFoldingProcessor`: "
                     f"{r['processor_spans_per_s']:,} spans/s, so {r['vs_processor']}× its cost per span |")
        lines.append(f"| `otel-agents ecp collect` memory under the stream | RSS {r['rss_after_warmup_mib']} MiB after "
                     f"warm-up → {r['rss_end_mib']} MiB at the end ({r['rss_growth_mib']:+} MiB) |")
        targets.append(("`ecp collect`: flat memory over the stream", f"{r['rss_growth_mib']:+} MiB", _yes(r["flat"])))
    lines += ["", "### Targets", "", "| target | measured | |", "|---|---:|---|"]
    lines += [f"| {t} | {value} | {ok} |" for t, value, ok in targets]
    return "\n".join(lines)


_SHAPES = {"chain": "chain (input, output)", "tool": "tool (identity, arguments, result)",
           "model": "model (2 input messages, 1 output, usage)",
           "model_long": "model (21-message conversation, ~11,000 characters)"}


def _shape_label(name: str) -> str:
    base = name.removesuffix("_no_content")
    return _SHAPES.get(base, base) + (", content off" if base != name else "")


def rewrite_readme(readme: str, results: str, start: str, end: str) -> None:
    """Replace the text between ``start`` and ``end`` in ``readme`` with :func:`table`."""
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    head, sep, rest = text.partition(start)
    _, sep2, tail = rest.partition(end)
    if not sep or not sep2:
        raise SystemExit(f"{readme} lacks the {start} … {end} markers")
    with open(readme, "w", encoding="utf-8") as f:
        f.write(f"{head}{start}\n{table(results)}\n{end}{tail}")
