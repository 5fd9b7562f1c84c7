"""The client instrumentors are supported like the frameworks: entry points, version range checked at
instrument time, status and doctor rows, installed on import without importing the client, doctor notes
peer instrumentations of the same clients."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from importlib import metadata
from pathlib import Path
from typing import Any

import pytest

import otel_agents
from otel_agents.cli import doctor


def test_entry_points_and_status() -> None:
    names = {e.name: e.value for e in metadata.entry_points(group="opentelemetry_instrumentor")}
    assert names["anthropic"] == "otel_agents.instrumentors.anthropic:AnthropicInstrumentor"
    assert names["openai"] == "otel_agents.instrumentors.openai:OpenAIInstrumentor"
    status = otel_agents.instrumentation_status()
    assert status["anthropic"].installed_version == metadata.version("anthropic")
    assert status["openai"].supported == ">=2.30.0,<4"


def test_installed_on_import_without_importing_the_client(tmp_path: Any) -> None:
    """instrument() before the application imports the client imports neither; importing it installs the
    hooks (one model span); an unsupported version is refused with one error naming both versions."""
    script = textwrap.dedent("""
        import sys
        import otel_agents
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        exporter = InMemorySpanExporter(); tp = TracerProvider(); tp.add_span_processor(SimpleSpanProcessor(exporter))
        done = otel_agents.instrument(tp, frameworks=["anthropic", "openai"])
        assert done == ["anthropic", "openai"], done
        assert "anthropic" not in sys.modules and "openai" not in sys.modules
        import httpx, openai
        client = openai.OpenAI(api_key="k", http_client=httpx.Client(transport=httpx.MockTransport(
            lambda r: httpx.Response(200, json={"object": "list", "model": "m", "data": [{"object": "embedding", "index": 0, "embedding": [0.5]}], "usage": {"prompt_tokens": 1, "total_tokens": 1}}))))
        client.embeddings.create(model="m", input="hi")
        print([s.name for s in exporter.get_finished_spans()])
    """)
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "['embeddings m']"


def test_unsupported_version_is_refused(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    from otel_agents import _api

    real = _api._installed_version
    monkeypatch.setattr(_api, "_installed_version", lambda fw: "1.99.0" if fw.name == "anthropic" else real(fw))
    monkeypatch.setattr(_api, "_warned_versions", set())
    assert otel_agents.instrument(frameworks=["anthropic"]) == []
    st = otel_agents.instrumentation_status()["anthropic"]
    assert not st.instrumented and st.reason == "unsupported version 1.99.0 (supported: >=2.14.0,<3)"
    assert [r.getMessage() for r in caplog.records if "anthropic 1.99.0" in r.getMessage()]


def _installed(site: Path, dist: str, version: str, entry_points: str = "") -> None:
    """A distribution ``dist`` ``version`` in the directory ``site`` (on ``sys.path``): metadata only."""
    info = site / f"{dist.replace('-', '_')}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
    if entry_points:
        (info / "entry_points.txt").write_text(entry_points)


def test_doctor_rows_and_peer_notes(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                                    tmp_path: Path) -> None:
    """doctor has a row per client, and a note for a peer instrumentation of what we instrument. One registered
    under our entry-point name (OpenInference's ``openai``, OTel's GenAI ``langchain``) is found from its entry
    point, whatever its package is called, and ``opentelemetry-instrument`` loads it beside ours: the variable
    the note suggested turns off both there. (Only a hand-kept list of client peers was noted.)"""
    _installed(tmp_path, "openinference-instrumentation-openai", "0.1.30",
               "[opentelemetry_instrumentor]\nopenai = openinference.instrumentation.openai:OpenAIInstrumentor\n")
    _installed(tmp_path, "opentelemetry-instrumentation-genai-langchain", "1.3b0",
               "[opentelemetry_instrumentor]\nlangchain = opentelemetry.instrumentation.genai.langchain:X\n")
    _installed(tmp_path, "traceloop-sdk", "0.40.0")  # instruments without an entry point
    monkeypatch.syspath_prepend(str(tmp_path))
    doctor.run(None)  # type: ignore[arg-type]
    out = capsys.readouterr().out
    assert "  anthropic " in out and "  openai " in out
    notes = {line.split()[1]: line for line in out.splitlines() if line.startswith("  note: ")}
    for dist, names in (("openinference-instrumentation-openai", "openai"),
                        ("opentelemetry-instrumentation-genai-langchain", "langchain")):
        assert f"{dist} " in notes[dist] and f" also traces {names}: " in notes[dist], notes
        assert f"opentelemetry-instrument loads both, and OTEL_PYTHON_DISABLED_INSTRUMENTATIONS={names} turns off " \
               "both there" in notes[dist], notes[dist]
    assert "also traces anthropic,openai: " in notes["traceloop-sdk"], notes
    assert "turn ours off with OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=anthropic,openai" in notes["traceloop-sdk"]
