"""What a backend receives from one run: the bytes of its spans on the OTLP wire (issue 40 item 4).

The vocabulary switch (``OTEL_AGENTS_VOCABULARIES``) is for "a user who sends to one backend pays for one":
its gain is in what the backend receives, stores and bills, not in our CPU (the message is converted and
redacted once whatever the vocabularies). So each variant's spans of one run are encoded as an OTLP
``ExportTraceServiceRequest`` by ``opentelemetry-exporter-otlp-proto-common`` (the encoder of the standard OTLP
exporters, HTTP and gRPC) and measured:

* ``bytes_per_run`` — the run's ``Span`` messages as they sit in that request (each with its field tag and
  length prefix): what every run adds to an export batch. The resource and instrumentation scope, sent once
  per batch (512 spans by default), are left out;
* ``bytes_per_span`` — that ÷ the run's spans;
* ``request_bytes`` — one request holding this run alone (resource and scope included);
* ``gzip_request_bytes`` — that request gzip-compressed (as an exporter with ``compression=gzip`` sends it).

Protobuf sizes do not depend on the random ids or timestamps (fixed-width fields), so ``bytes_per_run`` is
exact: each variant is captured :data:`CAPTURES` times and ``deterministic`` says whether every capture gave
the same bytes (the gzip size moves by a few bytes with the ids: its range is kept). The captures follow
earlier runs of the workload, as the timed batches do: a framework's first run can differ (an Agno agent
has no session id, so no ``gen_ai.conversation.id``, before its first run ends).
"""

from __future__ import annotations

import gzip
from typing import Any, Callable, Mapping, Sequence

from .harness import compare_per_span, versions

CAPTURES = 2
# The vocabulary each peer writes: OpenInference's own; OpenLLMetry, the OTel GenAI instrumentations and the
# frameworks' native spans write (a version of) the OTel GenAI conventions. No peer writes Langfuse's.
PEER_VOCABULARY = {"openinference": "openinference", "openllmetry": "gen_ai", "otel_genai": "gen_ai",
                   "native": "gen_ai"}
VOCABULARIES = ("gen_ai", "openinference", "langfuse")
ONE_VOCABULARY = "gen_ai"  # as overhead.ONE_VOCABULARY (the timed one-vocabulary variant)
ONE_VOCABULARY_BOUND = 0.5  # ours in it ≤ 0.5× all three
PEER_BOUND = 1.0  # ours in the peer's vocabulary ≤ 1× the peer


