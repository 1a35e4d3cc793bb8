"""Backfill and A/B over this repository's own commits: clean trees, the current runner, real result files."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from runners.backfill import backfill_tree, spec_of
from runners.resultfile import load
from runners.trees import commit_info, export, read_info

ROOT = Path(__file__).resolve().parent.parent
OLD = "9fd8447"  # exp_approx exists, pre-layout-change spec (no Impl.args, no implementation())
NO_EXP = "e72fb76"  # the first commit: no exp_approx at all
SPEC = spec_of("smoke", ["exp_approx"], ["triton_mufu"], ["elem_n4k"], "cpu", 300.0, seed=7)


def _have(ref: str) -> bool:
    return subprocess.run(["git", "cat-file", "-e", f"{ref}^{{commit}}"], cwd=ROOT).returncode == 0


needs_history = pytest.mark.skipif(not all(map(_have, (OLD, NO_EXP))), reason="clone without this history")


@needs_history
def test_backfill_runs_each_commits_own_code_and_records_what_fails(tmp_path):
    infos = [commit_info(r) for r in (NO_EXP, OLD, "HEAD")]
    trees = export(infos, tmp_path / "trees")
    assert not (trees[1] / ".git").exists() and (trees[1] / "suite" / "spec.py").is_file()
    results = [backfill_tree(t, SPEC, tmp_path / "out") for t in trees]
    assert [s for _, s in results] == ["import_failed", "measured", "measured"]

    failed = load(results[0][0])
    assert failed["results"] == [] and failed["run"]["git"]["commit"] == infos[0]["commit"]
    assert "exp_approx" in failed["run"]["config"]["backfill"]["error"]
    assert failed["run"]["config"]["backfill"]["selection"]["techniques"] == ["exp_approx"]

    hashes = []
    for (path, _), info in zip(results[1:], infos[1:]):
        doc = load(path)
        assert doc["run"]["git"] == {"commit": info["commit"], "branch": info["ref"], "dirty": False,
                                     "date": info["date"]}
        assert doc["run"]["reason"] == "backfill" and doc["run"]["config"]["backfill"]["status"] == "measured"
        rows = [r for r in doc["results"] if r["metric"] == "latency_ms" and r["case"] == "elem_n4k"]
        assert len(rows) == 1 and rows[0]["status"] == "ok" and rows[0]["value"] > 0
        hashes.append(rows[0]["impl_hash"])
    # the exp2 kernel moved into suite/lib between the two commits: a different kernel version
    assert hashes[0] != hashes[1]


def test_ab_of_identical_code_interleaves_and_passes_the_gate(tmp_path):
    from ci.gate import run_gate
    from ci.gate_refs import resolve

    tree = export([commit_info("HEAD")], tmp_path / "trees")[0]
    cmd = [sys.executable, "-m", "runners", "ab", "--base", str(tree), "--head", str(tree), "--out-dir",
           str(tmp_path / "out"), "--tier", "smoke", "-t", "exp_approx", "-i", "triton_mufu", "-c", "elem_n4k",
           "--device", "cpu", "--rounds", "2", "--seed", "7"]
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)
    base, head = (load(tmp_path / "out" / f"ab_{s}.json.gz") for s in ("base", "head"))
    assert base["run"]["reason"] == "ab-base" and head["run"]["reason"] == "ab-head"
    commit = read_info(tree)["commit"]
    assert base["run"]["config"]["ab"] == {"rounds": 2, "base": commit, "head": commit}
    lat = [next(r for r in d["results"] if r["metric"] == "latency_ms") for d in (base, head)]
    for r in lat:  # two rounds pooled: the value is the median of every round's samples
        assert r["stats"]["rounds"] == 2 and len(r["stats"]["round_values"]) == 2
        assert sorted(r["samples"])[len(r["samples"]) // 2] == pytest.approx(r["value"], rel=0.5)
    assert lat[0]["impl_hash"] == lat[1]["impl_hash"]
    result = run_gate(resolve(str(tmp_path / "out" / "ab_base.json.gz")),
                      resolve(str(tmp_path / "out" / "ab_head.json.gz")))
    assert not result.failed and result.counts().get("stable", 0) > 0


@needs_history
def test_kwatch_backfill_stores_commit_and_date_skips_measured_and_records_import_failures(db_url, tmp_path):
    from sqlalchemy import select

    from ci.backfill import backfill
    from db.engine import open_db
    from db.models import Result, Run

    spec = spec_of("smoke", ["exp_approx"], ["triton_mufu"], ["elem_n4k"], "cpu", 300.0)
    rng = f"{NO_EXP}^!"  # that commit alone: no exp_approx there
    first = backfill(rng, spec, db_url, out_dir=tmp_path / "out")
    assert [s for _, s in first] == ["import_failed"]
    rng_old = f"{OLD}^!"
    assert [s for _, s in backfill(rng_old, spec, db_url, out_dir=tmp_path / "out")] == ["measured"]
    again = backfill(rng_old, spec, db_url, out_dir=tmp_path / "out") + backfill(rng, spec, db_url, out_dir=tmp_path / "out")
    assert [s for _, s in again] == ["skipped (measured)"] * 2
    info = commit_info(OLD)
    with open_db(db_url)() as s:
        runs = {r.git_commit: r for r in s.scalars(select(Run).where(Run.reason == "backfill"))}
        assert set(runs) == {info["commit"], commit_info(NO_EXP)["commit"]}
        old = runs[info["commit"]]
        assert old.git_date.isoformat()[:19] == info["date"][:19]
        assert old.config["backfill"]["status"] == "measured"
        lat = s.scalars(select(Result).where(Result.run_id == old.id, Result.metric == "latency_ms")).all()
        assert lat and all(r.status == "ok" and r.value > 0 for r in lat)
        assert runs[commit_info(NO_EXP)["commit"]].config["backfill"]["status"] == "import_failed"


def test_kwatch_gate_ab_of_identical_code_passes(tmp_path):
    from tests.conftest import kwatch

    out = kwatch("gate", "--ab", "HEAD", "HEAD", "--tier", "smoke", "-t", "exp_approx", "-i", "triton_mufu",
                 "--case", "elem_n4k", "--markdown", str(tmp_path / "gate.md"),
                 "--db", f"sqlite:///{tmp_path / 'g.db'}", cwd=tmp_path)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "PASS" in out.stderr and (tmp_path / "gate.md").read_text().count("stable") > 3
    assert len(list((tmp_path / "kwatch-runs" / "ab").glob("ab_*_base.json.gz"))) == 1
