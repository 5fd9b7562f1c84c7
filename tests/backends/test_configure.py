"""``otel_agents.configure()`` and the exporter presets (issue 9): what gets built, where spans go,
flushing on exit, the global provider, ECP folding, and that no secret is ever printed."""

from __future__ import annotations

import json
import re
import logging
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from opentelemetry.sdk.trace.export import BatchSpanProcessor, SimpleSpanProcessor

import otel_agents
from otel_agents import configure, presets
from tests.backends import runs
from tests.backends.receiver import Receiver
from tests.spans import SnapshotExporter

REPO = Path(__file__).resolve().parents[2]
SECRET = "sk-lf-never-print-me-0000"


def _span(config: otel_agents.Configuration, name: str = "work") -> None:
    config.tracer_provider.get_tracer("tests").start_span(name).end()


def test_presets_by_name_and_processor_choice(monkeypatch: pytest.MonkeyPatch,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    with Receiver() as rx:  # every network preset points at it: nothing leaves the machine
        for name, value in (("LANGFUSE_PUBLIC_KEY", "pk-lf-1"), ("LANGFUSE_SECRET_KEY", SECRET),
                            ("LANGFUSE_HOST", rx.url), ("PHOENIX_COLLECTOR_ENDPOINT", rx.url),
                            ("OTEL_EXPORTER_OTLP_ENDPOINT", rx.url)):
            monkeypatch.setenv(name, value)
        local = SnapshotExporter()
        config = configure(exporters=["console", "otlp", "phoenix", "langfuse", local], frameworks=[],
                           set_global=False)
        _span(config, "everywhere")
        config.shutdown()
        paths = sorted(r.path for r in rx.requests)
    assert [p.name for p in config.exporters] == ["console", "otlp", "phoenix", "langfuse", "custom"]
    assert [type(p) for p in config.processors] == [SimpleSpanProcessor, BatchSpanProcessor, BatchSpanProcessor,
                                                    BatchSpanProcessor, SimpleSpanProcessor]
    assert config.ecp is None and config.is_global is False
    assert paths == ["/api/public/otel/v1/traces", "/v1/traces", "/v1/traces"]
    assert '"name": "everywhere"' in capsys.readouterr().out and [s.name for s in local.spans] == ["everywhere"]


@pytest.mark.parametrize("preset", ["otlp", "phoenix"])
def test_a_batch_a_receiver_finds_too_large_is_sent_in_halves(preset: str) -> None:
    """A batch refused with 413 (a receiver's body limit: ``ecp collect`` takes 4 MiB, one batch of 512 spans with
    their content is often more): the SDK's exporter dropped it, so a whole run never reached ``ecp collect``. Now the
    network presets send it again in halves (``ecp serve --otlp-endpoint`` builds the same exporter)."""
    with Receiver(refuse=[413]) as rx:
        chosen = presets.otlp(rx.url + "/v1/traces") if preset == "otlp" else presets.phoenix(rx.url)
        config = configure(exporters=[chosen], frameworks=[], set_global=False)
        for n in range(4):
            _span(config, f"s{n}")
        config.shutdown()
        statuses = [r.status for r in rx.requests]
        got = sorted(span.name for span in rx.spans())
    assert statuses == [413, 200, 200] and got == ["s0", "s1", "s2", "s3"]


def test_unknown_preset_is_refused() -> None:
    with pytest.raises(ValueError, match="valid: .*phoenix"):
        configure(exporters=["jaeger"], frameworks=[], set_global=False)


@pytest.mark.parametrize("raw", [",,", " , "])
def test_an_exporters_variable_naming_none_is_refused(raw: str, monkeypatch: pytest.MonkeyPatch) -> None:
    # OTEL_AGENTS_EXPORTERS=",," fell back to the file preset without a word
    monkeypatch.setenv("OTEL_AGENTS_EXPORTERS", raw)
    with pytest.raises(ValueError, match=rf"OTEL_AGENTS_EXPORTERS={raw!r} names no exporter preset; valid: .*phoenix"):
        configure(frameworks=[], set_global=False)


def test_one_destination_given_twice_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``OTEL_AGENTS_EXPORTERS=file,file`` (a typo, or a preset in the variable and the code) wrote every span twice
    to the trace file (``export`` then sent each twice; Phoenix twice showed each span twice): the same preset with
    the same settings, two ``file`` presets naming one file, or one exporter object given twice is a ValueError
    before anything is written or set; presets of one name with other settings, or two exporters of one class,
    are two destinations."""
    from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OTEL_AGENTS_EXPORTERS", "file,console, FILE")
    with pytest.raises(ValueError) as refused:
        configure(frameworks=[], set_global=False)
    assert str(refused.value) == ("exporters: file(path='otel-agents-traces.jsonl') is given twice: every span would "
                                  "be exported to it twice (OTEL_AGENTS_EXPORTERS='file,console, FILE')")
    monkeypatch.delenv("OTEL_AGENTS_EXPORTERS")
    with pytest.raises(ValueError, match=r"^exporters: file\(path='otel-agents-traces.jsonl'\) and "
                                         r"file\(path='./otel-agents-traces.jsonl'\) name one file: every span"):
        configure(exporters=["file", presets.file("./otel-agents-traces.jsonl")], frameworks=[], set_global=False)
    memory = InMemorySpanExporter()
    with pytest.raises(ValueError, match=r"^exporters: custom\(exporter='InMemorySpanExporter'\) is given twice"):
        configure(exporters=[memory, "console", memory], frameworks=[], set_global=False)
    assert os.listdir(tmp_path) == []
    config = configure(exporters=[InMemorySpanExporter(), InMemorySpanExporter(), presets.file("a.jsonl"), "file"],
                       frameworks=[], set_global=False)
    _span(config)
    config.tracer_provider.force_flush()
    assert [len((tmp_path / name).read_text().splitlines()) for name in ("a.jsonl", "otel-agents-traces.jsonl")] \
        == [1, 1]
    config.tracer_provider.shutdown()


def test_service_name_and_phoenix_project_on_the_resource() -> None:
    local = SnapshotExporter()
    with Receiver() as rx:
        config = configure(service_name="support-bot", exporters=[presets.phoenix(rx.url, project="bots"), local],
                           resource_attributes={"deployment.environment": "test"}, frameworks=[], set_global=False)
        _span(config)
        config.shutdown()
    (span,) = local.spans
    assert span.resource["service.name"] == "support-bot"
    assert span.resource["openinference.project.name"] == "bots"
    assert span.resource["deployment.environment"] == "test"


def test_phoenix_preset_defaults_and_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("PHOENIX_COLLECTOR_ENDPOINT", "PHOENIX_PROJECT_NAME", "PHOENIX_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    default = presets.phoenix()
    assert default.details["endpoint"] == "http://127.0.0.1:6006/v1/traces" and default.resource == {}
    monkeypatch.setenv("PHOENIX_COLLECTOR_ENDPOINT", "http://phoenix.internal:6006/")
    monkeypatch.setenv("PHOENIX_PROJECT_NAME", "agents")
    monkeypatch.setenv("PHOENIX_API_KEY", SECRET)
    preset = presets.phoenix()
    assert preset.details["endpoint"] == "http://phoenix.internal:6006/v1/traces"
    assert preset.resource == {"openinference.project.name": "agents"}
    assert SECRET not in repr(preset)
    assert presets.phoenix("http://x:1/v1/traces").details["endpoint"] == "http://x:1/v1/traces"


def test_phoenix_api_key_is_a_bearer_header() -> None:
    with Receiver() as rx:
        config = configure(exporters=[presets.phoenix(rx.url, api_key=SECRET)], frameworks=[], set_global=False)
        _span(config)
        config.shutdown()
        (request,) = rx.requests
    assert request.path == "/v1/traces"
    assert request.headers["authorization"] == f"Bearer {SECRET}"


def test_otlp_preset_reads_the_standard_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    with Receiver() as rx:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_ENDPOINT", rx.url)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", "x-team=agents")
        config = configure(exporters="otlp", frameworks=[], set_global=False)
        _span(config, "via-env")
        config.shutdown()
        (request,) = rx.requests
        names = [s.name for s in rx.spans()]
    assert request.path == "/v1/traces" and request.headers["x-team"] == "agents"
    assert names == ["via-env"]


def test_file_is_the_default_preset(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OTEL_AGENTS_EXPORTERS", raising=False)
    monkeypatch.setenv("OTEL_AGENTS_TRACES_FILE", str(tmp_path / "out" / "traces.jsonl"))
    config = configure(frameworks=[], set_global=False)
    _span(config, "to-file")
    config.shutdown()
    assert [p.name for p in config.exporters] == ["file"]
    (line,) = (tmp_path / "out" / "traces.jsonl").read_text().splitlines()
    spans = json.loads(line)["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert [s["name"] for s in spans] == ["to-file"]


def test_a_traces_file_that_cannot_be_opened_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # OTEL_AGENTS_TRACES_FILE=<a directory> was a bare "[Errno 21] Is a directory: '...'" from configure()
    monkeypatch.delenv("OTEL_AGENTS_EXPORTERS", raising=False)
    monkeypatch.setenv("OTEL_AGENTS_TRACES_FILE", str(tmp_path))
    with pytest.raises(IsADirectoryError) as err:
        configure(frameworks=[], set_global=False)
    assert str(err.value) == f"[Errno 21] OTEL_AGENTS_TRACES_FILE={str(tmp_path)!r}: cannot append spans to it: " \
                             "Is a directory"
    with pytest.raises(IsADirectoryError, match=r"path='.*': cannot append spans to it"):
        configure(exporters=[presets.file(tmp_path)], frameworks=[], set_global=False)


def test_exporters_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OTEL_AGENTS_EXPORTERS", "console, phoenix")
    config = configure(frameworks=[], set_global=False)
    config.shutdown()  # no span was made: nothing is sent
    assert [p.name for p in config.exporters] == ["console", "phoenix"]


def test_configure_instruments_and_points_the_decorators_at_its_provider() -> None:
    if runs.skip_reason("pydantic_ai"):
        pytest.skip(runs.skip_reason("pydantic_ai"))
    local = SnapshotExporter()
    config = configure(exporters=[local], frameworks=["pydantic_ai"], set_global=False)
    try:
        assert config.instrumented == ("pydantic_ai",)

        @otel_agents.tool
        def add(a: int, b: int) -> int:
            return a + b

        assert add(2, 3) == 5
    finally:
        config.shutdown()
    assert [s.semantic_kind for s in local.spans] == ["tool"]
    assert otel_agents.instrumentation_status()["pydantic_ai"].instrumented is False  # shutdown undid it


def test_ecp_callback_gets_one_envelope_per_run() -> None:
    envelopes: list[dict] = []
    config = configure(exporters=[], ecp=envelopes.append, frameworks=[], set_global=False)
    try:
        assert config.processors[0] is config.ecp

        @otel_agents.agent(name="echo")
        def echo(text: str) -> str:
            return text.upper()

        echo("hi")
    finally:
        config.shutdown()
    (envelope,) = envelopes
    assert envelope["status"] == "done" and envelope["public_output"] == "HI"


def test_ecp_true_queues_envelopes() -> None:
    config = configure(exporters=[], ecp=True, frameworks=[], set_global=False)
    try:
        otel_agents.agent(name="noop")(lambda: "ok")()
        assert [e["public_output"] for e in config.ecp.drain()] == ["ok"]
    finally:
        config.shutdown()


def test_no_secret_is_printed_or_logged(monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture,
                                        capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-visible")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)
    caplog.set_level(logging.DEBUG)
    with Receiver() as rx:
        monkeypatch.setenv("LANGFUSE_HOST", rx.url)
        config = configure(exporters=["langfuse", presets.phoenix(rx.url, api_key=SECRET)], frameworks=[],
                           set_global=False)
        print(config, repr(config), config.exporters)
        _span(config)
        config.shutdown()
    shown = capsys.readouterr()
    for text in (caplog.text, shown.out, shown.err, repr(config), str(config.exporters)):
        assert SECRET not in text and SECRET[6:] not in text


def _run_python(code: str, **env: str) -> subprocess.CompletedProcess[str]:
    import os

    environment = {k: v for k, v in os.environ.items() if not k.startswith(("OTEL_", "LANGFUSE_", "PHOENIX_"))}
    environment.update(env)
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], cwd=REPO, env=environment,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done


def test_batched_spans_are_flushed_at_exit() -> None:
    """The process ends without calling shutdown(): the SDK's atexit hook drains the batch processor."""
    with Receiver() as rx:
        _run_python(f"""
            import otel_agents
            config = otel_agents.configure(exporters=[otel_agents.presets.otlp("{rx.url}/v1/traces")], frameworks=[])
            config.tracer_provider.get_tracer("t").start_span("last-words").end()
        """)
        assert [s.name for s in rx.spans()] == ["last-words"]


def test_global_provider_is_set_once_and_never_replaced() -> None:
    done = _run_python("""
        from opentelemetry import trace
        import otel_agents
        first = otel_agents.configure(exporters=["console"], frameworks=[])
        assert first.is_global and trace.get_tracer_provider() is first.tracer_provider
        second = otel_agents.configure(exporters=[], frameworks=[])
        assert not second.is_global and trace.get_tracer_provider() is first.tracer_provider
        second.tracer_provider.get_tracer("t").start_span("not-global").end()
    """)
    assert done.stderr.count("a global tracer provider is already set") == 1
    assert "not-global" not in done.stdout  # it went to the second provider, which exports nowhere


def test_an_unknown_framework_fails_before_anything_starts() -> None:
    """``configure(frameworks="langchian")`` raised only after it had made its provider global (for good: OTel sets
    it once), added the exporters and undone the instrumentation already in place."""
    _run_python("""
        from opentelemetry import trace
        import otel_agents
        assert otel_agents.instrument(frameworks="openai") == ["openai"]
        for bad in ("langchian", ["openai", "crew_ai"]):
            try:
                otel_agents.configure(exporters=["console"], frameworks=bad)
            except ValueError as exc:
                assert str(exc).startswith("unknown framework(s) ['"), exc
            else:
                raise AssertionError("no ValueError")
        assert isinstance(trace.get_tracer_provider(), trace.ProxyTracerProvider)
        assert otel_agents.instrumentation_status()["openai"].instrumented
        assert otel_agents.configure(exporters=[], frameworks=(n for n in ["openai"])).instrumented == ("openai",)
    """)


# An application that set its own SDK provider (an in-memory exporter, app_exporter) before otel-agents; run_agent
# runs a decorated agent
APP_PROVIDER = textwrap.dedent("""
        from opentelemetry import trace
        from opentelemetry.sdk.trace import TracerProvider
        from opentelemetry.sdk.trace.export import SimpleSpanProcessor
        from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
        import otel_agents
        app_exporter = InMemorySpanExporter()
        app = TracerProvider()
        app.add_span_processor(SimpleSpanProcessor(app_exporter))
        trace.set_tracer_provider(app)
        def run_agent(name):
            return otel_agents.agent(name=name)(lambda: "ok")()
""")


def test_configure_joins_a_global_provider_made_elsewhere() -> None:
    """An application (or `otel-agents ecp serve`) already set an SDK provider: configure() adds its
    exporters to it, so one run reaches both the application's processors and the presets."""
    done = _run_python(APP_PROVIDER + textwrap.dedent("""
        config = otel_agents.configure(exporters=["console"], frameworks=[])
        assert config.tracer_provider is app and config.is_global and not config.owns_provider
        run_agent("joined")
        assert [s.name for s in app_exporter.get_finished_spans()] == ["invoke_agent joined"]
        config.shutdown()
        trace.get_tracer("t").start_span("after").end()   # the application's provider still works
        assert [s.name for s in app_exporter.get_finished_spans()][-1] == "after"
    """))
    assert '"name": "invoke_agent joined"' in done.stdout  # the console preset saw the same run


def test_configure_again_joins_the_provider_made_elsewhere_again() -> None:
    """A second configure() (a notebook cell run again) beside the application's own provider (Langfuse's, say)
    made a provider of its own, with the warning meant for a provider an earlier configure() made: our spans left
    the application's backend. Now it joins that provider again."""
    done = _run_python(APP_PROVIDER + textwrap.dedent("""
        otel_agents.configure(exporters=[], frameworks=[])
        again = otel_agents.configure(exporters=[], frameworks=[])
        assert again.tracer_provider is app and again.is_global and not again.owns_provider
        run_agent("again")
        assert [s.name for s in app_exporter.get_finished_spans()] == ["invoke_agent again"]
    """))
    assert "a global tracer provider is already set" not in done.stderr, done.stderr


def test_mlflow_preset_sends_the_experiment_header(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("MLFLOW_TRACKING_URI", "MLFLOW_EXPERIMENT_ID", "MLFLOW_TRACKING_TOKEN"):
        monkeypatch.delenv(name, raising=False)
    default = presets.mlflow()
    assert default.details == {"endpoint": "http://127.0.0.1:5000/v1/traces", "experiment_id": "0"}
    with Receiver() as rx:
        monkeypatch.setenv("MLFLOW_TRACKING_URI", rx.url + "/")
        monkeypatch.setenv("MLFLOW_EXPERIMENT_ID", "17")
        monkeypatch.setenv("MLFLOW_TRACKING_TOKEN", SECRET)
        config = configure(exporters=["mlflow"], frameworks=[], set_global=False)
        _span(config, "to-mlflow")
        config.shutdown()
        (request,) = rx.requests
        names = [s.name for s in rx.spans()]
    assert request.path == "/v1/traces" and names == ["to-mlflow"]
    assert request.headers["x-mlflow-experiment-id"] == "17"
    assert request.headers["authorization"] == f"Bearer {SECRET}"
    assert SECRET not in repr(config)
    monkeypatch.delenv("MLFLOW_TRACKING_TOKEN")
    explicit = presets.mlflow("http://mlflow.internal:5000/v1/traces", experiment_id=3)
    assert explicit.details == {"endpoint": "http://mlflow.internal:5000/v1/traces", "experiment_id": "3"}


@pytest.mark.parametrize(("variable", "preset"), [
    ("PHOENIX_COLLECTOR_ENDPOINT", "phoenix"), ("LANGFUSE_HOST", "langfuse"), ("MLFLOW_TRACKING_URI", "mlflow"),
    ("OTEL_EXPORTER_OTLP_ENDPOINT", "otlp"), ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "otlp"),
])
@pytest.mark.parametrize("value", ["127.0.0.1:6006", "localhost", "file:///tmp/mlruns", "http://", "http://[::1",
                                   "http://h:99999", "http://h:port"])
def test_an_endpoint_without_scheme_fails_at_configure(monkeypatch: pytest.MonkeyPatch, variable: str,
                                                        preset: str, value: str) -> None:
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-1")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)
    monkeypatch.setenv(variable, value)
    with pytest.raises(ValueError, match=f"^{variable} must be an http:// or https:// URL"):
        configure(exporters=[preset], frameworks=[], set_global=False)


@pytest.mark.parametrize(("preset", "variable"), [
    ("phoenix", "PHOENIX_API_KEY"), ("mlflow", "MLFLOW_TRACKING_TOKEN"), ("mlflow", "MLFLOW_EXPERIMENT_ID"),
    ("langfuse", "LANGFUSE_PUBLIC_KEY"), ("langfuse", "LANGFUSE_SECRET_KEY")])
@pytest.mark.parametrize("bad", ["\n", "\r\nx-evil: 1", " "])
def test_a_key_no_header_can_carry_fails_at_configure_without_showing_it(
        monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, preset: str, variable: str,
        bad: str) -> None:
    """A key with a trailing newline (read from a file, a Kubernetes secret): before, ``configure()`` took it,
    every export then failed in the batch thread, and requests' error logged the value, key and all
    (``Invalid ... header value: 'Bearer <key>\\n'``); Langfuse's Basic credential hid it in base64, refused
    with 401. Now a ``ValueError`` naming the variable, never the key; the argument form too."""
    monkeypatch.setenv("LANGFUSE_PUBLIC_KEY", "pk-lf-1")
    monkeypatch.setenv("LANGFUSE_SECRET_KEY", SECRET)
    monkeypatch.setenv(variable, SECRET + bad)
    with pytest.raises(ValueError) as error:
        configure(exporters=[preset], frameworks=[], set_global=False)
    assert str(error.value).startswith(f"{variable} cannot be sent as an HTTP header") and SECRET not in str(error.value)
    assert SECRET not in caplog.text
    argument = {"PHOENIX_API_KEY": "api_key", "MLFLOW_TRACKING_TOKEN": "token", "MLFLOW_EXPERIMENT_ID": "experiment_id",
                "LANGFUSE_PUBLIC_KEY": "public_key", "LANGFUSE_SECRET_KEY": "secret_key"}[variable]
    monkeypatch.setenv(variable, "fine")
    with pytest.raises(ValueError, match=f"^the {argument}= argument cannot be sent as an HTTP header"):
        getattr(presets, preset)(**{argument: SECRET + bad})
    with pytest.raises(ValueError, match="^the headers= argument's 'x-key' cannot be sent as an HTTP header"):
        presets.otlp("http://127.0.0.1:4318/v1/traces", headers={"x-key": SECRET + bad})


@pytest.mark.parametrize("timeout", ["abc", "2", 0, -1, float("nan"), float("inf"), True])
@pytest.mark.parametrize("preset", ["otlp", "phoenix", "mlflow", "langfuse"])
def test_a_timeout_that_is_not_a_positive_number_fails_at_configure(preset: str, timeout: object) -> None:
    """``presets.phoenix(timeout="abc")`` was taken; every export then failed in the batch processor's thread (a
    ``TypeError`` traceback in the application's log, the spans lost). Now ``configure()`` raises, naming it."""
    keys = {"public_key": "pk-lf-1", "secret_key": SECRET} if preset == "langfuse" else {}
    made = getattr(presets, preset)(timeout=timeout, **keys)
    with pytest.raises(ValueError, match=rf"^the timeout= argument must be a positive number of seconds, got "):
        configure(exporters=[made], frameworks=[], set_global=False)


@pytest.mark.parametrize("value", ["0", "-1", "nan", "inf", "abc"])
@pytest.mark.parametrize("preset", ["otlp", "otlp-grpc", "phoenix", "mlflow", "langfuse"])
def test_a_timeout_variable_every_export_would_fail_with_is_ignored_with_a_warning(
        preset: str, value: str, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture) -> None:
    """``OTEL_EXPORTER_OTLP_TIMEOUT=0`` (or -1, nan, inf) was taken by ``configure()`` and reported by no one; the
    OpenTelemetry exporters then failed every export with it ("the timeout cannot be set to a value less than or
    equal to 0"), the spans lost. Last round ``configure()`` raised instead, against the OpenTelemetry
    specification's rule for a numeric environment variable out of its range: warn and ignore it, as if unset. Now
    it does that, over HTTP and gRPC: one WARNING naming the variable, the other variable (the traces one, read
    first) or 10 s used, and spans exported; ``doctor`` lists it as a problem. ``abc`` (no number) made
    ``configure()`` raise over gRPC, while the HTTP exporter warned and took 10 s itself: now the same rule."""
    from otel_agents._spans import settings
    from otel_agents.semconv import Kind

    for variable in _OTLP_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setattr(settings, "_warned_variables", set())
    keys = {"public_key": "pk-lf-1", "secret_key": SECRET} if preset == "langfuse" else {}
    with Receiver() as rx:
        endpoint = {"otlp": {"endpoint": f"{rx.url}/v1/traces"}, "otlp-grpc": {}}.get(preset, {})
        made = presets.otlp(protocol="grpc") if preset == "otlp-grpc" else getattr(presets, preset)(**endpoint, **keys)
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", value)
        with caplog.at_level(logging.WARNING, logger="otel_agents"):
            config = configure(exporters=[made], frameworks=[], set_global=False)  # raised (before): ValueError
        assert [r.getMessage() for r in caplog.records if r.name == "otel_agents"] == [
            f"otel_agents: OTEL_EXPORTER_OTLP_TIMEOUT={value!r} is not valid; it must be a positive number of "
            "seconds (every export would fail with it); ignored, as if unset"]
        if preset == "otlp":  # exported (before the fix, with the timeout of 0: every export failed)
            from otel_agents._spans import Telemetry

            Telemetry(config.tracer_provider).start_span(Kind.TOOL, "lookup").end()
            assert config.tracer_provider.force_flush(30_000) and len(rx.requests) == 1, rx.requests
        config.shutdown()
    from otel_agents.exporters.presets import _checked_timeout

    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", value)  # read first: ignored, the next one taken
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "5")
    assert _checked_timeout(None) == 5.0
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "7")  # valid: the exporter reads it itself
    assert _checked_timeout(None) is None
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TRACES_TIMEOUT")
    monkeypatch.delenv("OTEL_EXPORTER_OTLP_TIMEOUT")
    if preset == "otlp" and value == "0":
        env = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_EXPORTER_OTLP_TRACES_")}
        doctor = subprocess.run([sys.executable, "-m", "otel_agents.cli", "doctor"], capture_output=True, text=True,
                                env={**env, "OTEL_AGENTS_EXPORTERS": "otlp", "OTEL_EXPORTER_OTLP_TIMEOUT": value},
                                timeout=120)
        assert doctor.returncode == 1 and doctor.stderr == "", doctor.stderr
        assert "-> http://localhost:4318/v1/traces: problem: OTEL_EXPORTER_OTLP_TIMEOUT='0' is not valid; it must " \
               "be a positive number of seconds (every export would fail with it); ignored, as if unset" \
            in doctor.stdout, doctor.stdout  # then, with nothing on port 4318, its refusal (tried all the same)


