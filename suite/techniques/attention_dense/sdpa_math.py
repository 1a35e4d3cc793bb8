"""SDPA, causal GQA, on the MATH backend."""
import torch

from suite.techniques.attention_dense.common import sdpa


def run(out: torch.Tensor, q, k, v) -> None:
    """out (B,Hq,S,D) bf16 = causal softmax(q k^T / sqrt(D)) v, k/v (B,Hkv,S,D)."""
    out.copy_(sdpa(q, k, v, "MATH"))
