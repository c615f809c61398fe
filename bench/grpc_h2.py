"""A minimal gRPC client on ``h2`` (sans-IO HTTP/2) over anyio's TCP streams: the spike of
the gRPC transport's route (b), measured by ``grpc_spike.py``. Not the library's code.

One ``Channel`` is one HTTP/2 connection (cleartext with prior knowledge here; TLS is
anyio's ``connect_tcp(..., ssl_context=...)`` with ALPN ``h2``) whose reader task runs in
the channel's own task group and hands each stream's frames to the call waiting on it. A
call is a unary exchange (``Channel.unary``) or a server stream (``Channel.stream``, an
async context manager to iterate): each request message is length-prefixed, the answer's
messages are read back the same way, and its status comes from the trailers
(``grpc-status``, ``grpc-message``, ``grpc-status-details-bin``), or from the headers of a
trailers-only answer, or from the HTTP status when the peer is no gRPC server.

Deadlines and cancellation are anyio's: the caller's cancel scope is the deadline, sent to
the server as ``grpc-timeout`` (what remains of the effective deadline), and a call left
before its end (cancelled, timed out, or a block exited early) resets its stream with
``RST_STREAM(CANCEL)``, sent under a shield so that a cancelled caller still tells the
server. Flow control: each stream's window is handed back as its messages are taken, so
a slow reader holds at most one window of bytes per stream.
"""

from __future__ import annotations

import base64
import math
import struct
import urllib.parse
from collections.abc import Iterable, Sequence
from types import TracebackType
from typing import Any

import anyio
import anyio.abc
import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from h2.errors import ErrorCodes

WINDOW = 1 << 20  # each stream's receive window, and what it may hold unread
CONNECTION_WINDOW = 1 << 24
MAX_MESSAGE = 4 << 20  # gRPC's default limit of a received message
RESET_GRACE = 1.0  # how long a cancelled call may spend telling the server

#: gRPC status codes by name (those the spike reads back).
OK, CANCELLED, UNKNOWN, DEADLINE_EXCEEDED = 0, 1, 2, 4
RESOURCE_EXHAUSTED, UNIMPLEMENTED, INTERNAL, UNAVAILABLE = 8, 12, 13, 14
UNAUTHENTICATED, PERMISSION_DENIED = 16, 7
#: HTTP statuses of a non-gRPC answer -> gRPC status (gRPC's http-grpc-status-mapping).
HTTP_TO_GRPC = {
    400: INTERNAL,
    401: UNAUTHENTICATED,
    403: PERMISSION_DENIED,
    404: UNIMPLEMENTED,
    429: UNAVAILABLE,
    502: UNAVAILABLE,
    503: UNAVAILABLE,
    504: UNAVAILABLE,
}


class GrpcError(Exception):
    """A call that ended with a status other than OK."""

    def __init__(self, status: int, message: str, details: bytes = b"") -> None:
        super().__init__(f"gRPC status {status}: {message}")
        self.status = status
        self.message = message
        self.details = details  # a serialized google.rpc.Status, when the server sent one


def grpc_timeout(seconds: float) -> str:
    """The ``grpc-timeout`` value for ``seconds`` (at most 8 digits, rounded up)."""
    for unit, scale in (("u", 1e6), ("m", 1e3), ("S", 1.0), ("M", 1 / 60), ("H", 1 / 3600)):
        value = max(1, math.ceil(seconds * scale))
        if value < 100_000_000:
            return f"{value}{unit}"
    return "99999999H"


class _Call:
    """What the reader task has received for one stream."""

    __slots__ = ("buffer", "changed", "ended", "headers", "reset", "trailers", "unacked")

    def __init__(self) -> None:
        self.headers: dict[bytes, bytes] | None = None
        self.trailers: dict[bytes, bytes] | None = None
        self.buffer = bytearray()
        self.unacked = 0  # bytes received and not yet handed back to the window
        self.ended = False
        self.reset: int | None = None
        self.changed = anyio.Event()

    def wake(self) -> None:
        self.changed.set()


