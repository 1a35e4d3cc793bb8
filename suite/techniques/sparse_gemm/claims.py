"""Claims of the page's sparsity section, checked by the sparse_gemm break-even sweep."""
from __future__ import annotations

from suite.claims.spec import PAGE, Band, Claim, Custom, Selector, at_least, at_most

T = "sparse_gemm"
SECTION = "Sparsity, ordered by how usable it is"
MODERATE = (0.1, 0.5)  # "moderate sparsity": 50-90% zeros, i.e. densities 10-50%
_MOD = f"suite.techniques.{T}.claims"


CSR_IMPLS = ("cusparse_csr", "cusparse_csr_fp32")  # bf16 where it passed, fp32 where it ran


def speedups(rows: list[dict], impls: tuple[str, ...], pattern: str) -> dict[tuple[int, float], float]:
    """(m, density) -> cublas_dense latency / the fastest of impls, GPU rows of one pattern."""
    lat: dict[tuple, dict[str, float]] = {}
    for r in rows:
        p = r["params"]
        if r["technique"] == T and r["metric"] == "latency_ms" and r["gpu_name"] and p.get("pattern") == pattern:
            lat.setdefault((p["m"], p["density"]), {})[r["impl"]] = r["value"]
    return {key: v["cublas_dense"] / min(v[i] for i in impls if i in v) for key, v in lat.items()
            if "cublas_dense" in v and any(i in v for i in impls)}


def break_even(sp: dict[tuple[int, float], float], m: int) -> str:
    """The densest case at which the sparse kernel still beats dense, in words."""
    wins = sorted(d for (mm, d), s in sp.items() if mm == m and s > 1)
    timed = sorted(d for mm, d in sp if mm == m)
    head = f"M={m}: beats dense up to density {wins[-1]:g}" if wins else f"M={m}: never beats dense"
    return head + f" (timed at {', '.join(f'{d:g}' for d in timed)})"


def csr_up_to_moderate(rows: list[dict]):
    """The best CSR speedup over dense at any timed density up to the moderate range's top."""
    sp = {k: s for k, s in speedups(rows, CSR_IMPLS, "unstructured").items() if k[1] <= MODERATE[1]}
    if not sp:
        return None
    key = max(sp, key=sp.get)
    return sp[key], (f"CSR over cublas_dense, unstructured: {'; '.join(break_even(sp, m) for m in sorted({m for m, _ in sp}))}; "
                     f"best case M={key[0]} density {key[1]:g}: {sp[key]:.3g}x")


def tile_skip_moderate(rows: list[dict]):
    """Per shape the best tile-skipping speedup over dense at moderate densities; the worse shape's."""
    sp = speedups(rows, ("triton_tile_skip",), "block")
    best = {}
    for (m, d), s in sp.items():
        if MODERATE[0] <= d <= MODERATE[1]:
            best[m] = max(best.get(m, 0.0), s)
    if not best:
        return None
    m = min(best, key=best.get)
    return best[m], (f"triton_tile_skip over cublas_dense, 64x64 zero tiles: "
                     f"{'; '.join(break_even(sp, mm) for mm in sorted(best))}; worse shape M={m}: {best[m]:.3g}x")


CLAIMS = (
    Claim("sparse_moderate_unstructured_slower",
          "A sparse kernel carries indexing overhead a dense one does not, which is why moderate "
          "unstructured sparsity is reliably slower than dense.",
          1, "x dense", PAGE, "ours", "any", SECTION,
          at_most(1.0, wording="'reliably slower' -> CSR (cuSPARSE) slower than dense cuBLAS at every timed "
                  "density up to 50% nonzero, both shapes (M = 16 and 4096, N = K = 4096); a sparser case "
                  "has fewer nonzeros to index, so it bounds the moderate ones from the CSR side"),
          Custom(T, f"{_MOD}:csr_up_to_moderate", "latency_ms"), technique=T,
          quantity="the best speedup of CSR (bf16 where it passes the accuracy bar, else fp32) over dense "
                   "bf16 at densities <= 50%"),
    Claim("sparse_block_buys_it_back",
          "Block sparsity buys it back: force the zeros into tile-shaped groups and the pattern becomes "
          "schedulable (zero-skipping at the tile level is a win).",
          1, "x dense", PAGE, "ours", "any", SECTION,
          at_least(1.0, wording="'buys it back' -> on both shapes, skipping 64x64 zero tiles beats dense "
                   "cuBLAS at some moderate density (10-50% of tiles nonzero), where CSR loses"),
          Custom(T, f"{_MOD}:tile_skip_moderate", "latency_ms"), technique=T,
          quantity="per shape the best speedup of the tile-skipping Triton kernel over dense bf16 at densities "
                   "10-50%; the worse shape's"),
    Claim("sparse_24_2x_dense",
          "2:4 structured sparsity on sparse tensor cores: twice the dense tensor-core rate (the H200 "
          "datasheet's 'with sparsity' BF16 figure, 1,979 TFLOP/s, over its dense 989.5).",
          2, "x dense", "NVIDIA H200 Tensor Core GPU datasheet (sparse vs dense BF16 tensor figures); the page: "
          "'2:4 sparsity exists because sparse tensor cores do'", "vendor", "H200", SECTION,
          Band(1.8, 2.3, "below", "'up to' 2x (a peak ratio) -> 90% of it reproduces; less: not reproduced"),
          Selector("sparse_gemm_24", "latency_ms", "cusparselt_24", over="cublas_dense",
                   speedup=True, params={"m": 4096}),
          technique="sparse_gemm_24", runs_on=("H200",),
          quantity="dense cuBLAS bf16 latency / cuSPARSELt 2:4 latency, M = N = K = 4096"),
)
