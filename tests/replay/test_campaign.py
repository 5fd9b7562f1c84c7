"""Issue 39, items 2 and 3: ``otel-agents demo --repeat 3`` grades the framework-free customer-support agent
and its flaky twin (the faulty trajectory on seed 3: one run in three) three times each with the real ``ecp
run``; the campaign's pass@k, pass^k and intervals are recomputed here from the nine raw reports, and the
HTML page, rendered by a real headless Chromium (Debian's ``chromium``), shows the same numbers."""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


@pytest.fixture(scope="module")
def campaign(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("demo")
    proc = subprocess.run([str(BIN / "otel-agents"), "demo", "--repeat", "3", "--out", str(out), "--jobs", "2"],
                          cwd=ROOT, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "customer-support-plain_python-flaky" in proc.stdout and "pass^k" in proc.stdout
    return out / "campaign"


def test_campaign_numbers_recomputed_from_the_runs(campaign: Path) -> None:
    summary = json.loads((campaign / "report.json").read_text(encoding="utf-8"))
    agents = {a["agent"]: a for a in summary["agents"]}
    for name, folder in (("customer-support-plain_python", "plain_python"),
                         ("customer-support-plain_python-flaky", "plain_python-flaky")):
        runs = [json.loads((campaign / folder / f"run-{r}.json").read_text(encoding="utf-8")) for r in (1, 2, 3)]
        a = agents[name]
        assert a["runs"] == 3 and a["k"] == 3
        for s in a["scenarios"]:
            passed = [all(c["passed"] for st in next(x for x in run["scenarios"] if x["name"] == s["scenario"])["steps"]
                          for c in st["checks"]) for run in runs]
            n, c = 3, sum(passed)
            assert (s["runs"], s["passed"]) == (n, c)
            assert s["pass_at_k"] == pytest.approx(1 - math.comb(n - c, 3) / math.comb(n, 3))
            assert s["pass_k"] == pytest.approx(math.comb(c, 3) / math.comb(n, 3))
            if name.endswith("flaky"):
                assert passed == [True, True, False] and s["flaky"] and s["flipped_checks"]
            else:
                assert passed == [True, True, True] and not s["flaky"]
    assert agents["customer-support-plain_python"]["pass_k"] == 1.0
    assert agents["customer-support-plain_python-flaky"]["pass_k"] == 0.0
    assert agents["customer-support-plain_python-flaky"]["pass_at_k"] == 1.0
    assert agents["customer-support-plain_python-flaky"]["pass_rate"] == pytest.approx(2 / 3)


class _Cells(HTMLParser):
    """The agents table's rows and the pass^k bar labels of a rendered DOM."""

    def __init__(self) -> None:
        super().__init__()
        self.rows: dict[str, list[str]] = {}
        self.bars: list[str] = []
        self._row: list[str] | None = None
        self._agent = ""
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list) -> None:
        a = dict(attrs)
        if tag == "tr" and "data-agent" in a:
            self._agent, self._row = a["data-agent"], []
        elif tag == "td" and self._row is not None:
            self._in = "td"
        elif tag == "text" and a.get("class") == "passk":
            self._in = "bar"

    def handle_endtag(self, tag: str) -> None:
        if tag == "tr" and self._row is not None:
            self.rows[self._agent] = self._row
            self._row = None
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "td" and self._row is not None:
            self._row.append(data)
        elif self._in == "bar":
            self.bars.append(data)


def test_page_renders_in_chromium_with_the_json_numbers(campaign: Path, tmp_path: Path) -> None:
    chromium = shutil.which("chromium")
    assert chromium, "Debian's chromium is required (apt-get install -y chromium; .ci/run installs it)"
    page = (campaign / "report.html").resolve()
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", f"--user-data-dir={tmp_path}/p"]
    dom = subprocess.run([chromium, *flags, "--dump-dom", page.as_uri()], capture_output=True, text=True,
                         timeout=120).stdout
    shot = tmp_path / "page.png"
    subprocess.run([chromium, *flags, f"--screenshot={shot}", "--window-size=900,1200", page.as_uri()],
                   capture_output=True, timeout=120)
    assert shot.exists() and shot.stat().st_size > 5000  # it painted something
    cells = _Cells()
    cells.feed(dom)
    summary = json.loads((campaign / "report.json").read_text(encoding="utf-8"))
    for a in summary["agents"]:
        row = cells.rows[a["agent"]]
        assert row[0] == a["agent"]
        assert row[3:6] == [f"{a['pass_rate']:.3f}", f"{a['pass_at_k']:.3f}", f"{a['pass_k']:.3f}"]
    assert cells.bars == [f"{s['pass_k']:.3f}" for a in summary["agents"] for s in a["scenarios"]]
    assert "<svg" in dom and "circle" in dom
