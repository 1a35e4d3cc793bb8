"""A technique built from KernelBench problem files, so `kwatch grade` runs through the runner.

A problem file defines Model, get_inputs() and get_init_inputs(); a solution file defines ModelNew.
Each problem is a case; the implementations are the problem's own Model (the reference, baseline)
and the solution set (a folder holding a file of each problem's name, or one file). Correctness is
KernelBench's: both models get identically seeded weights (WEIGHTS_SEED, as KernelBench seeds both
models alike), and on each seed the same fresh inputs,
and the output must have the reference's shape and lie within atol = rtol = 1e-2 of it. Each model
is built once per seed and device, so only its forward is timed; its output tensor is handed back
through `out.set_` (no copy is timed). The reference and the solution are called through one path
(run_model, the model file resolved once), so byte-identical files time alike.
"""
from __future__ import annotations

import hashlib
import importlib.util
from pathlib import Path

from suite.spec import LATENCY, MAX_ABS_ERR, Case, Impl, Technique, Tolerance

ATOL = RTOL = 1e-2
WEIGHTS_SEED = 42
_HERE = "runners.kernelbench"
_modules: dict[str, object] = {}
_models: dict[tuple, object] = {}  # the last model built per (file, class): one problem at a time
_outputs: dict[tuple, object] = {}


def technique(name: str, problems: list[str], solution: str, trials: int = 5) -> Technique:
    """The technique grading `problems` (paths) against `solution`: a folder with a file of each
    problem's name, or one file for a single problem. Its impls: "reference" and the solution set,
    named after the folder (a single file named otherwise than its problem: folder/stem)."""
    sol = Path(solution)
    paths = [Path(p) for p in problems]
    if sol.is_dir():
        impl_name, files = sol.name, [sol / f"{p.stem}.py" for p in paths]
    else:
        impl_name = sol.parent.name if [sol.stem] == [p.stem for p in paths] else f"{sol.parent.name}/{sol.stem}"
        files = [sol]
    return Technique(
        name=name, section="KernelBench problems", reference=f"{_HERE}:reference",
        make_inputs=f"{_HERE}:make_inputs", empty_output=f"{_HERE}:empty_output",
        impls=(Impl(impl_name, f"{_HERE}:run_model", args={"solution": str(sol), "source_sha256": _sha(files)},
                    accuracy="kernelbench"),
               Impl("reference", f"{_HERE}:run_model", args={"solution": None, "source_sha256": _sha(paths)},
                    baseline=True, accuracy="kernelbench")),
        cases=tuple(Case(p.stem, {"problem": str(p)}, ("full",), trials) for p in paths),
        tolerances={"kernelbench": Tolerance(f"{_HERE}:reference", atol=ATOL, rtol=RTOL)},
        metrics=(LATENCY, MAX_ABS_ERR))


def _sha(files: list[Path]) -> str:
    """The files' content hash: in an Impl's args it makes the implementation's version follow them."""
    return hashlib.sha256(b"".join(f.read_bytes() for f in files if f.is_file())).hexdigest()[:16]


def _module(path: str, problem: bool = False):
    """The module of a problem or solution file, loaded once; a problem's is added to the measuring
    boundary's snapshot (runners.guard.watch), so that a solution cannot change its Model."""
    if path not in _modules:
        spec = importlib.util.spec_from_file_location(f"kernelbench_{len(_modules)}_{Path(path).stem}", path)
        if spec is None:
            raise FileNotFoundError(f"no Python file {path}")
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        _modules[path] = module
        if problem:
            from runners import guard

            guard.watch(module)
    return _modules[path]


def _to(x, device: str):
    import torch

    return x.to(device) if isinstance(x, torch.Tensor) else x


