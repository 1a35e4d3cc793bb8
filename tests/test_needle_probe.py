"""The needle probe: obvious needles must be found, and mean pooling's known failure is visible."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402

from suite.techniques.needle_retrieval.probe import DEPTHS, cell_id, run_cell  # noqa: E402

P = {"ctx": 2048, "block": 64, "density": 0.1, "hq": 2, "hkv": 1, "d": 128}


def test_cell_ids_are_stable():
    assert cell_id(16384, 0.5, 4) == "ctx16k_depth50_s4"
    assert cell_id(131072, 1.0, -2) == "ctx128k_depth100_sm2"
    assert len(DEPTHS) == 11 and DEPTHS[0] == 0.0 and DEPTHS[-1] == 1.0


@pytest.mark.parametrize("name", ["exact_topk", "msa_index", "dhsa_chunks", "zeta_morton"])
def test_selector_finds_an_obvious_needle_at_every_depth(name):
    for depth in DEPTHS:
        cell = run_cell(name, P, depth, 8.0, seed=11, device="cpu")
        assert cell["recall"] == 1.0, f"{name} missed the needle at depth {depth}"
        assert cell["retrieval"] == 1.0 and cell["fidelity_cos"] > 0.99


def test_missed_needle_shows_in_fidelity_and_retrieval():
    """Mean pooling dilutes a one-token signal by the block size: at strength 0 it misses some
    depths, and where it misses, the output no longer carries the needle."""
    cells = [run_cell("mean_pool", P, d, 0.0, seed=11, device="cpu") for d in DEPTHS]
    exact = [run_cell("exact_topk", P, d, 0.0, seed=11, device="cpu") for d in DEPTHS]
    assert sum(c["recall"] for c in cells) < sum(c["recall"] for c in exact) == len(DEPTHS)
    for c in cells:
        if c["recall"] == 0.0:
            assert c["retrieval"] == 0.0 and c["fidelity_cos"] < 0.9
