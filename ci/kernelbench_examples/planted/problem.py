"""KernelBench-format problem for the planted solutions: C = A @ B, fp32, N x N (the study sets N)."""
import torch
import torch.nn as nn

N = 512


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.matmul(a, b)


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
