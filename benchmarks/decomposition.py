"""Why a per-run comparison with a peer comes out as it does, from the stored results (issue 40: "if a target
is impossible for a stated reason, measure the reason").

A per-run ratio ours ÷ peer (overhead per run, by the clock or by CPU instructions) factors exactly two ways:

* **spans × cost per span**: (our spans ÷ the peer's) × (our overhead per span ÷ the peer's);
* **bytes × cost per exported kilobyte**: (our exported bytes per run ÷ the peer's) × (our overhead per
  exported kilobyte ÷ the peer's), the bytes being one run's spans on the OTLP wire (``exported_bytes.py``).

Spans and bytes per run are the same in every run, so each factor's interval is the per-run ratio's interval
divided by a constant. The bytes say how much each records; the cost per exported kilobyte says what a
recorded byte costs each, so it separates "ours records more" (a choice: spans the peer does not make, three
vocabularies, content) from "ours costs more for the same record" (our code). Reading it as "what ours would
cost recording the peer's bytes" assumes cost proportional to bytes, which fixed per-span costs bend: it is a
reading, not a prediction.

Ours is the variant a target names: all three vocabularies with content (bytes: ``ours``), content off against
a peer that records no content by default (``ours_no_content``), or one vocabulary (timed
``ours_one_vocabulary``, bytes ``ours_gen_ai``, the vocabulary it writes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

# our timed variant → its exported-bytes capture
BYTES_OF = {"ours": "ours", "ours_no_content": "ours_no_content", "ours_one_vocabulary": "ours_gen_ai"}
# where a peer's variant keeps ours ÷ it, per run, for each of our variants
RATIO_OF = {"ours": "ours_per_run_ratio", "ours_no_content": "ours_no_content_per_run_ratio",
            "ours_one_vocabulary": "ours_one_vocabulary_per_run_ratio"}


@dataclass(frozen=True)
class Factors:
    """One comparison, ours (``who``) ÷ ``peer`` on ``framework``'s workload, factored.

    ``clock``: the per-run ratio by the clock, ``{"ratio", "low", "high"}`` (95% interval; ``None`` for an
    unbounded end), or ``None`` when not timed; ``instructions``: the same by CPU instructions (median of the
    repeats, lowest and highest), or ``None`` when not counted; ``spans``: our spans per run ÷ the peer's;
    ``bytes``: our exported bytes per run ÷ the peer's (``None`` without a capture of both);
    ``bytes_exact``: whether both captures agreed byte for byte."""

    framework: str
    who: str
    peer: str
    spans: float
    bytes: float | None
    bytes_exact: bool
    clock: dict[str, Any] | None
    instructions: dict[str, Any] | None

    @property
    def bytes_per_span(self) -> float | None:
        """Our exported bytes per span ÷ the peer's."""
        return None if self.bytes is None else self.bytes / self.spans

    def per_span(self, by: str) -> dict[str, Any] | None:
        """Our overhead per span ÷ the peer's, ``by`` ``"clock"`` or ``"instructions"``."""
        return _divided(getattr(self, by), self.spans)

    def per_kilobyte(self, by: str) -> dict[str, Any] | None:
        """Our overhead per exported kilobyte ÷ the peer's (``None`` without bytes)."""
        return None if self.bytes is None else _divided(getattr(self, by), self.bytes)


def _divided(x: dict[str, Any] | None, by: float) -> dict[str, Any] | None:
    if x is None or x.get("ratio") is None:
        return None
    return {k: (None if x.get(k) is None else x[k] / by) for k in ("ratio", "low", "high")}


