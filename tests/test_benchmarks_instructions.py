"""The instruction counts' baseline (issue 40, twentieth round): the uninstrumented batch is counted before and
after the other variants of a process, and every overhead subtracts the lower of the two.

Why: in the nineteenth round one uninstrumented batch of CrewAI counted 0.35% high moved every overhead of its
process (OpenLLMetry's by 17.8%). No valgrind here: the counted process runs without it (its markers still say
which batches it ran, in order), and the repeats' counts are made up to check what is subtracted.
"""

from __future__ import annotations

import os
import subprocess
import sys

from benchmarks import instructions

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def test_uninstrumented_batch_counted_first_and_last() -> None:
    """The counted process runs the uninstrumented workload's batch before every other variant and again after
    them (``none_after``), each between two markers, and the last one exports no span."""
    done = instructions.batches("langchain", runs=1, warmup=0, seed=1, peers=False)
    marks = done["marks"]
    assert marks[:2] == ["none", "none"] and marks[-2:] == ["none_after", "none_after"]
    middle = marks[2:-2]
    assert "none" not in middle and "none_after" not in middle
    assert set(middle) >= {"ours", "attribute_floor"} and len(middle) == 2 * len(set(middle))


def _counted(none: float, after: float | None, ours: float) -> dict:
    counts = {"none": none, "ours": ours, "attribute_floor": 3.0}
    if after is not None:
        counts["none_after"] = after
    return {"framework": "langchain", "workload": "w", "python": "p", "versions": {}, "skipped": {},
            "without_content": [], "floor_spans": 3, "spans_per_run": {"none": 0.0, "ours": 3.0},
            "instructions": counts}


def test_overhead_subtracts_the_lower_uninstrumented_batch() -> None:
    """A batch of the uninstrumented run counted high, first or last, moves no overhead: each repeat subtracts
    the lower of its two; both batches are kept in the result."""
    result = instructions._framework("langchain", [_counted(100.0, 103.0, 110.0), _counted(104.0, 100.0, 110.0),
                                                   _counted(101.0, 101.0, 111.0)])
    v = result["variants"]
    assert v["none"]["repeats"] == [100, 100, 101] and v["none"]["instructions_per_run"] == 100
    assert v["none"]["batches"] == [[100, 103], [104, 100], [101, 101]]
    assert v["ours"]["overhead_repeats"] == [10, 10, 10] and v["ours"]["spread"] == 0
    assert "none_after" not in v
    assert result["targets"]["ours_per_span_le_3x_attribute_floor"]["repeats"] == [3.333, 3.333, 3.333]


def test_count_of_the_older_harness_keeps_its_one_baseline() -> None:
    """A count made before the second batch existed (one ``none``, as merged results still hold) subtracts it."""
    result = instructions._framework("langchain", [_counted(100.0, None, 110.0)])
    assert result["variants"]["ours"]["overhead_repeats"] == [10]
    assert "batches" not in result["variants"]["none"]


def test_targets_totals_say_which_counts_have_two_baselines() -> None:
    """The targets section's totals by instructions come from the counts (not written by hand), and name the
    frameworks still counted with one uninstrumented batch."""
    from benchmarks.report import counted_totals

    two = instructions._framework("langchain", [_counted(100.0, 103.0, 110.0)])
    one = instructions._framework("langchain", [_counted(100.0, None, 110.0)])
    two["targets"]["ours_per_run_vs_x"] = {**two["targets"]["ours_per_span_le_3x_attribute_floor"], "verdict": None}
    line = counted_totals({"langchain": two, "openai": one, "mcp": {"skipped_framework": "not installed"}})
    assert line.startswith("By instructions, the 3 stated targets: **0 met, 2 missed, 1 not resolved**")
    assert "lower of two uninstrumented batches: langchain; counts with one: openai)" in line
    assert "every framework's count" in counted_totals({"langchain": two})


