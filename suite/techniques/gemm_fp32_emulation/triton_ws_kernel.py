"""Triton GEMM for FP32 emulation over pre-split planes loaded by TMA, with two knobs the autotuned TMA
kernel lacks: Triton's Hopper warp specialisation of the K loop (one producer warpgroup issuing the TMA
loads, two consumer warpgroups each taking half the tile's rows) and a fresh step accumulator refreshed
every REFRESH K steps instead of every step (fewer IEEE adds; a longer tensor-core chain), and a persistent
grid (PERSIST: one program per SM walking the tiles, warp-specialised across tiles)."""
from __future__ import annotations

import torch
import triton
import triton.language as tl

from suite.lib.interp import interpreting
from suite.techniques.gemm_fp32_emulation.triton_tiles import products, split
from suite.techniques.gemm_fp32_emulation.triton_tma_kernel import _alloc, supported, tile_operands

_NPROD = {"bf16x3": 3, "bf16x6": 6, "bf16x9": 9}

# Per scheme: BM, BN, BK, stages, warps (with WS: the consumers' warps; the producer adds 4), REFRESH, WS, PERSIST.
# From three H200 sweeps (runners.studies.gemm_fp32_emulation_ws_tune; docs/numerics_gemm.md): refreshing every
# 2-4 steps was slower for every scheme; persistence did not change the time; warp specialisation paid for x3
# only (the runner at 8192^3: x3 180.7 and 182.6 TFLOP/s against 177.2 for the planes kernel; x9 and x6 slower).
CONFIGS = {
    "bf16x9": dict(BM=128, BN=128, BK=32, stages=3, warps=4, REFRESH=1, WS=True, PERSIST=False),
    "bf16x6": dict(BM=128, BN=128, BK=32, stages=3, warps=4, REFRESH=1, WS=True, PERSIST=False),
    "bf16x3": dict(BM=128, BN=128, BK=64, stages=2, warps=4, REFRESH=1, WS=True, PERSIST=False),
}


@triton.jit
def _tile_sum(da0, da1, da2, db0, db1, db2, off_m, off_n, K, NPROD: tl.constexpr, UPCAST: tl.constexpr,
              BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, REFRESH: tl.constexpr, WS: tl.constexpr):
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for kt in tl.range(0, tl.cdiv(K, BK * REFRESH), warp_specialize=WS):
        # REFRESH K steps of products in a fresh accumulator, then one IEEE fp32 add (the descriptors
        # zero-fill past K, so a partial last group adds zeros).
        part = tl.zeros((BM, BN), dtype=tl.float32)
        for r in tl.static_range(REFRESH):
            k0 = (kt * REFRESH + r) * BK
            part = products(da0.load([off_m, k0]), da1.load([off_m, k0]), da2.load([off_m, k0]),
                            db0.load([k0, off_n]), db1.load([k0, off_n]), db2.load([k0, off_n]), part, NPROD,
                            UPCAST, False)
        acc += part
    return acc


@triton.jit
def _store(c_ptr, acc, off_m, off_n, M, N, BM: tl.constexpr, BN: tl.constexpr, OPAQUE: tl.constexpr):
    if OPAQUE:
        # Triton 3.6's Hopper warp specialisation gives the second consumer warpgroup rows off_m + 64 for its
        # A loads and rewrites every use of off_m in it, so `off_m + arange(64, 128)` would store at +128:
        # an opaque copy of off_m (one PTX mov) keeps the store's row base out of that rewrite.
        off_m = tl.inline_asm_elementwise("mov.b32 $0, $1;", "=r,r", [off_m], dtype=tl.int32, is_pure=True, pack=1)
    cm = off_m + tl.arange(0, BM)
    cn = off_n + tl.arange(0, BN)
    tl.store(c_ptr + cm[:, None].to(tl.int64) * N + cn[None, :], acc, mask=(cm[:, None] < M) & (cn[None, :] < N))


