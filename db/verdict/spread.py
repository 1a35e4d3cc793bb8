"""A series' run-to-run spread, learned from earlier runs of the same code, so that two runs are judged
against how much that series moves between runs, not against one figure for every series.

Timings: one run's samples cannot show how far its median moves in the next run (host-side launch
work, operand placement, clocks). Between runs of the same code, software and protocol, each series'
log medians scatter with its own spread: under 1 % for most graph-replayed kernels, 30-47 % for
eager multi-launch PyTorch code (decode_step/torch_eager, the formats' torch quantizers) on the
committed H200 runs. `Spread.timing` gives that spread, moderated towards the protocol's floor for
series with little history (a scaled-inverse-chi-square prior of PRIOR_DF degrees of freedom).

Quality fractions: the trials of one run are not independent (a needle grid's 33 cells share one
seed, one model and one input), so k of n varies between runs of the same code more than binomially
(18, 5 and 15 of 33 needle cells for one selector in three H200 nightlies of one commit). The
Pearson dispersion of k/n between same-code runs scales n down to the effective number of trials.

A `SpreadTable` is built from result documents or the database (db/spread_history.py) and keyed by
(technique, impl, case, metric, hardware key, protocol family): the protocol's version is part of a series'
identity, not of its noise, so v3 and v4 runs both count (within their own versions).
"""
from __future__ import annotations

import json
import math
import re
import sys
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Optional

PRIOR_DF = 2.0  # weight of the protocol floor against a series' own history, in degrees of freedom
# A series with at least OWN_DF degrees of freedom of same-code history is judged on its own spread even
# where that is narrower than the protocol's floor, moderated towards QUIET_PRIOR (not the floor: the
# floor is the noisiest series' figure, cuBLAS fp64 256^3, and held every quiet series to +8.5 %).
OWN_DF = 4
QUIET_PRIOR = 0.010
Z_TAIL = 3.090232  # the standard normal quantile at 1 - TAIL
TAIL = 0.001  # one-sided false-regression rate per series where its own spread decides
COMMITTED = Path(__file__).with_name("run_spread.json")
_VERSION = re.compile(r"/v\d+$")


def family(protocol: str) -> str:
    """The protocol without its version: cuda-events+l2read+graph/v4 -> cuda-events+l2flush+graph (the
    flush's two forms read alike for noise)."""
    return _VERSION.sub("", protocol or "").replace("l2read", "l2flush")


def key_of(row: dict, hardware_key: str) -> tuple[str, ...]:
    """The table key of a result row measured on the hardware of `hardware_key` (runners.env.key_of)."""
    return (row.get("technique", ""), row.get("impl", ""), row.get("case", ""), row.get("metric", ""),
            hardware_key or "", family((row.get("stats") or {}).get("protocol") or ""))


def siblings(key: tuple) -> tuple:
    """The key that pools every case of the series' implementation and metric (case "*")."""
    return key[:2] + ("*",) + key[3:]


@dataclass
class Entry:
    """Within-group sums of one series: squared deviations of log medians (timings) or Pearson
    chi-square of k of n (fractions), with their degrees of freedom (runs - 1 per same-code group)."""

    ss: float = 0.0
    df: int = 0

    def add(self, ss: float, df: int) -> None:
        self.ss += ss
        self.df += df


@dataclass(frozen=True)
class TimingSpread:
    sigma: float  # relative run-to-run spread of one run's median (moderated)
    df: float  # its degrees of freedom (prior + history)
    quantile: float  # Student-t quantile at TAIL with df
    narrower: bool = False  # narrower than the protocol's floor: it replaces the floor, not only widens it

    @property
    def history_df(self) -> int:
        return int(round(self.df - PRIOR_DF))


