"""`kwatch claims`: the claims ledger as a table, JSON or Markdown (docs/claims.md)."""
from __future__ import annotations

import json
import tempfile
from collections import Counter
from pathlib import Path
from typing import Optional

import typer
from rich.console import Console
from rich.table import Table

from db.claims import ledger
from db.engine import make_engine, open_db
from db.ingest import ingest_docs
from db.validate import ResultFileError, load_and_validate
from runners.resultfile import UNREADABLE, read_text
from suite.claims.spec import STATUSES

FORMATS = ("table", "json", "markdown")
RULE = """\
How a status is decided (code: `db/claims.py`, `suite/claims/spec.py`; tests: `tests/test_claims_*.py`):

- Each claim has a **band**, the values that reproduce it, set from its wording: "about", "roughly",
  "~" give +-15%; a plain figure +-10%; a figure given to the digit, the interval that rounds to it;
  "up to x" (a best case) needs >= 90% of x.
- **reproduced**: our value (measured, or computed for arithmetic claims) is inside the band.
- **contradicted**: our value is outside the band on a side the claim's wording excludes: the
  measurement, or the arithmetic, refutes the claim as stated.
- **not reproduced**: our value is outside the band on the side the wording leaves open, marked
  per claim ("weak side"): a best case we did not reach ("up to"), or a measurement that is a
  weaker proxy than the claim's (an untrained selector standing in for a trained one, a Hopper GPU
  standing in for Blackwell's lopsided balance). We failed to reach it; that does not show it false.
- **not reproducible on our hardware**: the claim was measured on hardware absent from the stored
  runs. Shown with a roofline **projection** from datasheet rates (always labelled projection, with
  its datasheet sources), and our nearest measurement where we have one. It becomes a measured
  status as soon as a run on that hardware is stored.
- **confounded**: the measurement cannot judge the claim as worded, and the claim says why
  ("confounded by"): besides the claim's quantity something else differs between the two sides, always
  against the claim (our Triton GEMM timed against cuBLAS's, a strided pass charged to one side only), or
  the value leaves what the measurement can see (a share of the copy bandwidth above 1.0). A value
  outside the band is then "confounded", never "contradicted"; inside it, the claim is reproduced
  despite the handicap.
- **censored**: the value lies at the end of what the measurement can probe (an accuracy edge at the
  last exponent a sweep tries): the true value is at least there, so the band cannot place it.
- **pending**: no stored result measures it yet, or no benchmark in this suite can (the reason is
  given).
- Bands are two-sided wherever the page states a value; "up to x" also contradicts a value more
  than 15% above x (the stated best case is then not the best case). One-sided bands remain only
  for wordings without a value ("beats", "under 2x", "comparable").
- **Per GPU**: a claim is judged separately on each GPU kind that measured it, one row each, the
  GPU named in the "measured on" column; a figure measured on one GPU never stands for another (its
  history, its analog and its texts are that GPU's).
- **Hardware, one rule for every measured claim**: a claim names the hardware its figure was
  measured on, and only runs on that hardware (its `runs_on` GPUs) can reproduce or contradict it.
  Results on any other GPU, ours included (an H200 for an H100 claim), are listed beside it as
  "other hardware", never as its status. Claims whose hardware is "any" (numerics, arithmetic) are
  judged on every GPU kind; CPU runs are never GPU hardware: they get a row of their own only where
  the check says numerics are the same there.
- **Commits**: only runs that record their git commit count. A result that cannot be traced to its
  code backs no claim; such a claim is pending, its evidence says "needs a re-run" and which runs
  lack the commit.
- Measured claims use the latest stored run on matching hardware; arithmetic claims
  (measured_by "arithmetic") are recomputed from their stated inputs. A benchmark claim is also
  judged on each of its last 5 matching runs: where those verdicts disagree it is marked
  **unsettled** (a figure on its band's edge), its status still the latest run's and its evidence
  saying how the runs split. "ours" marks a page figure
  tested by our own timing (the "measured on" column says where).
- A claim lives as plain data next to the technique that measures it
  (`suite/techniques/<technique>/claims.py`), or in `suite/claims/ledger_*.py` when nothing here
  builds the technique. "Recalled" marks a figure or citation taken from the cited source from
  memory rather than quoted from the page: check it against the source before repeating it.
"""


def _value(row: dict) -> str:
    v = row["value"]
    if v is None:
        return ""
    return f"{v:.4g}"


def _projection(row: dict) -> str:
    p = row["projection"]
    if not p or p["value"] is None:
        return ""
    return f"projection {p['value']:.4g} {p['unit']}"


def _ours(row: dict) -> str:
    parts = [_value(row) if row["value"] is not None else "", _projection(row)]
    if row["analog"] is not None:
        parts.append(f"our analog {row['analog']:.4g} {row.get('analog_unit') or ''}".rstrip())
    if "needs a re-run" in (row["detail"] or ""):
        parts.append("needs a re-run (its runs record no commit)")
    return "; ".join(p for p in parts if p)


