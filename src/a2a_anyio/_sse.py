"""An incremental ``text/event-stream`` decoder (the WHATWG rules): bytes in, event data out.

It works on the body's bytes as they arrive: lines end with CRLF, LF or CR (a CRLF may be
split across chunks), ``:`` starts a comment, a blank line dispatches the event. Events
without data (or with empty data) are dropped, as is an unfinished event at the end of the body.
Every A2A binding carries everything in an event's data, so the decoder hands out the data
alone; ``event`` names are read and dropped.
"""

from __future__ import annotations

from a2a_anyio._errors import A2AProtocolError

_BOM = b"\xef\xbb\xbf"


class SSEDecoder:
    """Turns body chunks into events' data, refusing any event larger than ``max_event_bytes``.

    The size of an event counts every line of it (comments included) as its bytes arrive, so
    an oversized event is refused after at most one chunk past the limit.
    """

    __slots__ = (
        "_data",
        "_plain",
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
        self._size = 0  # bytes of the current event's complete lines
        self._tail: list[bytes] = []  # an unfinished line, in pieces
        self._tail_size = 0
        self._skip_lf = False  # the last chunk ended with CR: an LF first is its CRLF's end
        self._started = False
        self._plain = False  # between events, nothing pending: the one-step path may be taken

    def feed(self, chunk: bytes) -> list[str]:
        """The data of the events that ``chunk`` completes (often none, often one)."""
        if (
            # The usual chunk: one whole event of one data line (as agents flush them).
            self._plain
            and chunk[:6] == b"data: "
            and chunk.find(10) == len(chunk) - 2
            and chunk[-1] == 10
            and 13 not in chunk  # no CR (an int test is a memchr; a bytes one is a search)
            and 8 < len(chunk) <= self.limit
        ):
            return [chunk[6:-2].decode(errors="replace")]
        if not self._started and chunk:
            self._started = True
            if chunk.startswith(_BOM):
                chunk = chunk[len(_BOM) :]
        if self._skip_lf and chunk:
            self._skip_lf = False
            if chunk[0] == 10:
                chunk = chunk[1:]
        events = self._lines(chunk)
        self._plain = self._started and not (
            self._tail or self._data or self._size or self._skip_lf
        )
        return events

    def _lines(self, chunk: bytes) -> list[str]:
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
        events: list[str] = []
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
                    events.append(data.decode("utf-8", "replace"))
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
        elif name == b"id":
            if b"\0" not in value:
                self.last_id = value.decode("utf-8", "replace")
        elif name == b"retry" and value.isdigit():
            self.retry = int(value)

    def _check(self, size: int) -> None:
        if size > self.limit:
            raise A2AProtocolError(f"an event from {self.source} is larger than {self.limit} bytes")
