"""Time floors: no timed call is faster than the machine allows. A KernelBench solution is refused when
its median implies a rate above this GPU's datasheet peak for the problem's work (FLOPs counted on the
reference, input bytes), or is below an empty kernel's time under the same protocol."""
from __future__ import annotations

from runners.ceilings import datasheet

_empty: dict = {}


def upper_copy_gbps(measured: float, device: str) -> tuple[float, str]:
    """(upper bound of copy bandwidth in GB/s, where it comes from): the datasheet figure where this
    GPU's is known and above the measurement, else the measurement."""
    ds = datasheet() if device == "cuda" else None
    if ds and ds["copy_gbps"] >= measured:
        return ds["copy_gbps"], f"datasheet {ds['name']}"
    return measured, "measured"


def empty_kernel_ms(device: str, proto) -> float | None:
    """The fastest time of a one-element zero_ timed under proto (graph replay, L2 flush), once per process."""
    if device != "cuda":
        return None
    key = (proto.name(device, True), proto.flush_mode)
    if key not in _empty:
        import torch

        from runners.timing import measure

        buf = torch.empty(1, device="cuda")
        samples, _ = measure(lambda: buf.zero_(), device, proto)
        _empty[key] = min(samples)
    return _empty[key]


def floor_violation(tech, case, median_ms: float, device: str, proto) -> str | None:
    """Why median_ms is below what this machine can do for a KernelBench problem, or None
    (other techniques: None; their rates above a ceiling are flagged, not refused)."""
    if not str(tech.make_inputs).startswith("runners.kernelbench:") or device != "cuda":
        return None
    empty = empty_kernel_ms(device, proto)
    if empty is not None and median_ms < empty:
        return (f"timed at {median_ms * 1e3:.3g} us, below an empty kernel's {empty * 1e3:.3g} us: "
                "the timed stream did no work")
    ds = datasheet()
    if not ds:
        return None
    from runners.kernelbench import work

    flops, in_bytes = work(case.params, device)
    s = median_ms * 1e-3
    if flops and flops / s > ds["bf16_tflops"] * 1e12:
        return (f"timed at {median_ms:.4g} ms, which is {flops / s / 1e12:.4g} TFLOP/s for the problem's "
                f"{flops / 1e9:.4g} GFLOP: beyond this GPU's peak ({ds['bf16_tflops']:g} TFLOP/s dense bf16, "
                f"datasheet {ds['name']})")
    if in_bytes and in_bytes / s > ds["copy_gbps"] * 1e9:
        return (f"timed at {median_ms:.4g} ms, which reads its {in_bytes / 1e6:.4g} MB of inputs at "
                f"{in_bytes / s / 1e9:.4g} GB/s: beyond this GPU's memory bandwidth ({ds['copy_gbps']:g} GB/s, "
                f"datasheet {ds['name']})")
    return None
