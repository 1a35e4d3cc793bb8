"""3-D Morton codes by five shift-mask steps equal the bit-by-bit definition at every width, and the ZETA
selector encodes all its shifted curves at once: at the H200 nightly of 08e103a it took 16-17 ms at every
context length (4K to 128K), about 1,570 dispatched ops per call, nearly all of them per-bit steps."""
import pytest
import torch

from suite.lib.morton import morton_encode3
from suite.lib.selectors import _shifted_codes, zeta_morton


def bitwise_encode3(x: torch.Tensor, bits: int) -> torch.Tensor:
    """The definition: bit i of axis a at bit 3i + a."""
    cells = (x * (1 << bits)).long().clamp(0, (1 << bits) - 1)
    out = torch.zeros(cells.shape[:-1], dtype=torch.int64)
    for i in range(bits):
        for a in range(3):
            out |= ((cells[..., a] >> i) & 1) << (3 * i + a)
    return out


@pytest.mark.parametrize("bits", [1, 2, 7, 10, 11, 16, 20, 21])
def test_encode3_is_the_bitwise_interleave(bits):
    g = torch.Generator().manual_seed(bits)
    x = torch.cat([torch.rand(4000, 3, generator=g, dtype=torch.float64),
                   torch.tensor([[0.0, 0.0, 0.0], [1 - 2 ** -40] * 3, [0.5, 0.25, 0.125], [1 - 2 ** -40, 0.0, 0.5]],
                                dtype=torch.float64)])
    assert torch.equal(morton_encode3(x, bits), bitwise_encode3(x, bits))
    assert morton_encode3(x[-3:-2], bits).item() == (1 << 3 * bits) - 1  # every cell bit set


def test_encode3_refuses_widths_past_63_bits():
    with pytest.raises(ValueError, match="1-21 bits"):
        morton_encode3(torch.rand(2, 3), 22)


def test_shifted_curves_are_the_per_curve_codes():
    u = torch.rand(2, 3, 500, 3, generator=torch.Generator().manual_seed(5))
    per_curve = torch.stack([morton_encode3((u + j / 5) / 2, 11) for j in range(5)])
    assert torch.equal(_shifted_codes(u, 10, 5), per_curve)


def test_zeta_selector_dispatches_a_bounded_number_of_ops():
    """Each dispatched op is a kernel launch on the GPU: the selector's cost must not grow with bits x curves."""
    from torch.profiler import ProfilerActivity, profile

    g = torch.Generator().manual_seed(0)
    q = torch.randn(1, 8, 512, 64, generator=g).bfloat16()
    k = torch.randn(1, 2, 2048, 64, generator=g).bfloat16()
    zeta_morton(q, k, 64, 0.1)
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        zeta_morton(q, k, 64, 0.1)
    ops = [e for e in prof.events() if e.name.startswith("aten::") and e.cpu_parent is None]
    assert len(ops) <= 250, len(ops)
