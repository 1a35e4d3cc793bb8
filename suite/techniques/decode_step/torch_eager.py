"""The bf16 eager PyTorch step (timed as launched, or replayed as one CUDA graph by the runner)."""
from __future__ import annotations

import torch

from suite.techniques.decode_step.reference import forward


def run(out: torch.Tensor, **inputs) -> None:
    """out (V,) fp32 <- logits of one bf16 decode step; writes K/V into the caches at pos."""
    out.copy_(forward(torch.bfloat16, **inputs)[0])
