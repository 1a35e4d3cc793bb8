"""The timing protocol: warm-up, L2 flush, CUDA events or graph replay, adaptive repetitions."""
from __future__ import annotations

import gc
import math
from dataclasses import dataclass
from typing import Callable

from runners import guard
from runners.stats import rel_spread_below, summarize
from suite.record import protocol_version  # noqa: F401 (the recorded name read back; kept here for callers)


@dataclass(frozen=True)
class Protocol:
    """How a series was timed; part of its identity (two protocols are never one series)."""

    target_rel_spread: float = 0.02  # stop once stdev/mean is under this (nvbench's rule)...
    max_time_s: float = 2.0  # ...or once this much time went into timed repetitions
    min_reps: int = 10
    max_reps: int = 2000
    warmup_reps: int = 3
    flush_l2: bool = True
    batch: int = 10  # repetitions enqueued between host synchronisations
    # CUDA v3: Impl(graph=None) replays a CUDA graph wherever the call can be captured (the same
    # choice in every run), the timed step is warmed up for warmup_s before any sample is kept, and
    # the spread rule may stop only after min_time_s; why each rule, and v1/v2: docs/DESIGN.md.
    # v4: the flush reads instead of writing (flush_mode below); the same rules otherwise.
    cuda_version: int = 4
    warmup_s: float = 0.025  # as triton.testing.do_bench's default warm-up
    min_time_s: float = 0.1
    graph_max_scratch: float = 0.25  # no graph for calls whose scratch memory exceeds this share of the GPU
    # A call whose operands total at most placement_max_bytes is timed on `placements` copies of
    # them at different addresses, batches taken in turn, samples pooled. On the H200 the median of
    # cuBLAS fp64 256^3 (1.5 MiB of operands, 7 us after an L2 flush) depended on where its operands
    # were allocated: 12 fresh allocations in one process spread 11% while one allocation re-timed
    # agreed within 0.5%, and 19 whole runs had a night CV of 3.3%. Only calls this small change
    # their protocol name ("+place8"); the decision is by bytes, so it is the same in every run.
    placements: int = 8
    placement_max_bytes: int = 16 << 20
    # "zero" writes the 2 x L2 flush buffer (v1-v3, as triton.testing.do_bench): the L2 is left full of
    # dirty lines, which the timed call then writes back as it evicts them, traffic that is not the
    # call's (H200, runners/studies/flush_protocol.py: +3-4 us on every call of 64 MB-1 GB, the fused
    # RMSNorm at 16384 x 2048 37.4 against 33.6 us). "read" (v4) reads it: the L2 is left holding clean lines.
    flush_mode: str = "read"

    def name(self, device: str, graph: bool, placements: int = 1) -> str:
        """e.g. "cuda-events+l2read+graph/v4", "cuda-events+l2read+graph+place8/v4", "cpu-perfcounter/v1";
        the zeroing flush of v1-v3 is "l2flush" ("cuda-events+l2flush+graph/v3")."""
        if device == "cpu":
            return "cpu-perfcounter/v1"
        flush = {"zero": "l2flush", "read": "l2read"}[self.flush_mode]
        parts = ["cuda-events"] + ([flush] if self.flush_l2 else []) + (["graph"] if graph else [])
        parts += [f"place{placements}"] if placements > 1 else []
        return "+".join(parts) + f"/v{self.cuda_version}"

    def placements_for(self, device: str, operand_bytes: int) -> int:
        """How many operand copies a call with operand_bytes of inputs and outputs is timed on."""
        return self.placements if device == "cuda" and operand_bytes <= self.placement_max_bytes else 1


def _time_cpu(fn: Callable[[], None], proto: Protocol, audit=None) -> list[float]:
    for _ in range(proto.warmup_reps):
        fn()
    clock, mono_ns = guard.clock, guard.mono_ns  # captured before any code under test was imported
    samples: list[float] = []
    spent = mono = 0.0
    while len(samples) < proto.max_reps:
        m0 = mono_ns()
        t0 = clock()
        fn()
        dt = clock() - t0
        mono += (mono_ns() - m0) * 1e-9
        samples.append(dt * 1e3)
        spent += dt
        if len(samples) % proto.batch == 0:
            guard.verify(full=False)
        if _done(samples, spent, proto, min_time_s=0.0):
            break
    guard.verify(full=False)
    guard.cpu_clock_check(spent, mono, len(samples))
    if audit is not None:
        def one() -> float:
            t0 = clock()
            fn()
            return (clock() - t0) * 1e3
        _audit(audit, one)
    return samples


