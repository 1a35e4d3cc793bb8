"""The claim spec: plain data for one attributed figure, how it is checked, and the status rule."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Union

# Statuses, in the order the ledger sorts them.
REPRODUCED = "reproduced"
NOT_REPRODUCED = "not reproduced"
CONTRADICTED = "contradicted"
NOT_ON_OUR_HARDWARE = "not reproducible on our hardware"
PENDING = "pending"
# The measurement cannot judge the claim as worded: besides the claim's quantity something else differs
# between the two sides (our Triton GEMM against cuBLAS), or the value leaves what the measurement can see
# (a share above the copy ceiling it is a share of). Never counted as contradicting the claim.
CONFOUNDED = "confounded"
# The value lies at the end of what the measurement can probe (an edge at the last point of the grid): the
# true value is at least there, so the band cannot place it.
CENSORED = "censored"
STATUSES = (REPRODUCED, NOT_REPRODUCED, CONTRADICTED, CONFOUNDED, CENSORED, NOT_ON_OUR_HARDWARE, PENDING)
PAGE = "the page (kernel & attention optimization)"  # the source of the figures the page states itself

# Who measured the figure; "ours": the page's figure (often its arithmetic) tested by our own timing.
MEASURED_BY = ("vendor", "authors", "independent", "arithmetic", "ours")
# Hardware that is no GPU: the claim holds (or was measured) anywhere, so every run counts.
ANY_HARDWARE = "any"


@dataclass(frozen=True)
class Band:
    """The values that reproduce a claim: lo <= value <= hi (None: open).

    A value outside the band contradicts the claim, except on the `weak` side ("below" or
    "above"), where the claim's own wording leaves room ("up to", a best case, or our
    measurement is a weaker proxy than the claim's): there it is "not reproduced".
    """

    lo: float | None = None
    hi: float | None = None
    weak: str | None = None
    wording: str = ""  # why this band, in words ("'roughly' -> +-15%")
    ceiling: float | None = None  # a value above it leaves what the measurement can see: "confounded"

    def __post_init__(self) -> None:
        if self.weak not in (None, "below", "above"):
            raise ValueError(f"Band.weak must be None, 'below' or 'above', not {self.weak!r}")
        if self.lo is not None and self.hi is not None and self.lo > self.hi:
            raise ValueError(f"Band lo {self.lo} > hi {self.hi}")
        if self.ceiling is not None and self.hi is not None and self.hi > self.ceiling:
            raise ValueError(f"Band hi {self.hi} > its ceiling {self.ceiling}")

    def describe(self) -> str:
        if self.lo is not None and self.hi is not None:
            core = f"[{_fmt(self.lo)}, {_fmt(self.hi)}]"
        elif self.lo is not None:
            core = f">= {_fmt(self.lo)}"
        elif self.hi is not None:
            core = f"<= {_fmt(self.hi)}"
        else:
            core = "any value"
        if self.ceiling is not None:
            core += f"; above {_fmt(self.ceiling)}: confounded"
        return core + (f" ({self.wording})" if self.wording else "")


def judge(value: float, band: Band) -> str:
    """The status rule: inside the band reproduces, outside contradicts (or, on the band's weak
    side, is "not reproduced"); above the band's ceiling the measurement is "confounded"."""
    if band.ceiling is not None and value > band.ceiling:
        return CONFOUNDED
    if band.lo is not None and value < band.lo:
        return NOT_REPRODUCED if band.weak == "below" else CONTRADICTED
    if band.hi is not None and value > band.hi:
        return NOT_REPRODUCED if band.weak == "above" else CONTRADICTED
    return REPRODUCED


# Band constructors named after the claim's wording.
def about(x: float, rel: float = 0.15, weak: str | None = None) -> Band:
    """'about', 'roughly', '~': +-15% unless said otherwise."""
    return Band(x * (1 - rel), x * (1 + rel), weak, f"'about' -> +-{rel:.0%}")


