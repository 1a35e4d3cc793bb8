"""Small valid result documents for ingest tests (the shape `kwatch run` writes)."""
from __future__ import annotations

import copy
import json
from pathlib import Path

ENV = {"device": "cpu", "gpu_name": None, "compute_capability": None, "sm_count": None, "driver": None,
       "cuda": None, "torch": "2.13.0", "triton": "3.6.0", "python": "3.12.3", "cpu": "test cpu"}


def row(impl: str, case: str, metric: str = "latency_ms", value: float = 1.5, samples=(1.4, 1.5, 1.6)) -> dict:
    unit = {"latency_ms": "ms", "rel_err": "1"}[metric]
    return {"technique": "gemm_fp32_emulation", "impl": impl, "impl_version": 1, "impl_hash": "0" * 16,
            "case": case, "params": {"m": 64}, "metric": metric, "unit": unit, "direction": "lower",
            "value": value, "samples": list(samples), "stats": {"protocol": "cpu-perfcounter/v1"},
            "status": "ok", "error": None}


def doc(run_id: str, impls=("cublas_fp32", "triton_bf16x9"), cases=("m64n64k64",)) -> dict:
    """A finished smoke run: latency and rel_err rows for each impl x case."""
    results = [row(i, c, m, v, s) for i in impls for c in cases
               for m, v, s in (("latency_ms", 1.5, (1.4, 1.5, 1.6)), ("rel_err", 1e-7, (1e-7,)))]
    return {"schema": 1, "run": {"id": run_id, "started_at": "2026-11-30T21:00:00+00:00",
                                 "finished_at": "2026-11-30T21:01:00+00:00", "tier": "smoke", "reason": "test",
                                 "git": {"commit": "abc1234", "branch": "main", "dirty": False},
                                 "env": dict(ENV), "config": {"seed": 1}},
            "results": results}


def write(d: dict, path: Path, text: str | None = None) -> Path:
    """d as JSON at path (json.dumps writes NaN/Infinity literally, as a careless writer would)."""
    path.write_text(text if text is not None else json.dumps(d))
    return path


def mutated(run_id: str, mutate) -> dict:
    d = copy.deepcopy(doc(run_id))
    mutate(d)
    return d


def loose_samples(doc: dict) -> dict:
    """The document as the writer before timer precision left it: timed samples as float32's full double."""
    from suite.sample_precision import as_float32

    rows = [{**r, "samples": [as_float32(s) if isinstance(s, float) else s for s in r["samples"]]}
            if (r.get("stats") or {}).get("protocol") else r for r in doc["results"]]
    return {**doc, "results": rows}
