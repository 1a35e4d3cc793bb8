"""Environment fingerprint: hardware, software and git state of the machine running a job."""
from __future__ import annotations

import os
import platform
import shutil
import subprocess
import sys

from suite.record import HARDWARE_KEYS, SOFTWARE_KEYS, key_of  # noqa: F401 (series-key fields, for the runner)


def _cmd(args: list[str], cwd: str | None = None) -> str | None:
    try:
        out = subprocess.run(args, capture_output=True, text=True, timeout=20, cwd=cwd)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return out.stdout.strip() if out.returncode == 0 else None


def git_state(cwd: str | None = None) -> dict:
    """{"commit", "branch", "dirty", "date"} of the checkout at cwd (None fields outside git);
    date is the commit's committer date (ISO 8601).

    KWATCH_GIT_COMMIT (with KWATCH_GIT_BRANCH, _DIRTY, _DATE), when set, wins over the checkout's own
    .git: a tree copied to a GPU host may carry a stale .git whose HEAD is not the code that runs there,
    and a past commit's exported tree (runners.trees) has none.
    """
    commit = None if os.environ.get("KWATCH_GIT_COMMIT") else _cmd(["git", "rev-parse", "HEAD"], cwd)
    if commit is None:
        dirty = os.environ.get("KWATCH_GIT_DIRTY")
        return {"commit": os.environ.get("KWATCH_GIT_COMMIT"), "branch": os.environ.get("KWATCH_GIT_BRANCH"),
                "dirty": None if dirty is None else dirty.lower() in ("1", "true", "yes"),
                "date": os.environ.get("KWATCH_GIT_DATE")}
    branch = _cmd(["git", "rev-parse", "--abbrev-ref", "HEAD"], cwd)
    status = _cmd(["git", "status", "--porcelain", "--untracked-files=no"], cwd)
    return {"commit": commit, "branch": branch, "dirty": bool(status) if status is not None else None,
            "date": _cmd(["git", "show", "-s", "--format=%cI", commit], cwd)}


def cpu_name() -> str:
    """The CPU model string, from /proc/cpuinfo where it exists."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def sm_clock_mhz() -> int | None:
    """Current SM clock of GPU 0 in MHz (NVML, else nvidia-smi), None without a GPU."""
    try:
        import pynvml

        pynvml.nvmlInit()
        h = pynvml.nvmlDeviceGetHandleByIndex(0)
        return int(pynvml.nvmlDeviceGetClockInfo(h, pynvml.NVML_CLOCK_SM))
    except Exception:
        pass
    if shutil.which("nvidia-smi"):
        out = _cmd(["nvidia-smi", "--query-gpu=clocks.sm", "--format=csv,noheader,nounits"])
        if out:
            try:
                return int(out.splitlines()[0])
            except ValueError:
                return None
    return None


def fingerprint(device: str = "auto") -> dict:
    """Hardware and software of the device a run uses ("cuda" = GPU 0, "cpu", or "auto")."""
    import torch

    env = {
        "device": "cpu", "gpu_name": None, "compute_capability": None, "sm_count": None,
        "gpu_memory_gib": None, "l2_bytes": None, "driver": None, "cuda": torch.version.cuda,
        "torch": torch.__version__, "triton": None, "python": platform.python_version(),
        "cpu": cpu_name(), "cpu_count": os.cpu_count(), "hostname": platform.node(),
        "os": platform.platform(), "sm_clock_mhz": None,
    }
    try:
        import triton

        env["triton"] = triton.__version__
    except Exception:
        pass
    if device != "cpu" and torch.cuda.is_available():
        p = torch.cuda.get_device_properties(0)
        env.update(device="cuda", gpu_name=p.name, compute_capability=f"{p.major}.{p.minor}",
                   sm_count=p.multi_processor_count,
                   gpu_memory_gib=round(p.total_memory / 2**30, 1),
                   l2_bytes=getattr(p, "L2_cache_size", None), sm_clock_mhz=sm_clock_mhz(),
                   gpu_uuid=str(getattr(p, "uuid", "") or "") or None)
        drv = _cmd(["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"])
        env["driver"] = drv.splitlines()[0] if drv else None
    return env




def python_executable() -> str:
    """The interpreter running us, for worker subprocesses."""
    return sys.executable
