"""A tiny GQA attention model (RoPE, pre-norm, 2 layers) whose attention can be made block-sparse
by any selector: each layer selects per GQA group and query block, then attends exactly to the
selected blocks plus a causal window of one block."""
from __future__ import annotations

import math

import torch
from torch import nn

from suite.lib.block_sparse import dense_block_mask


def rope(x: torch.Tensor) -> torch.Tensor:
    """Rotary position embedding over the last dim of x (B,H,S,D)."""
    s, d = x.shape[-2], x.shape[-1]
    inv = 1.0 / (10000 ** (torch.arange(0, d, 2, device=x.device).float() / d))
    ang = torch.arange(s, device=x.device).float()[:, None] * inv[None, :]
    cos, sin = ang.cos(), ang.sin()
    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([x1 * cos - x2 * sin, x1 * sin + x2 * cos], dim=-1).flatten(-2)


class Attention(nn.Module):
    def __init__(self, dim: int, hq: int, hkv: int, key_shift: bool = False):
        super().__init__()
        self.hq, self.hkv, self.hd = hq, hkv, dim // hq
        self.q = nn.Linear(dim, dim, bias=False)
        self.kv = nn.Linear(dim, 2 * hkv * self.hd, bias=False)
        self.o = nn.Linear(dim, dim, bias=False)
        # Key shift (H3's shift SSM, Fu et al. 2023, reduced to one tap): each key also sees the
        # previous token, so a value's key can match a query for its own key in one attention hop.
        self.k_prev = nn.Linear(dim, hkv * self.hd, bias=False) if key_shift else None

    def keys_values(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Keys (RoPE applied) and values, each (B,Hkv,S,D), of the layer input x (B,S,dim)."""
        b, s, _ = x.shape
        k, v = self.kv(x).view(b, s, 2, self.hkv, self.hd).permute(2, 0, 3, 1, 4)
        if self.k_prev is not None:
            prev = nn.functional.pad(x, (0, 0, 1, 0))[:, :-1]
            k = k + self.k_prev(prev).view(b, s, self.hkv, self.hd).transpose(1, 2)
        return rope(k), v

    def forward(self, x: torch.Tensor, sparse=None) -> torch.Tensor:
        b, s, _ = x.shape
        q = rope(self.q(x).view(b, s, self.hq, self.hd).transpose(1, 2))
        k, v = self.keys_values(x)
        mask = None
        if sparse is not None:  # (selector fn, block, density)
            fn, block, density = sparse
            sel = dense_block_mask(*fn(q, k, block, density))  # (B,Hkv,nQB,nKB)
            tok = sel.repeat_interleave(block, 2).repeat_interleave(block, 3)
            dist = torch.arange(s, device=x.device)[:, None] - torch.arange(s, device=x.device)[None, :]
            # A causal sliding window of `block` tokens is always attended (as sparse designs keep a
            # local branch), so the token just before a block boundary is never lost.
            local = (dist >= 0) & (dist < block)
            mask = ((tok & (dist >= 0)) | local).repeat_interleave(self.hq // self.hkv, 1)
        o = nn.functional.scaled_dot_product_attention(
            q, k, v, attn_mask=mask, is_causal=mask is None, enable_gqa=True)
        return self.o(o.transpose(1, 2).reshape(b, s, -1))


class Block(nn.Module):
    def __init__(self, dim: int, hq: int, hkv: int, key_shift: bool = False):
        super().__init__()
        self.n1, self.n2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.attn = Attention(dim, hq, hkv, key_shift)
        self.mlp = nn.Sequential(nn.Linear(dim, 2 * dim), nn.GELU(), nn.Linear(2 * dim, dim))

    def forward(self, x, sparse=None):
        x = x + self.attn(self.n1(x), sparse)
        return x + self.mlp(self.n2(x))


class TinyLM(nn.Module):
    """Embedding, `layers` attention blocks, tied output head: logits (B,S,vocab)."""

    def __init__(self, vocab: int, dim: int = 64, layers: int = 2, hq: int = 4, hkv: int = 2,
                 key_shift: bool = False):
        super().__init__()
        self.config = {"vocab": vocab, "dim": dim, "layers": layers, "hq": hq, "hkv": hkv,
                       "key_shift": key_shift}
        self.emb = nn.Embedding(vocab, dim)
        nn.init.normal_(self.emb.weight, std=1 / math.sqrt(dim))
        self.blocks = nn.ModuleList(Block(dim, hq, hkv, key_shift) for _ in range(layers))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor, sparse=None) -> torch.Tensor:
        h = self.emb(x)
        for blk in self.blocks:
            h = blk(h, sparse)
        return self.norm(h) @ self.emb.weight.T
