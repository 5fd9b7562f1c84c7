"""The README's results tables, rebuilt from ``benchmarks/results/*.json``: one table per framework,
CPU instructions per run (``instructions.json``, when present), the span layer, the exporters, the targets
(met / missed / not resolved; by the clock, and by instructions beside it), the per-run comparisons with
peers factored with the measured reason of each missed one (``decomposition.py``) and the overhead study."""

from __future__ import annotations

import glob
import json
import os
from typing import Any

from .decomposition import RATIO_OF, comparisons, reason

_LABELS = {
    "dispatch": "framework dispatch only (no-op handler)",
    "ours": "**otel-agents**",
    "ours_no_content": "otel-agents, content capture off",
    "ours_one_vocabulary": "otel-agents, one vocabulary (`OTEL_AGENTS_VOCABULARIES=gen_ai`)",
    "ours_suppressed": "otel-agents, suppressed",
    "native": "framework's native instrumentation",
    "openinference": "OpenInference",
    "openllmetry": "OpenLLMetry",
    "otel_genai": "OTel GenAI (opentelemetry-python-genai)",
}
_PEERS = ("native", "openinference", "openllmetry", "otel_genai")

# the order of the README's sections
_ORDER = ("langchain", "pydantic_ai", "llama_index", "crewai", "smolagents", "openai_agents", "agno",
          "autogen_agentchat", "google_adk", "anthropic", "openai", "mcp", "a2a")

# The overhead study's latency model (benchmarks/README.md, "Overhead study"): a hosted chat model's
# call takes a time to first token plus a decode time per output token; the tools are the fakes'.
FIRST_TOKEN_S = 0.5
PER_OUTPUT_TOKEN_S = 0.01  # 100 tokens/s
# The price of the CPU our instrumentation and the fold use: an on-demand general-purpose cloud vCPU.
VCPU_HOUR_USD = 0.04
STUDY_MODEL = ("openai", "gpt-4o-mini")  # the model the run's tokens are priced at (genai-prices)


def _load(results: str) -> dict[str, dict[str, Any]]:
    out = {}
    for path in sorted(glob.glob(os.path.join(results, "*.json"))):
        with open(path, encoding="utf-8") as f:
            out[os.path.basename(path)[:-5]] = json.load(f)
    return out


def _verdict(v: str | None) -> str:
    return {"met": "met", "missed": "**missed**"}.get(v or "", "not resolved (interval straddles the target)")


def _ci(x: dict[str, Any] | None, digits: int = 2) -> str:
    """``ratio [low, high]`` (``∞`` for an unbounded end)."""
    if not x:
        return ""

    def f(v: float | None) -> str:
        return "∞" if v is None else f"{v:,.{digits}f}"

    if x["ratio"] is not None and x["ratio"] != x.get("target") and f(x["ratio"]) == f(x.get("target")):
        return _ci(x, digits + 1)  # 1.004 (or 0.503 against 0.5) is not "1.00, missed": one more digit
    if x.get("exact"):  # bytes: the same in every capture, no interval
        return f"{f(x['ratio'])} (exact)"
    return f"{f(x['ratio'])} [{f(x['low'])}, {f(x['high'])}]"


