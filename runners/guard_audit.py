"""The audit after timing: a few more timed calls, each on input values never seen before (a fresh
instance written into the timed operands in place), each followed by a timed repeat on the same
values; the fresh calls' outputs are judged against the oracle, and their times compared with the
repeats'. Result replay (keyed on pointers, tensor
versions, object identity or content), lazy output and batching across calls are refused here."""
from __future__ import annotations

from runners.correctness import judge, rel_err
from runners.guard import BoundaryViolation
from suite.spec import resolve

CALLS = 2  # audit calls per round (each on new values, each followed by a repeat)
ROUNDS = 4  # a round whose times look like replay is repeated on new values before refusing
# Refused when the fastest call on new values, over every round so far, is this many times the fastest
# repeat: replay is slow on every new instance, noise is not (on a CPU shared by other processes
# single 1.4 ms calls of torch_dhsa_chunks took 1.5-216 ms; one round's two calls alone looked 8.5x
# "replayed" in one run of four, and all three rounds did once in CI).
REPLAY_RATIO = 3.0
SEED_OFFSET = 1_000_003


def _leaves(obj, out: list) -> list:
    if isinstance(obj, dict):
        for k in sorted(obj, key=str):
            _leaves(obj[k], out)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            _leaves(v, out)
    else:
        out.append(obj)
    return out


def _floating(t) -> bool:
    """A dense floating-point tensor: the values the audit changes (integer and sparse tensors are the
    instance's structure: a selection, a sparse pattern)."""
    import torch

    return (t.is_floating_point() or t.is_complex()) and t.layout == torch.strided


def _graft(like, fresh, refill):
    """`like` with every tensor that refill(tensor) selects replaced by the one at the same place in
    `fresh`, and the others (the instance's structure) kept from `like`."""
    import torch

    if isinstance(like, dict):
        return {k: _graft(v, fresh[k], refill) for k, v in like.items()}
    if isinstance(like, (list, tuple)):
        return type(like)(_graft(a, b, refill) for a, b in zip(like, fresh))
    if isinstance(like, torch.Tensor):
        return fresh if refill(like) else like  # the structure: as timed (a cuSPARSELt tensor has no clone)
    return like


def _same(x, y) -> bool:
    try:
        return bool(x == y)
    except Exception:  # e.g. an array: compared elementwise
        return False


