"""What code under test gets: a minimal environment (no database URL, no tokens), namespaces of its
own, and a memory limit.

A job's process sees only the variables a kernel needs (PATH, locale, home and cache directories,
device selection, CUDA/Triton/PyTorch settings) and those an operator names in KWATCH_JOB_ENV, and
never one whose name says it holds a secret. Where the host allows unprivileged user namespaces, it
runs in a user, PID and mount namespace with a /proc of its own, locked by a second user namespace
(it cannot be unmounted to uncover the host's), so it sees no other process: not its parent, not the
shell or CI agent above it. Before starting it the parent hides its own secrets
(runners.hide_secrets). $KWATCH_NAMESPACES=0 turns the namespaces off.
Its resident memory is watched by the parent, which kills it above the limit.
"""
from __future__ import annotations

import os
import re
import shutil
import subprocess
import threading
import time
from functools import lru_cache
from pathlib import Path

from runners.hide_secrets import hide_own_secrets

KEEP = {"PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR", "TEMP", "TMP", "SHELL",
        "LD_LIBRARY_PATH", "LIBRARY_PATH", "CPATH", "CC", "CXX", "VIRTUAL_ENV", "PYTHONHASHSEED",
        "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS",
        "KWATCH_EXTRA_TECHNIQUES"}  # the worker's registry loads these techniques
KEEP_PREFIXES = ("LC_", "XDG_", "CUDA_", "CUDNN_", "NVIDIA_", "CUBLAS", "NCCL_", "TRITON_", "TORCH",
                 "PYTORCH_", "HIP_", "ROCR_", "ROCM_", "HSA_")
# never passed, whatever the prefix: anything named like a credential
SECRET = re.compile(r"TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|_KEY$|^KEY|API_?KEY|COOKIE|SESSION", re.IGNORECASE)


def job_env(parent: dict[str, str] | None = None, **extra: str) -> dict[str, str]:
    """The environment for a process running code under test: the kept variables of `parent`
    (default os.environ), those its KWATCH_JOB_ENV names (comma-separated), plus `extra`."""
    parent = dict(os.environ if parent is None else parent)
    named = set(filter(None, (n.strip() for n in parent.get("KWATCH_JOB_ENV", "").split(","))))
    env = {k: v for k, v in parent.items()
           if (k in KEEP or k in named or k.startswith(KEEP_PREFIXES)) and not SECRET.search(k)}
    env.update(extra)
    return env


@lru_cache(maxsize=1)
def _namespace_prefix() -> tuple[str, ...]:
    """The `unshare` command line that isolates a command here, or () where the host refuses it."""
    exe = shutil.which("unshare")
    if os.environ.get("KWATCH_NAMESPACES", "1") == "0" or exe is None:
        return ()
    prefix = (exe, "--user", "--map-root-user", "--pid", "--fork", "--kill-child", "--mount-proc",
              exe, "--user", "--mount", "--map-root-user")  # the inner user namespace locks that /proc
    try:
        # pid 1 of a namespace of its own, and its /proc cannot be unmounted
        probe = subprocess.run([*prefix, "sh", "-c", 'test "$$" = 1 && ! umount /proc 2>/dev/null'],
                               capture_output=True, timeout=20, env=job_env())
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return prefix if probe.returncode == 0 else ()


def isolated(cmd: list[str]) -> list[str]:
    """cmd for code under test: in namespaces of its own where the host allows it (module docstring);
    the parent's own secrets are hidden first."""
    hide_own_secrets()
    return [*_namespace_prefix(), *cmd]


def namespaced() -> bool:
    """Whether code under test runs in namespaces of its own on this host."""
    return bool(_namespace_prefix())


def default_memory_limit() -> int:
    """Bytes a job may hold resident: half of this host's physical memory."""
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE") // 2
    except (ValueError, OSError, AttributeError):
        return 16 << 30


def rss_bytes(pid: int) -> int:
    """Resident memory of process `pid` and its children (Linux /proc; 0 where unreadable)."""
    total = 0
    for p in [pid] + _children(pid):
        try:
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
                    break
        except (OSError, ValueError):
            continue
    return total


def _children(pid: int) -> list[int]:
    try:
        kids = [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except (OSError, ValueError):
        return []
    return kids + [g for k in kids for g in _children(k)]


def over_limit(proc: subprocess.Popen, limit: int) -> str | None:
    """A message when proc (with its children) holds more than `limit` bytes; it is then killed."""
    rss = rss_bytes(proc.pid)
    if rss <= limit:
        return None
    proc.kill()
    proc.wait()
    return f"memory limit: {rss / 2**30:.2f} GiB resident > {limit / 2**30:.2f} GiB (killed)"


def run_limited(cmd: list[str], timeout_s: float, memory_limit: int, cwd: str | Path,
                env: dict[str, str]) -> tuple[int | None, str, str, str | None]:
    """Run cmd to the end under a wall-time and a memory limit: (exit code or None, stdout, stderr,
    why it was stopped or None)."""
    with subprocess.Popen(isolated(cmd), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=str(cwd),
                          env=env) as proc:
        out: list[str] = []
        err: list[str] = []
        # the pipes are drained on threads while this one watches the clock and the memory
        readers = [threading.Thread(target=lambda s, b: b.extend(s), args=(proc.stdout, out), daemon=True),
                   threading.Thread(target=lambda s, b: b.extend(s), args=(proc.stderr, err), daemon=True)]
        for r in readers:
            r.start()
        t0, why = time.monotonic(), None
        while proc.poll() is None:
            why = over_limit(proc, memory_limit)
            if why is None and time.monotonic() - t0 > timeout_s:
                proc.kill()
                proc.wait()
                why = f"timeout after {timeout_s:.0f} s (killed)"
            if why:
                break
            time.sleep(0.1)
        for r in readers:
            r.join(timeout=5)
        return (None if why else proc.returncode), "".join(out), "".join(err), why