def decompose(overhead: dict[str, Any], instructions: dict[str, Any] | None = None,
              who: str = "ours") -> list[Factors]:
    """Every comparison of our variant ``who`` with a peer in one framework's results.

    ``overhead``: an ``overhead-FRAMEWORK.json`` result; ``instructions``: that framework's entry of
    ``instructions.json``'s ``frameworks`` (or ``None``). A peer is compared when the clock or the count has
    ours ÷ it for ``who`` (``ours_no_content`` only against a peer that records no content by default).
    Returns one :class:`Factors` per peer, in the results' order; ``[]`` for a skipped framework."""
    if "skipped_framework" in overhead:
        return []
    timed = overhead["variants"]
    counted = (instructions or {}).get("variants", {})
    wire = (overhead.get("exported_bytes") or {})
    sizes = wire.get("variants", {})
    out = []
    for peer in [*timed, *(p for p in counted if p not in timed)]:
        clock = timed.get(peer, {}).get(RATIO_OF[who])
        count = counted.get(peer, {}).get(RATIO_OF[who])
        if clock is None and count is None:
            continue
        source = timed if who in timed and peer in timed else counted
        spans = source[who]["spans_per_run"] / source[peer]["spans_per_run"]
        mine, theirs = sizes.get(BYTES_OF[who], {}), sizes.get(peer, {})
        ratio = (mine["bytes_per_run"] / theirs["bytes_per_run"]
                 if mine.get("bytes_per_run") and theirs.get("bytes_per_run") else None)
        out.append(Factors(overhead["framework"], who, peer, spans, ratio, bool(wire.get("deterministic")),
                           clock, count))
    return out


def comparisons(overhead: dict[str, Any], instructions: dict[str, Any] | None = None) -> list[Factors]:
    """:func:`decompose` for ours, then ours with content off, then ours in one vocabulary."""
    return [f for who in RATIO_OF for f in decompose(overhead, instructions, who)]


def _x(value: float) -> str:
    return f"{value:.2f}×"


def reason(f: Factors, bound: float) -> str:
    """One line, from the factors alone: why ours ÷ the peer per run is above ``bound``. Says how many spans
    and bytes ours makes beside the peer, what a span and an exported kilobyte cost ours beside the peer, and
    what carries the excess: nothing the work shows (by instructions the per-run ratio is within ``bound``:
    the clock's excess is time per instruction, where the code runs), the record (within ``bound`` per
    exported kilobyte: ours records more, spans or bytes), the spans (within ``bound`` per span only), or
    neither (over ``bound`` per span and per kilobyte: our code costs more for the same record). Judged by
    instructions where counted (no other tenant's load: the stabler measure), by the clock otherwise."""
    by = "instructions" if f.instructions is not None else "clock"
    per_run, per_span, per_kb = getattr(f, by), f.per_span(by), f.per_kilobyte(by)
    if per_span is None:
        return "not measured"
    spans = f"makes {_x(f.spans)} the spans" if f.spans != 1 else "makes as many spans"
    recorded = (f" and records {_x(f.bytes)} the bytes ({_x(f.bytes_per_span)} per span)"
                if f.bytes is not None else "")
    costs = f"by {'the clock' if by == 'clock' else by} ours costs {_x(per_span['ratio'])} the peer per span"
    if per_kb is not None:
        costs += f" and {_x(per_kb['ratio'])} per exported KB"
    if by == "instructions" and f.clock is not None:
        clock = [f.per_span("clock"), f.per_kilobyte("clock")]
        costs += f" (by the clock {', '.join(_x(x['ratio']) for x in clock if x is not None)})"
    if by == "instructions" and per_run["ratio"] <= bound:
        verdict = (f"the work is within the target ({_x(per_run['ratio'])} by instructions): the clock's excess is "
                   "time per instruction, where our code runs, not what it does")
    elif per_kb is not None and per_kb["ratio"] <= bound:
        verdict = (f"the record explains it: per exported KB ours is within the target; possible at this record: "
                   f"≤ {bound:g}× the peer's cost per exported KB")
    elif per_span["ratio"] <= bound:
        verdict = "the spans explain it: per span ours is within the target"
    else:
        verdict = ("the record does not explain it: over the target per span"
                   + (" and per exported KB" if per_kb is not None else "") + ", our code costs more for its record")
    return f"{spans}{recorded}; {costs} → {verdict}"
