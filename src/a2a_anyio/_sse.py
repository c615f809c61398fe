"""An incremental ``text/event-stream`` decoder (the WHATWG rules): bytes in, events out.

It works on the body's bytes as they arrive: lines end with CRLF, LF or CR (a CRLF may be
split across chunks), ``:`` starts a comment, a blank line dispatches the event. Events
without data (or with empty data) are dropped, as is an unfinished event at the end of the body.
"""

from __future__ import annotations

from dataclasses import dataclass

from a2a_anyio._errors import A2AProtocolError

_BOM = b"\xef\xbb\xbf"


@dataclass(slots=True)
class SSEEvent:
    """One server-sent event: its ``event`` name and its ``data`` (data lines joined by \\n)."""

    event: str
    data: str


class SSEDecoder:
    """Turns body chunks into events, refusing any event larger than ``max_event_bytes``.

    The size of an event counts every line of it (comments included) as its bytes arrive, so
    an oversized event is refused after at most one chunk past the limit.
    """

    __slots__ = (
        "_data",
        "_event",
        "_size",
        "_skip_lf",
        "_started",
        "_tail",
        "_tail_size",
        "last_id",
        "limit",
        "retry",
        "source",
    )

    def __init__(self, max_event_bytes: int, source: str = "the server") -> None:
        self.limit = max_event_bytes
        self.source = source
        #: The last ``id`` field seen, and the last ``retry`` (ms): what a reconnect would use.
        self.last_id: str | None = None
        self.retry: int | None = None
        self._data: list[bytes] = []
        self._event = b""
        self._size = 0  # bytes of the current event's complete lines
        self._tail: list[bytes] = []  # an unfinished line, in pieces
        self._tail_size = 0
        self._skip_lf = False  # the last chunk ended with CR: an LF first is its CRLF's end
        self._started = False

    def feed(self, chunk: bytes) -> list[SSEEvent]:
        """The events that ``chunk`` completes (often none, often one)."""
        if not self._started and chunk:
            self._started = True
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == 10:
                chunk = chunk[1:]
        if (
            # The usual chunk: one whole event of one data line (as agents flush them).
            chunk[:6] == b"data: "
            and chunk.find(b"\n") == len(chunk) - 2
            and chunk[-1:] == b"\n"
            and not (self._tail or self._data or self._event)
            and 13 not in chunk  # no CR (an int test is a memchr; a bytes one is a search)
            and 8 < len(chunk) <= self.limit
        ):
            self._size = 0
            return [SSEEvent("message", chunk[6:-2].decode(errors="replace"))]
        if 10 not in chunk and 13 not in chunk:
            # No line ends here: keep the piece (joining on every chunk would be quadratic).
            if chunk:
                self._tail.append(chunk)
                self._tail_size += len(chunk)
                self._check(self._size + self._tail_size)
            return []
        if self._tail:
            self._tail.append(chunk)
            chunk = b"".join(self._tail)
            self._tail.clear()
        if 13 in chunk:
            self._skip_lf = chunk[-1] == 13
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        lines = chunk.split(b"\n")
        rest = lines.pop()
        if rest:
            self._tail.append(rest)
        self._tail_size = len(rest)
        events: list[SSEEvent] = []
        size = self._size
        for line in lines:
            if line:
                size += len(line) + 1
                if size > self.limit:
                    self._check(size)
                self._field(line)
                continue
            size = 0
            if self._data:
                data = self._data[0] if len(self._data) == 1 else b"\n".join(self._data)
                self._data.clear()
                if data:  # an event without data says nothing to a client
                    name = self._event.decode("utf-8", "replace") if self._event else "message"
                    events.append(SSEEvent(name, data.decode("utf-8", "replace")))
            self._event = b""
        self._size = size
        self._check(size + self._tail_size)
        return events

    def _field(self, line: bytes) -> None:
        if line[0] == 58:  # ":" a comment (keep-alive)
            return
        name, _, value = line.partition(b":")
        if value[:1] == b" ":
            value = value[1:]
        if name == b"data":
            self._data.append(value)
        elif name == b"event":
            self._event = value
        elif name == b"id":
            if b"\0" not in value:
                self.last_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self.retry = int(value)

    def _check(self, size: int) -> None:
        if size > self.limit:
            raise A2AProtocolError(f"an event from {self.source} is larger than {self.limit} bytes")
