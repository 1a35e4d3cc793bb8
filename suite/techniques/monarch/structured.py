"""One matrix, three products: the dense GEMM (cuBLAS), Monarch (two batched matmuls around a
permutation), and the butterfly (log2 n passes of 2x2 mixing, fp32 between passes), all in torch."""
from __future__ import annotations

import torch

from suite.techniques.monarch.factors import butterfly_apply, monarch_apply


def run(out, x, tw, blk_r, blk_l, w, form: str, **_) -> None:
    """out (B, n) bf16 = x (B, n) bf16 @ W^T, W given by `form`: "dense" (w (n, n) bf16), "monarch"
    (blk_r (nb, bs, bs), blk_l (bs, nb, nb) bf16) or "butterfly" (tw (log2 n, 2, 2, n/2) bf16)."""
    if form == "dense":
        torch.mm(x, w.t(), out=out)
    elif form == "monarch":
        out.copy_(monarch_apply(x, blk_l, blk_r))
    elif form == "butterfly":
        out.copy_(butterfly_apply(x.float(), tw))
    else:
        raise ValueError(f"unknown form {form!r}")


def parameters(form: str, n: int, nb: int) -> int:
    """Stored numbers of each form: n^2 dense, n (nb + bs) Monarch, 2 n log2 n butterfly."""
    return {"dense": n * n, "monarch": n * (nb + n // nb), "butterfly": 2 * n * (n.bit_length() - 1)}[form]
