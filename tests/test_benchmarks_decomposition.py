"""The per-run peer comparisons factored (``benchmarks/decomposition.py``) and their measured reasons in the
benchmark README's results block (``benchmarks/report.py``)."""

from __future__ import annotations

import glob
import json
import os

import pytest

from benchmarks.decomposition import comparisons, decompose, reason
from benchmarks.report import decomposition_table

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _ratio(r: float, low: float | None = None, high: float | None | str = "same") -> dict:
    """A stored ratio; ``high=None``: unbounded (a resample's denominator ≤ 0)."""
    return {"ratio": r, "low": r if low is None else low, "high": r if high == "same" else high}


def _overhead(*, peer_ratio: float = 3.0, peer_spans: float = 3, peer_bytes: int = 2_000) -> dict:
    """An ``overhead-FRAMEWORK.json`` of the shape the runner writes: ours 6 spans, 20,000 bytes a run;
    one peer recording content (``openllmetry``) and one that does not (``otel_genai``)."""
    return {
        "framework": "agno",
        "variants": {
            "ours": {"spans_per_run": 6.0, "overhead_per_run_us": 900.0},
            "ours_no_content": {"spans_per_run": 6.0, "overhead_per_run_us": 500.0},
            "ours_one_vocabulary": {"spans_per_run": 6.0, "overhead_per_run_us": 850.0},
            "openllmetry": {"spans_per_run": peer_spans, "overhead_per_run_us": 900.0 / peer_ratio,
                            "ours_per_run_ratio": _ratio(peer_ratio, 0.8 * peer_ratio, 1.2 * peer_ratio),
                            "ours_one_vocabulary_per_run_ratio": _ratio(2.8, 2.2, 3.4)},
            "otel_genai": {"spans_per_run": 3.0, "overhead_per_run_us": 400.0, "records_content": False,
                           "ours_per_run_ratio": _ratio(2.25, 2.0, None),
                           "ours_no_content_per_run_ratio": _ratio(1.25, 1.1, 1.4)},
        },
        "targets": {
            "ours_per_run_vs_openllmetry": {"target": 1.0, **_ratio(peer_ratio, 0.8 * peer_ratio, 1.2 * peer_ratio),
                                            "verdict": "missed" if peer_ratio > 1 else "met"},
            "ours_per_run_vs_otel_genai": {"target": 1.0, **_ratio(2.25, 2.0, None), "verdict": "missed"},
            "ours_per_span_le_3x_attribute_floor": {"target": 3.0, **_ratio(6.0), "verdict": "missed"},
        },
        "proposed_targets": {
            "ours_openinference_bytes_per_span_vs_openinference": {"target": 1.0, "ratio": 3.2, "exact": True,
                                                                   "verdict": "missed"},
        },
        "exported_bytes": {"deterministic": True, "variants": {
            "ours": {"spans": 6, "bytes_per_run": 20_000},
            "ours_no_content": {"spans": 6, "bytes_per_run": 4_000},
            "ours_gen_ai": {"spans": 6, "bytes_per_run": 8_000},
            "openllmetry": {"spans": peer_spans, "bytes_per_run": peer_bytes},
            "otel_genai": {"spans": 3, "bytes_per_run": 1_000, "records_content": False},
        }},
    }


def test_a_per_run_ratio_factors_into_spans_and_cost_per_span_and_into_bytes_and_cost_per_kilobyte() -> None:
    (f, g) = decompose(_overhead())
    assert (f.peer, f.spans, f.bytes) == ("openllmetry", 2.0, 10.0)
    assert f.per_span("clock") == pytest.approx({"ratio": 1.5, "low": 1.2, "high": 1.8})
    assert f.per_kilobyte("clock") == pytest.approx({"ratio": 0.3, "low": 0.24, "high": 0.36})
    # both factorings give back the per-run ratio
    assert f.spans * f.per_span("clock")["ratio"] == f.bytes * f.per_kilobyte("clock")["ratio"] == 3.0
    assert f.instructions is None and f.per_span("instructions") is None
    # an unbounded end (a denominator the noise hid) stays unbounded
    assert g.peer == "otel_genai" and g.per_span("clock")["high"] is None


def test_each_variant_of_ours_is_compared_with_its_own_bytes_and_only_where_a_ratio_was_measured() -> None:
    factors = {(f.who, f.peer): f for f in comparisons(_overhead())}
    # content off only against the peer that records no content; one vocabulary against the peers measured
    assert set(factors) == {("ours", "openllmetry"), ("ours", "otel_genai"), ("ours_no_content", "otel_genai"),
                            ("ours_one_vocabulary", "openllmetry")}
    assert factors["ours_no_content", "otel_genai"].bytes == 4.0  # its own capture, not all three's
    assert factors["ours_one_vocabulary", "openllmetry"].bytes == 4.0  # the vocabulary it writes, gen_ai
    assert decompose({"framework": "a2a", "skipped_framework": "a2a-sdk is not installed"}) == []


