"""The measuring boundary's in-process guards: the harness's own clocks, a snapshot of every function
the timer, the statistics and the oracle call (refused when one is replaced), and the wall clock
against the reported times. Design and limits: docs/DESIGN.md, "The measuring boundary"."""
from __future__ import annotations

import builtins
import os
import statistics
import sys
import time

# Captured when this module is imported: the worker imports it before any code under test, so a
# later `time.perf_counter = ...` changes the module attribute, not these references.
clock = time.perf_counter
mono_ns = time.monotonic_ns

# Module attributes whose identity is checked: module -> names (None: every public function and class in
# it; a runners module: its private ones too). "core" ones are checked after every timed batch, all
# after the check, the timing and the audit of each job.
_CORE = {
    "time": ("perf_counter", "perf_counter_ns", "monotonic", "monotonic_ns", "time", "time_ns", "sleep"),
    "statistics": ("fmean", "stdev", "median", "mean", "quantiles"),
    "math": ("fsum", "sqrt"),
    "builtins": ("sum", "sorted", "min", "max", "len", "abs", "float", "isinstance", "getattr", "id"),
    "runners.stats": None, "runners.timing": None, "runners.guard": None, "runners.guard_audit": None,
    "torch.cuda": ("synchronize", "current_stream", "stream", "graph", "Event", "Stream", "CUDAGraph",
                   "empty_cache", "set_sync_debug_mode"),
}
_FULL = {"runners.correctness": None, "runners.job": None, "runners.kernelbench": None,
         "runners.placements": None, "torch": None, "torch.nn.functional": None, "torch.cuda": None,
         "torch.linalg": None}
# Classes whose methods (own and inherited) are checked: (module, class, core?).
_CLASSES = (("torch.cuda", "Event", True), ("torch.cuda", "Stream", True), ("torch.cuda", "CUDAGraph", True),
            ("runners.timing", "_Flush", True), ("torch", "Tensor", False), ("torch.nn", "Module", False),
            ("torch.nn", "Linear", False))

# (key, holder, name, object, core): holder is a module (its dict is looked up) or a class (its MRO).
_entries: list[tuple] = []
_seen: set[str] = set()
_modules: dict[str, object] = {}
_registered: set[str] = set()  # modules whose sys.modules entry must stay the object snapshotted


class BoundaryViolation(RuntimeError):
    """The code under test broke the measuring boundary; the message says how, in one line."""


def _lookup(holder, name):
    if isinstance(holder, type):
        for klass in holder.__mro__:
            d = klass.__dict__
            if name in d:
                return d[name]
        return _MISSING
    return holder.__dict__.get(name, _MISSING)


_MISSING = object()


def _add(key: str, holder, name: str, core: bool) -> None:
    obj = _lookup(holder, name)
    if key in _seen or obj is _MISSING or not callable(obj) or isinstance(obj, type(sys)):
        return
    _seen.add(key)
    _entries.append((key, holder, name, obj, core))


def _add_module(mod_name: str, mod, names, core: bool) -> None:
    _modules.setdefault(mod_name, mod)
    if sys.modules.get(mod_name) is mod:
        _registered.add(mod_name)
    own = mod_name.startswith("runners") or mod_name.startswith("kernelbench_")
    for name in (names if names is not None else list(vars(mod))):
        if names is None and name.startswith("_") and not (own and not name.startswith("__")):
            continue
        _add(f"{mod_name}.{name}", mod, name, core)


def _add_class(prefix: str, cls, core: bool) -> None:
    for name in dir(cls):
        if not name.startswith("__") or name in ("__call__", "__init__", "__new__"):
            _add(f"{prefix}.{name}", cls, name, core)


def watch(module) -> None:
    """Add a module (its functions and classes, and those classes' methods) to the snapshot; e.g. a
    KernelBench problem file, so that a solution cannot change its Model."""
    _add_module(module.__name__, module, None, False)
    for name, obj in list(vars(module).items()):
        if isinstance(obj, type) and getattr(obj, "__module__", None) == module.__name__:
            _add_class(f"{module.__name__}.{name}", obj, False)


def arm() -> None:
    """Snapshot the harness (call before any code under test is imported; again later only adds)."""
    import importlib

    for table, core in ((_CORE, True), (_FULL, False)):
        for mod_name, names in table.items():
            try:
                mod = builtins if mod_name == "builtins" else importlib.import_module(mod_name)
            except ImportError:
                continue
            _add_module(mod_name, mod, names, core)
    importlib.import_module("runners.timing").bind_cuda()
    for mod_name, cls_name, core in _CLASSES:
        cls = getattr(sys.modules.get(mod_name), cls_name, None)
        if isinstance(cls, type):
            _add_class(f"{mod_name}.{cls_name}", cls, core)


def armed() -> bool:
    """Whether a snapshot was taken in this process."""
    return bool(_entries)


