"""The result file's rewrites: immediate while cheap, held back once a rewrite is costly (so a long run
does not spend its time rewriting), and nothing lost when a run stops early, by signal or exception."""
from __future__ import annotations

import json
import signal
import subprocess
import sys
import time

from runners import resultfile
from runners.resultfile import ResultFile, load, new_run
from tests.conftest import ROOT


def _row(i: int) -> dict:
    return {"technique": "t", "impl": "i", "case": f"c{i}", "metric": "latency_ms", "status": "ok",
            "value": float(i), "stats": {}}


def test_cheap_rewrites_happen_after_every_addition(tmp_path):
    rf = ResultFile(tmp_path / "r.json.gz", new_run("smoke", "test", {}, {}))
    for i in range(3):
        rf.add([_row(i)])
        assert len(load(tmp_path / "r.json.gz")["results"]) == i + 1


def test_costly_rewrites_wait_and_pending_rows_are_written_on_request(tmp_path, monkeypatch):
    # every rewrite counts as costly, and the run has not yet spent 1/share times its cost on jobs
    monkeypatch.setattr(resultfile, "CHEAP_FLUSH_S", 0.0)
    monkeypatch.setattr(resultfile, "MAX_FLUSH_SHARE", 1e-9)
    path = tmp_path / "r.json"
    rf = ResultFile(path, new_run("smoke", "test", {}, {}))
    rf.add([_row(0)])
    rf.add([_row(1)])
    assert load(path)["results"] == []  # held back
    rf.flush_pending()
    assert [r["case"] for r in load(path)["results"]] == ["c0", "c1"]
    mtime = path.stat().st_mtime_ns
    rf.flush_pending()  # nothing pending: no rewrite
    assert path.stat().st_mtime_ns == mtime
    monkeypatch.setattr(resultfile, "MAX_FLUSH_SHARE", 1e9)  # any pause is long enough now
    rf.add([_row(2)])
    assert len(load(path)["results"]) == 3


def test_sigterm_ends_a_run_with_its_finished_jobs_in_a_valid_file(tmp_path):
    out = tmp_path / "stopped.json.gz"
    cmd = [sys.executable, "-m", "runners", "run", "--tier", "smoke", "-t", "gemm_fp32_emulation",
           "--out", str(out)]
    proc = subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 300
    done = 0
    while time.monotonic() < deadline and proc.poll() is None:
        try:
            done = len(load(out)["results"])
        except Exception:  # not written yet, or mid-rename
            done = 0
        if done:
            break
        time.sleep(0.2)
    assert done and proc.poll() is None, "the run finished or wrote nothing before it could be stopped"
    proc.send_signal(signal.SIGTERM)
    _, err = proc.communicate(timeout=120)
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "stopped by signal" in " ".join(err.split())
    doc = load(out)
    assert doc["run"]["finished_at"] is None  # marked as a run that did not finish
    assert len(doc["results"]) >= done
    json.dumps(doc)  # whole and valid


def test_a_signal_mid_rewrite_leaves_no_temporary_file_and_loses_no_row(tmp_path, monkeypatch):
    rf = ResultFile(tmp_path / "r.json.gz", new_run("smoke", "test", {}, {}))

    def interrupted(*_a, **_k):  # what SIGTERM's handler does when it lands inside the rewrite
        raise SystemExit(143)

    monkeypatch.setattr(resultfile.json, "dumps", interrupted)
    try:
        rf.add([_row(0)])
    except SystemExit:
        pass
    monkeypatch.undo()
    assert [p.name for p in tmp_path.iterdir()] == ["r.json.gz"]
    rf.flush_pending()  # what execute() does on its way out
    assert [r["case"] for r in load(tmp_path / "r.json.gz")["results"]] == ["c0"]
