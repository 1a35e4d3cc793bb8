"""Block masks in the kv_num_blocks / kv_indices layout, and the masked-attention oracle math.

Layout (per batch b, GQA group g, query block m), as FlexAttention's BlockMask holds it:
  kv_num_blocks (B, Hkv, nQB) int32: how many KV blocks query block m attends to;
  kv_indices (B, Hkv, nQB, nKB) int32: their indices, ascending, the diagonal block last,
  entries past kv_num_blocks unused. Queries are the LAST Sq positions of the Sk keys:
  query block m sits at absolute block m + (nKB - nQB) (prefill: Sq == Sk, offset 0).
"""
from __future__ import annotations

import math

import torch


def budget_counts(n_q_blocks: int, n_kv_blocks: int, density: float, device="cpu") -> torch.Tensor:
    """(nQB,) int64 blocks per query block: ceil(density * causal blocks), at least 1.

    Density is relative to the causal triangle, as the page's attn_cost counts it."""
    off = n_kv_blocks - n_q_blocks
    allowed = torch.arange(n_q_blocks, device=device) + off + 1
    return torch.clamp(torch.ceil(allowed.double() * density).long(), min=1).minimum(allowed)


def computed_blocks(n_q_blocks: int, n_kv_blocks: int, density: float) -> int:
    """Total computed (query block, KV block) pairs per head at this density."""
    return int(budget_counts(n_q_blocks, n_kv_blocks, density).sum())


