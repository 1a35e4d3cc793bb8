"""Block selectors: each maps q (B,Hq,Sq,D), k (B,Hkv,Sk,D) to (kv_num_blocks, kv_indices) int32
in the layout of suite/lib/block_sparse.py, one selection per GQA group and query block,
with the same per-row budget (budget_counts at `density`). Queries are the last Sq of Sk keys."""
from __future__ import annotations

import math

import torch

from suite.lib.block_sparse import budget_counts, topk_blocks
from suite.lib.morton import morton_encode3

def _shape(q, k, block):
    bsz, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    return bsz, hq, hkv, hq // hkv, sq // block, sk // block, d


def _q_summary(q, hkv, block) -> torch.Tensor:
    """Mean query of each query block over the group's heads: (B,Hkv,nQB,D) fp32."""
    bsz, hq, sq, d = q.shape
    return q.float().view(bsz, hkv, hq // hkv, sq // block, block, d).mean(dim=(2, 4))


def block_mass(q, k, block: int, dtype=torch.float32, chunk_elems: int = 1 << 28) -> torch.Tensor:
    """True causal attention mass per (query block, KV block), summed over the group's heads and
    the block's queries: (B,Hkv,nQB,nKB) in `dtype` (the exact top-k oracle's scores)."""
    bsz, hq, hkv, grp, nq, nk, d = _shape(q, k, block)
    off = nk - nq
    kc = k.to(dtype)
    out = torch.zeros(bsz, hkv, nq, nk, dtype=dtype, device=q.device)
    step = max(1, chunk_elems // (hq * block * k.shape[2]))
    for a in range(0, nq, step):
        e = min(a + step, nq)
        keys = (e + off) * block  # keys at or before the chunk's last query
        qc = q[:, :, a * block:e * block].to(dtype).view(bsz, hkv, grp, (e - a) * block, d)
        s = torch.einsum("bhgqd,bhkd->bhgqk", qc, kc[:, :, :keys]) / math.sqrt(d)
        qpos = torch.arange((a + off) * block, (e + off) * block, device=q.device)
        s.masked_fill_(torch.arange(keys, device=q.device)[None, :] > qpos[:, None], float("-inf"))
        p = torch.softmax(s, dim=-1).view(bsz, hkv, grp, e - a, block, keys // block, block)
        out[:, :, a:e, :keys // block] = p.sum(dim=(2, 4, 6))
    return out


def _counts(q, k, block, density):
    return budget_counts(q.shape[2] // block, k.shape[2] // block, density, q.device)


def exact_topk(q, k, block: int, density: float):
    """Oracle selection: the blocks holding the most true attention mass (fp32)."""
    return topk_blocks(block_mass(q, k, block), _counts(q, k, block, density))


def mean_pool(q, k, block: int, density: float):
    """Mean query of the block . mean key of each KV block."""
    bsz, hq, hkv, grp, nq, nk, d = _shape(q, k, block)
    kbar = k.float().view(bsz, hkv, nk, block, d).mean(3)
    return topk_blocks(_q_summary(q, hkv, block) @ kbar.transpose(-1, -2), _counts(q, k, block, density))


def max_pool(q, k, block: int, density: float):
    """Upper bound of q.k over a block from per-channel key max/min (Quest-style), mean query."""
    bsz, hq, hkv, grp, nq, nk, d = _shape(q, k, block)
    kb = k.float().view(bsz, hkv, nk, block, d)
    qbar = _q_summary(q, hkv, block)
    scores = qbar.clamp(min=0) @ kb.amax(3).transpose(-1, -2) + qbar.clamp(max=0) @ kb.amin(3).transpose(-1, -2)
    return topk_blocks(scores, _counts(q, k, block, density))


_PROJ: dict = {}


def index_projection(hkv: int, d: int, rank: int, device, seed: int = 0) -> torch.Tensor:
    """A fixed (Hkv, D, rank) projection with orthonormal columns, one per GQA group (untrained)."""
    key = (hkv, d, rank, str(device), seed)
    if key not in _PROJ:
        _PROJ[key] = _make_projection(hkv, d, rank, seed).to(device)
    return _PROJ[key]


def _make_projection(hkv: int, d: int, rank: int, seed: int) -> torch.Tensor:
    g = torch.Generator(device="cpu").manual_seed(seed)
    w = torch.linalg.qr(torch.randn(hkv, d, rank, generator=g)).Q
    return w * math.sqrt(d / rank)


def msa_index(q, k, block: int, density: float, rank: int = 32, proj: torch.Tensor | None = None):
    """MSA-style index branch per GQA group: queries and keys through a small projection, token
    index scores, max over each KV block, then top-k."""
    bsz, hq, hkv, grp, nq, nk, d = _shape(q, k, block)
    w = proj if proj is not None else index_projection(hkv, d, rank, q.device)
    kp = (k.float() @ w[None]).transpose(-1, -2)  # (B,Hkv,r,Sk)
    qp = _q_summary(q, hkv, block) @ w[None]  # (B,Hkv,nQB,r)
    scores = _by_rows(lambda a, e: (qp[:, :, a:e] @ kp).view(bsz, hkv, e - a, nk, block).amax(-1),
                      nq, bsz * hkv * k.shape[2])
    return topk_blocks(scores, _counts(q, k, block, density))


def msa_fused(q, k, block: int, density: float, rank: int = 32, proj: torch.Tensor | None = None):
    """msa_index's selection by three Triton kernels (suite/lib/msa_index_triton.py): only the
    causal half of the token scores, never written to memory, and top-k in one pass per row."""
    from suite.lib.msa_index_triton import msa_index_select  # lazily: triton loads only for this one

    w = proj if proj is not None else index_projection(k.shape[1], q.shape[-1], rank, q.device)
    return msa_index_select(q, k, w, block, density)


def _by_rows(fn, nq: int, elems_per_row: int, budget: int = 1 << 28) -> torch.Tensor:
    """Block scores fn(a, e) -> (B,H,e-a,nKB) over query-block ranges, so that the token-level
    intermediate (elems_per_row per query block) stays under `budget` elements."""
    step = max(1, budget // max(1, elems_per_row))
    return torch.cat([fn(a, min(a + step, nq)) for a in range(0, nq, step)], dim=2)


def dhsa_chunks(q, k, block: int, density: float, window: int = 16, z: float = 4.0,
                max_len: int | None = None):
    """DHSA-style: variable-length key chunks (a boundary where a key departs from the mean of
    the previous `window` keys by z standard deviations, and every max_len tokens), chunk
    summaries sum/sqrt(len), chunk-level similarity upsampled to tokens, max per KV block."""
    bsz, hq, hkv, grp, nq, nk, d = _shape(q, k, block)
    sk = k.shape[2]
    max_len = max_len or max(1, block // 4)
    kf = k.float()
    csum = torch.cumsum(kf, dim=2)
    prev = torch.cat([torch.zeros_like(csum[:, :, :1]), csum[:, :, :-1]], dim=2)
    t = torch.arange(sk, device=k.device)
    lag = torch.cat([torch.zeros_like(prev[:, :, :window]), prev[:, :, :-window]], dim=2) \
        if sk > window else torch.zeros_like(prev)
    cnt = torch.clamp(t, max=window).clamp(min=1).to(kf.dtype)[None, None, :, None]
    dist = torch.linalg.vector_norm(kf - (prev - lag) / cnt, dim=-1)  # (B,Hkv,Sk)
    zs = (dist - dist.mean(-1, keepdim=True)) / (dist.std(-1, keepdim=True) + 1e-6)
    novel = zs > z
    start = novel | torch.cat([torch.zeros_like(novel[..., :1]), novel[..., :-1]], -1)
    start = start | (t % max_len == 0)
    cid = torch.cumsum(start.long(), dim=-1) - 1  # chunk id of each token
    nch = int(cid.max()) + 1
    sums = torch.zeros(bsz, hkv, nch, d, device=k.device).scatter_add_(2, cid[..., None].expand(-1, -1, -1, d), kf)
    lens = torch.zeros(bsz, hkv, nch, device=k.device).scatter_add_(2, cid, torch.ones_like(dist))
    rep = sums / lens.clamp(min=1).sqrt()[..., None]
    chunk_scores = _q_summary(q, hkv, block) @ rep.transpose(-1, -2)  # (B,Hkv,nQB,nch)

    def rows(a, e):  # chunk scores upsampled to tokens, max per KV block
        tok = torch.gather(chunk_scores[:, :, a:e], 3, cid[:, :, None, :].expand(-1, -1, e - a, -1))
        return tok.view(bsz, hkv, e - a, nk, block).amax(-1)

    return topk_blocks(_by_rows(rows, nq, bsz * hkv * sk), _counts(q, k, block, density))


def _unit_cube(x: torch.Tensor, proj: torch.Tensor) -> torch.Tensor:
    """Normalised vectors through a (D,3) projection, mapped from [-1,1] to [0,1)."""
    y = torch.nn.functional.normalize(x, dim=-1) @ proj
    return ((y / proj.norm(dim=0).max()).clamp(-1, 1 - 1e-6) + 1) / 2


def _shifted_codes(u: torch.Tensor, bits: int, shifts: int) -> torch.Tensor:
    """Points u in [0,1)^3 (..., 3) -> (shifts, ...) int64 Morton codes on `shifts` Z-curves, curve j
    shifted by j/shifts along every axis on a doubled grid (bits+1 per axis, so resolution is kept).
    Two points that one curve splits at a high-order cell boundary (adjacent in space, far apart in
    that curve's order) share a small cell on another: with an odd count >= 4 (dimension + 1; odd,
    so that no shift j/shifts is itself a dyadic boundary), some curve holds any two points in a
    common cell of side O(their distance) (Chan's shifted Z-orders). All curves in one encode."""
    offsets = torch.tensor([j / shifts for j in range(shifts)], dtype=u.dtype, device=u.device)
    return morton_encode3((u[None] + offsets.view(-1, *(1,) * u.dim())) / 2, bits + 1)


def zeta_morton(q, k, block: int, density: float, window: int = 64, bits: int = 10, seed: int = 0,
                shifts: int = 5):
    """ZETA-style candidates: keys and query summaries through a 3-D projection, Morton-coded on
    `shifts` shifted Z-curves; on each curve the `window` keys on either side of each query's code in
    sorted order are scored exactly (candidates unioned over the curves), each KV block scored by its
    best candidate (blocks with none rank last). One curve alone misses neighbours across a
    high-order Z boundary (docs/sparse_attention.md, "ZETA: shifted Z-curves")."""
    bsz, hq, hkv, grp, nq, nk, d = _shape(q, k, block)
    sk, off = k.shape[2], nk - nq
    proj = index_projection(1, d, 3, q.device, seed)[0]  # built once per device and seed
    kf, qbar = k.float(), _q_summary(q, hkv, block)
    kcode = _shifted_codes(_unit_cube(kf, proj), bits, shifts)  # (C,B,Hkv,Sk) int64
    qcode = _shifted_codes(_unit_cube(qbar, proj), bits, shifts)  # (C,B,Hkv,nQB)
    sorted_codes, order = torch.sort(kcode, dim=-1)
    pos = torch.searchsorted(sorted_codes, qcode.contiguous())
    w = min(window, sk // 2)
    span = (pos[..., None] + torch.arange(-w, w, device=q.device)).clamp(0, sk - 1)  # (C,B,Hkv,nQB,2w)
    cand = torch.gather(order[:, :, :, None, :].expand(-1, -1, -1, nq, -1), 4, span)  # token positions
    cand = cand.permute(1, 2, 3, 0, 4).reshape(bsz, hkv, nq, -1)  # (B,Hkv,nQB,C*2w), repeats harmless
    ck = torch.gather(kf, 2, cand.reshape(bsz, hkv, -1, 1).expand(-1, -1, -1, d)).view(bsz, hkv, nq, -1, d)
    cs = torch.einsum("bhqd,bhqcd->bhqc", qbar, ck)
    qend = (torch.arange(nq, device=q.device) + off + 1) * block
    cs = cs.masked_fill(cand >= qend[:, None], float("-inf"))
    scores = torch.full((bsz, hkv, nq, nk), float("-inf"), device=q.device)
    scores.scatter_reduce_(3, cand // block, cs, reduce="amax")
    return topk_blocks(scores, _counts(q, k, block, density))


# Every selector by name, in the order reports list them; a new selector is one function and one entry.
SELECTOR_FUNCTIONS = {"exact_topk": exact_topk, "mean_pool": mean_pool, "max_pool": max_pool,
                      "msa_index": msa_index, "msa_fused": msa_fused, "dhsa_chunks": dhsa_chunks,
                      "zeta_morton": zeta_morton}
SELECTORS = tuple(SELECTOR_FUNCTIONS)
TRITON_SELECTORS = ("msa_fused",)  # written in Triton (the rest are torch eager)


def select(name: str, q, k, block: int, density: float):
    """q (B,Hq,Sq,D), k (B,Hkv,Sk,D) -> (kv_num_blocks, kv_indices) int32 of the named selector."""
    if name not in SELECTOR_FUNCTIONS:
        raise KeyError(f"unknown selector {name!r}; known: {SELECTORS}")
    return SELECTOR_FUNCTIONS[name](q, k, block, density)
