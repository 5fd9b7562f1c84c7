"""The ``console`` preset writes strict JSON: a non-finite double (an application's ``nan`` attribute, a
``temperature=nan`` a framework passed on) is written as the ``file`` preset writes it (``"NaN"``,
``"Infinity"``, ``"-Infinity"``: OTLP/JSON's protobuf mapping), never the ``NaN`` literal of the SDK's format."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from otel_agents import configure, uninstrument


def _strict(text: str) -> Any:
    def refuse(name: str) -> Any:
        raise AssertionError(f"non-strict JSON: {name}")

    return json.loads(text, parse_constant=refuse)


def _console_objects(out: str) -> list[dict[str, Any]]:
    decoder, objects, pos = json.JSONDecoder(), [], 0
    while out[pos:].strip():
        pos += len(out[pos:]) - len(out[pos:].lstrip())
        _, end = decoder.raw_decode(out, pos)  # finds the object's end (it accepts NaN too)
        objects.append(_strict(out[pos:end]))
        pos = end
    return objects


def test_console_and_file_write_non_finite_numbers_alike(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    from langchain_core.language_models.fake_chat_models import GenericFakeChatModel

    monkeypatch.setenv("OTEL_AGENTS_TRACES_FILE", str(tmp_path / "traces.jsonl"))
    config = configure(exporters=["console", "file"], frameworks=["langchain"], set_global=False)
    tracer = config.tracer_provider.get_tracer("app")
    try:
        with tracer.start_as_current_span("app span") as span:
            span.set_attributes({"score": math.nan, "scores": [1.0, math.inf], "ratio": -math.inf})
            span.add_event("ev", {"v": math.nan})
            assert GenericFakeChatModel(messages=iter(["hi"])).invoke("x", temperature=math.nan).content == "hi"
    finally:
        config.shutdown()
        uninstrument()
    console = {o["name"]: o for o in _console_objects(capsys.readouterr().out)}
    assert console["app span"]["attributes"] == {"score": "NaN", "scores": [1.0, "Infinity"], "ratio": "-Infinity"}
    assert console["app span"]["events"][0]["attributes"] == {"v": "NaN"}
    model = next(o for name, o in console.items() if name.startswith("chat"))
    assert model["attributes"]["gen_ai.request.temperature"] == "NaN"
    # the file preset's writing of the same doubles: the one encoding
    lines = [_strict(line) for line in (tmp_path / "traces.jsonl").read_text().splitlines()]
    spans = [s for line in lines for r in line["resourceSpans"] for ss in r["scopeSpans"] for s in ss["spans"]]
    app = next(s for s in spans if s["name"] == "app span")
    values = {kv["key"]: kv["value"] for kv in app["attributes"]}
    assert values["score"] == {"doubleValue": "NaN"} and values["ratio"] == {"doubleValue": "-Infinity"}
    assert values["scores"]["arrayValue"]["values"][1] == {"doubleValue": "Infinity"}


def test_console_writes_a_span_without_non_finite_numbers_as_the_sdk_does(capsys: pytest.CaptureFixture[str]) -> None:
    config = configure(exporters=["console"], frameworks=[], set_global=False)
    with config.tracer_provider.get_tracer("app").start_as_current_span("plain") as span:
        span.set_attribute("x", 1.5)
    config.shutdown()
    out = capsys.readouterr().out
    assert _console_objects(out)[0]["attributes"] == {"x": 1.5}
    assert '"x": 1.5' in out and out.endswith("}\n")