@dataclass
class SpreadTable:
    """Learned spreads by key_of; `timing` and `dispersion` answer None where no history exists."""

    timings: dict[tuple, Entry] = field(default_factory=dict)
    fractions: dict[tuple, Entry] = field(default_factory=dict)
    source: str = ""

    def timing(self, key: tuple, floor: float) -> Optional[TimingSpread]:
        """The series' moderated spread: where its history says it is wider than `floor` (the protocol's
        calibrated run-to-run spread), or where OWN_DF degrees of freedom of its own history say it is
        narrower (then moderated towards QUIET_PRIOR, or its implementation's other cases where wider).
        None: the floor, calibrated on many series, stands."""
        e = self.timings.get(key)
        sib = self.timings.get(siblings(key))
        sib_var = sib.ss / sib.df if sib is not None and sib.df > 0 else 0.0  # how this code tends to move
        ss, df = (e.ss, e.df) if e is not None else (0.0, 0)
        if df >= OWN_DF and floor > 0:
            nu = PRIOR_DF + df
            sigma = math.sqrt((PRIOR_DF * max(QUIET_PRIOR ** 2, sib_var) + ss) / nu)
            if sigma < floor:  # at the normal quantile of TAIL: Student's t on nu df held 1 % series to +6 %
                return TimingSpread(sigma, nu, Z_TAIL, narrower=True)
        prior = max(floor ** 2, sib_var)
        if df <= 0 and prior <= floor ** 2:
            return None
        nu = PRIOR_DF + df
        sigma = math.sqrt((PRIOR_DF * prior + ss) / nu)
        if sigma <= floor:
            return None
        return TimingSpread(sigma, nu, _quantile(nu))

    def has_history(self, key: tuple) -> bool:
        """Whether same-code runs of this timing series were learned from (at least two)."""
        e = self.timings.get(key)
        return e is not None and e.df > 0

    def dispersion(self, key: tuple) -> Optional[tuple[float, int]]:
        """(phi, df): how many times the binomial variance k/n shows between same-code runs (>= 1,
        moderated towards 1 with PRIOR_DF), or None without history or where phi rounds to 1."""
        e = self.fractions.get(key)
        if e is None or e.df <= 0:
            return None
        phi = (PRIOR_DF + e.ss) / (PRIOR_DF + e.df)
        return (phi, e.df) if phi > 1.05 else None

    def merged(self, other: "SpreadTable") -> "SpreadTable":
        """Each key from whichever table has more degrees of freedom for it."""
        out = SpreadTable(dict(self.timings), dict(self.fractions), f"{self.source}+{other.source}")
        for mine, theirs in ((out.timings, other.timings), (out.fractions, other.fractions)):
            for k, e in theirs.items():
                if k not in mine or e.df > mine[k].df:
                    mine[k] = e
        return out

    def to_json(self) -> str:
        rows = [["timing", *k, float(f"{e.ss:.9g}"), e.df] for k, e in sorted(self.timings.items())]
        rows += [["fraction", *k, float(f"{e.ss:.9g}"), e.df] for k, e in sorted(self.fractions.items())]
        return json.dumps({"schema": 1, "source": self.source, "key": ["kind", "technique", "impl", "case",
                           "metric", "hardware_key", "protocol_family", "ss", "df"], "rows": rows}, indent=0) + "\n"

    @classmethod
    def from_json(cls, text: str) -> "SpreadTable":
        doc = json.loads(text)
        t = cls(source=doc.get("source", ""))
        for kind, *key, ss, df in doc["rows"]:
            (t.timings if kind == "timing" else t.fractions)[tuple(key)] = Entry(float(ss), int(df))
        return t


@lru_cache(maxsize=256)
def _quantile(nu: float) -> float:
    """Student-t quantile at 1 - TAIL on nu degrees of freedom (one per history length, not per verdict)."""
    from scipy.stats import t as student_t  # 0.6 s to import: only where a quantile is needed

    return float(student_t.ppf(1 - TAIL, nu))


@lru_cache(maxsize=1)
def committed() -> SpreadTable:
    """The table shipped with KernelWatch, learned from the committed H200 runs (empty if absent)."""
    return load(COMMITTED)


def load(path: Path) -> SpreadTable:
    """A table written by to_json; a missing or unreadable file gives an empty table (every series on its
    protocol's spread) and says so on stderr, naming the command that rewrites it."""
    if not path.is_file():
        return SpreadTable(source="none")
    try:
        return SpreadTable.from_json(path.read_text())
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        print(f"warning: {path}: not a run-spread table ({type(exc).__name__}: {exc}); judging on the protocols' "
              "spreads alone; rewrite it with: python -m db.spread_history results/h200 --out " + str(path),
              file=sys.stderr)
        return SpreadTable(source=f"none ({path.name} unreadable)")
