"""Triton GEMM over pre-split planes with the products of a K step concatenated along K: the
step's (A piece, B piece) pairs become one wide (BM, n*BK) x (n*BK, BN) tile pair, so a single
tl.dot runs the whole group as back-to-back wgmma (Triton waits for each dot's result before the
next dot; one wide dot waits once). Two groups per step, then one IEEE fp32 add."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.techniques.gemm_fp32_emulation.triton_tiles import (compile_only, configs_from, grouped_tile,
                                                                     keep_listed, split, to_f32)

# Per scheme: two groups of (A plane, B plane) pairs, smallest magnitude first, hi*hi last.
# Group sizes are powers of two (Triton tile shapes); planes are packed 2 bits a block.
GROUPS = {
    "bf16x9": ([(2, 2), (1, 2), (2, 1), (0, 2), (2, 0), (1, 1), (0, 1), (1, 0)], [(0, 0)]),
    "bf16x6": ([(0, 2), (2, 0), (1, 1), (0, 1)], [(1, 0), (0, 0)]),
    "bf16x3": ([(0, 1), (1, 0)], [(0, 0)]),
}


def pack(planes: list[int]) -> int:
    return sum(p << (2 * i) for i, p in enumerate(planes))


@triton.jit
def _wide_tiles(a_ptr, b_ptr, rm, rn, k0, K, a_plane, b_plane, sam, sak, sbk, sbn,
                NB: tl.constexpr, PA: tl.constexpr, PB: tl.constexpr, BK: tl.constexpr,
                EVEN_K: tl.constexpr):
    """A tile (BM, NB*BK) and B tile (NB*BK, BN): block j holds plane (PA >> 2j) & 3 of A and
    plane (PB >> 2j) & 3 of B at K offsets k0 .. k0+BK."""
    c = tl.arange(0, NB * BK)
    blk = c // BK
    kk = k0 + c % BK
    a_off = ((PA >> (2 * blk)) & 3) * a_plane + kk * sak
    b_off = ((PB >> (2 * blk)) & 3) * b_plane + kk * sbk
    a_ptrs = a_ptr + rm[:, None] * sam + a_off[None, :]
    b_ptrs = b_ptr + b_off[:, None] + rn[None, :] * sbn
    if EVEN_K:
        a = tl.load(a_ptrs)
        b = tl.load(b_ptrs)
    else:
        a = tl.load(a_ptrs, mask=kk[None, :] < K, other=0)
        b = tl.load(b_ptrs, mask=kk[:, None] < K, other=0)
    return a, b


# (BM, BN, BK, stages, warps) by the step's block count; shared memory per stage holds all blocks
# of both groups, (NB1 + NB2) x BK x (BM + BN) bf16, up to ~220 KB; 64-row tiles on 4 warps leave
# room for two CTAs an SM.
_CHOICES = {
    9: [(128, 128, 16, 3, 8), (64, 128, 16, 3, 4)],
    6: [(128, 128, 32, 2, 8), (128, 128, 16, 4, 8), (64, 128, 16, 3, 4)],
    3: [(128, 128, 32, 4, 8), (128, 128, 64, 2, 8), (64, 128, 32, 3, 4)],
}


def autotune_configs() -> list[triton.Config]:
    return configs_from([shape for choice in _CHOICES.values() for shape in choice], interp_bk=32)


def prune_configs(configs, named_args, **kwargs):
    """The configs listed in _CHOICES for this scheme's block count."""
    return keep_listed(configs, _CHOICES[kwargs["NB1"] + kwargs["NB2"]])


@triton.autotune(configs=autotune_configs(), key=["M", "N", "K", "NB1", "NB2"],
                 prune_configs_by={"early_config_prune": prune_configs})