def table(results: str) -> str:
    """Markdown for every result file in ``results``."""
    data = _load(results)
    if not data:
        return "_No results yet: run `make bench`._"
    first = next(iter(data.values()))
    m = first["machine"]
    # when and on which commit each part ran: the clock's results, and each framework's instruction count
    clock = [r for name, r in data.items() if name != "instructions"]
    when = _when(clock)
    if "instructions" in data:
        counted = f"CPU instructions (callgrind) counted {counted_when(data['instructions'])}"
        when = f"Timed by the clock {when}; {counted}" if clock else counted
    else:
        when = f"Run {when}"
    lines = [f"{when}; on {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}, "
             f"{m['implementation']} {m['python']}" + (" — **quick run: the numbers mean nothing**"
                                                       if first.get("quick") else "") + ". "
             "Overheads are medians over rounds of the same-round difference to the uninstrumented run; "
             "every ratio is the ratio of those medians with its 95% bootstrap interval over rounds in brackets.",
             ""]
    targets: list[tuple[str, str, str]] = []
    proposed: list[tuple[str, str, str]] = []
    overheads = [(n, r) for n, r in data.items() if n.startswith("overhead-")]
    overheads.sort(key=lambda item: (_ORDER.index(item[1]["framework"]) if item[1]["framework"] in _ORDER
                                     else len(_ORDER), item[0]))
    summary: list[str] = []
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
                  "| variant | spans/run | overhead/run µs [IQR] | overhead/span µs | × floor | ours ÷ it, per run "
                  "| ours ÷ it, per span |",
                  "|---|---:|---:|---:|---:|---:|---:|"]
        for key, label in _LABELS.items():
            if key not in v:
                continue
            x = v[key]
            if x.get("records_content") is False:
                label += " — records no content by default"
            q1, q3 = x["overhead_per_run_iqr_us"]
            lines.append(f"| {label} | {x['spans_per_run']:g} | {x['overhead_per_run_us']:.0f} [{q1:.0f}, {q3:.0f}] | "
                         f"{x['overhead_per_span_us']:.0f} | {x['per_span_vs_floor']:.1f} | "
                         f"{_ci(x.get('ours_per_run_ratio'))} | {_ci(x.get('ours_per_span_ratio'))} |")
        for label, why in r.get("skipped", {}).items():
            lines.append(f"| {_LABELS.get(label, label)} | skipped: {why} | | | | | |")
        lines.append("")
        lines += _bytes_table(r.get("exported_bytes"))
        fw = r["framework"]
        peers = ", ".join(f"{_LABELS[k].split(' (')[0]} {_ci(v[k]['ours_per_run_ratio'])}"
                          + (f" (no content by default; ours with content off ÷ it "
                             f"{_ci(v[k]['ours_no_content_per_run_ratio'])})"
                             if "ours_no_content_per_run_ratio" in v[k] else "")
                          for k in _PEERS if k in v and "ours_per_run_ratio" in v[k])
        summary.append(f"| {fw} | {v['ours']['spans_per_run']:g} | {v['ours']['overhead_per_run_us']:.0f} | {peers or '—'} |")
        for key, t in r.get("targets", {}).items():
            targets.append((_target_label(fw, key, t), _ci(t), _verdict(t.get("verdict"))))
        for key, t in r.get("proposed_targets", {}).items():
            others = "".join(f"; `{name}` alone {ratio:.2f}" for name, ratio in t.get("others", {}).items())
            proposed.append((_proposed_label(fw, key, t), _ci(t) + others, _verdict(t.get("verdict"))))
    if summary:
        lines[2:2] = ["### Per run, ours ÷ each peer (the headline)", "",
                      "| framework | our spans/run | our overhead/run µs | ours ÷ peer per run [95% CI] |",
                      "|---|---:|---:|---|", *summary, ""]
    if "instructions" in data:
        lines += instructions_table(data["instructions"])
    if "spans" in data:
        r = data["spans"]
        lines += ["### The span layer alone (no framework)", "",
                  f"One semantic span of each shape, opened, filled and ended; bare SDK span (floor) "
                  f"{r['floor_span_us']:.1f} µs (median). {r['rounds']} rounds.", "",
                  "| shape | µs per span | × floor [95% CI] | attributes | the SDK alone making it, µs "
                  "| × the SDK alone [95% CI] |", "|---|---:|---:|---:|---:|---:|"]
        lines += [f"| {_shape_label(name)} | {x['span_us']:.0f} | {_ci(x['vs_floor'])} | {x.get('attributes', '')} | "
                  f"{format(x['sdk_same_attributes_us'], '.0f') if 'sdk_same_attributes_us' in x else ''} | {_ci(x.get('vs_sdk_same_attributes'))} |"
                  for name, x in r["shapes"].items()]
        lines.append("")
        for key, t in r.get("targets", {}).items():
            shape = key.split("_le_")[0]
            targets.append((f"span layer: {_shape_label(shape)} ≤ {t['target']:g}× the bare-span floor", _ci(t),
                            _verdict(t.get("verdict"))))
        for key, t in r.get("proposed_targets", {}).items():
            proposed.append((f"span layer: {_shape_label(key.split('_le_')[0])} ≤ {t['target']:g}× the SDK alone "
                             "making the same span", _ci(t), _verdict(t.get("verdict"))))
    lines += ["### Exporters", "", "| what | result |", "|---|---|"]
    if "fold" in data:
        r = data["fold"]
        lines.append(f"| ECP `fold()` | {r['spans_per_s']:,} spans/s, best of {r['repeats']} "
                     f"(all: {', '.join(f'{x:,}' for x in r['spans_per_s_repeats'])}; {r['spans']:,} spans, "
                     f"{r['runs']:,} runs) |")
        for peer, x in r.get("foreign", {}).items():
            lines.append(f"| ECP `fold()` of a peer's trace: `{peer}` | {x['spans_per_s']:,} spans/s "
                         f"({x['spans']:,} spans, {x['runs']:,} runs) |")
        t = r["target"]
        targets.append((f"ECP `fold()` ≥ {t['target']:,.0f} spans/s (`logs` as today)",
                        f"{t['ratio']:,.0f} [slowest {t['low']:,.0f}, fastest {t['high']:,.0f}]",
                        _verdict(t.get("verdict"))))
    if "processor" in data:
        r = data["processor"]
        lines.append(f"| `ECPFoldingProcessor` behind a real `TracerProvider` (interleaved, {r['rounds']} rounds × "
                     f"{r['runs_per_round']} runs) | SDK alone {r['sdk_us_per_span']} µs/span "
                     f"({r['sdk_spans_per_s']:,} spans/s); SDK + processor {r['sdk_processor_us_per_span']} µs/span "
                     f"({r['sdk_processor_spans_per_s']:,} spans/s); the processor's own cost "
                     f"{r['processor_us_per_span']} µs/span |")
        t = r["target"]
        targets.append(("`ECPFoldingProcessor`: SDK + processor ≤ 2× the SDK alone", _ci(t), _verdict(t.get("verdict"))))
        if "proposed_target" in r:
            t = r["proposed_target"]
            proposed.append((f"`ECPFoldingProcessor`: SDK + processor ≤ {t['target']:g}× the SDK alone", _ci(t),
                             _verdict(t.get("verdict"))))
    if "memory" in data:
        r = data["memory"]
        lines.append(f"| `ECPFoldingProcessor` over {r['spans']:,} spans | RSS {r['rss_after_warmup_mib']} MiB after "
                     f"warm-up → {r['rss_end_mib']} MiB at the end ({r['rss_growth_mib']:+} MiB); "
                     f"{r['envelopes']:,} envelopes; {r['spans_per_s']:,} spans/s through SDK + processor |")
        targets.append(("`ECPFoldingProcessor`: flat memory over the stream", f"{r['rss_growth_mib']:+} MiB",
                        "met" if r["flat"] else "**missed**"))
    if "file" in data:
        r = data["file"]
        lines.append(f"| `OTLPJsonFileExporter` | {r['spans_per_s']:,} spans/s, {r['mib_per_s']} MiB/s, "
                     f"{r['bytes_per_span']} bytes/span (batches of {r['batch']}) |")
    if "stream" in data:
        r = data["stream"]
        lines.append(f"| `otel-agents fold` (streaming, file → envelopes) | {r['spans_per_s']:,} spans/s, "
                     f"{r['mib_per_s']} MiB/s of OTLP/JSON ({r['spans']:,} spans, {r['runs']:,} runs); "
                     f"{_ci(r['vs_parse_only'])}× the time of parsing its JSON lines ({r['rounds']} rounds)"
                     + (f"; {_ci(r['vs_parse_with_gc'])}× parsing with automatic garbage collection on (the floor "
                        "up to issue 40's sixth round)" if "vs_parse_with_gc" in r else "") + " |")
        if "held" in r:
            h = r["held"]
            lines.append(f"| `otel-agents fold`, peers' traces folded while traces of ours wait out the idle window "
                         f"({h['spans']:,} spans, {h['ours']:,} of ours) | {h['spans_per_s']:,} spans/s, "
                         f"{_ci(h['vs_parse_only'])}× parsing; "
                         f"held_cost {h['held_cost']} (default window ÷ `--idle-spans 64`: ~1.0 when a peer's "
                         "trace costs the same however many traces of ours are held) |")
        t = r["target"]
        targets.append(("`otel-agents fold FILE` ≤ 3× parsing the file's JSON lines", _ci(t), _verdict(t.get("verdict"))))
        if "proposed_target" in r:
            t = r["proposed_target"]
            proposed.append((f"`otel-agents fold FILE` ≥ {t['target']:,.0f} spans/s (streaming, file → envelopes)",
                             f"{t['ratio']:,.0f} [slowest round {t['low']:,.0f}, fastest {t['high']:,.0f}]",
                             _verdict(t.get("verdict"))))
    if "collect" in data:
        r = data["collect"]
        lines.append(f"| `otel-agents ecp collect` (one process, OTLP/HTTP protobuf in batches of {r['batch']} "
                     f"→ envelopes) | {r['spans_per_s']:,} spans/s of its CPU ({r['spans']:,} spans, "
                     f"{r['envelopes']:,} envelopes); the in-process `ECPFoldingProcessor`: "
                     f"{r['processor_spans_per_s']:,} spans/s, so {r['vs_processor']}× its cost per span |")
        lines.append(f"| `otel-agents ecp collect` memory under the stream | RSS {r['rss_after_warmup_mib']} MiB after "
                     f"warm-up → {r['rss_end_mib']} MiB at the end ({r['rss_growth_mib']:+} MiB) |")
        targets.append(("`ecp collect`: flat memory over the stream", f"{r['rss_growth_mib']:+} MiB",
                        "met" if r["flat"] else "**missed**"))
    # the same targets judged by CPU instructions (the instructions group), beside the clock's
    counted = {_target_label(fw, key, t): (_ci(t), _verdict(t.get("verdict")))
               for fw, r in data.get("instructions", {}).get("frameworks", {}).items()
               for key, t in r.get("targets", {}).items()}
    lines += ["", "### Targets", "",
              "Met: the whole 95% interval is on the target's side; missed: the whole interval is beyond it; "
              "not resolved: the interval straddles it."
              + (" By CPU instructions (callgrind, the section above): the median of the repeats, in brackets the "
                 "lowest and highest; met when every repeat is on the target's side, missed when every one is "
                 "beyond it. " + counted_totals(data["instructions"]["frameworks"]) if counted else ""), "",
              *(["| target | by the clock: measured [95% CI] | | by CPU instructions [lowest, highest repeat] | |",
                 "|---|---:|---|---:|---|"] if counted else ["| target | measured [95% CI] | |", "|---|---:|---|"])]
    if counted:
        lines += [f"| {t} | {value} | {ok} | {' | '.join(counted.pop(t, ('', '')))} |" for t, value, ok in targets]
        lines += [f"| {t} | not timed in this run | | {value} | {ok} |" for t, (value, ok) in counted.items()]
    else:
        lines += [f"| {t} | {value} | {ok} |" for t, value, ok in targets]
    if proposed:
        lines += ["", "### Targets as proposed to restate them", "",
                  "Issue 40's targets as the sections \"Issue 40, third round\" and \"fourth round\" below propose to "
                  "restate them, with their measured reasons; checked the same way. The targets on exported bytes "
                  "(what a backend receives, stores and bills: the vocabulary switch's gain) are exact, so they carry "
                  "no interval.", "",
                  "| proposed target | measured [95% CI] | |", "|---|---:|---|"]
        lines += [f"| {t} | {value} | {ok} |" for t, value, ok in proposed]
    lines += decomposition_table([r for _, r in overheads], data.get("instructions", {}).get("frameworks", {}))
    study = study_table([r for _, r in overheads if "study" in r])
    if study:
        lines += ["", "### Overhead study: one customer-support run", "", *study]
    return "\n".join(lines)


