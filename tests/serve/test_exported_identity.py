"""What a backend learns from ``ecp serve``'s exported spans alone (issue 36): the project they belong to
(``PHOENIX_PROJECT_NAME`` → resource ``openinference.project.name``) and which served agent each step
root is (``gen_ai.agent.name`` on ``agent/step``), so an agent and its twins are told apart by their spans."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.backends.receiver import Receiver

ROOT = Path(__file__).resolve().parents[2]
SERVE = [str(Path(sys.executable).parent / "otel-agents"), "ecp", "serve"]
AGENTS = str(Path(__file__).with_name("agents.py"))


def _serve_one_step(args: list[str], env: dict[str, str]) -> None:
    request = json.dumps({"jsonrpc": "2.0", "id": 1, "method": "agent/step", "params": {"input": "where is A100?"}})
    proc = subprocess.run(SERVE + args, input=request + "\n", capture_output=True, text=True, timeout=120,
                          cwd=ROOT, env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["result"]["public_output"] == "echo: where is A100?"


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_EXPORTER_OTLP", "PHOENIX_"))}
    env.update(extra)
    return env


def test_otlp_export_carries_the_phoenix_project() -> None:
    """``ecp serve --otlp-endpoint`` (what ``demo --phoenix`` runs) honours ``PHOENIX_PROJECT_NAME`` as the
    ``phoenix`` preset and Phoenix's own OpenTelemetry package do: resource ``openinference.project.name``."""
    with Receiver() as rx:
        _serve_one_step([f"{AGENTS}:echo", "--otlp-endpoint", rx.url + "/v1/traces"], _env(PHOENIX_PROJECT_NAME="support-demo"))
        spans = rx.spans()
    assert spans and {s.resource.get("openinference.project.name") for s in spans} == {"support-demo"}
    with Receiver() as rx:
        _serve_one_step([f"{AGENTS}:echo", "--otlp-endpoint", rx.url + "/v1/traces"], _env())
        spans = rx.spans()
    assert spans and all("openinference.project.name" not in s.resource for s in spans)  # Phoenix's "default"


def test_step_root_carries_the_served_agent_name() -> None:
    with Receiver() as rx:
        _serve_one_step([f"{AGENTS}:echo", "--name", "support-faulty", "--otlp-endpoint", rx.url + "/v1/traces"], _env())
        _serve_one_step([f"{AGENTS}:echo", "--otlp-endpoint", rx.url + "/v1/traces"], _env())
        spans = rx.spans()
    roots = [s for s in spans if s.name == "agent/step"]
    assert [r.parent_id for r in roots] == [None, None]
    # --name when given, else the target's name: what agent/initialize reports
    assert sorted(r.attributes["gen_ai.agent.name"] for r in roots) == ["echo", "support-faulty"]
    children = [s for s in spans if s.name != "agent/step"]
    assert children and {s.trace_id for s in children} <= {r.trace_id for r in roots}
    # the root's own attribute, not a run attribute its children inherit
    assert all(s.attributes.get("gen_ai.agent.name") not in ("echo", "support-faulty") for s in children)
