"""Database URLs as shown to people: credentials masked, in a URL or anywhere inside a message."""
from __future__ import annotations

import logging
import re
import traceback

MASK = "***"
# query parameters that carry a secret in libpq / SQLAlchemy URLs (?password=..., ?sslpassword=...)
SECRET_PARAMS = ("password", "passwd", "pwd", "secret", "token", "key")
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@\s'\"`]*):(?P<pw>[^\s'\"`]*)@")  # to the last @
_PARAM = re.compile(r"(?P<name>[?&;](?:[A-Za-z_]*(?:%s)[A-Za-z_]*))=(?P<value>[^&;\s'\"`]*)" % "|".join(SECRET_PARAMS),
                    re.IGNORECASE)


def mask_url(url: str | None) -> str:
    """'postgresql://kw:s3cret@db/kw?sslpassword=x' -> 'postgresql://kw:***@db/kw?sslpassword=***'."""
    return scrub(url or "")


def scrub(text: str) -> str:
    """text with the password of every URL in it (user:password@ and secret query parameters) masked;
    for error messages and log lines that may quote a URL."""
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{m['user']}:{MASK}@", text)
    return _PARAM.sub(lambda m: f"{m['name']}={MASK}", text)


class ScrubFilter(logging.Filter):
    """A logging filter that masks database passwords in a record's message and traceback."""

    def filter(self, record: logging.LogRecord) -> bool:
        record.msg, record.args = scrub(record.getMessage()), ()
        if record.exc_info:
            record.exc_text = scrub("".join(traceback.format_exception(*record.exc_info))).rstrip()
            record.exc_info = None
        return True
