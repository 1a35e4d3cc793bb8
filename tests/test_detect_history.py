"""kwatch detect on nightly history replayed from a real H200 run: finds an injected step, ack re-baselines, mute quiets."""
import json
from pathlib import Path

import pytest

from ci.nightly_replay import replay_runs
from db.detector import online_changes
from tests.conftest import ROOT, kwatch, write_docs
from runners.resultfile import load

H200 = ROOT / "results/h200/gemm_fp32_emulation_nightly_foundation.json.gz"
STEP = ("triton_dot_bf16x3", "m2048n2048k2048")


@pytest.fixture(scope="module")
def nights():
    doc = load(H200)
    return replay_runs(doc, nights=21, block=20, steps={STEP: (15, 1.05)})


def test_a_5pct_step_in_real_noise_alerts_once_within_2_nights_and_plain_noise_never(nights):
    lat = lambda impl: [next(r["value"] for r in d["results"] if r["impl"] == impl and
                             r["case"] == STEP[1] and r["metric"] == "latency_ms") for d in nights]
    alerts = online_changes(lat(STEP[0]))
    assert [(a.night, a.change.index) for a in alerts] == [(17, 15)]
    assert alerts[0].change.rel_change == pytest.approx(0.05, abs=0.01)
    assert online_changes(lat("cublas_fp32")) == []


def test_detect_stores_changes_and_ack_rebaselines(nights, db_url, tmp_path):
    files = write_docs(nights, tmp_path)[:18]  # through the step's third night (night 17)
    assert kwatch("ingest", *files, "--db", db_url).returncode == 0
    out = tmp_path / "d.json"
    p = kwatch("detect", "--db", db_url, "--json", str(out), "--fail-on-new")
    assert p.returncode == 1, p.stdout + p.stderr  # a new regression, found on its third night
    changes = json.loads(out.read_text())["changes"]
    lat = [c for c in changes if c["metric"] == "latency_ms"]
    assert [(c["impl"], c["case_id"], c["kind"]) for c in lat] == [(*STEP, "regression")]
    assert lat[0]["run_id"] == nights[15]["run"]["id"] and lat[0]["new"] and not lat[0]["late"]
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
    # later nights at the acknowledged level stay quiet
    (tmp_path / "rest").mkdir()
    rest = write_docs(nights, tmp_path / "rest")[18:]
    assert kwatch("ingest", *rest, "--db", db_url).returncode == 0
    p = kwatch("detect", "--db", db_url, "--json", str(out), "--fail-on-new")
    assert p.returncode == 0 and not any(c["new"] for c in json.loads(out.read_text())["changes"])
    assert kwatch("ack", "99999", "--who", "a", "--why", "b", "--db", db_url).returncode != 0


def test_a_muted_series_is_listed_but_does_not_fail(nights, sqlite_url, tmp_path):
    files = write_docs(nights, tmp_path)[:18]
    assert kwatch("ingest", *files, "--db", sqlite_url).returncode == 0
    assert kwatch("mute", "add", "-t", "gemm_fp32_emulation", "-i", STEP[0], "--who", "carol",
                  "--why", "known clock issue", "--until", "3d", "--db", sqlite_url).returncode == 0
    out = tmp_path / "d.json"
    p = kwatch("detect", "--db", sqlite_url, "--json", str(out), "--fail-on-new")
    assert p.returncode == 0, p.stdout + p.stderr
    changes = json.loads(out.read_text())["changes"]
    assert changes and all(c["muted"]["who"] == "carol" for c in changes)
    assert "0 new regressions" in p.stderr and "carol" in p.stdout
