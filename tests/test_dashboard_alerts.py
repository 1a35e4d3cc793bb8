"""The Alerts page: stored change points with their state (db/alerts.py) on SQLite and PostgreSQL, the
runs around each change, and the page under AppTest (filters from the URL, links to Trends and Compare)."""
from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tests.conftest import ROOT
from tests.test_dashboard_url_state import open_link, warnings

PAIR = ["results/cpu/smoke_pair/smoke_1.json.gz", "results/cpu/smoke_pair/smoke_2.json.gz"]


def plant(url: str) -> dict:
    """The two committed CPU smoke runs, and five change points at the second run's series: one left
    new, one raised late, one acknowledged, one muted, one whose mute has ended; their ids by name."""
    from db.actions import acknowledge, mute
    from db.engine import open_db
    from db.ingest import ingest_docs
    from db.models import Run
    from db.models_ci import ChangePoint
    from db.validate import load_and_validate

    docs = [load_and_validate(str(ROOT / f)) for f in PAIR]
    factory = open_db(url)
    ingest_docs(factory, list(zip(PAIR, docs)))
    rows = [r for r in docs[1]["results"] if r["metric"] == "latency_ms" and r["status"] == "ok"]
    names = ["new", "late", "acked", "muted", "mute_ended"]
    picked = [r for r in rows if r["technique"] == "gemm_fp32_emulation"][:3] + \
        [r for r in rows if r["technique"] == "exp_approx"][:1] + [r for r in rows if r["technique"] == "morton_order"][:1]
    ids = {}
    now = datetime.now(timezone.utc)
    with factory() as s, s.begin():
        run = s.get(Run, docs[1]["run"]["id"])
        env = run.environment
        for name, r in zip(names, picked):
            cp = ChangePoint(technique=r["technique"], impl=r["impl"], case_id=r["case"], metric="latency_ms",
                             hardware_key=env.hardware_key, software_key=env.software_key,
                             protocol=r["stats"].get("protocol") or "", run_id=run.id, run_started_at=run.started_at,
                             method="test", before_value=1.0, after_value=1.25, rel_change=0.25, kind="regression",
                             detected_at=now, details={"late": name == "late"})
            s.add(cp)
            s.flush()
            ids[name] = cp.id
        acknowledge(s, ids["acked"], "bob", "intended")
        r = picked[3]
        mute(s, r["technique"], None, None, "latency_ms", env.hardware_key, "carol", "flaky", now + timedelta(days=3))
        mute(s, "morton_order", None, None, None, None, "dave", "old", now - timedelta(days=1))
    return {"ids": ids, "runs": [d["run"]["id"] for d in docs], "hw": env.hardware_key}


def test_states_and_runs_before(db_url):
    from db import alerts

    planted = plant(db_url)
    ids = planted["ids"]
    a = alerts.with_state(alerts.change_points(db_url), alerts.acknowledgements(db_url), alerts.mutes(db_url))
    state = dict(zip(a["id"], a["state"]))
    assert state == {ids["new"]: "new", ids["late"]: "found late", ids["acked"]: "acknowledged",
                     ids["muted"]: "muted", ids["mute_ended"]: "new"}
    detail = dict(zip(a["id"], a["state_detail"]))
    assert detail[ids["acked"]] == "by bob: intended" and detail[ids["muted"]].startswith("by carol until ")
    assert set(a["git_commit"]) <= {None} | {c for c in a["git_commit"] if isinstance(c, str)}
    assert alerts.runs_before(db_url, a) == [planted["runs"][0]] * len(a)  # each change: smoke_2 after smoke_1


def test_kwatch_detect_sees_the_same_mute(sqlite_url):
    """The CLI's mute matching is db.alerts.mute_matches: the page and `kwatch detect` agree."""
    from ci.gate_mutes import active_mutes, matching_mute
    from db.series import SeriesKey

    planted = plant(sqlite_url)
    live = active_mutes(sqlite_url)
    assert [m["who"] for m in live] == ["carol"]
    key = SeriesKey("exp_approx", "any", "any", "latency_ms", planted["hw"], "sw", "")
    assert matching_mute(key, live)["who"] == "carol"
    assert matching_mute(SeriesKey("exp_approx", "any", "any", "tflops", planted["hw"], "sw", ""), live) is None


@pytest.fixture(scope="module")
def planted_url(tmp_path_factory):
    url = f"sqlite:///{tmp_path_factory.mktemp('alerts') / 'kw.db'}"
    return url, plant(url)


def test_alerts_page_filters_from_the_link(planted_url, monkeypatch):
    url, planted = planted_url
    at = open_link(url, "alerts", monkeypatch, {"age": "all"})
    text = " ".join(m.value for m in at.markdown)
    assert text.count("regression +25.0%") == 4  # new, found late, muted, and the one whose mute ended (new)
    assert "*found late*" in text and "*muted*" in text and "*acknowledged*" not in text
    at = open_link(url, "alerts", monkeypatch, {"age": "all", "state": ["acknowledged"], "technique": "gemm_fp32_emulation"})
    text = " ".join(m.value for m in at.markdown)
    assert text.count("regression +25.0%") == 1 and "by bob" in text
    links = at.get("page_link")
    assert [l.proto.page for l in links] == ["trends", "compare"]
    assert f"candidate={planted['runs'][1]}" in links[1].proto.query_string
    assert f"baseline={planted['runs'][0]}" in links[1].proto.query_string
    assert "technique=gemm_fp32_emulation" in links[0].proto.query_string
    at.multiselect(key="alerts_state").set_value(["new"]).run()
    assert at.query_params["state"] == "new" and at.query_params["technique"] == "gemm_fp32_emulation"


def test_alerts_page_bad_link_and_age(planted_url, monkeypatch):
    url, _ = planted_url
    at = open_link(url, "alerts", monkeypatch, {"age": "5", "state": "gone"})
    text = " ".join(warnings(at))
    assert "`age` = `5`" in text and "`30`" in text and "`state` = `gone`" in text, text
    at = open_link(url, "alerts", monkeypatch, {"age": "1"})  # the planted changes are at the smoke run's date
    captions = " ".join(c.value for c in at.caption)
    if not any("regression +25.0%" in m.value for m in at.markdown):
        assert "older than 1 days are hidden" in captions, captions


def test_age_filter_says_what_it_hides(planted_url):
    from dashboard.alerts import narrow
    from db import alerts
    from db.alerts import STATES, utc

    url, _ = planted_url
    a = alerts.with_state(alerts.change_points(url), alerts.acknowledgements(url), alerts.mutes(url))
    at = utc(a["run_started_at"].iloc[0])
    shown, hidden = narrow(a, [], [], "1", STATES, now=at + timedelta(hours=12))
    assert len(shown) == 5 and hidden == 0
    shown, hidden = narrow(a, [], [], "1", STATES[:2], now=at + timedelta(days=2))
    assert len(shown) == 0 and hidden == 3  # new (two) and found late: the ones the state filter kept
    shown, _ = narrow(a, ["exp_approx"], [], "all", STATES)
    assert list(shown["state"]) == ["muted"]
