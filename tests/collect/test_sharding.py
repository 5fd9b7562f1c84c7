"""Scale-out: a trace-id router in front of two ``ecp collect`` processes, as the Collector's
``loadbalancing`` exporter (``routing_key: traceID``) would be (``docs/collector-loadbalancing.yaml``).

The router here is a small loopback proxy written for the test: it decodes each OTLP/HTTP request,
splits it by trace id and sends each part (protobuf, gzip) to the instance that owns the trace on a
consistent-hash ring built like the loadbalancing exporter's: 100 positions per backend on a ring of 36000,
``crc32(backend name + position index)``, a trace at ``crc32(trace id bytes) % 36000`` going to the next
position clockwise. A backend that cannot be reached makes the router answer 503 + ``Retry-After`` (the
sender retries). Spans come from several processes: each run's agent spans from one process, its tool
spans from another.
"""

from __future__ import annotations

import bisect
import contextlib
import gzip
import urllib.error
import urllib.request
import zlib

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from tests._loopback import QuietHandler, serve

from ..exporters.conftest import check
from .conftest import emit, new_runs, wait_for

RING_SIZE = 36000
WEIGHT = 100


class Ring:
    """A consistent-hash ring of backend names."""

    def __init__(self, names: list[str]) -> None:
        items: dict[int, str] = {}
        for name in names:
            for i in range(WEIGHT):
                items.setdefault(zlib.crc32(name.encode() + bytes([i])) % RING_SIZE, name)
        self.positions = sorted(items)
        self.names = [items[p] for p in self.positions]

    def owner(self, trace_id: bytes) -> str:
        i = bisect.bisect_left(self.positions, zlib.crc32(trace_id) % RING_SIZE)
        return self.names[i % len(self.names)]


class Router:
    """The loopback proxy; ``backends`` maps a backend name to its current URL (restarts change it)."""

    def __init__(self, backends: dict[str, str]) -> None:
        self.backends = backends
        self.ring = Ring(sorted(backends))
        router = self

        class Handler(QuietHandler):
            def do_POST(self) -> None:  # noqa: N802 - the stdlib's name
                body = self.rfile.read(int(self.headers["Content-Length"]))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                status = router.route(ExportTraceServiceRequest.FromString(body))
                self.send_response(status)
                if status != 200:
                    self.send_header("Retry-After", "1")
                self.send_header("Content-Length", "0")
                self.end_headers()

        self._serving = contextlib.ExitStack()
        self.url = self._serving.enter_context(serve(Handler)) + "/v1/traces"

    def route(self, request: ExportTraceServiceRequest) -> int:
        parts: dict[str, ExportTraceServiceRequest] = {}
        for rs in request.resource_spans:
            for ss in rs.scope_spans:
                groups: dict[str, list] = {}
                for span in ss.spans:
                    groups.setdefault(self.ring.owner(span.trace_id), []).append(span)
                for name, spans in groups.items():
                    part = parts.setdefault(name, ExportTraceServiceRequest())
                    out = part.resource_spans.add(resource=rs.resource, schema_url=rs.schema_url)
                    out.scope_spans.add(scope=ss.scope, schema_url=ss.schema_url, spans=spans)
        for name, part in parts.items():
            data = gzip.compress(part.SerializeToString())
            req = urllib.request.Request(self.backends[name], data=data, method="POST", headers={
                "Content-Type": "application/x-protobuf", "Content-Encoding": "gzip"})
            try:
                with urllib.request.urlopen(req, timeout=30) as r:
                    r.read()
            except (urllib.error.URLError, OSError):
                return 503  # the whole request is retried; parts already delivered repeat (dropped as duplicates)
        return 200

    def close(self) -> None:
        self._serving.close()


def _split(ring: Ring, n: int) -> list:
    """``2n`` fresh runs, ``n`` owned by each instance (deterministic shares, random ids)."""
    out: dict[str, list] = {"collect-a": [], "collect-b": []}
    while min(len(v) for v in out.values()) < n:
        for run in new_runs(8):
            share = out[ring.owner(bytes.fromhex(run["trace_id"]))]
            if len(share) < n:
                share.append(run)
    return out["collect-a"] + out["collect-b"]


def _owner_map(ring: Ring, runs) -> dict[str, str]:
    return {r["trace_id"]: ring.owner(bytes.fromhex(r["trace_id"])) for r in runs}


def _whole(envelope) -> bool:
    return ([t["name"] for t in envelope["tool_calls"]] == ["lookup_order", "check_refund_policy"]
            and envelope["metrics"]["model_calls"] == 1 and "incomplete" not in envelope)


def test_every_run_folded_once_whole_behind_a_trace_id_router(collects, tmp_path) -> None:
    a, b = collects("a", "--trace-idle", "0.3"), collects("b", "--trace-idle", "0.3")
    router = Router({"collect-a": a.url, "collect-b": b.url})
    try:
        runs = _split(router.ring, 12)
        owners = _owner_map(router.ring, runs)
        emit(tmp_path, "tools", router.url, runs)   # the tool server process
        emit(tmp_path, "root", router.url, runs)    # the agent process
        wait_for(lambda: len(a.envelopes()) + len(b.envelopes()) >= 24, "24 envelopes")
    finally:
        router.close()
    a.stop(), b.stop()
    for name, c in (("collect-a", a), ("collect-b", b)):
        envelopes = check(c.envelopes())
        assert sorted(e["trace_id"] for e in envelopes) == sorted(t for t, o in owners.items() if o == name)
        assert all(_whole(e) for e in envelopes)


def test_a_restarted_instance_loses_only_the_traces_it_held(collects, tmp_path) -> None:
    a, b = collects("a", "--trace-idle", "0.3"), collects("b", "--trace-idle", "0.3")
    router = Router({"collect-a": a.url, "collect-b": b.url})
    try:
        done, held = _split(router.ring, 6), _split(router.ring, 6)
        owners = {**_owner_map(router.ring, done), **_owner_map(router.ring, held)}
        held_by_b = [r["trace_id"] for r in held if owners[r["trace_id"]] == "collect-b"]
        assert len(held_by_b) == 6
        emit(tmp_path, "tools", router.url, done)
        emit(tmp_path, "root", router.url, done)
        wait_for(lambda: len(a.envelopes()) + len(b.envelopes()) >= 12, "the first 12 envelopes")
        emit(tmp_path, "tools", router.url, held)  # tool spans only: every such trace waits for its root
        log = b.stop()  # b restarts mid-stream, holding the tool spans of its share of `held`
        assert f"folded the {len(held_by_b)} trace(s) ({2 * len(held_by_b)} span(s)) held now" in log
        b2 = collects("b2", "--trace-idle", "0.3")
        router.backends["collect-b"] = b2.url
        emit(tmp_path, "root", router.url, held)
        wait_for(lambda: len(a.envelopes()) + len(b2.envelopes()) >= 12, "the last 12 envelopes")
    finally:
        router.close()
    a.stop(), b2.stop()
    everything = check(a.envelopes() + b.envelopes() + b2.envelopes())
    whole = [e["trace_id"] for e in everything if _whole(e)]
    assert sorted(whole) == sorted({r["trace_id"] for r in done + held} - set(held_by_b))  # each once
    lost = [e for e in everything if e["trace_id"] in held_by_b]
    # what b held was folded at its shutdown (tool spans only, incomplete) and the rest by b2 (the agent part)
    assert {e["trace_id"] for e in b.envelopes() if e["trace_id"] in held_by_b} == set(held_by_b)
    assert all(not _whole(e) for e in lost)
