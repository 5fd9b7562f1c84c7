"""The instruction counts' baseline (issue 40, twentieth round): the uninstrumented batch is counted before and
after the other variants of a process, and every overhead subtracts the lower of the two.

Why: in the nineteenth round one uninstrumented batch of CrewAI counted 0.35% high moved every overhead of its
process (OpenLLMetry's by 17.8%). No valgrind here: the counted process runs without it (its markers still say
which batches it ran, in order), and the repeats' counts are made up to check what is subtracted.
"""

from __future__ import annotations

from benchmarks import instructions


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
