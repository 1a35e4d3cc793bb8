"""Claims of the page's structured-matrix section."""
from __future__ import annotations

from suite.claims.spec import PAGE, Claim, Custom, Selector, at_least

T = "monarch"
SECTION = "Structured matrices — butterfly and Monarch"
DENSITY = 0.03125  # a Monarch's stored share of n^2 at n = 4096, nb = bs = 64: 2 * 64 / 4096


def monarch_vs_csr(rows: list[dict]):
    """Monarch speedup over dense (n = 4096, batch 4096) / the best CSR speedup over dense at the highest
    timed density not above the Monarch's (fewer nonzeros than the Monarch stores: CSR's best chance)."""
    mon, csr = {}, {}
    for r in rows:
        p = r["params"]
        if r["metric"] != "latency_ms" or not r["gpu_name"]:
            continue
        if r["technique"] == T and p.get("n") == 4096 and p.get("batch") == 4096:
            mon[r["impl"]] = r["value"]
        if (r["technique"] == "sparse_gemm" and p.get("m") == 4096 and p.get("pattern") == "unstructured"
                and p.get("density", 1) <= DENSITY):
            csr.setdefault(p["density"], {})[r["impl"]] = r["value"]
    csr = {d: v for d, v in csr.items() if "cublas_dense" in v and ({"cusparse_csr", "cusparse_csr_fp32"} & set(v))}
    if not {"cublas_dense", "torch_monarch"} <= set(mon) or not csr:
        return None
    d = max(csr)
    v = csr[d]
    best = min(v[i] for i in ("cusparse_csr", "cusparse_csr_fp32") if i in v)
    m_speed, c_speed = mon["cublas_dense"] / mon["torch_monarch"], v["cublas_dense"] / best
    return m_speed / c_speed, (f"Monarch (density {DENSITY:g}) {m_speed:.3g}x dense; CSR at density {d:g} "
                               f"{c_speed:.3g}x dense (M = 4096, n = N = K = 4096)")


CLAIMS = (
    Claim("monarch_vs_csr_same_density",
          "A Monarch factorisation is fast on a GPU, where an unstructured sparse matrix of the same "
          "density is not: 'sparse' and 'fast' are not synonyms on this hardware.",
          1, "x", PAGE, "ours", "any", SECTION,
          at_least(1.0, wording="'fast where unstructured is not' -> the Monarch product's speedup over "
                   "dense exceeds CSR's at the same density"),
          Custom((T, "sparse_gemm"), f"suite.techniques.{T}.claims:monarch_vs_csr", "latency_ms"),
          technique=T, quantity="(dense / Monarch latency) / (dense / CSR latency), Monarch at density "
                                "3.125%, CSR at the highest timed density up to it, batch 4096, n = 4096"),
    Claim("monarch_not_free_from_dense",
          "You cannot factorise a dense checkpoint into a Monarch matrix for free.",
          0.1, "relative Frobenius error", PAGE, "ours", "any", SECTION,
          at_least(0.1, wording="'not for free' -> the nearest Monarch (nb = 32) to an unstructured "
                   "(Gaussian) 1024 x 1024 matrix misses at least 10% of it"),
          Selector(T, "proj_rel_err", "torch_monarch", case="proj_gaussian_n1024_nb32", cpu_ok=True),
          technique=T, quantity="||A - P(A)||_F / ||A||_F, P the Monarch projection (per-slice rank-1 SVD, "
                                "Dao et al., ICML 2022), A Gaussian; other kinds beside it in the results"),
)
