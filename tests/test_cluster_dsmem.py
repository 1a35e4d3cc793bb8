"""Cluster GEMM: the Triton kernel under the interpreter (any num_ctas computes the same product), the
PTX census of cluster instructions, and the cluster claims' honest status."""
import os

os.environ.setdefault("TRITON_INTERPRET", "1")

import pytest  # noqa: E402
import torch  # noqa: E402

from runners.correctness import rel_err  # noqa: E402
from suite.claims.registry import get as claim  # noqa: E402
from suite.techniques.cluster_dsmem.probe import ptx_counts  # noqa: E402
from suite.techniques.cluster_dsmem.reference import lowp, make_inputs, reference  # noqa: E402
from suite.techniques.cluster_dsmem.triton_cluster_gemm import run  # noqa: E402


@pytest.mark.parametrize("num_ctas", [1, 2])
def test_kernel_matches_the_bf16_gemm(num_ctas):
    inp = make_inputs({"m": 70, "n": 40, "k": 96}, 5, "cpu")
    out = torch.full((70, 40), float("nan"), dtype=torch.bfloat16)
    run(out, **inp, num_ctas=num_ctas)
    assert torch.isfinite(out).all()
    assert rel_err(out, reference(**inp)) <= 1.5 * rel_err(lowp(**inp), reference(**inp))


def test_ptx_census_counts_each_cluster_feature():
    ptx = """mov.u32 %r1, %cluster_ctarank;
    mapa.shared::cluster.u32 %r2, %r3, %r1;
    ld.shared::cluster.u32 %r4, [%r2];
    cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster [%r5], [%rd1, {%r6, %r7}], [%r8], %rs1;
    barrier.cluster.arrive; barrier.cluster.wait;
    ld.shared.u32 %r9, [%r10];"""
    assert ptx_counts(ptx) == {"shared_cluster": 3, "mapa": 1, "multicast": 1, "barrier_cluster": 2,
                               "cluster_ctarank": 1}


def test_dsmem_bandwidth_claim_is_pending_with_its_reason():
    c = claim("dsmem_l2_combined_bandwidth")
    assert c.check is None and "not measurable with this stack" in c.note
    assert claim("b200_227kb_smem_per_block").analog.metric == "smem_block_optin_kb"