def replaced(full: bool = True) -> list[str]:
    """Names of snapshot entries that are no longer the object snapshotted (empty: all intact);
    full=False checks only the timer's and the statistics' own ("core")."""
    bad = [f"module {n}" for n, m in _modules.items() if n in _registered and sys.modules.get(n) is not m]
    for i, (key, holder, name, obj, core) in enumerate(_entries if full else _core_entries()):
        now = _lookup(holder, name)
        if now is obj:
            continue
        if full and not core and key.startswith("torch") and _torch_own(now):
            _entries[i] = (key, holder, name, now, core)  # torch rebinds a few itself (dynamo: manual_seed,
            continue                                     # Module.__init__ at the first torch.compile)
        bad.append(key)
    return bad


def _torch_own(obj) -> bool:
    return str(getattr(obj, "__module__", "") or "").startswith("torch")


_core_cache: list = [0, []]


def _core_entries() -> list[tuple]:
    if _core_cache[0] != len(_entries):
        _core_cache[:] = [len(_entries), [e for e in _entries if e[4]]]
    return _core_cache[1]


def verify(full: bool = True) -> None:
    """Raise BoundaryViolation naming what was replaced, if anything was."""
    bad = replaced(full)
    if bad:
        more = f" (and {len(bad) - 3} more)" if len(bad) > 3 else ""
        raise BoundaryViolation(f"a harness function was replaced during the run: {', '.join(bad[:3])}{more}")


def wall_check(wall_s: float, reported_ms: float, calls: int, between_ms: float) -> None:
    """Raise when the wall clock saw far more time than the reported samples account for.

    wall_s: host time around the timed calls (guard clocks); reported_ms: the samples' sum; calls:
    how many; between_ms: device time per call that is not the call's own (the L2 flush). Allowed:
    3 x (reported + flushes) + 0.5 ms per call for host work between calls + 50 ms for host hiccups;
    a kernel whose reported time is 10x below its true time, or work on a stream the timed one
    never waits for, overruns it once a timed block lasts a few milliseconds."""
    allowed_ms = 3.0 * (reported_ms + calls * between_ms) + 0.5 * calls + 50.0
    if wall_s * 1e3 > allowed_ms:
        raise BoundaryViolation(
            f"reported GPU time is below what the wall clock saw: {calls} timed calls reported "
            f"{reported_ms:.3g} ms in all, the wall clock saw {wall_s * 1e3:.4g} ms (allowed {allowed_ms:.4g} ms)")


def cpu_clock_check(perf_s: float, mono_s: float, calls: int) -> None:
    """Raise when two independent host clocks around the same calls disagree (a forged timer)."""
    if mono_s > 2.0 * perf_s + calls * 20e-6 + 0.02 or perf_s > 2.0 * mono_s + calls * 20e-6 + 0.02:
        raise BoundaryViolation(f"the timer disagrees with the monotonic clock: {perf_s * 1e3:.4g} ms "
                                f"against {mono_s * 1e3:.4g} ms over {calls} calls")


def _l2_persisting_reset() -> int:
    """Zero the persisting-L2 reservation (cudaLimitPersistingL2CacheSize) and reset the lines it holds;
    return the bytes that were reserved (0 off a GPU or without libcudart)."""
    lib = _cudart()
    if lib is None:
        return 0
    import ctypes

    size = ctypes.c_size_t(0)
    if lib.cudaDeviceGetLimit(ctypes.byref(size), 0x06) == 0 and size.value > 0:  # cudaLimitPersistingL2CacheSize
        lib.cudaCtxResetPersistingL2Cache()
        lib.cudaDeviceSetLimit(0x06, ctypes.c_size_t(0))
        return size.value
    return 0


def l2_persisting_clear() -> None:
    """Set the persisting-L2 reservation to zero before timed calls: some hosts start a process with one
    (9 MiB on an H100 host), which no code under test asked for; a no-op off a GPU."""
    _l2_persisting_reset()


def l2_persisting_check() -> None:
    """Raise when the code under test reserved persisting L2 (cudaLimitPersistingL2CacheSize > 0 after
    l2_persisting_clear), which the L2 flush cannot evict; a no-op off a GPU or without libcudart."""
    reserved = _l2_persisting_reset()
    if reserved:
        raise BoundaryViolation(f"the code under test reserved {reserved >> 20} MiB of persisting L2, "
                                "which the L2 flush cannot evict (an access-policy window)")


_cudart_lib: list = []


def _cudart():
    if _cudart_lib:
        return _cudart_lib[0]
    lib = None
    try:
        import ctypes

        with open(f"/proc/{os.getpid()}/maps") as f:
            paths = sorted({line.split()[-1] for line in f if "libcudart.so" in line})
        lib = ctypes.CDLL(paths[0]) if paths else None
    except OSError:
        lib = None
    _cudart_lib.append(lib)
    return lib
