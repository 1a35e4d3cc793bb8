"""The decode kernel's weight layout, made once when the weights are loaded: eight 4-bit codes per
int32, interleaved so that nibble j of the 16 words of a 128-K block holds 16 consecutive K.

Word 16 b + i, nibble j holds k = 128 b + 16 j + i (i < 16, j < 8). Shifting a (16, N) tile of
words by 4 j gives the weights of the contiguous K slice 128 b + 16 j .. + 15: an MMA's K = 16 step
with contiguous activations, and no reshape of the unpacked weights."""
from __future__ import annotations

import torch

BLOCK = 128  # K per block of 16 words


def pack_k16(q: torch.Tensor) -> torch.Tensor:
    """(N, K) int8 codes in [-8, 7], K % 128 == 0 -> (K // 8, N) int32 in the interleaved layout."""
    n, k = q.shape
    u = (q.to(torch.int64) + 8).reshape(n, k // BLOCK, 8, 16)  # (N, block, j, i), values 0..15
    shifts = (4 * torch.arange(8, device=q.device, dtype=torch.int64)).view(1, 1, 8, 1)
    word = (u << shifts).sum(2)  # (N, block, i): disjoint nibbles, the sum is the bitwise or
    word = torch.where(word >= 1 << 31, word - (1 << 32), word).to(torch.int32)  # same bits, int32
    return word.reshape(n, k // 8).t().contiguous()


def unpack_k16(packed: torch.Tensor) -> torch.Tensor:
    """(K // 8, N) int32 in the interleaved layout -> (N, K) int8 codes (inverse of pack_k16)."""
    kw, n = packed.shape
    shifts = (4 * torch.arange(8, device=packed.device, dtype=torch.int32)).view(1, 1, 8, 1)
    words = packed.t().reshape(n, kw // 16, 1, 16)
    u = (words >> shifts) & 0xF  # (N, block, j, i)
    return (u - 8).to(torch.int8).reshape(n, kw * 8).contiguous()



# Within a block, slot 4 q + r of a column holds row i = 2 q + (r % 2) + 8 (r // 2) of pack_k16's
# (16 words x N) tile: the four rows one thread of an m16n8k16 B operand holds, in its register order.
SLOT_ROW = [2 * (s // 4) + (s % 2) + 8 * ((s % 4) // 2) for s in range(16)]


def pack_k16t(q: torch.Tensor) -> torch.Tensor:
    """(N, K) int8 codes in [-8, 7], K % 128 == 0 -> (N, K // 8) int32: pack_k16's words, each
    column's 16 words of a block contiguous, in SLOT_ROW order (16-byte loads in the Gluon kernel)."""
    return k16_to_k16t(pack_k16(q))


def k16_to_k16t(words: torch.Tensor) -> torch.Tensor:
    """pack_k16's (K // 8, N) int32 -> pack_k16t's (N, K // 8)."""
    kw, n = words.shape
    rows = torch.tensor(SLOT_ROW, device=words.device)
    return words.reshape(kw // 16, 16, n)[:, rows, :].permute(2, 0, 1).reshape(n, kw).contiguous()
