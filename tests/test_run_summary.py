"""`kwatch run` on a technique with a wrong, a raising and a GPU-only implementation: the 80-column
summary, its counts, the failures named in full, plain progress lines in a log, the result file
written by default and readable by the group."""
import gzip
import json
import os
import stat

from runners.summary import WIDTH, summary_lines
from tests.conftest import ROOT, kwatch


def test_failing_run_summary_names_the_rows_at_80_columns(tmp_path):
    proc = kwatch("run", "-t", "faulty_gemm", "-i", "good", "-i", "wrong", "-i", "raises", "-i", "cuda_fault",
                  "--device", "cpu", "--seed", "11", "--db", f"sqlite:///{tmp_path / 'kw.db'}",
                  env={"KWATCH_EXTRA_TECHNIQUES": "tests.fixtures.faulty", "COLUMNS": "200", "PYTHONPATH": str(ROOT)},
                  cwd=tmp_path,
                  timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()
    assert all(len(line) <= WIDTH for line in lines), [line for line in lines if len(line) > WIDTH]
    counts = next(line for line in lines if line.startswith("faulty_gemm "))
    assert counts.split()[1:6] == ["1", "0", "1", "1", "1"]  # ok xfail failed error skip
    assert "faulty_gemm/wrong/m48n40k32" in proc.stdout and "faulty_gemm/raises/m48n40k32" in proc.stdout
    assert "deliberate failure" in proc.stdout and "tolerance" in proc.stdout
    assert "FAILED (exit 1): 2 job(s)" in proc.stdout and "faulty_gemm/good/" not in lines[-1] + lines[-2]
    # No terminal: progress as plain lines on stderr, with an estimate of the time left.
    assert "about" in proc.stderr and "left" in proc.stderr
    # The result file is written by default under kwatch-runs/, named in the summary, group-readable.
    [result] = [p for p in (tmp_path / "kwatch-runs").iterdir() if p.name.endswith(".json.gz")]
    assert f"result file: kwatch-runs/{result.name}" in proc.stdout
    assert os.stat(result).st_mode & stat.S_IRGRP
    doc = json.loads(gzip.decompress(result.read_bytes()))
    assert doc["run"]["finished_at"] and len(doc["results"]) == 8
    table = result.parent / result.name.replace(".json.gz", ".table.txt")
    assert "faulty_gemm  raises" in table.read_text()


def test_long_names_are_wrapped_never_cut():
    tech, impl = "a_technique_with_a_rather_long_name", "an_implementation_name_that_goes_on_and_on_and_on"
    row = {"technique": tech, "impl": impl, "case": "case_" + "x" * 40, "metric": "rel_err", "value": None,
           "status": "error", "error": "RuntimeError: " + "word " * 40, "stats": {}}
    doc = {"run": {"id": "0" * 32, "tier": "smoke", "finished_at": None, "config": {"seed": 3}},
           "results": [row]}
    lines = summary_lines(doc, 1.0, [("result file", "/some/where/" + "deep/" * 20 + "run.json")])
    assert all(len(line) <= WIDTH for line in lines)
    text = "\n".join(lines)
    assert tech in text and "INCOMPLETE" in text
    assert f"{tech}/{impl}/case_{'x' * 40}" in text.replace("\n    ", "")