def _audit(audit, timed_call: Callable[[], float]) -> None:
    """Audit rounds after the timed samples (runners.guard_audit): refuse replay or stale outputs."""
    from runners.guard_audit import CALLS, ROUNDS

    why = None
    for rnd in range(ROUNDS):
        try:  # the fresh instances are the harness's memory, not the call's: no room for them is no fault
            if rnd == 0 and not audit.ready():
                return
            audit.begin_round(rnd)
        except (MemoryError, RuntimeError) as exc:  # torch.OutOfMemoryError is a RuntimeError
            if not isinstance(exc, MemoryError) and "out of memory" not in str(exc):
                raise
            if why:  # an earlier round already looked like replay
                break
            audit.skipped = "no memory for fresh input instances"
            return
        for k in range(CALLS):
            audit.prepare(k)
            audit.keep(timed_call())
            audit.keep_control(timed_call())
        audit.judge()
        why = audit.replayed()
        if why is None:
            break
    guard.verify()
    if why:
        raise guard.BoundaryViolation(why)


def extra_warmup_calls(first_call_s: float, proto: Protocol) -> int:
    """Calls after a first one of first_call_s seconds that bring the warm-up to proto.warmup_s."""
    return max(0, min(proto.max_reps, math.ceil(proto.warmup_s / max(first_call_s, 1e-7)) - 1))


def _done(samples: list[float], spent_s: float, proto: Protocol, min_time_s: float) -> bool:
    if len(samples) < proto.min_reps:
        return False
    if spent_s >= proto.max_time_s:
        return True
    return spent_s >= min_time_s and rel_spread_below(samples, proto.target_rel_spread)


def _capture(fn: Callable[[], None]):
    import torch

    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()  # warm-up on a side stream before capture, as torch's docs require
    torch.cuda.current_stream().wait_stream(s)
    # the graph's private pool cannot reuse blocks cached by eager calls, and while capturing the
    # allocator cannot cudaFree them to make room: give them back first
    torch.cuda.synchronize()
    torch.cuda.empty_cache()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn()
    return g


def _scratch_and_host_sync(fn: Callable[[], None]) -> tuple[int, bool]:
    """One call of fn: (peak bytes it allocated, whether it waits on the GPU from the host).

    A host sync (.item(), int(tensor), a copy to the CPU) cannot be captured, and a failed capture
    leaves torch 2.11 unusable for the rest of the process: on the H200 the allocator afterwards
    could not free its cache (OOM with 132 GiB reserved but unallocated) and the RNG raised
    "Offset increment outside graph capture". torch's sync debug mode finds the sync without capturing."""
    import torch

    torch.cuda.synchronize()
    torch.cuda.reset_peak_memory_stats()
    held = torch.cuda.memory_allocated()
    torch.cuda.set_sync_debug_mode("error")
    try:
        fn()
        syncs = False
    except RuntimeError as e:
        if "synchronizing" not in str(e):
            raise
        syncs = True
    finally:
        torch.cuda.set_sync_debug_mode("default")
    torch.cuda.synchronize()
    return torch.cuda.max_memory_allocated() - held, syncs


