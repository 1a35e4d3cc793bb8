"""Fused dequantization (page: "Fused epilogues and prologues"): a W4A16 GEMM whose 4-bit weights
are unpacked and dequantized in the mainloop, against dequantize-then-GEMM and the bf16 GEMM."""
from suite.spec import LATENCY, REL_ERR, TFLOPS, Case, Impl, Technique, Tolerance

_PKG = "suite.techniques.w4a16_gemm"
_REF = f"{_PKG}.reference"
_LLAMA = {"8b_qkvo": (4096, 4096), "8b_up": (14336, 4096), "8b_down": (4096, 14336),
          "70b_up": (28672, 8192)}  # (N, K) of Llama-3 8B and 70B linear layers


def _flops(p: dict) -> float:
    return 2.0 * p["m"] * p["n"] * p["k"]


def _bytes(p: dict) -> float:
    """Least traffic with 4-bit weights: packed weights, fp16 group scales, a and out in bf16."""
    return p["n"] * p["k"] / 2 + 2 * p["n"] * p["k"] / 128 + 2 * p["m"] * (p["k"] + p["n"])


def _case(m: int, layer: str, tiers: tuple[str, ...], seeds: int = 3) -> Case:
    n, k = _LLAMA[layer]
    return Case(f"m{m}_{layer}", {"m": m, "n": n, "k": k, "layer": layer}, tiers, seeds)


def _small(m: int, n: int, k: int, tiers=("smoke",)) -> Case:
    return Case(f"m{m}n{n}k{k}", {"m": m, "n": n, "k": k}, tiers)


TECHNIQUE = Technique(
    name="w4a16_gemm",
    audit_inputs=("a",),  # scales and w_bf16 are derived with the packed weights
    section="Fused epilogues and prologues",
    reference=f"{_REF}:reference",
    make_inputs=f"{_REF}:make_inputs",
    empty_output=f"{_REF}:empty_output",
    impls=(
        Impl("cublas_bf16", f"{_PKG}.cublas_bf16:run", baseline=True,
             note="torch.mm on the same weights stored in bf16 (16 bits per weight)"),
        Impl("triton_w4a16", f"{_PKG}.triton_w4a16_kernel:run", requires=("triton",),
             note="int4 (8 per int32 along K) x fp16 scales per 128, dequantized in the mainloop; "
                  "serial split-K for small M",
             nightly=False),  # the first fused kernel: 0.58-0.74x cuBLAS at M <= 16, 0.48x at 2048
        Impl("triton_w4a16_gather", f"{_PKG}.triton_w4a16_kernel:run", args={"gather": True},
             requires=("triton",), note="the same kernel, each weight loading its own packed word "
             "(no interleaving reshape)", nightly=False),  # slower than triton_w4a16 at every case
        Impl("triton_w4a16_decode", f"{_PKG}.triton_w4a16_decode:run", requires=("triton",),
             note="decode-shaped: the (16 words x BLOCK_N) weight tile unpacked into eight K = 16 "
                  "slices (interleaved packing, made at load time) by inline PTX, two centred bf16 "
                  "weights per register (prmt, lop3, sub.bf16x2), tl.dot; scales one block ahead; "
                  "split-K by fp32 atomics; autotuned"),
        Impl("triton_w4a16_streamk", f"{_PKG}.triton_w4a16_streamk:run", requires=("triton",),
             note="the decode kernel's product in stream-K form up to M = 16: 264-528 programs share the "
                  "(column tile, 128-K block) units evenly, partial tiles summed by fp32 atomics; "
                  "autotuned; the split-K decode kernel beyond M = 16", nightly=False),  # 0.96-1.00x decode
        Impl("triton_dequant_cublas", f"{_PKG}.triton_unfused:run", requires=("triton",),
             note="one Triton pass writes bf16 weights (K,N), then torch.mm"),
        Impl("torch_dequant_cublas", f"{_PKG}.torch_unfused:run",
             note="unpack and dequantize in torch ops, then torch.mm"),
    ),
    cases=(
        _small(1, 64, 256),
        _small(72, 64, 128),  # both kernel paths: split-K (M <= 16 under the interpreter) and not
        _small(13, 160, 384, ("smoke_full",)),
        Case("m40n64k512g64", {"m": 40, "n": 64, "k": 512, "group": 64}, ("smoke_full",)),
        *(_case(m, layer, ("nightly",)) for layer in _LLAMA for m in (1, 16)),
        _case(64, "8b_up", ("nightly",)),
        _case(2048, "8b_up", ("nightly",), seeds=2),
        *(_case(m, layer, ("full",)) for layer in _LLAMA for m in (4, 8, 32, 64) if (m, layer) != (64, "8b_up")),
        *(_case(m, layer, ("full",), seeds=1) for layer in _LLAMA for m in (512, 4096)),
    ),
    # Judged against dequantize-to-bf16 then a bf16 GEMM with bf16 output (the unfused path's
    # own error vs the fp64 product of the quantized weights).
    tolerances={"default": Tolerance(f"{_REF}:lowp_unfused", k=2.0)},
    metrics=(LATENCY, TFLOPS, REL_ERR),
    ceilings={"tflops": "bf16_tflops"},  # share of the bf16 GEMM ceiling the run measured
    flops=_flops,
    bytes=_bytes,
    smoke=("cublas_bf16", "triton_w4a16", "triton_w4a16_decode"),
    claims=("w4a16_fused_beats_unfused", "marlin_near_4x_to_batch_16"),
)
