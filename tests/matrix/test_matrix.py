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