class Channel:
    """One HTTP/2 connection to ``host:port`` carrying gRPC calls."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.authority = f"{host}:{port}"
        config = h2.config.H2Configuration(
            client_side=True,
            header_encoding=None,
            validate_outbound_headers=False,
            normalize_outbound_headers=False,
        )
        self._conn = h2.connection.H2Connection(config)
        self._calls: dict[int, _Call] = {}
        self._outgoing = bytearray()
        self._send_lock = anyio.Lock()
        self._window_open = anyio.Event()
        self._failure: str | None = None
        self._sock: anyio.abc.ByteStream | None = None
        self._group: anyio.abc.TaskGroup | None = None

    async def __aenter__(self) -> Channel:
        self._sock = await anyio.connect_tcp(self.host, self.port)
        self._conn.initiate_connection()
        self._conn.update_settings(
            {
                h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: WINDOW,
                h2.settings.SettingCodes.ENABLE_PUSH: 0,
            }
        )
        self._conn.increment_flow_control_window(CONNECTION_WINDOW - 65535)
        await self._flush()
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        self._group.start_soon(self._read)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        assert self._group is not None and self._sock is not None
        self._group.cancel_scope.cancel()
        try:
            return await self._group.__aexit__(exc_type, exc, tb)
        finally:
            with anyio.move_on_after(RESET_GRACE, shield=True):
                if self._failure is None:
                    self._conn.close_connection()
                    await self._flush()
                await self._sock.aclose()

    # -- the connection ------------------------------------------------------------------

    async def _flush(self) -> None:
        """Send what h2 has to send, in the order h2 produced it."""
        self._outgoing += self._conn.data_to_send()
        if not self._outgoing:
            return
        async with self._send_lock:
            data, self._outgoing = bytes(self._outgoing), bytearray()
            if data:
                assert self._sock is not None
                await self._sock.send(data)

    async def _read(self) -> None:
        assert self._sock is not None
        try:
            while True:
                data = await self._sock.receive(65536)
                for event in self._conn.receive_data(data):
                    self._dispatch(event)
                await self._flush()
        except (anyio.EndOfStream, anyio.BrokenResourceError, OSError) as exc:
            self._fail(f"connection lost: {exc!r}")
        except h2.exceptions.ProtocolError as exc:
            self._fail(f"HTTP/2 protocol error: {exc}")

    def _fail(self, why: str) -> None:
        self._failure = why
        for call in self._calls.values():
            call.wake()
        self._window_open.set()

    def _dispatch(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.WindowUpdated | h2.events.RemoteSettingsChanged):
            self._window_open.set()
            return
        if isinstance(event, h2.events.ConnectionTerminated):
            self._fail(f"the server closed the connection (GOAWAY {event.error_code!r})")
            return
        call = self._calls.get(getattr(event, "stream_id", 0) or 0)
        if call is None:
            return
        if isinstance(event, h2.events.DataReceived):
            call.buffer += event.data
            call.unacked += event.flow_controlled_length
        elif isinstance(event, h2.events.ResponseReceived):
            call.headers = dict(event.headers)  # type: ignore[arg-type]
        elif isinstance(event, h2.events.TrailersReceived):
            call.trailers = dict(event.headers)  # type: ignore[arg-type]
        elif isinstance(event, h2.events.StreamEnded):
            call.ended = True
        elif isinstance(event, h2.events.StreamReset):
            call.reset = int(event.error_code or 0)
        else:
            return
        call.wake()

    # -- one call ------------------------------------------------------------------------

    async def _start(
        self, method: str, message: bytes, metadata: Iterable[tuple[str, str]]
    ) -> tuple[int, _Call]:
        if self._failure is not None:
            raise GrpcError(UNAVAILABLE, self._failure)
        headers = [
            (b":method", b"POST"),
            (b":scheme", b"http"),
            (b":path", method.encode()),
            (b":authority", self.authority.encode()),
            (b"content-type", b"application/grpc"),
            (b"te", b"trailers"),
        ]
        deadline = anyio.current_effective_deadline()
        if deadline != math.inf:
            remaining = deadline - anyio.current_time()
            headers.append((b"grpc-timeout", grpc_timeout(remaining).encode()))
        headers += [(k.encode(), v.encode()) for k, v in metadata]
        stream_id = self._conn.get_next_available_stream_id()
        call = _Call()
        self._calls[stream_id] = call
        try:
            self._conn.send_headers(stream_id, headers)
            await self._send_message(stream_id, message)
        except BaseException:
            await self._finish(stream_id, call)
            raise
        return stream_id, call

    async def _send_message(self, stream_id: int, message: bytes) -> None:
        """The request's one message, within the stream's and the connection's windows."""
        body = struct.pack(">BI", 0, len(message)) + message
        while True:
            size = min(
                len(body),
                self._conn.local_flow_control_window(stream_id),
                self._conn.max_outbound_frame_size,
            )
            if size == len(body):
                self._conn.send_data(stream_id, body, end_stream=True)
                break
            if size:
                self._conn.send_data(stream_id, body[:size])
                body = body[size:]
            await self._flush()
            if self._window_open.is_set():
                self._window_open = anyio.Event()
            await self._window_open.wait()
            if self._failure is not None:
                raise GrpcError(UNAVAILABLE, self._failure)
        await self._flush()

    async def _next(self, stream_id: int, call: _Call) -> bytes | None:
        """The call's next message, or None at its end with an OK status."""
        while True:
            buffer = call.buffer
            if len(buffer) >= 5:
                flag, length = struct.unpack_from(">BI", buffer)
                if length > MAX_MESSAGE:
                    raise GrpcError(RESOURCE_EXHAUSTED, f"a message of {length} bytes")
                if flag:
                    raise GrpcError(INTERNAL, "a compressed message (none was asked for)")
                if len(buffer) >= 5 + length:
                    message = bytes(buffer[5 : 5 + length])
                    del buffer[: 5 + length]
                    self._conn.acknowledge_received_data(call.unacked, stream_id)
                    call.unacked = 0
                    await self._flush()
                    return message
            if call.ended:
                if buffer:
                    raise GrpcError(INTERNAL, "the stream ended inside a message")
                self._check_status(call)
                return None
            if call.reset is not None:
                code = CANCELLED if call.reset == ErrorCodes.CANCEL else UNAVAILABLE
                if call.reset not in (ErrorCodes.CANCEL, ErrorCodes.REFUSED_STREAM):
                    code = INTERNAL
                raise GrpcError(code, f"the server reset the stream ({call.reset})")
            if self._failure is not None:
                raise GrpcError(UNAVAILABLE, self._failure)
            call.changed = anyio.Event()
            await call.changed.wait()

    @staticmethod
    def _check_status(call: _Call) -> None:
        headers = call.headers or {}
        status_line = headers.get(b":status", b"")
        if status_line != b"200":
            code = HTTP_TO_GRPC.get(int(status_line or 0), UNKNOWN)
            raise GrpcError(code, f"HTTP status {status_line.decode(errors='replace')}")
        if not headers.get(b"content-type", b"").startswith(b"application/grpc"):
            raise GrpcError(UNKNOWN, "not a gRPC answer")
        trailers = call.trailers if call.trailers is not None else headers
        raw = trailers.get(b"grpc-status")
        if raw is None:
            raise GrpcError(INTERNAL, "no grpc-status in the trailers")
        status = int(raw)
        if status != OK:
            message = urllib.parse.unquote(trailers.get(b"grpc-message", b"").decode())
            details = trailers.get(b"grpc-status-details-bin", b"")
            raise GrpcError(status, message, base64.b64decode(details + b"==") if details else b"")

    async def _finish(self, stream_id: int, call: _Call) -> None:
        """Forget the call; one left before its end resets its stream, even when cancelled."""
        del self._calls[stream_id]
        if call.ended or call.reset is not None or self._failure is not None:
            return
        with anyio.move_on_after(RESET_GRACE, shield=True):
            try:
                self._conn.reset_stream(stream_id, ErrorCodes.CANCEL)
            except h2.exceptions.ProtocolError:  # closed already, or never opened
                return
            await self._flush()

    # -- the calls -----------------------------------------------------------------------

    async def unary(
        self, method: str, message: bytes, metadata: Sequence[tuple[str, str]] = ()
    ) -> bytes:
        """Send one message to ``method`` (``/package.Service/Method``), read its one answer."""
        stream_id, call = await self._start(method, message, metadata)
        try:
            answer = await self._next(stream_id, call)
            if answer is None:
                raise GrpcError(INTERNAL, "no message in a unary answer")
            if await self._next(stream_id, call) is not None:
                raise GrpcError(INTERNAL, "more than one message in a unary answer")
            return answer
        finally:
            await self._finish(stream_id, call)

    def stream(
        self, method: str, message: bytes, metadata: Sequence[tuple[str, str]] = ()
    ) -> ServerStream:
        """A server-streaming call, opened by ``async with``, read by ``async for``."""
        return ServerStream(self, method, message, metadata)


class ServerStream:
    """The messages of one server-streaming call; leaving the block before the end resets
    the stream."""

    def __init__(
        self, channel: Channel, method: str, message: bytes, metadata: Sequence[tuple[str, str]]
    ) -> None:
        self._channel = channel
        self._request = (method, message, metadata)
        self._stream_id = 0
        self._call: _Call | None = None

    async def __aenter__(self) -> ServerStream:
        self._stream_id, self._call = await self._channel._start(*self._request)
        return self

    async def __aexit__(self, *exc_info: Any) -> None:
        if self._call is not None:
            await self._channel._finish(self._stream_id, self._call)

    def __aiter__(self) -> ServerStream:
        return self

    async def __anext__(self) -> bytes:
        assert self._call is not None, "open the stream with async with"
        message = await self._channel._next(self._stream_id, self._call)
        if message is None:
            raise StopAsyncIteration
        return message
