"""The public one-call API: instrument(), uninstrument(), instrumentation_status()."""

from __future__ import annotations

import logging
import subprocess
import sys
from importlib import metadata

import pytest

import otel_agents
from otel_agents import _api
from otel_agents.instrumentors import FRAMEWORKS


def test_unknown_framework_names_raise_with_valid_ones() -> None:
    with pytest.raises(ValueError) as info:
        otel_agents.instrument(frameworks=["langchain", "autogen"])
    assert "autogen" in str(info.value)
    for name in FRAMEWORKS:
        assert name in str(info.value)


def test_frameworks_as_one_string_is_comma_separated(monkeypatch) -> None:
    # frameworks="openai" was iterated letter by letter: "unknown framework(s) ['o', 'p', 'e', ...]"
    monkeypatch.setattr(_api, "_installed_version", lambda fw: None)
    assert otel_agents.instrument(frameworks="openai, anthropic") == []
    status = otel_agents.instrumentation_status()
    assert status["openai"].reason == status["anthropic"].reason == "not installed"
    assert status["crewai"].reason != "not installed"  # not asked for


def test_unsupported_version_is_skipped_with_one_warning(monkeypatch, caplog) -> None:
    monkeypatch.setattr(_api, "_installed_version", lambda fw: "0.0.1")
    monkeypatch.setattr(_api, "_warned_versions", set())
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        assert otel_agents.instrument(frameworks=["crewai"]) == []
        assert otel_agents.instrument(frameworks=["crewai"]) == []
    warnings = [r.getMessage() for r in caplog.records if "crewai" in r.getMessage()]
    assert len(warnings) == 1 and "0.0.1" in warnings[0] and FRAMEWORKS["crewai"].supported in warnings[0]
    st = otel_agents.instrumentation_status()["crewai"]
    assert not st.instrumented and st.installed_version == "0.0.1" and "unsupported version 0.0.1" in st.reason


def test_not_installed_is_reported_quietly(monkeypatch, caplog) -> None:
    monkeypatch.setattr(_api, "_installed_version", lambda fw: None)
    with caplog.at_level(logging.DEBUG, logger="otel_agents"):
        assert otel_agents.instrument() == []
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]
    assert {s.reason for s in otel_agents.instrumentation_status().values()} == {"not installed"}


def test_entry_points_cover_every_framework() -> None:
    """Each framework is registered under opentelemetry_instrumentor for zero-code use."""
    eps = {ep.name: ep.value for ep in metadata.entry_points(group="opentelemetry_instrumentor")
           if ep.value.startswith("otel_agents.")}
    for name, fw in FRAMEWORKS.items():
        assert eps[name] == f"{fw.module}:{fw.cls}"


def test_distribution_gates_no_framework_for_the_loader() -> None:
    """opentelemetry-instrument's loader gates the whole distribution on its `instruments` and
    `instruments-any` extras; ours name no framework, each instrumentor checks its own instead, so an
    unsupported framework installed alone gives one error, not one per entry point
    (tests/backends/test_zero_code.py)."""
    reqs = metadata.requires("otel-agents") or []
    assert [r for r in reqs if 'extra == "instruments' in r] == []


def test_instrument_again_with_other_settings_takes_effect() -> None:
    """Same arguments: no change. Another provider or content setting: re-instrumented with it."""
    from langchain_core.runnables import RunnableLambda
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from tests.spans import SnapshotExporter

    first, second = SnapshotExporter(), SnapshotExporter()
    tp1, tp2 = TracerProvider(), TracerProvider()
    tp1.add_span_processor(SimpleSpanProcessor(first))
    tp2.add_span_processor(SimpleSpanProcessor(second))
    chain = RunnableLambda(lambda x: f"echo {x}").with_config(run_name="echo")
    try:
        assert otel_agents.instrument(tp1, frameworks=["langchain"]) == ["langchain"]
        assert otel_agents.instrument(tp1, frameworks=["langchain"]) == ["langchain"]
        chain.invoke("a")
        assert len(first.semantic()) == 1 and second.spans == []
        otel_agents.instrument(tp2, frameworks=["langchain"], capture_content=False)
        chain.invoke("b")
        assert len(first.semantic()) == 1
        (span,) = second.semantic()
        assert "input.value" not in span.attributes
    finally:
        otel_agents.uninstrument()


def test_instrument_returns_every_framework_instrumented_after_the_call() -> None:
    """``instrument(frameworks=["openai"])`` then ``instrument(frameworks=["anthropic"])`` returned ``["anthropic"]``
    while openai stayed instrumented; the docstring promises the frameworks now instrumented, which is what
    instrumentation_status() reports (calls add up, as BaseInstrumentor.instrument() calls do)."""
    try:
        assert otel_agents.instrument(frameworks=["openai"]) == ["openai"]
        both = otel_agents.instrument(frameworks=["anthropic"])
        assert both == [name for name in FRAMEWORKS if name in ("anthropic", "openai")]
        status = otel_agents.instrumentation_status()
        assert both == [name for name, st in status.items() if st.instrumented]
        assert otel_agents.instrument(frameworks=["openai"]) == both  # naming one again drops nothing
    finally:
        otel_agents.uninstrument()
    assert not any(st.instrumented for st in otel_agents.instrumentation_status().values())


