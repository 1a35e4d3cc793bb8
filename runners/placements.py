"""Copies of a call's operands at different addresses, for timing a small call on several placements."""
from __future__ import annotations


def operand_bytes(obj) -> int:
    """Bytes of every tensor in obj (a tensor, or dicts, lists and tuples of them)."""
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.numel() * obj.element_size()
    if isinstance(obj, dict):
        return sum(operand_bytes(v) for v in obj.values())
    if isinstance(obj, (list, tuple)):
        return sum(operand_bytes(v) for v in obj)
    return 0


def _copy(obj):
    import torch

    if isinstance(obj, torch.Tensor):
        return obj.clone()
    if isinstance(obj, dict):
        return {k: _copy(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_copy(v) for v in obj)
    return obj


def placed_copies(inputs: dict, out, n: int) -> list[tuple]:
    """[(inputs, out, pad)] * n: the first is the given operands, the others copies at other addresses.

    Each copy is allocated after a pad of a different size (kept alive with it), so the copies do not
    sit at one fixed stride from each other."""
    import torch

    copies = [(inputs, out, None)]
    device = next((t.device for t in inputs.values() if isinstance(t, torch.Tensor)), "cpu")
    for i in range(1, n):
        pad = torch.empty((2 << 20) * i + 4096 * 37 * i, dtype=torch.int8, device=device)
        copies.append((_copy(inputs), _copy(out), pad))
    return copies
