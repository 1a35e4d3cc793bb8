"""One job: check an implementation on one case, then time it, and return its result rows."""
from __future__ import annotations

import json
import sys
import time
import traceback
import zlib

from runners.code_hash import impl_hash
from runners.correctness import ReferenceCache, check
from runners.env import sm_clock_mhz
from runners.guard import BoundaryViolation, verify
from runners.guard_audit import Audit
from runners.guard_floor import floor_violation, upper_copy_gbps
from runners.placements import operand_bytes, placed_copies
from runners.resultfile import result_row
from runners.timing import Protocol, measure
from suite.registry import get
from suite.spec import ERROR_METRICS, Metric, implementation, resolve


def technique_of(job: dict):
    """The job's technique: from the registry by name, or built by the job's `source`
    ({"target": "module:function", "args": {...}}, e.g. runners.kernelbench:technique)."""
    source = job.get("source")
    if not source:
        return get(job["technique"])
    key = json.dumps(source, sort_keys=True)
    if key not in _built:
        _built[key] = resolve(source["target"])(**source["args"])
    return _built[key]


_built: dict[str, object] = {}

CEILING_SHARE = Metric("ceiling_share", "1", "higher")  # bytes / time over the ceiling measured in the job


def _autotuners(tech_name: str) -> list[tuple[str, object]]:
    prefix = f"suite.techniques.{tech_name}"
    found = []
    for mname, mod in list(sys.modules.items()):
        if not mname.startswith(prefix) or mod is None:
            continue
        for attr, obj in vars(mod).items():
            if type(obj).__name__ == "Autotuner" and hasattr(obj, "configs"):
                found.append((f"{mname.rsplit('.', 1)[-1]}.{attr}", obj))
    return found


def _chosen_configs(tuners) -> dict[str, str]:
    return {name: str(t.best_config) for name, t in tuners if getattr(t, "best_config", None) is not None}


def base_row(tech, impl, case, metric, ihash: str | None) -> dict:
    """A row of this job for `metric`, with no value yet."""
    return result_row(tech.name, impl.name, case.id, metric.name, metric.unit, metric.direction,
                      params=case.params, impl_version=impl.version, impl_hash=ihash)


def rows_with_status(tech, impl, case, ihash, status: str, error: str | None) -> list[dict]:
    """One row per metric of the technique, all with the same status and no value."""
    rows = []
    for m in tech.metrics:
        r = base_row(tech, impl, case, m, ihash)
        r.update(status=status, error=error)
        rows.append(r)
    return rows


def timing_seed(technique: str, case_id: str) -> int:
    """Seed of the inputs a case is timed on: fixed per technique and case, the same in every run, so a
    kernel whose time depends on the draw (a sparse pattern's longest row of tiles, a selector's picks) is
    timed on one instance night after night; correctness keeps fresh seeds in every run. (With a fresh draw
    per run, an M = 16 GEMM over 10 % of 64 x 64 tiles timed a longest row of 10-18 tiles, seed to seed.)"""
    return zlib.crc32(f"{technique}/{case_id}".encode()) % (2**31 - 20_000) + 1