def test_instrument_imports_no_framework_and_installs_on_import() -> None:
    """instrument() never pays for importing a framework; one imported later is instrumented then."""
    import subprocess
    import sys

    code = """
import sys
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
import otel_agents
exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
from otel_agents.instrumentors import FRAMEWORKS
assert sorted(otel_agents.instrument(provider)) == EXPECTED, otel_agents.instrumentation_status()
heavy = [fw.import_name for fw in FRAMEWORKS.values() if fw.import_name in sys.modules]
assert heavy == [], heavy
from langchain_core.runnables import RunnableLambda
RunnableLambda(lambda x: x).with_config(run_name="late").invoke(1)
assert [s.name for s in exporter.get_finished_spans()] == ["late"], exporter.get_finished_spans()
"""
    from tests.frameworks import tested_here

    expected = sorted(tested_here(FRAMEWORKS))  # every framework installed here
    code = code.replace("EXPECTED", repr(expected))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr


def test_disabled_instrumentations_wildcard_disables_every_framework(monkeypatch) -> None:
    """``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS=*`` makes ``opentelemetry-instrument`` load no instrumentation;
    ``instrument()`` read it as a framework named ``*`` and instrumented every installed one."""
    monkeypatch.setattr(_api, "_status", {})
    monkeypatch.setenv("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", " * ")
    installed = [name for name, st in otel_agents.instrumentation_status().items()
                 if st.installed_version and not st.reason.startswith("unsupported")]
    assert installed and all(otel_agents.instrumentation_status()[name].reason ==
                             "disabled by OTEL_PYTHON_DISABLED_INSTRUMENTATIONS" for name in installed)
    assert otel_agents.instrument() == []
    assert otel_agents.instrument(frameworks=["openai"]) == ["openai"]  # named in the call: instrumented
    otel_agents.uninstrument()


def test_a_provider_that_is_not_one_is_a_type_error_before_anything_changes() -> None:
    """``instrument(tracer_provider=TracerProvider)`` (the class, no ``()``) or a string was an ``AttributeError``
    from inside the OTel API, raised after the decorators' providers had been changed to it."""
    from opentelemetry.sdk.metrics import MeterProvider
    from opentelemetry.sdk.trace import TracerProvider

    from otel_agents import manual

    followed = manual._followed
    for kwargs, name in (({"tracer_provider": TracerProvider}, "tracer_provider"),
                         ({"tracer_provider": "x"}, "tracer_provider"),
                         ({"meter_provider": MeterProvider}, "meter_provider")):
        with pytest.raises(TypeError, match=rf"^{name} must be None or a provider instance"):
            otel_agents.instrument(frameworks=[], **kwargs)
        assert manual._followed is followed
        explicit = manual._explicit
        with pytest.raises(TypeError, match=rf"^{name} must be None or a provider instance"):
            manual.set_providers(**kwargs)
        assert manual._explicit is explicit  # the decorators still follow instrument()


@pytest.mark.parametrize("bad", ["false", "true", 0, 1, "NO_CONTENT"])
def test_capture_content_must_be_a_bool_or_none(bad, monkeypatch) -> None:
    # capture_content="false" is truthy: it was taken as "on" and content was recorded
    from otel_agents import manual
    from otel_agents._spans.settings import Settings
    from otel_agents.evaluations import evaluation_results
    from otel_agents.instrumentors.openai import OpenAIInstrumentor

    followed = manual._followed
    monkeypatch.setattr(_api, "_installed_version", lambda fw: None)
    with pytest.raises(TypeError, match=r"capture_content must be True, False or None .*" + repr(bad)):
        otel_agents.instrument(frameworks=[], capture_content=bad)
    assert manual._followed is followed  # refused before anything changed
    with pytest.raises(TypeError, match="capture_content"):
        otel_agents.configure(exporters=[], frameworks=[], set_global=False, capture_content=bad)
    with pytest.raises(TypeError, match="capture_content"):
        Settings(capture_content=bad)
    with pytest.raises(TypeError, match="capture_content"):
        evaluation_results({"scenarios": []}, capture_content=bad)
    with pytest.raises(TypeError, match="capture_content"):
        OpenAIInstrumentor().instrument(capture_content=bad, skip_dep_check=True)
    assert not OpenAIInstrumentor().is_instrumented_by_opentelemetry
    for good in (True, False, None):
        assert Settings(capture_content=good).capture_content is good


