"""BF16x9 as ONE bf16 GEMM over K-concatenated pieces: [A_i for each (i,j)] @ [B_j ; ...], fp32 out.

Fast, but every product is summed in one long tensor-core accumulation chain; in the fp32
accuracy class on purpose, to show that the harness catches fast-and-wrong."""
import torch

from suite.lib.planes import SCHEMES, split


def run(out: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> None:
    """out (M,N) fp32 = a (M,K) fp32 @ b (K,N) fp32."""
    parts, pairs = SCHEMES["bf16x9"]
    pa = [p.to(torch.bfloat16) for p in split(a, parts)]
    pb = [p.to(torch.bfloat16) for p in split(b, parts)]
    a_cat = torch.cat([pa[i] for i, _ in pairs], dim=1)  # (M, 9K)
    b_cat = torch.cat([pb[j] for _, j in pairs], dim=0)  # (9K, N)
    if a.is_cuda:
        out.copy_(torch.mm(a_cat, b_cat, out_dtype=torch.float32))
    else:  # no bf16->fp32 mm on the CPU: exact bf16 products, fp32 sums
        torch.mm(a_cat.float(), b_cat.float(), out=out)
