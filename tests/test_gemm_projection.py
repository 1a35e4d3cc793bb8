"""The Blackwell roofline projection of BF16xN (a pure function and its table)."""
from suite.techniques.gemm_fp32_emulation.projection import DATASHEETS, VENDOR_CLAIM, markdown, project, table


def test_project_is_the_roofline_ratio():
    r = project(9, 2500.0, 90.0)
    assert abs(r["speedup"] - 2500 / 9 / 90) < 1e-12
    assert abs(project(3, 1000.0, 50.0, mma_efficiency=0.5, fp32_efficiency=0.5)["speedup"] - 1000 / 3 / 50) < 1e-12


def test_page_ratio_and_vendor_claim_bracketed():
    gb = DATASHEETS["GB200 (1200 W)"]
    assert 27 < gb["bf16_dense"] / gb["fp32"] < 29  # the page's "roughly 28x"
    x9 = {r["gpu"]: r for r in table() if r["scheme"] == "bf16x9"}
    assert 2.9 < x9["GB200 (1200 W)"]["peak_speedup"] < 3.2  # "up to ~3x" is the peak ratio
    assert VENDOR_CLAIM["speedup"] == 3.0
    assert all(r["kind"] == "projection" and r["source"] for r in table())


def test_efficiencies_lower_the_projection():
    rows = table({"bf16x9": 0.66, "bf16x6": 0.57, "bf16x3": 0.55}, fp32_efficiency=0.77)
    for r in rows:
        assert "efficiency_speedup" in r
    md = markdown(rows)
    assert md.count("\n") == len(rows) + 1 and "with H200-measured efficiencies" in md
