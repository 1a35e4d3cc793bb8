"""Batch-1 decode (page: "Whole-layer fused kernels — megakernels"): one decode step of a
Llama-3.2-1B-shaped stack, eager PyTorch vs CUDA-graph replay vs torch.compile vs our fused Triton
step (with and without programmatic dependent launch). Every weight is read once per token, so the
step is weight-streaming: the ceiling is the copy bandwidth measured in the same job."""
from suite.spec import LATENCY, REL_ERR, Case, Impl, Metric, Technique, Tolerance

_PKG = "suite.techniques.decode_step"
_REF = f"{_PKG}.reference"
GBPS = Metric("gbps", "GB/s", "higher")
# the H200 sweep's best at KV 1024 (docs/data/h200_decode_step_sweep_kv1024_ea30a05.json); its L2
# prefetch schedules and PDL were all slower than none; O in one 2048-column chunk since the retune with
# the early loads (docs/data/h200_decode_step_sweep_o_ab_kv1024_5f8a9de.json: -0.4 % at KV 1K and 8K)
# every launch started early (programmatic dependent launch, let go at the start of the launch before it),
# QKV in one chunk, O on 132 programs, gate/up on 1056, attention in splits of one tile on warps by its
# tile (H200 sweeps at 0683afc, cb7885e, 4e687c6, 35e1eb5, 3de70d1: docs/data/h200_decode_step_sweep_pdl_*.json)
PDL_ALL = ("qkv", "attention", "o_proj", "gate_up", "down", "head")
# down, gate/up and the head with the next chunk's weights loaded before this chunk's reduction and x in the
# weight tile's layout (pipe + x2d: H200 sweeps at d4aa9ec, 6c3cfb2: 0.757 against 0.773-0.778 ms at KV 1024),
# gate/up on 2 warps (01a99cb: 0.736 against 0.752-0.756)
TUNED_ARGS = {"mma_attention": True, "fuse_embed": True, "pdl_kinds": PDL_ALL, "block_s": "split", "attn_warps": "auto",
              "tune": {"down": {"block_k": 2048, "pipe": 1, "x2d": True},
                       "o_proj": {"block_k": 2048, "target_programs": 132}, "qkv": {"block_k": 2048},
                       "gate_up": {"target_programs": 1056, "pipe": 1, "x2d": True, "num_warps": 2},
                       "head": {"pipe": 1, "x2d": True}}}
PERSISTENT_ARGS = {}
# from the H200 front sweep (docs/data/h200_decode_step_sweep_dataflow_kv1024_ec5029f.json): items in launch
# order (tickets cost 0.04 ms) and O items of 8 rows (0.03 ms), here with their first 1024 columns loaded
# before the wait (96 registers instead of 168): that combination not yet timed
FRONT_ARGS = {"front_only": True, "ticket": False, "rows": {"O": 8}, "block_k": {"O": 1024}}
TINY = {"layers": 2, "hidden": 64, "heads": 4, "kv_heads": 2, "head_dim": 16, "inter": 128, "vocab": 256}


def _bytes(p: dict) -> float:
    """Weights (layers, norms, tied head) + the K/V caches, each read once; activations neglected."""
    from suite.techniques.decode_step.reference import kv_bytes, weight_bytes

    return weight_bytes(p) + kv_bytes(p)


def _llama(kv: int, tiers=("nightly",)) -> Case:
    return Case(f"llama1b_kv{kv}", {"model": "llama-3.2-1b", "kv": kv}, tiers, seeds=2)


