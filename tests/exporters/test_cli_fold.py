"""``otel-agents fold TRACES.jsonl [-o ENVELOPES.jsonl]`` (issue 7)."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys

from otel_agents.cli import main
from otel_agents.exporters.ecp import fold

from .conftest import check
from .test_ecp_fold import agent_run
from .test_file import write


def traces(rec, tmp_path, name="traces.jsonl"):
    agent_run(rec.telemetry, name="one")
    agent_run(rec.telemetry, name="two")
    path = tmp_path / name
    write(path, rec.spans, batch=6)  # one line per run
    return path


def test_fold_to_stdout(rec, tmp_path, capsys):
    path = traces(rec, tmp_path)
    assert main(["fold", str(path)]) == 0
    out, err = capsys.readouterr()
    envelopes = [json.loads(line) for line in out.splitlines()]
    assert check(envelopes) == fold(rec.spans)
    assert "2 run(s) from 12 span(s); 0 malformed line(s) skipped" in err


def test_fold_to_file(rec, tmp_path, capsys):
    path = traces(rec, tmp_path)
    out_path = tmp_path / "envelopes.jsonl"
    assert main(["fold", str(path), "-o", str(out_path)]) == 0
    assert capsys.readouterr().out == ""
    envelopes = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines()]
    assert check(envelopes) == fold(rec.spans)


def test_output_that_is_the_input_is_refused(rec, tmp_path, capsys):
    """`fold T -o T` (or a link to T) would truncate the traces before reading them: exit 2, T intact."""
    path = traces(rec, tmp_path)
    before = path.read_bytes()
    (tmp_path / "link.jsonl").symlink_to(path)
    for out in (path, tmp_path / "link.jsonl"):
        assert main(["fold", str(path), "-o", str(out)]) == 2
        assert "is the input file" in capsys.readouterr().err
    assert path.read_bytes() == before

def test_malformed_lines_are_reported_and_skipped(rec, tmp_path, capsys):
    """Issue 7: a malformed line is reported with its line number and skipped; the rest is folded; exit 1."""
    path = traces(rec, tmp_path)
    first, second = path.read_text(encoding="utf-8").splitlines()
    path.write_text("\n".join(["{not json", first, '{"resourceSpans": 3}', second]) + "\n", encoding="utf-8")
    out_path = tmp_path / "envelopes.jsonl"
    assert main(["fold", str(path), "-o", str(out_path)]) == 1
    err = capsys.readouterr().err
    assert f"skipped {path}:1: invalid JSON" in err
    assert f"skipped {path}:3: not an OTLP trace request" in err
    assert "2 malformed line(s) skipped" in err
    envelopes = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines()]
    assert check(envelopes) == fold(rec.spans)


def test_a_bad_field_is_quoted_redacted_and_bounded(rec, tmp_path, capsys):
    """A skipped line's message quotes the bad value as an excerpt: a secret-shaped value is redacted, the value
    under a secret-named key is not quoted at all, and a megabyte is cut (before, up to 60 characters of any
    value, enough for an API key, and a span's whole name, were printed)."""
    key = "sk-proj-" + "a1b2c3d4" * 4
    trace = "0af7651916cd43dd8448eb211c80319c"

    def line(span):
        return json.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})

    lines = [line({"traceId": trace, "spanId": "b7ad6b7169203331", "name": "n", "startTimeUnixNano": key}),
             line({"traceId": trace, "spanId": key, "name": "n"}),
             line({"traceId": trace, "spanId": "b7ad6b7169203331", "name": "n", "attributes": [
                 {"key": "db_password", "value": {"intValue": "hunter2hunter2"}}]}),
             line({"name": "x" * 1_000_000})]
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert main(["fold", str(path)]) == 1
    err = capsys.readouterr().err
    assert "4 malformed line(s) skipped" in err
    assert "a1b2c3d4" not in err and "hunter2" not in err and "xxxxx" * 20 not in err, err[:2000]
    assert f"{path}:1: resourceSpans[0].scopeSpans[0].spans[0].startTimeUnixNano: " \
           "expected an unsigned 64-bit integer, got '[REDACTED]'" in err
    assert "attributes[0].value.intValue: expected a signed 64-bit integer, got [REDACTED]" in err
    assert len(err) < 2000


