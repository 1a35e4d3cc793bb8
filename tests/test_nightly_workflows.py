"""The GitHub Actions workflows in .github/workflows/: valid against GitHub's workflow schema (offline,
check-jsonschema's built-in copy) and running the commands the CI process relies on."""
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from tests.conftest import ROOT, kwatch

WF = ROOT / ".github" / "workflows"


def _load(name: str) -> dict:
    doc = yaml.safe_load((WF / name).read_text())
    assert isinstance(doc, dict) and doc.get("jobs"), name
    return doc


def _triggers(doc: dict) -> dict:
    return doc.get("on", doc.get(True))  # YAML 1.1 reads the bare key `on` as True


def _commands(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def _check_jsonschema() -> str:
    exe = shutil.which("check-jsonschema") or str(Path(sys.executable).with_name("check-jsonschema"))
    if not Path(exe).exists():
        pytest.fail("check-jsonschema is not installed (pip install -e '.[test]')")
    return exe


def test_every_workflow_is_valid_against_githubs_schema(tmp_path):
    files = sorted(WF.glob("*.yml"))
    assert {f.name for f in files} == {"ci.yml", "nightly.yml", "pr-gate.yml"}
    out = subprocess.run([_check_jsonschema(), "--builtin-schema", "vendor.github-workflows", *map(str, files)],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stdout + out.stderr
    broken = tmp_path / "broken.yml"  # the check does reject a workflow GitHub would refuse
    broken.write_text("name: x\non: push\njobs:\n  a:\n    runs-on: ubuntu-latest\n    steps: [{run: 1, uses: 2}]\n")
    bad = subprocess.run([_check_jsonschema(), "--builtin-schema", "vendor.github-workflows", str(broken)],
                         capture_output=True, text=True)
    assert bad.returncode == 1


def test_nightly_fans_out_one_job_per_gpu_label_and_reports_once():
    doc = _load("nightly.yml")
    assert _triggers(doc)["schedule"][0]["cron"].count(" ") == 4
    submit = doc["jobs"]["submit"]
    assert submit["strategy"]["matrix"]["gpu"] == ["h200", "h100", "b200"]
    assert "kwatch submit --label \"${{ matrix.gpu }}\"" in _commands(submit)
    assert "secrets." in doc["env"]["KWATCH_DB"] and "secrets." in doc["env"]["KWATCH_BROKER"]
    report = doc["jobs"]["report"]
    assert report["needs"] == "submit" and report["if"] == "always()"
    assert "kwatch nightly-fleet --no-submit --batch" in _commands(report)


def test_pr_workflow_runs_the_ab_gate_on_a_gpu_and_comments():
    doc = _load("pr-gate.yml")
    assert "pull_request" in _triggers(doc)
    measure, report = doc["jobs"]["measure"], doc["jobs"]["report"]
    assert "gpu" in measure["runs-on"] and "self-hosted" in measure["runs-on"]
    cmds = _commands(measure)
    assert "kwatch gate --ab \"$BASE_SHA\" \"$HEAD_SHA\"" in cmds and "--markdown gate.md" in cmds
    assert report["needs"] == "measure" and report["permissions"]["pull-requests"] == "write"
    scripts = [s for s in report["steps"] if "github-script" in s.get("uses", "")]
    assert scripts and "createComment" in scripts[0]["with"]["script"]
    assert "exit 1" in report["steps"][-1]["run"]


def test_pr_code_never_runs_beside_a_secret():
    """The job that measures the PR sees no secret and runs the base revision's harness; only the
    trusted report job holds the writer's URL."""
    doc = _load("pr-gate.yml")
    measure = doc["jobs"]["measure"]
    assert "secrets." not in yaml.safe_dump(measure)
    assert measure["permissions"] == {"contents": "read"}
    checkout = measure["steps"][0]
    assert checkout["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"
    assert checkout["with"]["persist-credentials"] is False
    assert "--store" not in _commands(measure)
    report = doc["jobs"]["report"]
    assert "secrets." in report["env"]["KWATCH_DB"]
    assert report["steps"][0]["with"]["ref"] == "${{ github.event.pull_request.base.sha }}"


def test_cpu_ci_runs_the_readme_test_command():
    """ci.yml runs .ci/run, whose first tests are the README's test command (tests/test_tiers.py holds the tiers)."""
    readme = (ROOT / "README.md").read_text()
    command = next(line for line in readme.splitlines() if "python -m pytest" in line).split("&& ")[-1]
    assert ".ci/run" in _commands(_load("ci.yml")["jobs"]["tests"])
    assert command.strip() in (ROOT / ".ci" / "run").read_text()


def test_every_kwatch_subcommand_in_the_workflows_exists():
    used = set()
    for f in WF.glob("*.yml"):
        used |= set(re.findall(r"kwatch ([a-z][a-z-]+)", f.read_text()))
    assert {"nightly-fleet", "gate", "submit", "db"} <= used
    help_text = kwatch("--help").stdout
    for cmd in used:
        assert cmd in help_text, cmd
