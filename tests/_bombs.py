"""Compression bombs, built in milliseconds: each MiB of the payload is one flushed deflate
segment of about 1 KiB, and after the first every segment is the same bytes."""

from __future__ import annotations

import itertools
import zlib
from collections.abc import Iterator

MIB = 1 << 20
_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


def segments(coding: str, mib: int, fill: bytes = b"\0", head: bytes = b"") -> Iterator[bytes]:
    """``head`` and ``mib`` MiB of ``fill`` (one byte), compressed with ``coding`` (gzip or
    deflate), a MiB per piece; the stream is never finished (a reader must stop long before)."""
    c = zlib.compressobj(9, zlib.DEFLATED, _WBITS[coding])
    block = fill * MIB
    first = c.compress(head + block) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(block) + c.flush(zlib.Z_FULL_FLUSH)  # no history: the same each time
    return itertools.chain([first], itertools.repeat(again, mib - 1))


def bomb(coding: str, mib: int, fill: bytes = b"\0", head: bytes = b"") -> bytes:
    """The same, in one piece: about ``mib`` KiB."""
    return b"".join(segments(coding, mib, fill, head))


def stacked_bomb(gib: int = 1) -> bytes:
    """``gib`` GiB of zeros under ``Content-Encoding: gzip, gzip``: a few KiB."""
    c = zlib.compressobj(9, zlib.DEFLATED, _WBITS["gzip"])
    return c.compress(bomb("gzip", gib * 1024)) + c.flush()
