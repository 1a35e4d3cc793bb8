"""The sustained-clock study's arithmetic: sample summaries, burst and tail windows, the scheme limits."""
from runners.studies.emulation_sustained import limits, summarize_samples, window_rates


def test_summarize_samples_medians_and_reason_shares():
    rows = [["1980", "450.1", "40", "700.00", "Not Active", "Not Active", "Not Active", "Not Active", "Not Active"],
            ["1500", "699.5", "55", "700.00", "Active", "Not Active", "Not Active", "Not Active", "Not Active"],
            ["1425", "700.2", "58", "700.00", "Active", "Not Active", "Not Active", "Not Active", "Not Active"],
            ["[N/A]", "701.0", "59", "700.00", "Active", "Not Active", "Not Active", "Active", "Not Active"]]
    s = summarize_samples(rows)
    assert s["samples"] == 4
    assert s["sm_clock_mhz"] == 1500  # the N/A clock is left out of the median
    assert s["power_w"] == (699.5 + 700.2) / 2
    assert s["sw_power_cap"] == 0.75 and s["sw_thermal_slowdown"] == 0.25 and s["hw_slowdown"] == 0.0
    assert summarize_samples([]) == {"samples": 0}


def test_window_rates_split_burst_and_tail():
    # 1 TFLOP per call: 0.1 s calls for the first 0.5 s, then 0.2 s calls (a slower clock) for 3 s
    calls = [100.0] * 5 + [200.0] * 15
    r = window_rates(calls, 1e12)
    assert r["burst_calls"] == 3 and r["burst_tflops"] == 10.0  # 3 calls reach 0.25 s of GPU time
    assert r["tail_calls"] == 10 and r["tail_tflops"] == 5.0  # the last 2 s are 10 slow calls
    assert r["gpu_s"] == 3.5 and r["tail_window_s"] == (1.5, 3.5)


def test_limits_use_sustained_bf16_over_products_against_sustained_fp32():
    ops = {"cublas_bf16": {"burst_tflops": 760.0, "tail_tflops": 630.0},
           "cublas_fp32": {"burst_tflops": 51.3, "tail_tflops": 50.0},
           "triton_bf16x9": {"ok": True, "tail_tflops": 68.0},
           "triton_bf16x9_tma": {"ok": False, "tail_tflops": 90.0},  # wrong output: never the best
           "triton_bf16x3_ws": {"ok": True, "tail_tflops": 180.0}}
    lim = limits(ops)
    assert lim["bf16x9"]["best_impl"] == "triton_bf16x9" and lim["bf16x9"]["best_tail_x"] == 1.36
    assert lim["bf16x9"]["limit_tail_x"] == 1.4 and lim["bf16x9"]["limit_burst_x"] == 1.689
    assert lim["bf16x3"]["products_share_of_bf16_tail"] == round(540 / 630, 3)
    assert lim["bf16x6"]["best_impl"] is None and lim["bf16x6"]["limit_tail_x"] == 2.1
    assert limits({"cublas_fp32": ops["cublas_fp32"]}) == {}
