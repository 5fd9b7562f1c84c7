"""Shared fixtures: a tracer provider per test whose spans are snapshotted at export time."""

from __future__ import annotations

import os
import sys

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# CrewAI: no telemetry, no tracing, no network in tests (cases README).
os.environ.setdefault("CREWAI_DISABLE_TELEMETRY", "true")
os.environ.setdefault("CREWAI_TRACING_ENABLED", "false")
os.environ.setdefault("OTEL_SDK_DISABLED", "false")
os.environ.setdefault("CREWAI_DISABLE_TRACKING", "true")
# LiteLLM (the frameworks' LiteLLM-backed models, .venv-litellm) reads its bundled price list instead of fetching it
# from GitHub when it is imported
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from hypothesis import HealthCheck, settings as hypothesis_settings  # noqa: E402

from tests.frameworks import isolated_elsewhere  # noqa: E402

# Property tests check what our code returns, never how fast: Hypothesis's own clocks (its 200 ms deadline per
# example, its health check on slow data generation) are timed assertions, which fail on a loaded machine
# (1.2 s a draw under the helpers' load) and are not how speed is measured here (benchmarks are). A test's own
# @settings still set its number of examples.
hypothesis_settings.register_profile("otel-agents", deadline=None, suppress_health_check=[HealthCheck.too_slow])
hypothesis_settings.load_profile("otel-agents")
from tests.spans import SnapshotExporter  # noqa: E402

# A framework tested in a venv of its own (Makefile ISOLATED): its directory is collected there, not here.
collect_ignore = [name for name in isolated_elsewhere()]


# `make test` runs pytest-xdist with `--dist loadfile`: a test file stays on one worker, so its module fixtures
# (the demo run, served agents) run once. (`--dist loadgroup` with an `xdist_group` per file did the same until
# pytest 9, whose nodes keep their id in `_id`: pytest-xdist 3.8 still renames `_nodeid` to add the group, so
# the groups were silently ignored and the demo fixture ran on both workers.) tests/backends' session servers
# (Phoenix, MLflow) start at most once per worker: the files that use Phoenix are one unit of work (SHARED_SCOPES),
# so one worker starts it (~15 s of CPU a start, measured 2026-12-07).
SHARED_SCOPES = {f"tests/backends/{name}.py": "tests/backends/test_phoenix*.py"
                 for name in ("test_phoenix", "test_phoenix_annotations", "test_phoenix_export")}
# Units of work handed out first, most CPU first (CPU seconds of the file, children included, measured
# 2026-12-07 with scripts/cpu_per_test.py), then pytest-xdist's own order (most tests first): a unit of a few
# tests but minutes of subprocesses, handed out last, kept one worker busy alone at the end of the suite while
# the other had nothing left (the Phoenix and MLflow files, the benchmark smoke tests were among the last).
FIRST_SCOPES = (
    "tests/customer_support/test_customer_support.py",  # 121 s: the demo, 39 `ecp run`s
    "tests/test_benchmarks_smoke.py",  # 48 s: benchmarks/run.py --quick, and under callgrind
    "tests/test_examples.py",  # 44 s
    "tests/backends/test_phoenix*.py",  # ~45 s: Phoenix, the frameworks it shows
    "tests/collect/test_collect.py",  # 32 s
    "tests/serve/test_server.py",  # 34 s (measured 2026-12-07 evening): every example's framework imported once
    "tests/backends/test_zero_code.py",  # 33 s, 5 tests: `opentelemetry-instrument` processes
    "tests/replay/test_replay.py",  # 29 s; ~13 s since its `ecp serve`s and `ecp run`s are forks (2026-12-08)
    "tests/a2a/test_a2a.py",  # 20 s
    "tests/mcp/test_mcp.py",  # 20 s
    "tests/backends/test_mlflow.py",  # MLflow's server
)


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadfile`` with SHARED_SCOPES' files in one unit of work and FIRST_SCOPES handed out first."""
    if config.getvalue("dist") != "loadfile":
        return None
    from xdist.scheduler import LoadFileScheduling

    class Scheduling(LoadFileScheduling):
        def _split_scope(self, nodeid: str) -> str:
            scope = super()._split_scope(nodeid)
            return SHARED_SCOPES.get(scope, scope)

        def schedule(self) -> None:
            first_call = self.collection is None
            super().schedule()  # the queue, and each worker's first units (the most tests first)
            if first_call and self.collection:
                for scope in reversed([s for s in FIRST_SCOPES if s in self.workqueue]):
                    self.workqueue.move_to_end(scope, last=False)

    return Scheduling(config, log)


