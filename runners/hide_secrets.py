"""Hide this process's secrets from other processes before it runs code under test (Linux).

/proc/<pid>/environ and /proc/<pid>/cmdline read the memory the kernel handed the process at exec,
which Python copied at start-up: the variables and URL passwords found there are overwritten in place
(same length, '*'), and set again through setenv for the libraries of this process (libpq reads
PGPASSWORD), whose copies live elsewhere. The process is then made non-dumpable, so a process of the
same user without CAP_SYS_PTRACE cannot read its memory (/proc/<pid>/mem) either.
Code under test also runs in namespaces of its own where the host allows it (runners.sandbox).
"""
from __future__ import annotations

import ctypes
import os
import re

# a variable named like a credential, or one holding a database or broker URL
SECRET_NAME = re.compile(r"TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|_KEY$|^KEY|API_?KEY|COOKIE|SESSION|^KWATCH_DB$|"
                         r"^KWATCH_BROKER$|DATABASE_URL|_DSN$|_URL$|_URI$", re.IGNORECASE)
_PARAM = re.compile(rb"(?i)[?&;][a-z_]*(?:password|passwd|pwd|secret|token|key)[a-z_]*=([^&;]*)")
_PR_SET_DUMPABLE = 4
_done = False


def url_password_spans(arg: bytes) -> list[tuple[int, int]]:
    """Byte spans of the password(s) in a URL-like argument: user:PASSWORD@ (to the last '@') and
    secret query parameters (?password=...)."""
    spans = [m.span(1) for m in _PARAM.finditer(arg)]
    scheme = arg.find(b"://")
    if scheme >= 0 and b"@" in arg[scheme + 3:]:
        at = arg.rindex(b"@")
        colon = arg.find(b":", scheme + 3, at)
        if colon >= 0:
            spans.append((colon + 1, at))
    return spans


def _masked(block: bytes, env: bool) -> bytes:
    """block (NUL-separated strings) with secret values and URL passwords replaced by '*'."""
    out = []
    for item in block.split(b"\0"):
        name, eq, value = item.partition(b"=") if env else (b"", b"", item)
        if env and eq and SECRET_NAME.search(name.decode(errors="replace")):
            item = name + eq + b"*" * len(value)
        else:
            buf = bytearray(item)
            for a, b in url_password_spans(bytes(item)):
                buf[a:b] = b"*" * (b - a)
            item = bytes(buf)
        out.append(item)
    return b"\0".join(out)


def _rewrite(start: int, path: str, env: bool) -> list[str]:
    """Overwrite the block at address `start` (what /proc/self/<path> shows); names changed (env)."""
    with open(f"/proc/self/{path}", "rb") as f:
        old = f.read()
    new = _masked(old, env)
    if new != old:
        ctypes.memmove(start, new, len(new))
    return [o.split(b"=", 1)[0].decode(errors="replace") for o, n in zip(old.split(b"\0"), new.split(b"\0"))
            if o != n]


def hide_own_secrets() -> bool:
    """Mask this process's secret variables and URL passwords in its environ and cmdline, and make
    it non-dumpable; True when done (Linux), False where /proc is not there to read."""
    global _done
    if _done:
        return True
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
        # fields after "(comm)": arg_start, arg_end, env_start, env_end are the 48th-51st of the line
        arg_start, env_start = int(fields[45]), int(fields[47])
    except (OSError, IndexError, ValueError):
        return False
    _rewrite(arg_start, "cmdline", env=False)
    for name in _rewrite(env_start, "environ", env=True):
        if name in os.environ:
            os.putenv(name, os.environ[name])  # libc's copy for this process's libraries, off the block
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass
    _done = True
    return True