def stated(x: float, rel: float = 0.10, weak: str | None = None) -> Band:
    """A plain figure without a hedge: +-10%."""
    return Band(x * (1 - rel), x * (1 + rel), weak, f"plain figure -> +-{rel:.0%}")


def rounded(x: float, half_unit: float) -> Band:
    """A figure given to a rounding unit: the interval that rounds to it."""
    return Band(x - half_unit, x + half_unit, None, f"rounds to the stated digits (+-{half_unit:g})")


def up_to(x: float, rel: float = 0.10, above: float = 0.15) -> Band:
    """'up to x' (a best case): reaching 90% of x reproduces it; less is not reproduced, not
    contradicted, because a best case is not a promise about every case. More than 15% above x
    contradicts it: the stated best case is then not the best case."""
    return Band(x * (1 - rel), x * (1 + above), "below",
                f"'up to' -> {1 - rel:.0%} to {1 + above:.0%} of it; less: not reproduced")


def at_least(x: float, weak: bool = False, wording: str = "") -> Band:
    return Band(x, None, "below" if weak else None, wording or f">= {_fmt(x)}")


def share_of_ceiling(x: float, wording: str = "") -> Band:
    """A target share x of a ceiling measured in the same job (copy bandwidth): x to 1.0 reproduces it,
    less contradicts it, and a share above 1.0 is "confounded" (the ceiling does not bound what was
    timed: cache residency), never a reproduction."""
    return Band(x, 1.0, None, wording or f">= {_fmt(x)} of the ceiling", ceiling=1.0)


def at_most(x: float, weak: bool = False, wording: str = "") -> Band:
    return Band(None, x, "above" if weak else None, wording or f"<= {_fmt(x)}")


@dataclass(frozen=True)
class Selector:
    """Which stored results measure a claim: rows of `technique` / `impl` / `case` / `metric` with
    status ok, on hardware matching the claim's `runs_on`, latest run first.

    over: baseline implementation(s); the value becomes v(impl) / v(best baseline) in the same run
      and case (a speedup for "higher" metrics; with speedup=True a "lower" metric is inverted).
    impl: one name or several (the best of them counts).
    case: one case id, or None for every case reduced by `reduce` ("best", "worst", "median").
    params: keep only rows whose params contain these items.
    scale: multiply the value (e.g. TFLOP/s -> fraction of a datasheet peak).
    """

    technique: str
    metric: str
    impl: Union[str, tuple[str, ...]]
    case: str | None = None
    over: Union[str, tuple[str, ...], None] = None
    reduce: str = "best"
    params: dict[str, Any] = field(default_factory=dict)
    scale: float = 1.0
    speedup: bool = False  # with `over` on a lower-is-better metric: value = base / impl
    cpu_ok: bool = False  # CPU runs count too (numerics are the same there); never for speed

    def impls(self) -> tuple[str, ...]:
        return (self.impl,) if isinstance(self.impl, str) else tuple(self.impl)

    def baselines(self) -> tuple[str, ...]:
        if self.over is None:
            return ()
        return (self.over,) if isinstance(self.over, str) else tuple(self.over)


@dataclass(frozen=True)
class Arithmetic:
    """Checked by computing: "module:function"(**kwargs) -> (value, detail text)."""

    target: str
    kwargs: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Custom:
    """Checked from stored rows by a function: "module:function"(rows) -> (value, detail) or None
    when the rows do not decide it. rows: each case's latest matching run, for each technique, as
    dicts with technique, impl, case, params, metric, value, direction, run_id, gpu_name. The function may
    return (value, detail, status) to name a status the band cannot give (CENSORED)."""

    technique: Union[str, tuple[str, ...]]
    target: str
    metric: Union[str, tuple[str, ...], None] = None  # only rows of this metric (or these) are passed (None: every one)
    # CPU runs are judged too, as a row of their own (never as GPU hardware); False where CPU numerics differ
    # from the GPU's (Triton's interpreter has no tensor cores); a function that reads GPU rows only needs neither
    cpu_ok: bool = True

    def techniques(self) -> tuple[str, ...]:
        return (self.technique,) if isinstance(self.technique, str) else tuple(self.technique)


