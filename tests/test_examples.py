"""Every framework example in ``examples/`` runs offline as a script and prints its span tree."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

# example → lines its tree must contain (kind markers, the agent and the tool that ran)
EXPECTED = {
    "langchain_agent.py": ["invoke_agent travel_agent [agent]", "execute_tool get_weather [tool]", "[model]"],
    "llama_index_agent.py": ["invoke_agent calculator [agent]", "execute_tool add [tool]", "[model]"],
    "pydantic_ai_agent.py": ["invoke_agent weather [agent]", "execute_tool get_weather [tool]", "[model]"],
    "crewai_crew.py": ["invoke_workflow Support crew [chain]", "invoke_agent Support Lead [agent]",
                       "execute_tool lookup_order [tool]", "[model]"],
}


@pytest.mark.parametrize("example", sorted(EXPECTED))
def test_example_runs_offline_and_prints_its_tree(example: str, tmp_path: Path) -> None:
    env = {**os.environ, "HOME": str(tmp_path), "CREWAI_DISABLE_TELEMETRY": "true", "CREWAI_TRACING_ENABLED": "false"}
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / example)], capture_output=True, text=True,
                          timeout=300, cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    for expected in EXPECTED[example]:
        assert any(expected in line for line in proc.stdout.splitlines()), (expected, proc.stdout[-3000:])