def _when(results: list[dict[str, Any]]) -> str:
    """The span of the results' dates, and their commits (or that none was recorded)."""
    if not results:
        return ""
    dates = sorted({r["date"] for r in results})
    commits = sorted({r["commit"] for r in results if r.get("commit")})
    return ((dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}")
            + (f" on commit {', '.join(commits)}" if commits else " (commit not recorded)"))


def counted_when(r: dict[str, Any]) -> str:
    """When and on which commit an ``instructions.json``'s frameworks were counted (each merged framework's
    ``counted``, else the file's own date and commit): one clause per commit, naming its frameworks when there
    are several."""
    groups: dict[str | None, list[dict[str, Any]]] = {}
    for framework, x in sorted(r["frameworks"].items(), key=lambda item: _ORDER.index(item[0])
                               if item[0] in _ORDER else len(_ORDER)):
        counted = x.get("counted") or {"date": r["date"], "commit": r.get("commit")}
        groups.setdefault(counted.get("commit"), []).append({**counted, "framework": framework})
    return "; ".join(_when(items) + (f" ({', '.join(x['framework'] for x in items)})" if len(groups) > 1 else "")
                     for items in groups.values())


def counted_totals(frameworks: dict[str, Any]) -> str:
    """One sentence: the stated targets judged by instructions, how many met, missed and not resolved, and
    which frameworks' counts subtract the lower of two uninstrumented batches (the others: one batch, the
    harness before issue 40's twentieth round). ``frameworks``: ``instructions.json``'s ``frameworks``."""
    verdicts = [t.get("verdict") for x in frameworks.values() for t in x.get("targets", {}).values()]
    counted = sorted((fw for fw, x in frameworks.items() if "variants" in x),
                     key=lambda fw: _ORDER.index(fw) if fw in _ORDER else len(_ORDER))
    twice = [fw for fw in counted if "batches" in frameworks[fw]["variants"].get("none", {})]
    once = [fw for fw in counted if fw not in twice]
    baseline = ("every framework's count subtracts the lower of two uninstrumented batches" if not once else
                f"counts subtracting the lower of two uninstrumented batches: {', '.join(twice) or 'none'}; "
                f"counts with one: {', '.join(once)}")
    return (f"By instructions, the {len(verdicts)} stated targets: **{verdicts.count('met')} met, "
            f"{verdicts.count('missed')} missed, {verdicts.count(None)} not resolved** ({baseline}).")


