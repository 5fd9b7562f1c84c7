"""``examples/langchain_agent.py`` runs offline and prints its answer and span tree."""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langchain_agent.py"


def test_example_prints_the_span_tree(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sys, "argv", [str(EXAMPLE), "Should I pack a coat for Oslo?"])
    runpy.run_path(str(EXAMPLE), run_name="__main__")
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "It is 3°C (37°F) in Oslo: pack a coat."
    assert out[2] == "invoke_agent travel_agent [agent]"
    assert '    execute_tool get_weather [tool]  {"city":"Oslo"} -> {"city": "Oslo", "celsius": 3}' in out
    assert sum(line.strip().startswith("chat travel-sim-1 [model]") for line in out) == 3
