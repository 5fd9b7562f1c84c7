"""What each peer instrumentation records of a benchmark workload, as the ECP fold reads it (docs/ecp.md's table
"What each peer does not record"). No timing.

Each (framework, variant) — ``ours`` and every peer of ``benchmarks/workloads/<framework>.PEERS`` — runs once in a
process of its own (a peer's patches never meet another's), with an in-memory exporter (:func:`overhead.capture`);
its spans are folded with :func:`otel_agents.exporters.ecp.fold` and one JSON line per variant is printed: per
envelope, the model calls, tool calls with an id / arguments / result / agent, ``usage``, whether there is a
``public_output``, and the ``agents``::

    PYTHONPATH=src:. .bench-venv/bin/python -m benchmarks.peer_coverage agno langchain
    PYTHONPATH=src:. .bench-venv-google_adk/bin/python -m benchmarks.peer_coverage google_adk

A variant whose package is missing prints ``{"error": ...}``. Content capture is on for every peer that has a switch
(``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=SPAN_ONLY`` with the latest GenAI conventions opted in).
"""

from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
from typing import Any


def summary(envelope: dict[str, Any]) -> dict[str, Any]:
    """The fields of one envelope the table compares."""
    calls = envelope.get("tool_calls") or []
    return {"model_calls": envelope["metrics"]["model_calls"], "tool_calls": len(calls),
            "tool_ids": sum(1 for c in calls if c.get("id")),
            "tool_arguments": sum(1 for c in calls if c.get("arguments")),
            "tool_results": sum(1 for c in calls if c.get("result") is not None),
            "tool_agents": sum(1 for c in calls if c.get("agent")),
            "usage": envelope.get("usage"), "public_output": envelope.get("public_output") is not None,
            "agents": [a["name"] for a in envelope.get("agents") or []]}


def one(framework: str, variant: str) -> dict[str, Any]:
    """Fold one run of ``framework``'s workload under ``variant``."""
    from benchmarks import overhead
    from otel_agents.exporters.ecp import fold

    module = importlib.import_module(f"benchmarks.workloads.{framework}")
    spans = overhead.capture(module, module.workload(), variant)
    return {"framework": framework, "variant": variant, "spans": len(spans),
            "envelopes": [summary(e) for e in fold(spans)]}


def main(argv: list[str]) -> int:
    if argv[:1] == ["--one"]:
        print(json.dumps(one(argv[1], argv[2])))
        return 0
    env = {**os.environ, "OTEL_SEMCONV_STABILITY_OPT_IN": "gen_ai_latest_experimental",
           "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "SPAN_ONLY"}
    for framework in argv:
        module = importlib.import_module(f"benchmarks.workloads.{framework}")
        for variant in ("ours", *module.PEERS):
            done = subprocess.run([sys.executable, "-m", "benchmarks.peer_coverage", "--one", framework, variant],
                                  capture_output=True, text=True, env=env)
            lines = done.stdout.strip().splitlines()
            print(lines[-1] if done.returncode == 0 and lines else
                  json.dumps({"framework": framework, "variant": variant, "error": done.stderr.strip()[-300:]}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
