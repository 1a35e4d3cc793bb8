"""The nightly tier's time on one H200, estimated from the committed H200 runs' job times, stays within
its 10-minute budget; the estimator picks each job's newest run on the same GPU and protocol."""
from __future__ import annotations

import json
import subprocess
import sys
from dataclasses import asdict

from runners.budget import estimate, recorded_times, result_files, run_time
from runners.resultfile import ResultFile
from runners.run import RunOptions, plan
from runners.timing import Protocol
from suite.registry import get
from suite.spec import NIGHTLY_BUDGET_S
from tests.conftest import ROOT

H200 = "NVIDIA H200"


def test_committed_h200_runs_put_the_nightly_tier_within_its_budget():
    files = result_files([str(ROOT / "results" / "h200")])
    jobs = plan(RunOptions(tier="nightly", device="cuda"))
    est = estimate(jobs, recorded_times(files, H200), H200, files)
    assert est.total_s <= NIGHTLY_BUDGET_S, (
        f"nightly tier estimated at {est.total_s:.0f} s on one H200: "
        + ", ".join(f"{t} {s:.0f} s" for t, (_, s) in list(est.by_technique().items())[:6]))
    # the estimate stands on measured jobs: at most 3 % of them guessed from their technique's others
    assert len(est.guessed) <= 0.03 * len(jobs), [(j.technique, j.impl, j.case) for j in est.guessed]


def test_record_only_variants_leave_the_nightly_but_not_the_full_tier():
    tech = get("decode_step")
    nightly = {i.name for i in tech.impls_for("nightly")}
    assert "triton_persistent" not in nightly and "triton_fused_tuned" in nightly
    assert "triton_persistent" in {i.name for i in tech.impls_for("full")}
    # named explicitly, a record-only variant still runs in the nightly tier
    named = plan(RunOptions(tier="nightly", techniques=["decode_step"], impls=["triton_persistent"], device="cuda"))
    assert {i.name for _, i, _ in named} == {"triton_persistent"}


def _write(path, gpu: str, started: str, rows: list[tuple[str, str, str, float]], protocol=None) -> str:
    run = {"id": f"r-{started}", "started_at": started, "finished_at": started, "tier": "nightly",
           "reason": "test", "git": {}, "env": {"device": "cuda", "gpu_name": gpu},
           "config": {"protocol": asdict(protocol or Protocol())}}
    rf = ResultFile(path, run)
    rf.add([{"technique": t, "impl": i, "case": c, "metric": "latency_ms", "status": "ok",
             "stats": {"job_s": s}} for t, i, c, s in rows])
    return str(path)


def test_newest_run_on_the_same_gpu_and_protocol_wins(tmp_path):
    jobs = plan(RunOptions(tier="nightly", techniques=["decode_step"], device="cuda"))
    (t0, i0, c0), (t1, i1, c1) = [(t.name, i.name, c.id) for t, i, c in jobs[:2]]
    files = [
        _write(tmp_path / "old.json", H200, "2026-01-01T00:00:00+00:00", [(t0, i0, c0, 50.0), (t1, i1, c1, 4.0)]),
        _write(tmp_path / "new.json.gz", H200, "2026-02-01T00:00:00+00:00", [(t0, i0, c0, 5.0)]),
        _write(tmp_path / "other_gpu.json", "NVIDIA H100", "2026-03-01T00:00:00+00:00", [(t0, i0, c0, 900.0)]),
        _write(tmp_path / "other_protocol.json", H200, "2026-03-01T00:00:00+00:00", [(t0, i0, c0, 700.0)],
               Protocol(max_time_s=9.0)),
    ]
    (tmp_path / "not_a_run.json").write_text('{"study": []}')
    est = estimate(jobs, recorded_times(files + [str(tmp_path / "not_a_run.json")], H200), H200)
    by_key = {(j.technique, j.impl, j.case): j for j in est.jobs}
    assert by_key[(t0, i0, c0)].seconds == 5.0 and by_key[(t0, i0, c0)].source.endswith("new.json.gz")
    assert by_key[(t1, i1, c1)].seconds == 4.0
    rest = [j for j in est.jobs[2:]]
    # never recorded: the median of the technique's recorded jobs on the same case, else the technique's
    assert rest and all(j.guessed and j.seconds == 4.5 for j in rest)


def test_v3_job_times_estimate_v4_runs_and_v2_times_do_not(tmp_path):
    """v3 and v4 differ only in how the L2 is flushed (the same bytes written or read): a v3 run's job
    times count for a v4 estimate; a v2 run's do not (other repetition rules)."""
    v3 = Protocol(cuda_version=3, flush_mode="zero")
    v2 = {k: v for k, v in asdict(Protocol(cuda_version=2, flush_mode="zero")).items()
          if k not in ("warmup_s", "min_time_s", "flush_mode")}
    files = [_write(tmp_path / "v3.json", H200, "2026-01-01T00:00:00+00:00", [("a", "b", "c", 7.0)], v3)]
    path = tmp_path / "v2.json"
    rf = ResultFile(path, {"id": "r2", "started_at": "2026-02-01T00:00:00+00:00", "finished_at": "", "tier": "nightly",
                           "reason": "test", "git": {}, "env": {"device": "cuda", "gpu_name": H200},
                           "config": {"protocol": v2}})
    rf.add([{"technique": "a", "impl": "b", "case": "c", "metric": "latency_ms", "status": "ok", "stats": {"job_s": 99.0}}])
    times = recorded_times(files + [str(path)], H200)
    assert Protocol().cuda_version == 4 and times[("a", "b", "c")][1] == 7.0