def make_inputs(params: dict, seed: int, device: str) -> dict:
    """The problem's init arguments and forward inputs (drawn after seeding with seed + 1); the models'
    weights are seeded with WEIGHTS_SEED, whatever the seed (so only tensors differ between instances)."""
    import torch

    problem = _module(params["problem"], problem=True)
    init = [_to(x, device) for x in problem.get_init_inputs()]
    torch.manual_seed(seed + 1)
    return {"problem": params["problem"], "init": init, "args": [_to(x, device) for x in problem.get_inputs()],
            "seed": WEIGHTS_SEED, "device": device}


def _model(path: str, cls: str, init: list, seed: int, device: str):
    """Model class `cls` of file `path` built with weights seeded by `seed` (the same for both models)."""
    import torch

    key = (path, cls, seed, device, repr(init))
    found = _models.get((path, cls))
    if found is None or found[0] != key:
        _models.clear()  # one problem's models at a time (GPU memory)
        torch.manual_seed(seed)
        _models[(path, cls)] = (key, getattr(_module(path, problem=cls == "Model"), cls)(*init).to(device).eval())
    return _models[(path, cls)][1]


def _forward(path: str, cls: str, args: list, init: list, seed: int, device: str):
    import torch

    with torch.no_grad():
        y = _model(path, cls, init, seed, device)(*args)
    if not isinstance(y, torch.Tensor):
        raise TypeError(f"{Path(path).name}: {cls}.forward returned {type(y).__name__}, not a tensor")
    return y


def reference(problem: str, init: list, args: list, seed: int, device: str):
    """The problem's Model output on these inputs (the oracle)."""
    return _forward(problem, "Model", args, init, seed, device)


def empty_output(params: dict, device: str):
    """A tensor shaped like the reference's output (found by running it once per problem and device)."""
    import torch

    key = (params["problem"], device)
    if key not in _outputs:
        ref = reference(**make_inputs(params, 0, device))
        _outputs[key] = (tuple(ref.shape), ref.dtype)
    shape, dtype = _outputs[key]
    return torch.empty(shape, dtype=dtype, device=device)


def _hand_back(out, y) -> None:
    out.set_(y if y.dtype == out.dtype else y.to(out.dtype))  # out now holds y's storage and shape


_files: dict[tuple, tuple[str, str]] = {}


def _file(problem: str, solution: str | None) -> tuple[str, str]:
    """(file, class) that an implementation runs for `problem`: the problem's Model (solution None),
    or ModelNew of the solution file (or folder/<problem name>.py); resolved once per pair."""
    key = (problem, solution)
    if key not in _files:
        if solution is None:
            _files[key] = (problem, "Model")
        else:
            path = Path(solution)
            if path.is_dir():
                path = path / Path(problem).name
            if not path.is_file():
                raise FileNotFoundError(f"no solution file {path}")
            _files[key] = (str(path), "ModelNew")
    return _files[key]


def run_model(out, problem: str, init: list, args: list, seed: int, device: str, solution: str | None,
              source_sha256: str = "") -> None:
    """out <- Model(*init)(*args) of the problem (solution None) or ModelNew(*init)(*args) of the solution
    file (or folder/<problem name>.py), weights seeded by seed (source_sha256: the files' hash). The
    reference and the solution take this one path, so identical files time alike."""
    path, cls = _file(problem, solution)
    _hand_back(out, _forward(path, cls, args, init, seed, device))


def work(params: dict, device: str) -> tuple[float, int]:
    """(FLOPs of the reference's forward as torch's FlopCounterMode counts them (matmuls, convolutions,
    attention), bytes of the forward's tensor inputs) of a problem; once per problem and device."""
    key = ("work", params["problem"], device)
    if key not in _outputs:
        import torch
        from torch.utils.flop_counter import FlopCounterMode

        inputs = make_inputs(params, 0, device)
        counter = FlopCounterMode(display=False)
        with counter:
            reference(**inputs)
        nbytes = sum(a.numel() * a.element_size() for a in inputs["args"] if isinstance(a, torch.Tensor))
        _outputs[key] = (float(counter.get_total_flops()), nbytes)
    return _outputs[key]
