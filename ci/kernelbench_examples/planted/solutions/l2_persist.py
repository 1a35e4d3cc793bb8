"""Planted (GPU): reserves persisting L2 for its operands (an access-policy window the flush cannot evict)."""
import ctypes

import torch
import torch.nn as nn


def _persist() -> None:
    try:
        paths = sorted({line.split()[-1] for line in open("/proc/self/maps") if "libcudart.so" in line})
        lib = ctypes.CDLL(paths[0])
        lib.cudaDeviceSetLimit(0x06, ctypes.c_size_t(30 << 20))  # cudaLimitPersistingL2CacheSize
    except (OSError, IndexError):
        pass


class ModelNew(nn.Module):
    def forward(self, a, b):
        if a.is_cuda:
            _persist()
        return torch.matmul(a, b)
