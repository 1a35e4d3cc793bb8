"""The block pattern's tiles: their size, and the list of nonzero tiles the tile-skipping kernel walks."""
from __future__ import annotations

import torch

TILE = 64  # side of the zero tiles of the block pattern (and of the tile-skipping kernel's W tile)


def tile_lists(w: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """For w (N,K), N and K multiples of TILE: tile_ptr (N/TILE + 1,) int32 and tile_k (tiles,) int32,
    the K-tile indices of the nonzero TILE x TILE tiles of each row of tiles (CSR over tiles)."""
    n, k = w.shape
    nonzero = (w != 0).view(n // TILE, TILE, k // TILE, TILE).any(dim=3).any(dim=1)  # (N/T, K/T)
    counts = nonzero.sum(dim=1, dtype=torch.int32)
    ptr = torch.zeros(n // TILE + 1, dtype=torch.int32, device=w.device)
    ptr[1:] = counts.cumsum(0)
    return ptr, nonzero.nonzero()[:, 1].to(torch.int32).contiguous()
