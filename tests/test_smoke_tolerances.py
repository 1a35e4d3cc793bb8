"""Every smoke tolerance holds on any seed: the committed calibration (200 seeds per check, drawn like
the runner's) shows each smoke check within half its tolerance on the code as it stands, and the cheap
checks are re-measured here on 200 other seeds."""
import json
import os

import pytest

os.environ.setdefault("TRITON_INTERPRET", "1")  # before triton is imported by the kernel modules

from runners.calibrate import CALIBRATION, MAX_USE, per_seed, seeds_for, smoke_checks  # noqa: E402
from runners.job import impl_hash  # noqa: E402

ENTRIES = {e["check"]: e for e in json.loads(CALIBRATION.read_text())["entries"]}
CHECKS = {f"{t.name}/{i.name}/{c.id}": (t, i, c) for t, i, c in smoke_checks()}
CHEAP_S_PER_SEED = 0.05  # re-measured in CI: about a minute for all of them
RECALIBRATE = "python -m runners.calibrate --seeds 40 --only {key}"


@pytest.mark.parametrize("key", sorted(CHECKS))
def test_calibrated_with_margin(key):
    """The worst seed of the calibration uses at most half the tolerance. A check not (or not fully)
    calibrated on the code as it stands is reported as skipped, with the command that calibrates it."""
    tech, impl, case = CHECKS[key]
    e = ENTRIES.get(key)
    if e is None:
        pytest.skip(f"not calibrated: {RECALIBRATE.format(key=key)}")
    if e["impl_hash"] != impl_hash(tech, impl):
        pytest.skip(f"calibrated on other code: {RECALIBRATE.format(key=key)}")
    tol = tech.tolerances[impl.accuracy]
    if e["tolerance"] == {"k": tol.k, "floor": tol.floor}:
        worst = e["max_use"]
    else:  # a changed bound is judged by the error ratio alone (use <= ratio / k, whatever the floor)
        worst = e["max_ratio"] / tol.k
    # An implementation whose error is its reference run's own on every seed (to 0.1 %: the same
    # rounding of the output, or an exact specification) cannot be pushed over by an unlucky seed.
    exact = e["max_ratio"] <= 1.001 and tol.k >= 1.0
    assert worst <= MAX_USE or exact, f"{key}: the worst of {e['seeds']} seeds uses {worst:.0%} of the tolerance"
    if e["seeds"] < 200:
        pytest.skip(f"within margin on {e['seeds']} seeds, short of 200: {RECALIBRATE.format(key=key)} --salt N")


CHEAP = sorted(k for k in CHECKS if k in ENTRIES and ENTRIES[k]["s_per_seed"] <= CHEAP_S_PER_SEED)


@pytest.mark.parametrize("key", CHEAP)
def test_cheap_check_passes_on_200_fresh_seeds(key):
    tech, impl, case = CHECKS[key]
    rows = per_seed(tech, impl, case, seeds_for(200, salt=1000), "cpu")
    uses = [err / bound for err, _, bound in rows]
    assert max(uses) <= 1.0, f"{key}: fails at {sum(u > 1 for u in uses)} of 200 seeds"