def test_a_gzip_file_is_folded_and_a_truncated_one_keeps_its_lines_before(rec, tmp_path, capsys, monkeypatch):
    """`fold trace.jsonl.gz` (or gzip on standard input) reads through gzip, as it folds the plain file (before,
    its compressed bytes were "not UTF-8" lines); a gzip stream cut short (a writer killed mid-file) is reported at
    the line where it breaks, and the lines before it are folded."""
    import gzip

    path = traces(rec, tmp_path)
    plain = path.read_bytes()
    packed = tmp_path / "traces.jsonl.gz"
    packed.write_bytes(gzip.compress(plain))
    assert main(["fold", str(packed)]) == 0
    out, err = capsys.readouterr()
    assert check([json.loads(line) for line in out.splitlines()]) == fold(rec.spans), err
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(packed.read_bytes()))))
    assert main(["fold", "-"]) == 0
    assert check([json.loads(line) for line in capsys.readouterr().out.splitlines()]) == fold(rec.spans)
    filler = b"".join(b'{"x": "%s"}\n' % os.urandom(64).hex().encode() for _ in range(2000))  # no spans: skipped
    stream = gzip.compress(plain + filler)
    cut = tmp_path / "cut.jsonl.gz"
    cut.write_bytes(stream[:-1000])  # cut inside the filler, long after the traces' lines
    assert main(["fold", str(cut)]) == 1
    out, err = capsys.readouterr()
    assert f"{cut}:" in err and "the gzip stream is damaged or truncated here" in err, err
    assert check([json.loads(line) for line in out.splitlines()]) == fold(rec.spans)


def test_a_bad_span_loses_only_itself_not_the_line(rec, tmp_path, capsys):
    """A line is one OTLP batch: a span with a bad field is left out, reported with the line and its field path,
    and the line's other spans are folded, as the OTLP receiver's partial success keeps them (before, the whole
    line was skipped: every run it held lost). A line none of whose spans can be read is skipped whole."""
    path = traces(rec, tmp_path)
    first, second = path.read_text(encoding="utf-8").splitlines()
    data = json.loads(first)
    bad = dict(data["resourceSpans"][0]["scopeSpans"][0]["spans"][0], spanId="zz", name="broken")
    data["resourceSpans"][0]["scopeSpans"][0]["spans"].append(bad)
    only_bad = {"resourceSpans": [{"scopeSpans": [{"spans": [bad]}]}]}
    path.write_text("\n".join([json.dumps(data), second, json.dumps(only_bad)]) + "\n", encoding="utf-8")
    out_path = tmp_path / "envelopes.jsonl"
    assert main(["fold", str(path), "-o", str(out_path)]) == 1
    err = capsys.readouterr().err
    assert f"skipped {path}:1: 1 span(s) left out, the line's 6 other(s) read: resourceSpans[0].scopeSpans[0]" \
           ".spans[6].spanId: 'zz' is not hex" in err, err
    assert f"skipped {path}:3: resourceSpans[0].scopeSpans[0].spans[0].spanId: 'zz' is not hex" in err, err
    assert "1 malformed line(s) skipped, 1 span(s) left out of 1 other line(s)" in err, err
    envelopes = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines()]
    assert check(envelopes) == fold(rec.spans)


def test_a_run_that_cannot_be_folded_is_named_with_its_line_and_the_others_are_folded(rec, tmp_path, capsys,
                                                                                     monkeypatch):
    """Damaged input that breaks the envelope of one run (here forced) loses that run alone: named with its trace,
    the line its trace began on and its root span; exit 1; the other runs are folded."""
    from otel_agents.exporters.ecp import _envelope

    path = traces(rec, tmp_path)
    broken = next(s for s in rec.spans if s.parent is None)  # run "one"'s root, on line 1
    real = _envelope.build_envelope
    monkeypatch.setattr(_envelope, "build_envelope", lambda run, **kw: (
        1 / 0 if run.root.span_id == broken.context.span_id else real(run, **kw)))
    assert main(["fold", str(path)]) == 1
    out, err = capsys.readouterr()
    assert check([json.loads(line) for line in out.splitlines()]) == \
        [e for e in fold(rec.spans) if e["trace_id"] != f"{broken.context.trace_id:032x}"]
    assert f"trace {broken.context.trace_id:032x} (from line 1): the run of span {broken.context.span_id:016x} " \
           "could not be folded: ZeroDivisionError('division by zero')" in err, err


