"""FP32-emulation GEMM over bf16 planes in Gluon for Hopper (sm_90a): TMA loads into a ring of shared
buffers, each K step's piece products issued as one asynchronous wgmma chain into a fresh accumulator
and waited once (Triton's tl.dot waits after every product), then one IEEE fp32 add; persistent grid in
grouped tile order."""
from __future__ import annotations

import torch
import triton
from triton.runtime.jit import constexpr_function
from triton.experimental import gluon
from triton.experimental.gluon import language as gl
from triton.experimental.gluon.language.nvidia.hopper import (fence_async_shared, mbarrier, tma, warpgroup_mma,
                                                              warpgroup_mma_init,
                                                              warpgroup_mma_wait)

from suite.techniques.gemm_fp32_emulation.triton_tiles import split

_NPROD = {"bf16x3": 3, "bf16x6": 6, "bf16x9": 9}

# (BM, BN, BK, stages, warps, overlap, a in registers, CTAs per SM) per scheme: the fastest of the H200
# sweep (docs/data/h200_gemm_fp32_emulation_tune_95e94ce.json; still slower than the Triton planes
# kernel, see docs/numerics_gemm.md). A warpgroup holds a 64 x 128 share of the tile: the running sum
# and the step's accumulator take 128 of a thread's registers, a second chain in flight (overlap) 64
# more. Shared memory: stages x planes x (BM + BN) x BK x 2 bytes, <= 227 KB per SM.
CONFIGS = {
    "bf16x9": (64, 128, 32, 3, 4, 0, 0, 2),
    "bf16x6": (64, 128, 32, 3, 4, 0, 0, 2),
    "bf16x3": (128, 128, 64, 3, 8, 0, 0, 1),
}


