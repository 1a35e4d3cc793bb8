"""What the H200 sustains: each FP32-emulation kernel and the cuBLAS GEMMs it is judged against run back to back
for several seconds at 8192^3 while nvidia-smi samples the SM clock, the power draw and the reasons the clock is
held down. Per op: TFLOP/s in its first 0.25 s (a burst, as the runner's ceiling probe times cuBLAS bf16) and in
its last 2 s (sustained), with the clock and power of each window; then the most each scheme could reach if its
products ran at cuBLAS bf16's sustained rate with the split free, against cuBLAS FP32's sustained rate.
Every op is checked against the fp64 product of the timed operands first.

python3 -m runners.studies.emulation_sustained --out DIR [--seconds 6] [--cool 4] [--n 8192] [--tiny]
Writes DIR/emulation_sustained.json. Needs a CUDA GPU and nvidia-smi (--tiny: parsing and the analysis only)."""
from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import threading
import time

_FIELDS = ("clocks.sm", "power.draw", "temperature.gpu", "enforced.power.limit")
# nvidia-smi's names since driver 535; "clocks_throttle_reasons.*" before
_REASONS = ("sw_power_cap", "hw_slowdown", "hw_power_brake_slowdown", "sw_thermal_slowdown", "hw_thermal_slowdown")
BURST_S, TAIL_S = 0.25, 2.0
SCHEME_PRODUCTS = {"bf16x9": 9, "bf16x6": 6, "bf16x3": 3}
TARGETS = {"bf16x9": 1.45, "bf16x6": 2.0, "bf16x3": 3.8}