def _repeat(framework: str, ours: float) -> dict:
    """A counted process of ``framework`` (MCP's or A2A's variants) with made-up counts."""
    counts = {"none": 1_000_000.0, "none_after": 1_000_100.0, "ours": ours, "attribute_floor": 100_000.0}
    spans = {"none": 0.0, "ours": 6.0}
    if framework == "mcp":
        counts["openllmetry"], spans["openllmetry"] = 1_150_000.0, 4.0
    return {"framework": framework, "workload": framework.upper(), "versions": {}, "skipped": {},
            "without_content": [], "floor_spans": 6, "spans_per_run": spans, "instructions": counts,
            "marks": []}


class _Stopped(BaseException):
    """What stops a run (KeyboardInterrupt or a signal's exit) in the fake counter."""


def _counting(monkeypatch, stop_at: str | None) -> list:
    """``instructions._counted`` replaced by made-up counts (no valgrind), raising :class:`_Stopped` when asked to
    count ``stop_at``; returns the list of (framework, seed) it counted."""
    counted: list = []

    def fake(python: str, framework: str, *, runs: int, warmup: int, seed: int, peers: bool) -> dict:
        if framework == stop_at:
            raise _Stopped(framework)
        counted.append((framework, seed))
        return _repeat(framework, 1_200_000.0 + seed)

    monkeypatch.setattr(instructions, "_counted", fake)
    monkeypatch.setattr(instructions, "_tool", lambda: "valgrind-3.19.0 --tool=callgrind")
    return counted


def _measure(journal, *, resume: bool = False, commit: str = "abc1234") -> dict:
    return instructions.measure(["mcp", "a2a"], runs=10, warmup=3, repeats=2, peers=True,
                                python_for=lambda framework: "python", journal=str(journal), resume=resume,
                                stamp={"commit": commit, "machine": {"cpu": "CPU"}, "quick": False})


def test_a_stopped_run_keeps_each_counted_process_and_resumes_from_them(tmp_path, monkeypatch) -> None:
    """Each counted process is a line of the journal as soon as it is counted (the twenty-sixth round's runs, stopped
    after 45 minutes, left nothing): a run stopped while counting A2A keeps MCP's two repeats, strict JSON a line;
    ``resume`` counts A2A alone and builds both frameworks, MCP's from its stored lines."""
    import json

    import pytest

    journal = tmp_path / "instructions.jsonl"
    counted = _counting(monkeypatch, stop_at="a2a")
    with pytest.raises(_Stopped):
        _measure(journal)
    assert counted == [("mcp", 1), ("mcp", 2)]
    lines = journal.read_text(encoding="utf-8").splitlines()
    records = [json.loads(line, parse_constant=lambda name: pytest.fail(f"{name} in the journal")) for line in lines]
    assert [(r["framework"], r["repeat"], r["commit"]) for r in records] == [("mcp", 0, "abc1234"), ("mcp", 1, "abc1234")]
    stopped = instructions.from_journal(instructions.read_journal(str(journal)))
    assert list(stopped["frameworks"]) == ["mcp"]
    assert stopped["frameworks"]["mcp"]["variants"]["ours"]["overhead_repeats"] == [200_001, 200_002]
    # the runner merges what the stopped run counted, counting nothing more
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "run.py"), "--no-readme",
                           "--results", str(tmp_path / "stored"), "--merge-instructions", str(journal)],
                          cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-3000:]
    merged = json.loads((tmp_path / "stored" / "instructions.json").read_text(encoding="utf-8"))
    assert list(merged["frameworks"]) == ["mcp"] and merged["frameworks"]["mcp"]["counted"]["commit"] == "abc1234"
    assert merged["frameworks"]["mcp"]["targets"] == stopped["frameworks"]["mcp"]["targets"]
    assert merged["machine"] == {"cpu": "CPU"} and merged["method"]["repeats"] == 2

    counted = _counting(monkeypatch, stop_at=None)
    result = _measure(journal, resume=True)
    assert counted == [("a2a", 1), ("a2a", 2)]
    assert list(result["frameworks"]) == ["mcp", "a2a"]
    assert result["frameworks"]["mcp"]["variants"] == stopped["frameworks"]["mcp"]["variants"]
    assert result["frameworks"]["a2a"]["runs"] == 30 and result["commit"] == "abc1234"
    assert len(journal.read_text(encoding="utf-8").splitlines()) == 4

    counted = _counting(monkeypatch, stop_at=None)
    assert _measure(journal, resume=True) == result and counted == []  # all held: built, nothing counted
    with pytest.raises(SystemExit, match=r"counted otherwise \(commit 'abc1234' there, 'def5678' here\)"):
        _measure(journal, resume=True, commit="def5678")
    _measure(journal)  # without resume: counted anew
    assert counted == [("mcp", 1), ("mcp", 2), ("a2a", 1), ("a2a", 2)]


