"""RoPE (page: "RoPE efficiency"): NeoX split-half vs interleaved pairs, the wrong convention caught,
cos/sin tables in fp32 / bf16 / computed on the fly and their error as positions pass 100,000, partial
RoPE; and fused into the QKV projection's epilogue vs a separate pass."""
from suite.spec import GBPS, LATENCY, REL_ERR, TFLOPS, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.rope"
_REF = f"{_PKG}.reference"
_T, _TR = f"{_PKG}.torch_rope", f"{_PKG}.triton_rope"
SECTION = "RoPE efficiency"
TRITON = ("triton",)


def _bytes(p: dict) -> float:
    """x read and out written, bf16 (the table rows, T r/2 values each, aside)."""
    return 2.0 * 2 * p["tokens"] * p["heads"] * p["head_dim"]


def _case(layout: str, t: int, heads: int, d: int, rot: int, tiers=("nightly",), seeds: int = 2, **kw) -> Case:
    cid = f"{layout}_t{t}h{heads}d{d}" + (f"r{rot}" if rot < d else "")
    return Case(cid, {"layout": layout, "tokens": t, "heads": heads, "head_dim": d, "rot": rot,
                      "max_pos": kw.pop("max_pos", 8192), **kw}, tiers, seeds)


def _torch(name: str, source: str, **kw) -> Impl:
    return Impl(name, f"{_T}:run", args={"source": source}, **kw)


ROPE = Technique(
    name="rope", section=SECTION,
    audit_inputs=("x",),  # positions (int) are the structure; the cos/sin tables do not depend on the seed
    reference=f"{_REF}:reference", make_inputs=f"{_REF}:make_inputs", empty_output=f"{_REF}:empty_output",
    impls=(
        _torch("torch_table_fp32", "table_fp32", baseline=True, note="fp32 cos/sin rows gathered, rotation in fp32"),
        _torch("torch_table_bf16", "table_bf16", note="the fp32 table cast to bf16 once; rotation in bf16 ops"),
        _torch("torch_angles_fp32", "angles_fp32", note="angles m * theta computed per call in fp32, then cos/sin"),
        _torch("torch_angles_bf16", "angles_bf16", note="angles m * theta in bf16",
               expect_failure="the page: m * theta needs more mantissa than bf16 has"),
        Impl("torch_wrong_layout", f"{_T}:run", args={"swap": True}, note="the other pairing convention",
             expect_failure="a checkpoint read with the other pairing convention must differ grossly"),
        Impl("triton_table_fp32", f"{_TR}:run", requires=TRITON, note="one program per token, fp32 table rows"),
        Impl("triton_on_the_fly", f"{_TR}:run", args={"source": "on_the_fly"}, requires=TRITON,
             note="angles pos * inv_freq in fp32 and tl.cos / tl.sin in the kernel, no table"),
    ),
    cases=(
        _case("neox", 6, 3, 32, 32, ("smoke",), 3, accuracy=True, max_pos=64),
        _case("interleaved", 6, 3, 32, 32, ("smoke",), 3, max_pos=64),
        _case("neox", 5, 2, 64, 32, ("smoke_full",), 3, max_pos=64),
        _case("neox", 4096, 40, 128, 128, accuracy=True),  # Llama-3 8B: 32 query + 8 key heads of 128
        _case("interleaved", 4096, 40, 128, 128),
        _case("neox", 4096, 40, 128, 64),
        _case("neox", 1, 40, 128, 128),
    ),
    tolerances={"default": Tolerance(f"{_REF}:lowp", k=4.0)},
    metrics=(LATENCY, GBPS, REL_ERR), work={"gbps": lambda p: _bytes(p) * 1e-9}, bytes=_bytes,
    probe=f"{_PKG}.probe:probe", ceiling="suite.lib.bandwidth:copy_gbps",
    smoke=("torch_table_fp32", "torch_wrong_layout", "triton_table_fp32"),
    claims=("rope_wrong_layout_gross", "rope_bf16_angle_at_100k", "rope_bf16_angles_measured",
            "rope_fp32_angles_enough_at_100k", "rope_neox_vectorises", "rope_standalone_memory_bound"),
)


def _qkv(t: int, hidden: int, hq: int, hk: int, d: int, tiers=("nightly",), seeds: int = 2) -> Case:
    return Case(f"t{t}hid{hidden}q{hq}k{hk}d{d}", {"tokens": t, "hidden": hidden, "q_heads": hq,
                "kv_heads": hk, "head_dim": d, "max_pos": 8192 if "nightly" in tiers else 64}, tiers, seeds)


ROPE_QKV = Technique(
    name="rope_qkv", section=SECTION,
    audit_inputs=("x", "w_qkv"),  # positions (int) are the structure
    reference=f"{_REF}:qkv_reference", make_inputs=f"{_REF}:qkv_inputs", empty_output=f"{_REF}:qkv_output",
    impls=(
        Impl("torch_gemm_then_rope", f"{_T}:qkv_then_rope", baseline=True,
             note="cuBLAS QKV GEMM writes Q, K, V; torch ops read Q, K back, rotate, write them again"),
        Impl("cublas_then_triton_rope", f"{_TR}:qkv_then_rope", requires=TRITON,
             note="cuBLAS QKV GEMM, then the Triton RoPE kernel in place on Q and K (one extra read and write)"),
        Impl("triton_gemm_rope_epilogue", f"{_TR}:qkv_fused", requires=TRITON,
             note="one Triton GEMM: both halves of each head as two accumulators, rotated in the epilogue"),
    ),
    cases=(
        _qkv(5, 64, 2, 1, 32, ("smoke",), 3),
        _qkv(72, 64, 2, 1, 64, ("smoke_full",), 3),
        _qkv(16, 4096, 32, 8, 128),
        _qkv(4096, 4096, 32, 8, 128),
    ),
    tolerances={"default": Tolerance(f"{_REF}:qkv_lowp", k=4.0)},
    metrics=(LATENCY, TFLOPS, REL_ERR),
    ceilings={"tflops": "bf16_tflops"},  # share of the bf16 GEMM ceiling the run measured
    flops=lambda p: 2.0 * p["tokens"] * p["hidden"] * (p["q_heads"] + 2 * p["kv_heads"]) * p["head_dim"],
    claims=("rope_fused_qkv_removes_cost",),
)

TECHNIQUES = (ROPE, ROPE_QKV)
TECHNIQUE = ROPE