def run_job(tech, impl, case, device: str, seed0: int, proto: Protocol, cache: ReferenceCache) -> list[dict]:
    """Correctness over case.seeds fresh seeds, then timing; rows for every metric."""
    ihash = impl_hash(tech, impl)
    fn = implementation(impl)
    seeds = [seed0 + i for i in range(case.seeds)]
    tuners = _autotuners(tech.name)
    for _, t in tuners:
        t.best_config = None
    t_check = time.perf_counter()
    try:
        verdict = check(tech, impl, case, fn, device, seeds, cache)
        verify()  # the code under test was imported and ran: is the harness still the harness?
    except BoundaryViolation as exc:
        return rows_with_status(tech, impl, case, ihash, "failed_correctness", refusal(exc))
    err_metric = next((m for m in tech.metrics if m.name in ERROR_METRICS), None)
    rows: list[dict] = []
    # check_s: the correctness check's wall time, first-call compiles and autotuning and the oracle
    # (once per case and seed in a worker) included; with wall_s (timing) and job_s, where a budget goes
    common_stats = {"seeds": seeds, "tolerance": verdict.tolerance,
                    "lowp_errors": verdict.lowp_errors, "accuracy_class": impl.accuracy,
                    "check_s": round(time.perf_counter() - t_check, 3)}
    if impl.expect_failure:
        common_stats["expected_failure"] = impl.expect_failure
    if err_metric is not None:
        r = base_row(tech, impl, case, err_metric, ihash)
        r.update(value=max(verdict.errors) if verdict.errors else None, samples=verdict.errors,
                 stats=dict(common_stats), status="ok" if verdict.ok else "failed_correctness",
                 error=verdict.message)
        rows.append(r)
    timed = [m for m in tech.metrics if m.name not in ERROR_METRICS]
    if not verdict.ok:
        for m in timed:
            r = base_row(tech, impl, case, m, ihash)
            r.update(status="failed_correctness", error=verdict.message, stats=dict(common_stats))
            rows.append(r)
        return rows
    # Timing inputs: one instance per technique and case in every run (timing_seed), not the check's.
    t_seed = timing_seed(tech.name, case.id)
    inputs = resolve(tech.make_inputs)(case.params, t_seed, device)
    out = resolve(tech.empty_output)(case.params, device)
    copies = placed_copies(inputs, out, proto.placements_for(device, operand_bytes((inputs, out))))
    calls = [lambda i=i, o=o: fn(o, **i) for i, o, _ in copies]
    clock_before = sm_clock_mhz() if device == "cuda" else None
    t0 = time.perf_counter()
    audit = Audit(tech, impl, case, device, seed0, cache, copies[0][0], copies[0][1])
    try:
        samples, stats = measure(calls, device, proto, graph=impl.graph, audit=audit)
        floor = floor_violation(tech, case, stats["median"], device, proto)
        if floor:
            raise BoundaryViolation(floor)
    except BoundaryViolation as exc:  # the check's error row stays (its value), refused like the rest
        for r in rows:
            r.update(status="failed_correctness", error=refusal(exc))
        return rows + [dict(r, stats=dict(common_stats)) for r in rows_with_status(
            tech, impl, case, ihash, "failed_correctness", refusal(exc)) if r["metric"] not in ERROR_METRICS]
    stats.update(sm_clock_before_mhz=clock_before,
                 sm_clock_after_mhz=sm_clock_mhz() if device == "cuda" else None,
                 wall_s=round(time.perf_counter() - t0, 3),
                 # Scan again: a kernel module first imported by this job was not in `tuners`.
                 autotune=_chosen_configs(_autotuners(tech.name)), timing_seed=t_seed,
                 **common_stats)
    median_ms = stats["median"]
    for m in timed:
        r = base_row(tech, impl, case, m, ihash)
        r["stats"] = stats
        if m.name == "latency_ms":
            r.update(value=median_ms, samples=samples)
        else:  # a rate: work per call / time (Technique checks that every rate has its work)
            w = tech.flops(case.params) * 1e-12 if m.name == "tflops" else tech.work[m.name](case.params)
            r.update(value=w / (median_ms * 1e-3), samples=[w / (s * 1e-3) for s in samples])
        rows.append(r)
    if tech.ceiling:
        rows.append(_ceiling_row(tech, impl, case, ihash, samples, stats, device))
    if tech.probe:
        rows.extend(_probe_rows(tech, impl, case, fn, device, seed0, ihash))
    return rows


def refusal(exc: BaseException) -> str:
    """The one-line message of a row the measuring boundary refused."""
    return f"refused by the measuring boundary: {exc}"


def _ceiling_row(tech, impl, case, ihash, samples, stats, device) -> dict:
    """The call's bandwidth (tech.bytes per median time) as a share of the ceiling measured now; stats
    also hold the share of the copy ceiling's upper bound (the datasheet figure where known), and
    `impossible` when the rate is above that bound."""
    ceiling = resolve(tech.ceiling)(device)  # GB/s
    gb = tech.bytes(case.params) / 1e9
    gbps = gb / (stats["median"] * 1e-3)
    upper, source = upper_copy_gbps(ceiling, device)
    extra = {"ceiling_gbps": ceiling, "ceiling_source": tech.ceiling, "gbps": gbps,
             "ceiling_upper_gbps": upper, "ceiling_upper_source": source, "share_of_upper": gbps / upper}
    if gbps > upper:
        extra["impossible"] = f"{gbps:.4g} GB/s is {gbps / upper:.0%} of the copy ceiling's upper bound ({source})"
    r = base_row(tech, impl, case, CEILING_SHARE, ihash)
    r.update(value=gbps / ceiling, samples=[gb / (s * 1e-3) / ceiling for s in samples], stats={**stats, **extra})
    return r


def _probe_rows(tech, impl, case, fn, device, seed0, ihash) -> list[dict]:
    """Extra metrics from the technique's probe: dicts with metric, unit, direction, value, ..."""
    rows = []
    for extra in resolve(tech.probe)(fn=fn, case=case, device=device, seed=seed0):
        m = Metric(extra["metric"], extra["unit"], extra["direction"])
        r = base_row(tech, impl, case, m, ihash)
        r["params"].update(extra.get("params", {}))
        # A probe's failed_correctness is a measurement (e.g. a point outside a scheme's valid
        # exponent range), not a broken implementation: stats["probe"] says so.
        r.update(value=extra["value"], samples=extra.get("samples", []),
                 stats={**extra.get("stats", {}), "probe": True},
                 status=extra.get("status", "ok"), error=extra.get("error"))
        if extra.get("case"):
            r["case"] = extra["case"]
        rows.append(r)
    return rows


def describe_exception(exc: BaseException) -> str:
    """The exception's type and message plus the last frames of its traceback."""
    tb = traceback.format_exception(type(exc), exc, exc.__traceback__)
    return f"{type(exc).__name__}: {exc}\n" + "".join(tb[-3:])[-1500:]
