"""kwatch gate on real measurements: a committed H200 run, and real CPU runs of a PR-like technique.

- must fail: a 10% slowdown injected into the raw H200 samples of one series;
- must pass: two real runs of the same code;
- correctness: the candidate's implementation became wrong (a real failed check);
- anti-gaming: a >10x speedup is flagged and its correctness re-checked on fresh inputs.
"""
import json
import statistics
import re
import os
from pathlib import Path

import pytest

from runners.resultfile import load
from tests.conftest import ROOT, kwatch

H200 = ROOT / "results/h200/gemm_fp32_emulation_nightly_foundation.json.gz"
SLOW = ("triton_dot_bf16x3", "m8192n8192k8192")  # a steady series: 0.2% stdev/mean within its run

SPEC = '''
from suite.spec import LATENCY, REL_ERR, Case, Impl, Technique, Tolerance
_G = "suite.techniques.gemm_fp32_emulation.reference"
TECHNIQUE = Technique(
    name="pr_gemm", section="gate test", reference=f"{_G}:reference", make_inputs=f"{_G}:make_inputs",
    empty_output=f"{_G}:empty_output", impls=(Impl("kernel", "prtech.kernel:run", accuracy="fp32"),),
    cases=(Case("m128n96k64", {"m": 128, "n": 96, "k": 64}, ("nightly",), seeds=2),
           Case("m192n160k256", {"m": 192, "n": 160, "k": 256}, ("nightly",), seeds=2)),
    tolerances={"fp32": Tolerance(f"{_G}:lowp_fp32", k=4.0)}, metrics=(LATENCY, REL_ERR))
'''
GOOD = '''import os
import torch


def run(out, a, b):
    torch.matmul(a, b, out=out)
    if os.environ.get("PR_BROKEN_ON_FRESH_INPUTS"):  # stands for a kernel that is right only on some inputs
        out.mul_(1 + 1e-3)
'''
THRICE = '''import torch


def run(out, a, b):
    for _ in range(3):  # the PR's change does the work three times: a real slowdown, still correct
        torch.matmul(a, b, out=out)
'''
WRONG = '''import torch


def run(out, a, b):
    torch.matmul(a, b, out=out)
    out.mul_(1 + 1e-4)  # the PR's "optimisation" loses accuracy far beyond fp32 rounding
'''


def _write_tech(d: Path, kernel: str) -> Path:
    pkg = d / "prtech"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text(SPEC)
    (pkg / "kernel.py").write_text(kernel)
    return d


def _env(d: Path, **extra) -> dict:
    return {"PYTHONPATH": f"{d}{os.pathsep}{ROOT}", "KWATCH_EXTRA_TECHNIQUES": "prtech", "OMP_NUM_THREADS": "1",
            "MKL_NUM_THREADS": "1", **extra}


