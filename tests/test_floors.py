"""The lower ends pyproject.toml claims are the versions ``make test`` tests.

Each venv ``make test`` runs a suite in is pinned by a constraints file: ``constraints.txt`` (.venv) and
``constraints/NAME.txt`` (.venv-NAME, Makefile ``ISOLATED``). A lower end that none of them pins is a claim no
test backs (``orjson>=3.10`` was one: 3.10 to 3.11.6 write ``1e16`` where the standard library writes
``1e+16``). ``.venv-floor`` holds the lower ends the other venvs' resolutions pull up; its pins are uv's
lowest-direct resolution of ``floor_EXTRAS``, so each of those requirements is pinned at its lower end there.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[1]
MAKEFILE = (ROOT / "Makefile").read_text(encoding="utf-8")
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
SELF = canonicalize_name(PROJECT["name"])


def _pins(path: Path) -> dict[str, str]:
    """``name==version`` lines of a constraints file (``pip freeze`` format), by canonical name."""
    pins = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        if "==" in line and not line.startswith(("#", "-")):
            name, version = line.split(";")[0].split("==")
            pins[canonicalize_name(name.strip())] = version.strip()
    return pins


PINS = {"constraints.txt": _pins(ROOT / "constraints.txt")} | {
    f"constraints/{p.name}": _pins(p) for p in sorted((ROOT / "constraints").glob("*.txt"))}


def _lower_end(requirement: Requirement) -> str | None:
    """The lowest version ``requirement`` allows, as written (``>=``, ``~=`` or ``==``), or ``None``."""
    ends = [s.version for s in requirement.specifier if s.operator in (">=", "~=", "==")]
    assert len(ends) <= 1, f"{requirement}: one lower end expected"
    return ends[0] if ends else None


def _requirements(groups: list[str]) -> list[tuple[str, Requirement]]:
    """``(group, requirement)`` for the core dependencies (``"core"``) and the named extras, without our own."""
    out = []
    for group in groups:
        for text in PROJECT["dependencies"] if group == "core" else PROJECT["optional-dependencies"][group]:
            requirement = Requirement(text)
            if canonicalize_name(requirement.name) != SELF:
                out.append((group, requirement))
    return out


CLAIMED = [(g, r) for g, r in _requirements(["core", *PROJECT["optional-dependencies"]]) if _lower_end(r)]


@pytest.mark.parametrize(("group", "requirement"), CLAIMED, ids=[f"{g}:{r.name}" for g, r in CLAIMED])
def test_every_lower_end_is_pinned_in_a_venv_make_test_runs(group: str, requirement: Requirement) -> None:
    end = _lower_end(requirement)
    pinned = {f: p.get(canonicalize_name(requirement.name)) for f, p in PINS.items()}
    assert Version(end) in {Version(v) for v in pinned.values() if v}, (
        f"pyproject.toml [{group}] {requirement}: no constraints file pins {requirement.name}=={end} "
        f"(pins: {pinned}); test that version (`make lock-floor` when floor_EXTRAS has it) or raise the floor")


def test_the_floor_venv_pins_each_of_its_requirements_at_its_lower_end() -> None:
    """``constraints/floor.txt`` is ``make lock-floor``'s output for the pyproject.toml of today: a floor raised
    without a new lock, or one that the others in ``floor_EXTRAS`` pull up, fails here."""
    assert re.search(r"^floor_LOCK := .*--resolution lowest-direct", MAKEFILE, re.M)
    extras = re.search(r"^floor_EXTRAS := (.*)$", MAKEFILE, re.M).group(1).split(",")
    pins = PINS["constraints/floor.txt"]
    ends: dict[str, str] = {}
    for _, requirement in _requirements(["core", *extras]):
        name, end = canonicalize_name(requirement.name), _lower_end(requirement)
        if end is not None and (name not in ends or Version(ends[name]) < Version(end)):
            ends[name] = end
    wrong = {name: (end, pins.get(name)) for name, end in ends.items()
             if name not in pins or Version(pins[name]) != Version(end)}
    assert not wrong, f"constraints/floor.txt: {{package: (lower end, pinned)}} {wrong}"
