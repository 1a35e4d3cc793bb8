"""What the cluster launch compiled to, and the GPU's shared memory: per Triton variant the count of
cluster instructions in its PTX (distributed shared memory access, multicast, cluster barriers) and
its shared memory per CTA; beside the no-cluster baseline, the device's shared memory per SM and the
most one block may opt in to, from torch.cuda.get_device_properties."""
from __future__ import annotations

import re

import torch

from suite.techniques.cluster_dsmem import triton_cluster_gemm
from suite.techniques.cluster_dsmem.reference import empty_output, make_inputs

# PTX spellings of cluster features: an access to another CTA's shared memory (or a TMA write into
# several CTAs' at once) names the shared::cluster state space; mapa maps a local shared address to
# a peer CTA's; multicast::cluster is a TMA load delivered to several CTAs; barrier.cluster syncs them.
PATTERNS = {"shared_cluster": r"shared::cluster", "mapa": r"\bmapa\b", "multicast": r"multicast::cluster",
            "barrier_cluster": r"barrier\.cluster", "cluster_ctarank": r"%cluster_ctarank"}


def ptx_counts(ptx: str) -> dict[str, int]:
    """Occurrences of each cluster feature in a PTX text."""
    return {name: len(re.findall(rx, ptx)) for name, rx in PATTERNS.items()}


def _kb(props, attr: str) -> float | None:
    v = getattr(props, attr, None)
    return v / 1024 if v else None


def probe(fn, case, device: str, seed: int) -> list[dict]:
    """Rows: cluster_ops_ptx and smem_per_cta_kb (Triton variants, CUDA only); smem_per_sm_kb and
    smem_block_optin_kb (the baseline, CUDA only)."""
    if device != "cuda" or getattr(fn, "func", None) is not triton_cluster_gemm.run:
        return []
    ctas = fn.keywords["num_ctas"]
    inputs = make_inputs(case.params, seed, device)
    fn(empty_output(case.params, device), **inputs)
    kernel = triton_cluster_gemm.COMPILED[ctas]
    counts = ptx_counts(kernel.asm["ptx"])
    rows = [{"metric": "cluster_ops_ptx", "unit": "1", "direction": "higher",
             "value": float(sum(counts.values())), "stats": {"counts": counts, "num_ctas": ctas}},
            {"metric": "smem_per_cta_kb", "unit": "KB", "direction": "lower",
             "value": getattr(kernel.metadata, "shared", 0) / 1024, "stats": {"num_ctas": ctas}}]
    if ctas == 1:
        props = torch.cuda.get_device_properties(0)
        for metric, attr in (("smem_per_sm_kb", "shared_memory_per_multiprocessor"),
                             ("smem_block_optin_kb", "shared_memory_per_block_optin")):
            value = _kb(props, attr)
            if value is not None:
                rows.append({"metric": metric, "unit": "KB", "direction": "higher", "value": value,
                             "stats": {"source": f"torch.cuda.get_device_properties(0).{attr}",
                                       "shared_memory_per_block_kb": _kb(props, "shared_memory_per_block")}})
    return rows