@constexpr_function
def _warps_per_cta(BM, num_warps):
    # wgmma's unit is 4 warps over 64 rows; the rest of the warps go along M while rows remain.
    return [num_warps, 1] if BM >= 16 * num_warps else [4, num_warps // 4]


@gluon.jit
def _tile(t, grid_m, grid_n, GROUP_M: gl.constexpr):
    # (pid_m, pid_n) of tile t in grouped order: GROUP_M row blocks walk the column blocks together.
    per_group = GROUP_M * grid_n
    first_m = (t // per_group) * GROUP_M
    rows = gl.minimum(grid_m - first_m, GROUP_M)
    return first_m + (t % per_group) % rows, (t % per_group) // rows


@gluon.jit
def _load_step(j, pid, nprog, k_steps, grid_m, grid_n, a_desc0, a_desc1, a_desc2, b_desc0, b_desc1, b_desc2,
               a_bufs, b_bufs, bars, P: gl.constexpr, STAGES: gl.constexpr, GROUP_M: gl.constexpr):
    # TMA loads of every plane tile of this program's j-th K step into ring slot j % STAGES.
    pid_m, pid_n = _tile(pid + (j // k_steps) * nprog, grid_m, grid_n, GROUP_M)
    BM: gl.constexpr = a_desc0.block_type.shape[0]
    BK: gl.constexpr = a_desc0.block_type.shape[1]
    BN: gl.constexpr = b_desc0.block_type.shape[1]
    off_k = (j % k_steps) * BK
    s = j % STAGES
    bar = bars.index(s)
    mbarrier.expect(bar, P * (a_desc0.block_type.nbytes + b_desc0.block_type.nbytes))
    tma.async_copy_global_to_shared(a_desc0, [pid_m * BM, off_k], bar, a_bufs.index(s * P))
    tma.async_copy_global_to_shared(a_desc1, [pid_m * BM, off_k], bar, a_bufs.index(s * P + 1))
    tma.async_copy_global_to_shared(b_desc0, [off_k, pid_n * BN], bar, b_bufs.index(s * P))
    tma.async_copy_global_to_shared(b_desc1, [off_k, pid_n * BN], bar, b_bufs.index(s * P + 1))
    if P == 3:
        tma.async_copy_global_to_shared(a_desc2, [pid_m * BM, off_k], bar, a_bufs.index(s * P + 2))
        tma.async_copy_global_to_shared(b_desc2, [off_k, pid_n * BN], bar, b_bufs.index(s * P + 2))


@gluon.jit
def _mma(a, b_bufs, j, part, first: gl.constexpr):
    return warpgroup_mma(a, b_bufs.index(j), part, use_acc=not first, is_async=True)


@gluon.jit
def _products(a0, a1, a2, b_bufs, base, part, NPROD: gl.constexpr):
    # The scheme's piece products (0 = hi, 1 = mid, 2 = lo; a pieces in shared memory or registers),
    # smallest first, hi*hi last, chained on one accumulator that starts at zero.
    if NPROD == 9:
        part = _mma(a2, b_bufs, base + 2, part, True)
        part = _mma(a1, b_bufs, base + 2, part, False)
        part = _mma(a2, b_bufs, base + 1, part, False)
        part = _mma(a0, b_bufs, base + 2, part, False)
        part = _mma(a2, b_bufs, base, part, False)
        part = _mma(a1, b_bufs, base + 1, part, False)
        part = _mma(a0, b_bufs, base + 1, part, False)
    elif NPROD == 6:
        part = _mma(a0, b_bufs, base + 2, part, True)
        part = _mma(a2, b_bufs, base, part, False)
        part = _mma(a1, b_bufs, base + 1, part, False)
        part = _mma(a0, b_bufs, base + 1, part, False)
    else:
        part = _mma(a0, b_bufs, base + 1, part, True)
    part = _mma(a1, b_bufs, base, part, False)
    part = _mma(a0, b_bufs, base, part, False)
    return part


@gluon.jit
def _wait(chain, a0, a1, a2, outstanding: gl.constexpr, A_REG: gl.constexpr):
    # The chain's sum once at most `outstanding` wgmma remain in flight; a pieces held in registers
    # are its operands and stay live until then.
    if A_REG:
        part, a0, a1, a2 = warpgroup_mma_wait(num_outstanding=outstanding, deps=(chain, a0, a1, a2))
    else:
        part = warpgroup_mma_wait(num_outstanding=outstanding, deps=(chain, ))
    return part


@gluon.jit
def _a_piece(a_bufs, idx, mma_layout: gl.constexpr, A_REG: gl.constexpr):
    # With A_REG the piece is read from shared memory once and fed to its products from registers.
    if A_REG:
        return a_bufs.index(idx).load(gl.DotOperandLayout(operand_index=0, parent=mma_layout, k_width=2))
    else:
        return a_bufs.index(idx)


@gluon.jit
def plane_gemm_gluon(a_ptr, b_ptr, c_ptr, M, N, K, NPROD: gl.constexpr, BM: gl.constexpr, BN: gl.constexpr,
                     BK: gl.constexpr, STAGES: gl.constexpr, GROUP_M: gl.constexpr, OVERLAP: gl.constexpr,
                     A_REG: gl.constexpr, num_warps: gl.constexpr):
    P: gl.constexpr = 2 if NPROD == 3 else 3
    gl.static_assert(STAGES >= 2 + OVERLAP, "loads must run at least one step ahead")
    pid = gl.program_id(0)
    nprog = gl.num_programs(0)
    a_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BM, BK], gl.bfloat16)
    b_layout: gl.constexpr = gl.NVMMASharedLayout.get_default_for([BK, BN], gl.bfloat16)
    a_plane = M.to(gl.int64) * K
    b_plane = K.to(gl.int64) * N
    # One descriptor per plane: the TMA unit zero-fills outside [M, K] / [K, N], so tails need no masks.
    a_desc0 = tma.make_tensor_descriptor(a_ptr, [M, K], [K, 1], [BM, BK], a_layout)
    a_desc1 = tma.make_tensor_descriptor(a_ptr + a_plane, [M, K], [K, 1], [BM, BK], a_layout)
    a_desc2 = tma.make_tensor_descriptor(a_ptr + (P - 1) * a_plane, [M, K], [K, 1], [BM, BK], a_layout)
    b_desc0 = tma.make_tensor_descriptor(b_ptr, [K, N], [N, 1], [BK, BN], b_layout)
    b_desc1 = tma.make_tensor_descriptor(b_ptr + b_plane, [K, N], [N, 1], [BK, BN], b_layout)
    b_desc2 = tma.make_tensor_descriptor(b_ptr + (P - 1) * b_plane, [K, N], [N, 1], [BK, BN], b_layout)
    a_bufs = gl.allocate_shared_memory(gl.bfloat16, [STAGES * P, BM, BK], a_layout)
    b_bufs = gl.allocate_shared_memory(gl.bfloat16, [STAGES * P, BK, BN], b_layout)
    bars = gl.allocate_shared_memory(gl.int64, [STAGES, 1], mbarrier.MBarrierLayout())
    for i in gl.static_range(STAGES):
        mbarrier.init(bars.index(i), count=1)
    fence_async_shared()

    mma_layout: gl.constexpr = gl.NVMMADistributedLayout(version=[3, 0], warps_per_cta=_warps_per_cta(BM, num_warps),
                                                         instr_shape=[16, BN if BM >= 16 * num_warps else BN // 2, 16])
    grid_m = gl.cdiv(M, BM)
    grid_n = gl.cdiv(N, BN)
    k_steps = gl.cdiv(K, BK)
    total = gl.cdiv(grid_m * grid_n - pid, nprog) * k_steps  # K steps of all this program's tiles
    for j in gl.static_range(STAGES - 1 - OVERLAP):
        if j < total:
            _load_step(j, pid, nprog, k_steps, grid_m, grid_n, a_desc0, a_desc1, a_desc2, b_desc0, b_desc1,
                       b_desc2, a_bufs, b_bufs, bars, P, STAGES, GROUP_M)
    part = gl.zeros((BM, BN), dtype=gl.float32, layout=mma_layout)
    pending = warpgroup_mma_init(part)
    a_layout_reg: gl.constexpr = gl.DotOperandLayout(operand_index=0, parent=mma_layout, k_width=2)
    h0 = gl.zeros((BM, BK), dtype=gl.bfloat16, layout=a_layout_reg)
    h1 = h0
    h2 = h0
    rows = gl.arange(0, BM, layout=gl.SliceLayout(1, mma_layout))
    cols = gl.arange(0, BN, layout=gl.SliceLayout(0, mma_layout))
    step = 0
    ahead: gl.constexpr = STAGES - 1 - OVERLAP  # steps loaded ahead; OVERLAP keeps one chain in flight longer
    for t in range(pid, grid_m * grid_n, nprog):
        acc = gl.zeros((BM, BN), dtype=gl.float32, layout=mma_layout)
        for ks in range(k_steps):
            # The slot loaded here was read by a step whose products a wait below has finished.
            if step + ahead < total:
                _load_step(step + ahead, pid, nprog, k_steps, grid_m, grid_n, a_desc0, a_desc1, a_desc2, b_desc0,
                           b_desc1, b_desc2, a_bufs, b_bufs, bars, P, STAGES, GROUP_M)
            slot = step % STAGES
            mbarrier.wait(bars.index(slot), (step // STAGES) & 1)
            a0 = _a_piece(a_bufs, slot * P, mma_layout, A_REG)
            a1 = _a_piece(a_bufs, slot * P + 1, mma_layout, A_REG)
            a2 = _a_piece(a_bufs, slot * P + P - 1, mma_layout, A_REG)
            fresh = _products(a0, a1, a2, b_bufs, slot * P, part, NPROD)
            if OVERLAP:
                # This step's chain stays in flight while the previous one's sum is added (three
                # accumulators): wait until only this step's NPROD wgmma are outstanding.
                if ks > 0:
                    part = _wait(pending, h0, h1, h2, NPROD, A_REG)
                    acc += part
                pending = fresh
                if A_REG:  # registers the chain in flight reads, kept until its wait
                    h0 = a0
                    h1 = a1
                    h2 = a2
            else:
                part = _wait(fresh, a0, a1, a2, 0, A_REG)
                acc += part  # one IEEE fp32 add per step: long tensor-core chains lose fp32 accuracy
            step += 1
        if OVERLAP:
            part = _wait(pending, h0, h1, h2, 0, A_REG)
            acc += part
        pid_m, pid_n = _tile(t, grid_m, grid_n, GROUP_M)
        rm = pid_m * BM + rows
        rn = pid_n * BN + cols
        gl.store(c_ptr + rm[:, None].to(gl.int64) * N + rn[None, :], acc, mask=(rm[:, None] < M) & (rn[None, :] < N))
    for i in gl.static_range(STAGES):
        mbarrier.invalidate(bars.index(i))


def _alloc(size: int, alignment: int, stream):
    return torch.empty(size, device="cuda", dtype=torch.int8)


def supported(m: int, n: int, k: int) -> bool:
    """TMA needs 16-byte-aligned rows and plane bases: k and n multiples of 8."""
    return k % 8 == 0 and n % 8 == 0 and (m * k) % 8 == 0


def gemm(pa: torch.Tensor, pb: torch.Tensor, out: torch.Tensor, scheme: str, config=None) -> None:
    """out (M,N) fp32 = sum of the scheme's products of contiguous bf16 planes pa (P,M,K) and pb (P,K,N)."""
    bm, bn, bk, stages, warps, overlap, a_reg, per_sm = config or CONFIGS[scheme]
    _, M, K = pa.shape
    N = pb.shape[2]
    triton.set_allocator(_alloc)  # the kernel writes its TMA descriptors to global scratch
    tiles = triton.cdiv(M, bm) * triton.cdiv(N, bn)
    # per_sm = 0: one program per tile (no persistence), for comparison
    programs = per_sm * torch.cuda.get_device_properties(out.device).multi_processor_count if per_sm else tiles
    plane_gemm_gluon[(min(tiles, programs), )](pa, pb, out, M, N, K, NPROD=_NPROD[scheme], BM=bm, BN=bn, BK=bk,
                                                STAGES=stages, GROUP_M=8, OVERLAP=overlap, A_REG=a_reg,
                                                num_warps=warps)


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, scheme: str) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32: the split kernel's planes, then the Gluon GEMM."""
    if not supported(*out.shape, a.shape[1]) or out.stride(1) != 1 or out.stride(0) != out.shape[1]:
        raise ValueError("gluon planes kernel needs k, n multiples of 8 and a contiguous output")
    gemm(split(a, scheme), split(b, scheme), out, scheme)


def compile_sm90(scheme: str, config=None):
    """The kernel compiled for sm_90a with a scheme's config, without a GPU (Triton's bundled ptxas)."""
    from triton.backends.compiler import GPUTarget
    from triton.experimental.gluon._runtime import GluonASTSource

    bm, bn, bk, stages, warps, overlap, a_reg, _ = config or CONFIGS[scheme]
    consts = dict(NPROD=_NPROD[scheme], BM=bm, BN=bn, BK=bk, STAGES=stages, GROUP_M=8, OVERLAP=overlap,
                  A_REG=a_reg, num_warps=warps)
    sig = dict(a_ptr="*bf16", b_ptr="*bf16", c_ptr="*fp32", M="i32", N="i32", K="i32", **{k: "constexpr" for k in consts})
    attrs = {(i, ): [["tt.divisibility", 16]] for i in range(6)}  # as every GPU case: sizes % 16 == 0
    src = GluonASTSource(fn=plane_gemm_gluon, signature=sig, constexprs=consts, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32), options={"num_warps": warps})
