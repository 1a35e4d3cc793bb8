"""Database URLs as shown to people: credentials masked, in a URL or anywhere inside a message.

A URL's password may be written raw (any character, `@`, `%`, `/` and spaces included) or
percent-encoded; `normalize` gives the one form every part of KernelWatch uses (user and password
percent-encoded) and remembers the password, so that `scrub` masks it wherever a message quotes it.
A password in which every `%` starts a `%XX` escape is read as percent-encoded (raw `%41` is `A`).
"""
from __future__ import annotations

import logging
import re
import traceback
from urllib.parse import quote, unquote

MASK = "***"
# query parameters that carry a secret in libpq / SQLAlchemy URLs (?password=..., ?sslpassword=...)
SECRET_PARAMS = ("password", "passwd", "pwd", "secret", "token", "key")
# scheme://user:password@ -- the password up to the first '@' on its line (a raw '@' in a known
# password is masked before, through the passwords `normalize` has seen)
_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<user>[^:/@\s'\"`]*):(?P<pw>[^@\n]{0,512}?)@")
_PARAM = re.compile(r"(?P<name>[?&;](?:[A-Za-z_]*(?:%s)[A-Za-z_]*))=(?P<value>[^&;\s'\"`]*)" % "|".join(SECRET_PARAMS),
                    re.IGNORECASE)
_SCHEME = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)(?P<rest>.*)", re.DOTALL)
_ESCAPED = re.compile(r"%(?![0-9A-Fa-f]{2})")  # a '%' that starts no %XX escape: the text is raw
_SEEN: set[str] = set()  # passwords of the URLs normalized in this process, in every form written


def _encode(part: str) -> str:
    """part percent-encoded once: decoded first when it is already percent-encoded."""
    return quote(part if _ESCAPED.search(part) else unquote(part), safe="")


def normalize(url: str) -> str:
    """url with its user and password percent-encoded ('pg://u:p@ss w@h/d' -> 'pg://u:p%40ss%20w@h/d');
    the userinfo ends at the last '@'. URLs without a password come back unchanged."""
    m = _SCHEME.match(url or "")
    if m is None or "@" not in m["rest"]:
        return url
    userinfo, host = m["rest"].rsplit("@", 1)
    user, colon, password = userinfo.partition(":")
    if not colon or ("/" in user):  # no password here ('db/kw?x=a@b'): leave the URL as written
        return url
    encoded = _encode(password)
    remember(unquote(encoded), password, encoded)
    return f"{m['scheme']}{_encode(user)}:{encoded}@{host}"


def remember(*secrets: str) -> None:
    """Mask these strings (and their percent-encoded forms) in every later `scrub`."""
    for s in secrets:
        for form in (s, quote(s, safe=""), quote(s, safe=" ")):
            if len(form) >= 4:
                _SEEN.add(form)


def mask_url(url: str | None) -> str:
    """'postgresql://kw:s3cret@db/kw?sslpassword=x' -> 'postgresql://kw:***@db/kw?sslpassword=***'."""
    return scrub(normalize(url or ""))


def scrub(text: str) -> str:
    """text with the password of every URL in it (user:password@ and secret query parameters) masked;
    for error messages and log lines that may quote a URL."""
    for secret in sorted(_SEEN, key=len, reverse=True):
        text = text.replace(secret, MASK)
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