def measured_on(row: dict) -> str:
    """The GPU kind the row's value was measured on ("arithmetic", or "" where nothing was measured)."""
    return row.get("gpu") or ("arithmetic" if row["check"] == "arithmetic" else "")


def other_hardware(row: dict) -> str:
    """Our figures on GPUs other than the claim's, each labelled with its GPU (never the claim's status)."""
    return "; ".join(f"{o['gpu']}: {o['value']:.4g}" for o in row.get("others") or [])


def _unsettled(row: dict) -> str:
    """' (unsettled)' where the last matching runs' verdicts disagree."""
    return " (unsettled)" if row.get("unsettled") else ""


def counts(rows: list[dict]) -> dict[str, int]:
    c = Counter(r["status"] for r in rows)
    return {s: c.get(s, 0) for s in STATUSES}


def render_table(rows: list[dict]):
    t = Table(title=f"claims ledger ({len({r['id'] for r in rows})} claims, {len(rows)} rows: one per GPU that "
                    "measured a claim)", show_lines=False)
    t.add_column("claim", no_wrap=True)
    for col in ("GPU", "figure", "by", "claimed on", "status", "ours", "other hardware"):
        t.add_column(col, overflow="fold")
    style = {"reproduced": "green", "contradicted": "red", "not reproduced": "yellow"}
    for r in rows:
        s = r["status"]
        t.add_row(r["id"], measured_on(r), f"{r['figure']} {r['unit']}", r["measured_by"], r["hardware"],
                  (f"[{style[s]}]{s}[/]" if s in style else s) + _unsettled(r), _ours(r), other_hardware(r))
    return t


