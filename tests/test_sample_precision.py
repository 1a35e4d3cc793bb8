"""Timed samples at the CUDA event timer's precision: exact for float32 times, bounded for derived ones,
written so by ResultFile, rewritten so by runners.compact_results without touching anything else."""
from __future__ import annotations

import gzip
import json
import random
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from runners.compact_results import main as compact_main
from runners.resultfile import ResultFile, load, new_run, result_row
from suite.sample_precision import as_float32, compact_row, timer_precision
from tests.ingest_docs import loose_samples

ROOT = Path(__file__).resolve().parent.parent
TREE_MAX_BYTES = 56 * 2**20  # the device takes a working tree under 64 MiB; room left for a week of runs


def test_float32_times_are_kept_exactly_in_their_shortest_decimal():
    ts = torch.empty(20000, dtype=torch.float32).uniform_(1e-3, 50.0, generator=torch.Generator().manual_seed(3))
    for t in ts.tolist():  # what torch.cuda.Event.elapsed_time hands over: a float32 as a Python float
        s = timer_precision(t)
        assert as_float32(s) == t
        assert float(f"{s:.9g}") == s and len(repr(s)) <= len(repr(t))  # at most 9 significant digits
    assert timer_precision(0.02537599951028824) == 0.025376


def test_derived_samples_round_within_float32_precision():
    rng = random.Random(5)
    for _ in range(20000):
        x = rng.lognormvariate(0, 6)
        assert abs(timer_precision(x) - x) <= x * 2.0**-23  # half an ulp to float32, half back
    for x in (0.0, -0.0, None, 3, float("inf"), 1e300, -2.5):  # passed through, or sign and size kept
        y = timer_precision(x)
        assert y == x or (x == -2.5 and y == -2.5)


def test_only_timed_rows_change():
    timed = result_row("t", "i", "c", "latency_ms", "ms", "lower", value=0.1, samples=[0.1 + 1e-12, None],
                       stats={"protocol": "cuda-events+l2read+graph/v4"})
    err = result_row("t", "i", "c", "rel_err", "1", "lower", value=0.1, samples=[0.1 + 1e-12], stats={})
    assert compact_row(timed)["samples"] == [0.1, None] and compact_row(timed)["value"] == 0.1
    assert compact_row(err) == err  # accuracy samples are computed, not timed: kept to the last digit
    assert compact_row(compact_row(timed)) == compact_row(timed)


def test_result_file_writes_samples_at_timer_precision(tmp_path):
    samples = torch.empty(500, dtype=torch.float32).uniform_(0.01, 0.02).tolist()
    f = ResultFile(tmp_path / "r.json.gz", new_run("smoke", "test", {}, {}))
    f.add([result_row("t", "i", "c", "latency_ms", "ms", "lower", value=samples[0], samples=samples,
                      stats={"protocol": "cpu-perf-counter/v1"})])
    f.finish()
    got = load(tmp_path / "r.json.gz")["results"][0]
    assert [as_float32(s) for s in got["samples"]] == samples and got["value"] == samples[0]
    assert len(json.dumps(got["samples"])) < 0.6 * len(json.dumps(samples))


def _loose_copy(src: Path, dst: Path) -> dict:
    """A committed file as an older writer left it (tests.ingest_docs.loose_samples), written to dst."""
    doc = loose_samples(load(src))
    dst.write_bytes(gzip.compress(json.dumps(doc).encode(), mtime=0))
    return doc


def test_compact_results_rewrites_a_file_and_changes_nothing_else(tmp_path, capsys):
    src = ROOT / "results" / "h200" / "serving" / "serving_formats_nightly_v4_bb7c0f1.json.gz"
    loose = _loose_copy(src, tmp_path / "old.json.gz")
    shutil.copy(ROOT / "results" / "h200" / "gemm_fp32_emulation_nightly_foundation.json.gz", tmp_path)
    before = (tmp_path / "old.json.gz").stat().st_size
    assert compact_main(["--check", str(tmp_path)]) == 1 and (tmp_path / "old.json.gz").stat().st_size == before
    assert compact_main([str(tmp_path)]) == 0
    assert (tmp_path / "old.json.gz").stat().st_size < 0.75 * before
    new = load(tmp_path / "old.json.gz")
    assert new["run"] == loose["run"] and len(new["results"]) == len(loose["results"])
    for a, b in zip(loose["results"], new["results"]):
        assert {k: v for k, v in a.items() if k != "samples"} == {k: v for k, v in b.items() if k != "samples"}
        assert [None if s is None else as_float32(s) for s in a["samples"]] == \
            [None if s is None else as_float32(s) for s in b["samples"]]
    assert new == load(src)  # the same file the writer made at the time, row for row
    assert compact_main(["--check", str(tmp_path)]) == 0  # idempotent
    assert "0 of 2 files would shrink" in capsys.readouterr().out


def test_compact_results_says_what_is_wrong_with_its_arguments(tmp_path):
    r = subprocess.run([sys.executable, "-m", "runners.compact_results", str(tmp_path)], capture_output=True,
                       text=True, cwd=ROOT)
    assert r.returncode == 2 and "no .json or .json.gz files" in r.stderr
    (tmp_path / "bad.json.gz").write_bytes(b"not gzip")
    (tmp_path / "other.json").write_text('{"a": 1}')
    assert compact_main([str(tmp_path)]) == 0  # unreadable and foreign JSON are left alone
    assert (tmp_path / "bad.json.gz").read_bytes() == b"not gzip"


def test_tracked_tree_fits_the_device_with_room_to_grow():
    ls = subprocess.run(["git", "ls-files", "-z"], capture_output=True, cwd=ROOT)
    if ls.returncode != 0:
        pytest.skip("not a git checkout")
    size = sum((ROOT / p).stat().st_size for p in ls.stdout.decode().split("\0") if p and (ROOT / p).is_file())
    assert size < TREE_MAX_BYTES, f"tracked tree {size / 2**20:.1f} MiB: see 'Result files' in docs/DESIGN.md"
