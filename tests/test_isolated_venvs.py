"""The frameworks tested in a venv of their own are really tested: ``make test`` builds and runs each one.

A framework with ``Framework.venv`` set must have its Makefile ``ISOLATED`` entry (extras with its own
extra and ``test``, tests including its directory), its pinned resolution ``constraints/<venv>.txt``,
and stay out of the ``all`` extra (which must install beside every other framework).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
import tomllib
from pathlib import Path

import pytest

from otel_agents.instrumentors._frameworks import FRAMEWORKS

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
ISOLATED = re.findall(r"^ISOLATED \+= (\S+)$", MAKEFILE, re.M)


def _make_var(name: str) -> str:
    match = re.search(rf"^{re.escape(name)} := (.*)$", MAKEFILE, re.M)
    assert match, f"Makefile: {name} missing"
    return match.group(1)


def test_the_makefile_runs_every_isolated_venv_in_make_test() -> None:
    recipe = MAKEFILE.split("\ntest:", 1)[1].split("\n\n", 1)[0]
    assert "$(MAKE) -s --no-print-directory .venv-$(n)/.installed-stamp" in recipe
    assert ".venv-$(n)/bin/python -m pytest $($(n)_TESTS)" in recipe


@pytest.mark.parametrize("name", [n for n, fw in FRAMEWORKS.items() if fw.venv] or [pytest.param(None, marks=pytest.mark.skip(reason="no framework needs a venv of its own"))])
def test_an_isolated_framework_has_its_venv_tests_and_pins(name: str) -> None:
    fw = FRAMEWORKS[name]
    assert fw.venv in ISOLATED, f"Makefile: ISOLATED += {fw.venv} missing"
    extras = _make_var(f"{fw.venv}_EXTRAS").split(",")
    assert "test" in extras and any(e.replace("-", "_") == name for e in extras), extras
    assert f"tests/{name}" in _make_var(f"{fw.venv}_TESTS").split()
    assert (ROOT / "constraints" / f"{fw.venv}.txt").is_file()
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert name.replace("_", "-") not in project["optional-dependencies"]["all"][0], "an isolated framework cannot be in `all`"


@pytest.mark.parametrize("venv", ISOLATED or [pytest.param(None, marks=pytest.mark.skip(reason="no venv of its own yet"))])
def test_every_isolated_venv_is_pinned_and_selects_tests(venv: str) -> None:
    assert (ROOT / "constraints" / f"{venv}.txt").is_file()
    assert _make_var(f"{venv}_TESTS").strip() and "test" in _make_var(f"{venv}_EXTRAS").split(",")


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
@pytest.mark.parametrize(("main", "isolated", "status", "installed"), [(1, 0, 1, True), (0, 1, 1, True),
                                                                     (0, 0, 0, True), (0, 1, 1, False)])
def test_make_test_runs_every_suite_and_fails_if_one_fails(tmp_path: Path, main: int, isolated: int,
                                                           status: int, installed: bool) -> None:
    """``make test`` with an isolated venv (a fake one, ``x``): the isolated suite runs (beside the main one,
    its output printed after the main suite's) even when the main suite failed, and the exit status is
    non-zero when either failed. Stub interpreters stand
    for the venvs (their stamps are newer than pyproject.toml, the pins and the installer: nothing is installed).
    The isolated venv is installed while the main suite runs: when its install fails (its stamp older than
    pyproject.toml, its stub interpreter's ``pip install`` exits 1), the main suite runs all the same, the isolated
    one does not, and the exit status is non-zero."""
    for name in ("Makefile", "pyproject.toml", "constraints.txt"):
        shutil.copy(ROOT / name, tmp_path / name)
    (tmp_path / "constraints").mkdir()
    (tmp_path / "constraints" / "x.txt").write_text("")
    for venv, code in ((".venv", main), (".venv-x", isolated)):
        (tmp_path / venv / "bin").mkdir(parents=True)
        python = tmp_path / venv / "bin" / "python"
        python.write_text(f"#!/bin/sh\necho {venv} \"$@\"\nexit {code}\n")
        python.chmod(0o755)
    (tmp_path / ".uv").mkdir()
    (tmp_path / ".uv" / ".installed-stamp").touch()  # the installer's bootstrap, done (without uv: pip)
    later = time.time() + 5
    for stamp in (".venv/.installed-stamp", ".venv-x/.installed-stamp"):
        (tmp_path / stamp).touch()
        os.utime(tmp_path / stamp, (later, later) if installed or stamp == ".venv/.installed-stamp" else (0, 0))
    run = subprocess.run(["make", "-s", "test", "ISOLATED=x", "x_EXTRAS=x,test", "x_TESTS=tests/x"], cwd=tmp_path,
                         capture_output=True, text=True, timeout=60)
    ran = [line.split() for line in run.stdout.splitlines() if line.startswith(".venv") and "pytest" in line]
    suites = [[".venv", "-m", "pytest", "-n"], [".venv-x", "-m", "pytest", "tests/x"]]
    assert [r[:4] for r in ran] == (suites if installed else suites[:1]), run.stdout
    assert all("--durations=10" in r for r in ran), run.stdout  # the ten slowest tests of every suite
    if not installed:
        assert ".venv-x -m pip install" in run.stdout and "== .venv-x: its install failed" in run.stdout, run.stdout
    assert (run.returncode != 0) == bool(status), run.stdout + run.stderr