class Audit:
    """Fresh-value calls on the operands (inputs, out) a job is timed on; see the module docstring."""

    def __init__(self, tech, impl, case, device: str, seed0: int, cache, inputs: dict, out) -> None:
        self.tech, self.impl, self.case, self.device, self.cache = tech, impl, case, device, cache
        self.inputs, self.out, self.seed0 = inputs, out, seed0
        self.outs: list = []
        self.times: list[float] = []
        self.control: list[float] = []
        self.skipped: str | None = None
        self._first = None
        # KernelBench: every tensor gets the fresh instance's values (integer targets too: a solution has
        # no plan to keep); elsewhere the inputs the technique names (Technique.audit_inputs) where its
        # structure depends on the seed (a technique may cache a plan per selection), or else every
        # dense floating-point input, and only where no structure depends on the seed.
        self.all_tensors = str(tech.make_inputs).startswith("runners.kernelbench:")
        self.named = () if self.all_tensors else tuple(getattr(tech, "audit_inputs", ()))
        self._refilled: set[int] = set()  # ids of the timed tensors the audit refills

    def _refill(self, t) -> bool:
        """Whether timed tensor t gets each fresh instance's values."""
        if self.all_tensors:
            return True
        if self.named:
            return id(t) in self._refilled
        return _floating(t)

    def ready(self) -> bool:
        """Whether the audit can run: a fresh instance has the timed one's structure, shapes and
        non-tensor values (else `skipped` says why). Call before the first prepare."""
        self.skipped = self._why_not()
        return self.skipped is None

    def _why_not(self) -> str | None:
        import torch

        if not isinstance(self.out, torch.Tensor):
            return "the output is not one tensor"
        self._first = resolve(self.tech.make_inputs)(self.case.params, self.seed(0, 0), self.device)
        if self.named:
            return self._why_not_named()
        a, b = _leaves(self.inputs, []), _leaves(self._first, [])
        if len(a) != len(b):
            return "an input instance's structure depends on its seed"
        floats = 0
        for x, y in zip(a, b):
            if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
                return "an input instance's structure depends on its seed"
            if not isinstance(x, torch.Tensor):
                if not _same(x, y):
                    return "a non-tensor input depends on the seed"
                continue
            if not _floating(x):
                if self.all_tensors and x.layout == y.layout == torch.strided and x.shape == y.shape \
                        and x.dtype == y.dtype:
                    continue
                if x.layout != y.layout or x.shape != y.shape or x.dtype != y.dtype or not torch.equal(
                        x.cpu() if x.layout == torch.strided else x.to_dense().cpu(),
                        y.cpu() if y.layout == torch.strided else y.to_dense().cpu()):
                    return "the instance's structure (its integer or sparse inputs) depends on the seed"
                continue
            if x.shape != y.shape or x.dtype != y.dtype:
                return "an input's shape or dtype depends on its seed"
            floats += 1
        return None if floats else "no floating-point input to change"

    def _why_not_named(self) -> str | None:
        """The technique names the inputs to refill (Technique.audit_inputs): each must be a dense
        floating-point tensor of the same shape and dtype in every instance."""
        import torch

        for name in self.named:
            x, y = self.inputs.get(name), self._first.get(name)
            if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor) and _floating(x)):
                return f"audit input {name!r} is not a dense floating-point tensor of the instance"
            if x.shape != y.shape or x.dtype != y.dtype:
                return f"audit input {name!r}'s shape or dtype depends on the seed"
        self._refilled = {id(x) for name in self.named for x in _leaves(self.inputs[name], [])}
        return None

    def seed(self, rnd: int, k: int) -> int:
        """The seed of audit call k of round rnd: the same for every implementation of a case in a run."""
        return self.seed0 + SEED_OFFSET + rnd * CALLS + k

    def begin_round(self, rnd: int) -> None:
        """Draw this round's fresh instances before any of its calls, so that only a copy into the
        operands comes between two audited calls."""
        self.round = []
        self._first = self._first if rnd == 0 else None
        for k in range(CALLS):
            seed = self.seed(rnd, k)
            fresh = self._first if (rnd, k) == (0, 0) else resolve(self.tech.make_inputs)(
                self.case.params, seed, self.device)
            self._first = None
            self.round.append((seed, fresh))
        if self.device == "cuda":
            import torch

            torch.cuda.synchronize()

    def prepare(self, k: int) -> None:
        """Write instance k's values into the timed operands that are refilled (through .data: tensor versions
        unchanged; the instance's structure is left as timed) and poison the output."""
        import torch

        seed, fresh = self.round[k]
        for dst, src in zip(_leaves(self.inputs, []), _leaves(fresh, [])):
            if isinstance(dst, torch.Tensor) and self._refill(dst):
                dst.data.copy_(src)
        self.pending = (seed, fresh)
        if self.out.is_floating_point():
            self.out.data.fill_(float("nan"))

    def _answer(self, seed: int, fresh):
        """(oracle output, low-precision error or None) for the values of instance `fresh` (computed on
        its own tensors, which the timed call never touched; once per case and seed)."""
        merged = _graft(self.inputs, fresh, self._refill)  # the values the call saw
        key = (self.tech.name, self.case.id, "audit", seed)
        ref = self.cache.get(key + ("ref",), lambda: resolve(self.tech.reference)(**merged))
        tol = self.tech.tolerances[self.impl.accuracy]
        if tol.atol is not None:
            return ref, None
        lowp = self.cache.get(key + (self.impl.accuracy,),
                              lambda: rel_err(resolve(tol.lowp)(**_graft(self.inputs, fresh, self._refill)), ref))
        return ref, lowp

    def keep(self, ms: float) -> None:
        """Record the call just timed (ms) and keep a copy of its output for judging."""
        self.times.append(ms)
        self.outs = self.outs[-(CALLS - 1):] + [(self.out.detach().clone(), *self.pending)]

    def keep_control(self, ms: float) -> None:
        """Record a call just timed again on the same values (no output kept)."""
        self.control.append(ms)

    def replayed(self) -> str | None:
        """Why the rounds so far show replay (every call on new values far slower than the fastest
        call repeated right after one on the same values), or None."""
        fresh, again = min(self.times), min(self.control)
        if again * REPLAY_RATIO < fresh:
            return (f"timed calls on repeated inputs ran {fresh / again:.0f}x faster than on fresh inputs "
                    f"({again:.4g} ms against at least {fresh:.4g} ms): results are being replayed")
        return None

    def judge(self) -> None:
        """Raise BoundaryViolation when an audited output differs from the oracle's."""
        for out, seed, fresh in self.outs[-CALLS:]:
            ref, lowp = self._answer(seed, fresh)
            ok, _, _, msg = judge(self.tech, self.impl, out, ref, lowp, f"fresh inputs (seed {seed})")
            if not ok:
                raise BoundaryViolation(f"timed outputs differ from the reference on fresh inputs: {msg}")

    def stats(self) -> dict:
        """What the audit did, for the row's stats."""
        if self.skipped or not self.times:
            return {"audit": f"skipped: {self.skipped or 'not run'}"}
        return {"audit": "passed", "audit_ms": [round(t, 6) for t in self.times],
                "audit_repeat_ms": [round(t, 6) for t in self.control]}
