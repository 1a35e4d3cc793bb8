"""Oracle and inputs for the W4A16 GEMM: bf16 activations, INT4 weights with fp16 group scales."""
from __future__ import annotations

import torch

from suite.lib import int4
from suite.techniques.w4a16_gemm.packing import pack_k16

GROUP = 128  # weights per scale along K (GPTQ's and AWQ's usual group)


def make_inputs(params: dict, seed: int, device: str) -> dict[str, torch.Tensor]:
    """a (M,K) bf16 ~ N(0,1); W (N,K) ~ N(0, 0.02^2) quantized: qweight (K/8,N) int32, scales (K/G,N)
    fp16, w_bf16 (N,K), the same quantized weights dequantized to bf16 (the dense baseline's), and
    qweight_k16, the same codes in the decode kernel's interleaved layout (made at load time)."""
    g = torch.Generator(device=device).manual_seed(seed)
    m, n, k = params["m"], params["n"], params["k"]
    group = params.get("group", GROUP)
    a = torch.randn(m, k, generator=g, device=device).to(torch.bfloat16)
    w = 0.02 * torch.randn(n, k, generator=g, device=device)
    scales = int4.group_scales(w, group)
    q = int4.quantize(w, scales)
    return {"a": a, "qweight": int4.pack_k(q), "scales": scales.t().contiguous(),
            "w_bf16": int4.dequantize(q, scales).to(torch.bfloat16), "qweight_k16": pack_k16(q)}


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (M,N) bf16 output."""
    return torch.empty(params["m"], params["n"], device=device, dtype=torch.bfloat16)


def weights(qweight: torch.Tensor, scales: torch.Tensor) -> torch.Tensor:
    """(N,K) fp32 values q * s of the packed weights (exact: 4-bit x fp16 fits fp32)."""
    return int4.dequantize(int4.unpack_k(qweight), scales.t())


def reference(a, qweight, scales, w_bf16, qweight_k16=None) -> torch.Tensor:
    """fp64 a @ (q * s)^T: the oracle, (M,N) float64."""
    return a.double() @ weights(qweight, scales).double().t()


def lowp_unfused(a, qweight, scales, w_bf16, qweight_k16=None) -> torch.Tensor:
    """Dequantize to bf16, then a bf16 GEMM with bf16 output: (M,N) bf16."""
    return a @ weights(qweight, scales).to(torch.bfloat16).t()
