"""torch scaled_dot_product_attention (its default backend choice): the framework baseline."""
import torch
import torch.nn.functional as F


def run(out: torch.Tensor, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, causal: bool) -> None:
    """out (B,H,S,D) bf16 = softmax(q k^T / sqrt(D)) v, q/k/v (B,H,S,D) bf16."""
    out.copy_(F.scaled_dot_product_attention(q, k, v, is_causal=causal))