def test_a_journal_line_cut_short_is_dropped_and_a_bad_line_named(tmp_path, monkeypatch) -> None:
    """A write stopped mid-line leaves a last line without its newline: dropped (and cut from the file, so the next
    record starts a line of its own); any other line that is not a record stops the reading with its number."""
    import pytest

    journal = tmp_path / "instructions.jsonl"
    _counting(monkeypatch, stop_at="a2a")
    with pytest.raises(_Stopped):
        _measure(journal)
    whole = journal.read_text(encoding="utf-8")
    journal.write_text(whole + '{"framework": "a2a", "rep', encoding="utf-8")
    assert [r["repeat"] for r in instructions.read_journal(str(journal))] == [0, 1]
    assert journal.read_text(encoding="utf-8") == whole
    _counting(monkeypatch, stop_at=None)
    _measure(journal, resume=True)
    assert [r["framework"] for r in instructions.read_journal(str(journal))] == ["mcp", "mcp", "a2a", "a2a"]

    lines = whole.splitlines()
    journal.write_text(f"{lines[0]}\n{{\"ratio\": NaN}}\n{lines[1]}\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"instructions.jsonl: line 2 is not strict JSON"):
        instructions.read_journal(str(journal))
    journal.write_text(f"{lines[0]}\n[1, 2]\n", encoding="utf-8")
    with pytest.raises(SystemExit, match=r"line 2 lacks an object"):
        instructions.read_journal(str(journal))


def test_a_framework_not_installed_is_recorded_skipped_beside_the_counted_ones(tmp_path, monkeypatch) -> None:
    """A workload whose framework does not import (its process answers ``skipped_framework``: CrewAI's workload
    run from a snapshot of ``src`` and ``benchmarks`` without ``tests``, whose fakes it imports) is kept as skipped,
    beside the frameworks counted in the same run: building the results from the journal raised ``KeyError:
    'none'`` on its empty variants, so the run ended with nothing written. # Was a bug"""
    from benchmarks.overhead import skipped_framework
    from benchmarks.workloads import a2a

    counted = _counting(monkeypatch, stop_at=None)
    counting = instructions._counted

    def fake(python: str, framework: str, **kw) -> dict:
        if framework == "a2a":
            return skipped_framework(a2a, ImportError("No module named 'tests'", name="tests"))
        return counting(python, framework, **kw)

    monkeypatch.setattr(instructions, "_counted", fake)
    result = _measure(tmp_path / "instructions.jsonl")
    assert counted == [("mcp", 1), ("mcp", 2)]
    assert result["frameworks"]["a2a"]["skipped_framework"] == "tests is not installed here"
    assert result["frameworks"]["mcp"]["variants"]["ours"]["overhead_repeats"] == [200_001, 200_002]
    merged = instructions.merge(None, [result])
    assert merged["frameworks"]["a2a"]["skipped_framework"] and merged["method"]["repeats"] == 2
