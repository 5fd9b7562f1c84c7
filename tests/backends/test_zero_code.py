"""Zero-code start (case X-8, issue 9): ``opentelemetry-instrument ... python app.py`` loads our
instrumentors through the ``opentelemetry_instrumentor`` entry points, with no change to the app.

The app is ``runs.py`` (plain framework code, no ``instrument()`` call), run in a subprocess with the
exact command lines the README shows. The loader's behaviour for absent and unsupported frameworks is
checked with ``loader_probe.py`` (the real loader, with the version lookup pretended).

``opentelemetry-instrument`` needs a distro to configure the SDK from ``--traces_exporter``; ours is
``opentelemetry-distro`` (extra ``zero-code``). Without it these tests skip locally and fail in CI.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any

import pytest

from otel_agents.instrumentors._frameworks import FRAMEWORKS

from tests.backends import runs
from tests.backends.ci import missing
from tests.backends.receiver import Receiver

HERE = Path(__file__).resolve().parent
INSTRUMENT = Path(sys.executable).parent / "opentelemetry-instrument"
NO_METRICS_NO_LOGS = ["--metrics_exporter", "none", "--logs_exporter", "none"]


def _available() -> list[str]:
    return [name for name in runs.RUNS if name != "manual" and runs.skip_reason(name) is None]


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    env["OTEL_SERVICE_NAME"] = "zero-code-test"
    return env


def _zero_code(options: list[str], frameworks: list[str]) -> subprocess.CompletedProcess[str]:
    if not list(entry_points(group="opentelemetry_configurator")):
        missing("opentelemetry-instrument has no SDK configurator: pip install 'otel-agents[zero-code]'")
    command = [str(INSTRUMENT), *options, sys.executable, str(HERE / "runs.py"), *frameworks]
    done = subprocess.run(command, env=_env(), cwd=HERE.parents[1], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    noise = [line for line in done.stderr.splitlines()
             if "otel_agents" in line or "Traceback" in line or "Failed to auto initialize" in line
             or "Instrumenting of" in line or "nothing can be instrumented" in line]
    assert not noise, noise
    return done


def _console_spans(stdout: str) -> list[dict[str, Any]]:
    """The JSON objects ``ConsoleSpanExporter`` printed, one per span."""
    decoder, spans, i = json.JSONDecoder(), [], stdout.find("{")
    while i != -1:
        try:
            obj, end = decoder.raw_decode(stdout, i)
        except ValueError:
            i = stdout.find("{", i + 1)
            continue
        spans.append(obj)
        i = stdout.find("{", end)
    return spans


def test_zero_code_console_finds_our_spans() -> None:
    """X-8: ``opentelemetry-instrument --traces_exporter console --metrics_exporter none
    --logs_exporter none python app.py`` (no OTLP extras needed) prints our spans for every framework."""
    frameworks = _available()
    if not frameworks:
        pytest.skip("no instrumentor available")
    done = _zero_code(["--traces_exporter", "console", *NO_METRICS_NO_LOGS], frameworks)
    spans = _console_spans(done.stdout)
    by_id = {s["context"]["span_id"]: s for s in spans}
    for framework in frameworks:
        ours = [s for s in spans if s["attributes"].get("otel_agents.framework") == framework]
        if framework in runs.CLIENT_LOOPS:  # the decorated loop's agent and tool spans share its model spans' trace
            traces = {s["context"]["trace_id"] for s in ours}
            ours = [s for s in spans if s["context"]["trace_id"] in traces]
        kinds = {s["attributes"]["openinference.span.kind"] for s in ours}
        assert {"AGENT", "LLM", "TOOL"} <= kinds, (framework, kinds)
        for tool in (s for s in ours if s["attributes"]["openinference.span.kind"] == "TOOL"):
            chain, parent = [], tool["parent_id"]
            while parent in by_id:
                chain.append(by_id[parent]["attributes"].get("openinference.span.kind"))
                parent = by_id[parent]["parent_id"]
            assert "AGENT" in chain, (framework, tool["name"])
        assert all(s["resource"]["attributes"]["service.name"] == "zero-code-test" for s in ours)


def test_zero_code_otlp_http_reaches_a_receiver() -> None:
    """X-8 with the OTLP extras: the README's OTLP/HTTP command line delivers our spans."""
    available = _available()
    if not available:
        pytest.skip("no instrumentor available")
    framework = "pydantic_ai" if "pydantic_ai" in available else available[0]  # the quickest to import
    others = runs.others_disabled(framework)
    with Receiver() as rx:
        _zero_code(["--traces_exporter", "otlp", "--exporter_otlp_protocol", "http/protobuf",
                    "--exporter_otlp_traces_endpoint", f"{rx.url}/v1/traces", *NO_METRICS_NO_LOGS,
                    "--disabled_instrumentations", others], [framework])
        assert {r.path for r in rx.requests} == {"/v1/traces"}
        kinds = {s.attributes.get("openinference.span.kind") for s in rx.spans()}
    assert {"AGENT", "LLM", "TOOL"} <= kinds


