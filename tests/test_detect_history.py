"""kwatch detect on nightly history replayed from a real H200 run: finds an injected step, ack re-baselines."""
import json
from pathlib import Path

import pytest

from ci.detect_bench import replay_runs
from ci.detect_core import online_pelt, pelt_changes
from tests.conftest import ROOT, kwatch, write_docs

H200 = ROOT / "results/h200/gemm_fp32_emulation_nightly_foundation.json"
STEP = ("triton_dot_bf16x3", "m2048n2048k2048")


@pytest.fixture(scope="module")
def nights():
    doc = json.loads(H200.read_text())
    return replay_runs(doc, nights=16, block=20, steps={STEP: (10, 1.05)})


def test_pelt_finds_a_5pct_step_in_real_noise_and_nothing_in_plain_noise(nights):
    lat = lambda impl: [next(r["value"] for r in d["results"] if r["impl"] == impl and
                             r["case"] == STEP[1] and r["metric"] == "latency_ms") for d in nights]
    changes = pelt_changes(lat(STEP[0]))
    assert [c.index for c in changes] == [10]
    assert changes[0].rel_change == pytest.approx(0.05, abs=0.01)
    assert pelt_changes(lat("cublas_fp32")) == []
    alerts = online_pelt(lat(STEP[0]))
    assert len(alerts) == 1 and 10 <= alerts[0][0] <= 12  # found within 2 nights, once


def test_detect_stores_changes_and_ack_rebaselines(nights, db_url, tmp_path):
    files = write_docs(nights, tmp_path)
    assert kwatch("ingest", *files, "--db", db_url).returncode == 0
    out = tmp_path / "d.json"
    p = kwatch("detect", "--db", db_url, "--json", str(out), "--fail-on-new")
    assert p.returncode == 1, p.stdout + p.stderr  # a new regression
    changes = json.loads(out.read_text())["changes"]
    lat = [c for c in changes if c["metric"] == "latency_ms"]
    assert [(c["impl"], c["case_id"], c["kind"]) for c in lat] == [(*STEP, "regression")]
    assert lat[0]["run_id"] == nights[10]["run"]["id"] and lat[0]["new"]
    tfl = [c for c in changes if c["metric"] == "tflops"]
    assert [c["kind"] for c in tfl] == ["regression"]  # throughput fell: worse for a higher-is-better metric
    # Second pass: same change, no longer new, so the nightly gate no longer fails on it.
    p = kwatch("detect", "--db", db_url, "--json", str(out), "--fail-on-new")
    assert p.returncode == 0, p.stdout + p.stderr
    assert not any(c["new"] for c in json.loads(out.read_text())["changes"])
    p = kwatch("ack", str(lat[0]["id"]), "--who", "alice", "--why", "bf16x3 retuned on purpose", "--db", db_url)
    assert p.returncode == 0, p.stderr
    kwatch("detect", "--db", db_url, "--json", str(out))
    after = [c for c in json.loads(out.read_text())["changes"] if c["metric"] == "latency_ms"]
    assert len(after) == 1 and after[0]["acknowledged"]["who"] == "alice"
    assert kwatch("ack", "99999", "--who", "a", "--why", "b", "--db", db_url).returncode != 0


def test_a_muted_series_is_listed_but_does_not_fail(nights, sqlite_url, tmp_path):
    files = write_docs(nights, tmp_path)
    assert kwatch("ingest", *files, "--db", sqlite_url).returncode == 0
    assert kwatch("mute", "add", "-t", "gemm_fp32_emulation", "-i", STEP[0], "--who", "carol",
                  "--why", "known clock issue", "--until", "3d", "--db", sqlite_url).returncode == 0
    out = tmp_path / "d.json"
    p = kwatch("detect", "--db", sqlite_url, "--json", str(out), "--fail-on-new")
    assert p.returncode == 0, p.stdout + p.stderr
    changes = json.loads(out.read_text())["changes"]
    assert changes and all(c["muted"]["who"] == "carol" for c in changes)
    assert "0 new regressions" in p.stderr and "carol" in p.stdout


def _bimodal_runs() -> list[float]:
    """Whole-run medians, in run order, of a series measured in 17 repeated H200 runs that settles in
    one of two levels (+9% in 3 of 17 runs)."""
    from ci.detect_bench import run_series

    runs = sorted((ROOT / "results/h200/repeats").glob("rep_*.json.gz"))
    ser = next(s for s in run_series([str(p) for p in runs], 17)
               if s["series"] == "exp_approx/triton_hybrid3_f50/elem_n16m")
    return ser["run_values"]


def test_a_level_the_series_visited_before_is_not_a_change_but_a_new_one_is():
    v = _bimodal_runs()
    low, high = min(v), max(v)
    assert high / low - 1 > 0.07  # the real second level is far above the 3% floor
    history = v + v[:8]  # 25 real nights, both levels present
    spell = history + [high, high * 1.002, high * 0.999]  # three nights in the known high state
    assert pelt_changes(spell) == []
    assert online_pelt(spell, start=len(history)) == []
    step = history + [x * 1.05 for x in v[:6]]  # a real 5% slowdown of whatever state the night lands in
    found = pelt_changes(step)
    assert [c.index for c in found] == [len(history)] and found[0].rel_change > 0.03
    never_seen = [low * (1 + 0.001 * (i % 3)) for i in range(25)] + [high] * 4  # the high level, first time
    assert [c.index for c in pelt_changes(never_seen)] == [25]
