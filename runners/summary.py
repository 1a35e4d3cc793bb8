"""The run summary a person reads at 80 columns, and the full table written beside the result file."""
from __future__ import annotations

import re
from collections import defaultdict

from suite.ceilings import ceilings_line, run_ceiling, share_text

WIDTH = 80
KINDS = ("ok", "xfail", "fail", "err", "skip")  # column heads: ok, expected failure, failed, error, skipped
_KIND = {"ok": "ok", "failed_correctness": "fail", "error": "err", "skipped": "skip"}
_W = {"ok": 4, "xfail": 5, "fail": 4, "err": 4, "skip": 4}


def job_outcomes(results: list[dict]) -> dict[tuple[str, str, str], dict]:
    """Per job (technique, impl, case): its kind (one of KINDS), message, latency and highest share of
    a ceiling ((share, text) or None), probe rows aside."""
    jobs: dict[tuple, dict] = {}
    for r in results:
        if r["stats"].get("probe"):
            continue
        j = jobs.setdefault((r["technique"], r["impl"], r["case"]), {"kind": "ok", "error": None,
                                                                       "latency_ms": None, "share": None,
                                                                       "impossible": None})
        if r["stats"].get("impossible") and r["status"] == "ok":
            j["impossible"] = j["impossible"] or r["stats"]["impossible"]
        kind = _KIND.get(r["status"], "err")
        if kind == "fail" and r["stats"].get("expected_failure"):
            kind = "xfail"
        if kind != "ok" and j["kind"] == "ok":
            j["kind"], j["error"] = kind, r["error"]
        if r["metric"] == "latency_ms" and r["value"] is not None:
            j["latency_ms"] = r["value"]
        c = run_ceiling(r["stats"])
        if c and (j["share"] is None or c["share"] > j["share"][0]):
            j["share"] = (c["share"], share_text(r["stats"]))
    return jobs


def unexpected(results: list[dict]) -> list[tuple[str, dict]]:
    """("technique/impl/case", outcome) of each job that fails the run (failed or error)."""
    return [("/".join(k), j) for k, j in job_outcomes(results).items() if j["kind"] in ("fail", "err")]


def _pieces(word: str, room: int) -> list[str]:
    """word in pieces of at most room characters, broken after '/' or '_' where it can be."""
    if len(word) <= room:
        return [word]
    atoms = re.findall(r"[^/_]*[/_]|[^/_]+$", word)
    pieces = [""]
    for atom in atoms:
        while len(atom) > room:  # no separator close enough: break inside the atom
            atom = pieces.append(atom[:room]) or atom[room:]
        if len(pieces[-1]) + len(atom) > room:
            pieces.append("")
        pieces[-1] += atom
    return [p for p in pieces if p]


def wrap(text: str, indent: int = 0, first: str = "") -> list[str]:
    """text in lines of at most WIDTH, continuation lines indented; a word too long for a line
    goes on in pieces on the next ones (never cut)."""
    lines, cur = [], first
    for word in text.split(" "):
        for i, piece in enumerate(_pieces(word, WIDTH - indent)):
            sep = " " if i == 0 and cur.strip() else ""
            if len(cur) + len(sep) + len(piece) <= WIDTH:
                cur += sep + piece
            else:
                lines.append(cur.rstrip())
                cur = " " * indent + piece
    return lines + [cur.rstrip()]


