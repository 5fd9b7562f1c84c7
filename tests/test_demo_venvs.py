"""``otel-agents demo --venv DIR=ROWS`` (how ``make demo`` shows the frameworks of Makefile ``ISOLATED``): rows
graded by another venv's ``otel-agents demo --json -`` are folded into the one table, with one agreement line
and one fault count over all rows. Here "another venv" is this one again, in a real second process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
OTEL_AGENTS = str(Path(sys.executable).parent / "otel-agents")


# The rows of another venv folded into the one table, each demo's `ecp run`s and each row's `ecp serve`s forks of
# their fork servers: the demo of tests/customer_support/test_customer_support.py grades its openai row so
# (test_rows_graded_in_another_venv_are_folded_into_the_one_table), which was a second demo of two rows here.


def test_a_venv_that_cannot_run_shows_error_rows_and_fails(tmp_path: Path) -> None:
    proc = subprocess.run([OTEL_AGENTS, "demo", "--frameworks", "", "--out", str(tmp_path / "out"),
                           "--venv", f"{tmp_path / 'missing'}=google_adk"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    row = next(line.split() for line in proc.stdout.splitlines() if line.startswith("google_adk "))
    assert row[:3] == ["google_adk", "ERROR", "ERROR"], proc.stdout
    assert "could not start" in proc.stdout, proc.stdout


def test_json_to_standard_output_is_the_json_alone(tmp_path: Path) -> None:
    proc = subprocess.run([OTEL_AGENTS, "demo", "--frameworks", "", "--out", str(tmp_path / "out"), "--json", "-"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert json.loads(proc.stdout) == {"runs": []}
    assert "grading" not in proc.stderr and "framework " not in proc.stderr  # the caller announces and renders


def test_bad_options_and_unwritable_outputs_are_clear_errors(tmp_path: Path) -> None:
    """--timeout -5 was a ValueError traceback from select(); --jobs 0 and --repeat 0 were taken silently; an
    --out or --json that cannot be written was a traceback (--json only after the whole demo had run; a --json
    naming a directory was still refused only then, after every row had been graded)."""
    blocker = tmp_path / "a-file"
    blocker.write_text("", encoding="utf-8")
    for bad in (["--timeout", "-5"], ["--jobs", "0"], ["--repeat", "0"]):
        proc = subprocess.run([OTEL_AGENTS, "demo", "--frameworks", "", *bad], cwd=ROOT, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 2 and bad[0] in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
    for option, target in (("--out", blocker / "out"), ("--json", blocker / "runs.json"), ("--json", tmp_path)):
        args = ["--out", str(tmp_path / "out"), option, str(target)] if option == "--json" else [option, str(target)]
        proc = subprocess.run([OTEL_AGENTS, "demo", "--frameworks", "", *args], cwd=ROOT, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 2 and f"cannot write {target}" in proc.stderr, proc.stdout + proc.stderr
        assert "Traceback" not in proc.stderr
    proc = subprocess.run([OTEL_AGENTS, "demo", "--frameworks", "", "--examples", str(tmp_path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    # it said "examples/customer_support not found; run it from the repository root or pass --examples DIR"
    assert proc.returncode == 2 and f"--examples {tmp_path}: no manifest.yaml" in proc.stderr, proc.stderr


def test_a_broken_manifest_in_examples_is_named_with_its_line(tmp_path: Path) -> None:
    """--examples DIR whose manifest.yaml is not YAML was a yaml ScannerError traceback; now exit 2 naming the file
    and line (read by evaluations.load_manifest, as ecp annotate --manifest reads one)."""
    (tmp_path / "common.py").write_text("", encoding="utf-8")
    (tmp_path / "manifest.yaml").write_text("name: x\nscenarios:\n  - name: [\n", encoding="utf-8")
    proc = subprocess.run([OTEL_AGENTS, "demo", "--frameworks", "", "--examples", str(tmp_path), "--out",
                           str(tmp_path / "out")], cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 2 and f"{tmp_path / 'manifest.yaml'}:4: not YAML" in proc.stderr, proc.stderr
    assert "Traceback" not in proc.stderr


def _descendants(root: int) -> set[int]:
    """Every live process under ``root`` (children, theirs, ...), from /proc."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:  # ended meanwhile
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if fields[0] != "Z":
                parents[int(entry.name)] = int(fields[1])
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        kids = [child for child, parent in parents.items() if parent == pid]
        found.update(kids)
        todo.extend(kids)
    return found


