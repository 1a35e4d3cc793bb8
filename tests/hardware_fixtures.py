"""A second GPU's nightly for the Hardware tests: a committed H200 nightly relabelled as an H100 with its
copy ceiling halved and the H100's observed zeta_morton loss (0 of 33 needle cells at 64K) written in."""
from __future__ import annotations

import copy
import gzip
import json

from tests.conftest import ROOT

H200_NIGHTLY = ROOT / "results" / "h200" / "nightly_v4_cef2892.json.gz"
H100 = "NVIDIA H100 80GB HBM3"


def h200_doc() -> dict:
    with gzip.open(H200_NIGHTLY, "rt") as f:
        return json.load(f)


def as_h100(doc: dict, lose_zeta: bool = True, copy_scale: float = 0.5) -> dict:
    """The same run on a made-up H100: another run id and GPU, copy ceiling x copy_scale (header and rows),
    and (lose_zeta) every 64K zeta_morton needle cell missed."""
    d = copy.deepcopy(doc)
    d["run"]["id"] += "-h100"
    d["run"]["env"]["gpu_name"] = H100
    d["run"]["ceilings"]["copy_gbps"]["value"] *= copy_scale
    for r in d["results"]:
        c = (r.get("stats") or {}).get("ceiling")
        if c and c["key"] == "copy_gbps":
            c["value"] *= copy_scale
            c["share"] /= copy_scale
        if (lose_zeta and r["impl"] == "triton_zeta_morton" and r["case"].startswith("ctx64k_depth")
                and r["metric"] in ("recall", "retrieval")):
            r["value"], r["stats"] = 0.0, {**r["stats"], "k": 0}
    return d
