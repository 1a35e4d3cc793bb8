"""Every widget's state in the URL, so that a link reproduces the view.

On a widget's first run in a browser session (its key not yet in session state) its value is read
from `st.query_params[param]` and checked against what the widget can hold; a value it cannot hold
is replaced by the default with a one-line warning naming both. After each run the widget's value is
written back, defaults included, so the address bar always names the whole view. Later runs leave the
widget's own state alone: a value the URL held before its options changed (another widget narrowed
them) is then not a bad link and is not reported. Lists are repeated keys (`?impl=a&impl=b`; `impl=a,b`
is read too); an empty list is `?param=` where the default is not empty, else no parameter.
"""
from __future__ import annotations

import math
from difflib import get_close_matches
from typing import Any, Callable, Optional, Sequence

import streamlit as st

from db.escape import md_code, md_text

TRUE, FALSE = ("1", "true", "yes", "on"), ("0", "false", "no", "off")
# Every query parameter each page reads, by the page's URL path (Health is the root, ""); docs/dashboard.md
# lists them. A widget a view shows only sometimes (`strength`, `page`) is still known.
PARAMS = {
    "": ("tier", "technique"),
    "alerts": ("technique", "hw", "age", "state"),
    "trends": ("technique", "case", "metric", "impl", "hw", "sw", "x", "group", "tier", "log"),
    "compare": ("by", "baseline", "candidate", "hw", "technique", "status", "page"),
    "runs": ("tier", "hw"),
    "numerics": ("sweep_run", "metric", "scheme", "exp_run", "sampling"),
    "retrieval": ("needle_run", "mqar_run", "metric", "strength", "mqar_metric", "density"),
    "claims": ("gpu", "status", "measured_by", "section"),
    "cost-model": ("prompt", "generated", "attended"),
    "hardware": ("gpu_a", "gpu_b", "commit"),
}


def _same(a: Any, b: Any) -> bool:
    return str(a) == str(b)


def choose(raw: Optional[str], options: Sequence, default: Any) -> tuple[Any, Optional[str]]:
    """(the option whose text is `raw`, None); (default, raw) when `raw` names no option; (default, None)
    without `raw`."""
    if raw is None:
        return default, None
    for o in options:
        if _same(o, raw):
            return o, None
    return default, raw


def choose_many(raws: list[str], options: Sequence, default: Sequence) -> tuple[list, list[str]]:
    """(the options named by `raws` in the options' order, the names that are no option); `default` when
    `raws` is empty, [] for the explicit empty list `[""]`."""
    if not raws:
        return list(default), []
    if all(r == "" for r in raws):
        return [], []
    by_text = {str(o): o for o in options}
    names: list[str] = []
    for r in raws:
        names.extend([r] if r in by_text else [p for p in r.split(",") if p != ""])
    bad = [n for n in names if n not in by_text]
    want = {n for n in names if n in by_text}
    return [o for o in options if str(o) in want], bad


def as_bool(raw: Optional[str], default: bool) -> tuple[bool, Optional[str]]:
    """(`raw` read as a flag: 1/true/yes/on or 0/false/no/off, None), else (default, raw)."""
    if raw is None:
        return default, None
    r = raw.strip().lower()
    if r in TRUE or r in FALSE:
        return r in TRUE, None
    return default, raw


def as_number(raw: Optional[str], default: float, lo: Optional[float] = None, hi: Optional[float] = None,
              cast: Callable = float) -> tuple[Any, Optional[str]]:
    """(`raw` as a finite number `cast` within [lo, hi], None), else (default, raw)."""
    if raw is None:
        return default, None
    try:
        v = cast(raw)
    except (TypeError, ValueError):
        return default, raw
    if not math.isfinite(float(v)) or (lo is not None and v < lo) or (hi is not None and v > hi):
        return default, raw
    return v, None


def notice(label: str, param: str, bad: Any, used: Any) -> str:
    """The one-line warning for a URL value a widget cannot hold."""
    used_text = ", ".join(map(str, used)) if isinstance(used, (list, tuple)) else used
    return (f"The link's `{param}` = {md_code(bad, table=False)} is not one of the choices of "
            f"\"{md_text(label, 80)}\": showing {md_code(used_text if used_text not in ('', None) else '(none)', table=False)} "
            "instead.")


def unknown_names(names: Sequence[str], known: Sequence[str]) -> list[str]:
    """The names in `names` (a link's parameters) that are not in `known`, in link order, once each."""
    return [n for i, n in enumerate(names) if n not in known and n not in names[:i]]


