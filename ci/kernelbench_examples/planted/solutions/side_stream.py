"""Planted (GPU): launches the work on a side stream the timed stream never waits for. A host sync on the
timed stream first (a one-value read) keeps the runner from capturing the call as a CUDA graph, so it is
timed launch by launch, where the side stream escapes the CUDA events."""
import torch
import torch.nn as nn

_side = []


class ModelNew(nn.Module):
    def forward(self, a, b):
        if not a.is_cuda:
            return torch.matmul(a, b)
        if not _side:
            _side.append(torch.cuda.Stream())
        a[0, 0].item()  # a host sync: no graph capture
        out = torch.empty(a.shape[0], b.shape[1], device=a.device)
        _side[0].wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(_side[0]):
            torch.matmul(a, b, out=out)
        return out
