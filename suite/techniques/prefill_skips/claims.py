"""Claims on prefill micro-optimisations (page: "Prefill micro-optimisations")."""
from suite.claims.spec import Claim, Custom, Selector, about, at_least

T = "prefill_skips"
SECTION = "Prefill micro-optimisations"
LONGEST = "l2_1b_t32768"


def saving_over_prediction(rows: list[dict], mode: str = "skip_last_ffn", case: str = LONGEST):
    """(1 - t_mode / t_full) / predicted FLOP saving, at the longest prompt (GPU rows), both times from
    one run (None while the latest full and mode rows come from different runs: a ratio of times from
    two runs would carry their run-to-run difference)."""
    def one(impl, metric):
        v = [r for r in rows if r["impl"] == impl and r["case"] == case and r["metric"] == metric
             and r["device"] == "cuda"]
        return v[0] if v else None
    full, skip, pred = one("torch_full", "latency_ms"), one(f"torch_{mode}", "latency_ms"), \
        one(f"torch_{mode}", "predicted_saving")
    if None in (full, skip, pred) or full["run_id"] != skip["run_id"]:
        return None
    full, skip, pred = full["value"], skip["value"], pred["value"]
    saved = 1 - skip / full
    return saved / pred, (f"{case}: full {full:.3f} ms, {mode} {skip:.3f} ms: saved {saved:.1%} of the time, "
                          f"{pred:.1%} of the FLOPs")


CLAIMS = (
    Claim("prefill_last_ffn_skip_exact",
          "Last-layer FFN skipping is exact — the discarded values are provably unused.",
          1, "bit-identical (1 = yes)", "the page", "ours", "any", SECTION,
          at_least(1.0, wording="'exact' -> the last position's logits bit-identical to the full prefill's"),
          Selector(T, "bitwise_equal", "torch_skip_last_ffn", reduce="worst"), technique=T,
          quantity="1 if the last-position logits equal the full prefill's bit for bit on every nightly prompt "
                   "(GPU runs: cuBLAS may pick another kernel for one row than for T rows)"),
    Claim("prefill_last_ffn_skip_saving",
          "On a long prompt last-layer FFN skipping removes a full FFN pass over thousands of tokens.",
          1, "x the FLOP prediction", "the page", "ours", "any", SECTION,
          about(1.0, rel=0.25),
          Custom(T, f"suite.techniques.{T}.claims:saving_over_prediction"), technique=T,
          quantity="time saved / FLOPs saved (both as a share of the full prefill), 32K-token prompt, two "
                   "Llama-3.2-1B layers"),
)
