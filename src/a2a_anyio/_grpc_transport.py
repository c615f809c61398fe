"""The gRPC transport: a codec's requests as gRPC calls over HTTP/2, on h2 (sans-IO HTTP/2)
and anyio's streams. Loaded only by a client that calls a gRPC interface (the ``grpc``
extra); the only module that imports h2.

One HTTP/2 connection per origin carries a client's calls (``GrpcTransport``). No task runs
beside the callers: a call that waits for its answer reads the socket itself, under the
connection's read lock, and hands what it reads to the calls it belongs to, so a connection
needs no task group that outlives a call, and a caller's errors are never wrapped in one.
The server's ``MAX_CONCURRENT_STREAMS`` is respected (a call waits for a stream); after a
GOAWAY or a lost connection the next call opens a new one. TLS is anyio's, with ALPN
``h2`` (the client's ``verify`` and client certificate).

A call sends one length-prefixed message; each message of the answer is checked against
its limit by its length prefix before it is read whole; a compressed message is decoded
(gzip, deflate: bounded, ``_decoding``) or refused; the call's status comes from the
trailers (or from the headers of a trailers-only answer), and an answer that ends without
one was cut. The caller's cancel scope is the deadline: what remains of it goes to the
server as ``grpc-timeout``, and a call left before its end resets its stream
(``RST_STREAM(CANCEL)``, sent under a shield). Every failure is an ``A2AClientError``: no
exception of h2 reaches the caller.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import math
import ssl
import struct
import time
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple
from urllib.parse import urlsplit

import anyio
import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from anyio.abc import ByteStream
from anyio.streams.tls import TLSAttribute, TLSStream
from h2.errors import ErrorCodes
from hpack import NeverIndexedHeaderTuple
from hpack.exceptions import HPACKError

from a2a_anyio._auth import Credentials, MutualTLS, Origin, merged, origin_of
from a2a_anyio._bindings.base import GrpcStatus, StreamStatus, WireRequest
from a2a_anyio._decoding import BodyDecoder, UndecodableBody
from a2a_anyio._errors import (
    A2AAuthError,
    A2AClientError,
    A2AConnectionError,
    A2AHTTPError,
    A2AProtocolError,
    A2ATimeoutError,
    ErrorContext,
    clipped,
)
from a2a_anyio._http import HttpTransport, VerifyTypes, ssl_context
from a2a_anyio._network import connect_tcp
from a2a_anyio._observe import about, redacted
from a2a_anyio._sent import request_sent
from a2a_anyio._transport_rules import StreamTimeouts, renew

#: Each stream's receive window: what a call's unread messages may hold.
WINDOW = 1 << 20
CONNECTION_WINDOW = 1 << 24
#: Bytes handed back to the windows together (h2 sends a WINDOW_UPDATE only once half a
#: window is taken anyway): a stream's messages its caller has taken, and on the
#: connection the bytes of finished calls; small messages and calls call into h2 once
#: per this many bytes, not each.
CREDIT = 16 * 1024
#: The largest header list (headers or trailers) accepted.
MAX_HEADER_LIST = 64 * 1024
#: How long a cancelled call may spend telling the server (RST_STREAM), and a closing
#: connection its GOAWAY.
RESET_GRACE = 1.0
_READ = 65536
_PREFIX = struct.Struct(">BI")
#: gRPC statuses read here.
OK, UNAUTHENTICATED = GrpcStatus(0), GrpcStatus(16)
#: Headers HTTP/2 forbids, and those the transport sets: never taken from credentials.
_DROPPED = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "upgrade", "te",
     "host", "content-type", "grpc-timeout", "user-agent"}
)  # fmt: skip
#: Headers kept out of HPACK's table (never indexed: their values cannot be guessed by
#: the size of what is sent), as h2 would keep them if it normalized what is sent.
_SECRET = frozenset({"authorization", "proxy-authorization"})
_LOST = (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError, OSError)
_H2_ERRORS = (h2.exceptions.H2Error, HPACKError)


class GrpcReply(NamedTuple):
    """A whole gRPC answer: ``status`` is its gRPC status, ``headers`` its headers and
    trailers (``-bin`` values as sent, base64), ``content`` its one message."""

    status: GrpcStatus
    headers: Mapping[str, str]
    content: bytes


def grpc_timeout(seconds: float) -> str:
    """The ``grpc-timeout`` value for ``seconds``, rounded up (at most 8 digits): in the
    coarsest unit that says it at most 1 % over, else the finest that fits. The calls of
    one client timeout then send the same value, which HPACK sends as an index into its
    table instead of a new literal each call; the call itself still ends on time (its
    cancel scope, and the reset that tells the server)."""
    found = ""
    for unit, scale in (("u", 1e6), ("m", 1e3), ("S", 1.0), ("M", 1 / 60), ("H", 1 / 3600)):
        value = max(1, math.ceil(seconds * scale))
        if value < 100_000_000 and (not found or value <= seconds * scale * 1.01):
            found = f"{value}{unit}"
    return found or "99999999H"


def _text(headers: list[tuple[bytes, bytes]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in headers:
        key, text = name.decode("latin-1"), value.decode("latin-1")
        out[key] = f"{out[key]},{text}" if key in out else text
    return out


class _Stream:
    """What has arrived for one call."""

    __slots__ = ("buffer", "credited", "ended", "headers", "id", "received", "refused", "reset",
                 "taken", "touch", "trailers")  # fmt: skip

    def __init__(self, stream_id: int) -> None:
        self.id = stream_id
        self.headers: dict[str, str] | None = None
        self.trailers: dict[str, str] | None = None
        self.buffer = bytearray()
        self.credited = 0  # bytes at the buffer's start handed back to the window already
        self.taken = 0  # bytes of whole messages taken, not yet handed back (below CREDIT)
        self.received = 0  # DATA frames so far
        self.ended = False
        self.reset: int | None = None
        self.refused = False  # above a GOAWAY's last stream id: never processed
        #: Told when a call waits again after a frame came (its idle limit starts over).
        self.touch: Callable[[], None] | None = None

    @property
    def closed(self) -> bool:
        return self.ended or self.reset is not None or self.refused


class _Connection:
    """One HTTP/2 connection: its h2 state, its socket, the calls on it."""

    def __init__(self, sock: ByteStream, authority: str, scheme: str) -> None:
        self._sock = sock
        self.authority = authority.encode()
        self.scheme = scheme.encode()
        # h2's checks of every header received (a fifth of its work on an answer) are
        # left out: the few this transport reads it checks itself (``_check_head``,
        # ``_status``), and an answer without them is a typed error all the same. What is
        # sent ``metadata`` makes as HTTP/2 wants it (lower case, trimmed, no connection
        # headers, credentials never indexed): h2 does not go over it again.
        self._h2 = h2.connection.H2Connection(h2_config())
        self._streams: dict[int, _Stream] = {}
        # Taken without a pass of the event loop when free: a message already read, and a
        # flush with nothing to send, cost no scheduling (cancellation is still checked).
        self._read_lock = anyio.Lock(fast_acquire=True)
        self._write_lock = anyio.Lock(fast_acquire=True)
        self._slot: anyio.Event | None = None  # made by a call that waits for a stream
        self._out = bytearray()  # h2's output not yet written (a flush cancelled in the queue)
        self._owed = 0  # bytes of finished calls not yet handed back (below CREDIT)
        #: Calls started and not finished (what MAX_CONCURRENT_STREAMS bounds).
        self.active = 0
        #: Why the connection carries no call any more (None: it does).
        self.lost: str | None = None
        self._settled = False  # the server's first SETTINGS came
        self._closed = False

    @property
    def usable(self) -> bool:
        return self.lost is None

    async def start(self) -> None:
        """The connection preface, then the server's first SETTINGS read."""
        self._h2.initiate_connection()
        self._h2.update_settings(
            {
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: WINDOW,
                h2.settings.SettingCodes.ENABLE_PUSH: 0,
                h2.settings.SettingCodes.MAX_HEADER_LIST_SIZE: MAX_HEADER_LIST,
            }
        )
        self._h2.increment_flow_control_window(CONNECTION_WINDOW - 65535)
        await self.flush()
        await self.wait(lambda: self._settled)
        if self.lost is not None:
            raise _Lost(self.lost, sent=False)

    # -- I/O ---------------------------------------------------------------------------------

    async def flush(self) -> None:
        """Send what h2 has to send (nothing to send: no lock taken). A write cut short (a
        cancellation, a broken socket) leaves the connection in an unknown state: it is
        lost."""
        self._out += self._h2.data_to_send()
        if not self._out or self.lost is not None:
            return
        async with self._write_lock:
            data = bytes(self._out)  # all that came before, in h2's order
            self._out.clear()
            if not data or self.lost is not None:
                return
            try:
                await self._sock.send(data)
            except _LOST as exc:
                self._lose(f"a write failed ({type(exc).__name__})")
            except BaseException:
                self._lose("a write was cut short")
                raise

    async def wait(self, ready: Callable[[], bool]) -> None:
        """Read until ``ready()`` or the connection is lost: a caller reads for every call
        on the connection, one read at a time, under the read lock."""
        while not (ready() or self.lost is not None):
            async with self._read_lock:
                if ready() or self.lost is not None:
                    return
                try:
                    data = await self._sock.receive(_READ)
                    if not self._settled and data.startswith(b"HTTP/1."):
                        self._lose("the server answers in HTTP/1.x, not HTTP/2")
                        return
                    events = self._h2.receive_data(data)
                except _LOST as exc:
                    self._lose(f"the connection was closed ({type(exc).__name__})")
                    return
                except _H2_ERRORS as exc:
                    self._lose(f"the server broke HTTP/2: {clipped(str(exc), 200)}")
                    return
                for event in events:
                    self._dispatch(event)
                await self.flush()  # acknowledgements, pings, window updates

    def _dispatch(self, event: h2.events.Event) -> None:
        if type(event) is h2.events.DataReceived:  # (the most frequent, first)
            stream = self._streams.get(event.stream_id)
            if stream is None:  # a call left already: its bytes go back to the window
                self._owe(event.flow_controlled_length, event.stream_id)
                return
            padding = event.flow_controlled_length - len(event.data)
            if padding:
                self._ack(padding, event.stream_id)
            stream.buffer += event.data
            stream.received += 1
            return
        if isinstance(event, h2.events.ConnectionTerminated):
            last = event.last_stream_id or 0
            for taken in self._streams.values():
                taken.refused = taken.id > last
            # h2 takes no frame after a GOAWAY: the calls the server had taken are cut too.
            self._lose(f"the server closed the connection (GOAWAY {_code(event.error_code)})")
            return
        if isinstance(event, h2.events.RemoteSettingsChanged):
            self._settled = True
            self._free()
            return
        stream_id = getattr(event, "stream_id", None)
        stream = self._streams.get(stream_id) if stream_id else None
        if stream is None:
            return
        if isinstance(event, h2.events.ResponseReceived):
            stream.headers = _text(event.headers)
        elif isinstance(event, h2.events.TrailersReceived):
            stream.trailers = _text(event.headers)
        elif isinstance(event, h2.events.StreamEnded):
            stream.ended = True
        elif isinstance(event, h2.events.StreamReset):
            stream.reset = int(event.error_code or 0)

    def _owe(self, size: int, stream_id: int) -> None:
        """Bytes of a stream closed here go back to the connection's window, ``CREDIT`` at
        a time (one call into h2 per many unary calls, not one each)."""
        self._owed += size
        if self._owed >= CREDIT:
            self._ack(self._owed, stream_id)
            self._owed = 0

    def _ack(self, size: int, stream_id: int) -> None:
        if size > 0:  # (a stream closed meanwhile: h2 has credited the connection)
            with contextlib.suppress(*_H2_ERRORS):
                self._h2.acknowledge_received_data(size, stream_id)

    def _lose(self, why: str) -> None:
        if self.lost is None:
            self.lost = why
        self._free()

    def _free(self) -> None:
        if self._slot is not None:
            self._slot.set()
            self._slot = None

    # -- calls -------------------------------------------------------------------------------

    async def open_stream(
        self, path: str, metadata: list[tuple[bytes, bytes]], body: bytes
    ) -> _Stream:
        """A new stream carrying ``body`` (one message, prefixed here), its half closed;
        first a free stream, when the server's MAX_CONCURRENT_STREAMS are taken."""
        while self.lost is None and self.active >= self._h2.remote_settings.max_concurrent_streams:
            if self._slot is None:
                self._slot = anyio.Event()
            await self._slot.wait()
        if self.lost is not None:
            raise _Lost(self.lost, sent=False)
        headers = [
            (b":method", b"POST"),
            (b":scheme", self.scheme),
            (b":path", path.encode()),
            (b":authority", self.authority),
            *metadata,
        ]
        try:
            stream = _Stream(self._h2.get_next_available_stream_id())
            self._h2.send_headers(stream.id, headers)
        except _H2_ERRORS as exc:  # stream ids ran out: the next call takes a new connection
            self._lose(f"no new stream: {clipped(str(exc), 200)}")
            raise _Lost(self.lost or "", sent=False) from None
        self._streams[stream.id] = stream
        self.active += 1
        try:
            await self._send(stream, _PREFIX.pack(0, len(body)) + body)
        except BaseException:
            await self.finish(stream)
            raise
        return stream

    async def _send(self, stream: _Stream, body: bytes) -> None:
        """``body`` within the stream's and the connection's windows, and the stream's end.
        A stream the server closes meanwhile stops it: its answer says why."""
        h2conn = self._h2
        while not (stream.closed or self.lost is not None):
            try:
                size = min(
                    len(body),
                    h2conn.local_flow_control_window(stream.id),
                    h2conn.max_outbound_frame_size,
                )
                if size:
                    h2conn.send_data(stream.id, body[:size], end_stream=size == len(body))
            except _H2_ERRORS:
                return
            body = body[size:]
            await self.flush()
            if not body:
                return
            if not size:
                await self.wait(lambda: self._window_open(stream))

    def _window_open(self, stream: _Stream) -> bool:
        if stream.closed:
            return True
        try:
            return self._h2.local_flow_control_window(stream.id) > 0
        except _H2_ERRORS:
            return True

    async def head(self, stream: _Stream) -> None:
        """Wait for the answer's headers (or its end)."""
        await self.wait(lambda: stream.headers is not None or stream.closed)

    async def message(self, stream: _Stream, limit: int, what: str) -> tuple[int, bytes] | None:
        """The stream's next message, its flag and its bytes, or None at its end.
        ``limit`` bounds it, read from its length prefix before the message is read whole."""
        waited = False
        while True:
            buffer = stream.buffer
            if len(buffer) >= 5:
                flag, length = _PREFIX.unpack_from(buffer)
                if length > limit:
                    raise _TooLarge(f"{what} of {length} bytes", limit)
                if flag > 1:
                    raise _Bad(f"a message with the flags {flag:#x} (a bad length prefix)")
                size = 5 + length
                if len(buffer) >= size:
                    message = flag, bytes(buffer[5:size])
                    del buffer[:size]
                    stream.taken += size - stream.credited
                    stream.credited = 0
                    if stream.taken >= CREDIT:
                        self._ack(stream.taken, stream.id)
                        stream.taken = 0
                        await self.flush()
                    return message
                # A message within its limit is read whole: its bytes go back to the window
                # as they come (one larger than the window would wait forever).
                self._ack(len(buffer) - stream.credited, stream.id)
                stream.credited = len(buffer)
                await self.flush()
            if stream.ended:
                if buffer:
                    raise _Bad(f"the answer ended inside a message ({len(buffer)} bytes left)")
                return None
            if stream.closed or self.lost is not None:
                raise self.broken(stream)
            if waited and stream.touch is not None:
                stream.touch()  # a frame came, not a whole message: the wait starts over
            waited = True
            await self.wait(functools.partial(_arrived, stream, stream.received))

    def ready(self, stream: _Stream) -> bool:
        """Whether ``message`` has what it gives without a read: a whole message, or the
        stream's end."""
        buffer = stream.buffer
        if len(buffer) >= 5:
            length: int = _PREFIX.unpack_from(buffer)[1]
            return len(buffer) >= 5 + length
        return stream.closed or self.lost is not None

    def broken(self, stream: _Stream) -> _Lost:
        """Why ``stream`` ended without its answer."""
        if stream.refused:
            return _Lost(f"{self.lost}: the call was not taken", sent=False)
        if stream.reset is not None:
            refused = stream.reset == ErrorCodes.REFUSED_STREAM
            return _Lost(f"the server reset the stream ({_code(stream.reset)})", sent=not refused)
        return _Lost(self.lost or "the connection was lost")

    async def finish(self, stream: _Stream) -> None:
        """Forget the call; one left before its end resets its stream, even when cancelled."""
        if self._streams.pop(stream.id, None) is None:
            return
        self.active -= 1
        self._free()
        if self.lost is not None:
            return
        if not stream.closed:
            with contextlib.suppress(*_H2_ERRORS):  # (closed already: nothing to reset)
                self._h2.reset_stream(stream.id, ErrorCodes.CANCEL)
        self._owe(stream.taken, stream.id)  # what the window still lacks of its messages
        self._out += self._h2.data_to_send()
        if self._out:
            with anyio.move_on_after(RESET_GRACE, shield=True):
                await self.flush()

    async def aclose(self) -> None:
        """Say GOAWAY (unless lost) and close the socket; idempotent, also when cancelled."""
        if self._closed:
            return
        self._closed = True
        with anyio.move_on_after(RESET_GRACE, shield=True):
            if self.lost is None:
                with contextlib.suppress(*_H2_ERRORS):
                    self._h2.close_connection()
                await self.flush()
            self._lose("the client closed the connection")
            with contextlib.suppress(*_LOST):
                await self._sock.aclose()


