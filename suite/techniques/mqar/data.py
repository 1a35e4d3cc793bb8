"""MQAR batches: key-value pairs up front, the keys queried again later among filler tokens.

Vocabulary: 0 pad, keys [1, 1+K), values [1+K, 1+K+V), filler [1+K+V, 1+K+V+F). Filler follows a
fixed bigram rule (next = 3*prev+1 mod F, 10% random), so it is predictable from the previous
token alone: its loss is the "perplexity" that cannot see recall failures."""
from __future__ import annotations

import torch

N_KEYS, N_VALUES, N_FILLER = 64, 64, 64
VOCAB = 1 + N_KEYS + N_VALUES + N_FILLER
IGNORE = -100


def batch(n: int, length: int, n_kv: int, generator: torch.Generator, device="cpu"):
    """(x, y, is_query) each (n, length): inputs, next-token targets (IGNORE where unscored),
    and a bool mask of query positions (target = the value bound to the key there)."""
    g = generator
    keys = torch.argsort(torch.rand(n, N_KEYS, generator=g), dim=1)[:, :n_kv] + 1
    vals = torch.randint(0, N_VALUES, (n, n_kv), generator=g) + 1 + N_KEYS
    x = torch.empty(n, length, dtype=torch.long)
    x[:, 0:2 * n_kv:2], x[:, 1:2 * n_kv:2] = keys, vals
    f0 = 1 + N_KEYS + N_VALUES
    fill = torch.empty(n, length - 2 * n_kv, dtype=torch.long)
    cur = torch.randint(0, N_FILLER, (n,), generator=g)
    for t in range(fill.shape[1]):
        rnd = torch.rand(n, generator=g) < 0.1
        cur = torch.where(rnd, torch.randint(0, N_FILLER, (n,), generator=g), (3 * cur + 1) % N_FILLER)
        fill[:, t] = cur + f0
    x[:, 2 * n_kv:] = fill
    # Queries: each key once, at distinct even offsets of the filler region, value right after.
    slots = (length - 2 * n_kv) // 2 - 1
    pos = 2 * n_kv + 2 * torch.argsort(torch.rand(n, slots, generator=g), dim=1)[:, :n_kv]
    rows = torch.arange(n)[:, None]
    x[rows, pos], x[rows, pos + 1] = keys, vals
    y = torch.full_like(x, IGNORE)
    y[:, :-1] = x[:, 1:]
    y[:, : 2 * n_kv] = IGNORE  # the pairs themselves are unpredictable
    is_query = torch.zeros_like(x, dtype=torch.bool)
    is_query[rows, pos] = True
    y[rows, pos + 1] = IGNORE  # what follows a value is not the filler rule
    y[rows, pos - 1] = IGNORE  # nor is a key predictable from the filler before it
    return x.to(device), y.to(device), is_query.to(device)
