"""The shipped online detector (db.detector) and its resolution figure, on real H200 nights."""
import json

import numpy as np
import pytest

from ci.detect_series import run_series, two_levels
from db.detector import DetectorSettings, online_changes, resolution_of
from db.noise import night_cv, resolution
from runners.resultfile import load
from tests.conftest import ROOT, kwatch, write_docs

PLAIN = sorted(str(p) for p in (ROOT / "results/h200/plain_noise").glob("night_*.json.gz"))


@pytest.fixture(scope="module")
def plain():
    """The 8 plain-noise series: 65 real nights each, one fresh process per night."""
    return {s["series"].split("/", 1)[1]: list(s["run_values"]) for s in run_series(PLAIN, 60)}


def test_the_plain_noise_study_is_committed_night_by_night(plain):
    assert len(PLAIN) >= 60 and len(plain) == 8
    assert all(len(v) == len(PLAIN) for v in plain.values())


def test_no_alert_on_any_real_plain_series_as_recorded(plain):
    for name, v in plain.items():
        assert online_changes(v) == [], name


def test_a_5pct_step_in_real_quiet_noise_alerts_once_on_its_third_night(plain):
    v = plain["torch_softmax/r4096c4096"]
    stepped = v[:30] + [x * 1.05 for x in v[30:]]
    alerts = online_changes(stepped)
    assert [(a.night, a.change.index) for a in alerts] == [(32, 30)]
    assert alerts[0].change.rel_change == pytest.approx(0.05, abs=0.01)


def test_each_night_sees_only_the_past(plain):
    """Alerts raised up to night n are the same whether or not later nights exist."""
    v = plain["torch_exp/n16m"]
    stepped = v[:20] + [x * 1.06 for x in v[20:40]] + [x * 1.13 for x in v[40:]]
    full = [(a.night, a.change.index) for a in online_changes(stepped)]
    assert full and full[0] == (22, 20)
    for n in range(len(stepped)):
        assert [(a.night, a.change.index) for a in online_changes(stepped[:n + 1])] == [x for x in full if x[0] <= n]


def test_a_level_visited_before_is_no_change_but_a_new_one_is():
    """A kernel of 17 repeated H200 runs that settles at +9% in 3 of them (protocol v1)."""
    runs = sorted(str(p) for p in (ROOT / "results/h200/repeats").glob("rep_*.json.gz"))
    v = next(s for s in run_series(runs, 17) if s["series"] == "exp_approx/triton_hybrid3_f50/elem_n16m")["run_values"]
    low, high = min(v), max(v)
    assert high / low - 1 > 0.07 and two_levels(v)
    history = list(v) + list(v[:13])
    assert online_changes(history + [high, high * 1.002, high * 0.999]) == []  # the known high state
    bigger = history + [high * 1.06] * 3  # beyond every night seen
    assert [a.change.index for a in online_changes(bigger)] == [len(history)]
    # too noisy for 5% (below): on a reference shorter than noisy_ref (30) nights its new level needs
    # a 4th night
    assert DetectorSettings().noisy_ref == len(history)
    assert online_changes(history[1:] + [high * 1.06] * 3) == []
    assert [a.night for a in online_changes(history[1:] + [high * 1.06] * 4)] == [len(history) + 2]
    # a 5% slowdown of the low state stays inside the known levels: it cannot be told, and the
    # resolution figure says so
    assert resolution(history)["too_noisy"] and resolution(history)["resolvable_step"] > 0.08


def test_resolution_sees_a_minority_level_that_a_median_based_spread_misses(plain):
    v = plain["torch_mm_bf16/m4096n4096k4096"]  # ~15% of nights 5% faster
    x = np.asarray(v)
    mad_cv = 1.4826 * np.median(np.abs(x - np.median(x))) / np.median(x)
    assert mad_cv < 0.01 and 2.5 * mad_cv < 0.05  # the previous rule called it fine for 5% steps
    r = resolution(v)
    assert r["too_noisy"] and r["resolvable_step"] > 0.06 and r["night_cv"] > 1.5 * mad_cv
    quiet = resolution(plain["torch_softmax/r4096c4096"])
    assert not quiet["too_noisy"] and quiet["resolvable_step"] < 0.04
    launch = resolution(plain["torch_add_x50/n4096"])
    assert launch["too_noisy"] and launch["resolvable_step"] > 0.3


