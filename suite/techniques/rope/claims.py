"""Claims on RoPE (page: "RoPE efficiency") checked by our measurements; the table arithmetic is in
suite/claims/ledger_rope.py."""
from suite.claims.spec import Claim, Custom, Selector, at_least, at_most, share_of_ceiling

T = "rope"
SECTION = "RoPE efficiency"
PAGE = "the page"
_ACC = "neox_t4096h40d128"  # the nightly accuracy case; smoke runs use neox_t6h3d32


def _at(rows: list[dict], metric: str, impl: str, position: int) -> float | None:
    vals = [r["value"] for r in rows if r["metric"] == metric and r["impl"] == impl
            and r["case"].endswith(f"/pos{position}")]
    return max(vals) if vals else None


def fp32_angles_at_100k(rows: list[dict]):
    """rel_err of angles computed in fp32 over rel_err of the fp64-built fp32 table, at positions 100,000+."""
    a, t = _at(rows, "rel_err", "torch_angles_fp32", 100_000), _at(rows, "rel_err", "torch_table_fp32", 100_000)
    if a is None or t is None:
        return None
    b = _at(rows, "rel_err", "torch_table_bf16", 100_000)
    return a / t, (f"positions 100,000-100,063: fp32 angles {a:.3g}, fp32 table from fp64 angles {t:.3g}"
                   + (f", that table cast to bf16 (bf16 ops) {b:.3g}" if b else ""))


def _latency(rows, impl, case):
    v = [r["value"] for r in rows if r["impl"] == impl and r["case"] == case and r["device"] == "cuda"
         and r["metric"] == "latency_ms"]
    return v[0] if v else None


def interleaved_over_neox(rows: list[dict]):
    """Interleaved / NeoX latency of the Triton kernel at 4096 tokens x 40 heads x 128 (GPU rows)."""
    n, i = _latency(rows, "triton_table_fp32", _ACC), _latency(rows, "triton_table_fp32", "interleaved_t4096h40d128")
    if n is None or i is None:
        return None
    tn, ti = _latency(rows, "torch_table_fp32", _ACC), _latency(rows, "torch_table_fp32", "interleaved_t4096h40d128")
    extra = f"; torch ops {ti / tn:.3f}x" if tn and ti else ""
    return i / n, f"Triton kernel: interleaved {i * 1e3:.1f} us / NeoX {n * 1e3:.1f} us{extra}"


def fused_share_of_rope_cost(rows: list[dict]):
    """Share of the standalone RoPE pass's time that fusing into the QKV GEMM removes, at 4096 tokens:
    (cuBLAS QKV + Triton RoPE - fused GEMM) / standalone Triton RoPE on the same Q and K (GPU rows)."""
    rope_t = _latency(rows, "triton_table_fp32", _ACC)
    qkv = "t4096hid4096q32k8d128"
    unfused, fused = _latency(rows, "cublas_then_triton_rope", qkv), _latency(rows, "triton_gemm_rope_epilogue", qkv)
    if None in (rope_t, unfused, fused):
        return None
    return (unfused - fused) / rope_t, (f"cuBLAS QKV then RoPE {unfused:.4f} ms, fused {fused:.4f} ms, "
                                        f"RoPE alone {rope_t:.4f} ms (4096 tokens, 32 + 8 heads of 128)")


