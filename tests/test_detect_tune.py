"""Out-of-sample settings (ci.detect_tune) and the noisy floor that keeps too-noisy series quiet."""
import json
from dataclasses import asdict

from ci.detect_bench import run_series, split_half
from ci.detect_tune import GRID, PREVIOUS, choose, tuning_series
from db.detector import DetectorSettings, online_changes, resolution_of
from db.noise import resolution
from tests.conftest import ROOT

PLAIN = sorted(str(p) for p in (ROOT / "results/h200/plain_noise").glob("night_*.json.gz"))


def _row(fa, noisy, recall, **settings):
    return {"settings": {**asdict(PREVIOUS), **settings}, "false_alarms": fa, "false_alarms_on_too_noisy": noisy,
            "false_alarms_per_1000": fa / 10, "quiet_5pct_recall_within_2_nights": recall}


def test_choose_keeps_the_false_alarm_limits_then_recall_then_the_previous_settings():
    rows = [_row(0, 0, 0.99, min_rel=0.02, min_ref=20), _row(0, 0, 0.987, min_rel=0.03, min_ref=15),
            _row(0, 0, 0.987, min_rel=0.03, min_ref=20), _row(2, 2, 1.0, min_ref=10), _row(9, 0, 1.0, kappa=0.5)]
    assert choose(rows) is rows[1]  # within 0.5 points of the best, closest to the previous settings
    assert choose([_row(2, 2, 1.0)]) is None


def test_the_shipped_settings_are_the_committed_choice_of_the_tuning_half():
    doc = json.loads((ROOT / "docs/data/detector_tuning.json").read_text())
    assert doc["chosen"]["settings"] == asdict(DetectorSettings())
    assert choose(doc["rows"]) == doc["chosen"] and len(doc["rows"]) == len(list(__import__("itertools").product(*GRID.values())))
    tuned = tuning_series()
    assert len(tuned) == doc["series"] and all(split_half(s) == "tune" for s in tuned)


def test_a_too_noisy_series_alarms_only_on_a_change_as_large_as_its_resolution():
    """torch_add_x50 (50 back-to-back launches, 1.3-2x outlying nights): three new nights beyond every
    night seen, but moved by less than its resolution, do not alert; beyond it, they do."""
    v = next(s for s in run_series(PLAIN, 60) if s["series"].endswith("torch_add_x50/n4096"))["run_values"][:40]
    s = DetectorSettings()
    base = resolution_of(v, DetectorSettings(noisy_floor=0.0))
    r = resolution(v)
    assert base > 0.05 and r["too_noisy"] and r["resolvable_step"] >= base
    med, top = sorted(v)[len(v) // 2], max(v)
    below = [top * 1.01, top * 1.02, top * 1.03]  # beyond every night, median below the floor
    assert top * 1.02 / med - 1 < base
    assert online_changes(v + below, s) == []
    assert [a.night for a in online_changes(v + below, DetectorSettings(noisy_floor=0.0))] == [42]
    above = [med * (1 + base) * f for f in (1.05, 1.06, 1.07)]
    assert [a.night for a in online_changes(v + above, s)] == [42]
