"""Claims of the page's sparsity section, checked by the sparse_gemm break-even sweep."""
from __future__ import annotations

from suite.claims.spec import Band, Claim, Custom, Selector, at_least, at_most

T = "sparse_gemm"
SECTION = "Sparsity, ordered by how usable it is"
PAGE = "the page (kernel & attention optimization)"
MODERATE = (0.1, 0.5)  # "moderate sparsity": 50-90% zeros, i.e. densities 10-50%
_MOD = f"suite.techniques.{T}.claims"


def speedups(rows: list[dict], impl: str, pattern: str) -> dict[tuple[int, float], float]:
    """(m, density) -> cublas_dense latency / impl latency, GPU rows of one pattern."""
    lat: dict[tuple, dict[str, float]] = {}
    for r in rows:
        p = r["params"]
        if r["technique"] == T and r["metric"] == "latency_ms" and r["gpu_name"] and p.get("pattern") == pattern:
            lat.setdefault((p["m"], p["density"]), {})[r["impl"]] = r["value"]
    return {key: v["cublas_dense"] / v[impl] for key, v in lat.items() if "cublas_dense" in v and impl in v}


def break_even(sp: dict[tuple[int, float], float], m: int) -> str:
    """The densest case at which the sparse kernel still beats dense, in words."""
    wins = sorted(d for (mm, d), s in sp.items() if mm == m and s > 1)
    return f"M={m}: beats dense up to density {wins[-1]:g}" if wins else f"M={m}: never beats dense"


def _moderate(impl: str, pattern: str, reduce):
    def check(rows: list[dict]):
        sp = speedups(rows, impl, pattern)
        mod = {k: s for k, s in sp.items() if MODERATE[0] <= k[1] <= MODERATE[1]}
        if not mod:
            return None
        key = reduce(mod, key=mod.get)
        ms = sorted({m for m, _ in sp})
        return mod[key], (f"{impl} over cublas_dense, {pattern}: {'; '.join(break_even(sp, m) for m in ms)}; "
                          f"{'best' if reduce is max else 'worst'} moderate case M={key[0]} density {key[1]:g}: "
                          f"{mod[key]:.3g}x")
    return check


csr_moderate = _moderate("cusparse_csr", "unstructured", max)
tile_skip_moderate = _moderate("triton_tile_skip", "block", min)

CLAIMS = (
    Claim("sparse_moderate_unstructured_slower",
          "A sparse kernel carries indexing overhead a dense one does not, which is why moderate "
          "unstructured sparsity is reliably slower than dense.",
          1, "x dense", PAGE, "ours", "any", SECTION,
          at_most(1.0, wording="'reliably slower' -> CSR (cuSPARSE) slower than dense cuBLAS at every "
                  "moderate density (10-50% nonzero) and both shapes (M = 16 and 4096, N = K = 4096)"),
          Custom(T, f"{_MOD}:csr_moderate", "latency_ms"), technique=T,
          quantity="the best speedup of CSR over dense bf16 at densities 10-50%"),
    Claim("sparse_block_buys_it_back",
          "Block sparsity buys it back: force the zeros into tile-shaped groups and the pattern becomes "
          "schedulable (zero-skipping at the tile level is a win).",
          1, "x dense", PAGE, "ours", "any", SECTION,
          at_least(1.0, wording="'buys it back' -> skipping 64x64 zero tiles beats dense cuBLAS at every "
                   "moderate density (10-50% of tiles nonzero) where CSR loses"),
          Custom(T, f"{_MOD}:tile_skip_moderate", "latency_ms"), technique=T,
          quantity="the worst speedup of the tile-skipping Triton kernel over dense bf16 at densities 10-50%"),
    Claim("sparse_24_2x_dense",
          "2:4 structured sparsity on sparse tensor cores: twice the dense tensor-core rate (the H200 "
          "datasheet's 'with sparsity' BF16 figure, 1,979 TFLOP/s, over its dense 989.5).",
          2, "x dense", "NVIDIA H200 Tensor Core GPU datasheet (sparse vs dense BF16 tensor figures); the page: "
          "'2:4 sparsity exists because sparse tensor cores do'", "vendor", "H200", SECTION,
          Band(1.8, 2.3, "below", "'up to' 2x (a peak ratio) -> 90% of it reproduces; less: not reproduced"),
          Selector("sparse_gemm_24", "latency_ms", ("cusparselt_24", "cutlass_24"), over="cublas_dense",
                   speedup=True, params={"m": 4096}),
          technique="sparse_gemm_24", runs_on=("H200",),
          quantity="dense cuBLAS bf16 latency / the faster 2:4 backend's, M = N = K = 4096"),
)
