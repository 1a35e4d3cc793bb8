"""MQAR batches: key-value pairs up front, the keys queried again later among filler tokens.

Vocabulary: 0 pad, keys [1, 1+K), values [1+K, 1+K+V), filler [1+K+V, 1+K+V+F). Filler follows a
fixed bigram rule (next = 3*prev+1 mod F, 10% random), so it is predictable from the previous
token alone: its loss is the "perplexity" that cannot see recall failures."""
from __future__ import annotations

import functools

import torch

N_KEYS, N_VALUES, N_FILLER = 64, 64, 64
VOCAB = 1 + N_KEYS + N_VALUES + N_FILLER
IGNORE = -100


@functools.lru_cache(maxsize=8)
def _rule_powers(steps: int, device: torch.device) -> torch.Tensor:
    """(steps, N_FILLER) long: row j holds the bigram rule applied j times to each filler token."""
    out = torch.empty(steps, N_FILLER, dtype=torch.long)
    cur = torch.arange(N_FILLER)
    for j in range(steps):
        out[j] = cur
        cur = (3 * cur + 1) % N_FILLER
    return out.to(device)


def filler(n: int, length: int, generator: torch.Generator) -> torch.Tensor:
    """(n, length) filler ids in [0, N_FILLER): a random start, then the rule, restarted at random
    with probability 0.1 per token. Vectorised: each token is the rule applied (t - last restart)
    times to the value drawn at the last restart."""
    g, dev = generator, generator.device
    restart = torch.rand(n, length, generator=g, device=dev) < 0.1
    restart[:, 0] = True
    drawn = torch.randint(0, N_FILLER, (n, length), generator=g, device=dev)
    pos = torch.arange(length, device=dev).expand(n, length)
    last = torch.where(restart, pos, torch.zeros_like(pos)).cummax(dim=1).values
    return _rule_powers(length, dev)[pos - last, drawn.gather(1, last)]


def batch(n: int, length: int, n_kv: int, generator: torch.Generator, device="cpu"):
    """(x, y, is_query) each (n, length): inputs, next-token targets (IGNORE where unscored),
    and a bool mask of query positions (target = the value bound to the key there). Drawn on the
    generator's device."""
    g, dev = generator, generator.device
    keys = torch.argsort(torch.rand(n, N_KEYS, generator=g, device=dev), dim=1)[:, :n_kv] + 1
    vals = torch.randint(0, N_VALUES, (n, n_kv), generator=g, device=dev) + 1 + N_KEYS
    x = torch.empty(n, length, dtype=torch.long, device=dev)
    x[:, 0:2 * n_kv:2], x[:, 1:2 * n_kv:2] = keys, vals
    f0 = 1 + N_KEYS + N_VALUES
    x[:, 2 * n_kv:] = f0 + filler(n, length - 2 * n_kv, g)
    # Queries: each key once, at distinct even offsets of the filler region. The answer is the
    # target only, never an input: a value written after its query would let later queries be
    # answered by elimination (the values not yet answered) instead of by recall.
    slots = (length - 2 * n_kv) // 2 - 1
    pos = 2 * n_kv + 2 * torch.argsort(torch.rand(n, slots, generator=g, device=dev), dim=1)[:, :n_kv]
    rows = torch.arange(n, device=dev)[:, None]
    x[rows, pos] = keys
    y = torch.full_like(x, IGNORE)
    y[:, :-1] = x[:, 1:]
    y[:, : 2 * n_kv] = IGNORE  # the pairs themselves are unpredictable
    is_query = torch.zeros_like(x, dtype=torch.bool)
    is_query[rows, pos] = True
    y[rows, pos] = vals
    y[rows, pos - 1] = IGNORE  # a key is not predictable from the filler before it
    return x.to(device), y.to(device), is_query.to(device)