def test_an_input_without_spans_says_so(rec, tmp_path, capsys):
    """A file of envelopes (the fold's output) given as its input, or lines that are no traces: not a quiet
    success with 0 runs, but exit 1 and a message saying what the input lacks."""
    traces(rec, tmp_path)
    envelopes = tmp_path / "envelopes.jsonl"
    envelopes.write_text("".join(json.dumps(e) + "\n" for e in fold(rec.spans)), encoding="utf-8")
    objects = tmp_path / "objects.jsonl"
    objects.write_text("{}\n{}\n", encoding="utf-8")
    for path in (envelopes, objects):
        assert main(["fold", str(path)]) == 1
        err = capsys.readouterr().err
        assert "0 run(s) from 0 span(s)" in err and "no span in the input" in err, err


def test_missing_input_exits_2(tmp_path, capsys):
    assert main(["fold", str(tmp_path / "nope.jsonl")]) == 2
    assert "cannot read" in capsys.readouterr().err


def test_stdin(rec, tmp_path, capsys, monkeypatch):
    path = traces(rec, tmp_path)
    monkeypatch.setattr(sys, "stdin", io.StringIO(path.read_text(encoding="utf-8")))
    assert main(["fold", "-"]) == 0
    assert len(capsys.readouterr().out.splitlines()) == 2


def test_console_entry_point(rec, tmp_path):
    """The real command line, as a user runs it."""
    path = traces(rec, tmp_path)
    done = subprocess.run([sys.executable, "-m", "otel_agents.cli", "fold", str(path)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == fold(rec.spans)


def test_a_line_that_is_not_utf8_is_reported_not_fatal(rec, tmp_path, capsys):
    """A binary or badly encoded line is one malformed line; the good lines around it are still folded."""
    path = traces(rec, tmp_path)
    first, second = path.read_bytes().splitlines()
    path.write_bytes(b"\n".join([first, b"\xff\xfe\x00garbage", second]) + b"\n")
    out_path = tmp_path / "envelopes.jsonl"
    assert main(["fold", str(path), "-o", str(out_path)]) == 1
    err = capsys.readouterr().err
    assert f"skipped {path}:2: not UTF-8 text" in err and "Traceback" not in err
    envelopes = [json.loads(line) for line in out_path.read_text(encoding="utf-8").splitlines()]
    assert check(envelopes) == fold(rec.spans)


def test_a_byte_order_mark_at_the_start_of_the_file_is_ignored(rec, tmp_path, capsys, monkeypatch):
    """A file saved by an editor (or PowerShell) that starts with a UTF-8 BOM: line 1 was 'invalid JSON';
    RFC 8259 section 8.1 lets a parser ignore it. The envelopes are byte-identical to those of the file
    without it; a BOM elsewhere is still an error (it is no JSON whitespace)."""
    path = traces(rec, tmp_path)
    plain = tmp_path / "plain.jsonl"
    assert main(["fold", str(path), "-o", str(plain)]) == 0
    data = path.read_bytes()
    path.write_bytes(b"\xef\xbb\xbf" + data)
    with_bom = tmp_path / "bom.jsonl"
    assert main(["fold", str(path), "-o", str(with_bom)]) == 0, capsys.readouterr().err
    assert with_bom.read_bytes() == plain.read_bytes()
    assert "0 malformed line(s) skipped" in capsys.readouterr().err
    first, second = data.splitlines()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"\xef\xbb\xbf" + data), encoding="utf-8"))
    assert main(["fold", "-", "-o", str(with_bom)]) == 0  # standard input (read as bytes)
    assert with_bom.read_bytes() == plain.read_bytes()
    from otel_agents.exporters.file import read_otlp_json

    assert len(read_otlp_json(["\ufeff" + first.decode(), second.decode()])) == 12
    path.write_bytes(first + b"\n\xef\xbb\xbf" + second + b"\n")
    assert main(["fold", str(path), "-o", str(with_bom)]) == 1
    assert f"skipped {path}:2: invalid JSON: a UTF-8 byte-order mark (U+FEFF) here, not at the start of the input" \
        in capsys.readouterr().err


