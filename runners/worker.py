"""Worker process: reads jobs as JSON lines on stdin, answers one JSON line per job on stdout.

A crash, hang or CUDA error kills only this process; the parent records `error` and starts another.
"""
from __future__ import annotations

import json
import os
import sys


def _device(requested: str) -> str:
    import torch

    if requested == "auto":
        return "cuda" if torch.cuda.is_available() else "cpu"
    return requested


def main() -> None:
    # Keep stdout for the protocol only; anything the kernels print goes to stderr.
    proto_out = os.fdopen(os.dup(sys.stdout.fileno()), "w", buffering=1)
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    # Imported after the redirect: whatever they (and the kernels they load) print goes to stderr.
    # The measuring boundary's snapshot first, before any code under test is imported (runners.guard).
    from runners import guard

    guard.arm()
    from runners.code_hash import impl_hash
    from runners.correctness import ReferenceCache
    from runners.job import describe_exception, rows_with_status, run_job, technique_of
    from runners.timing import Protocol

    cache = ReferenceCache()
    for line in sys.stdin:
        job = json.loads(line)
        tech = technique_of(job)
        impl, case = tech.impl(job["impl"]), tech.case(job["case"])
        fatal = False
        try:
            rows = run_job(tech, impl, case, _device(job["device"]), job["seed"],
                           Protocol(**job.get("protocol", {})), cache)
        except Exception as exc:  # recorded as `error`; the run goes on
            msg = describe_exception(exc)
            try:
                ih = impl_hash(tech, impl)
            except Exception:
                ih = None
            rows = rows_with_status(tech, impl, case, ih, "error", msg)
            # A CUDA error poisons the context: leave, so the next job gets a fresh process.
            fatal = "CUDA" in msg or "AcceleratorError" in msg
        proto_out.write(json.dumps({"job": job["id"], "rows": rows, "fatal": fatal}) + "\n")
        if fatal:
            sys.exit(3)


if __name__ == "__main__":
    main()
