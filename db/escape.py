"""User-controlled text (technique, impl, case and metric names, error messages, who/why, branch names)
made inert for the format it is written into: GitHub Markdown, HTML, Plotly labels.

Names are stored as given; every report escapes them where it writes them. In Markdown a name goes
into a code span whose fence is longer than any run of backticks inside it (so a backtick cannot end
it; HTML, links and @mentions in a code span are literal), free text is backslash-escaped with
mentions and bare links broken by a zero-width space; everything is cut to a bounded length.
"""
from __future__ import annotations

import html
import re

MAX_NAME = 120  # characters of a name shown in a report (the JSON report keeps the whole name)
MAX_TEXT = 300
ZWSP = "\u200b"
# what can make markup (HTML, links, images, code, table cells, math); emphasis (* _ ~) stays: cosmetic
_MD_SPECIAL = re.compile(r"([\\`\[\]<|&$])")
_TICKS = re.compile(r"`+")


def clip(text, limit: int = MAX_NAME) -> str:
    """str(text) on one line, at most `limit` characters (an ellipsis marks a cut)."""
    s = " ".join(str("" if text is None else text).split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def md_code(name, table: bool = True, limit: int = MAX_NAME) -> str:
    """name as a Markdown code span that nothing inside can end; `table`: its pipes escaped for a
    GitHub table cell (where `\\|` is read as a pipe, also in code)."""
    s = clip(name, limit)
    fence = "`" * (max((len(m) for m in _TICKS.findall(s)), default=0) + 1)
    pad = " " if s.startswith("`") or s.endswith("`") or not s else ""
    if table:
        s = s.replace("|", "\\|")
    return f"{fence}{pad}{s}{pad}{fence}"


def md_text(text, limit: int = MAX_TEXT) -> str:
    """text as literal Markdown (also safe in a table cell): punctuation backslash-escaped, @mentions
    and bare links broken so that GitHub neither notifies nor links."""
    s = _MD_SPECIAL.sub(r"\\\1", clip(text, limit))
    s = s.replace("@", "@" + ZWSP).replace("://", ":" + ZWSP + "//")
    return re.sub(r"(?i)\b(www)\.", lambda m: m.group(1) + ZWSP + ".", s)


def html_text(text, limit: int | None = None) -> str:
    """text escaped for HTML element content and attribute values."""
    return html.escape(clip(text, limit) if limit else str(text), quote=True)


def plotly_text(text, limit: int = MAX_NAME) -> str:
    """text for a Plotly trace name, hover text, tick or title: Plotly reads a subset of HTML there
    (<a href>, <b>, <br>, ...); escaped, it shows the characters."""
    return html.escape(clip(text, limit), quote=False)
