"""Grade one KernelBench-format pair: PROBLEM (Model, get_inputs, get_init_inputs) vs SOLUTION (ModelNew).

Correctness first, over several trials with fresh random inputs and identically seeded weights
(outputs must match in shape and within atol = rtol = 1e-2, as KernelBench checks); only then timing
of both with the runners' protocol (raw samples kept). Runs in its own process: `python -m ci.grade_pair`.
"""
from __future__ import annotations

import importlib.util
import json
import sys
import traceback
from pathlib import Path


def load_module(path: str | Path, name: str):
    spec = importlib.util.spec_from_file_location(name, str(path))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _to(x, device):
    import torch

    return x.to(device) if isinstance(x, torch.Tensor) else x


def _build(cls, init_inputs, seed: int, device: str):
    import torch

    torch.manual_seed(seed)  # same seed: the reference and the solution start from the same weights
    return cls(*init_inputs).to(device).eval()


def check(problem, solution, trials: int, device: str, seed: int, atol: float = 1e-2, rtol: float = 1e-2) -> dict:
    """{'correct', 'trials', 'max_abs_err', 'message'} over `trials` fresh seeds."""
    import torch

    worst = 0.0
    for t in range(trials):
        s = seed + 1000 * t
        init = [_to(x, device) for x in problem.get_init_inputs()]
        ref, new = _build(problem.Model, init, s, device), _build(solution.ModelNew, init, s, device)
        torch.manual_seed(s + 1)
        inputs = [_to(x, device) for x in problem.get_inputs()]
        with torch.no_grad():
            want = ref(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
            got = new(*[x.clone() if isinstance(x, torch.Tensor) else x for x in inputs])
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            shape = getattr(got, "shape", type(got).__name__)
            return {"correct": False, "trials": t + 1, "max_abs_err": None,
                    "message": f"trial {t}: output shape {tuple(shape) if hasattr(shape, '__len__') else shape} "
                               f"!= expected {tuple(want.shape)}"}
        got, want = got.float(), want.float()
        if torch.isnan(got).any() and not torch.isnan(want).any():
            return {"correct": False, "trials": t + 1, "max_abs_err": None, "message": f"trial {t}: NaN in output"}
        err = float((got - want).abs().max()) if got.numel() else 0.0
        worst = max(worst, err)
        if not torch.allclose(got, want, atol=atol, rtol=rtol):
            return {"correct": False, "trials": t + 1, "max_abs_err": err,
                    "message": f"trial {t}: max abs error {err:.3g} outside atol={atol}, rtol={rtol}"}
    return {"correct": True, "trials": trials, "max_abs_err": worst, "message": None}


def time_model(problem, cls, device: str, seed: int, proto) -> tuple[list[float], dict]:
    """Raw samples (ms) and stats of one model's forward on fresh inputs."""
    import torch

    from runners.timing import measure

    init = [_to(x, device) for x in problem.get_init_inputs()]
    model = _build(cls, init, seed, device)
    torch.manual_seed(seed + 7)
    inputs = [_to(x, device) for x in problem.get_inputs()]

    def step():
        with torch.no_grad():
            model(*inputs)

    return measure(step, device, proto)


def grade(problem_path: str, solution_path: str, trials: int = 5, device: str = "cpu", seed: int = 42,
          max_time_s: float = 1.0) -> dict:
    """The pair's verdict: correctness, then (if correct) reference and solution timings and speedup."""
    from runners.timing import Protocol

    proto = Protocol(max_time_s=max_time_s)
    out = {"problem": str(problem_path), "solution": str(solution_path), "device": device}
    try:
        problem = load_module(problem_path, "kb_problem")
        solution = load_module(solution_path, "kb_solution")
        out.update(check(problem, solution, trials, device, seed))
    except Exception as exc:
        out.update(correct=False, status="error", message=f"{type(exc).__name__}: {exc}",
                   traceback=traceback.format_exc()[-1500:])
        return out
    out["status"] = "ok" if out["correct"] else "failed_correctness"
    if not out["correct"]:
        return out
    try:
        out["ref_samples"], out["ref_stats"] = time_model(problem, problem.Model, device, seed, proto)
        out["new_samples"], out["new_stats"] = time_model(problem, solution.ModelNew, device, seed, proto)
        out["speedup"] = out["ref_stats"]["median"] / out["new_stats"]["median"]
    except Exception as exc:
        out.update(status="error", message=f"timing: {type(exc).__name__}: {exc}")
    return out


def main() -> None:
    problem, solution, trials, device, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4], int(sys.argv[5])
    print("KWGRADE" + json.dumps(grade(problem, solution, trials, device, seed)))


if __name__ == "__main__":
    main()
