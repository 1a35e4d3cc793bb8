"""The two-host rule: a timing change of code that did not change, between two machines, is the machines'."""
from __future__ import annotations

from typing import Optional

from db.verdict import rules as R


def same_code(base: dict, cand: dict) -> bool:
    """Were both rows timed on the same code (the same implementation hash; a pair shares software and protocol)?"""
    return bool(base.get("impl_hash")) and base.get("impl_hash") == cand.get("impl_hash")


def judge_other_host(v, base: dict, cand: dict, other_host: str) -> None:
    """A timing change of unchanged code between two machines is the machines' (docs/verdict.md, "Two hosts"):
    ambiguous, never blocking. Changed code is judged as before, with the caveat."""
    if v.status not in (R.REGRESSED, R.IMPROVED):
        return
    if not same_code(base, cand):
        v.flags.append(f"measured on another machine ({other_host}): part of a difference may be the host, not the code")
        return
    v.status, v.ambiguous = R.INSUFFICIENT, True
    v.reason = (f"another machine: {v.change:+.1%} on unchanged code (the same implementation hash, software and "
                f"protocol) measured on another host ({other_host}) is the machine's difference, not the code's; "
                f"re-measure both on one host (kwatch gate --ab); first: {v.reason}")


def note_host_unknown(v, base: Optional[dict], cand: dict, host_unknown: str) -> None:
    """Runs taken for one machine that may be two (db.verdict.identity.host_unknown): a changed series of unchanged
    code keeps its verdict and carries the caveat."""
    if host_unknown and base is not None and v.status in (R.REGRESSED, R.IMPROVED) and same_code(base, cand):
        v.flags.append(f"{host_unknown}: a change of unchanged code may be the host's, not the code's")