@triton.heuristics({"EVEN_K": lambda args: args["K"] % args["BK"] == 0})
@triton.jit
def cat_gemm_kernel(a_ptr, b_ptr, c_ptr, M, N, K, a_plane, b_plane, sam, sak, sbk, sbn, scm, scn,
                    NB1: tl.constexpr, PA1: tl.constexpr, PB1: tl.constexpr, NB2: tl.constexpr,
                    PA2: tl.constexpr, PB2: tl.constexpr, UPCAST: tl.constexpr, BM: tl.constexpr,
                    BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr, EVEN_K: tl.constexpr):
    pid_m, pid_n = grouped_tile(M, N, BM, BN, GROUP_M)
    rm = (pid_m * BM + tl.arange(0, BM)) % M
    rn = (pid_n * BN + tl.arange(0, BN)) % N
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        a1, b1 = _wide_tiles(a_ptr, b_ptr, rm, rn, kt * BK, K, a_plane, b_plane, sam, sak, sbk, sbn,
                             NB1, PA1, PB1, BK, EVEN_K)
        a2, b2 = _wide_tiles(a_ptr, b_ptr, rm, rn, kt * BK, K, a_plane, b_plane, sam, sak, sbk, sbn,
                             NB2, PA2, PB2, BK, EVEN_K)
        if UPCAST:  # interpreter: bf16 dots are wrong there; the products are exact in fp32
            part = tl.dot(to_f32(a1), to_f32(b1), input_precision="ieee")
            part = tl.dot(to_f32(a2), to_f32(b2), part, input_precision="ieee")
        else:
            part = tl.dot(a1, b1)
            part = tl.dot(a2, b2, part)
        acc += part  # IEEE fp32 add of the step's short tensor-core chain
    cm = pid_m * BM + tl.arange(0, BM)
    cn = pid_n * BN + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None] * scm + cn[None, :] * scn, acc,
             mask=(cm[:, None] < M) & (cn[None, :] < N))


def _groups(scheme: str) -> dict:
    """The scheme's two product groups as the kernel's block counts and packed planes."""
    g1, g2 = GROUPS[scheme]
    return dict(NB1=len(g1), PA1=pack([i for i, _ in g1]), PB1=pack([j for _, j in g1]),
                NB2=len(g2), PA2=pack([i for i, _ in g2]), PB2=pack([j for _, j in g2]))


def _kernel_args(pa, pb, out, scheme: str) -> dict:
    """cat_gemm_kernel's arguments by name (autotuned ones left out) for planes pa, pb and out."""
    _, M, K = pa.shape
    return dict(a_ptr=pa, b_ptr=pb, c_ptr=out, M=M, N=pb.shape[2], K=K, a_plane=pa.stride(0),
                b_plane=pb.stride(0), sam=pa.stride(1), sak=pa.stride(2), sbk=pb.stride(1), sbn=pb.stride(2),
                scm=out.stride(0), scn=out.stride(1), UPCAST=interpreting(), **_groups(scheme))


def gemm(pa: torch.Tensor, pb: torch.Tensor, out: torch.Tensor, scheme: str) -> None:
    """out (M,N) fp32 = sum of the scheme's products of bf16 planes pa (P,M,K) and pb (P,K,N)."""
    M, N = out.shape
    if interpreting():
        pa, pb = pa.view(torch.int16), pb.view(torch.int16)
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
    cat_gemm_kernel[grid](**_kernel_args(pa, pb, out, scheme))


def configs_for(scheme: str) -> list[triton.Config]:
    """The autotune configs a variant tries."""
    return prune_configs(autotune_configs(), {}, **_groups(scheme))


def compile_for(config: triton.Config, scheme: str, n: int = 256, device: str = "cuda") -> None:
    """Compile one config of a variant on (n, n) operands (n % 16 == 0, as every GPU case), no launch."""
    planes = torch.empty(3, n, n, device=device, dtype=torch.bfloat16)
    out = torch.empty(n, n, device=device)
    compile_only(cat_gemm_kernel, config, _kernel_args(planes, planes, out, scheme))


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, scheme: str) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32: bf16 planes, each K step's products gathered
    into two K-concatenated tiles, so the tensor cores run two dots instead of one a product."""
    gemm(split(a, scheme), split(b, scheme), out, scheme)
