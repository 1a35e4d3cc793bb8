"""Claims on prefill micro-optimisations (page: "Prefill micro-optimisations")."""
from suite.claims.spec import Band, Claim, Custom, about

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


def error_over_full(rows: list[dict], mode: str = "skip_last_ffn"):
    """Worst (over the prompts) rel_err against fp64 of the skipping prefill over the full prefill's, both
    from one run (GPU rows), with how many prompts gave bit-identical last-position logits."""
    def by_case(impl, metric):
        return {r["case"]: r for r in rows if r["impl"] == impl and r["metric"] == metric and r["device"] == "cuda"}
    full, skip = by_case("torch_full", "rel_err"), by_case(f"torch_{mode}", "rel_err")
    same = by_case(f"torch_{mode}", "bitwise_equal")
    cases = sorted(c for c in full if c in skip and full[c]["run_id"] == skip[c]["run_id"] and full[c]["value"] > 0)
    if not cases:
        return None
    ratio = {c: skip[c]["value"] / full[c]["value"] for c in cases}
    worst = max(ratio, key=lambda c: abs(ratio[c] - 1))
    exact = [c for c in cases if c in same and same[c]["value"] == 1.0]
    return ratio[worst], (f"error against fp64, {mode} / full prefill: " + ", ".join(
        f"{c} {ratio[c]:.4f}" for c in cases) + f"; last-position logits bit-identical in {len(exact)} of "
        f"{len(cases)} prompts" + (f" ({', '.join(exact)})" if exact else ""))


CLAIMS = (
    Claim("prefill_last_ffn_skip_exact",
          "Last-layer FFN skipping is exact — the discarded values are provably unused.",
          1, "x the full prefill's error", "the page", "ours", "any", SECTION,
          Band(0.98, 1.02, None, "'exact' -> the skip changes nothing but rounding: its error against fp64 within "
               "2% of the full prefill's on every prompt (bit-identical logits are not required: cuBLAS may pick "
               "another kernel for one row than for T rows, which moves the last bit)"),
          Custom(T, f"suite.techniques.{T}.claims:error_over_full"), technique=T,
          quantity="rel_err against fp64 of the last-position logits, skip / full prefill, worst prompt, one run "
                   "(GPU rows); bitwise equality shown beside it"),
    Claim("prefill_last_ffn_skip_saving",
          "On a long prompt last-layer FFN skipping removes a full FFN pass over thousands of tokens.",
          1, "x the FLOP prediction", "the page", "ours", "any", SECTION,
          about(1.0, rel=0.25),
          Custom(T, f"suite.techniques.{T}.claims:saving_over_prediction"), technique=T,
          quantity="time saved / FLOPs saved (both as a share of the full prefill), 32K-token prompt, two "
                   "Llama-3.2-1B layers"),
)