def _time_cuda(fns: list[Callable[[], None]], proto: Protocol, graph: bool | None,
               audit=None) -> tuple[list[float], bool]:
    import torch

    fn = fns[0]
    dev = torch.cuda.current_device()
    l2 = getattr(torch.cuda.get_device_properties(dev), "L2_cache_size", 64 << 20) or (64 << 20)
    flush_buf = None
    if proto.flush_l2:
        flush_buf = _Flush(torch.zeros(2 * l2 // 4, dtype=torch.int32, device="cuda"), proto.flush_mode)
    guard.l2_persisting_clear()  # a reservation the host started with is not the code's doing
    for _ in range(proto.warmup_reps):
        fn()
    scratch, syncs = _scratch_and_host_sync(fn)  # synchronizes first
    if graph is None:  # deterministic: the same impl and case are timed the same way in every run
        # A graph keeps a second copy of the call's scratch memory in its private pool, and a capture
        # that fails keeps that pool until the process exits (pytorch/pytorch#190348). Calls this
        # large run for milliseconds, where a graph saves nothing measurable. One pool per placement.
        graph = scratch * len(fns) <= proto.graph_max_scratch * torch.cuda.get_device_properties(dev).total_memory
    graph = graph and not syncs  # its capture would fail, and a failed capture breaks torch 2.11
    steps = list(fns)
    if graph:
        try:
            steps = [_capture(f).replay for f in fns]
        except RuntimeError:  # not capturable (host sync inside, or no memory for a second pool)
            graph = False
        if not graph:
            # outside the except block: its traceback kept the half-captured graph alive
            torch.cuda.synchronize()
            gc.collect()
            torch.cuda.empty_cache()
    more = extra_warmup_calls(_timed_calls(steps[0], flush_buf, 1)[0] / 1e3, proto)
    per = math.ceil(more / len(steps))
    for i, step in enumerate(steps):
        k = per if i == 0 else max(1, per)  # every placement runs at least once before it is timed
        if k:
            _timed_calls(step, flush_buf, k)
    flush_ms = min(_timed_calls(flush_buf, None, 3)) if flush_buf is not None else 0.0
    clock = guard.clock
    samples: list[float] = []
    spent = wall = 0.0
    n = 0
    while len(samples) < proto.max_reps:
        t0 = clock()
        batch = _timed_calls(steps[n % len(steps)], flush_buf, proto.batch)  # placements in turn
        wall += clock() - t0  # host time of the batch, its device-wide synchronize included
        guard.verify(full=False)
        n += 1
        samples.extend(batch)
        spent += sum(batch) / 1e3
        if n % len(steps) == 0 and _done(samples, spent, proto, proto.min_time_s):
            break
    guard.wall_check(wall, spent * 1e3, len(samples), flush_ms)
    guard.l2_persisting_check()
    if audit is not None:
        _audit(audit, lambda: _timed_calls(steps[0], flush_buf, 1)[0])
    return samples, graph


class _Flush:
    """Evicts the L2 before a timed call: writes (zero) or reads (read) a 2 x L2 buffer."""

    def __init__(self, buf, mode: str):
        import torch

        self.buf, self.mode = buf, mode
        self.acc = torch.zeros((), dtype=torch.int64, device=buf.device)

    def __call__(self) -> None:
        import torch

        if self.mode == "zero":
            self.buf.zero_()
        else:
            torch.sum(self.buf, dim=0, out=self.acc)


def _timed_calls(step: Callable[[], None], flush_buf, n: int) -> list[float]:
    """n calls of step, each after an L2 flush, timed with CUDA events; ms per call."""
    import torch

    Event, elapsed, sync = _CUDA or bind_cuda()  # as they were before any code under test ran
    events = []
    for _ in range(n):
        if flush_buf is not None:
            flush_buf()
        start, end = Event(enable_timing=True), Event(enable_timing=True)
        start.record()
        step()
        end.record()
        events.append((start, end))
    sync()  # device-wide: waits on every stream, so side-stream work is in the wall clock's time
    return [elapsed(s, e) for s, e in events]


_CUDA: list = []


def bind_cuda() -> list:
    """[Event class, its elapsed_time, torch.cuda.synchronize], bound once: runners.guard.arm binds them
    in the worker before any code under test is imported (and its snapshot then verifies them)."""
    import torch

    if not _CUDA:
        _CUDA[:] = [torch.cuda.Event, torch.cuda.Event.elapsed_time, torch.cuda.synchronize]
    return _CUDA


def measure(fn: Callable[[], None] | list[Callable[[], None]], device: str, proto: Protocol,
            graph: bool | None = None, audit=None) -> tuple[list[float], dict]:
    """Time fn; returns (raw samples in ms, summary stats incl. the protocol name).

    fn: one call, or the same call on operand copies at different addresses (placements; CUDA only),
    timed a batch each in turn with the samples pooled.
    graph: True replays a CUDA graph, False launches directly, None: a graph unless the call syncs
    with the host or needs over proto.graph_max_scratch of the GPU as scratch.
    audit: a runners.guard_audit.Audit on the operands of fn (the first placement), run after the
    samples are taken. Raises runners.guard.BoundaryViolation when a guard refuses the measurement."""
    if not guard.armed():
        guard.arm()
    fns = list(fn) if isinstance(fn, (list, tuple)) else [fn]
    if device == "cpu":
        samples, graph = _time_cpu(fns[0], proto, audit), False
        fns = fns[:1]
    else:
        samples, graph = _time_cuda(fns, proto, graph, audit)
    stats = summarize(samples)
    if audit is not None:
        stats.update(audit.stats())
    stats["protocol"] = proto.name(device, graph, len(fns))
    if len(fns) > 1:  # sample i came from placement (i // batch) % len(fns)
        per = [[x for i, x in enumerate(samples) if (i // proto.batch) % len(fns) == p] for p in range(len(fns))]
        stats["placement_medians"] = [summarize(x)["median"] for x in per]
    return samples, stats
