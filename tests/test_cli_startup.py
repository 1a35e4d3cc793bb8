"""Every kwatch command pays for what `ci.cli` imports: scipy.stats (0.6 s on the 2-core machine) is imported where
a test or a quantile runs, never at start-up."""
import subprocess
import sys

from tests.conftest import ROOT


def test_the_command_line_starts_without_scipy_stats():
    out = subprocess.run([sys.executable, "-c", "import sys, ci.cli; print(sorted(m for m in sys.modules "
                          "if m == 'scipy.stats' or m.startswith('scipy.stats.')))"],
                         capture_output=True, text=True, cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]", out.stdout[:300]


def test_the_verdict_statistics_still_use_scipy_where_they_run():
    from scipy.stats import t

    from db.detector import online_changes
    from db.verdict.spread import TAIL, _quantile
    from db.verdict.stats import compare_rates, proportion_p

    assert _quantile(4.0) == float(t.ppf(1 - TAIL, 4.0))
    assert proportion_p(1, 10, 9, 10) < 0.01  # Fisher's exact test on small counts
    assert compare_rates(10, 30, "lower", 0.05, 0.1).outcome == "regressed"  # binomial test: 30 against 10 errors
    nights = [1.0, 1.004, 0.996, 1.002, 0.998, 1.001, 0.999, 1.003] + [1.3] * 4  # the short rule's t quantile
    assert [a.change.index for a in online_changes(nights)] == [8]
