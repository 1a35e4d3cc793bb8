"""BF16x6's conditional correctness, from the exponent sweep (page: "BF16x9 and BF16x6"): the
page's condition in three parts, each with its own status (lower edge, upper edge, x6 against x9)."""
from suite.claims.spec import CENSORED, Band, Claim, Custom, at_most

SECTION = "BF16x9 and BF16x6 — FP32 accuracy on BF16 silicon"
PAGE = "the page (kernel & attention optimization), citing the BF16xN paper"
T = "gemm_fp32_emulation_sweep"
CLAIMED = (-110, 111)
X6 = ("triton_bf16x6", "triton_bf16x6_regsplit", "triton_dot_bf16x6", "torch_emul_bf16x6")
X9 = ("triton_bf16x9", "torch_emul_bf16x9")
K_TOL = 4.0  # sweep.K_TOL: within fp32 accuracy = error <= 4x fp32 IEEE's


def valid_range(rows: list[dict], impl: str) -> tuple[int, int] | None:
    """The run of exp_a values around 0 (exp_b = 0) where `impl` stays within fp32 accuracy, from
    the sweep's within_fp32 rows; None without such rows."""
    ok = {r["params"]["exp_a"]: r["value"] == 1.0 for r in rows
          if r["impl"] == impl and r["metric"] == "within_fp32" and r["params"].get("exp_b") == 0
          and "exp_a" in r["params"]}
    exps = sorted(ok)
    if not ok.get(0):
        return None
    i = j = exps.index(0)
    while i > 0 and ok[exps[i - 1]]:
        i -= 1
    while j < len(exps) - 1 and ok[exps[j + 1]]:
        j += 1
    return exps[i], exps[j]


def _edge(rows: list[dict], side: int):
    """Edge `side` (0 lower, 1 upper) of the first BF16x6 implementation's fp32-accurate run of
    exp_a around 0 (exp_b = 0) -> (exponent, detail[, CENSORED]); None without sweep rows. An edge at
    the last exponent the sweep tried on that side is censored: the true edge lies at or beyond it."""
    for impl in X6:
        edges = valid_range(rows, impl)
        if edges:
            n = sum(1 for r in rows if r["impl"] == impl and r["metric"] == "within_fp32")
            tried = sorted({r["params"]["exp_a"] for r in rows if r["impl"] == impl and r["metric"] == "within_fp32"
                            and r["params"].get("exp_b") == 0 and "exp_a" in r["params"]})
            detail = (f"{impl}: within fp32 accuracy (error <= 4x cuBLAS FP32's) for exp_a in [{edges[0]}, "
                      f"{edges[1]}] with exp_b = 0 ({n} sweep points stored)")
            if edges[side] == tried[-1 if side else 0]:
                return float(edges[side]), (detail + f"; {edges[side]} is the last exponent the sweep tries on "
                                            "this side (fp32's own range ends there): the edge lies at or beyond "
                                            "it, so the measurement cannot place it"), CENSORED
            return float(edges[side]), detail
    return None


def lower_edge(rows: list[dict]):
    """The lowest exp_a (exp_b = 0) of BF16x6's fp32-accurate run around 0."""
    return _edge(rows, 0)


def upper_edge(rows: list[dict]):
    """The highest exp_a (exp_b = 0) of BF16x6's fp32-accurate run around 0."""
    return _edge(rows, 1)


def _in_range(params: dict) -> bool:
    """A grid, spread or cliff point whose operand exponents lie in [-110, 111] (not the denormal probes)."""
    return "probe" not in params and all(CLAIMED[0] <= params.get(k, 0) <= CLAIMED[1] for k in ("exp_a", "exp_b", "exp"))


