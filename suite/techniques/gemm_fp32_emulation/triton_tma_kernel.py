"""Triton GEMM for FP32 emulation over pre-split planes with operands loaded by TMA tensor descriptors
(one per plane): no per-thread pointer tensors (about 140 registers a thread instead of 200-226 with
cp.async), so three 4-warp CTAs fit on an SM where the pointer kernel fits two."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.techniques.gemm_fp32_emulation.triton_tiles import (compile_only, configs_from, grouped_tile,
                                                                   keep_listed, products, split)

_NPROD = {"bf16x3": 3, "bf16x6": 6, "bf16x9": 9}

# (BM, BN, BK, stages, warps) by planes. Shared memory: stages x planes x (BM + BN) x BK x 2 bytes; 4-warp
# CTAs of <= 75 KB run three to an SM (the per-product wgmma waits of one overlap the others' work).
_CHOICES = {
    2: [(128, 128, 64, 3, 8), (64, 128, 32, 3, 4), (64, 128, 64, 2, 4)],
    # Pinning three planes to (64, 128, 32, 2, 4), fastest at 8192^3 in two sweeps, cost 18-20 % on the skinny
    # shapes in the runner (b18a217; docs/numerics_gemm.md): the autotuner picks per shape, so all three stay.
    3: [(64, 128, 32, 3, 4), (64, 128, 32, 2, 4), (128, 128, 32, 4, 8)],
}


def autotune_configs() -> list[triton.Config]:
    return configs_from([shape for choice in _CHOICES.values() for shape in choice], interp_bk=64)


def prune_configs(configs, named_args, **kwargs):
    """The configs listed for this scheme's plane count."""
    return keep_listed(configs, _CHOICES[2 if kwargs.get("NPROD") == 3 else 3])


@triton.jit
def _descs(ptr, plane, R, C, B0: tl.constexpr, B1: tl.constexpr, PIECES: tl.constexpr):
    # Descriptors of the hi, mid and lo planes of a contiguous (R, C) operand (two-piece schemes: the
    # second repeated in place of the third, which their products do not use).
    d0 = tl.make_tensor_descriptor(ptr, shape=[R, C], strides=[C, 1], block_shape=[B0, B1])
    d1 = tl.make_tensor_descriptor(ptr + plane, shape=[R, C], strides=[C, 1], block_shape=[B0, B1])
    d2 = tl.make_tensor_descriptor(ptr + (PIECES - 1) * plane, shape=[R, C], strides=[C, 1], block_shape=[B0, B1])
    return d0, d1, d2


@triton.jit
def tile_operands(a_ptr, b_ptr, M, N, K, NPROD: tl.constexpr, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
                  GROUP_M: tl.constexpr):
    """The six plane descriptors of A and B and this program's tile origin (off_m, off_n)."""
    pieces: tl.constexpr = 2 if NPROD == 3 else 3
    da0, da1, da2 = _descs(a_ptr, M.to(tl.int64) * K, M, K, BM, BK, pieces)
    db0, db1, db2 = _descs(b_ptr, K.to(tl.int64) * N, K, N, BK, BN, pieces)
    pid_m, pid_n = grouped_tile(M, N, BM, BN, GROUP_M)
    return da0, da1, da2, db0, db1, db2, pid_m * BM, pid_n * BN


@triton.autotune(configs=autotune_configs(), key=["M", "N", "K", "NPROD"],
                 prune_configs_by={"early_config_prune": prune_configs})
