"""Import pytest-benchmark's `--benchmark-json` files as schema-1 documents (times in ms, stats kept).

Mapping: technique = the benchmark's group (or its test module), impl = the test function's name,
case = its parameter id (or "default"), metric latency_ms = the median round time. Every original
statistic is kept, in seconds, under stats["pytest_benchmark"]; machine_info and commit_info are kept
in the run's env and config.
"""
from __future__ import annotations

import hashlib
import json
import re

from suite.record import result_row

_SUMMARY = {"min": "min", "max": "max", "mean": "mean", "stddev": "stdev", "median": "median",
            "q1": "q1", "q3": "q3", "iqr": "iqr"}


def is_pytest_benchmark(doc) -> bool:
    """True for a pytest-benchmark JSON document (machine_info + benchmarks list)."""
    return isinstance(doc, dict) and "benchmarks" in doc and "machine_info" in doc and "schema" not in doc


def _split(bench: dict) -> tuple[str, str, str]:
    fullname = bench.get("fullname") or bench["name"]
    module = fullname.split("::", 1)[0]
    module = re.sub(r"\.py$", "", module).replace("/", ".")
    technique = bench.get("group") or module
    name = bench["name"]
    impl = name.split("[", 1)[0]
    case = bench.get("param") or (name[len(impl) + 1:-1] if "[" in name else "default")
    return technique[:128], impl[:128], str(case)[:256]


def _stats(bench: dict) -> tuple[dict, list[float]]:
    st = bench["stats"]
    opts = bench.get("options") or {}
    samples = [x * 1e3 for x in st.get("data") or []]
    stats = {ours: st[theirs] * 1e3 for theirs, ours in _SUMMARY.items() if st.get(theirs) is not None}
    stats["n"] = st.get("rounds")
    stats["rel_spread"] = (st["stddev"] / st["mean"]) if st.get("mean") else 0.0
    timer = str(opts.get("timer") or "timer").split(".")[-1].replace("<", "").replace(">", "")
    stats["protocol"] = f"pytest-benchmark/{timer}"[:64]
    stats["iterations"] = st.get("iterations")
    stats["pytest_benchmark"] = {"stats": {k: v for k, v in st.items() if k != "data"}, "options": opts,
                                 "fullname": bench.get("fullname"), "group": bench.get("group"),
                                 "extra_info": bench.get("extra_info") or {}}
    return stats, samples


def _known(v):
    """pytest-benchmark writes 'unknown' / '(unknown)' when git had no answer."""
    return None if v in (None, "unknown", "(unknown)") else str(v)[:64]


def to_document(raw: dict, name: str = "pytest-benchmark") -> dict:
    """A schema-1 document for a pytest-benchmark JSON document; the run id is its content hash."""
    mi = raw.get("machine_info") or {}
    ci = raw.get("commit_info") or {}
    cpu = mi.get("cpu") or {}
    digest = hashlib.sha256(json.dumps(raw, sort_keys=True).encode()).hexdigest()
    env = {"device": "cpu", "gpu_name": None, "compute_capability": None, "sm_count": None, "driver": None,
           "cuda": None, "torch": None, "triton": None, "python": mi.get("python_version"),
           "cpu": cpu.get("brand_raw") or mi.get("processor") or mi.get("machine"),
           "hostname": mi.get("node"), "os": f"{mi.get('system')} {mi.get('release')}".strip(),
           "machine_info": mi}
    written = raw.get("datetime") or ci.get("time")  # a benchmark file is written whole, at the session's end
    run = {"id": f"pytest-benchmark-{digest[:40]}", "started_at": written,
           "finished_at": written, "tier": "pytest-benchmark", "reason": "import",
           "git": {"commit": _known(ci.get("id")), "branch": _known(ci.get("branch")), "dirty": ci.get("dirty")},
           "env": env, "config": {"commit_info": ci, "pytest_benchmark_version": raw.get("version"),
                                  "imported_from": str(name)}}
    rows = []
    for b in raw["benchmarks"]:
        technique, impl, case = _split(b)
        stats, samples = _stats(b)
        ok = stats.get("median") is not None
        rows.append(result_row(technique, impl, case, "latency_ms", "ms", "lower", value=stats.get("median"),
                               samples=samples, stats=stats, params=b.get("params"),
                               status="ok" if ok else "error", error=None if ok else "no median in the file"))
    return {"schema": 1, "run": run, "results": rows}