def x6_over_fp32_where_x9_holds(rows: list[dict]):
    """Worst BF16x6 rel_err / fp32 IEEE rel_err over sweep points inside [-110, 111] where BF16x9
    is within fp32 accuracy; None unless one x6 and one x9 implementation and cublas_fp32 share points."""
    err: dict[tuple[str, str], float] = {}
    params: dict[str, dict] = {}
    for r in rows:
        if r["metric"] == "rel_err" and _in_range(r["params"]):
            err[(r["impl"], r["case"])] = r["value"]
            params[r["case"]] = r["params"]
    for x6 in X6:
        for x9 in X9:
            cases = [c for c in params if (x6, c) in err and (x9, c) in err and ("cublas_fp32", c) in err
                     and err[("cublas_fp32", c)] > 0]
            held = [c for c in cases if err[(x9, c)] <= K_TOL * err[("cublas_fp32", c)]]
            if not held:
                continue
            ratio = {c: err[(x6, c)] / err[("cublas_fp32", c)] for c in held}
            worst = max(ratio, key=ratio.get)
            failing = sorted(c for c in held if ratio[c] > K_TOL)
            return ratio[worst], (f"{x6} over cuBLAS FP32 at {len(held)} points inside [-110, 111] where {x9} "
                                  f"holds: worst {ratio[worst]:.3g}x at {worst} ({x6} {err[(x6, worst)]:.3g}, "
                                  f"{x9} {err[(x9, worst)]:.3g}, fp32 {err[('cublas_fp32', worst)]:.3g}); "
                                  f"beyond {K_TOL:g}x at {len(failing)} points"
                                  + (f": {', '.join(failing[:6])}" if failing else ""))
    return None


_EDGE = "'roughly' -> within 8 exponents either side (about one sweep-grid step)"
_NOTE_UPPER = ("our split holds further, to 127 (126 for both operands at once): the page's 111 = 127 - 16 would "
               "be the edge of a split that pre-scales the lo pieces by 2^16 (a hypothesis, not measured); on "
               "this split the condition is conservative at the top")
_NOTE_X6 = ("inside the range BF16x6 is fp32-accurate on random data (equal to BF16x9 at every grid point), "
            "but not on inputs whose mid and lo pieces share one sign while the leading pieces cancel: the "
            "three dropped products then add linearly in K while fp32's rounding errors add like a random "
            "walk (docs/numerics_gemm.md, 'The BF16x6 cliff'; search: runners/studies/bf16x6_cliff.py)")



def _edge_claim(side: int, name: str, note: str) -> Claim:
    """One edge of the page's [-110, 111] as its own claim, judged by the sweep's measured edge."""
    return Claim(f"bf16x6_range_{name}_edge",
                 "BF16x6 is valid when the exponent range is known to be well behaved, roughly [-110, 111]: "
                 f"the {name} edge, {CLAIMED[side]}.",
                 CLAIMED[side], "exponent", PAGE, "authors", "any", SECTION,
                 Band(CLAIMED[side] - 8, CLAIMED[side] + 8, None, _EDGE),
                 Custom(T, f"suite.techniques.gemm_fp32_emulation.claims_sweep:{name}_edge", "within_fp32",
                        cpu_ok=False),
                 technique=T, quantity=f"{'lowest' if side == 0 else 'highest'} exp_a (exp_b = 0) where BF16x6 "
                 "is within fp32 accuracy", note=note)


CLAIMS = (
    _edge_claim(0, "lower", ""),
    _edge_claim(1, "upper", _NOTE_UPPER),
    Claim("bf16x6_as_x9_in_range",
          "BF16x6: 6 of the 9 products, valid (fp32-accurate like BF16x9) when the exponent range is "
          "well behaved: inside it, dropping the three smallest products costs nothing.",
          K_TOL, "x fp32 error", PAGE, "authors", "any", SECTION,
          at_most(K_TOL, wording="'valid' -> BF16x6 error <= 4x fp32 IEEE's (the project's rule) wherever "
                  "BF16x9 meets it inside the range"),
          Custom(T, "suite.techniques.gemm_fp32_emulation.claims_sweep:x6_over_fp32_where_x9_holds", "rel_err",
                 cpu_ok=False),
          technique=T, quantity="worst BF16x6 error / fp32 IEEE error inside [-110, 111] where BF16x9 is "
          "within fp32 accuracy", note=_NOTE_X6),
)
