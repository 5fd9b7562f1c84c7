"""The support matrix (issue 34): one test per cell of ``tests/matrix/table.py``, each a real framework
run over a fake model that records its ground truth, checked by :func:`tests.matrix.truth.check_cell`.

A framework's cells run in the venv that has it (``tests/frameworks.py``: Google ADK and AutoGen
AgentChat in their own); ``drivers/NAME.py`` maps each entry point to the run it makes.
"""

from __future__ import annotations

import gc
import importlib

import pytest
from opentelemetry.sdk.trace import TracerProvider

from tests.frameworks import rows_here
from tests.matrix import table
from tests.matrix.truth import OpenSpans, Truth, check_cell, drive


# Warnings a cell's framework gives uninstrumented too (reproduced without any instrumentor; versions of the
# main venv), ignored in that cell only so that the CI log shows only warnings nobody has explained. A
# filter's message is a regex matched at the start of the warning's text (":" cannot be written in it: ".").
FRAMEWORK_WARNINGS: dict[tuple[str, str, str | None], str] = {
    # smolagents 1.26 `MultiStepAgent._run_stream` (smolagents/agents.py) yields the step again in the `finally`
    # around each step: the dropped run generator, closed when collected, yields in answer to GeneratorExit and
    # Python reports "generator ignored GeneratorExit". The cell's uninstrumented baseline run gives it; ours
    # closes the source on abandonment and keeps that error from the caller (instrumentors/smolagents/_wiring.py).
    **{("smolagents", entry, "break_drop"): "ignore:Exception ignored in. <generator object MultiStepAgent._run_stream"
       ":pytest.PytestUnraisableExceptionWarning"
       for entry in ("agent.run(stream=True)", "managed_agents agent.run(stream=True)")},
    # pydantic-graph 2.68 `_GraphIterator._handle_execution_request` (pydantic_graph/graph_builder.py) starts each
    # graph task with anyio's `TaskGroup.start_soon`, which makes the `_run_tracked_task` coroutine at once; anyio
    # 4.16 awaits it only when the new task first runs (`TaskHandle._run_coro`), so a remote agent's run cancelled
    # as the server is torn down (the caller left), just after a step started a task, never awaits it. Timing
    # decides: uninstrumented, one `await asyncio.sleep(0)` more in the remote model gives it on every run.
    ("a2a", "gRPC send_message streaming", "break_drop"):
        "ignore:coroutine '_GraphIterator._run_tracked_task' was never awaited:RuntimeWarning",
    # crewAI 1.15 `string_to_callable` (crewai/types/callback.py) warns of any callback that is a closure, as the
    # driver's `before_kickoff_callbacks` is (it counts each run of the crew for the cell's truth): once per crew
    # built, and `kickoff_for_each` builds a copy of the crew per input (`Crew.copy`). The driver's own callback,
    # not ours; no cell checkpoints the crew. `None` = every ending of the entry. The text is 1.15.30's, then
    # 1.15.44's.
    **{("crewai", entry, None): "ignore:(function callbacks cannot be serialized and will prevent checkpointing"
       "|A function callback cannot be saved in a checkpoint):UserWarning"
       for entry in ("Crew.kickoff_for_each", "Crew.kickoff_for_each_async", "Crew.akickoff_for_each")},
}


def _params() -> list:
    here = set(rows_here([s.name for s in table.SYSTEMS]))
    out = []
    for s in table.SYSTEMS:
        if s.name not in here:
            continue
        for entry, ending, verdict, reason in table.cells(s):
            marks = []
            if verdict == "known":
                marks.append(pytest.mark.xfail(strict=True, reason=f"known failure: {reason}"))
            elif verdict == "unsupported":
                marks.append(pytest.mark.skip(reason=f"not supported: {reason}"))
            ignored = FRAMEWORK_WARNINGS.get((s.name, entry.name, ending)) or \
                FRAMEWORK_WARNINGS.get((s.name, entry.name, None))
            if ignored:
                marks.append(pytest.mark.filterwarnings(ignored))
            out.append(pytest.param(s.name, entry, ending, id=f"{s.name}-{entry.name}-{ending}", marks=marks))
    return out


def _run(driver, entry: table.Entry, truth: Truth):
    make, norm = driver.ENTRIES[entry.name](truth)
    return drive(entry.mode, make, truth, norm)


@pytest.mark.parametrize(("framework", "entry", "ending"), _params())
def test_cell(framework: str, entry: table.Entry, ending: str) -> None:
    driver = importlib.import_module(f"tests.matrix.drivers.{framework}")
    gc.freeze()  # the frameworks' modules are never garbage: the collections of dropped streams skip them
    baseline = _run(driver, entry, Truth(ending))
    spans = OpenSpans()
    provider = TracerProvider()
    provider.add_span_processor(spans)
    instrumentor = driver.INSTRUMENTOR()
    instrumentor.instrument(tracer_provider=provider)
    try:
        truth = Truth(ending)
        outcome = _run(driver, entry, truth)
    finally:
        instrumentor.uninstrument()
    check_cell(truth, spans, outcome, baseline)


def test_every_entry_has_a_driver() -> None:
    """Each entry point of the table (of the frameworks this venv runs) has its run in the driver."""
    here = set(rows_here([s.name for s in table.SYSTEMS]))
    for s in table.SYSTEMS:
        if s.name in here:
            driver = importlib.import_module(f"tests.matrix.drivers.{s.name}")
            assert set(driver.ENTRIES) == {e.name for e in s.entries}, s.name


def test_support_matrix_doc_is_current() -> None:
    """docs/support-matrix.md is what ``make support-matrix`` writes from the table (rerun it after editing)."""
    assert table.DOC.read_text(encoding="utf-8") == table.render(), "docs/support-matrix.md is stale: make support-matrix"