CLAIMS = (
    Claim("rope_wrong_layout_gross",
          "The two pairing conventions are not interchangeable: a checkpoint trained one way produces garbage "
          "read the other way.",
          0.5, "relative error", PAGE, "ours", "any", SECTION,
          at_least(0.5, wording="'garbage' -> an error of the order of the signal (>= 0.5 relative), where "
                   "the right convention errs at bf16 rounding (~2e-3)"),
          Selector(T, "rel_err_wrong_layout", "torch_table_fp32", reduce="worst", cpu_ok=True,
                   params={"position": 1000}),
          technique=T, quantity="relative error vs fp64 of NeoX inputs rotated as interleaved, positions 1000-1063"),
    Claim("rope_bf16_angles_measured",
          "m * base^(-2i/d) at m = 100,000 needs more mantissa than bf16 has.",
          0.5, "relative error", PAGE, "ours", "any", SECTION,
          at_least(0.5, wording="'needs more mantissa' -> bf16 angles give an error of the order of the signal"),
          Selector(T, "rel_err_angles_bf16", "torch_table_fp32", reduce="worst", cpu_ok=True,
                   params={"position": 100_000}),
          technique=T, quantity="relative error vs fp64 of RoPE with angles m * theta computed in bf16, "
          "positions 100,000-100,063 (the arithmetic claim rope_bf16_angle_at_100k is the ledger's)"),
    Claim("rope_fp32_angles_enough_at_100k",
          "The angles are computed in fp32 even when the model runs in bf16: compute in fp32, cast the table once.",
          1.5, "x error of an exact table", PAGE, "ours", "any", SECTION,
          at_most(1.5, wording="fp32 is enough -> fp32 angles at most 1.5x the error of a table from fp64 angles"),
          Custom(T, f"suite.techniques.{T}.claims:fp32_angles_at_100k", "rel_err"), technique=T,
          quantity="rel_err (fp32 angles) / rel_err (fp32 table built from fp64 angles), positions 100,000+, "
                   "bf16 output"),
    Claim("rope_neox_vectorises",
          "Split-half wins because rotate_half is a slice over contiguous memory — wide vector loads — where "
          "the interleaved form needs a strided gather or a shuffle per pair.",
          1.05, "x (interleaved / NeoX time)", PAGE, "ours", "any", SECTION,
          at_least(1.05, wording="'wins' -> the interleaved kernel at least 5% slower"),
          Custom(T, f"suite.techniques.{T}.claims:interleaved_over_neox", "latency_ms"), technique=T,
          quantity="interleaved / NeoX latency of the same Triton kernel, 4096 tokens x 40 heads x 128, {gpu}"),
    Claim("rope_standalone_memory_bound",
          "Run as its own kernel RoPE reads Q and K out of HBM, touches each value once and writes them back: its "
          "cost is entirely memory traffic.",
          0.7, "x copy bandwidth", PAGE, "ours", "any", SECTION,
          share_of_ceiling(0.7, wording="'entirely memory traffic' -> the standalone kernel at >= 70% of the "
                           "copy bandwidth; above 100% the copy does not bound what was timed"),
          Selector(T, "ceiling_share", "triton_table_fp32", params={"tokens": 4096, "layout": "neox"},
                   reduce="worst"), technique=T,
          quantity="standalone Triton RoPE GB/s / GB/s of a 1 GiB device copy in the same job, NeoX 4096-token "
                   "cases (full and partial)",
          note="our interleaved kernel loads each pair with stride 2 and reaches ~6% of the copy bandwidth; it is "
               "judged in rope_neox_vectorises, not here"),
    Claim("rope_fused_qkv_removes_cost",
          "Fold the rotation into the epilogue of the QKV projection: it is where nearly all of RoPE's cost "
          "disappears.",
          0.8, "share of RoPE's time", PAGE, "ours", "any", SECTION,
          share_of_ceiling(0.8, wording="'nearly all' -> the fused GEMM saves >= 80% of a standalone RoPE pass's "
                           "time; saving more than all of it means something besides RoPE changed"),
          Custom((T, "rope_qkv"), f"suite.techniques.{T}.claims:fused_share_of_rope_cost", "latency_ms"),
          technique="rope_qkv", quantity="(cuBLAS QKV + Triton RoPE - Triton GEMM with RoPE epilogue) / Triton "
          "RoPE alone; our Triton GEMM's speed vs cuBLAS enters too",
          confounded_by="the fused side is our Triton GEMM and the unfused side cuBLAS's: the GEMMs' speed "
                        "difference (several times RoPE's own time) enters the saving; no Triton GEMM without the "
                        "epilogue is timed to take it out"),
)
