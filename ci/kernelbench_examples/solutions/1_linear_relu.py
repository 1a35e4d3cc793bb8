"""Solution: one fused addmm, then an in-place clamp (same parameters as the problem's nn.Linear)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)  # same init order: same weights under one seed

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.addmm(self.linear.bias, x, self.linear.weight.t()).clamp_min_(0.0)
