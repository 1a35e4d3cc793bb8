"""Triton GEMM for FP32 emulation over pre-split planes: it loads every plane tile once per K step
and sums the scheme's products."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.techniques.gemm_fp32_emulation.triton_tiles import (compile_only, configs_from, grouped_tile,
                                                                   keep_listed, products, split)

_NPROD = {"bf16x3": 3, "tf32x3": 3, "bf16x6": 6, "bf16x9": 9}


# Hopper configs (BM, BN, BK, stages, warps) by (piece format, planes, per-step IEEE add). 8 warps =
# two warpgroups issuing wgmma on a 128-row tile; 4 warps on a 64-row tile let two CTAs share an SM
# (about 210 registers a thread, <= 110 KB of shared memory), so one CTA's wgmma waits overlap the
# other's work. Stages fill the shared memory with (BM + BN) x BK tiles of every plane.
_CHOICES = {
    ("bf16", 2, True): [(128, 128, 64, 3, 8), (64, 128, 32, 4, 4), (64, 128, 64, 2, 4)],
    ("bf16", 3, True): [(128, 128, 32, 4, 8), (128, 128, 64, 2, 8), (64, 128, 32, 3, 4)],
    ("tf32", 2, True): [(128, 128, 32, 3, 8), (128, 128, 16, 4, 8), (64, 128, 32, 2, 4)],
    ("bf16", 2, False): [(128, 256, 64, 2, 8), (128, 256, 32, 4, 8)],
    ("bf16", 3, False): [(128, 256, 32, 3, 8), (128, 128, 32, 4, 8)],
    ("tf32", 2, False): [(128, 128, 32, 3, 8)],
}


def autotune_configs() -> list[triton.Config]:
    return configs_from([shape for choice in _CHOICES.values() for shape in choice], interp_bk=64)


def prune_configs(configs, named_args, **kwargs):
    """The configs listed for this scheme in _CHOICES."""
    key = ("tf32" if kwargs.get("TF32") else "bf16", 2 if kwargs.get("NPROD") == 3 else 3,
           bool(kwargs.get("PROMOTE", True)))
    return keep_listed(configs, _CHOICES[key])


@triton.autotune(configs=autotune_configs(), key=["M", "N", "K", "NPROD", "PROMOTE", "TF32"],
                 prune_configs_by={"early_config_prune": prune_configs})
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BK"] == 0})
@triton.jit
def plane_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, a_plane, b_plane, sam, sak, sbk, sbn, scm, scn,
                      NPROD: tl.constexpr, PROMOTE: tl.constexpr, UPCAST: tl.constexpr,
                      TF32: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                      GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    pid_m, pid_n = grouped_tile(M, N, BM, BN, GROUP_M)
    rm = (pid_m * BM + tl.arange(0, BM)) % M  # wrap instead of masking rows/cols; the store masks
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    rk = tl.arange(0, BK)
    a_ptrs = a_ptr + rm[:, None] * sam + rk[None, :] * sak
    b_ptrs = b_ptr + rk[:, None] * sbk + rn[None, :] * sbn
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        if EVEN_K:
            a0 = tl.load(a_ptrs)
            a1 = tl.load(a_ptrs + a_plane)
            b0 = tl.load(b_ptrs)
            b1 = tl.load(b_ptrs + b_plane)
        else:
            ka = rk[None, :] < K - kt * BK
            kb = rk[:, None] < K - kt * BK
            a0 = tl.load(a_ptrs, mask=ka, other=0)
            a1 = tl.load(a_ptrs + a_plane, mask=ka, other=0)
            b0 = tl.load(b_ptrs, mask=kb, other=0)
            b1 = tl.load(b_ptrs + b_plane, mask=kb, other=0)
        a2, b2 = a1, b1  # placeholders for two-piece schemes (not used by their products)
        if NPROD >= 6:
            if EVEN_K:
                a2 = tl.load(a_ptrs + 2 * a_plane)
                b2 = tl.load(b_ptrs + 2 * b_plane)
            else:
                a2 = tl.load(a_ptrs + 2 * a_plane, mask=ka, other=0)
                b2 = tl.load(b_ptrs + 2 * b_plane, mask=kb, other=0)
        if PROMOTE:
            # A short tensor-core chain per K step in a fresh accumulator, then one IEEE fp32 add:
            # long chains in the tensor core's accumulator lose accuracy.
            part = tl.zeros((BM, BN), dtype=tl.float32)
            part = products(a0, a1, a2, b0, b1, b2, part, NPROD, UPCAST, TF32)
            acc += part
        else:
            acc = products(a0, a1, a2, b0, b1, b2, acc, NPROD, UPCAST, TF32)
        a_ptrs += BK * sak
        b_ptrs += BK * sbk
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, acc,
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def _kernel_args(pa, pb, out, scheme: str, promote: bool) -> dict:
    """plane_gemm_kernel's arguments by name (autotuned ones left out) for planes pa, pb and out."""
    _, M, K = pa.shape
    return dict(a_ptr=pa, b_ptr=pb, c_ptr=out, M=M, N=pb.shape[2], K=K, a_plane=pa.stride(0),
                b_plane=pb.stride(0), sam=pa.stride(1), sak=pa.stride(2), sbk=pb.stride(1), sbn=pb.stride(2),
                scm=out.stride(0), scn=out.stride(1), NPROD=_NPROD[scheme], PROMOTE=promote,
                UPCAST=interpreting(), TF32=scheme.startswith("tf32"))


def gemm(pa: torch.Tensor, pb: torch.Tensor, out: torch.Tensor, scheme: str, promote: bool = True) -> None:
    """out (M,N) fp32 = sum of the scheme's products of planes pa (P,M,K) and pb (P,K,N)."""
    M, N = out.shape
    if interpreting() and pa.dtype == torch.bfloat16:
        pa, pb = pa.view(torch.int16), pb.view(torch.int16)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
    plane_gemm_kernel[grid](**_kernel_args(pa, pb, out, scheme, promote))


def configs_for(scheme: str, promote: bool = True) -> list[triton.Config]:
    """The autotune configs a variant tries."""
    return prune_configs(autotune_configs(), {}, NPROD=_NPROD[scheme], PROMOTE=promote,
                         TF32=scheme.startswith("tf32"))


def compile_for(config: triton.Config, scheme: str, promote: bool = True, n: int = 256,
                device: str = "cuda") -> None:
    """Compile one config of a variant on (n, n) operands (n % 16 == 0, as every GPU case), no launch."""
    planes = torch.empty(2 if _NPROD[scheme] == 3 else 3, n, n, device=device,
                         dtype=torch.float32 if scheme.startswith("tf32") else torch.bfloat16)
    out = torch.empty(n, n, device=device)
    compile_only(plane_gemm_kernel, config, _kernel_args(planes, planes, out, scheme, promote))


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, scheme: str, promote: bool = True) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32: operands split into planes by the split
    kernel, then one GEMM sums the scheme's products (promote: an IEEE add per K step; without it
    one tensor-core chain over all of K)."""
    gemm(split(a, scheme), split(b, scheme), out, scheme, promote)