def _probe(pretend: dict[str, str | None]) -> dict[str, Any]:
    done = subprocess.run([sys.executable, str(HERE / "loader_probe.py"), json.dumps(pretend)], env=_env(),
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["loud"] = [r for r in result["records"] if r["level"] in ("WARNING", "ERROR", "CRITICAL")]
    return result


ABSENT_BUT_LANGCHAIN = {fw.distribution: None for name, fw in FRAMEWORKS.items() if name != "langchain"}


def test_zero_code_an_envelope_file_that_cannot_be_opened_leaves_the_other_exporters(tmp_path: Path) -> None:
    """``OTEL_AGENTS_ECP_FILE`` naming a directory ended the distro's whole set-up: no console spans, no
    instrumentation, "Failed to auto initialize OpenTelemetry" and the traceback twice. Now one error names the
    variable and its value, and the console exporter prints the run's spans."""
    if not list(entry_points(group="opentelemetry_configurator")):
        missing("opentelemetry-instrument has no SDK configurator: pip install 'otel-agents[zero-code]'")
    command = [str(INSTRUMENT), "--traces_exporter", "ecp,console", *NO_METRICS_NO_LOGS, sys.executable,
               str(HERE / "runs.py"), "manual"]
    env = {**_env(), "OTEL_AGENTS_ECP_FILE": str(tmp_path),  # the decorated run needs no instrumentor of ours
           "OTEL_PYTHON_DISABLED_INSTRUMENTATIONS": runs.others_disabled()}
    done = subprocess.run(command, env=env, cwd=HERE.parents[1],
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    noise = [line for line in done.stderr.splitlines() if not line.startswith("manual: ")]  # runs.py's answer
    assert noise == [f"otel_agents: OTEL_AGENTS_ECP_FILE={str(tmp_path)!r}: cannot append "
                                        f"envelopes to it: Is a directory; the 'ecp' traces exporter writes nothing "
                                        f"(the other exporters and the instrumentation run)"], done.stderr
    assert {"AGENT", "TOOL"} <= {s["attributes"].get("openinference.span.kind") for s in _console_spans(done.stdout)}


def test_zero_code_skips_absent_frameworks_quietly() -> None:
    """X-8: with one framework installed, the loader instruments it and says nothing about the others."""
    if runs.skip_reason("langchain"):
        pytest.skip(runs.skip_reason("langchain"))
    result = _probe(ABSENT_BUT_LANGCHAIN)
    assert result["instrumented"] == {name: name == "langchain" for name in FRAMEWORKS}
    assert result["loud"] == []


def test_zero_code_warns_once_for_an_unsupported_version() -> None:
    """X-8: a framework at an unsupported version is not instrumented, with one message naming both
    versions, whether it is installed alone or next to a supported one."""
    alone = _probe({"langchain-core": "0.2.1", **ABSENT_BUT_LANGCHAIN})
    beside = _probe({"langchain-core": "0.2.1", "crewai": None, "pydantic-ai-slim": None})
    for result in (alone, beside):
        assert result["instrumented"]["langchain"] is False
        assert len(result["loud"]) == 1, result["loud"]
        message = result["loud"][0]["message"]
        assert "langchain-core 0.2.1" in message and ">=1.8.3,<2" in message, message
    if runs.skip_reason("llama_index") is None:
        assert beside["instrumented"]["llama_index"] is True