def test_cli_exits_1_over_the_budget_and_names_the_slowest_jobs(tmp_path):
    jobs = plan(RunOptions(tier="nightly", techniques=["w4a16_gemm"], device="cuda"))
    rows = [(t.name, i.name, c.id, 2.0) for t, i, c in jobs]
    rows[0] = (*rows[0][:3], 700.0)
    path = _write(tmp_path / "w4a16.json.gz", H200, "2026-02-01T00:00:00+00:00", rows)
    cmd = [sys.executable, "-m", "runners", "estimate", "-t", "w4a16_gemm", "--from", path, "--jobs", "1"]
    over = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert over.returncode == 1, over.stderr
    assert f"700.0 s  {'/'.join(rows[0][:3])}" in over.stdout and "OVER" in over.stdout
    within = subprocess.run(cmd + ["--budget", "1000"], capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert within.returncode == 0 and "within" in within.stdout
    none = subprocess.run(cmd[:-4] + ["--from", str(tmp_path / "nothing_here")], capture_output=True, text=True,
                          cwd=ROOT, timeout=300)
    assert none.returncode == 2 and "no result files" in none.stderr


def test_run_time_counts_each_job_once_probe_rows_included():
    doc = {"run": {"started_at": "2026-01-01T00:00:00+00:00", "finished_at": "2026-01-01T00:01:40+00:00"},
           "results": [{"technique": "t", "impl": "a", "case": "c", "stats": {"job_s": 30.0}},
                       {"technique": "t", "impl": "a", "case": "c", "stats": {"job_s": 30.0}},  # 2nd metric
                       {"technique": "t", "impl": "a", "case": "probe_1", "stats": {"job_s": 30.0}},
                       {"technique": "u", "impl": "b", "case": "c", "stats": {"job_s": 50.0}},
                       {"technique": "u", "impl": "b", "case": "d", "stats": {}}]}
    assert run_time(doc) == {"wall_s": 100.0, "by_technique": {"u": 50.0, "t": 30.0}}
    assert run_time({"run": {"started_at": "2026-01-01T00:00:00+00:00", "finished_at": None}}) is None


def test_nightly_report_gives_the_run_time_against_the_budget(sqlite_url, tmp_path):
    """A committed H200 nightly (69 s) through kwatch nightly, then the same run stretched to 11 minutes."""
    import gzip
    import json

    from tests.conftest import kwatch

    doc = json.loads(gzip.decompress((ROOT / "results/h200/formats/w4a16_nightly_4bb8918.json.gz").read_bytes()))
    within = tmp_path / "within.json"
    within.write_text(json.dumps(doc))
    p = kwatch("nightly", "--db", sqlite_url, "--result", str(within), "--out-dir", str(tmp_path / "a"))
    assert p.returncode == 0, p.stdout + p.stderr
    md = (tmp_path / "a" / "nightly.md").read_text()
    assert "- run time: 1.1 min of the nightly's 10-min budget on one GPU (slowest: w4a16_gemm 1.0 min)" in md
    assert "Over the nightly budget" not in md
    doc["run"] |= {"id": "stretched", "finished_at": "2026-12-01T08:49:30+00:00"}  # 08:38:30 + 11 min
    over = tmp_path / "over.json"
    over.write_text(json.dumps(doc))
    p = kwatch("nightly", "--db", sqlite_url, "--result", str(over), "--out-dir", str(tmp_path / "b"))
    md = (tmp_path / "b" / "nightly.md").read_text()
    assert "- run time: 11.0 min of the nightly's 10-min budget on one GPU — **over budget**" in md
    assert "### Over the nightly budget" in md and "| `w4a16_gemm` | 1.0 |" in md
    assert json.loads((tmp_path / "b" / "nightly.json").read_text())["time"]["over_budget"] is True


def test_an_unreadable_file_is_named_and_the_rest_still_counts(tmp_path):
    jobs = plan(RunOptions(tier="nightly", techniques=["monarch"], device="cuda"))
    good = _write(tmp_path / "good.json.gz", H200, "2026-02-01T00:00:00+00:00",
                  [(t.name, i.name, c.id, 1.0) for t, i, c in jobs])
    bad = tmp_path / "cut.json.gz"
    bad.write_bytes((tmp_path / "good.json.gz").read_bytes()[:40])  # a truncated gzip stream
    proc = subprocess.run([sys.executable, "-m", "runners", "estimate", "-t", "monarch", "--from", str(tmp_path)],
                          capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert f"skipped, unreadable: {bad}" in proc.stdout
    assert f"estimated {len(jobs) + 10:.0f} s" in proc.stdout and good


def test_a_job_skipped_on_that_gpu_costs_nothing_and_skews_no_guess(tmp_path):
    jobs = plan(RunOptions(tier="nightly", techniques=["decode_step"], device="cuda"))
    (t0, i0, c0), (t1, i1, c1) = [(t.name, i.name, c.id) for t, i, c in jobs[:2]]
    path = _write(tmp_path / "r.json", H200, "2026-02-01T00:00:00+00:00", [(t0, i0, c0, 6.0)])
    doc = json.loads(open(path).read())
    doc["results"].append({"technique": t1, "impl": i1, "case": c1, "metric": "latency_ms", "status": "skipped",
                           "stats": {}})  # skipped rows carry no job time: no worker ran
    open(path, "w").write(json.dumps(doc))
    est = estimate(jobs, recorded_times([path], H200), H200)
    by_key = {(j.technique, j.impl, j.case): j for j in est.jobs}
    assert by_key[(t1, i1, c1)].seconds == 0.0 and not by_key[(t1, i1, c1)].guessed
    assert all(j.seconds == 6.0 for j in est.guessed)  # the median of the jobs that ran, not of 6 and 0
