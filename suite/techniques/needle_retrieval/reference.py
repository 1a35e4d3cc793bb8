"""Oracle and inputs for the needle pipelines: dense attention of the question block."""
from __future__ import annotations

import torch

from suite.techniques.needle_retrieval.common import dense_question, haystack


def make_inputs(params: dict, seed: int, device: str) -> dict:
    """The anchor cell: haystack at params["ctx"], needle inside the question block (always
    selected, so every valid pipeline must match dense) at params["strength"]; q, k, v tensors
    plus block, density."""
    h = haystack(params["ctx"], params.get("depth"), params["strength"], params["block"], params["hq"],
                 params["hkv"], params["d"], seed, device)
    return {"q": h["q"], "k": h["k"], "v": h["v"], "block": params["block"],
            "density": params["density"]}


def empty_output(params: dict, device: str) -> torch.Tensor:
    """Uninitialised (1,Hq,block,D) bf16."""
    return torch.empty(1, params["hq"], params["block"], params["d"], device=device,
                       dtype=torch.bfloat16)


def reference(q, k, v, block: int, density: float) -> torch.Tensor:
    """fp64 dense attention of the question block (1,Hq,block,D)."""
    return dense_question(q, k, v, "fp64")


def lowp_bf16(q, k, v, block: int, density: float) -> torch.Tensor:
    """The same with bf16-rounded probabilities and bf16 output."""
    return dense_question(q, k, v, "bf16")