def test_resolution_is_the_step_found_in_95pct_of_draws(plain):
    """Inject the figure's step into fresh draws of the same nights: found on the 3rd night ~95%."""
    s = DetectorSettings()
    for name in ("torch_mm_bf16/m4096n4096k4096", "torch_exp/n16m", "torch_mm_fp32/m256n256k256"):
        v = plain[name][:40]
        step = resolution_of(v, s)
        rng = np.random.default_rng(1)
        hits = 0
        for _ in range(200):
            tail = list(rng.choice(v, 3) * (1 + step))
            hits += any(a.night == 42 for a in online_changes(v + tail, s, start=42))
        assert hits >= 180, (name, step, hits)
        assert night_cv(v) > 0


def test_a_change_found_late_is_listed_once_and_never_fails(tmp_path):
    """Nights ingested without detection: the change alerted on an earlier night is stored as late,
    not as a new regression; the next pass lists it as plain alerting."""
    docs = [load(p) for p in PLAIN[:30]]
    for d in docs[18:]:
        for r in d["results"]:
            if r["impl"] == "torch_softmax":
                r["value"] *= 1.05
                r["samples"] = [x * 1.05 for x in r["samples"]]
    files = write_docs(docs, tmp_path)
    db = f"sqlite:///{tmp_path / 'kw.db'}"
    assert kwatch("ingest", *files, "--db", db).returncode == 0
    out = tmp_path / "d.json"
    p = kwatch("detect", "--db", db, "--json", str(out), "--fail-on-new")
    assert p.returncode == 0, p.stdout + p.stderr  # late: listed, not failing
    [c] = json.loads(out.read_text())["changes"]
    assert c["impl"] == "torch_softmax" and c["late"] and c["new"] and c["run_id"] == docs[18]["run"]["id"]
    assert c["alerted_run_id"] == docs[20]["run"]["id"] and "found late" in p.stderr
    p = kwatch("detect", "--db", db, "--json", str(out), "--fail-on-new")
    [c] = json.loads(out.read_text())["changes"]
    assert p.returncode == 0 and not c["new"] and "found late" not in p.stderr


def test_the_nightly_report_lists_a_late_change_apart_and_does_not_fail_on_it():
    from datetime import datetime, timezone

    from ci.detect import Detected
    from ci.gate import run_gate
    from ci.gate_refs import RunData, from_document
    from ci.report_nightly import summarize, to_markdown
    from db.series import SeriesKey

    key = SeriesKey("plain_noise", "torch_softmax", "r4096c4096", "latency_ms", "hw", "sw", "plain-do_bench")
    at = datetime(2026, 11, 1, tzinfo=timezone.utc)
    late = Detected(1, key, "run18", at, 0.058, 0.061, 0.05, "regression", True, None, late=True,
                    alerted_run_id="run20")
    on_time = Detected(2, key, "run30", at, 0.061, 0.065, 0.066, "regression", True, None)
    doc = {"run": {"id": "run35", "tier": "nightly", "env": {}}, "results": []}
    cur = from_document("run35", doc, "database")
    verdicts = run_gate(RunData("none", "database", {}, [], cur.hardware_key, cur.software_key), cur)
    s = summarize(doc, [late], verdicts)
    md = to_markdown(s)
    assert s["new_regressions"] == [] and "new regressions or failures" not in md
    assert "Found late" in md and "`run20`" in md and "| late |" in md
    s = summarize(doc, [late, on_time], verdicts)
    assert s["new_regressions"] == [on_time] and "new regressions" in to_markdown(s)
