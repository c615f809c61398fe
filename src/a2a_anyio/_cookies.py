"""The cookies agents set: kept per origin, bounded, sent back only to the origin that set them.

Browsers scope a cookie to a host (every port and, unless ``Secure``, plain http too) and let
``Domain`` widen it to sibling hosts. A client that holds credentials for one origin cannot
afford that: here a cookie belongs to the exact (scheme, host, port) that set it, ``Domain`` is
ignored, and the jar is bounded in count and bytes per origin and overall, the oldest cookies
going first. The module is pure: the I/O boundary hands it ``Set-Cookie`` values and asks it for
``Cookie`` headers, giving it the time.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from email.utils import mktime_tz, parsedate_tz

Origin = tuple[str, str, int | None]

MAX_COOKIE_BYTES = 4096
MAX_COOKIES_PER_ORIGIN = 50
MAX_BYTES_PER_ORIGIN = 16 * 1024
MAX_COOKIES = 300
MAX_BYTES = 128 * 1024
#: A Set-Cookie value longer than this is skipped unread (a cookie is at most 4 KiB).
_MAX_LINE = 2 * MAX_COOKIE_BYTES
#: Longer lifetimes are cut to this (RFC 6265bis: 400 days).
_MAX_AGE = 400 * 24 * 3600.0

_NAME = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")  # an RFC 9110 token
#: Printable ASCII but ";": what a Cookie header can carry back unchanged.
_VALUE = re.compile(r"[\x20-\x3a\x3c-\x7e]*")
_DIGITS = re.compile(r"-?[0-9]+")


@dataclass(slots=True)
class _Cookie:
    name: str
    value: str
    path: str
    expires: float | None  # on the caller's clock; None: until the jar goes
    seq: int

    @property
    def size(self) -> int:
        return len(self.name) + len(self.value) + len(self.path)


def default_path(path: str) -> str:
    """The path a cookie without ``Path`` gets (RFC 6265 5.1.4)."""
    if not path.startswith("/") or path.count("/") == 1:
        return "/"
    return path[: path.rindex("/")]


def _path_matches(cookie_path: str, path: str) -> bool:
    if not path.startswith(cookie_path):
        return False
    return (
        len(path) == len(cookie_path) or cookie_path.endswith("/") or path[len(cookie_path)] == "/"
    )


def _date(text: str) -> float | None:
    """Seconds since the epoch of an ``Expires`` date, None when it is not one."""
    try:
        parts = parsedate_tz(text)
        return None if parts is None else float(mktime_tz(parts))
    except (ValueError, OverflowError, TypeError, IndexError):
        return None


def _parse(line: str, request_path: str, now: float) -> _Cookie | None:
    """One ``Set-Cookie`` value, or None when it is malformed or too large to keep."""
    if len(line) > _MAX_LINE:
        return None
    pair, _, attributes = line.partition(";")
    name, eq, value = pair.partition("=")
    name, value = name.strip(" \t"), value.strip(" \t")
    if not eq or not _NAME.fullmatch(name) or not _VALUE.fullmatch(value):
        return None
    path = default_path(request_path)
    max_age: float | None = None
    expires: float | None = None
    for attribute in attributes.split(";"):
        key, _, arg = attribute.partition("=")
        key, arg = key.strip(" \t").lower(), arg.strip(" \t")
        if key == "max-age" and _DIGITS.fullmatch(arg):
            digits = arg.lstrip("-").lstrip("0")
            if arg.startswith("-") or not digits:
                max_age = -1.0
            else:  # never int() of thousands of digits: past 8 it is more than the cap
                max_age = _MAX_AGE if len(digits) > 8 else min(float(digits), _MAX_AGE)
        elif key == "expires" and len(arg) <= 64:
            when = _date(arg)
            if when is not None:
                expires = min(when - time.time(), _MAX_AGE)
        elif key == "path" and arg.startswith("/") and _VALUE.fullmatch(arg):
            path = arg
    lifetime = max_age if max_age is not None else expires
    cookie = _Cookie(name, value, path, None if lifetime is None else now + lifetime, 0)
    return None if cookie.size > MAX_COOKIE_BYTES else cookie


class CookieJar:
    """Cookies by exact origin, bounded: at most ``MAX_COOKIES_PER_ORIGIN`` cookies and
    ``MAX_BYTES_PER_ORIGIN`` bytes per origin, ``MAX_COOKIES`` and ``MAX_BYTES`` in all."""

    def __init__(self) -> None:
        # Per origin, (name, path) -> cookie, oldest first.
        self._origins: dict[Origin, dict[tuple[str, str], _Cookie]] = {}
        self._bytes: dict[Origin, int] = {}
        self._count = 0
        self._total = 0
        self._seq = 0

    def __len__(self) -> int:
        return self._count

    @property
    def size(self) -> int:
        """Bytes held (names, values and paths)."""
        return self._total

    def store(self, origin: Origin, path: str, lines: list[str], now: float) -> None:
        """Keep what the ``Set-Cookie`` values ``lines`` of an answer from ``origin`` (for a
        request to ``path``) set or delete."""
        for line in lines[:MAX_COOKIES_PER_ORIGIN]:
            cookie = _parse(line, path, now)
            if cookie is None:
                continue
            self._remove(origin, (cookie.name, cookie.path))
            if cookie.expires is not None and cookie.expires <= now:
                continue  # a deletion
            self._seq += 1
            cookie.seq = self._seq
            self._origins.setdefault(origin, {})[cookie.name, cookie.path] = cookie
            self._bytes[origin] = self._bytes.get(origin, 0) + cookie.size
            self._count += 1
            self._total += cookie.size
            self._evict(origin)

    def header(self, origin: Origin, path: str, now: float, skip: frozenset[str]) -> str:
        """The ``Cookie`` value for a request to ``path`` on ``origin`` (empty if none),
        leaving out the names in ``skip``."""
        cookies = self._origins.get(origin)
        if not cookies:
            return ""
        expired = [key for key, c in cookies.items() if c.expires is not None and c.expires <= now]
        for key in expired:
            self._remove(origin, key)
        chosen = [c for c in cookies.values() if c.name not in skip and _path_matches(c.path, path)]
        chosen.sort(key=lambda c: (-len(c.path), c.seq))
        return "; ".join(f"{c.name}={c.value}" for c in chosen)

    def _remove(self, origin: Origin, key: tuple[str, str]) -> None:
        cookies = self._origins.get(origin)
        old = cookies.pop(key, None) if cookies is not None else None
        if old is None:
            return
        self._bytes[origin] -= old.size
        self._count -= 1
        self._total -= old.size
        if not cookies:
            del self._origins[origin], self._bytes[origin]

    def _evict(self, origin: Origin) -> None:
        cookies = self._origins[origin]
        while cookies and (
            len(cookies) > MAX_COOKIES_PER_ORIGIN or self._bytes[origin] > MAX_BYTES_PER_ORIGIN
        ):
            self._remove(origin, next(iter(cookies)))
        while self._count > MAX_COOKIES or self._total > MAX_BYTES:
            oldest = min(self._origins, key=lambda o: next(iter(self._origins[o].values())).seq)
            self._remove(oldest, next(iter(self._origins[oldest])))
