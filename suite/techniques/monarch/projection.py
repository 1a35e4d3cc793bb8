"""The Monarch projection of a dense matrix: the Monarch matrix nearest in Frobenius norm.

Each entry W[i' bs + k', i bs + k] = L[k', i', i] R[i, k', k] belongs to exactly one (k', i) slice, and
within a slice the entries form the outer product L[k', :, i] R[i, k', :]: rank one. So the nearest
Monarch takes each (nb x bs) slice of A to its best rank-1 approximation, the leading singular triple
(Eckart-Young per slice), and the squared error is the sum of each slice's other squared singular
values. This is the projection of the Monarch paper (Dao et al., ICML 2022, its Theorem on the
Monarch projection); the code here is ours."""
from __future__ import annotations

import math

import torch


def slices(a: torch.Tensor, nb: int) -> torch.Tensor:
    """a (n, n) -> (bs, nb, nb, bs): [k', i, :, :] is the slice S[i', k] = a[i' bs + k', i bs + k]."""
    n = a.shape[0]
    bs = n // nb
    return a.reshape(nb, bs, nb, bs).permute(1, 2, 0, 3)


def project(a: torch.Tensor, nb: int) -> tuple[torch.Tensor, torch.Tensor]:
    """(L (bs, nb, nb), R (nb, bs, bs)) of the Monarch matrix nearest to a (n, n), in a's dtype."""
    u, s, vh = torch.linalg.svd(slices(a, nb), full_matrices=False)  # batched over (k', i)
    root = s[..., 0].sqrt()
    col_l = u[..., :, 0] * root[..., None]  # (bs, nb, nb): [k', i, i'] = L[k', i', i]
    row_r = vh[..., 0, :] * root[..., None]  # (bs, nb, bs): [k', i, k] = R[i, k', k]
    return col_l.transpose(1, 2).contiguous(), row_r.transpose(0, 1).contiguous()


def projection_error(a: torch.Tensor, nb: int) -> float:
    """||a - P(a)||_F / ||a||_F for the nearest Monarch P(a), from the slices' singular values."""
    s = torch.linalg.svdvals(slices(a, nb))
    return math.sqrt((s[..., 1:] ** 2).sum().item() / (s ** 2).sum().item())


def dense_matrix(kind: str, n: int, g: torch.Generator) -> torch.Tensor:
    """A dense (n, n) fp64 matrix of a kind: gaussian (no structure), hadamard (Sylvester: exactly a
    Monarch), lowrank16 (rank 16), rbf (exp(-(i-j)^2 / (2 (n/16)^2)): smooth), monarch_noise (a random
    Monarch plus 10% Gaussian noise by norm)."""
    if kind == "gaussian":
        return torch.randn(n, n, generator=g, dtype=torch.float64)
    if kind == "hadamard":
        h = torch.ones(1, 1, dtype=torch.float64)
        while h.shape[0] < n:
            h = torch.cat((torch.cat((h, h), 1), torch.cat((h, -h), 1)), 0)
        return h
    if kind == "lowrank16":
        return (torch.randn(n, 16, generator=g, dtype=torch.float64)
                @ torch.randn(16, n, generator=g, dtype=torch.float64))
    if kind == "rbf":
        i = torch.arange(n, dtype=torch.float64)
        return torch.exp(-((i[:, None] - i[None, :]) ** 2) / (2 * (n / 16) ** 2))
    if kind == "monarch_noise":
        nb = int(round(math.sqrt(n)))
        from suite.techniques.monarch.factors import monarch_dense

        m = monarch_dense(torch.randn(n // nb, nb, nb, generator=g, dtype=torch.float64),
                          torch.randn(nb, n // nb, n // nb, generator=g, dtype=torch.float64))
        noise = torch.randn(n, n, generator=g, dtype=torch.float64)
        return m + 0.1 * noise * m.norm() / noise.norm()
    raise ValueError(f"unknown matrix kind {kind!r}")


KINDS = ("gaussian", "hadamard", "lowrank16", "rbf", "monarch_noise")
