"""kwatch grade: KernelBench-format problems, correctness first, then speedup; fast_p; stored as a run."""
import json
import shutil

from sqlalchemy import select

from ci.grade import fast_p
from tests.conftest import ROOT, kwatch

EXAMPLES = ROOT / "ci" / "kernelbench_examples"


def test_fast_p_counts_only_correct_solutions_faster_than_p():
    grades = [{"status": "ok", "speedup": 1.5}, {"status": "ok", "speedup": 0.8},
              {"status": "failed_correctness"}, {"status": "error"}]
    assert fast_p(grades, 0.0) == 0.5
    assert fast_p(grades, 1.0) == 0.25
    assert fast_p(grades, 2.0) == 0.0
    assert fast_p([], 1.0) == 0.0


def test_grade_folder_checks_correctness_then_speed_and_stores_the_run(tmp_path):
    probs, sols = tmp_path / "problems", tmp_path / "solutions"
    shutil.copytree(EXAMPLES / "problems", probs)
    shutil.copytree(EXAMPLES / "solutions", sols)
    shutil.copy(probs / "2_row_softmax.py", probs / "3_crashes.py")
    (sols / "3_crashes.py").write_text("import torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
                                       "    def forward(self, x):\n        raise RuntimeError('kernel launch failed')\n")
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    out = tmp_path / "grade.json"
    p = kwatch("grade", str(probs), str(sols), "--trials", "3", "--out", str(out), "--db", db, "--p", "0", "--p", "1")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "fast_0.0 = 0.333" in p.stdout
    doc = json.loads(out.read_text())
    assert doc["run"]["config"]["fast_p"]["0.0"] == 1 / 3
    rows = {(r["impl"], r["case"], r["metric"]): r for r in doc["results"]}
    good = rows[("solutions", "1_linear_relu", "latency_ms")]
    ref = rows[("reference", "1_linear_relu", "latency_ms")]
    assert good["status"] == ref["status"] == "ok" and len(good["samples"]) >= 10
    speed = rows[("solutions", "1_linear_relu", "speedup")]["value"]
    assert abs(speed - ref["value"] / good["value"]) < 1e-9
    assert doc["run"]["config"]["fast_p"]["1.0"] == (1 / 3 if speed > 1 else 0.0)
    wrong = rows[("solutions", "2_row_softmax", "latency_ms")]
    assert wrong["status"] == "failed_correctness" and wrong["value"] is None  # not timed
    assert "outside atol" in wrong["error"]
    assert ("reference", "2_row_softmax", "latency_ms") not in rows
    crash = rows[("solutions", "3_crashes", "latency_ms")]
    assert crash["status"] == "error" and "kernel launch failed" in crash["error"]

    from db.engine import open_db
    from db.models import Run

    with open_db(db)() as s:
        run = s.scalars(select(Run)).one()
        assert run.source == "kernelbench" and run.tier == "kernelbench" and len(run.results) == len(doc["results"])


def test_grade_single_pair_and_gate_sees_the_failure(tmp_path):
    p = kwatch("grade", str(EXAMPLES / "problems/2_row_softmax.py"), str(EXAMPLES / "solutions/2_row_softmax.py"),
               "--trials", "2", "--no-db", "--out", str(tmp_path / "one.json"))
    assert p.returncode == 0, p.stderr
    assert "fast_0.0 = 0.000" in p.stdout


def test_wrong_shape_fails_correctness_and_each_model_is_built_once_per_seed(tmp_path):
    from runners import kernelbench
    from runners.correctness import ReferenceCache, check
    from suite.spec import implementation

    problem = EXAMPLES / "problems/2_row_softmax.py"
    (tmp_path / "2_row_softmax.py").write_text(
        "import torch\nimport torch.nn as nn\n\nclass ModelNew(nn.Module):\n"
        "    def forward(self, x):\n        return torch.softmax(x, dim=-1).t()\n")
    tech = kernelbench.technique("kernelbench:t", [str(problem)], str(tmp_path), trials=2)
    [case] = tech.cases
    verdict = check(tech, tech.impl(tmp_path.name), case, implementation(tech.impl(tmp_path.name)), "cpu", [1, 2],
                    ReferenceCache())
    assert not verdict.ok and "output shape (512, 128) != expected (128, 512)" in verdict.message
    ref = check(tech, tech.impl("reference"), case, implementation(tech.impl("reference")), "cpu", [1, 2],
                ReferenceCache())
    assert ref.ok and ref.errors == [0.0, 0.0]
    # timing calls reuse the built model: only the forward is timed
    inputs, out = kernelbench.make_inputs(case.params, 7, "cpu"), kernelbench.empty_output(case.params, "cpu")
    fn = implementation(tech.impl("reference"))
    fn(out, **inputs)
    model = next(iter(kernelbench._models.values()))[1]
    fn(out, **inputs)
    assert next(iter(kernelbench._models.values()))[1] is model
