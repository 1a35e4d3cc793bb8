"""Page state in the URL (dashboard/url_state.py): the parsing rules, and pages under AppTest on real
committed runs (two CPU smoke runs and a CPU MQAR nightly): a link sets the widgets, a changed widget
rewrites the URL, a value no widget can hold gives a warning naming it and the value shown instead."""
from __future__ import annotations

import pytest

from dashboard.url_state import PARAMS, as_bool, as_number, choose, choose_many, names_notice, unknown_names
from tests.conftest import ROOT
from tests.test_dashboard_pages import APP, AppTest, ingest

FILES = ["results/cpu/smoke_pair/smoke_1.json.gz", "results/cpu/smoke_pair/smoke_2.json.gz",
         "results/cpu/mqar_cpu.json"]


def test_choose_matches_option_text():
    assert choose("smoke", ["nightly", "smoke"], "nightly") == ("smoke", None)
    assert choose("3", [1, 2, 3], 1) == (3, None)
    assert choose("bogus", ["nightly", "smoke"], "nightly") == ("nightly", "bogus")
    assert choose(None, ["nightly", "smoke"], "smoke") == ("smoke", None)


def test_choose_many_repeated_keys_commas_and_empty():
    opts = ["a", "b", "c,d", "e"]
    assert choose_many(["e", "a"], opts, ["b"]) == (["a", "e"], [])
    assert choose_many(["a,e"], opts, []) == (["a", "e"], [])
    assert choose_many(["c,d"], opts, []) == (["c,d"], [])  # an option holding a comma stays whole
    assert choose_many([], opts, ["b"]) == (["b"], [])
    assert choose_many([""], opts, ["b"]) == ([], [])  # ?param= : explicitly none
    assert choose_many(["a", "zz"], opts, ["b"]) == (["a"], ["zz"])


def test_flags_and_numbers():
    assert as_bool("1", False) == (True, None) and as_bool("off", True) == (False, None)
    assert as_bool("maybe", True) == (True, "maybe")
    assert as_number("7", 30, 1, 365, int) == (7, None)
    assert as_number("0", 30, 1, 365, int) == (30, "0")
    assert as_number("nan", 0.5, 0, 1) == (0.5, "nan")
    assert as_number("x", 30, 1, 365, int) == (30, "x")


def test_unknown_parameter_names_are_named_with_the_known_ones():
    known = PARAMS["trends"]
    assert unknown_names(["technqiue", "case", "technqiue", "zzz"], known) == ["technqiue", "zzz"]
    assert unknown_names(["technique", "case"], known) == []
    text = names_notice(["technqiue"], known)
    assert "`technqiue`" in text and "did you mean `technique`?" in text
    assert all(f"`{k}`" in text for k in known) and "\n" not in text
    assert "did you mean" not in names_notice(["zzz"], known)


@pytest.fixture(scope="module")
def cpu_url(tmp_path_factory) -> str:
    from db.validate import load_and_validate

    url = f"sqlite:///{tmp_path_factory.mktemp('url_state') / 'kw.db'}"
    ingest(url, [(f, load_and_validate(str(ROOT / f))) for f in FILES])
    return url


def open_link(url: str, page: str, monkeypatch, query: dict):
    """A fresh browser session opening /page?query (AppTest, cold caches)."""
    import streamlit as st

    monkeypatch.setenv("KWATCH_DB", url)
    st.cache_data.clear()
    at = AppTest.from_file(APP, default_timeout=120)
    if page != "health":  # AppTest knows the page list (url paths) after a first run of the default page
        at.run()
    at.switch_page(f"views/{page}.py")
    at.query_params.clear()  # what the first page wrote: a link to this page carries only its own
    for k, v in query.items():
        at.query_params[k] = v
    at.run()
    assert not at.exception, [e.value for e in at.exception]
    return at


def warnings(at) -> list[str]:
    return [w.value for w in at.warning]


def test_health_link_sets_widgets_and_widgets_rewrite_link(cpu_url, monkeypatch):
    at = open_link(cpu_url, "health", monkeypatch, {"tier": "smoke", "technique": ["exp_approx", "morton_order"]})
    assert at.selectbox(key="health_tier").value == "smoke"
    assert at.multiselect(key="health_tech").value == ["exp_approx", "morton_order"]
    assert not [w for w in warnings(at) if "link" in w]
    at.selectbox(key="health_tier").set_value("nightly").run()
    assert at.query_params["tier"] == "nightly"
    at.multiselect(key="health_tech").set_value(["mqar"]).run()
    assert at.query_params["technique"] == "mqar"
    at.multiselect(key="health_tech").set_value([]).run()
    assert "technique" not in at.query_params  # none chosen: the default, no parameter