def test_status_before_instrument_says_what_instrument_would_find(monkeypatch) -> None:
    """``otel-agents doctor`` runs no ``instrument()``: an installed framework of an unsupported version, or one
    ``OTEL_PYTHON_DISABLED_INSTRUMENTATIONS`` names, was 'not instrumented yet' as if it would be."""
    versions = {"crewai": "0.0.1", "langchain": FRAMEWORKS["langchain"].supported.split(",")[0].lstrip(">=")}
    monkeypatch.setattr(_api, "_installed_version", lambda fw: versions.get(fw.name))
    monkeypatch.setattr(_api, "_status", {})
    monkeypatch.setenv("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS", "requests, langchain")
    status = otel_agents.instrumentation_status()
    assert status["crewai"].reason == f"unsupported version 0.0.1 (supported: {FRAMEWORKS['crewai'].supported})"
    assert status["langchain"].reason == "disabled by OTEL_PYTHON_DISABLED_INSTRUMENTATIONS"
    assert status["openai"].reason == "not installed"
    monkeypatch.delenv("OTEL_PYTHON_DISABLED_INSTRUMENTATIONS")
    assert otel_agents.instrumentation_status()["langchain"].reason == "not instrumented yet"


def test_import_loads_only_what_is_used() -> None:
    """``import otel_agents`` loads no span layer, instrumentor registry, SDK set-up or exporter preset: every
    ``otel-agents`` command (``export``, ``demo``, the ``--help`` of each) imported them all, ~0.3 s of CPU a
    process. Each public name is imported at its first use, the same object as its module's, and ``import *``,
    ``dir()`` and an unknown name behave as before."""
    code = ("import sys, otel_agents\n"
            "print(sorted(m for m in sys.modules if m.startswith('otel_agents.')))\n"
            "from otel_agents import *\n"
            "print(sorted(n for n in otel_agents.__all__ if n not in globals()), "
            "sorted(set(otel_agents.__all__) - set(dir(otel_agents))))\n"
            # the subpackages the package imported before, as attributes without an import of their own
            # (examples/_tracing.py calls otel_agents.manual.set_providers: it raised AttributeError)
            "print(otel_agents.manual.set_providers.__name__, otel_agents.exporters.presets.__name__, "
            "otel_agents.semconv.Kind.__name__)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert proc.stdout == "[]\n[] []\nset_providers otel_agents.exporters.presets Kind\n", proc.stdout
    from otel_agents import _api, _configure, context, manual, semconv
    from otel_agents.exporters import presets

    for name in otel_agents.__all__:
        module = {"presets": presets, "Kind": semconv, "__version__": otel_agents}.get(name)
        module = module or next(m for m in (_api, _configure, context, manual) if hasattr(m, name))
        assert getattr(otel_agents, name) is (module if name == "presets" else getattr(module, name)), name
    with pytest.raises(AttributeError, match="has no attribute 'instrumentors_of'"):
        otel_agents.instrumentors_of  # noqa: B018
    with pytest.raises(AttributeError, match="'otel_agents.exporters' has no attribute 'presetz'"):
        otel_agents.exporters.presetz  # noqa: B018


def test_a_framework_release_that_moved_what_we_hook_never_breaks_instrument(monkeypatch, caplog) -> None:
    """A smolagents release inside our range that dropped a name our wiring imports (``ActionOutput``): the
    instrumentor's ``instrument()`` raised that ImportError into the application when smolagents was already
    imported (and under ``opentelemetry-instrument``, whose loader re-raises, no instrumentor after ours was
    loaded); ``otel_agents.instrument()`` then reported smolagents instrumented. Now: one WARNING, smolagents
    runs untraced, the status says why, and a later call, once it can, instruments it."""
    import smolagents.agents
    from opentelemetry.sdk.trace import TracerProvider

    from otel_agents.instrumentors import _base
    from otel_agents.instrumentors.smolagents import SmolagentsInstrumentor

    monkeypatch.setattr(_base, "_failed", set(), raising=False)
    monkeypatch.delattr(smolagents.agents, "ActionOutput")
    monkeypatch.delitem(sys.modules, "otel_agents.instrumentors.smolagents._wiring", raising=False)
    run = smolagents.agents.MultiStepAgent.run
    inst = SmolagentsInstrumentor()
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        try:
            inst.instrument(tracer_provider=TracerProvider())
            assert isinstance(inst.install_error, ImportError) and "ActionOutput" in str(inst.install_error)
            assert smolagents.agents.MultiStepAgent.run is run  # nothing of ours left on
        finally:
            inst.uninstrument()
        try:
            assert otel_agents.instrument(frameworks=["smolagents"]) == []
            status = otel_agents.instrumentation_status()["smolagents"]
            assert not status.instrumented and status.reason.startswith("failed: ImportError(") \
                and "ActionOutput" in status.reason
        finally:
            otel_agents.uninstrument()
    said = [r.getMessage() for r in caplog.records if "could not instrument smolagents" in r.getMessage()]
    assert len(said) == 1 and "runs untraced" in said[0], said
    monkeypatch.undo()  # the release that has the name again
    try:
        assert otel_agents.instrument(frameworks=["smolagents"]) == ["smolagents"]
        assert smolagents.agents.MultiStepAgent.run is not run
    finally:
        otel_agents.uninstrument()
    assert smolagents.agents.MultiStepAgent.run is run
