"""The CLI's commands run in-process (``otel_agents.cli.main``, as a script or a notebook may) leave the stop
signals as they found them. An ignored signal stays ignored across ``exec``: a demo interrupted in-process left
SIGINT ignored, and every process started after it (a later test's ``otel-agents fold -``) could no longer be
stopped with Ctrl-C."""

from __future__ import annotations

import argparse
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from otel_agents.cli import _children, demo, main


def _dispositions() -> tuple:
    return tuple(signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))


def _child_ignores_sigint() -> bool:
    out = subprocess.run([sys.executable, "-c", "import signal; print(signal.getsignal(signal.SIGINT))"],
                         capture_output=True, text=True, check=True).stdout
    return "SIG_IGN" in out


@pytest.mark.parametrize("stop", [KeyboardInterrupt(), demo._Stopped(signal.SIGTERM)], ids=["SIGINT", "SIGTERM"])
def test_an_interrupted_demo_leaves_the_stop_signals_as_it_found_them(stop: BaseException, monkeypatch) -> None:
    def interrupted(args: argparse.Namespace, held: object) -> int:
        raise stop

    monkeypatch.setattr(demo, "_run", interrupted)
    monkeypatch.setattr(_children, "CHILDREN", _children.Children())  # stopped for good once interrupted
    before = _dispositions()
    assert demo.run(argparse.Namespace()) == (130 if isinstance(stop, KeyboardInterrupt) else 143)
    assert _dispositions() == before
    assert not _child_ignores_sigint()


def test_ecp_serve_in_process_leaves_the_stop_signals_as_it_found_them(tmp_path: Path, capsys) -> None:
    before = _dispositions()
    assert main(["ecp", "serve", "--replay", str(tmp_path / "missing.jsonl")]) == 2
    assert "missing.jsonl" in capsys.readouterr().err
    assert _dispositions() == before