@triton.jit
def tma_plane_kernel(a_ptr, b_ptr, c_ptr, M, N, K, NPROD: tl.constexpr, UPCAST: tl.constexpr, BM: tl.constexpr,
                     BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    da0, da1, da2, db0, db1, db2, off_m, off_n = tile_operands(a_ptr, b_ptr, M, N, K, NPROD, BM, BN, BK, GROUP_M)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in range(0, tl.cdiv(K, BK)):
        k0 = kt * BK  # the descriptors zero-fill past M, N and K
        # A short tensor-core chain per K step in a fresh accumulator, then one IEEE fp32 add: long
        # chains in the tensor core's accumulator lose accuracy.
        part = tl.zeros((BM, BN), dtype=tl.float32)
        part = products(da0.load([off_m, k0]), da1.load([off_m, k0]), da2.load([off_m, k0]), db0.load([k0, off_n]),
                        db1.load([k0, off_n]), db2.load([k0, off_n]), part, NPROD, UPCAST, False)
        acc += part
    cm = off_m + tl.arange(0, BM)
    cn = off_n + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None].to(tl.int64) * N + cn[None, :], acc, mask=(cm[:, None] < M) & (cn[None, :] < N))


def _alloc(size: int, alignment: int, stream):
    return torch.empty(size, device="cuda" if torch.cuda.is_available() else "cpu", dtype=torch.int8)


def _kernel_args(pa, pb, out, scheme: str) -> dict:
    _, M, K = pa.shape
    return dict(a_ptr=pa, b_ptr=pb, c_ptr=out, M=M, N=pb.shape[2], K=K, NPROD=_NPROD[scheme], UPCAST=interpreting())


def supported(m: int, n: int, k: int) -> bool:
    """TMA needs 16-byte-aligned rows and plane bases: k and n multiples of 8."""
    return k % 8 == 0 and n % 8 == 0 and (m * k) % 8 == 0


def gemm(pa: torch.Tensor, pb: torch.Tensor, out: torch.Tensor, scheme: str) -> None:
    """out (M,N) fp32 (contiguous) = sum of the scheme's products of contiguous bf16 planes pa (P,M,K), pb (P,K,N)."""
    M, N = out.shape
    if interpreting():
        pa, pb = pa.view(torch.int16), pb.view(torch.int16)
    triton.set_allocator(_alloc)  # the kernel writes its descriptors to global scratch
    grid = lambda meta: (triton.cdiv(M, meta["BM"]) * triton.cdiv(N, meta["BN"]),)
    tma_plane_kernel[grid](**_kernel_args(pa, pb, out, scheme))


def configs_for(scheme: str) -> list[triton.Config]:
    """The autotune configs a scheme tries."""
    return prune_configs(autotune_configs(), {}, NPROD=_NPROD[scheme])


def compile_for(config: triton.Config, scheme: str, n: int = 256, device: str = "cuda") -> None:
    """Compile one config of a scheme on (n, n) operands (n % 16 == 0, as every GPU case), no launch."""
    planes = torch.empty(3, n, n, device=device, dtype=torch.bfloat16)
    out = torch.empty(n, n, device=device)
    triton.set_allocator(_alloc)
    compile_only(tma_plane_kernel, config, _kernel_args(planes, planes, out, scheme))


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, scheme: str) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32: the split kernel's planes, then the TMA GEMM."""
    if not supported(*out.shape, a.shape[1]) or not out.is_contiguous():
        raise ValueError("the TMA planes kernel needs k, n multiples of 8 and a contiguous output")
    gemm(split(a, scheme), split(b, scheme), out, scheme)


def compile_sm90(scheme: str, config: triton.Config):
    """The kernel compiled for sm_90a with one config, without a GPU (needs TRITON_INTERPRET unset)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    consts = dict(NPROD=_NPROD[scheme], UPCAST=False, **config.kwargs)
    sig = dict(a_ptr="*bf16", b_ptr="*bf16", c_ptr="*fp32", M="i32", N="i32", K="i32", **{k: "constexpr" for k in consts})
    attrs = {(i, ): [["tt.divisibility", 16]] for i in range(6)}  # as every GPU case: sizes % 16 == 0
    src = ASTSource(fn=tma_plane_kernel.fn, signature=sig, constexprs=consts, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32),
                          options={"num_warps": config.num_warps, "num_stages": config.num_stages})
