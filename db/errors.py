"""One line for what a user got wrong (a name, a file, a URL, a database), for the CLI and the dashboard."""
from __future__ import annotations

import re

from sqlalchemy import exc as sa_exc

from db.engine import NoDatabase
from db.urls import scrub
from db.validate import ResultFileError, shorten


def _first_line(text: str) -> str:
    line = next((x.strip() for x in str(text).splitlines() if x.strip()), "")
    return shorten(line.removeprefix("connection failed: "))


def user_error(exc: BaseException) -> str | None:
    """The one-line message for an exception a user caused, or None for a bug (let it raise)."""
    if isinstance(exc, (NoDatabase, ResultFileError)):
        return _first_line(str(exc))
    if isinstance(exc, sa_exc.NoSuchModuleError):
        return f"unknown database kind in the URL ({_first_line(exc)}); use sqlite:///FILE or postgresql://..."
    if isinstance(exc, sa_exc.ArgumentError):
        return f"not a database URL: {_first_line(exc)}"
    if isinstance(exc, sa_exc.DBAPIError):
        orig = _first_line(exc.orig) if exc.orig is not None else _first_line(exc)
        if "no such table" in orig or "does not exist" in orig and "relation" in orig:
            return f"the database has no KernelWatch tables or an older schema ({orig})"
        if isinstance(exc, sa_exc.OperationalError):
            return f"cannot open the database: {orig}"
        return f"database error: {orig}"
    if isinstance(exc, (FileNotFoundError, PermissionError, IsADirectoryError, NotADirectoryError)):
        return f"{exc.filename}: {exc.strerror}" if exc.filename else _first_line(exc)
    if isinstance(exc, KeyError) and exc.args and isinstance(exc.args[0], str) and " " in exc.args[0]:
        return shorten(exc.args[0])  # "unknown technique 'x'; known: ..." (a bare key is a bug, not a message)

    return None


_BARE_PATH = re.compile(r"(?<![\w:/])/[^\s'\"]+")  # a file path of the server (not inside a URL)


def page_message(exc: BaseException) -> str:
    """What a dashboard page shows when it cannot be drawn: the user's mistake in one line, else a
    pointer to the server log (where the traceback goes); never a server path or a traceback."""
    message = user_error(exc)
    if message is None:
        return "This page could not be drawn (an internal error); the details are in the dashboard's log."
    return f"This page could not read the database: {_BARE_PATH.sub('<path>', scrub(message))}"
