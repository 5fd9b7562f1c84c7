"""Every command that reads span files line by line (``fold``, ``export``, ``annotate``, ``ecp serve --replay``)
reads through one bounded reader (:func:`otel_agents.exporters.file.lines_of`): a line over ``MAX_LINE_BYTES`` is
read a chunk at a time, skipped to its end and reported with its line number and length, and the lines around it
are read; a line with no end (``/dev/zero``) ends the reading with a message. Before, ``fold /dev/zero`` held
256 MiB in one ``readline`` (1.1 GB of RSS) and then discarded the endless line forever: a hang."""

from __future__ import annotations

import gzip
import io
import json
import os
import random
import subprocess
import sys

import pytest

from otel_agents.exporters import file as F
from otel_agents.exporters.ecp import fold
from otel_agents.exporters.file import MAX_LINE_BYTES, MalformedLine, UnreadLine, lines_of, read_otlp_json

from .conftest import check
from .test_ecp_fold import agent_run
from .test_file import write

LONG = MAX_LINE_BYTES + 2 * F.READ_CHUNK_BYTES + 7  # bytes of the over-long line, its newline included


def _valid_lines(rec, tmp_path) -> tuple[bytes, bytes]:
    agent_run(rec.telemetry, name="one")
    agent_run(rec.telemetry, name="two")
    path = tmp_path / "valid.jsonl"
    write(path, rec.spans, batch=6)  # one line per run
    first, second = path.read_bytes().splitlines(keepends=True)
    return first, second


@pytest.fixture
def sandwich(rec, tmp_path):
    """A real file: a valid line, a generated line of ``LONG`` bytes (JSON-looking, no spans), a valid line."""
    first, second = _valid_lines(rec, tmp_path)
    path = tmp_path / "traces.jsonl"
    with open(path, "wb") as f:
        f.write(first)
        f.write(b'{"resourceSpans": "')
        chunk = b"x" * F.READ_CHUNK_BYTES
        left = LONG - len(b'{"resourceSpans": "') - len(b'"}\n')
        while left:
            f.write(chunk[:left])
            left -= min(left, len(chunk))
        f.write(b'"}\n')
        f.write(second)
    assert path.stat().st_size == len(first) + LONG + len(second)
    return path


def _fold_process(*args: str, **kwargs) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    return subprocess.run([sys.executable, "-m", "otel_agents.cli", "fold", *args], capture_output=True,
                          timeout=120, env=env, **kwargs)


def test_fold_skips_an_over_long_line_and_keeps_its_neighbours_across_a_process(rec, sandwich):
    done = _fold_process(str(sandwich))
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert (f"skipped {sandwich}:2: a line of {LONG:,} bytes, over the {MAX_LINE_BYTES:,}-byte limit of a line: "
            "skipped without being read") in err
    assert "Traceback" not in err and "1 malformed line(s) skipped" in err
    assert check([json.loads(line) for line in done.stdout.splitlines()]) == fold(rec.spans)


def test_fold_of_gzip_and_of_stdin_skip_it_the_same(rec, sandwich, tmp_path):
    packed = tmp_path / "traces.jsonl.gz"
    packed.write_bytes(gzip.compress(sandwich.read_bytes(), compresslevel=1))
    for args, stdin in (([str(packed)], None), (["-"], sandwich.read_bytes()), (["-"], packed.read_bytes())):
        done = _fold_process(*args, input=stdin)
        err = done.stderr.decode()
        assert done.returncode == 1, err
        assert f":2: a line of {LONG:,} bytes, over the {MAX_LINE_BYTES:,}-byte limit" in err, (args, err)
        assert check([json.loads(line) for line in done.stdout.splitlines()]) == fold(rec.spans)


def test_fold_dev_zero_ends_with_a_message_not_a_hang():
    done = _fold_process("/dev/zero")
    err = done.stderr.decode()
    assert done.returncode == 1, err
    assert "skipped /dev/zero:1: no end of line after " in err
    assert "the rest of the input is not read" in err and "Traceback" not in err


def test_read_otlp_json_and_replay_report_the_line_and_keep_the_rest(rec, sandwich):
    """The library reader (what ``annotate`` and ``export`` use) and the replay source loader."""
    from otel_agents.serve.replay import load_runs

    errors: list[MalformedLine] = []
    assert len(read_otlp_json(sandwich, errors=errors)) == len(rec.spans)
    assert [e.line for e in errors] == [2] and f"a line of {LONG:,} bytes" in errors[0].message
    errors = []
    runs = load_runs(str(sandwich), errors=errors)
    assert len(runs) == 2
    assert [e.line for e in errors] == [2] and f"a line of {LONG:,} bytes" in errors[0].message


def test_replay_reads_a_gzip_source(rec, tmp_path):
    """``ecp serve --replay traces.jsonl.gz``: read through gzip, as fold reads it (before: every line 'not JSON')."""
    from otel_agents.serve.replay import load_runs

    first, second = _valid_lines(rec, tmp_path)
    packed = tmp_path / "traces.jsonl.gz"
    packed.write_bytes(gzip.compress(first + second))
    errors: list[MalformedLine] = []
    assert len(load_runs(str(packed), errors=errors)) == 2 and errors == []


@pytest.mark.parametrize("seed", range(40))
def test_lines_are_the_files_lines_at_every_boundary(monkeypatch, seed):
    """Small limits, random lines around them (a line ending exactly at a chunk, at the limit, past it; the last
    line without newline): every line within the limit comes back byte for byte, every longer one is one
    ``UnreadLine`` naming its length, and the numbering of the lines after it is unchanged."""
    monkeypatch.setattr(F, "READ_CHUNK_BYTES", 4)
    monkeypatch.setattr(F, "MAX_LINE_BYTES", 16)
    monkeypatch.setattr(F, "MAX_SKIPPED_BYTES", 64)
    rnd = random.Random(seed)
    lines = [b"y" * rnd.choice([0, 1, 3, 4, 5, 7, 8, 15, 16, 17, 20, 40]) + b"\n" for _ in range(12)]
    if rnd.random() < 0.5:
        lines[-1] = lines[-1][:-1] or b"z"
    got = list(lines_of(io.BufferedReader(io.BytesIO(b"".join(lines)))))
    assert len(got) == len(lines)
    for line, back in zip(lines, got):
        if len(line) <= 16:
            assert back == line and type(back) is bytes
        else:
            assert type(back) is UnreadLine and f"a line of {len(line)} bytes".encode() in back


def test_a_line_with_no_end_ends_the_reading(monkeypatch):
    monkeypatch.setattr(F, "READ_CHUNK_BYTES", 4)
    monkeypatch.setattr(F, "MAX_LINE_BYTES", 16)
    monkeypatch.setattr(F, "MAX_SKIPPED_BYTES", 64)
    got = list(lines_of(io.BufferedReader(io.BytesIO(b"ok\n" + b"0" * 100 + b"\nnever read\n"))))
    assert got[0] == b"ok\n" and len(got) == 2
    assert type(got[1]) is UnreadLine and b"no end of line after 68 bytes" in got[1]
