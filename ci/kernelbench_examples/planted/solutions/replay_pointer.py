"""Planted: replays its first output for the same pointers and tensor versions."""
import torch
import torch.nn as nn

_seen = {}


class ModelNew(nn.Module):
    def forward(self, a, b):
        key = (a.data_ptr(), b.data_ptr(), a._version, b._version)
        if key not in _seen:
            _seen[key] = torch.matmul(a, b)
        return _seen[key].clone()
