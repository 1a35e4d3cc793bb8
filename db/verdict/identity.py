"""What makes two runs' series comparable by the verdict: the judged hardware and software of a run.

A series is judged only against the same GPU (device, GPU name, compute capability, SM count) and the same
software that can change a kernel's time (driver, CUDA, torch, Triton, Python major.minor). The host CPU
string and Python's patch version are left out: a GPU kernel is timed by device events, and two H200
hosts of the fleet differ in their CPU model string while timing the same kernels (docs/verdict.md,
"Which runs are compared"). The stored hardware and software keys (runners.env) keep every field: the
judged identity only decides whether two runs may be paired. `other_host` says whether two paired runs
ran on different machines (another GPU by UUID, another VM kernel build, another CPU model string).
"""
from __future__ import annotations

JUDGED_HARDWARE = ("device", "gpu_name", "compute_capability", "sm_count")
JUDGED_SOFTWARE = ("driver", "cuda", "torch", "triton", "python")


def _minor(version) -> str:
    """'3.12.3' -> '3.12' (a patch release of Python does not split a series)."""
    return ".".join(str(version).split(".")[:2]) if version else ""


def judged(env: dict) -> tuple[tuple, tuple]:
    """(hardware, software) of a run's env that the verdict compares on; CPU string and Python patch left out."""
    hw = tuple(str(env.get(k) or "") for k in JUDGED_HARDWARE)
    sw = tuple(_minor(env.get(k)) if k == "python" else str(env.get(k) or "") for k in JUDGED_SOFTWARE)
    return hw, sw


def same_judged(env_a: dict, env_b: dict) -> bool:
    """Do two runs' envs name the same judged hardware and software? False when either env is empty."""
    return bool(env_a) and bool(env_b) and judged(env_a) == judged(env_b)


def difference(env_a: dict, env_b: dict) -> str:
    """The judged fields that differ, 'field a -> b' joined ('' where none differs)."""
    (ha, sa), (hb, sb) = judged(env_a or {}), judged(env_b or {})
    out = [f"{k} {a or '?'} -> {b or '?'}" for k, a, b in zip(JUDGED_HARDWARE + JUDGED_SOFTWARE, ha + sa, hb + sb)
           if a != b]
    return ", ".join(out)


def hardware_differs(env_a: dict, env_b: dict) -> bool:
    """Do the judged GPUs differ (another GPU, not only another software stack)?"""
    return judged(env_a or {})[0] != judged(env_b or {})[0]


HOST_FIELDS = (("gpu_uuid", "GPU"), ("os", "platform"), ("cpu", "CPU"))


def other_host(env_a: dict, env_b: dict) -> str:
    """How two GPU runs' machines differ where both recorded it ('GPU GPU-af3e.. -> GPU-12ab..'), '' when
    nothing recorded differs (the same host, or not known). CPU runs: '' (their timings are not gated)."""
    a, b = env_a or {}, env_b or {}
    if a.get("device") != "cuda" or b.get("device") != "cuda":
        return ""
    out = [f"{label} {str(a[k])[:48]} -> {str(b[k])[:48]}" for k, label in HOST_FIELDS
           if a.get(k) and b.get(k) and a[k] != b[k]]
    return ", ".join(out)


def host_unknown(env_a: dict, env_b: dict) -> str:
    """Why two GPU runs that `other_host` takes for one machine may still be two ('' where both name their GPU
    by UUID, or either is no GPU run): a run before gpu_uuid was recorded (4fcddea) can sit on another host of
    the same VM kernel and CPU string (results/h100/README.md: three nightlies of 1661801 on two hosts)."""
    a, b = env_a or {}, env_b or {}
    if a.get("device") != "cuda" or b.get("device") != "cuda" or other_host(a, b):
        return ""
    if a.get("gpu_uuid") and b.get("gpu_uuid"):
        return ""
    sides = [s for s, e in (("baseline", a), ("candidate", b)) if not e.get("gpu_uuid")]
    return (f"machine not recorded (no GPU UUID in the {' and '.join(sides)}, a run before 4fcddea): "
            "another host of the same VM kernel and CPU is not ruled out")
