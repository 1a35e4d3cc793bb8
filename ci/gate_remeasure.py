"""Re-measure and re-check candidate series on this host (the gate runs beside a runner)."""
from __future__ import annotations

import random
from dataclasses import dataclass, field

from ci.gate_refs import RunData
from runners.env import HARDWARE_KEYS, SOFTWARE_KEYS, fingerprint, key_of
from runners.run import RunOptions, execute
from runners.timing import Protocol
from suite.registry import get


@dataclass
class Remeasurement:
    """Fresh rows by (technique, impl, case, metric), and why some subjects could not be re-run."""

    rows: dict[tuple[str, str, str, str], dict] = field(default_factory=dict)
    refused: dict[tuple[str, str, str], str] = field(default_factory=dict)
    host_problem: str | None = None
    run_id: str | None = None


def host_matches(cand: RunData) -> str | None:
    """None when this host has the candidate's hardware and software keys, else why not."""
    device = (cand.run.get("env") or {}).get("device") or "cpu"
    theirs = (((cand.run.get("config") or {}).get("protocol") or {}).get("cuda_version", 1))
    ours = Protocol().cuda_version
    if device != "cpu" and theirs != ours:  # its samples would be named for a protocol this code does not run
        return f"the candidate was timed under CUDA timing protocol v{theirs}, this checkout times v{ours}"
    env = fingerprint(device)
    if env.get("device") != device:
        return f"this host has no {device} device"
    if key_of(env, HARDWARE_KEYS) != cand.hardware_key:
        return "this host's hardware differs from the candidate's"
    if key_of(env, SOFTWARE_KEYS) != cand.software_key:
        return "this host's software (driver/CUDA/torch/triton/python) differs from the candidate's"
    return None


def _tier_of(technique: str, case_id: str, preferred: str) -> str | None:
    tech = get(technique)
    case = next((c for c in tech.cases if c.id == case_id), None)
    if case is None:
        return None
    return preferred if preferred in case.tiers else case.tiers[0]


def remeasure(cand: RunData, subjects: set[tuple[str, str, str]], timeout_s: float = 600.0) -> Remeasurement:
    """Run correctness (fresh seed) and timing again for (technique, impl, case) subjects."""
    out = Remeasurement()
    out.host_problem = host_matches(cand)
    if out.host_problem:
        return out
    cand_hash = {(r["technique"], r["impl"]): r.get("impl_hash") for r in cand.rows}
    config = cand.run.get("config") or {}
    proto_fields = config.get("protocol") or {}
    try:
        # a candidate timed before placements existed was timed on one: re-time it the same way
        proto = Protocol(**{"placements": 1, **proto_fields})
    except TypeError:
        proto = Protocol()
    used_seed = config.get("seed")
    device = (cand.run.get("env") or {}).get("device") or "cpu"
    groups: dict[tuple[str, str, str], list[str]] = {}
    for technique, impl, case in sorted(subjects):
        try:
            tier = _tier_of(technique, case, cand.run.get("tier", "smoke"))
        except KeyError:
            tier = None
        if tier is None:
            out.refused[(technique, impl, case)] = "not a technique/case of this checkout"
            continue
        groups.setdefault((tier, technique, case), []).append(impl)
    for (tier, technique, case), impls in groups.items():
        seed = random.randrange(1, 2**31 - 20_000)
        while used_seed is not None and abs(seed - used_seed) < 100:
            seed = random.randrange(1, 2**31 - 20_000)
        opts = RunOptions(tier=tier, techniques=[technique], impls=impls, cases=[case], device=device,
                          reason="gate-remeasure", timeout_s=timeout_s, seed=seed, protocol=proto)
        rf = execute(opts, None)
        out.run_id = rf.doc["run"]["id"]
        for r in rf.results:
            want = cand_hash.get((r["technique"], r["impl"]))
            if want and r.get("impl_hash") and r["impl_hash"] != want:
                out.refused[(r["technique"], r["impl"], r["case"])] = (
                    f"this checkout's source of {r['impl']} differs from the candidate's (hash "
                    f"{r['impl_hash']} vs {want})")
                continue
            out.rows[(r["technique"], r["impl"], r["case"], r["metric"])] = r
    return out