@pytest.fixture
def exporter() -> SnapshotExporter:
    return SnapshotExporter()


@pytest.fixture
def provider(exporter: SnapshotExporter) -> TracerProvider:
    tp = TracerProvider()
    tp.add_span_processor(SimpleSpanProcessor(exporter))
    yield tp
    tp.shutdown()


@pytest.fixture
def app_tracer(provider: TracerProvider) -> trace.Tracer:
    """A tracer for the test's own 'application' spans, on the same provider."""
    return provider.get_tracer("tests.app")


@pytest.fixture(autouse=True)
def _no_span_left_current():
    """Every test ends with no span current (case X-2's invariant, checked everywhere)."""
    yield
    assert not trace.get_current_span().get_span_context().is_valid, "a span was left current"


@pytest.fixture(autouse=True)
def _decorators_follow_instrument_again():
    """A test (or an example it runs) that pinned the decorators' providers with ``manual.set_providers(p)``
    and failed, or forgot, before unpinning them would send a later test's decorated spans to ``p``."""
    yield
    from otel_agents import manual

    if manual._explicit:
        manual.set_providers()



def _signal_dispositions() -> tuple:
    """The worker's stop signals as the processes it starts inherit them: SIGINT and SIGTERM ignored or blocked
    (from ``/proc/thread-self/status``, what C code set too; only theirs: libraries set glibc's real-time signals)
    and Python's own handlers."""
    import signal

    stops = (1 << (signal.SIGINT - 1)) | (1 << (signal.SIGTERM - 1))
    try:
        with open("/proc/thread-self/status") as f:
            masks = tuple(int(line.split()[1], 16) & stops for line in f if line.startswith(("SigBlk:", "SigIgn:")))
    except OSError:  # not Linux
        masks = ()
    return masks, signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)


@pytest.fixture(autouse=True)
def _stop_signals_left_as_found():
    """A test (or the code it runs in-process: a CLI command's ``main``) that left SIGINT or SIGTERM ignored
    would pass that on to every process a later test of the same worker starts (an ignored signal stays
    ignored across ``exec``): a later Ctrl-C test then waited for a child that never heard it."""
    import signal

    before = _signal_dispositions()
    yield
    after = _signal_dispositions()
    if after != before:
        signal.signal(signal.SIGINT, before[1])
        signal.signal(signal.SIGTERM, before[2])
        pytest.fail(f"the test left the worker's stop signals changed: {before} -> {after}", pytrace=False)
@pytest.fixture
def envelopes(provider: TracerProvider) -> list:
    """The ECP envelopes the folding processor makes, live, from the runs on the test's provider."""
    from otel_agents.exporters.ecp import ECPFoldingProcessor

    got: list = []
    provider.add_span_processor(ECPFoldingProcessor(got.append))
    return got


@pytest.fixture
def client_file(provider: Any, tmp_path: Any) -> Any:
    """The client's spans also as an OTLP/JSON file (to fold with the server's, as a merged trace)."""
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    from otel_agents.exporters.file import OTLPJsonFileExporter

    path = tmp_path / "client-spans.jsonl"
    provider.add_span_processor(SimpleSpanProcessor(OTLPJsonFileExporter(path)))
    return path