def _target_label(framework: str, key: str, t: dict[str, Any]) -> str:
    if key == "ours_per_span_le_3x_attribute_floor":
        return f"{framework}: our code per span ≤ 3× the SDK alone making our spans"
    peer = key.rsplit("_vs_", 1)[1]
    who = ("ours, one vocabulary," if key.startswith("ours_one_vocabulary_") else
           "ours with content off," if key.startswith("ours_no_content_") else "ours")
    name = _LABELS.get(peer, peer).split(' (')[0]
    if key.startswith("ours_no_content_"):
        name += " (which records no content by default)"
    return f"{framework}: {who} per run ≤ {t['target']:g}× {name}"


def _proposed_label(framework: str, key: str, t: dict[str, Any]) -> str:
    if key.endswith("_per_span_le_3x_attribute_floor"):
        less = ", less the framework's dispatch to a do-nothing observer," if "_less_dispatch" in key else ""
        return f"{framework}: our code per span with content off{less} ≤ 3× the SDK alone making our spans"
    if key == "ours_one_vocabulary_vs_ours":
        return f"{framework}: ours, one vocabulary, per run ≤ {t['target']:g}× ours with all three"
    if key == "ours_one_vocabulary_bytes_vs_ours":
        return (f"{framework}: exported bytes per run, ours in one vocabulary (`{t['vocabulary']}`) ≤ "
                f"{t['target']:g}× ours with all three")
    if "_bytes_per_" in key:
        head, peer = key.rsplit("_vs_", 1)
        who, unit = head.split("_bytes_per_")
        vocabulary = who.removeprefix("ours_").removesuffix("_no_content")
        name = _LABELS.get(peer, peer).split(' (')[0]
        off = ", content off" if who.endswith("_no_content") else ""
        unit = "per span (ours makes over 1.5× its spans)" if unit == "span" else "per run"
        return (f"{framework}: exported bytes {unit}, ours in `{vocabulary}` alone{off}, ≤ {t['target']:g}× {name}"
                + (" (which records no content by default)" if off else ""))
    head, peer = key.rsplit("_vs_", 1)
    who = "ours with content off," if head.startswith("ours_no_content_") else "ours"
    unit = "per span (ours makes over 1.5× its spans)" if head.endswith("_per_span") else "per run"
    name = _LABELS.get(peer, peer).split(' (')[0]
    if head.startswith("ours_no_content_"):
        name += " (which records no content by default)"
    return f"{framework}: {who} {unit} ≤ {t['target']:g}× {name}"