@dataclass(frozen=True)
class Projection:
    """A roofline projection from datasheet rates, labelled as such wherever it is shown."""

    value: float | None
    unit: str
    method: str
    sources: tuple[str, ...]


@dataclass(frozen=True)
class Claim:
    """One attributed figure of the page (or of a paper it cites) and how we check it."""

    id: str
    statement: str  # the page's wording (or the cited paper's), quoted or closely paraphrased
    figure: Union[float, tuple[float, float]]
    unit: str
    source: str  # citation as the page gives it (or the paper's, when not on the page)
    measured_by: str  # who measured the figure: vendor, authors, independent, arithmetic
    hardware: str  # hardware the figure was obtained on ("B200", "any")
    section: str  # page section
    band: Band | None = None  # values that reproduce it (None: nothing here can check it)
    check: Union[Selector, Arithmetic, Custom, None] = None
    technique: str | None = None  # technique here that measures it (or its nearest analog)
    runs_on: tuple[str, ...] = ()  # GPU-name substrings whose results count; () = any
    analog: Union[Selector, Custom, None] = None  # our nearest measurement when runs_on is absent
    analog_unit: str = ""  # what the analog's number is ("% of H200 BF16 peak")
    projection: str | None = None  # "module:function"(analog value or None) -> Projection
    quantity: str = ""  # what the checked value is, when it is not the figure itself
    url: str | None = None
    recalled: bool = False  # figure recalled from the cited source, not quoted from the page
    note: str = ""
    # What else differs between the two sides of the measurement, always against the claim (our Triton GEMM
    # against cuBLAS): a value outside the band is then "confounded", not "contradicted" / "not reproduced".
    confounded_by: str = ""

    def __post_init__(self) -> None:
        if self.measured_by not in MEASURED_BY:
            raise ValueError(f"claim {self.id}: measured_by must be one of {MEASURED_BY}")
        if self.check is not None and self.band is None:
            raise ValueError(f"claim {self.id}: a check needs a band")
        if isinstance(self.check, Arithmetic) and self.measured_by != "arithmetic" and not self.note:
            raise ValueError(f"claim {self.id}: an arithmetic check on a measured figure needs a note")
        if self.measured_by == "arithmetic" and isinstance(self.check, (Selector, Custom)):
            raise ValueError(f"claim {self.id}: checked by a measurement, so not labelled 'arithmetic'")
        self._check_hardware()

    def _check_hardware(self) -> None:
        """The one hardware rule: only like hardware reproduces a measured claim. A claim whose
        hardware is a GPU (not "any") and that a stored run could judge names the GPUs whose runs
        count (runs_on), each of them the claim's own hardware; results from other GPUs appear as
        the analog, beside the claim, never as its status."""
        for h in self.runs_on:
            if h.lower() not in self.hardware.lower():
                raise ValueError(f"claim {self.id}: runs_on {h!r} is not the claim's hardware "
                                 f"{self.hardware!r}; show other GPUs' results as the analog")
        if self.hardware != ANY_HARDWARE and isinstance(self.check, (Selector, Custom)) and not self.runs_on:
            raise ValueError(f"claim {self.id}: measured on {self.hardware!r} but says no GPUs whose runs count")

    def figure_text(self) -> str:
        if isinstance(self.figure, tuple):
            return f"{_fmt(self.figure[0])}–{_fmt(self.figure[1])}"
        return _fmt(self.figure)


def _fmt(x: float) -> str:
    if x == 0:
        return "0"
    if abs(x) >= 1e6 or abs(x) < 1e-3:
        return f"{x:.3g}"
    return f"{x:.4g}"
