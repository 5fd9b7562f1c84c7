"""Opt-in status OK (issue 26): ``OTEL_AGENTS_STATUS_OK=true`` marks spans that end normally OK.

OTel's tracing spec asks instrumentation to leave the status unset on success unless configured
otherwise; Phoenix's span list then shows "—" where OpenInference instrumentations show a check.
"""

from __future__ import annotations

import pytest
from opentelemetry.trace import StatusCode

from otel_agents._spans import Settings, Telemetry
from tests.spans import SnapshotExporter


class Stop(BaseException):
    """A control-flow signal (like a framework's interrupt)."""


def _run(provider, settings=None) -> None:
    telemetry = Telemetry(provider, settings=settings, framework="manual")
    with telemetry.span("agent", "support"):
        with telemetry.span("tool", "lookup_order"):
            pass
        with pytest.raises(ValueError):
            with telemetry.span("tool", "refund"):
                raise ValueError("no such order")
        with pytest.raises(Stop):
            with telemetry.span("chain", "wait_for_human", is_control_flow=lambda e: isinstance(e, Stop)):
                raise Stop()
        paused = telemetry.start_span("chain", "paused")
        paused.mark_paused()
        paused.end()


def _statuses(exporter: SnapshotExporter) -> dict[str, StatusCode]:
    return {s.name: s.status for s in exporter.spans}


def test_status_stays_unset_by_default(monkeypatch, provider, exporter) -> None:
    monkeypatch.delenv("OTEL_AGENTS_STATUS_OK", raising=False)
    _run(provider)
    assert _statuses(exporter) == {
        "execute_tool lookup_order": StatusCode.UNSET, "execute_tool refund": StatusCode.ERROR,
        "wait_for_human": StatusCode.UNSET, "paused": StatusCode.UNSET, "invoke_agent support": StatusCode.UNSET}


def test_status_ok_from_the_environment(monkeypatch, provider, exporter) -> None:
    monkeypatch.setenv("OTEL_AGENTS_STATUS_OK", "true")
    _run(provider)
    assert _statuses(exporter) == {
        "execute_tool lookup_order": StatusCode.OK, "execute_tool refund": StatusCode.ERROR,
        "wait_for_human": StatusCode.UNSET, "paused": StatusCode.UNSET, "invoke_agent support": StatusCode.OK}


def test_settings_override_the_environment(monkeypatch, provider, exporter) -> None:
    monkeypatch.setenv("OTEL_AGENTS_STATUS_OK", "true")
    _run(provider, Settings(status_ok=False))
    assert StatusCode.OK not in _statuses(exporter).values()


def test_an_unknown_value_leaves_the_status_unset_and_warns_once(monkeypatch, provider, exporter, caplog) -> None:
    # "nah" was taken as off without a word; a typo of "true" should say why nothing turned OK
    import logging

    from otel_agents._spans import settings

    monkeypatch.setattr(settings, "_warned_variables", set())
    monkeypatch.setenv("OTEL_AGENTS_STATUS_OK", "nah")
    with caplog.at_level(logging.WARNING, logger="otel_agents"):
        _run(provider)
        _run(provider)
    assert StatusCode.OK not in _statuses(exporter).values()
    warned = [r.getMessage() for r in caplog.records if "OTEL_AGENTS_STATUS_OK" in r.getMessage()]
    assert len(warned) == 1 and "'nah'" in warned[0] and "unset" in warned[0], warned