def _varint_len(n: int) -> int:
    return max(1, (n.bit_length() + 6) // 7)


def wire_size(spans: Sequence[Any]) -> dict[str, int]:
    """Sizes of finished SDK ``spans`` on the OTLP wire: ``spans``, ``bytes_per_run`` (their ``Span``
    messages in the request, tag and length prefix included), ``request_bytes`` (one request holding them
    alone) and ``gzip_request_bytes``."""
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans

    request = encode_spans(spans)
    raw = request.SerializeToString()
    span_bytes = 0
    for resource in request.resource_spans:
        for scope in resource.scope_spans:
            for span in scope.spans:
                size = span.ByteSize()
                span_bytes += 1 + _varint_len(size) + size  # ScopeSpans.spans: field 2, length-delimited
    return {"spans": len(spans), "bytes_per_run": span_bytes, "request_bytes": len(raw),
            "gzip_request_bytes": len(gzip.compress(raw, mtime=0))}


def measure(captures: Mapping[str, Callable[[], list[Any]]]) -> dict[str, Any]:
    """Each variant's wire sizes: ``captures`` maps a variant's name to a callable returning the finished
    spans of one run of it. A capture that raises is recorded as ``error`` (the others go on)."""
    variants: dict[str, Any] = {}
    deterministic = True
    for name, capture in captures.items():
        try:
            sizes = [wire_size(capture()) for _ in range(CAPTURES)]
        except Exception as e:  # noqa: BLE001 - a peer failing to capture loses its row, not the job
            variants[name] = {"error": f"{type(e).__name__}: {e}"[:200]}
            continue
        same = all((s["spans"], s["bytes_per_run"]) == (sizes[0]["spans"], sizes[0]["bytes_per_run"]) for s in sizes)
        deterministic = deterministic and same
        largest = max(sizes, key=lambda s: s["bytes_per_run"])  # the only one when the captures agree
        entry: dict[str, Any] = {
            "spans": largest["spans"], "bytes_per_run": largest["bytes_per_run"],
            "bytes_per_span": round(largest["bytes_per_run"] / largest["spans"], 1) if largest["spans"] else None,
            "request_bytes": largest["request_bytes"],
            "gzip_request_bytes": [min(s["gzip_request_bytes"] for s in sizes),
                                   max(s["gzip_request_bytes"] for s in sizes)]}
        if not same:
            entry["bytes_per_run_captures"] = [s["bytes_per_run"] for s in sizes]
        variants[name] = entry
    all_three = variants.get("ours", {}).get("bytes_per_run")
    for name, entry in variants.items():
        if name.startswith("ours_") and all_three and "bytes_per_run" in entry:
            entry["vs_ours"] = round(entry["bytes_per_run"] / all_three, 3)
    return {"encoding": "OTLP protobuf ExportTraceServiceRequest (opentelemetry-exporter-otlp-proto-common)",
            "captures": CAPTURES, "deterministic": deterministic, "variants": variants,
            "versions": versions("opentelemetry-exporter-otlp-proto-common", "protobuf")}


def _exact(ratio: float, bound: float) -> dict[str, Any]:
    """A proposed target on bytes: exact, so no interval; met when ``ratio`` ≤ ``bound``."""
    return {"target": bound, "ratio": round(ratio, 3), "exact": True,
            "verdict": "met" if ratio <= bound else "missed"}


def proposed_targets(measured: dict[str, Any], peers: Sequence[str], without_content: set[str]) -> dict[str, Any]:
    """The targets on exported bytes that say what the vocabulary switch is for:

    * ``ours_one_vocabulary_bytes_vs_ours``: ours in one vocabulary (``gen_ai``, the runner's timed
      one-vocabulary variant and the one most peers write), a run's bytes ≤ 0.5× all three; the other two
      vocabularies' ratios beside it (``others``). OpenInference alone keeps two of the three copies of the
      content (``input.value``/``output.value`` and the flattened messages, as its own instrumentations
      write), so no bound near 0.5 fits it; its user's promise is the next one;
    * ``ours_VOCAB[_no_content]_bytes_per_{run,span}_vs_PEER``: ours writing only the peer's vocabulary
      (:data:`PEER_VOCABULARY`), with content off against a peer that records no content by default,
      ≤ 1× the peer — per span where ours makes over 1.5× the peer's spans (it records steps the peer does
      not), per run otherwise, as for CPU."""
    v = measured["variants"]
    out: dict[str, Any] = {}
    ours = v.get("ours", {}).get("bytes_per_run")
    singles = {name: v[f"ours_{name}"]["bytes_per_run"] for name in VOCABULARIES
               if "bytes_per_run" in v.get(f"ours_{name}", {})}
    if ours and ONE_VOCABULARY in singles:
        out["ours_one_vocabulary_bytes_vs_ours"] = {
            **_exact(singles[ONE_VOCABULARY] / ours, ONE_VOCABULARY_BOUND), "vocabulary": ONE_VOCABULARY,
            "others": {name: round(size / ours, 3) for name, size in singles.items() if name != ONE_VOCABULARY}}
    for label in peers:
        peer = v.get(label, {})
        if label not in PEER_VOCABULARY:
            continue
        who = f"ours_{PEER_VOCABULARY[label]}" + ("_no_content" if label in without_content else "")
        mine = v.get(who, {})
        if not peer.get("spans") or not mine.get("spans"):
            continue
        per_span = compare_per_span(mine["spans"], peer["spans"])
        ratio = (mine["bytes_per_run"] / mine["spans"]) / (peer["bytes_per_run"] / peer["spans"]) if per_span \
            else mine["bytes_per_run"] / peer["bytes_per_run"]
        out[f"{who}_bytes_per_{'span' if per_span else 'run'}_vs_{label}"] = _exact(ratio, PEER_BOUND)
    return out
