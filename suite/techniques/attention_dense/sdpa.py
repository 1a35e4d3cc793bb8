"""SDPA, causal GQA, on one named SDPA backend."""
import torch

from suite.techniques.attention_dense.common import sdpa


def run(out: torch.Tensor, q, k, v, backend: str) -> None:
    """out (B,Hq,S,D) bf16 = causal softmax(q k^T / sqrt(D)) v, k/v (B,Hkv,S,D), on SDPBackend `backend`."""
    out.copy_(sdpa(q, k, v, backend))