def summary_lines(doc: dict, seconds: float | None = None, paths: list[tuple[str, str]] = ()) -> list[str]:
    """The summary: one line per technique (job counts per kind and the fastest ok implementation),
    each unexpected failure and error with its message, then where the table and file are."""
    run, jobs = doc["run"], job_outcomes(doc["results"])
    per_tech: dict[str, dict] = defaultdict(lambda: {k: 0 for k in KINDS} | {"best": None, "peak": None})
    for (tech, impl, case), j in jobs.items():
        t = per_tech[tech]
        t[j["kind"]] += 1
        if j["kind"] == "ok" and j["latency_ms"] is not None and (t["best"] is None or j["latency_ms"] < t["best"][0]):
            t["best"] = (j["latency_ms"], impl)
        if j["kind"] == "ok" and j["share"] and (t["peak"] is None or j["share"][0] > t["peak"][0]):
            t["peak"] = (*j["share"], impl)
    name_w = max([len(n) for n in per_tech] + [len("technique")])
    cols = lambda t: " ".join(f"{t[k]:>{_W[k]}}" for k in KINDS)
    head = f"{'technique':<{name_w}} " + cols({k: k for k in KINDS}) + "  fastest (median); highest share of a ceiling"
    indent = name_w + 1 + sum(_W.values()) + len(KINDS) - 1 + 2
    took = f" in {seconds:.0f} s" if seconds is not None else ""
    lines = wrap(f"KernelWatch {run['tier']} run {run['id'][:12]}{took}, seed "
                  f"{run.get('config', {}).get('seed')}, {len(jobs)} jobs"
                  f"{'' if run.get('finished_at') else ' (INCOMPLETE: the run did not finish)'}")
    lines += wrap(ceilings_line(run.get("ceilings")), 4)
    lines += [""] + wrap(head, indent)
    for tech, t in per_tech.items():
        best = f"{t['best'][1]} {t['best'][0]:.3g} ms" if t["best"] else "-"
        best += f"; {t['peak'][1]} ({t['peak'][2]})" if t["peak"] else "; -"
        lines += wrap(f"{tech:<{name_w}} {cols(t)}  {best}", indent)
    totals = {k: sum(t[k] for t in per_tech.values()) for k in KINDS}
    lines.append(f"{'total':<{name_w}} {cols(totals)}")
    bad = unexpected(doc["results"])
    if bad:
        lines += ["", f"{len(bad)} unexpected failure(s) and error(s):"]
        for name, j in bad:
            lines += wrap(name, 4, "  ")
            msg = (j["error"] or "").strip().splitlines()
            what = "failed" if j["kind"] == "fail" else "error"
            lines += wrap(f"{what}: {msg[0] if msg else '(no message)'}", 6, "    ")
    odd = [("/".join(k), j["impossible"]) for k, j in jobs.items() if j["impossible"]]
    if odd:
        lines += ["", f"{len(odd)} job(s) report a rate beyond the machine (IMPOSSIBLE: a measuring fault):"]
        for name, why in odd:
            lines += wrap(name, 4, "  ") + wrap(why, 6, "    ")
    if paths:
        lines.append("")
        for what, path in paths:
            lines += wrap(f"{what}: {path}", 4)
    return lines


def full_table(results: list[dict]) -> str:
    """Every row of the run (probe points included), one line each, names in full."""
    cols = ("technique", "impl", "case", "metric", "status", "value", "ceiling", "error")
    rows = [[r["technique"], r["impl"], r["case"], r["metric"], r["status"],
             "" if r["value"] is None else f"{r['value']:.4g}",
             share_text(r["stats"]) + (" IMPOSSIBLE" if r["stats"].get("impossible")
                                       and not (run_ceiling(r["stats"]) or {}).get("impossible") else ""),
             (r["error"] or "").strip().splitlines()[0] if r["error"] else ""] for r in results]
    widths = [max([len(c)] + [len(row[i]) for row in rows]) for i, c in enumerate(cols)]
    fmt = lambda row: "  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip()
    return "\n".join([fmt(cols), fmt(["-" * w for w in widths])] + [fmt(r) for r in rows]) + "\n"


def verdict_line(results: list[dict]) -> str | None:
    """The last line of a failing run, naming the rows that failed it; None when the run passes."""
    bad = unexpected(results)
    if not bad:
        return None
    return f"FAILED (exit 1): {len(bad)} job(s) failed or errored: " + ", ".join(n for n, _ in bad)