TECHNIQUE = Technique(
    name="decode_step",
    # every weight and the KV cache; the token (int) is the structure
    audit_inputs=("emb", "wqkv", "wo", "wgu", "wd", "ln1", "ln2", "lnf", "k_cache", "v_cache"),
    section="Whole-layer fused kernels — megakernels",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=(
        Impl("torch_eager", f"{_PKG}.torch_eager:run", baseline=True, graph=False,
             note="bf16 PyTorch ops, HF Llama's order, every op its own launch from the host"),
        Impl("torch_graph", f"{_PKG}.torch_eager:run", graph=True,
             note="the same ops captured once and replayed as one CUDA graph"),
        Impl("torch_compile", f"{_PKG}.torch_compile:run", graph=True, requires=("cuda",),
             note="torch.compile (Inductor) of the layer, the step replayed as one CUDA graph"),
        Impl("triton_fused", f"{_PKG}.triton_step:run", graph=True, requires=("triton",),
             note="5 launches per layer: norm-prologue/RoPE-epilogue QKV GEMV, split-KV attention with "
                  "its merge, O GEMV + residual, norm + gate/up GEMV + SwiGLU, down GEMV + residual; graph",
             nightly=False),  # the smoke tier's fused step; triton_fused_tuned is it, tuned
        Impl("triton_fused_mma", f"{_PKG}.triton_step:run", args={"mma_attention": True}, graph=True,
             requires=("triton",),
             note="the same step with attention on tensor cores (the 4 query heads of a KV head padded to "
                  "16 rows, q and p rounded to bf16)", nightly=False),  # triton_fused_tuned contains it
        Impl("triton_fused_tuned", f"{_PKG}.triton_step:run", args=TUNED_ARGS, graph=True, requires=("triton",),
             note="triton_fused_mma with the embedding gather inside the first QKV launch (one launch fewer) and "
                  "the down and O GEMVs streaming K in chunks of 2048 (every per-launch step loads the GEMVs' residual "
                  "and the position before the weights); every launch started early by PDL, loading its first "
                  "weights (attention: its first cache tile) before it waits; QKV in one chunk, O on 132 programs, "
                  "gate/up on 1056, attention in splits of one tile; down, gate/up and the head loading each chunk's weights "
                  "before the previous chunk's reduction, x in the weight tile's layout, gate/up on 2 warps"),
        Impl("triton_fused_omerge", f"{_PKG}.triton_step:run", args={**TUNED_ARGS, "o_merge": True}, graph=True,
             requires=("triton",),
             note="triton_fused_tuned with attention's merge in the O launch: attention stores its split partials "
                  "only, O has a program per (KV head, row block) that merges its head's partials after its wait "
                  "and adds its share into the residual with atomics (no counter, no last-split merge)",
             nightly=False),  # not yet timed on the H200 (docs/decode_step.md)
        Impl("triton_persistent", f"{_PKG}.triton_persistent:run", args=PERSISTENT_ARGS, graph=True,
             requires=("triton",),
             note="the whole step as one persistent launch: grid barriers between stages, each program "
                  "prefetching the next stage's weights into the L2 before it waits (stage by stage on a CPU)",
             nightly=False),  # 1.117 ms against the tuned step's 0.876
        Impl("triton_dataflow", f"{_PKG}.triton_dataflow:run", graph=True, requires=("triton",),
             note="the whole step as one launch of work items (blocks of GEMV rows, attention splits) claimed "
                  "in order, each GEMV item loading its weights before it waits on the previous stage's "
                  "counter: no launch boundary, no grid barrier", nightly=False),  # slower than _front at every KV
        Impl("triton_dataflow_front", f"{_PKG}.triton_dataflow:run", args=FRONT_ARGS, graph=True,
             requires=("triton",),
             note="per layer, QKV, attention and O as one launch of work items in launch order (O's weights "
                  "loaded while attention runs), then triton_fused_tuned's gate/up and down GEMVs and head",
             nightly=False),  # 0.928 ms against the tuned step's 0.877 (ec5029f)
        Impl("triton_fused_pdl", f"{_PKG}.triton_step:run", args={"pdl": True}, graph=True,
             requires=("cuda", "triton", "sm90"),
             note="the same kernels with programmatic dependent launch: each starts loading weights "
                  "while the previous one drains", nightly=False),  # measured slower than without
    ),
    cases=(
        Case("tiny_kv80", {**TINY, "kv": 80}, ("smoke",)),
        Case("tiny_kv33", {**TINY, "kv": 33}, ("smoke_full",)),
        *(_llama(kv) for kv in (1024, 8192)),  # the nightly: the two ends of the page's 1K-8K
        *(_llama(kv, ("full",)) for kv in (2048, 4096)),
    ),
    # The bf16 eager step's own error vs the fp32 oracle is the yardstick.
    tolerances={"default": Tolerance(f"{_REF}:lowp_eager", k=2.0)},
    metrics=(LATENCY, GBPS, REL_ERR),
    bytes=_bytes,
    work={"gbps": lambda p: _bytes(p) / 1e9},
    ceiling="suite.lib.bandwidth:copy_gbps",
    probe=f"{_PKG}.probe:probe",
    smoke=("torch_eager", "triton_fused"),
    claims=("decode_launches_are_overhead", "megakernel_78pct_h100_bandwidth", "megakernel_1p2_6p7x"),
)
