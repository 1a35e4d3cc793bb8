"""Butterfly and Monarch matrices in torch: the products, and the Monarch factors of a butterfly.

Butterfly (Dao et al., ICML 2019): log2(n) factors; factor j mixes each pair (p, p + 2^j) inside
groups of 2^(j+1) by its own 2x2 twiddle. tw (log2 n, 2, 2, n/2): tw[j, a, b, g * 2^j + t] maps
element b of pair (g, t) to element a.
Monarch (Dao et al., "Monarch: Expressive Structured Matrices for Efficient and Accurate Training",
ICML 2022): n = nb * bs, input index i * bs + k (block i, offset k), output index i' * bs + k';
out[i', k'] = sum_{i,k} L[k', i', i] R[i, k', k] x[i, k], with R (nb, bs, bs) block-diagonal and
L (bs, nb, nb) block-diagonal after the permutation that swaps block and offset.
A butterfly is a Monarch: its factors of stride < bs act inside blocks (R), the rest across blocks
at a fixed offset (L)."""
from __future__ import annotations

import math

import torch


def butterfly_apply(x: torch.Tensor, tw: torch.Tensor, steps: range | None = None) -> torch.Tensor:
    """x (B, n) times the butterfly factors `steps` (default all, stride 1 first), in x's dtype."""
    b, n = x.shape
    for j in steps if steps is not None else range(tw.shape[0]):
        s = 1 << j
        v = x.reshape(b, n // (2 * s), 2, s)
        t = tw[j].to(x.dtype).reshape(2, 2, n // (2 * s), s)
        x0, x1 = v[:, :, 0], v[:, :, 1]
        x = torch.stack((t[0, 0] * x0 + t[0, 1] * x1, t[1, 0] * x0 + t[1, 1] * x1), dim=2).reshape(b, n)
    return x


def random_butterfly(n: int, g: torch.Generator, device: str) -> torch.Tensor:
    """tw (log2 n, 2, 2, n/2) fp64 of an orthogonal butterfly: each twiddle a rotation by a random angle."""
    theta = 2 * math.pi * torch.rand(int(math.log2(n)), n // 2, generator=g, device=device, dtype=torch.float64)
    c, s = theta.cos(), theta.sin()
    return torch.stack((torch.stack((c, -s)), torch.stack((s, c)))).permute(2, 0, 1, 3).contiguous()


def monarch_of_butterfly(tw: torch.Tensor, nb: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(R (nb, bs, bs), L (bs, nb, nb)) in tw's dtype with monarch_apply(x, L, R) == butterfly_apply(x, tw)."""
    n = 2 * tw.shape[-1]
    bs = n // nb
    low = range(int(math.log2(bs)))
    high = range(len(low), tw.shape[0])
    ar_bs, ar_nb = torch.arange(bs, device=tw.device), torch.arange(nb, device=tw.device)
    # Row k: ones at offset k of every block; the low factors stay inside blocks, so row k of the
    # result holds column k of every R[i].
    e = torch.zeros(bs, nb, bs, dtype=tw.dtype, device=tw.device)
    e[ar_bs, :, ar_bs] = 1
    r = butterfly_apply(e.reshape(bs, n), tw, low).reshape(bs, nb, bs).permute(1, 2, 0)
    # Row i: ones over block i; the high factors keep offsets, so row i holds column i of every L[k'].
    f = torch.zeros(nb, nb, bs, dtype=tw.dtype, device=tw.device)
    f[ar_nb, ar_nb] = 1
    l_ = butterfly_apply(f.reshape(nb, n), tw, high).reshape(nb, nb, bs).permute(2, 1, 0)
    return r.contiguous(), l_.contiguous()


def monarch_dense(blk_l: torch.Tensor, blk_r: torch.Tensor) -> torch.Tensor:
    """The (n, n) matrix W with W[i' bs + k', i bs + k] = L[k', i', i] R[i, k', k]."""
    bs, nb = blk_l.shape[0], blk_l.shape[1]
    return torch.einsum("pqi,ipk->qpik", blk_l, blk_r).reshape(nb * bs, nb * bs)


def monarch_apply(x: torch.Tensor, blk_l: torch.Tensor, blk_r: torch.Tensor) -> torch.Tensor:
    """x (B, n) @ W^T as two batched matmuls: (B, n) in x's dtype."""
    b = x.shape[0]
    bs, nb = blk_l.shape[0], blk_l.shape[1]
    y1 = torch.bmm(x.view(b, nb, bs).transpose(0, 1), blk_r.transpose(1, 2))  # (nb, B, bs): [i, b, k']
    y2 = torch.bmm(y1.permute(2, 1, 0), blk_l.transpose(1, 2))  # (bs, B, nb): [k', b, i']
    return y2.permute(1, 2, 0).reshape(b, nb * bs)