def names_notice(unknown: Sequence[str], known: Sequence[str]) -> str:
    """The one-line warning for link parameters a page does not read (a misspelled name), with the
    closest known name where one is close, and the page's parameters."""
    def one(n: str) -> str:
        near = get_close_matches(n, known, n=1, cutoff=0.6)
        return md_code(n, table=False) + (f" (did you mean {md_code(near[0], table=False)}?)" if near else "")

    return (f"The link's parameter{'s' if len(unknown) > 1 else ''} {', '.join(one(n) for n in unknown)} "
            f"{'are' if len(unknown) > 1 else 'is'} not read by this page and {'were' if len(unknown) > 1 else 'was'} "
            f"dropped; its parameters: {', '.join(md_code(k, table=False) for k in known) or '(none)'}.")


def check_names(url_path: str) -> None:
    """Warn (one line) about the link's parameters the page at `url_path` does not read, and drop them
    from the URL, so that a misspelled name (`?technqiue=`) is never silently ignored."""
    known = PARAMS.get(url_path, ())
    unknown = unknown_names(list(st.query_params.keys()), known)
    if unknown:
        st.warning(names_notice(unknown, known))
        for n in unknown:
            del st.query_params[n]


def _raw(param: str) -> Optional[str]:
    vals = st.query_params.get_all(param)
    return vals[-1] if vals else None


def _fresh(key: str) -> bool:
    return key not in st.session_state


def write(param: str, value: Any) -> None:
    """Put `value` (a list as repeated keys, [] as `param=`) into the URL, if it differs from what is there."""
    if isinstance(value, (list, tuple)):
        want = [str(v) for v in value] or [""]
    else:
        want = [str(value)]
    if st.query_params.get_all(param) != want:
        st.query_params[param] = want if len(want) > 1 else want[0]


def choice(widget: Callable, label: str, options: Sequence, param: str, default: Any = None,
           key: Optional[str] = None, **kw) -> Any:
    """`widget` (st.selectbox, st.radio, ...) over `options`, its value from and into `?param=`.
    `default`: the value without (or with a bad) URL value, else the first option."""
    key = key or param
    options = list(options)
    fallback = default if any(_same(default, o) for o in options) else (options[0] if options else None)
    value = fallback
    if _fresh(key) and options:
        value, bad = choose(_raw(param), options, fallback)
        if bad is not None:
            st.warning(notice(label, param, bad, kw.get("format_func", str)(fallback)))
    index = next((i for i, o in enumerate(options) if _same(o, value)), 0) if options else None
    out = widget(label, options, index=index, key=key, **kw)
    if out is not None:
        write(param, out)
    return out


def selectbox(label: str, options: Sequence, param: str, default: Any = None, key: Optional[str] = None,
              **kw) -> Any:
    """st.selectbox bound to `?param=`."""
    return choice(st.selectbox, label, options, param, default, key, **kw)


def radio(label: str, options: Sequence, param: str, default: Any = None, key: Optional[str] = None,
          **kw) -> Any:
    """st.radio bound to `?param=`."""
    return choice(st.radio, label, options, param, default, key, **kw)


def multiselect(label: str, options: Sequence, param: str, default: Sequence = (), key: Optional[str] = None,
                **kw) -> list:
    """st.multiselect bound to repeated `?param=a&param=b` (`?param=`: none chosen)."""
    key = key or param
    options = list(options)
    value = start = [o for o in options if any(_same(o, d) for d in default)]
    if _fresh(key):
        value, bad = choose_many(st.query_params.get_all(param), options, start)
        if bad:
            fmt = kw.get("format_func", str)
            st.warning(notice(label, param, ", ".join(bad), [fmt(v) for v in value] or "(none)"))
    out = st.multiselect(label, options, default=value, key=key, **kw)
    if out or start:
        write(param, out)
    elif param in st.query_params:  # none chosen is the default: the link needs no `param=`
        del st.query_params[param]
    return out


def toggle(label: str, param: str, default: bool = False, key: Optional[str] = None, widget: Callable = None,
           **kw) -> bool:
    """st.toggle (or `widget`, e.g. st.checkbox) bound to `?param=1|0`."""
    key = key or param
    value = default
    if _fresh(key):
        value, bad = as_bool(_raw(param), default)
        if bad is not None:
            st.warning(notice(f"{label} (1 or 0)", param, bad, "1" if default else "0"))
    out = (widget or st.toggle)(label, value=value, key=key, **kw)
    write(param, "1" if out else "0")
    return out


def number(label: str, param: str, default: float, min_value: Optional[float] = None,
           max_value: Optional[float] = None, key: Optional[str] = None, widget: Callable = None, **kw):
    """st.number_input (or `widget`, e.g. st.slider) bound to `?param=N`, N within [min_value, max_value];
    an int default makes it an integer input."""
    key = key or param
    cast = int if isinstance(default, int) and not isinstance(default, bool) else float
    value = default
    if _fresh(key):
        value, bad = as_number(_raw(param), default, min_value, max_value, cast)
        if bad is not None:
            st.warning(notice(f"{label} ({min_value} to {max_value})", param, bad, default))
    out = (widget or st.number_input)(label, min_value=min_value, max_value=max_value, value=value, key=key, **kw)
    write(param, out)
    return out