def _arrived(stream: _Stream, seen: int) -> bool:
    return stream.received != seen or stream.closed


def _code(code: int | None) -> str:
    """An HTTP/2 error code by its name."""
    try:
        return ErrorCodes(code or 0).name
    except ValueError:
        return str(code)


class _Lost(Exception):
    """The call's stream or connection broke (``sent``: the server may have had it)."""

    def __init__(self, why: str, *, sent: bool = True) -> None:
        super().__init__(why)
        self.why = why
        self.sent = sent


class _Bad(Exception):
    """The answer breaks gRPC's framing."""


class _TooLarge(Exception):
    def __init__(self, what: str, limit: int) -> None:
        super().__init__(what)
        self.limit = limit


class GrpcTransport:
    """Carries gRPC calls: one HTTP/2 connection per origin, made at the first call to it.

    ``http`` is the client's HTTP transport: its limits (``max_response_bytes`` bounds a
    unary answer's message, ``max_event_bytes`` each message of a stream), its observer,
    and its way with credentials (applied per origin, as for HTTP; an OAuth token is
    fetched through it). ``verify``, ``client_cert`` and ``connect_timeout`` are the
    client's.
    """

    def __init__(
        self,
        http: HttpTransport,
        *,
        verify: VerifyTypes = True,
        client_cert: MutualTLS | None = None,
        connect_timeout: float | None = None,
    ) -> None:
        self.http = http
        self.observer = http.observer
        self._verify = verify
        self._client_cert = client_cert
        self._tls: ssl.SSLContext | None = None
        self._connect_timeout = connect_timeout
        self._connections: dict[Origin, _Connection] = {}
        self._retired: set[_Connection] = set()
        self._connecting: dict[Origin, anyio.Lock] = {}

    # -- Transport ---------------------------------------------------------------------------

    async def unary(
        self, request: WireRequest[Any], credentials: Credentials, context: ErrorContext
    ) -> GrpcReply:
        """Send ``request`` and read its answer: one message and an OK status, or the
        status that is no success."""
        call = GrpcCall(self, request, credentials, context, self.http.max_response_bytes)
        try:
            await call.open()
            if call.error_response is not None:
                return call.error_response
            first = await call.next_event()
            if isinstance(first, bytes):
                end = await call.next_event()
                if isinstance(end, bytes):
                    raise call.error("the answer carried more than one message")
                if end is None:
                    return GrpcReply(OK, call.metadata, first)
                first = end  # a status that is no success, after the message
            if first is None:
                raise call.error("the answer carried no message")
            return GrpcReply(first.status, first.headers, b"")
        finally:
            await call.aclose()

    def stream(
        self,
        request: WireRequest[Any],
        credentials: Credentials,
        *,
        idle_timeout: float | None,
        open_timeout: float | None,
    ) -> GrpcCall:
        return GrpcCall(
            self,
            request,
            credentials,
            request.context,
            self.http.max_event_bytes,
            idle_timeout=idle_timeout,
            open_timeout=open_timeout,
        )

    async def aclose(self) -> None:
        """Close every connection."""
        connections = [*self._connections.values(), *self._retired]
        self._connections.clear()
        self._retired.clear()
        for conn in connections:
            await conn.aclose()

    # -- connections -------------------------------------------------------------------------

    async def connection(self, url: str, context: ErrorContext) -> _Connection:
        """The connection to ``url``'s origin, made if need be (single-flight)."""
        origin = origin_of(url)
        conn = self._connections.get(origin)
        if conn is not None and conn.usable:
            return conn
        lock = self._connecting.get(origin)
        if lock is None:
            lock = self._connecting[origin] = anyio.Lock()
        async with lock:
            conn = self._connections.get(origin)
            if conn is not None and conn.usable:
                return conn
            if conn is not None:
                await self.release(conn)
            conn = await self._connect(url, origin, context)
            self._connections[origin] = conn
            return conn

    async def release(self, conn: _Connection) -> None:
        """A connection no call starts on any more: closed once its last call finished."""
        for origin, known in list(self._connections.items()):
            if known is conn:
                del self._connections[origin]
        if conn.active:
            self._retired.add(conn)
        else:
            self._retired.discard(conn)
            await conn.aclose()

    async def _connect(self, url: str, origin: Origin, context: ErrorContext) -> _Connection:
        scheme, host, port = origin
        assert port is not None
        shown_url = redacted(url)
        limit = self._connect_timeout
        with anyio.CancelScope(
            deadline=math.inf if limit is None else anyio.current_time() + limit
        ) as scope:
            sock: ByteStream | None = None
            try:
                sock = await connect_tcp(self.http.network, url, host, port)  # (_network)
                if scheme == "https":
                    sock = await self._handshake(sock, host)
                conn = _Connection(sock, urlsplit(url).netloc.rpartition("@")[2], scheme)
                await conn.start()
            except BaseException as exc:
                if sock is not None:
                    with anyio.CancelScope(shield=True):
                        await sock.aclose()
                if isinstance(exc, _Lost):
                    why = exc.why
                elif isinstance(exc, ssl.SSLError | ssl.CertificateError):
                    why = f"TLS failed: {exc}"
                elif isinstance(exc, _LOST):
                    why = str(exc) or type(exc).__name__
                else:
                    raise
                raise A2AConnectionError(
                    f"cannot connect to {shown_url}: {why}", request_sent=False, **context
                ) from exc
            return conn
        assert scope.cancelled_caught
        raise A2ATimeoutError(
            f"connect timeout to {shown_url}", timeout="connect", request_sent=False, **context
        )

    async def _handshake(self, sock: ByteStream, host: str) -> ByteStream:
        """TLS over ``sock`` with ALPN ``h2``; a server that chooses another protocol is
        refused."""
        if self._tls is None:
            self._tls = ssl_context(self._verify, self._client_cert)
        self._tls.set_alpn_protocols(["h2"])  # just before the handshake: no await between
        tls = await TLSStream.wrap(
            sock, hostname=host, ssl_context=self._tls, standard_compatible=False
        )
        chosen = tls.extra(TLSAttribute.alpn_protocol, None)
        if chosen != "h2":
            await tls.aclose()
            raise _Lost(f"the server does not speak HTTP/2 over TLS (ALPN: {chosen!r})", sent=False)
        return tls

    # -- requests ----------------------------------------------------------------------------

    async def metadata(
        self,
        request: WireRequest[Any],
        credentials: Credentials,
        context: ErrorContext,
        deadline: float,
    ) -> list[tuple[bytes, bytes]]:
        """The call's headers: gRPC's own (``grpc-timeout`` from ``deadline``), the
        codec's, then the credentials where they may go (the client's, its scheme's, the
        call's own, as for HTTP), and the tracing context."""
        url = request.url
        sent: Mapping[str, str] = request.headers
        if credentials.present:
            target, sent = await self.http.with_credentials(url, sent, credentials, context)
            if target != url:
                raise A2AClientError(
                    "an API key sent in the query cannot go over gRPC (a call has no query): "
                    "send it in a header",
                    **context,
                )
        headers = merged({"content-type": "application/grpc"}, sent)
        self.observer.tracing.inject(headers)
        content_type = next(v for k, v in headers.items() if k.lower() == "content-type")
        out = [
            (b"content-type", content_type.encode()),
            (b"te", b"trailers"),
            (b"user-agent", b"a2a-anyio"),
        ]
        if deadline != math.inf:
            left = max(deadline - anyio.current_time(), 0.0)
            out.append((b"grpc-timeout", grpc_timeout(left).encode()))
        for name, value in headers.items():
            key = name.lower()
            if key not in _DROPPED and not key.startswith(":"):
                raw = value.strip().encode()
                if key in _SECRET or (key == "cookie" and len(raw) < 20):
                    out.append(NeverIndexedHeaderTuple(key.encode(), raw))
                else:
                    out.append((key.encode(), raw))
        return out


