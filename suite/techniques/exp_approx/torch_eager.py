"""torch.exp2 / torch.softmax in fp32 eager ops (one kernel per term): the framework baseline."""
import torch


def run(out: torch.Tensor, x: torch.Tensor, kind: str, terms: int, delta: float) -> None:
    """out = the kernel `kind` on x ((n,) fp32 or (rows, cols) bf16) with torch's exp2."""
    if kind == "softmax":
        out.copy_(torch.softmax(x.float(), dim=-1))
        return
    if kind == "chain":
        out.copy_(x)
        for _ in range(terms):
            torch.exp2(out, out=out).sub_(delta)
        return
    out.zero_()
    xs = x.clone()
    for _ in range(terms):
        out.add_(torch.exp2(xs))
        xs.sub_(delta)
