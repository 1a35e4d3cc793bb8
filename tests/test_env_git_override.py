"""The git state a run records: the checkout's own, unless the caller names the commit it sent."""
import subprocess

from runners.env import git_state


def test_the_checkout_head_is_recorded_without_an_override(monkeypatch):
    monkeypatch.delenv("KWATCH_GIT_COMMIT", raising=False)
    head = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert git_state()["commit"] == head


def test_a_named_commit_wins_over_a_stale_checkout(monkeypatch):
    monkeypatch.setenv("KWATCH_GIT_COMMIT", "0123456789abcdef0123456789abcdef01234567")
    monkeypatch.setenv("KWATCH_GIT_DIRTY", "0")
    monkeypatch.setenv("KWATCH_GIT_BRANCH", "main")
    monkeypatch.setenv("KWATCH_GIT_DATE", "2026-11-30T22:06:17+00:00")
    state = git_state()
    assert state == {"commit": "0123456789abcdef0123456789abcdef01234567", "branch": "main", "dirty": False,
                     "date": "2026-11-30T22:06:17+00:00"}


def test_the_checkout_commit_date_is_recorded(monkeypatch):
    monkeypatch.delenv("KWATCH_GIT_COMMIT", raising=False)
    date = subprocess.run(["git", "show", "-s", "--format=%cI", "HEAD"], capture_output=True, text=True).stdout.strip()
    assert git_state()["date"] == date
