"""Operand copies for timing a small call on several placements (runners.placements)."""
import torch

from runners.placements import operand_bytes, placed_copies


def test_operand_bytes_counts_every_tensor_once():
    ins = {"a": torch.zeros(256, 256, dtype=torch.float64), "b": torch.zeros(3, dtype=torch.bfloat16),
           "k": 7, "pair": (torch.zeros(4, dtype=torch.int8), [torch.zeros(2)])}
    assert operand_bytes((ins, torch.zeros(10))) == 256 * 256 * 8 + 3 * 2 + 4 + 2 * 4 + 10 * 4


def test_copies_hold_equal_values_in_separate_memory():
    ins = {"a": torch.randn(64, 64), "b": torch.randn(64, 64), "scale": 0.5}
    out = torch.empty(64, 64)
    copies = placed_copies(ins, out, 4)
    assert len(copies) == 4 and copies[0][0] is ins and copies[0][1] is out
    ptrs = {c[0]["a"].data_ptr() for c in copies} | {c[1].data_ptr() for c in copies}
    assert len(ptrs) == 8
    for i, o, pad in copies[1:]:
        assert torch.equal(i["a"], ins["a"]) and torch.equal(i["b"], ins["b"]) and i["scale"] == 0.5
        assert pad.numel() > 2 << 20 and o.shape == out.shape
    copies[1][0]["a"].add_(1)  # writing one copy leaves the original alone
    assert not torch.equal(copies[1][0]["a"], ins["a"])


def test_one_placement_is_the_operands_themselves():
    ins = {"a": torch.ones(3)}
    assert placed_copies(ins, None, 1) == [(ins, None, None)]
