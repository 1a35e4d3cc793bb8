"""The GitHub Actions workflows in ci/workflows/ are valid YAML with the jobs the CI process relies on."""
from pathlib import Path

import yaml

from tests.conftest import ROOT, kwatch

WF = ROOT / "ci" / "workflows"


def _load(name: str) -> dict:
    doc = yaml.safe_load((WF / name).read_text())
    assert isinstance(doc, dict) and doc.get("jobs"), name
    return doc


def _triggers(doc: dict) -> dict:
    return doc.get("on", doc.get(True))  # YAML 1.1 reads the bare key `on` as True


def _commands(job: dict) -> str:
    return "\n".join(step.get("run", "") for step in job["steps"])


def test_nightly_workflow_is_a_cron_matrix_over_gpu_runners_writing_postgres():
    doc = _load("nightly.yml")
    assert _triggers(doc)["schedule"][0]["cron"].count(" ") == 4
    job = doc["jobs"]["nightly"]
    assert len(job["strategy"]["matrix"]["gpu"]) >= 2
    assert "self-hosted" in job["runs-on"] and "${{ matrix.gpu }}" in job["runs-on"]
    assert "secrets." in job["env"]["KWATCH_DB"]
    assert "kwatch nightly" in _commands(job) and "kwatch db upgrade" in _commands(job)


def test_pr_workflow_gates_and_comments():
    doc = _load("pr-gate.yml")
    assert "pull_request" in _triggers(doc)
    assert doc["permissions"]["pull-requests"] == "write"
    job = doc["jobs"]["gate"]
    cmds = _commands(job)
    assert "kwatch gate" in cmds and "--markdown gate.md" in cmds and "--remeasure" in cmds
    scripts = [s for s in job["steps"] if "github-script" in s.get("uses", "")]
    assert scripts and "createComment" in scripts[0]["with"]["script"]


def test_every_kwatch_subcommand_in_the_workflows_exists():
    import re

    used = set()
    for f in WF.glob("*.yml"):
        used |= set(re.findall(r"kwatch ([a-z][a-z-]+)", f.read_text()))
    assert {"nightly", "gate", "run", "db"} <= used
    help_text = kwatch("--help").stdout
    for cmd in used:
        assert cmd in help_text, cmd
