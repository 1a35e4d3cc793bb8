"""The fleet's nightly report over two GPU labels (ci/fleet_nightly.py): one report covering both, the GPUs
side by side, a quality difference between them failing the night."""
from __future__ import annotations

from datetime import datetime, timezone

from ci import fleet_nightly
from db.engine import open_db
from db.models_ci import FleetJob
from tests.hardware_fixtures import as_h100, h200_doc
from tests.test_dashboard_pages import ingest

KEEP = ("needle_retrieval", "activations")


def _small(doc: dict) -> dict:
    return {**doc, "results": [r for r in doc["results"] if r["technique"] in KEEP]}


def _night(url: str, lose_zeta: bool, tmp_path):
    h200 = _small(h200_doc())
    h100 = as_h100(h200, lose_zeta=lose_zeta)
    ingest(url, [("h200", h200), ("h100", h100)])
    now = datetime.now(timezone.utc)
    with open_db(url)() as s, s.begin():
        for label, doc in (("h200", h200), ("h100", h100)):
            s.add(FleetJob(id=f"job-{label}", batch="night-1", label=label, spec={"tier": "nightly"}, status="done",
                           attempts=1, worker="w", created_at=now, started_at=now, finished_at=now,
                           run_id=doc["run"]["id"]))
    rows = fleet_nightly.jobs(url, "night-1")
    out = tmp_path / "report"
    return fleet_nightly.report(url, "night-1", rows, out), (out / "nightly.md").read_text()


def test_one_report_covers_both_gpus_and_a_quality_difference_fails_the_night(db_url, tmp_path):
    code, md = _night(db_url, True, tmp_path)
    assert code == 1
    assert "| h100 |" in md and "| h200 |" in md and "\n## h100\n" in md and "\n## h200\n" in md
    assert "## Across GPUs: h100 (NVIDIA H100 80GB HBM3) beside h200 (NVIDIA H200)" in md
    assert "2 quality alert(s)" in md and "| triton_zeta_morton | ctx64k/grid | recall | 0/33 | 33/33 |" in md