def test_a_pretty_printed_document_is_folded_and_its_problem_reported_once(rec, tmp_path, capsys, monkeypatch):
    """`jq . traces.jsonl > t.json` (or a tool's indented export): one OTLP/JSON document over many lines. It is
    folded as the one line it was (before: every one of its hundreds of lines was reported "invalid JSON" and
    nothing folded); one cut short is one problem at line 1 naming where, in the file, it breaks."""
    path = traces(rec, tmp_path)
    first, second = path.read_text(encoding="utf-8").splitlines()
    merged = json.loads(first)
    merged["resourceSpans"] += json.loads(second)["resourceSpans"]
    pretty = tmp_path / "traces.json"
    pretty.write_text(json.dumps(merged, indent=2) + "\n", encoding="utf-8")
    assert main(["fold", str(pretty)]) == 0
    out, err = capsys.readouterr()
    assert check([json.loads(line) for line in out.splitlines()]) == fold(rec.spans), err
    monkeypatch.setattr(sys, "stdin", io.StringIO(pretty.read_text(encoding="utf-8")))
    assert main(["fold", "-"]) == 0
    assert check([json.loads(line) for line in capsys.readouterr().out.splitlines()]) == fold(rec.spans)
    text = pretty.read_text(encoding="utf-8")
    pretty.write_text(text[:len(text) // 2], encoding="utf-8")
    assert main(["fold", str(pretty)]) == 1
    err = capsys.readouterr().err
    [problem] = [line for line in err.splitlines() if ": skipped " in line]
    cut_at = text[:len(text) // 2].count("\n") + 1
    assert problem.startswith(f"otel-agents fold: skipped {pretty}:1: invalid JSON: unexpected end of data: "
                              f"line {cut_at} column "), err


def test_jq_of_a_trace_file_is_folded_document_by_document(rec, tmp_path, capsys):
    """``jq . traces.jsonl > t.json``, the README's example, writes one pretty-printed document per line of the
    JSON-lines file. Only a file of one document was read: with two or more (any real trace file), the whole file
    was one "invalid JSON: unexpected content after document" and nothing was folded. Now each document is read;
    a damaged one is reported at its first line (orjson's line, the file's) and the others are folded."""
    path = traces(rec, tmp_path)
    first, second = path.read_text(encoding="utf-8").splitlines()
    pretty = tmp_path / "traces.json"
    documents = [json.dumps(json.loads(line), indent=2) + "\n" for line in (first, second)]
    pretty.write_text("".join(documents), encoding="utf-8")
    assert main(["fold", str(pretty)]) == 0
    out, err = capsys.readouterr()
    assert check([json.loads(line) for line in out.splitlines()]) == fold(rec.spans), err
    from otel_agents.exporters.file import read_otlp_json  # export and ecp annotate --traces read the same way
    from otel_agents.serve.replay import load_runs  # and ecp serve --replay

    assert len(read_otlp_json(str(pretty))) == len(rec.spans)
    assert [r.envelope["public_output"] for r in load_runs(str(pretty))] == [e["public_output"] for e in fold(rec.spans)]
    second_at = documents[0].count("\n") + 1
    damaged = documents[1].replace('"spanId"', '"spanId" "', 1)
    broken_at = second_at + documents[1][:documents[1].index('"spanId"')].count("\n")
    pretty.write_text(documents[0] + damaged, encoding="utf-8")
    assert main(["fold", str(pretty)]) == 1
    out, err = capsys.readouterr()
    [problem] = [line for line in err.splitlines() if ": skipped " in line]
    assert problem.startswith(f"otel-agents fold: skipped {pretty}:{second_at}: invalid JSON: "), err
    assert f"line {broken_at} column " in problem, problem
    assert out  # the first document's spans were folded