_OTLP_VARIABLES = ("OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "OTEL_EXPORTER_OTLP_ENDPOINT",
                   "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
                   "OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT", "OTEL_EXPORTER_OTLP_COMPRESSION",
                   "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "OTEL_EXPORTER_OTLP_INSECURE",
                   "OTEL_EXPORTER_OTLP_TRACES_INSECURE")
ALLOWED = "allowed: grpc, http/protobuf (the OpenTelemetry Python SDK has no http/json exporter)"


@pytest.fixture
def otlp_env(monkeypatch: pytest.MonkeyPatch):
    """No ``OTEL_EXPORTER_OTLP_*`` variable from the environment the tests run in; ``set(**values)`` sets some."""
    for name in _OTLP_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    return lambda **values: [monkeypatch.setenv(k, v) for k, v in values.items()]


@pytest.mark.parametrize(("variables", "named", "used"), [
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_PROTOCOL='http/json'", "http/protobuf"),
    ({"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http/json"}, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL='http/json'",
     "http/protobuf"),
    ({"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "gprc ", "OTEL_EXPORTER_OTLP_PROTOCOL": "GRPC"},
     "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL='gprc '", "grpc"),
    ({"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "http", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf"},
     "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL='http'", "http/protobuf"),
])
def test_an_unknown_protocol_variable_is_ignored_with_a_warning(
        otlp_env, variables: dict[str, str], named: str, used: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """A protocol the SDK has no exporter for (``http/json``, a typo) made ``configure()`` raise, against the
    OpenTelemetry specification's rule for an enum value it does not recognise (warn, and ignore the setting), which
    the numeric variables follow. Now one WARNING names the variable and the allowed values and it is ignored, as
    if unset: the generic variable (the traces one is read first, as the spec says), else ``http/protobuf``;
    ``doctor`` lists it as a problem. A ``protocol=`` argument other than the two still raises, naming it."""
    from otel_agents._spans import settings
    from otel_agents.cli import doctor

    monkeypatch.setattr(settings, "_warned_variables", set())
    otlp_env(OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9", **variables)
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        config = configure(exporters=["otlp"], frameworks=[], set_global=False)  # raised (before): ValueError
    config.shutdown()
    assert config.exporters[0].details["protocol"] == used
    assert [r.getMessage() for r in caplog.records if r.name == "otel_agents"] == [
        f"otel_agents: {named} is not valid; {ALLOWED}; ignored, as if unset"]
    monkeypatch.setenv("OTEL_AGENTS_EXPORTERS", "otlp")
    line = doctor.exporter_lines()[1]
    assert f": problem: {named} is not valid; {ALLOWED}; ignored, as if unset" in line, line
    with pytest.raises(ValueError, match=rf"^the protocol= argument 'http/json' is not an OTLP protocol otel-agents "
                                         rf"can send spans over; {re.escape(ALLOWED)}$"):
        presets.otlp(protocol="http/json")


@pytest.mark.parametrize(("value", "used"), [("HTTP/PROTOBUF", "http/protobuf"), ("Grpc", "grpc"),
                                             (" gRPC ", "grpc"), ("Http/Protobuf", "http/protobuf")])
def test_a_protocol_is_read_in_any_case(otlp_env, value: str, used: str, caplog: pytest.LogCaptureFixture) -> None:
    """The specification asks enum values to be case-insensitive; ``HTTP/PROTOBUF`` or ``Grpc`` was an unknown
    protocol, ignored with a WARNING (``ecp serve``, ``--to otlp`` too: the same reader). (The SDK's own
    ``opentelemetry-instrument`` set-up matches them exactly: ``doctor``'s line for it still says so.)"""
    otlp_env(OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=value, OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9")
    with caplog.at_level(logging.WARNING):
        assert presets.otlp().details["protocol"] == used
        assert presets.otlp(protocol=value).details["protocol"] == used
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def _grpc_exporter(config: otel_agents.Configuration):
    from opentelemetry.exporter.otlp.proto.grpc.trace_exporter import OTLPSpanExporter as GrpcExporter

    (processor,) = config.processors
    exporter = processor._batch_processor._exporter  # the SDK's BatchSpanProcessor keeps it there
    assert isinstance(exporter, GrpcExporter), type(exporter)
    return exporter


@pytest.mark.parametrize(("variables", "endpoint", "insecure"), [
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "localhost:4317", True),  # the spec's gRPC default, not :4318/v1/traces
    ({"OTEL_EXPORTER_OTLP_PROTOCOL": " grpc", "OTEL_EXPORTER_OTLP_ENDPOINT": "https://collector.example:4317"},
     "collector.example:4317", False),  # no /v1/traces over gRPC; https: TLS
    ({"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/protobuf",
      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT": "http://traces.example:14317", "OTEL_EXPORTER_OTLP_ENDPOINT":
      "http://other.example:4317"}, "traces.example:14317", True),  # the traces variables win
    ({"OTEL_EXPORTER_OTLP_TRACES_PROTOCOL": "grpc", "OTEL_EXPORTER_OTLP_PROTOCOL": "http/json",
      "OTEL_EXPORTER_OTLP_ENDPOINT": "http://collector.example:4317", "OTEL_EXPORTER_OTLP_INSECURE": "false"},
     "collector.example:4317", False),  # the generic protocol is not read; the insecure variable is
])
def test_the_otlp_preset_sends_grpc_when_the_environment_says_so(otlp_env, variables: dict[str, str], endpoint: str,
                                                                 insecure: bool) -> None:
    """``OTEL_EXPORTER_OTLP_PROTOCOL=grpc`` was a ``ValueError``: ``opentelemetry-instrument`` takes it (and its
    distro defaults to it). Now the ``otlp`` preset builds the SDK's OTLP/gRPC exporter, which reads endpoint,
    insecure, headers, timeout and compression from the variables as it does under ``opentelemetry-instrument``."""
    from grpc import Compression

    otlp_env(**variables, OTEL_EXPORTER_OTLP_TRACES_HEADERS="x-team=ai,authorization=Bearer%20t0k",
             OTEL_EXPORTER_OTLP_HEADERS="x-ignored=1", OTEL_EXPORTER_OTLP_TRACES_TIMEOUT="3",
             OTEL_EXPORTER_OTLP_COMPRESSION="gzip")
    config = configure(exporters=["otlp"], frameworks=[], set_global=False)
    try:
        exporter = _grpc_exporter(config)
        assert (exporter._endpoint, exporter._insecure) == (endpoint, insecure)
        assert dict(exporter._headers) == {"x-team": "ai", "authorization": "Bearer t0k"}
        assert (exporter._timeout, exporter._compression) == (3.0, Compression.Gzip)
        assert config.exporters[0].details["protocol"] == "grpc" and "t0k" not in repr(config)
    finally:
        config.shutdown()


@pytest.mark.parametrize(("protocol", "traces", "generic", "used"), [
    ("http/protobuf", "brotli", "GZIP", "gzip"),  # the generic variable then applies (read in any case)
    ("grpc", "deflate", "Gzip", "gzip"),  # the SDK's gRPC exporter takes gzip only
    ("grpc", "zstd", "none", "none"),  # none, the default, it refused too
])
def test_an_unknown_compression_variable_is_ignored_with_a_warning(
        otlp_env, protocol: str, traces: str, generic: str, used: str, monkeypatch: pytest.MonkeyPatch,
        caplog: pytest.LogCaptureFixture) -> None:
    """A compression the exporter does not take made ``configure()`` raise over gRPC (the SDK's exporter raised at
    construction, for ``none`` too), and over HTTP the SDK's exporter warned ``Unsupported compression type``
    without naming the variable and sent uncompressed, the valid generic variable unread. Now, as for an unknown
    protocol (the OpenTelemetry specification's rule for an enum value), one WARNING names the variable and what the
    protocol's exporter takes, and it is ignored, as if unset: the generic variable applies, read in any case;
    ``doctor`` lists it as a problem; a ``compression=`` argument the exporter does not take is a ValueError."""
    from otel_agents._spans import settings
    from otel_agents.cli import doctor

    monkeypatch.setattr(settings, "_warned_variables", set())
    allowed = {"http/protobuf": "gzip, deflate, none", "grpc": "gzip, none"}[protocol]
    otlp_env(OTEL_EXPORTER_OTLP_PROTOCOL=protocol, OTEL_EXPORTER_OTLP_ENDPOINT="http://127.0.0.1:9",
             OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=traces, OTEL_EXPORTER_OTLP_COMPRESSION=generic)
    named = f"OTEL_EXPORTER_OTLP_TRACES_COMPRESSION={traces!r} is not valid; allowed over {protocol}: {allowed}; " \
            "ignored, as if unset"
    with caplog.at_level(logging.WARNING):
        config = configure(exporters=["otlp"], frameworks=[], set_global=False)  # raised over gRPC (before)
    (processor,) = config.processors
    compression = processor._batch_processor._exporter._compression
    config.shutdown()
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING] == [f"otel_agents: {named}"]
    assert _compression_name(compression) == used  # over HTTP none (before): the generic variable was not read
    monkeypatch.setenv("OTEL_AGENTS_EXPORTERS", "otlp")
    line = doctor.exporter_lines()[1]
    assert f": problem: {named}" in line and "OpenTelemetry exporter says" not in line, line
    with pytest.raises(ValueError, match=rf"^the compression= argument {traces!r} is not valid; allowed over "
                                         rf"{protocol}: {allowed}$"):
        presets.otlp(protocol=protocol, compression=traces)
    exporter = presets.otlp(protocol=protocol, compression=" GZIP ").build()
    exporter.shutdown()
    assert _compression_name(exporter._compression) == "gzip"


def _compression_name(compression) -> str:
    """An SDK exporter's compression as its variable's value (gRPC's enum, or the HTTP exporter's, by value)."""
    import grpc

    if isinstance(compression, grpc.Compression):
        return {grpc.Compression.Gzip: "gzip", grpc.Compression.NoCompression: "none"}[compression]
    return compression.value


def test_otlp_preset_arguments_win_over_the_environment(otlp_env) -> None:
    """``presets.otlp(endpoint, headers, timeout=, protocol=)``: an argument wins over its variable; ``endpoint``
    does not choose the protocol (as ``--exporter_otlp_endpoint`` does not for ``opentelemetry-instrument``);
    headers are added to the variables' over gRPC too (the SDK's gRPC exporter alone would drop the variables')."""
    otlp_env(OTEL_EXPORTER_OTLP_PROTOCOL="http/protobuf", OTEL_EXPORTER_OTLP_HEADERS="x-env=1,x-team=env")
    config = configure(exporters=[presets.otlp("http://127.0.0.1:4317", {"X-Team": "ai"}, timeout=2,
                                               protocol="grpc")], frameworks=[], set_global=False)
    exporter = _grpc_exporter(config)
    config.shutdown()
    assert (exporter._endpoint, exporter._timeout) == ("127.0.0.1:4317", 2)
    assert dict(exporter._headers) == {"x-env": "1", "x-team": "ai"}
    otlp_env(OTEL_EXPORTER_OTLP_TRACES_PROTOCOL="grpc")
    assert presets.otlp("http://127.0.0.1:4317").details["protocol"] == "grpc"
    assert presets.otlp("http://127.0.0.1:4318/v1/traces", protocol="http/protobuf").details["protocol"] == \
        "http/protobuf"
    otlp_env(OTEL_EXPORTER_OTLP_TRACES_PROTOCOL=" http/protobuf ")
    assert presets.otlp().details["protocol"] == "http/protobuf"


def test_grpc_without_its_exporter_names_the_package_and_the_extra(otlp_env, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without ``opentelemetry-exporter-otlp-proto-grpc`` the error names it and our extra, before anything global
    changes (the global provider, the instrumentation)."""
    from opentelemetry import trace

    from otel_agents import _configure

    monkeypatch.setitem(sys.modules, "opentelemetry.exporter.otlp.proto.grpc.trace_exporter", None)  # not importable
    otlp_env(OTEL_EXPORTER_OTLP_PROTOCOL="grpc")
    before = (trace.get_tracer_provider(), _configure._latest)
    with pytest.raises(ImportError, match=re.escape(
            "the otlp preset over gRPC (OTEL_EXPORTER_OTLP_PROTOCOL=grpc) needs the OTLP exporter for grpc "
            "(opentelemetry-exporter-otlp-proto-grpc): pip install 'otel-agents[otlp-grpc]'")):
        configure(exporters=["otlp"])
    assert (trace.get_tracer_provider(), _configure._latest) == before


@pytest.mark.parametrize(("value", "example"), [
    ("127.0.0.1:6006", "http://127.0.0.1:6006"), ("localhost", "http://localhost"),
    ("grpc://collector:4317", "http://collector:4317"),
    ("sqlite:///mlflow.db", None), ("file:///tmp/mlruns", None), ("file:/tmp/mlruns", None), ("http://", None)])
def test_an_endpoint_error_suggests_only_a_url_that_makes_sense(value: str, example: str | None) -> None:
    """``MLFLOW_TRACKING_URI=sqlite:///mlflow.db`` was answered "(e.g. http://sqlite:///mlflow.db)": the example
    put ``http://`` before any value. It is given where the value is a host (and port) or a URL of another scheme
    with a host, and left out where no URL of that value would make sense (a file, a database)."""
    with pytest.raises(ValueError) as raised:
        presets.check_url(value, "MLFLOW_TRACKING_URI")
    message = str(raised.value)
    assert message.startswith(f"MLFLOW_TRACKING_URI must be an http:// or https:// URL with a host, got {value!r}")
    assert message.endswith(f"(e.g. {example})" if example else repr(value)), message


def test_an_endpoint_argument_without_scheme_names_the_argument() -> None:
    with pytest.raises(ValueError, match="the endpoint= argument must be an http"):
        presets.phoenix("127.0.0.1:6006")
    with pytest.raises(ValueError, match="the url= argument must be an http"):
        presets.mlflow("127.0.0.1:5000")
    with pytest.raises(ValueError, match="the host= argument must be an http"):
        presets.langfuse("cloud.langfuse.com", public_key="pk", secret_key="sk")
    with pytest.raises(ValueError, match="the endpoint= argument must be an http"):
        presets.otlp("collector:4318/v1/traces")


@pytest.mark.parametrize("value", ["no", "false", 0, 1, None])
def test_set_global_takes_only_a_bool(value: object) -> None:
    """``set_global="no"`` was truthy: the provider became the global one against the caller's word. Now anything
    but ``True``/``False`` is a ``TypeError`` naming the argument, before anything global changes."""
    from opentelemetry import trace

    from otel_agents import _configure

    before = (trace.get_tracer_provider(), _configure._latest)
    with pytest.raises(TypeError, match=rf"^set_global must be True or False, not {re.escape(repr(value))}$"):
        configure(exporters=[], frameworks=[], set_global=value)  # type: ignore[arg-type]
    assert (trace.get_tracer_provider(), _configure._latest) == before


@pytest.mark.parametrize("value", [5, b"bot", ["bot"]])
def test_service_name_takes_only_a_str(value: object) -> None:
    """``service_name=5`` became an int ``service.name`` (a string in every OpenTelemetry resource): now a
    ``TypeError`` naming the argument, before anything global changes."""
    from opentelemetry import trace

    from otel_agents import _configure

    before = (trace.get_tracer_provider(), _configure._latest)
    with pytest.raises(TypeError, match=rf"^service_name must be a str, not {type(value).__name__}$"):
        configure(service_name=value, exporters=[], frameworks=[], set_global=False)  # type: ignore[arg-type]
    assert (trace.get_tracer_provider(), _configure._latest) == before


@pytest.mark.parametrize(("attributes", "error", "message"), [
    ([("team", "ai")], TypeError, "resource_attributes must be a mapping of str keys to attribute values, not list"),
    ("team=ai", TypeError, "resource_attributes must be a mapping of str keys to attribute values, not str"),
    ({1: "ai"}, TypeError, "resource_attributes key 1 has type int, not str"),
    ({"": "ai"}, ValueError, "resource_attributes has an empty key"),
    ({"team": {"name": "ai"}}, TypeError, "resource_attributes['team'] has type dict; an OpenTelemetry attribute "
                                          "holds a str, bool, int or float, or a list or tuple of one of them"),
    ({"team": None}, TypeError, "resource_attributes['team'] has type NoneType; "),
    ({"ids": [1, "2"]}, TypeError, "resource_attributes['ids'] is a list mixing int and str; "),
    ({"ids": (1, 2.5)}, TypeError, "resource_attributes['ids'] is a tuple mixing float and int; "),
    ({"ids": [1, object()]}, TypeError, "resource_attributes['ids'] is a list with an item of type object; "),
    ({"big": 2 ** 63}, ValueError, "resource_attributes['big'] holds 9223372036854775808, outside the signed 64-bit "
                                   "range of an OpenTelemetry int attribute"),
])
def test_a_bad_resource_attribute_is_named_before_anything_changes(attributes: object, error: type,
                                                                   message: str) -> None:
    """A resource attribute outside OTel's standard types was taken as it came: a list of pairs read as pairs, a
    string a ``ValueError`` about "dictionary update sequence element #0", an int key turned into a str with an SDK
    warning, a dict or a mixed list kept by SDK 1.45 and dropped with a warning by 1.44, an int past 64 bits kept
    until every export failed. Now each is a ``TypeError``/``ValueError`` naming the key and the type, before
    anything global changes."""
    from opentelemetry import trace

    from otel_agents import _configure

    before = (trace.get_tracer_provider(), _configure._latest)
    with pytest.raises(error, match=f"^{re.escape(message)}"):
        configure(exporters=[], frameworks=[], resource_attributes=attributes)  # type: ignore[arg-type]
    assert (trace.get_tracer_provider(), _configure._latest) == before


def test_resource_attributes_otel_can_hold_are_kept() -> None:
    local = SnapshotExporter()
    config = configure(exporters=[local], frameworks=[], set_global=False, resource_attributes={
        "deployment.environment": "test", "replicas": 3, "ratio": 0.5, "canary": False, "zones": ["a", None, "b"],
        "ports": (4317, 4318), "none": [], "big": 2 ** 63 - 1})
    _span(config)
    config.shutdown()
    (span,) = local.spans
    assert {k: span.resource[k] for k in ("deployment.environment", "replicas", "ratio", "canary", "zones", "ports",
                                          "none", "big")} == {
        "deployment.environment": "test", "replicas": 3, "ratio": 0.5, "canary": False, "zones": ("a", None, "b"),
        "ports": (4317, 4318), "none": (), "big": 2 ** 63 - 1}
