"""Claims of the page's structured-matrix section."""
from __future__ import annotations

from suite.claims.spec import Claim, Custom, Selector, at_least

T = "monarch"
SECTION = "Structured matrices — butterfly and Monarch"
PAGE = "the page (kernel & attention optimization)"
DENSITY = 0.03125  # a Monarch's stored share of n^2 at n = 4096, nb = bs = 64: 2 * 64 / 4096


def monarch_vs_csr(rows: list[dict]):
    """Monarch speedup over dense (n = 4096, batch 4096) / CSR speedup over dense at the same density."""
    lat = {}
    for r in rows:
        p = r["params"]
        if r["metric"] != "latency_ms" or not r["gpu_name"]:
            continue
        if r["technique"] == T and p.get("n") == 4096 and p.get("batch") == 4096:
            lat[("monarch", r["impl"])] = r["value"]
        if (r["technique"] == "sparse_gemm" and p.get("m") == 4096 and p.get("pattern") == "unstructured"
                and p.get("density") == DENSITY):
            lat[("sparse", r["impl"])] = r["value"]
    need = [("monarch", "cublas_dense"), ("monarch", "torch_monarch"), ("sparse", "cublas_dense"),
            ("sparse", "cusparse_csr")]
    if not all(k in lat for k in need):
        return None
    mon = lat[need[0]] / lat[need[1]]
    csr = lat[need[2]] / lat[need[3]]
    return mon / csr, (f"Monarch {mon:.3g}x dense, CSR at density {DENSITY:g} {csr:.3g}x dense "
                       "(M = 4096, n = N = K = 4096)")


CLAIMS = (
    Claim("monarch_vs_csr_same_density",
          "A Monarch factorisation is fast on a GPU, where an unstructured sparse matrix of the same "
          "density is not: 'sparse' and 'fast' are not synonyms on this hardware.",
          1, "x", PAGE, "ours", "any", SECTION,
          at_least(1.0, wording="'fast where unstructured is not' -> the Monarch product's speedup over "
                   "dense exceeds CSR's at the same density"),
          Custom((T, "sparse_gemm"), f"suite.techniques.{T}.claims:monarch_vs_csr", "latency_ms"),
          technique=T, quantity="(dense / Monarch latency) / (dense / CSR latency), density 3.125%, "
                                "batch 4096, n = 4096"),
    Claim("monarch_not_free_from_dense",
          "You cannot factorise a dense checkpoint into a Monarch matrix for free.",
          0.1, "relative Frobenius error", PAGE, "ours", "any", SECTION,
          at_least(0.1, wording="'not for free' -> the nearest Monarch (nb = 32) to an unstructured "
                   "(Gaussian) 1024 x 1024 matrix misses at least 10% of it"),
          Selector(T, "proj_rel_err", "torch_monarch", case="proj_gaussian_n1024_nb32", cpu_ok=True),
          technique=T, quantity="||A - P(A)||_F / ||A||_F, P the Monarch projection (per-slice rank-1 SVD, "
                                "Dao et al., ICML 2022), A Gaussian; other kinds beside it in the results"),
)