class Sampler:
    """nvidia-smi -lms in the background; each line stamped with time.time() when it arrives."""

    def __init__(self, period_ms: int = 100, prefix: str = "clocks_event_reasons"):
        self.rows: list[tuple[float, list[str]]] = []
        query = ",".join(_FIELDS + tuple(f"{prefix}.{r}" for r in _REASONS))
        self.proc = subprocess.Popen(["nvidia-smi", f"--query-gpu={query}", "--format=csv,noheader,nounits",
                                      f"-lms={period_ms}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()

    def _read(self) -> None:
        for line in self.proc.stdout:
            self.rows.append((time.time(), [v.strip() for v in line.split(",")]))

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=5)

    def window(self, t0: float, t1: float) -> dict:
        """Median clock (MHz), power (W), temperature (C) and the share of samples with each reason active."""
        rows = [v for t, v in self.rows if t0 <= t <= t1 and len(v) == len(_FIELDS) + len(_REASONS)]
        return summarize_samples(rows)


def _num(v: str) -> float | None:
    try:
        return float(v)
    except ValueError:
        return None


def summarize_samples(rows: list[list[str]]) -> dict:
    """rows of nvidia-smi values (_FIELDS then _REASONS) -> medians and reason shares; {"samples": 0} if none."""
    if not rows:
        return {"samples": 0}
    out: dict = {"samples": len(rows)}
    for i, name in enumerate(("sm_clock_mhz", "power_w", "temp_c", "power_limit_w")):
        vals = [x for x in (_num(r[i]) for r in rows) if x is not None]
        out[name] = statistics.median(vals) if vals else None
    for j, reason in enumerate(_REASONS):
        active = [r[len(_FIELDS) + j].lower() == "active" for r in rows]
        out[reason] = round(sum(active) / len(active), 3)
    return out


def window_rates(call_ms: list[float], flops: float) -> dict:
    """Back-to-back call times (ms, in issue order) -> TFLOP/s over the first BURST_S and the last TAIL_S of
    GPU time, and the GPU-time offsets (s) of those windows."""
    total = sum(call_ms) / 1e3
    burst, t, n_b = 0.0, 0.0, 0
    for x in call_ms:
        if t >= BURST_S - 1e-9 and n_b:
            break
        burst += x / 1e3
        t += x / 1e3
        n_b += 1
    tail, n_t = 0.0, 0
    for x in reversed(call_ms):
        if tail >= TAIL_S - 1e-9 and n_t:
            break
        tail += x / 1e3
        n_t += 1
    return {"calls": len(call_ms), "gpu_s": round(total, 3),
            "burst_tflops": round(n_b * flops / burst / 1e12, 2), "burst_calls": n_b,
            "tail_tflops": round(n_t * flops / tail / 1e12, 2), "tail_calls": n_t,
            "burst_window_s": (0.0, round(burst, 3)), "tail_window_s": (round(total - tail, 3), round(total, 3))}


def limits(ops: dict) -> dict:
    """Per scheme: the best sustained emulation rate measured, its ratio to cuBLAS FP32 sustained, and the ratio
    a scheme would reach with its products at cuBLAS bf16's sustained (and burst) rate and the split free."""
    bf16, fp32 = ops.get("cublas_bf16"), ops.get("cublas_fp32")
    if not bf16 or not fp32:
        return {}
    out = {}
    for scheme, products in SCHEME_PRODUCTS.items():
        mine = [(v["tail_tflops"], k) for k, v in ops.items() if k.startswith("triton_") and scheme in k
                and v.get("ok")]
        best = max(mine) if mine else (None, None)
        out[scheme] = {
            "target_x": TARGETS[scheme],
            "best_impl": best[1], "best_tail_tflops": best[0],
            "best_tail_x": round(best[0] / fp32["tail_tflops"], 3) if best[0] else None,
            "limit_tail_x": round(bf16["tail_tflops"] / products / fp32["tail_tflops"], 3),
            "limit_burst_x": round(bf16["burst_tflops"] / products / fp32["tail_tflops"], 3),
            "products_share_of_bf16_tail": round(best[0] * products / bf16["tail_tflops"], 3) if best[0] else None,
        }
    return out


def _ops(n: int):
    """name -> (call(out, a, b), out dtype); emulation kernels as the suite ships them (autotuned)."""
    import torch

    from suite.techniques.gemm_fp32_emulation import cublas
    from suite.techniques.gemm_fp32_emulation import triton_planes_kernel as P
    from suite.techniques.gemm_fp32_emulation import triton_tma_kernel as TMA
    from suite.techniques.gemm_fp32_emulation import triton_ws_kernel as WS

    bf = {}

    def bf16(out, a, b):
        if "a" not in bf:  # the operands once, outside the timed calls: the ceiling's cuBLAS bf16 GEMM
            bf["a"], bf["b"] = a.bfloat16(), b.bfloat16()
            bf["out"] = torch.empty(n, n, device="cuda", dtype=torch.bfloat16)
        torch.mm(bf["a"], bf["b"], out=bf["out"])

    ops = {"cublas_bf16": bf16, "cublas_fp32": lambda o, a, b: cublas.run(o, a, b, "ieee")}
    for scheme in SCHEME_PRODUCTS:
        ops[f"triton_{scheme}"] = (lambda s: lambda o, a, b: P.run(o, a, b, s))(scheme)
        ops[f"triton_{scheme}_tma"] = (lambda s: lambda o, a, b: TMA.run(o, a, b, s))(scheme)
        ops[f"triton_{scheme}_ws"] = (lambda s: lambda o, a, b: WS.run(o, a, b, s))(scheme)
    ops["cublas_bf16_end"] = bf16  # again after the emulation kernels: has the sustained rate drifted?
    return ops


def _sustain(fn, seconds: float, batch: int = 4) -> list[float]:
    """Calls fn back to back for `seconds` of wall time; per-call CUDA-event times (ms), in order."""
    import torch

    events, t_end = [], time.time() + seconds
    while time.time() < t_end:
        for _ in range(batch):
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            fn()
            e.record()
            events.append((s, e))
        events[-1][1].synchronize()
    torch.cuda.synchronize()
    return [s.elapsed_time(e) for s, e in events]


def run(out_dir: str, seconds: float, cool: float, n: int, only: list[str] | None) -> dict:
    import torch

    from runners.correctness import rel_err

    g = torch.Generator(device="cuda").manual_seed(20261201)
    a = torch.randn(n, n, device="cuda", generator=g)
    b = torch.randn(n, n, device="cuda", generator=g)
    ref = (a.double() @ b.double())
    out = torch.empty(n, n, device="cuda")
    flops = 2.0 * n ** 3
    sampler = Sampler()
    time.sleep(1.0)
    if not any(len(v) == len(_FIELDS) + len(_REASONS) for _, v in sampler.rows):
        sampler.stop()
        sampler = Sampler(prefix="clocks_throttle_reasons")
    result = {"n": n, "seconds": seconds, "cool_s": cool, "gpu": torch.cuda.get_device_name(),
              "torch": torch.__version__, "ops": {}}
    for name, call in _ops(n).items():
        if only and name not in only:
            continue
        rec: dict = {}
        try:
            call(out, a, b)  # compiles / autotunes
            torch.cuda.synchronize()
            got = None if name.startswith("cublas_bf16") else out
            rec["rel_err"] = float(rel_err(got, ref)) if got is not None else None
            rec["ok"] = rec["rel_err"] is None or rec["rel_err"] < 1e-4
            time.sleep(cool)
            rec["idle"] = sampler.window(time.time() - cool / 2, time.time())
            t0 = time.time()
            call_ms = _sustain(lambda: call(out, a, b), seconds)
            rec.update(window_rates(call_ms, flops))
            wall = time.time() - t0
            # GPU time runs from t0 (the queue is at most one batch ahead of the host)
            rec["burst"] = sampler.window(t0, t0 + max(BURST_S, 0.3))
            rec["tail"] = sampler.window(t0 + wall - TAIL_S, t0 + wall)
        except Exception as exc:  # noqa: BLE001 - one failing kernel must not end the study
            rec = {"ok": False, "error": f"{type(exc).__name__}: {str(exc)[:300]}"}
        result["ops"][name] = rec
        print(name, json.dumps({k: v for k, v in rec.items() if k not in ("idle",)}), flush=True)
        with open(f"{out_dir}/emulation_sustained.json", "w") as f:
            json.dump(result, f, indent=1)
    sampler.stop()
    result["limits"] = limits(result["ops"])
    with open(f"{out_dir}/emulation_sustained.json", "w") as f:
        json.dump(result, f, indent=1)
    return result


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--cool", type=float, default=4.0)
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--only", action="append", help="an op name (repeatable); all by default")
    ap.add_argument("--tiny", action="store_true", help="parse and exit (no GPU)")
    args = ap.parse_args()
    if args.tiny:
        print(json.dumps(vars(args)))
        return
    res = run(args.out, args.seconds, args.cool, args.n, args.only)
    print(json.dumps(res["limits"], indent=1))


if __name__ == "__main__":
    main()
