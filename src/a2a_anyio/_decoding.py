"""``Content-Encoding`` undone in bounded steps: gzip and deflate, stacked too (no I/O).

httpx decodes a response one network read at a time, each in a single step with no limit on
what it makes: a 64 KiB read of gzip can become 64 MiB, and stacked codings multiply that. It
has no bounded mode, so the client reads the raw bytes and undoes the codings here, a step of at
most ``step`` bytes at a time, and every size limit counts decoded bytes. This is a decoder
httpx lacks, not a second one: both sides use zlib. The push receiver decodes posts with it too.
"""

from __future__ import annotations

import zlib
from collections.abc import Iterator

from a2a_anyio._errors import shown

#: What a request may say it accepts: the codings decoded here (not br or zstd).
ACCEPT_ENCODING = "gzip, deflate"
#: The most decoded bytes one step makes.
STEP = 64 * 1024
#: More codings than this on one body are refused.
MAX_CODINGS = 5
#: The most bytes a coding under another may make that the layers after it turn into nothing.
MAX_IDLE_BYTES = 1024 * 1024

_WBITS = {"gzip": 16 + zlib.MAX_WBITS, "x-gzip": 16 + zlib.MAX_WBITS, "deflate": zlib.MAX_WBITS}


class UndecodableBody(Exception):
    """A body that cannot be decoded; ``unsupported`` when its coding is not one known here.

    The callers word it for their users (``A2AProtocolError``, a 400 or 415 answer)."""

    def __init__(self, reason: str, *, unsupported: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.unsupported = unsupported


def codings(header: str) -> list[str]:
    """The codings a ``Content-Encoding`` value names, in the order applied (identity left
    out); ``UndecodableBody`` for one not known here or more than ``MAX_CODINGS``."""
    names = [c.strip().lower() for c in header.split(",")]
    names = [c for c in names if c not in ("", "identity")]
    unknown = [c for c in names if c not in _WBITS]
    if unknown:
        raise UndecodableBody(f"unsupported Content-Encoding {shown(unknown[0])}", unsupported=True)
    if len(names) > MAX_CODINGS:
        raise UndecodableBody(f"more than {MAX_CODINGS} content codings", unsupported=True)
    return names


class BodyDecoder:
    """Undoes the codings of a ``Content-Encoding`` header as the body arrives.

    ``feed(data)`` yields the decoded bytes in pieces of at most ``step``; what a step leaves
    of its input waits for the next one (zlib's ``unconsumed_tail``), so no read is expanded
    in one go, whatever its ratio, and a stack of codings holds at most a step per layer. A
    coding under another may make at most ``MAX_IDLE_BYTES`` that the rest turns into nothing.
    ``end()`` checks that every compressed stream was complete.
    """

    __slots__ = ("_codings", "_fed", "_full", "_idle", "_input", "_layers", "_step", "_tails")

    def __init__(self, header: str, step: int = STEP) -> None:
        self._codings = codings(header)[::-1]  # the last one applied is undone first
        self._layers = [zlib.decompressobj(_WBITS[c]) for c in self._codings]
        self._tails = [b""] * len(self._layers)
        self._full = [False] * len(self._layers)  # a step was cut short: output may be pending
        self._fed = [False] * len(self._layers)
        self._idle = 0
        self._step = step
        self._input = b""

    @property
    def identity(self) -> bool:
        """True when there is nothing to undo."""
        return not self._layers

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The decoded bytes of ``data`` (and of what earlier input left), step by step."""
        if not self._layers:
            if data:
                yield data
            return
        self._input = data
        last = len(self._layers) - 1
        while True:
            out = self._pull(last)
            if not out:
                return
            self._idle = 0
            yield out

    def _pull(self, i: int) -> bytes:
        """At most a step out of layer ``i``; empty when it needs input that has not come."""
        layer = self._layers[i]
        while True:
            data = self._tails[i]
            if not data and not self._full[i]:
                if i == 0:
                    data, self._input = self._input, b""
                else:
                    data = self._pull(i - 1)
                    self._idle += len(data)
                    if self._idle > MAX_IDLE_BYTES:
                        raise UndecodableBody(
                            f"the {self._codings[i]} body makes nothing of "
                            f"{MAX_IDLE_BYTES} bytes or more"
                        )
                if not data:
                    return b""
                self._fed[i] = True
            try:
                out = layer.decompress(data, self._step)
            except zlib.error as exc:
                raise UndecodableBody(
                    f"the {self._codings[i]} body cannot be decoded: {exc}"
                ) from None
            if layer.unused_data:
                raise UndecodableBody(f"data after the end of the {self._codings[i]} body")
            self._tails[i] = layer.unconsumed_tail
            self._full[i] = len(out) == self._step
            if out:
                return out

    def end(self) -> None:
        """The body ended: ``UndecodableBody`` if a compressed stream in it was cut short.
        An empty body is empty whatever its coding (a 204 or 304 may carry the header)."""
        for coding, layer, fed in zip(self._codings, self._layers, self._fed, strict=True):
            if fed and not layer.eof:
                raise UndecodableBody(f"the {coding} body is cut short")