def _bytes_label(name: str) -> str:
    if name in ("ours", "ours_no_content"):
        return _LABELS[name] + (", all three vocabularies" if name == "ours" else "")
    if name.startswith("ours_"):
        vocabulary = name.removeprefix("ours_").removesuffix("_no_content")
        return f"otel-agents, `{vocabulary}` alone" + (", content off" if name.endswith("_no_content") else "")
    return _LABELS.get(name, name)


def _bytes_table(wire: dict[str, Any] | None) -> list[str]:
    """The exported-bytes table of one framework's section (empty for a result without it)."""
    if not wire:
        return []
    exact = ("the same bytes in each of its " + str(wire["captures"]) + " captures: exact, no interval"
             if wire["deterministic"] else "**captures differed**: the largest is shown")
    lines = [f"Exported bytes of one run: each variant's spans as an OTLP protobuf `ExportTraceServiceRequest` "
             f"(the standard OTLP exporters' encoder; {exact}). Bytes per run = the run's `Span` messages, what each "
             f"run adds to an export batch (the resource and scope, sent once per batch, left out); the one-run "
             f"request includes them; gzip as `compression=gzip` sends it (it moves by a few bytes with the ids).",
             "", "| variant | spans/run | bytes/run | bytes/span | ÷ all three | one-run request, bytes | gzip |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for name, x in wire["variants"].items():
        label = _bytes_label(name)
        if "error" in x:
            lines.append(f"| {label} | capture failed: {x['error']} | | | | | |")
            continue
        if not x["spans"]:
            lines.append(f"| {label} | 0 | made no span of this run | | | | |")
            continue
        if x.get("records_content") is False:
            label += " — records no content by default"
        low, high = x["gzip_request_bytes"]
        lines.append(f"| {label} | {x['spans']} | {x['bytes_per_run']:,} | {x['bytes_per_span']:,.0f} | "
                     f"{format(x['vs_ours'], '.2f') if 'vs_ours' in x else ''} | {x['request_bytes']:,} | "
                     f"{low:,}{'' if low == high else f'–{high:,}'} |")
    return [*lines, ""]


def instructions_table(r: dict[str, Any]) -> list[str]:
    """The instructions group's section: per framework and variant, CPU instructions per run (callgrind) and
    ours ÷ each, with how far the repeats agree."""
    m = r["method"]
    spread = r.get("repeatability")
    if spread is None:
        agree = f"{m['repeats']} repeat: its repeatability was not measured."
    else:
        agree = (f"Over the {spread['repeats']} repeats the largest spread (highest − lowest ÷ median) of a variant's "
                 f"instructions over the uninstrumented run was {100 * spread['max_spread']:.2f}% ({spread['max_spread_of']}), of a "
                 f"target's ratio {100 * spread['max_ratio_spread']:.2f}% ({spread['max_ratio_spread_of']}); "
                 + ("every target's repeats fell on the same side of it: one pass gives the same verdicts."
                    if spread["verdicts_agree"] else "**some target's repeats straddle it**: one pass does not "
                    "suffice there."))
    more = ", ".join(f"{fw} {x['runs']}" for fw, x in r["frameworks"].items() if x.get("runs", m["runs"]) != m["runs"])
    twice = [fw for fw, x in r["frameworks"].items() if "batches" in x.get("variants", {}).get("none", {})]
    if twice:  # (a count of the harness before the twentieth round has one uninstrumented batch a process)
        agree += (" The uninstrumented run is counted before and after the other variants and the lower subtracted "
                  f"in the counts of {', '.join(twice)}" + (" (the others: one batch)." if len(twice) < len(
                      [x for x in r["frameworks"].values() if "variants" in x]) else "."))
    lines = ["### CPU instructions per run (callgrind)", "",
             f"`--only instructions`: each variant's runs counted by `{m['tool']}` with `PYTHONHASHSEED=0`, "
             f"{m['runs']}{f' (a workload that asks for more: {more})' if more else ''} runs after {m['warmup']} warm-up in one process per framework and repeat (start-up, "
             f"imports and warm-up not counted: see \"What is measured\"). Values are the median of "
             f"{m['repeats']} repeat(s), in brackets the lowest and highest. {agree}", "",
             "| framework | variant | spans/run | instructions/run | over the uninstrumented run "
             "| ours ÷ it, per run (for the floor: our code per span ÷ it) |", "|---|---|---:|---:|---:|---:|"]
    labels = {**_LABELS, "none": "uninstrumented", "attribute_floor": "the SDK alone making our spans"}
    for fw, x in sorted(r["frameworks"].items(), key=lambda item: _ORDER.index(item[0]) if item[0] in _ORDER
                        else len(_ORDER)):
        if "skipped_framework" in x:
            lines.append(f"| {fw} | skipped: {x['skipped_framework']} | | | | |")
            continue
        v = x["variants"]
        for key in ("none", *_LABELS, "attribute_floor"):
            if key not in v:
                continue
            y = v[key]
            label = labels[key] + (" — records no content by default" if y.get("records_content") is False else "")
            over = f"{y['overhead_per_run']:,}" if "overhead_per_run" in y else ""
            if over and len(y["overhead_repeats"]) > 1:
                over += f" [{min(y['overhead_repeats']):,}, {max(y['overhead_repeats']):,}]"
            ratio = _ci(v["ours"]["per_span_vs_attribute_floor"]) if key == "attribute_floor" else \
                _ci(y.get("ours_per_run_ratio"))
            if "ours_no_content_per_run_ratio" in y:
                ratio += f"; content off {_ci(y['ours_no_content_per_run_ratio'])}"
            lines.append(f"| {fw} | {label} | {y['spans_per_run']:g} | {y['instructions_per_run']:,} | {over} | "
                         f"{ratio} |")
        for key, why in x.get("skipped", {}).items():
            lines.append(f"| {fw} | {_LABELS.get(key, key)} | skipped: {why} | | | |")
    return [*lines, ""]


def _point(x: dict[str, Any] | None, digits: int = 2) -> str:
    """A ratio alone, or with its interval when it has a width (an interval of one repeat is no interval)."""
    if not x:
        return ""
    if x.get("low") == x.get("high") == x["ratio"]:
        return _ci(x, digits).split(" [")[0]
    return _ci(x, digits)


def _missed_targets(r: dict[str, Any], counted: dict[str, Any]) -> dict[tuple[str, str], list[tuple[str, float]]]:
    """Per (our variant, peer): the comparison targets (stated or proposed, per run or per span) missed by the
    clock or by instructions, each as its text and bound."""
    out: dict[tuple[str, str], list[tuple[str, float]]] = {}
    tables = (("stated", r.get("targets", {}), counted.get("targets", {})),
              ("proposed", r.get("proposed_targets", {}), {}))
    for kind, timed, by_count in tables:
        for key in sorted(set(timed) | set(by_count), key=[*timed, *by_count].index):
            head, _, peer = key.rpartition("_vs_")
            who, _, unit = head.rpartition("_per_")
            if who not in RATIO_OF or unit not in ("run", "span"):
                continue
            clock, count = timed.get(key), by_count.get(key)
            missed = [f"{_point(t)} by {by}" for by, t in (("the clock", clock), ("instructions", count))
                      if t and t.get("verdict") == "missed"]
            if missed:
                bound = (clock or count)["target"]
                out.setdefault((who, peer), []).append(
                    (f"{kind} per {unit} ≤ {bound:g}× missed ({', '.join(missed)})", bound))
    return out


def decomposition_table(overheads: list[dict[str, Any]], counted: dict[str, Any]) -> list[str]:
    """Every per-run comparison with a peer factored (``decomposition.py``), then, per missed comparison
    target, the measured reason derived from the factors."""
    rows, reasons = [], []
    for r in overheads:
        fw = r["framework"]
        count = counted.get(fw, {})
        for f in comparisons(r, count):
            if f.who != "ours_one_vocabulary":
                off = " (content off)" if f.who == "ours_no_content" else ""
                exact = "" if f.bytes_exact else "≈"
                rows.append(
                    f"| {fw} | ours{off} ÷ {_LABELS[f.peer].split(' (')[0]} | {f.spans:.2f} | {_ci(f.clock)} | "
                    f"{_ci(f.per_span('clock'))} | {_point(f.instructions)} | {_point(f.per_span('instructions'))} | "
                    + (f"{exact}{f.bytes:.2f} | {_ci(f.per_kilobyte('clock'))} | "
                       f"{_point(f.per_kilobyte('instructions'))} |" if f.bytes is not None else "— | | |"))
        factors = {(f.who, f.peer): f for f in comparisons(r, count)}
        for (who, peer), missed in _missed_targets(r, count).items():
            if (who, peer) not in factors:
                continue
            name = {"ours": "ours", "ours_no_content": "ours with content off",
                    "ours_one_vocabulary": "ours, one vocabulary"}[who]
            reasons.append(f"- **{fw}, {name} ÷ {_LABELS[peer].split(' (')[0]}**: "
                           f"{'; '.join(text for text, _ in missed)}. Measured: "
                           f"{reason(factors[who, peer], min(bound for _, bound in missed))}.")
    if not rows:
        return []
    return ["", "### Per-run comparisons, factored: the measured reasons", "",
            "Each per-run ratio ours ÷ a peer (its overhead per run, by the clock and by CPU instructions) split "
            "two ways, both exact: (our spans ÷ the peer's) × (our cost per span ÷ the peer's), and (our exported "
            "bytes per run ÷ the peer's, the OTLP protobuf of one run, as in each framework's bytes table) × (our "
            "cost per exported kilobyte ÷ the peer's). Spans and bytes are the same in every run, so a factor's "
            "interval is the per-run interval divided by a constant (≈: the bytes' two captures differed; the "
            "larger is used). The bytes say how much each records; the cost per exported kilobyte what a recorded "
            "byte costs each: at or under the target, ours is no dearer for what it records, and the excess is the "
            "record (spans the peer does not make, three vocabularies, content); over it, our code costs more for "
            "the same record (cost is not wholly proportional to bytes: fixed per-span costs bend this reading). "
            "Computed by `benchmarks/decomposition.py` from the stored results, so it is rewritten with them.", "",
            "| framework | ours ÷ peer | spans | per run, clock [95% CI] | per span, clock | per run, instructions "
            "| per span, instructions | exported bytes/run | per exported KB, clock | per exported KB, instructions |",
            "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|", *rows, "",
            "Every missed target comparing ours with a peer (stated, or as proposed to restate it), with the reason "
            "the factors give: the record when ours costs no more than the target per exported kilobyte, the spans "
            "when only per span is within it, our code when both are over it, and time per instruction when by "
            "instructions the per-run ratio is within it; judged by instructions where counted (no other "
            "tenant's load: the stabler measure), the clock's factors in parentheses.", "", *reasons]


_SHAPES = {"chain": "chain (input, output)", "tool": "tool (identity, arguments, result)",
           "model": "model (2 input messages, 1 output, usage)",
           "model_tool": "model whose output is a tool call (2 input messages, usage)",
           "model_long": "model (21-message conversation, ~11,000 characters)"}


def _shape_label(name: str) -> str:
    base = name.removesuffix("_no_content")
    return _SHAPES.get(base, base) + (", content off" if base != name else "")


def model_cost_usd(input_tokens: int, output_tokens: int) -> float | None:
    """The run's tokens priced at :data:`STUDY_MODEL` by genai-prices (``None`` when it is not installed)."""
    try:
        from genai_prices import Usage, calc_price
    except ImportError:
        return None
    provider, model = STUDY_MODEL
    return float(calc_price(Usage(input_tokens=input_tokens, output_tokens=output_tokens), model_ref=model,
                            provider_id=provider).total_price)


def study_table(results: list[dict[str, Any]]) -> list[str]:
    """The overhead study (issue 40 item 6): per framework, what our instrumentation plus the fold add to
    one customer-support run, as a share of the run under the latency model, and what it costs."""
    rows = []
    for r in sorted(results, key=lambda r: _ORDER.index(r["framework"]) if r["framework"] in _ORDER else 99):
        s = r["study"]
        if not s["model_calls"]:  # an A2A or MCP hop alone: part of some agent's run, not a run of its own
            continue
        added_us = s["ours_overhead_per_run_us"] + s["fold_per_run_us"]
        latency_s = s["model_calls"] * FIRST_TOKEN_S + s["output_tokens"] * PER_OUTPUT_TOKEN_S
        run_s = latency_s + s["baseline_run_us"] / 1e6 + added_us / 1e6
        cpu_usd_per_million = added_us / 1e6 * VCPU_HOUR_USD / 3600 * 1e6
        # (a fake that reports no usage, LlamaIndex's mock: nothing to price)
        model_usd = model_cost_usd(s["input_tokens"], s["output_tokens"]) if s["input_tokens"] else None
        rows.append(f"| {r['framework']} | {s['model_calls']} | {s['baseline_run_us'] / 1000:.1f} | "
                    f"{s['ours_overhead_per_run_us'] / 1000:.2f} | {s['fold_per_run_us'] / 1000:.2f} | "
                    f"{latency_s:.2f} | {100 * added_us / 1e6 / run_s:.3f}% | ${cpu_usd_per_million:.3f} | "
                    + (f"${model_usd * 1e6:,.0f} |" if model_usd is not None else "— |"))
    if not rows:
        return []
    return [f"Latency model: each model call {FIRST_TOKEN_S} s to the first token plus {PER_OUTPUT_TOKEN_S * 1000:g} ms "
            f"per output token (a hosted chat model of the gpt-4o-mini class); tools as the fakes run them. Added = "
            f"our instrumentation's overhead per run (median, CPU) + folding the run's spans into its envelope "
            f"(`fold()`, median of 50). CPU priced at ${VCPU_HOUR_USD}/vCPU-hour; the model's tokens (the fake's "
            f"word counts: a lower bound of a real run's) at {STUDY_MODEL[1]}'s price (genai-prices). The fold makes "
            f"no model call: no grader of the example's manifest is an `llm_judge`.", "",
            "| framework | model calls | run without model latency, ms | ours, ms | fold, ms | model latency, s "
            "| added, share of the run | added CPU, $ per million runs | model tokens, $ per million runs |",
            "|---|---:|---:|---:|---:|---:|---:|---:|---:|", *rows]


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