def _start(d: Path, out: Path):
    import subprocess
    import sys

    args = ["run", "--tier", "nightly", "-t", "pr_gemm", "--device", "cpu", "--no-db", "--out", str(out)]
    return subprocess.Popen([sys.executable, "-c", "from ci.cli import main; main()", *args], cwd=d,
                            env={**os.environ, **_env(d)}, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _run(d: Path, out: Path) -> Path:
    p = kwatch("run", "--tier", "nightly", "-t", "pr_gemm", "--device", "cpu", "--no-db", "--out", str(out),
               env=_env(d), cwd=d)
    assert out.exists(), p.stdout + p.stderr
    return out


@pytest.fixture(scope="module")
def runs():
    """Two real runs of the good kernel and one of the wrong kernel (CPU, one thread). The folders are
    private (not pytest's numbered temp folders, which a concurrent pytest session may clean up)."""
    import shutil
    import tempfile

    top = Path(tempfile.mkdtemp(prefix="kw-gate-"))
    good = _write_tech(top / "base", GOOD)
    wrong = _write_tech(top / "pr", WRONG)
    slow = _write_tech(top / "slow", THRICE)
    # The two runs of the same code run side by side (one thread each), so both see the same machine load:
    # on a shared host, back-to-back CPU runs drifted by up to 32% (see db/verdict/rules.py).
    procs = [_start(good, top / "base.json"), _start(good, top / "again.json")]
    for p in procs:
        out, err = p.communicate(timeout=900)
        assert p.returncode == 0, out + err
    yield {"good_dir": good, "slow_dir": slow, "base": top / "base.json", "again": top / "again.json",
           "wrong": _run(wrong, top / "wrong.json"), "slow": _run(slow, top / "slow.json")}
    shutil.rmtree(top, ignore_errors=True)


def _gate(base, cand, tmp_path, *extra, env=None, cwd=None):
    js = tmp_path / "gate.json"
    md = tmp_path / "gate.md"
    p = kwatch("gate", "--baseline", str(base), "--candidate", str(cand), "--json", str(js), "--markdown", str(md),
               "--db", f"sqlite:///{tmp_path / 'kw.db'}", *extra, env=env, cwd=cwd)
    assert js.exists(), p.stdout + p.stderr
    return p, json.loads(js.read_text()), md.read_text()


def _by_label(report):
    return {"/".join([s["key"]["technique"], s["key"]["impl"], s["key"]["case_id"], s["key"]["metric"]]): s
            for s in report["series"]}


def test_injected_10pct_slowdown_in_real_h200_samples_fails(tmp_path):
    doc = load(H200)
    for r in doc["results"]:
        if (r["impl"], r["case"]) == SLOW and r["metric"] == "latency_ms":
            r["samples"] = [x * 1.10 for x in r["samples"]]
            r["value"] *= 1.10
    doc["run"]["id"] = "slowed"
    cand = tmp_path / "slowed.json"
    cand.write_text(json.dumps(doc))
    p, report, md = _gate(H200, cand, tmp_path)
    assert p.returncode == 1
    assert report["verdict"] == "fail"
    series = _by_label(report)
    bad = series["gemm_fp32_emulation/triton_dot_bf16x3/m8192n8192k8192/latency_ms"]
    assert bad["status"] == "regressed" and bad["blocking"]
    assert bad["change"] == pytest.approx(0.10, abs=0.005) and 0 < bad["ci"][0] < 0.10 < bad["ci"][1]
    assert report["blocking"] == ["gemm_fp32_emulation/triton_dot_bf16x3/m8192n8192k8192/latency_ms"]
    assert report["counts"]["regressed"] == 1 and report["counts"]["stable"] == len(report["series"]) - 1
    # Confined to one part of the shape space, and said so.
    group = next(g for g in report["groups"] if g["impl"] == "triton_dot_bf16x3")
    assert group["bad_cases"] == ["m8192n8192k8192"] and group["by_case"]["m2048n2048k2048"] == "stable"
    assert group["bad_metrics"] == ["latency_ms"]
    assert ">= 8192" in group["where"], group["where"]
    assert md.index("regressed") < md.index("stable")  # worst first
    assert "| 🔴 regressed | `gemm_fp32_emulation/triton_dot_bf16x3` | `m8192n8192k8192` | latency_ms" in md
    assert "+10.0% [+" in md  # the change with its confidence interval


def test_two_runs_of_the_same_code_pass(runs, tmp_path):
    """Beside a runner (as in CI), a timing regression must be confirmed on re-measurement before it
    blocks: host timers on a shared 2-core machine drifted by up to 41% between two runs of this code."""
    d = runs["good_dir"]
    p, report, md = _gate(runs["base"], runs["again"], tmp_path, "--remeasure", env=_env(d), cwd=d)
    assert p.returncode == 0, md
    assert report["verdict"] == "pass" and not report["blocking"]
    gated = {s["status"] for s in report["series"] if s["gated"]}
    assert gated <= {"stable", "improved", "insufficient data"}  # host-timer drift is shown, not gated
    assert report["counts"].get("stable", 0) >= 2  # rel_err within tolerance
    assert "✅ **PASS**" in md


def test_cpu_timings_show_a_real_slowdown_without_failing(runs, tmp_path):
    """Host-timer timings never fail the gate unless asked: the 3x slowdown is shown, labelled."""
    p, report, md = _gate(runs["base"], runs["slow"], tmp_path)
    assert p.returncode == 0, md
    big = _by_label(report)["pr_gemm/kernel/m192n160k256/latency_ms"]
    assert big["status"] == "regressed" and not big["gated"] and not big["blocking"]
    assert "regressed (host timer, not gated)" in md


def test_a_real_slowdown_is_confirmed_on_remeasurement(runs, tmp_path):
    d = runs["slow_dir"]
    p, report, md = _gate(runs["base"], runs["slow"], tmp_path, "--remeasure", "--gate-host-timings",
                          env=_env(d), cwd=d)
    assert p.returncode == 1, md
    series = _by_label(report)
    big = series["pr_gemm/kernel/m192n160k256/latency_ms"]  # 3x the work where the matmul dominates
    assert big["status"] == "regressed" and big["blocking"] and big["remeasured"]
    assert big["reason"].startswith("confirmed on re-measurement") and big["change"] > 0.5
    assert series["pr_gemm/kernel/m192n160k256/rel_err"]["status"] == "stable"
    assert "### Re-measured" in md


def test_h200_run_against_itself_is_all_stable(tmp_path):
    p, report, _ = _gate(H200, H200, tmp_path)
    assert p.returncode == 0 and report["counts"] == {"stable": len(report["series"])}


def test_two_h200_runs_of_the_same_kernels_agree(tmp_path):
    """The foundation and the later nightly H200 run share 14 kernels (their common.py changed in between);
    their medians differ by up to 3% with p as low as 1e-188: significance alone would fail them."""
    later = ROOT / "results/h200/gemm_fp32_emulation_nightly.json.gz"
    if not later.exists():
        pytest.skip("second H200 gemm run not committed")
    p, report, _ = _gate(H200, later, tmp_path)
    shared = [s for s in report["series"] if s["kind"] in ("timing", "throughput") and s["n_baseline"] and s["n_candidate"]]
    assert len(shared) >= 20
    assert {s["status"] for s in shared} == {"stable"}
    assert min(s["p_value"] for s in shared) < 1e-20  # significant, yet far under the minimum effect
    assert max(abs(s["change"]) for s in shared) < 0.05


def test_a_correctness_failure_fails_the_gate(runs, tmp_path):
    p, report, md = _gate(runs["base"], runs["wrong"], tmp_path)
    assert p.returncode == 1
    series = _by_label(report)
    for case in ("m128n96k64", "m192n160k256"):
        err = series[f"pr_gemm/kernel/{case}/rel_err"]
        assert err["status"] == "failed correctness" and err["new_failure"] and err["blocking"]
        lat = series[f"pr_gemm/kernel/{case}/latency_ms"]
        assert lat["status"] == "failed correctness" and lat["candidate_value"] is None  # wrong code is not timed
    assert "❌ failed correctness (new)" in md and "tolerance" in md


def test_mutes_are_listed_not_dropped(runs, tmp_path):
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    assert kwatch("db", "upgrade", "--db", db).returncode == 0  # mute never creates a database itself
    p = kwatch("mute", "add", "-t", "pr_gemm", "-c", "m128n96k64", "--who", "bob", "--why", "flaky on CI hosts",
               "--until", "7d", "--db", db)
    assert p.returncode == 0, p.stderr
    p, report, md = _gate(runs["base"], runs["wrong"], tmp_path)
    assert p.returncode == 1  # the other case still fails
    muted = [m for m in report["muted"]]
    assert {m["series"] for m in muted} == {"pr_gemm/kernel/m128n96k64/rel_err", "pr_gemm/kernel/m128n96k64/latency_ms"}
    assert all(m["who"] == "bob" and m["why"] == "flaky on CI hosts" and m["until"] for m in muted)
    assert "### Muted (listed, not counted)" in md and "flaky on CI hosts" in md
    assert report["blocking"] == ["pr_gemm/kernel/m192n160k256/latency_ms", "pr_gemm/kernel/m192n160k256/rel_err"] or \
        set(report["blocking"]) == {"pr_gemm/kernel/m192n160k256/latency_ms", "pr_gemm/kernel/m192n160k256/rel_err"}


def test_a_suspicious_speedup_is_flagged_and_rechecked_on_fresh_inputs(runs, tmp_path):
    doc = json.loads(runs["again"].read_text())
    base = {r["case"]: r for r in json.loads(runs["base"].read_text())["results"] if r["metric"] == "latency_ms"}
    for r in doc["results"]:
        if r["metric"] == "latency_ms":  # 20x faster than the baseline's own samples
            r["samples"] = [x / 20 for x in base[r["case"]]["samples"]]
            r["value"] = base[r["case"]]["value"] / 20
    doc["run"]["id"] = "too-fast"
    cand = tmp_path / "fast.json"
    cand.write_text(json.dumps(doc))
    # Without a runner: flagged, not silently accepted.
    p, report, md = _gate(runs["base"], cand, tmp_path)
    lat = _by_label(report)["pr_gemm/kernel/m128n96k64/latency_ms"]
    assert lat["status"] == "improved" and any("suspicious speedup" in f for f in lat["flags"])
    assert "### Flags" in md
    # Beside a runner, the same code is re-checked on fresh inputs, where it turns out wrong.
    d = runs["good_dir"]
    p, report, md = _gate(runs["base"], cand, tmp_path, "--remeasure",
                          env=_env(d, PR_BROKEN_ON_FRESH_INPUTS="1", KWATCH_JOB_ENV="PR_BROKEN_ON_FRESH_INPUTS"), cwd=d)
    assert p.returncode == 1, md
    lat = _by_label(report)["pr_gemm/kernel/m128n96k64/latency_ms"]
    assert lat["status"] == "failed correctness" and lat["remeasured"] and "re-check on fresh inputs" in lat["reason"]
    assert "### Re-measured" in md


def test_an_ambiguous_series_is_remeasured_before_deciding(runs, tmp_path):
    doc = json.loads(runs["again"].read_text())
    for r in doc["results"]:
        if r["metric"] == "latency_ms" and r["case"] == "m192n160k256":
            base = json.loads(runs["base"].read_text())
            src = next(b for b in base["results"] if b["metric"] == "latency_ms" and b["case"] == "m192n160k256")
            # 20 samples spread evenly over +/-30% around +20%: the median is 20% up, under the 25% host
            # minimum effect, and with so few, so spread samples its CI straddles 25% however
            # quiet the host was (a x1.24 copy of a quiet run had a CI wholly under 25%: "stable").
            mid = statistics.median(src["samples"]) * 1.20
            r["samples"] = [mid * (0.7 + 0.6 * i / 19) for i in range(20)]
            r["value"] = statistics.median(r["samples"])
    doc["run"]["id"] = "borderline"
    cand = tmp_path / "borderline.json"
    cand.write_text(json.dumps(doc))
    p, report, _ = _gate(runs["base"], cand, tmp_path)
    lat = _by_label(report)["pr_gemm/kernel/m192n160k256/latency_ms"]
    assert lat["status"] == "insufficient data" and lat["reason"].startswith("ambiguous")
    d = runs["good_dir"]
    p, report, md = _gate(runs["base"], cand, tmp_path, "--remeasure", env=_env(d), cwd=d)
    lat = _by_label(report)["pr_gemm/kernel/m192n160k256/latency_ms"]
    assert lat["remeasured"] and lat["status"] in ("stable", "regressed", "improved")
    assert lat["n_candidate"] > 20  # the fresh samples, not the 20 planted ones
    assert "re-measured" in lat["reason"] and "### Re-measured" in md
    # Host noise may make another series ambiguous too; the planted one must be among those re-run.
    assert re.search(r"re-measured [1-9]\d* implementation/case pairs", report["remeasure"])
