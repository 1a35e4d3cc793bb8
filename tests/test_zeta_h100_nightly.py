"""On the H100 nightly (results/h100, shifted-curve ZETA selector) every needle is retrieved at 4K-128K,
as by exact top-k, in every committed needle case; and the recall sweep on that GPU missed none."""
import json
from pathlib import Path

from runners.resultfile import load

H100 = Path(__file__).resolve().parents[1] / "results" / "h100"


def test_zeta_retrieves_every_needle_on_the_h100_nightly():
    rows = [r for r in load(H100 / "nightly_v4_353e003.json.gz")["results"]
            if r["technique"] == "needle_retrieval" and r["metric"] == "retrieval"]
    zeta = [r for r in rows if r["impl"] == "triton_zeta_morton"]
    exact = [r for r in rows if r["impl"] == "triton_exact_topk"]
    assert len(zeta) == len(exact) >= 90 and {r["case"][:6] for r in zeta} >= {"ctx4k_", "ctx64k", "ctx128"}
    assert [r["case"] for r in zeta if r["status"] != "ok" or r["value"] < 1.0] == []


def test_the_h100_recall_sweep_missed_no_needle():
    doc = json.loads((H100 / "studies" / "zeta_recall_f4b29cc.json").read_text())
    assert doc["gpu"].startswith("NVIDIA H100")
    for ctx in ("65536", "131072"):
        got = doc["results"]["zeta_morton"][ctx]
        assert got["k"] == got["n"] == 20 and got["missed_seeds"] == []