def test_instructions_are_factored_beside_the_clock() -> None:
    counted = {"variants": {"ours": {"spans_per_run": 6.0}, "openllmetry": {
        "spans_per_run": 3.0, "ours_per_run_ratio": _ratio(3.3, 3.29, 3.36)}}}
    (f, _) = decompose(_overhead(), counted)
    assert f.instructions == _ratio(3.3, 3.29, 3.36)
    assert f.per_kilobyte("instructions") == pytest.approx({"ratio": 0.33, "low": 0.329, "high": 0.336})
    # a framework counted but not timed still gets its comparisons
    (only,) = decompose({"framework": "agno", "variants": {}}, counted)
    assert only.clock is None and only.bytes is None and only.per_span("instructions")["ratio"] == 1.65


def test_the_reason_names_what_carries_the_excess() -> None:
    def line(**kw) -> str:
        return reason(decompose(_overhead(**kw))[0], 1.0)

    # 2× the spans, 10× the bytes, 0.3× the peer's cost per byte: what ours records
    text = line()
    assert text.startswith("makes 2.00× the spans and records 10.00× the bytes (5.00× per span); by the clock ours "
                           "costs 1.50× the peer per span and 0.30× per exported KB")
    assert "the record explains it" in text
    # as many bytes as the peer, but 4× its spans at 0.75× a span: the spans
    text = line(peer_ratio=3.0, peer_spans=1.5, peer_bytes=20_000)
    assert "the spans explain it" in text and "per exported KB" in text
    # the same spans and bytes, 3× the cost: our code
    text = line(peer_ratio=3.0, peer_spans=6, peer_bytes=20_000)
    assert text.startswith("makes as many spans and records 1.00× the bytes")
    assert "the record does not explain it" in text
    # missed by the clock, within the target by instructions: time per instruction, not work
    counted = {"variants": {"ours": {"spans_per_run": 6.0}, "openllmetry": {
        "spans_per_run": 6, "ours_per_run_ratio": _ratio(0.9)}}}
    f = decompose(_overhead(peer_ratio=3.0, peer_spans=6, peer_bytes=20_000), counted)[0]
    text = reason(f, 1.0)
    assert "by instructions ours costs 0.90× the peer per span" in text and "(by the clock 3.00×, 3.00×)" in text
    assert "the work is within the target (0.90× by instructions)" in text


def test_the_results_block_lists_each_comparison_and_a_reason_for_each_missed_target_only() -> None:
    met = _overhead(peer_ratio=0.8)
    lines = decomposition_table([met], {})
    text = "\n".join(lines)
    assert "### Per-run comparisons, factored: the measured reasons" in text
    assert "| agno | ours ÷ OpenLLMetry | 2.00 | 0.80 [0.64, 0.96] | 0.40 [0.32, 0.48] |" in text
    assert "| agno | ours (content off) ÷ OTel GenAI | 2.00 | 1.25 [1.10, 1.40] |" in text
    reasons = [x for x in lines if x.startswith("- ")]
    # the met target has no reason; the missed one against OTel GenAI has one; the per-span floor and the byte
    # targets are no comparison of ours with a peer's overhead
    assert len(reasons) == 1 and reasons[0].startswith(
        "- **agno, ours ÷ OTel GenAI**: stated per run ≤ 1× missed (2.25 [2.00, ∞] by the clock). Measured: ")
    assert decomposition_table([{"framework": "a2a", "skipped_framework": "not installed"}], {}) == []


RESULTS = os.path.join(ROOT, "benchmarks", "results")


@pytest.mark.skipif(not glob.glob(os.path.join(RESULTS, "overhead-*.json")), reason="no stored results")
def test_the_stored_results_factor_as_the_runner_computed_them() -> None:
    """On every stored comparison, cost per span by the clock is the runner's own ``ours_per_span_ratio``
    (computed from the rounds), and the bytes ratio is the bytes tables'."""
    checked = 0
    for path in glob.glob(os.path.join(RESULTS, "overhead-*.json")):
        with open(path, encoding="utf-8") as f:
            r = json.load(f)
        for x in decompose(r):
            stored = r["variants"][x.peer]["ours_per_span_ratio"]
            assert x.per_span("clock")["ratio"] == pytest.approx(stored["ratio"], abs=0.006), (path, x.peer)
            sizes = r["exported_bytes"]["variants"]
            assert x.bytes == sizes["ours"]["bytes_per_run"] / sizes[x.peer]["bytes_per_run"]
            checked += 1
    assert checked >= 20
