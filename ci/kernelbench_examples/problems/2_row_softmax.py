"""KernelBench-format problem: softmax over the last dimension of a (128, 512) fp32 tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(128, 512) * 4]


def get_init_inputs():
    return []
