"""``otel-agents ecp collect`` under a sustained stream: throughput and memory of one receiving process,
against the ``ECPFoldingProcessor`` folding the same runs in-process (issue 37).

One real ``otel-agents ecp collect`` process on 127.0.0.1 (``--trace-idle 0.2``) receives the synthetic
trace set (copies of one six-span agent run, :mod:`benchmarks.synthetic`) as OTLP/HTTP protobuf requests
of 512 spans each (the ``BatchSpanProcessor``'s batch), sent by this process over one keep-alive
connection, and folds every run into an envelope written to its JSON-lines file. Measured on the
receiving process (from ``/proc/PID``), so the sender's own work is not counted:

* **throughput**: spans per second of the collect process's CPU time (user + system: receive, decompress,
  decode, group by trace, fold, encode, write) from the first request to the last envelope written;
* **memory**: its RSS, sampled 20 times along the stream; "flat" = at most ``FLAT_TOLERANCE_MIB`` growth
  from the sample at 10% of the stream to the end, and every run folded.

The baseline, in this process: the same runs replayed through a real ``TracerProvider`` with an
``ECPFoldingProcessor`` (as in the ``memory`` job): spans/s of process CPU time; the ratio is collect's
cost per span over the in-process fold's (SDK spans included there, HTTP and protobuf decoding here).
"""

from __future__ import annotations

import http.client
import os
import re
import subprocess
import sys
import tempfile
import time
from typing import Any

from .exporters import FLAT_TOLERANCE_MIB, _replay
from .harness import versions
from .synthetic import attributes_of, copies, template_run

BATCH = 512
_ANNOUNCE = re.compile(r"collecting OTLP at http://127\.0\.0\.1:(\d+)/v1/traces")


def _cpu_s(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (``/proc/PID/stat`` fields 14 and 15)."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _rss_mib(pid: int) -> float:
    with open(f"/proc/{pid}/statm", encoding="ascii") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def _lines(path: str) -> int:
    try:
        with open(path, "rb") as f:
            return sum(1 for _ in f)
    except FileNotFoundError:
        return 0


def collect_throughput(total_spans: int, samples: int = 20) -> dict[str, Any]:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    template = template_run()
    runs = max(1, total_spans // len(template))
    per_request = max(1, BATCH // len(template))
    requests = (runs + per_request - 1) // per_request
    every = max(1, requests // samples)
    with tempfile.TemporaryDirectory(prefix="otel-agents-bench-") as tmp:
        out, log = os.path.join(tmp, "envelopes.jsonl"), os.path.join(tmp, "collect.log")
        with open(log, "wb") as err:
            proc = subprocess.Popen([sys.executable, "-m", "otel_agents.cli", "ecp", "collect", "--port", "0",
                                     "-o", out, "--trace-idle", "0.2"], stderr=err, stdout=subprocess.DEVNULL,
                                    stdin=subprocess.DEVNULL)
        try:
            port = None
            for _ in range(600):
                with open(log, encoding="utf-8", errors="replace") as f:
                    match = _ANNOUNCE.search(f.read())
                if match:
                    port = int(match.group(1))
                    break
                if proc.poll() is not None:
                    break
                time.sleep(0.1)
            if port is None:
                raise RuntimeError(f"ecp collect did not start: {open(log, encoding='utf-8').read()[-2000:]}")
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
            points: list[dict[str, Any]] = []
            cpu0, wall0 = _cpu_s(proc.pid), time.perf_counter()
            stream = copies(template, runs)
            for i in range(requests):
                batch = [s for _, run in zip(range(per_request), stream) for s in run]
                body = encode_spans(batch).SerializeToString()
                conn.request("POST", "/v1/traces", body, {"Content-Type": "application/x-protobuf"})
                response = conn.getresponse()
                response.read()
                if response.status != 200:
                    raise RuntimeError(f"ecp collect answered {response.status}")
                if (i + 1) % every == 0 or i + 1 == requests:
                    points.append({"spans": min(runs, (i + 1) * per_request) * len(template),
                                   "rss_mib": round(_rss_mib(proc.pid), 2)})
            conn.close()
            for _ in range(6000):  # the last runs fold after --trace-idle (bounded: 10 minutes)
                if _lines(out) >= runs:
                    break
                time.sleep(0.1)
            cpu, wall = _cpu_s(proc.pid) - cpu0, time.perf_counter() - wall0
            envelopes = _lines(out)
        finally:
            proc.terminate()
            proc.wait(timeout=60)
    spans = runs * len(template)
    warm = next((p for p in points if p["spans"] >= 0.1 * spans), points[0])
    growth = points[-1]["rss_mib"] - warm["rss_mib"]
    baseline = _processor_spans_per_s(min(runs, max(1, 60_000 // len(template))))
    return {"spans": spans, "runs": runs, "envelopes": envelopes, "requests": requests, "batch": per_request * 6,
            "cpu_s": round(cpu, 2), "wall_s_stream": round(wall, 2), "spans_per_s": round(spans / cpu),
            "processor_spans_per_s": round(baseline), "vs_processor": round(baseline / (spans / cpu), 2),
            "rss_after_warmup_mib": warm["rss_mib"], "rss_end_mib": points[-1]["rss_mib"],
            "rss_growth_mib": round(growth, 2), "tolerance_mib": FLAT_TOLERANCE_MIB,
            "flat": growth <= FLAT_TOLERANCE_MIB and envelopes == runs, "samples": points,
            "versions": versions("uvicorn", "protobuf", "opentelemetry-proto")}


def _processor_spans_per_s(runs: int) -> float:
    """``ECPFoldingProcessor`` behind a real ``TracerProvider``, the same runs replayed: spans/s, best of 3."""
    import gc

    from opentelemetry.sdk.trace import TracerProvider

    from otel_agents.exporters.ecp import ECPFoldingProcessor

    plan = attributes_of(template_run())
    best = float("inf")
    for _ in range(3):
        provider = TracerProvider()
        provider.add_span_processor(ECPFoldingProcessor(on_envelope=lambda envelope: None))
        tracer = provider.get_tracer("benchmarks.collect")
        gc.collect()
        t0 = time.process_time()
        for _ in range(runs):
            _replay(tracer, plan)
        best = min(best, time.process_time() - t0)
        provider.shutdown()
    return runs * len(plan) / best