def _parent(pid: int) -> int:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return 0
    return int(stat[stat.rindex(")") + 2:].split()[1])


def _cmdline(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes()
    except OSError:
        return b""


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def _interrupt_demo(argv: list[str], sig: int, child: bytes, *, background: bool = False,
                    ) -> tuple[int, str, str, list[bytes]]:
    """Start ``otel-agents demo ARGV``, wait until an ``ecp run`` of its own runs, check that a process under it has
    ``child`` in its command line, send it ``sig``. Returns its exit status, standard output and error, and the
    command lines of the processes that were under it and are still alive 30 s after it ended (counted before
    they are SIGKILLed, so that nothing is left behind; the timeouts only detect a hang). The demo gets SIGINT as a
    shell gives it: its default in the foreground, ignored in the ``background`` (``&`` without job control), whatever
    the test run's own disposition (ignored when it was started in the background)."""
    import os
    import signal
    import time

    sigint = signal.SIG_IGN if background else signal.SIG_DFL
    proc = subprocess.Popen([OTEL_AGENTS, "demo", *argv], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, preexec_fn=lambda: signal.signal(signal.SIGINT, sigint))
    seen: set[int] = set()
    try:
        deadline = time.monotonic() + 300
        while True:  # until an `ecp run` of the demo's runs (its fork server, any --venv demo, are running by then)
            seen |= _descendants(proc.pid)
            if any(_parent(pid) == proc.pid and b"\0run\0" in _cmdline(pid) for pid in seen if _alive(pid)):
                break
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        seen |= _descendants(proc.pid)
        assert any(child in _cmdline(pid) for pid in seen), [_cmdline(pid) for pid in seen]
        proc.send_signal(sig)
        stdout, stderr = proc.communicate(timeout=120)  # waited for the runs (before): their manifests' time
        deadline = time.monotonic() + 30  # SIGKILLed processes are gone once the kernel has reaped them
        while [pid for pid in seen if _alive(pid)] and time.monotonic() < deadline:
            time.sleep(0.1)
        left = [_cmdline(pid) for pid in seen if _alive(pid)]
    finally:
        for pid in [proc.pid, *seen]:  # a fault or a hang: leave nothing behind
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)
    return proc.returncode, stdout, stderr, left


def test_ctrl_c_stops_every_child_process_and_exits_130(tmp_path: Path) -> None:
    """Ctrl-C (SIGINT to the demo alone, as a terminal's would be once its children have sessions of their own)
    waited for the ``ecp run`` processes already started to finish their manifests (13 s with four) and printed
    their rows. Now the demo ends its children (its ``ecp run``s, its fork server and a ``--venv`` demo, with
    everything they started), says it was interrupted and exits 130; no process under it survives."""
    import signal

    argv = ["--frameworks", "plain_python", "--out", str(tmp_path / "out"), "--jobs", "4",
            "--venv", f"{sys.prefix}=openai"]
    returncode, stdout, stderr, left = _interrupt_demo(argv, signal.SIGINT, b"--json\0-\0")  # the --venv demo's
    assert returncode == 130, (stdout, stderr)
    assert "otel-agents demo: interrupted; " in stderr and "Traceback" not in stderr, stderr
    assert "\nframework " not in stdout, stdout  # no table after the Ctrl-C
    assert left == []


def test_sigterm_stops_every_child_process_and_exits_143(tmp_path: Path) -> None:
    """SIGTERM to the demo (``kill``, ``timeout``, a CI job cancelled): before, the demo died at once and its
    children, in sessions of their own, were orphaned: its fork server served forever and its ``ecp run``s went
    on. Now it ends them as on Ctrl-C and exits 143 (128 + SIGTERM). Here the demo runs in the background, SIGINT
    ignored: it asked its ``--venv`` demo to end with SIGINT, which that child, inheriting the ignore, never heard,
    and the child's own children outlived it; SIGTERM now."""
    import signal

    argv = ["--frameworks", "plain_python", "--out", str(tmp_path / "out"), "--jobs", "2",
            "--venv", f"{sys.prefix}=openai"]
    returncode, stdout, stderr, left = _interrupt_demo(argv, signal.SIGTERM, b"--json\0-\0", background=True)
    assert returncode == 143, (returncode, stdout, stderr)
    assert "otel-agents demo: interrupted; " in stderr and "Traceback" not in stderr, stderr
    assert left == []