@triton.jit
def ws_plane_kernel(a_ptr, b_ptr, c_ptr, M, N, K, NPROD: tl.constexpr, UPCAST: tl.constexpr, BM: tl.constexpr,
                    BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr, REFRESH: tl.constexpr,
                    WS: tl.constexpr, PERSIST: tl.constexpr, PROGRAMS: tl.constexpr):
    da0, da1, da2, db0, db1, db2, off_m, off_n = tile_operands(a_ptr, b_ptr, M, N, K, NPROD, BM, BN, BK, GROUP_M)
    if PERSIST:
        # PROGRAMS programs walk the tiles in grouped order; warp specialisation on this outer loop lets the
        # producer load the next tile's first steps while the consumers finish a tile and store it.
        grid_m = tl.cdiv(M, BM)
        per_group = GROUP_M * tl.cdiv(N, BN)
        for tile in tl.range(tl.program_id(0), grid_m * tl.cdiv(N, BN), PROGRAMS, warp_specialize=WS):
            first_m = (tile // per_group) * GROUP_M
            rows = min(grid_m - first_m, GROUP_M)
            tm = (first_m + (tile % per_group) % rows) * BM
            tn = ((tile % per_group) // rows) * BN
            acc = _tile_sum(da0, da1, da2, db0, db1, db2, tm, tn, K, NPROD, UPCAST, BM, BN, BK, REFRESH, False)
            _store(c_ptr, acc, tm, tn, M, N, BM, BN, WS and not UPCAST)
    else:
        acc = _tile_sum(da0, da1, da2, db0, db1, db2, off_m, off_n, K, NPROD, UPCAST, BM, BN, BK, REFRESH, WS)
        _store(c_ptr, acc, off_m, off_n, M, N, BM, BN, WS and not UPCAST)


def _consts(scheme: str, cfg: dict, programs: int) -> dict:
    """The kernel's compile-time arguments for a scheme and config (programs: the persistent grid)."""
    return dict(NPROD=_NPROD[scheme], UPCAST=interpreting(), BM=cfg["BM"], BN=cfg["BN"], BK=cfg["BK"], GROUP_M=8,
                REFRESH=cfg["REFRESH"], WS=cfg["WS"], PERSIST=cfg.get("PERSIST", False), PROGRAMS=programs)


def _launch_args(pa, pb, out, scheme: str, cfg: dict) -> tuple[dict, dict]:
    """(kernel arguments, launch options) for planes pa (P,M,K), pb (P,K,N), out and a config."""
    _, M, K = pa.shape
    if interpreting():  # one small tile, no warp specialisation (the interpreter runs the loop plainly)
        cfg = dict(cfg, BM=64, BN=64, BK=64, stages=1, warps=4)
    programs = torch.cuda.get_device_properties(0).multi_processor_count if pa.is_cuda else 2
    args = dict(a_ptr=pa, b_ptr=pb, c_ptr=out, M=M, N=pb.shape[2], K=K, **_consts(scheme, cfg, programs))
    return args, dict(num_warps=cfg["warps"], num_stages=cfg["stages"])


def gemm(pa: torch.Tensor, pb: torch.Tensor, out: torch.Tensor, scheme: str, cfg: dict | None = None) -> None:
    """out (M,N) fp32 (contiguous) = sum of the scheme's products of contiguous bf16 planes pa (P,M,K), pb (P,K,N)."""
    M, N = out.shape
    if interpreting():
        pa, pb = pa.view(torch.int16), pb.view(torch.int16)
    args, opts = _launch_args(pa, pb, out, scheme, cfg or CONFIGS[scheme])
    triton.set_allocator(_alloc)
    tiles = triton.cdiv(M, args["BM"]) * triton.cdiv(N, args["BN"])
    grid = (min(tiles, args["PROGRAMS"]) if args["PERSIST"] else tiles,)
    ws_plane_kernel[grid](**args, **opts)


def configs_for(scheme: str) -> list[dict]:
    """The one config a scheme runs (warm_cache compiles it)."""
    return [CONFIGS[scheme]]


def compile_for(cfg: dict, scheme: str, n: int = 256, device: str = "cuda"):
    """Compile one config of a scheme on (n, n) operands (n % 16 == 0, as every GPU case), no launch; the kernel."""
    planes = torch.empty(3, n, n, device=device, dtype=torch.bfloat16)
    out = torch.empty(n, n, device=device)
    triton.set_allocator(_alloc)
    args, opts = _launch_args(planes, planes, out, scheme, cfg)
    return ws_plane_kernel.warmup(grid=(1,), **args, **opts)


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor, scheme: str) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32: the split kernel's planes, then the warp-specialised TMA GEMM."""
    if not supported(*out.shape, a.shape[1]) or not out.is_contiguous():
        raise ValueError("the TMA planes kernel needs k, n multiples of 8 and a contiguous output")
    gemm(split(a, scheme), split(b, scheme), out, scheme)


def compile_sm90(scheme: str, cfg: dict):
    """The kernel compiled for sm_90a with one config, without a GPU (needs TRITON_INTERPRET unset)."""
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource

    consts = _consts(scheme, cfg, programs=132)  # the H200's SMs
    sig = dict(a_ptr="*bf16", b_ptr="*bf16", c_ptr="*fp32", M="i32", N="i32", K="i32", **{k: "constexpr" for k in consts})
    attrs = {(i, ): [["tt.divisibility", 16]] for i in range(6)}
    src = ASTSource(fn=ws_plane_kernel, signature=sig, constexprs=consts, attrs=attrs)
    return triton.compile(src, target=GPUTarget("cuda", 90, 32),
                          options={"num_warps": cfg["warps"], "num_stages": cfg["stages"]})
