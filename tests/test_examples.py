"""Every framework example in ``examples/`` runs offline as a script and prints its span tree."""

from __future__ import annotations

import json
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


def _spans_in(path: Path) -> list[str]:
    names = []
    for line in path.read_text().splitlines():
        for rs in json.loads(line)["resourceSpans"]:
            for ss in rs["scopeSpans"]:
                names += [span["name"] for span in ss["spans"]]
    return names


def test_example_under_opentelemetry_instrument_exports_and_prints(tmp_path: Path) -> None:
    """#26: under the zero-code launcher an example joins the launcher's provider: its tree is printed
    and the same spans reach the configured exporter; no 'already instrumented' warning."""
    traces = tmp_path / "traces.jsonl"
    env = {**os.environ, "HOME": str(tmp_path), "OTEL_AGENTS_TRACES_FILE": str(traces),
           "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": "crewai,llama_index"}
    launcher = Path(sys.executable).with_name("opentelemetry-instrument")
    proc = subprocess.run([str(launcher), "--traces_exporter", "otlp_json_file", "--metrics_exporter", "none",
                           "--logs_exporter", "none", sys.executable, str(ROOT / "examples" / "langchain_agent.py")],
                          capture_output=True, text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "invoke_agent travel_agent [agent]" in proc.stdout
    assert "already instrumented" not in proc.stderr
    assert "invoke_agent travel_agent" in _spans_in(traces)


def test_example_follows_otel_agents_exporters(tmp_path: Path) -> None:
    """#26: with OTEL_AGENTS_EXPORTERS set, an example exports through configure() as well as printing."""
    traces = tmp_path / "traces.jsonl"
    env = {**os.environ, "HOME": str(tmp_path), "OTEL_AGENTS_EXPORTERS": "file", "OTEL_AGENTS_TRACES_FILE": str(traces)}
    proc = subprocess.run([sys.executable, str(ROOT / "examples" / "plain_python" / "agent.py")], capture_output=True,
                          text=True, timeout=300, cwd=tmp_path, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "invoke_agent customer_support [agent]" in proc.stdout
    assert "invoke_agent customer_support" in _spans_in(traces)
