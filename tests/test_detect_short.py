"""Issue 40, point 6: the detector is awake from the first nights. Real night-to-night noise of the held-out
plain set b (results/h200/plain_noise_b, never tuned on), in its recorded order."""
from __future__ import annotations

import copy
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from ci.detect_series import run_series
from ci.detect_short import evaluate_short
from ci.nightly import nightly
from ci.gate_refs import load_document
from db.detector import DetectorSettings, judged, online_changes
from db.noise import night_cv
from tests.conftest import ROOT

B = sorted(str(p) for p in (ROOT / "results/h200/plain_noise_b").glob("night_*.json.gz"))


@pytest.fixture(scope="module")
def quiet():
    return [s for s in run_series(B, 10) if night_cv(s["run_values"]) <= 0.015]


def test_a_20pct_step_after_night_5_to_14_alerts_within_3_nights(quiet):
    """Every miss is on a reference the detector judges too noisy (those wait for 15 nights)."""
    assert len(quiet) == 9
    found = cases = 0
    for s in quiet:
        x = np.asarray(s["run_values"], dtype=float)
        for at in range(5, 15):
            v = x[:at + 20].copy()
            v[at:] *= 1.20
            alerts = online_changes(list(v))
            assert not [a for a in alerts if a.night < at]
            first = [a for a in alerts if a.night >= at]
            cases += 1
            if first and first[0].night <= at + 2 and first[0].change.index == at:
                found += 1
            else:
                assert judged(list(v[:at]))[1], (s["series"], at)
    assert found >= 85 and cases == 90, (found, cases)  # 85 of 90: the 5 misses on too-noisy references


def test_a_step_missed_on_its_nights_is_found_later(quiet):
    x = np.asarray(quiet[0]["run_values"], dtype=float)
    v = x[:40].copy()
    v[8:] *= 1.20
    v[9] = float(np.median(x[:8]))  # one night of the new level back at the old one: the 3-night rule misses it
    alerts = online_changes(list(v))
    assert alerts and 10 <= alerts[0].night <= 9 + DetectorSettings().late_min
    assert alerts[0].change.rel_change > 0.15


def test_short_histories_and_software_changes_on_held_out_noise(quiet):
    r = evaluate_short(quiet, reps=6, seed=0)  # 53 of 54 and 54 of 54 20 % steps
    for scen in ("short", "software"):
        e = r[scen]["quiet"]
        assert e["steps"]["0.2"]["recall_within_2_nights"] >= 0.95, (scen, e)
        assert e["false_alarms_per_1000_series_nights"] <= 1.0, (scen, e)


@pytest.mark.slow
def test_through_kwatch_nightly_a_new_database_alerts_on_a_step_after_night_5(db_url, tmp_path):
    """Real plain set b nights as nightly files into a new database; +20 % from night 6 on one series fails
    night 8 (its 3rd), on SQLite and PostgreSQL; the nights before pass."""
    t0 = datetime(2027, 1, 1, tzinfo=timezone.utc)
    codes, news = [], []
    for n, path in enumerate(B[:9]):
        doc = copy.deepcopy(load_document(path))
        doc["run"]["started_at"] = (t0 + timedelta(days=n)).isoformat()
        if n >= 6:
            for r in doc["results"]:
                if r["impl"] == "torch_gelu" and r["metric"] == "latency_ms":
                    r["samples"] = [x * 1.2 for x in r["samples"]]
                    r["value"] *= 1.2
        summary, code = nightly(db_url, doc, tmp_path / f"n{n}")
        codes.append(code)
        news.append([c.key.impl for c in summary["new_regressions"]])
    assert codes[:8] == [0] * 8 and codes[8] == 1, codes
    assert news[8] == ["torch_gelu"]