def test_health_bad_link_value_warns_and_uses_default(cpu_url, monkeypatch):
    at = open_link(cpu_url, "health", monkeypatch, {"tier": "bogus", "technique": ["nope", "exp_approx"]})
    assert at.selectbox(key="health_tier").value == "nightly"
    text = " ".join(warnings(at))
    assert "bogus" in text and "nightly" in text, text
    assert "nope" in text, text
    assert "technique" not in at.query_params
    assert at.query_params["tier"] == "nightly"  # the URL now names what is shown


def test_misspelled_parameter_name_warns_and_is_dropped(cpu_url, monkeypatch):
    at = open_link(cpu_url, "trends", monkeypatch, {"technqiue": "exp_approx", "case": "x"})
    notes = [w for w in warnings(at) if "not read by this page" in w]
    assert len(notes) == 1 and "`technqiue`" in notes[0] and "`technique`" in notes[0] and "`log`" in notes[0]
    assert "technqiue" not in at.query_params and "technique" in at.query_params  # the view's own link
    at = open_link(cpu_url, "health", monkeypatch, {"tier": "smoke"})
    assert not [w for w in warnings(at) if "not read by this page" in w]


@pytest.mark.parametrize("page,path", [("health", ""), ("alerts", "alerts"), ("trends", "trends"),
                                       ("compare", "compare"), ("numerics", "numerics"), ("retrieval", "retrieval"),
                                       ("claims", "claims"), ("cost_model", "cost-model")])
def test_every_parameter_a_page_writes_is_known(cpu_url, monkeypatch, page, path):
    at = open_link(cpu_url, page, monkeypatch, {})
    assert set(at.query_params) <= set(PARAMS[path]), set(at.query_params) - set(PARAMS[path])


def test_numerics_round_trip(cpu_url, monkeypatch):
    at = open_link(cpu_url, "numerics", monkeypatch, {})
    run = at.query_params["sweep_run"]
    assert at.query_params["metric"] == "within_fp32" and len(at.query_params["scheme"]) >= 2
    at.radio(key="num_metric").set_value("rel_err").run()
    at.multiselect(key="num_schemes").set_value(["triton_bf16x6"]).run()
    link = dict(at.query_params)
    assert link["metric"] == "rel_err" and link["scheme"] == "triton_bf16x6" and link["sweep_run"] == run
    again = open_link(cpu_url, "numerics", monkeypatch, link)  # the copied link reproduces the view
    assert again.radio(key="num_metric").value == "rel_err"
    assert again.multiselect(key="num_schemes").value == ["triton_bf16x6"]
    assert again.selectbox(key="num_sweep_run").value == run
    assert not warnings(again)


def test_numerics_unknown_run_and_metric_warn(cpu_url, monkeypatch):
    at = open_link(cpu_url, "numerics", monkeypatch, {"sweep_run": "deadbeef00", "metric": "ulp"})
    text = " ".join(warnings(at))
    assert "deadbeef00" in text and "`metric` = `ulp`" in text, text
    assert at.radio(key="num_metric").value == "within_fp32"


def test_claims_filters_round_trip(cpu_url, monkeypatch):
    at = open_link(cpu_url, "claims", monkeypatch, {})
    statuses = at.multiselect(key="claims_status").options
    at.multiselect(key="claims_status").set_value([statuses[0]]).run()
    assert at.query_params["status"] == statuses[0]
    again = open_link(cpu_url, "claims", monkeypatch, {"status": [statuses[0], "<b>x</b>"]})
    assert again.multiselect(key="claims_status").value == [statuses[0]]
    assert any("<b>x</b>" in w for w in warnings(again))


def test_cost_model_and_retrieval_round_trip(cpu_url, monkeypatch):
    at = open_link(cpu_url, "cost_model", monkeypatch, {"prompt": "1000", "generated": "abc", "attended": "0.3"})
    assert at.number_input(key="cost_prompt").value == 1000 and at.slider(key="cost_sparsity").value == 0.3
    assert at.number_input(key="cost_generated").value == 500 and "`generated` = `abc`" in " ".join(warnings(at))
    at.number_input(key="cost_prompt").set_value(4000).run()
    assert at.query_params["prompt"] == "4000" and at.query_params["attended"] == "0.3"
    at = open_link(cpu_url, "retrieval", monkeypatch, {})
    link = dict(at.query_params)
    assert {"needle_run", "metric", "mqar_run", "mqar_metric"} <= set(link)
    again = open_link(cpu_url, "retrieval", monkeypatch, {**link, "mqar_run": "nope"})
    assert again.selectbox(key="ret_needle_run").value == link["needle_run"]
    assert any("`mqar_run` = `nope`" in w for w in warnings(again))