def _md(text: str) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def render_markdown(rows: list[dict], sources: dict | None = None) -> str:
    """The ledger as Markdown: summary, rule, one table, then every claim's details."""
    out = ["# Claims ledger", "",
           "Every attributed figure of the kernel & attention page (and of the papers it cites where a "
           "technique here measures the same thing), beside what we reproduced.", ""]
    if sources is not None:
        given = " ".join(f"--results {a}" for a in sources.get("args") or ["results/h200"])
        out += [f"Generated by `kwatch claims {given} --format markdown --out docs/claims.md` from these "
                "committed result files, ingested into a temporary SQLite database:", ""]
        out += [f"- `{s}`" for s in sources["files"]] or ["- (none)"]
        if sources["skipped"]:
            out += ["", "Skipped (JSON files in the folder that are not result files): "
                    + ", ".join(f"`{s}`" for s in sources["skipped"])]
        if sources.get("uncommitted"):
            out += ["", "Ingested but backing no claim (the run records no git commit): "
                    + ", ".join(f"`{s}`" for s in sources["uncommitted"])]
        out.append("")
    out += [f"{len({r['id'] for r in rows})} claims in {len(rows)} rows: a claim measured on several GPUs has a "
            "row (and a status) per GPU kind; our figures on GPUs other than a claim's own hardware are listed "
            "beside it as other hardware, never as its status.", "",
            "| status | rows |", "| --- | --- |"]
    out += [f"| {s} | {n} |" for s, n in counts(rows).items()]
    unsettled = list(dict.fromkeys(r["id"] for r in rows if r.get("unsettled")))
    if unsettled:
        out += ["", "Unsettled (the band's verdicts on the last matching runs disagree; the status shown is the "
                "latest run's): " + ", ".join(f"[{i}](#{i})" for i in unsettled)]
    unbacked = list(dict.fromkeys(r["id"] for r in rows if "needs a re-run" in (r["detail"] or "")))
    if unbacked:
        out += ["", "Claims whose only measurements come from runs without a commit (pending until re-run "
                "from a commit): " + ", ".join(f"[{i}](#{i})" for i in unbacked)]
    out += ["", RULE, "## Ledger", "",
            "| claim | statement | figure | measured by | claimed on | measured on | status | ours | other hardware |",
            "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        out.append(f"| [{r['id']}](#{r['id']}) | {_md(r['statement'])} | {_md(r['figure'])} {_md(r['unit'])} "
                   f"| {r['measured_by']} | {_md(r['hardware'])} | {_md(measured_on(r))} "
                   f"| **{r['status']}**{_unsettled(r)} | {_md(_ours(r))} | {_md(other_hardware(r))} |")
    out += ["", "## Details", ""]
    by_id: dict[str, list[dict]] = {}
    for r in rows:
        by_id.setdefault(r["id"], []).append(r)
    for rs in by_id.values():
        out += _details(rs)
    return "\n".join(out)


def _details(rs: list[dict]) -> list[str]:
    """One claim's details: what it says and how it is checked, then each GPU row's status and evidence."""
    r = rs[0]
    out = [f"### {r['id']}", "", f"> {r['statement']}", "",
           f"- figure: {r['figure']} {r['unit']} ({r['measured_by']}, {r['hardware']})",
           f"- source: {r['source']}" + (f" <{r['url']}>" if r.get("url") else "")
           + (" (recalled from the cited source, not quoted from the page)" if r["recalled"] else ""),
           f"- section: {r['section']}" + (f"; technique: `{r['technique']}`" if r["technique"] else ""),
           (f"- check: {r['check']}" + (f" of {r['quantity']}" if r["quantity"] else "")
            + (f"; band {r['band']}" if r["band"] else "")) if r["check"] != "none" else
           "- check: none in this suite" + (f" (a measurement would reproduce it at {r['band']})"
                                            if r["band"] else "")]
    if r.get("confounded_by"):
        out.append(f"- confounded by: {r['confounded_by']}")
    for r in rs:
        on = f" on {r['gpu']}" if r.get("gpu") else ""
        out.append(f"- status{on}: **{r['status']}**{_unsettled(r)}"
                   + (f", value {_value(r)}" if r["value"] is not None else ""))
        if r["detail"]:
            out.append(f"  - evidence: {r['detail']}")
        if r["quantity"] != rs[0]["quantity"]:
            out.append(f"  - measured quantity{on}: {r['quantity']}")
        if r["analog"] is not None:
            out.append(f"  - our nearest measurement: {r['analog']:.4g} {r.get('analog_unit') or ''} "
                       f"({r['analog_detail']})")
        for o in r.get("others") or []:
            if r["analog"] is not None and o["gpu"] == r.get("analog_gpu"):
                continue  # the nearest measurement above
            out.append(f"  - other hardware, {o['gpu']} (not this claim's; never its status): {o['value']:.4g} "
                       f"{o['unit']} ({o['detail']})")
        p = r["projection"]
        if p:
            val = f"{p['value']:.4g} {p['unit']}" if p["value"] is not None else "none"
            src = f" Datasheets: {'; '.join(p['sources'])}." if p["sources"] else ""
            out.append(f"- **projection** (not a measurement): {val}. {p['method']}.{src}")
    if r["note"] and r["note"] not in (r["detail"] or ""):
        out.append(f"- note: {r['note']}")
    out.append("")
    return out


def _result_files(paths: list[str]) -> tuple[list[Path], list[str]]:
    """Result files named, or found in named folders; a folder's JSON files that are not result
    files (no "schema" key: raw benchmark dumps) are skipped and reported."""
    files, skipped = [], []
    for p in map(Path, paths):
        if not p.is_dir():
            files.append(p)
            continue
        for f in sorted([*p.glob("*.json"), *p.glob("*.json.gz")]):
            try:
                doc = json.loads(read_text(f))
            except UNREADABLE:
                doc = None
            if isinstance(doc, dict) and "schema" in doc:
                files.append(f)
            else:
                skipped.append(f.as_posix())
    return files, skipped


def ledger_rows(db: str | None, results: list[str] | None) -> tuple[list[dict], dict | None]:
    """Rows from --db, or from --results files ingested into a temporary SQLite database
    (then also {"files": [...], "skipped": [...]})."""
    if not results:
        return ledger(db), None
    files, skipped = _result_files(results)
    docs = [(str(f), load_and_validate(f)) for f in files]
    with tempfile.TemporaryDirectory() as d:
        url = f"sqlite:///{Path(d) / 'claims.db'}"
        ingest_docs(open_db(url), docs)
        rows = ledger(url)
        make_engine(url).dispose()
    uncommitted = [Path(name).as_posix() for name, doc in docs if not (doc["run"].get("git") or {}).get("commit")]
    return rows, {"files": [f.as_posix() for f in files], "skipped": skipped, "uncommitted": uncommitted,
                  "args": list(results)}


def claims_cmd(fmt: str = typer.Option("table", "--format", "-f", help="table, json or markdown"),
               db: Optional[str] = typer.Option(None, "--db", help="database URL (default: $KWATCH_DB "
                                                "or sqlite:///kwatch.db)"),
               results: Optional[list[str]] = typer.Option(None, "--results", help="result files or "
                                                           "folders: ingest into a temporary SQLite "
                                                           "database instead of --db"),
               status: Optional[list[str]] = typer.Option(None, "--status", help="only these statuses"),
               out: Optional[str] = typer.Option(None, "--out", "-o", help="write here, not stdout")) -> None:
    """The claims ledger: every attributed figure, its source and its status from stored results."""
    if fmt not in FORMATS:
        raise typer.BadParameter(f"--format must be one of {', '.join(FORMATS)}")
    try:
        rows, sources = ledger_rows(db, results)
    except ResultFileError as exc:
        typer.echo(f"refused: {exc}", err=True)
        raise typer.Exit(2)
    if status:
        rows = [r for r in rows if r["status"] in status]
    if fmt == "json":
        text = json.dumps({"counts": counts(rows), "claims": rows}, indent=1, default=str)
    elif fmt == "markdown":
        text = render_markdown(rows, sources)
    else:
        if out:
            with open(out, "w") as f:
                Console(file=f, width=160).print(render_table(rows))
        else:
            Console().print(render_table(rows))
        return
    if out:
        Path(out).write_text(text + "\n")
        typer.echo(f"wrote {len({r['id'] for r in rows})} claims ({len(rows)} rows, one per GPU that measured a "
                   f"claim) to {out}", err=True)
    else:
        typer.echo(text)