class GrpcCall:
    """One gRPC call, unary or server-streaming (``Messages``): ``open()`` sends the
    request and reads the answer's headers; a trailers-only answer that is no success is
    ``error_response``; ``next_event()`` gives each message, then the status that ended the
    stream when it is no success (``StreamStatus``, for the codec to read), else None.
    ``aclose()`` resets a stream left before its end."""

    def __init__(
        self,
        transport: GrpcTransport,
        request: WireRequest[Any],
        credentials: Credentials,
        context: ErrorContext,
        limit: int,
        *,
        idle_timeout: float | None = None,
        open_timeout: float | None = None,
    ) -> None:
        self._transport = transport
        self._request = request
        self._credentials = credentials
        self._context = context
        self._limit = limit
        self.timeouts = StreamTimeouts(request.url, context, idle=idle_timeout, open=open_timeout)
        self._conn: _Connection | None = None
        self._stream: _Stream | None = None
        self._encoding = ""
        #: The answer's headers, and its trailers once read.
        self.metadata: dict[str, str] = {}
        self.error_response: GrpcReply | None = None
        self._done = False

    @property
    def url(self) -> str:
        return self._request.url

    def error(self, why: str) -> A2AProtocolError:
        """The error of an answer that breaks gRPC."""
        return A2AProtocolError(f"gRPC answer from {redacted(self.url)}: {why}", **self._context)

    async def open(self) -> GrpcCall:
        """Send the request and read the answer's head, within ``open_timeout``; the call
        is released on a failure."""
        deadline = anyio.current_effective_deadline()  # the caller's: sent as grpc-timeout
        timeouts = self.timeouts
        try:
            if timeouts.open is None:  # (a unary call's: no scope to make)
                await self._open(deadline)
                return self
            with timeouts.opening():
                await self._open(deadline)
                return self
            raise timeouts.open_expired()
        except BaseException:
            await self.aclose()
            raise

    async def _open(self, deadline: float) -> None:
        transport, request, context = self._transport, self._request, self._context
        log = transport.observer.logger
        debug = log.isEnabledFor(logging.DEBUG)
        path = urlsplit(self.url).path
        renewed = False
        while True:
            metadata = await transport.metadata(request, self._credentials, context, deadline)
            if debug:
                log.debug("request gRPC %s%s", redacted(self.url), about(context))
                started = time.perf_counter()
            conn = self._conn = await transport.connection(self.url, context)
            try:
                stream = self._stream = await conn.open_stream(path, metadata, request.body or b"")
                request_sent()
                await conn.head(stream)
            except _Lost as exc:
                raise self._lost(exc) from None
            head = stream.headers
            if debug:
                took = (time.perf_counter() - started) * 1000
                said = (head or {}).get("grpc-status", "-")
                log.debug(
                    "answer gRPC %s (status %s) in %.1f ms%s",
                    redacted(self.url), said, took, about(context),
                )  # fmt: skip
            if head is None:
                raise self._lost(conn.broken(stream))
            self._check_head(head)
            self.metadata = dict(head)
            if "grpc-status" not in head:
                self._encoding = head.get("grpc-encoding", "")
                return
            # A trailers-only answer: its status, no message.
            await conn.finish(stream)
            self._stream = None
            status = self._status(head)
            if (
                status == UNAUTHENTICATED
                and not renewed
                and await renew(self._credentials, self.url)
            ):
                renewed = True
                continue
            if status != OK:
                self.error_response = GrpcReply(status, head, b"")
            self._done = True
            return

    def _check_head(self, head: Mapping[str, str]) -> None:
        """An answer that is no gRPC answer: an HTTP error, or another media type."""
        code = head.get(":status", "")
        ctype = head.get("content-type", "")
        if code == "200" and ctype.startswith("application/grpc"):
            return
        body = f"a {clipped(ctype, 100) or 'typeless'} answer, not gRPC"
        status = int(code) if code.isdigit() and len(code) == 3 else 0
        if status in (401, 403):
            raise A2AAuthError(status_code=status, body=body, **self._context)
        if status != 200:
            raise A2AHTTPError(status_code=status, body=body, **self._context)
        raise self.error(body)

    def _status(self, trailers: Mapping[str, str]) -> GrpcStatus:
        raw = trailers.get("grpc-status", "")
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 3:
            raise self.error(f"grpc-status {clipped(raw, 20)!r} is no status code")
        return GrpcStatus(raw)

    def _lost(self, exc: _Lost) -> A2AConnectionError:
        return A2AConnectionError(
            f"gRPC call to {redacted(self.url)} broke: {exc.why}",
            request_sent=exc.sent,
            **self._context,
        )

    async def next_event(self) -> bytes | StreamStatus | None:
        """The next message; at the end the status when it is no success, else None.
        ``A2ATimeoutError`` when nothing comes within the idle limit."""
        conn, stream = self._conn, self._stream
        if self._done or conn is None or stream is None:
            return None
        timeouts = self.timeouts
        if timeouts.idle is None or conn.ready(stream):  # nothing to wait for: no idle limit
            return await self._next(conn, stream)
        with timeouts.waiting():
            stream.touch = timeouts.touch
            try:
                return await self._next(conn, stream)
            finally:
                stream.touch = None
                timeouts.done()
        raise timeouts.idle_expired()

    async def _next(self, conn: _Connection, stream: _Stream) -> bytes | StreamStatus | None:
        what = "a message" if self._request.streams else "an answer"
        try:
            message = await conn.message(stream, self._limit, what)
        except _Lost as exc:
            raise self._lost(exc) from None
        except _TooLarge as exc:
            raise A2AProtocolError(
                f"gRPC answer from {redacted(self.url)}: {exc} is over the limit of {exc.limit}",
                limit=exc.limit,
                **self._context,
            ) from None
        except _Bad as exc:
            raise self.error(str(exc)) from None
        if message is not None:
            return self._decoded(*message)
        self._done = True
        trailers = stream.trailers
        if trailers is None or "grpc-status" not in trailers:
            raise A2AConnectionError(
                f"gRPC answer from {redacted(self.url)} ended without a status: it was cut",
                **self._context,
            )
        self.metadata.update(trailers)
        status = self._status(trailers)
        return None if status == OK else StreamStatus(status, dict(self.metadata))

    def _decoded(self, flag: int, data: bytes) -> bytes:
        """A message without its prefix, decompressed (bounded) when it says it is."""
        if not flag:
            return data
        coding = self._encoding
        if coding.lower() not in ("gzip", "deflate"):
            raise self.error(
                f"a message compressed with {clipped(coding, 40)!r}, which this client "
                "does not decode"
            )
        out = bytearray()
        try:
            decoder = BodyDecoder(coding)
            for piece in decoder.feed(data):
                out += piece
                if len(out) > self._limit:
                    raise A2AProtocolError(
                        f"gRPC answer from {redacted(self.url)}: a message over the limit of "
                        f"{self._limit} bytes once decoded",
                        limit=self._limit,
                        **self._context,
                    )
            decoder.end()
        except UndecodableBody as exc:
            raise self.error(exc.reason) from None
        return bytes(out)

    async def aclose(self, *, drain: bool = False) -> None:
        """Release the call (its stream reset when it has not ended); safe more than once,
        also while cancelled. ``drain`` does nothing: an HTTP/2 stream is reset without its
        connection."""
        conn, stream = self._conn, self._stream
        self._stream = None
        self._done = True
        if conn is None:
            return
        if stream is not None:
            await conn.finish(stream)
        if not conn.usable:
            with anyio.CancelScope(shield=True):
                await self._transport.release(conn)


def h2_config() -> h2.config.H2Configuration:
    """The h2 configuration of every connection: client side, headers as bytes, none of
    h2's own checks or normalisation (the transport makes and checks its headers)."""
    return h2.config.H2Configuration(
        client_side=True,
        header_encoding=None,
        validate_outbound_headers=False,
        normalize_outbound_headers=False,
        validate_inbound_headers=False,
        normalize_inbound_headers=False,  # (joins split ``cookie`` fields: no answer has one)
    )