def topk_blocks(scores: torch.Tensor, counts: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Block scores (B,H,nQB,nKB) float -> (kv_num_blocks (B,H,nQB) int32, kv_indices int32).

    Keeps the diagonal block always, future blocks never, then the best counts[m]-1 others."""
    b, h, nq, nk = scores.shape
    off = nk - nq
    dev = scores.device
    absq = torch.arange(nq, device=dev)[:, None] + off
    kvb = torch.arange(nk, device=dev)[None, :]
    s = scores.float().masked_fill(kvb > absq, float("-inf"))
    s = s.masked_fill(kvb == absq, float("inf"))
    order = torch.argsort(s, dim=-1, descending=True, stable=True)
    rank = torch.empty_like(order)
    rank.scatter_(-1, order, torch.arange(nk, device=dev).expand_as(order).contiguous())
    chosen = rank < counts.to(dev)[:, None]
    # Ascending indices of the chosen blocks first; the diagonal is the largest, hence last.
    key = torch.where(chosen, kvb.expand_as(chosen), nk + kvb)
    idx = torch.sort(key, dim=-1).values
    idx = torch.where(idx >= nk, idx - nk, idx)
    num = chosen.sum(-1)
    return num.to(torch.int32), idx.to(torch.int32)


def random_blocks(b: int, h: int, n_q_blocks: int, n_kv_blocks: int, density: float,
                  generator: torch.Generator, device="cpu"):
    """A seeded random block selection at `density` (diagonal always kept): (num, idx) int32."""
    scores = torch.rand(b, h, n_q_blocks, n_kv_blocks, generator=generator, device=device)
    return topk_blocks(scores, budget_counts(n_q_blocks, n_kv_blocks, density, device))


def check_blocks(num: torch.Tensor, idx: torch.Tensor) -> None:
    """Raise ValueError unless (num, idx) is a valid causal selection in the layout above."""
    nq, nk = idx.shape[-2], idx.shape[-1]
    off = nk - nq
    absq = torch.arange(nq, device=idx.device)[:, None] + off
    j = torch.arange(nk, device=idx.device)
    used = j < num[..., None].long()
    if (num < 1).any() or (num.long() > absq.squeeze(-1) + 1).any():
        raise ValueError("kv_num_blocks out of range")
    if ((idx.long() > absq) & used).any():
        raise ValueError("a selected KV block lies in the future of its query block")
    last = torch.gather(idx.long(), -1, (num.long() - 1)[..., None]).squeeze(-1)
    if (last != absq.squeeze(-1)).any():
        raise ValueError("the diagonal block is not the last selected block")
    inc = (idx[..., 1:] > idx[..., :-1]) | ~used[..., 1:]
    if not inc.all():
        raise ValueError("selected indices are not strictly ascending")


def dense_block_mask(num: torch.Tensor, idx: torch.Tensor) -> torch.Tensor:
    """(num, idx) -> bool (B,H,nQB,nKB), True where a block is selected."""
    nk = idx.shape[-1]
    used = torch.arange(nk, device=idx.device) < num[..., None].long()
    return _scatter_mask(idx.long(), used, nk)


def _scatter_mask(idx: torch.Tensor, used: torch.Tensor, nk: int) -> torch.Tensor:
    out = torch.zeros(idx.shape[:-1] + (nk,), dtype=torch.int32, device=idx.device)
    out.scatter_add_(-1, idx, used.to(torch.int32))
    return out > 0


def masked_attention(q, k, v, num, idx, block: int, mode: str = "fp64") -> torch.Tensor:
    """Exact causal attention over the selected blocks only: q (B,Hq,Sq,D), k/v (B,Hkv,Sk,D),
    -> (B,Hq,Sq,D) float64 ("fp64") or bf16 with bf16-rounded probabilities ("bf16")."""
    bsz, hq, sq, d = q.shape
    hkv, sk = k.shape[1], k.shape[2]
    grp, nq, nk = hq // hkv, sq // block, sk // block
    off = nk - nq
    cdt = torch.float64 if mode == "fp64" else torch.float32
    kb = k.to(cdt).view(bsz, hkv, nk, block, d)
    vb = v.to(cdt).view(bsz, hkv, nk, block, d)
    out = torch.empty(bsz, hq, sq, d, dtype=torch.float64 if mode == "fp64" else torch.bfloat16,
                      device=q.device)
    scale = 1.0 / math.sqrt(d)
    for m in range(nq):
        cmax = int(num[:, :, m].max())
        sel = idx[:, :, m, :cmax].long()  # (B,Hkv,c)
        valid = torch.arange(cmax, device=q.device) < num[:, :, m, None].long()
        gi = sel[..., None, None].expand(-1, -1, -1, block, d)
        ks = torch.gather(kb, 2, gi).reshape(bsz, hkv, cmax * block, d)
        vs = torch.gather(vb, 2, gi).reshape(bsz, hkv, cmax * block, d)
        qm = q[:, :, m * block:(m + 1) * block].to(cdt).reshape(bsz, hkv, grp, block, d)
        s = torch.einsum("bhgqd,bhkd->bhgqk", qm, ks) * scale
        kpos = (sel[..., None] * block + torch.arange(block, device=q.device)).reshape(bsz, hkv, -1)
        qpos = (m + off) * block + torch.arange(block, device=q.device)
        ok = (kpos[:, :, None, None, :] <= qpos[None, None, None, :, None])
        ok = ok & valid.repeat_interleave(block, -1)[:, :, None, None, :]
        p = torch.softmax(s.masked_fill(~ok, float("-inf")), dim=-1)
        if mode != "fp64":
            p = p.to(torch.bfloat16).float()
        o = torch.einsum("bhgqk,bhkd->bhgqd", p, vs).reshape(bsz, hq, block, d)
        out[:, :, m * block:(m + 1) * block] = o.to(out.dtype)
    return out


def flex_block_mask(num: torch.Tensor, idx: torch.Tensor, block: int, hq: int, sq: int, sk: int):
    """The same selection as a FlexAttention BlockMask over hq query heads: blocks before the
    diagonal as full blocks, the diagonal as a partial block under the causal mask_mod."""
    from torch.nn.attention.flex_attention import BlockMask

    grp = hq // num.shape[1]
    off = sk - sq

    # The mask_mod also looks the block up, so eager flex_attention (which ignores block
    # sparsity) computes the same function; compiled flex applies it to partial blocks only.
    table = dense_block_mask(num, idx).repeat_interleave(grp, dim=1)

    def causal(b, h, q_idx, kv_idx):
        return (q_idx + off >= kv_idx) & table[b, h, q_idx // block, kv_idx // block]

    num_l, idx_l = num.long(), idx.long()
    diag = torch.gather(idx_l, -1, (num_l - 1)[..., None])
    part_num = torch.ones_like(num)
    part_idx = torch.zeros_like(idx)
    part_idx[..., :1] = diag.to(idx.dtype)
    full_num = (num - 1).to(torch.int32)
    rep = lambda t: t.repeat_interleave(grp, dim=1).contiguous()
    return BlockMask.from_kv_blocks(rep(part_num), rep(part_idx), rep(full_num), rep(idx),
                                    BLOCK_SIZE=(block, block), mask_mod=causal, seq_lengths=(sq, sk))
