"""A gRPC server of the suite's own: h2 over anyio on 127.0.0.1, in the test's event loop.

Each call is handed to the test's ``handler`` once its request has ended; the handler
answers exactly as told (headers, messages with any prefix, trailers, resets, a GOAWAY, a
dropped connection, or nothing at all), so a test sees what the client makes of each. The
server records the calls, the streams the client reset (and with which code), and the
connections it holds, so a test can wait for the client to let go.
"""

from __future__ import annotations

import base64
import struct
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import anyio
import h2.config
import h2.connection
import h2.events
import h2.exceptions
import h2.settings
from anyio.abc import ByteStream, SocketAttribute, TaskGroup
from google.rpc import error_details_pb2, status_pb2
from hpack import NeverIndexedHeaderTuple

from a2a_anyio import A2ARPCError, TaskNotFoundError
from a2a_anyio._dialects import Op, OpArgs

from ._grpc_serving import serving_codec

Handler = Callable[["Call"], Awaitable[object]]


def status_details(code: int, message: str, reason: str | None = None) -> bytes:
    """A serialized ``google.rpc.Status`` with an A2A ``ErrorInfo`` of ``reason``."""
    status = status_pb2.Status(code=code, message=message)
    if reason is not None:
        status.details.add().Pack(
            error_details_pb2.ErrorInfo(reason=reason, domain="a2a-protocol.org")
        )
    data: bytes = status.SerializeToString()
    return data


def framed(message: bytes, *, flag: int = 0, length: int | None = None) -> bytes:
    """``message`` with its length prefix (``length``: a prefix that lies)."""
    return struct.pack(">BI", flag, len(message) if length is None else length) + message


@dataclass
class Call:
    """One call the server received, and the ways to answer it."""

    conn: _ServerConnection
    stream_id: int
    path: str
    headers: dict[str, str]
    body: bytes = b""
    reset: int | None = None  # the code of the client's RST_STREAM, once it came
    reset_seen: anyio.Event = field(default_factory=anyio.Event)
    #: The headers sent as HPACK's never-indexed fields.
    never_indexed: set[str] = field(default_factory=set)

    @property
    def message(self) -> bytes:
        """The request's message, without its prefix."""
        return self.body[5:]

    async def head(self, **more: str) -> None:
        """A gRPC answer's headers, with ``more``."""
        headers = [(":status", "200"), ("content-type", "application/grpc"), *more.items()]
        await self.conn.send_headers(self.stream_id, headers)

    async def send(self, message: bytes, *, flag: int = 0, length: int | None = None) -> None:
        await self.conn.send_data(self.stream_id, framed(message, flag=flag, length=length))

    async def raw(self, data: bytes, *, end: bool = False) -> None:
        await self.conn.send_data(self.stream_id, data, end=end)

    async def end(
        self, status: int = 0, message: str = "", *, details: bytes = b"", **more: str
    ) -> None:
        await self.conn.send_headers(
            self.stream_id, self._trailers(status, message, details, more), end=True
        )

    async def trailers_only(
        self, status: int, message: str = "", *, details: bytes = b"", **more: str
    ) -> None:
        headers = [(":status", "200"), ("content-type", "application/grpc")]
        headers += self._trailers(status, message, details, more)
        await self.conn.send_headers(self.stream_id, headers, end=True)

    @staticmethod
    def _trailers(
        status: int, message: str, details: bytes, more: dict[str, str]
    ) -> list[tuple[str, str]]:
        out = [("grpc-status", str(status))]
        if message:
            out.append(("grpc-message", message))
        if details:
            out.append(("grpc-status-details-bin", base64.b64encode(details).decode()))
        return out + list(more.items())

    async def end_stream(self) -> None:
        """END_STREAM on an empty DATA frame: an answer that ends without trailers."""
        await self.conn.send_data(self.stream_id, b"", end=True)

    async def reset_stream(self, code: int = 2) -> None:
        await self.conn.reset(self.stream_id, code)

    async def goaway(self, last_stream_id: int | None = None, code: int = 0) -> None:
        await self.conn.goaway(self.stream_id if last_stream_id is None else last_stream_id, code)

    async def drop(self) -> None:
        """Close the TCP connection at once."""
        await self.conn.stream.aclose()

    async def until_reset(self, within: float = 5.0) -> int | None:
        """Wait (bounded) for the client's RST_STREAM; its code."""
        with anyio.fail_after(within):
            await self.reset_seen.wait()
        return self.reset


class _ServerConnection:
    def __init__(self, server: GrpcServer, stream: ByteStream, group: TaskGroup) -> None:
        self.server = server
        self.stream = stream
        self.group = group
        # Headers as a handler gives them, even those HTTP/2 forbids (hostile answers).
        config = h2.config.H2Configuration(
            client_side=False,
            header_encoding="utf-8",
            validate_outbound_headers=False,
            normalize_outbound_headers=False,
        )
        self.h2 = h2.connection.H2Connection(config)
        self.lock = anyio.Lock()
        self.window = anyio.Event()
        self.pending: dict[int, Call] = {}

    async def flush(self) -> None:
        async with self.lock:
            data = self.h2.data_to_send()
            if data:
                with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    await self.stream.send(data)

    async def run(self) -> None:
        settings: dict[int, int] = {}
        if self.server.max_streams is not None:
            settings[h2.settings.SettingCodes.MAX_CONCURRENT_STREAMS] = self.server.max_streams
        self.h2.initiate_connection()
        if settings:
            self.h2.update_settings(settings)
        await self.flush()
        while True:
            try:
                data = await self.stream.receive(65536)
            except (anyio.EndOfStream, anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            try:
                events = self.h2.receive_data(data)
            except h2.exceptions.ProtocolError:
                await self.flush()
                return
            for event in events:
                self.dispatch(event)
            await self.flush()

    def dispatch(self, event: h2.events.Event) -> None:
        if isinstance(event, h2.events.RequestReceived):
            headers = {str(k): str(v) for k, v in event.headers}
            call = Call(self, event.stream_id, headers[":path"], headers)
            call.never_indexed = {
                str(h[0]) for h in event.headers if isinstance(h, NeverIndexedHeaderTuple)
            }
            self.pending[event.stream_id] = call
            self.server.calls.append(call)
        elif isinstance(event, h2.events.DataReceived):
            call = self.pending[event.stream_id]
            call.body += event.data
            self.h2.acknowledge_received_data(event.flow_controlled_length, event.stream_id)
        elif isinstance(event, h2.events.StreamEnded):
            call = self.pending[event.stream_id]
            self.group.start_soon(self.server.handle, call)
        elif isinstance(event, h2.events.StreamReset):
            call = self.pending[event.stream_id]
            call.reset = int(event.error_code or 0)
            call.reset_seen.set()
        elif isinstance(event, h2.events.WindowUpdated | h2.events.RemoteSettingsChanged):
            self.window.set()
            self.window = anyio.Event()

    async def send_headers(
        self, stream_id: int, headers: Sequence[tuple[str, str]], end: bool = False
    ) -> None:
        try:
            self.h2.send_headers(stream_id, list(headers), end_stream=end)
        except h2.exceptions.ProtocolError:
            return  # the client reset it
        await self.flush()

    async def send_data(self, stream_id: int, data: bytes, end: bool = False) -> None:
        while True:
            try:
                window = self.h2.local_flow_control_window(stream_id)
                size = min(len(data), window, self.h2.max_outbound_frame_size)
                if size == len(data):
                    self.h2.send_data(stream_id, data, end_stream=end)
                    break
                if size:
                    self.h2.send_data(stream_id, data[:size])
                    data = data[size:]
            except h2.exceptions.ProtocolError:
                return  # the client reset it
            await self.flush()
            if not size:
                await self.window.wait()
        await self.flush()

    async def reset(self, stream_id: int, code: int) -> None:
        self.h2.reset_stream(stream_id, code)
        await self.flush()

    async def goaway(self, last_stream_id: int, code: int) -> None:
        self.h2.close_connection(error_code=code, last_stream_id=last_stream_id)
        await self.flush()


class GrpcServer:
    """Serves gRPC on a free port of 127.0.0.1 with ``handler`` answering each call;
    ``max_streams``: its SETTINGS_MAX_CONCURRENT_STREAMS."""

    def __init__(self, handler: Handler, *, max_streams: int | None = None) -> None:
        self.handler = handler
        self.max_streams = max_streams
        self.calls: list[Call] = []
        self.connections = 0  # made so far
        self.open = 0  # held now
        self._changed = anyio.Event()

    @asynccontextmanager
    async def serve(self) -> AsyncIterator[str]:
        """Serve until the block ends; its URL (``http://127.0.0.1:<port>``)."""
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        async with listener, anyio.create_task_group() as group:
            port = listener.extra(SocketAttribute.local_port)
            group.start_soon(listener.serve, self._handle)
            try:
                yield f"http://127.0.0.1:{port}"
            finally:
                group.cancel_scope.cancel()

    async def handle(self, call: Call) -> None:
        await self.handler(call)

    async def until_no_connection(self, within: float = 5.0) -> None:
        """Wait (bounded) until the client has closed every connection."""
        with anyio.fail_after(within):
            while self.open:
                await self._changed.wait()

    async def _handle(self, stream: ByteStream) -> None:
        self.connections += 1
        self.open += 1
        try:
            async with anyio.create_task_group() as group:
                await _ServerConnection(self, stream, group).run()
                group.cancel_scope.cancel()
        finally:
            with anyio.CancelScope(shield=True):
                await stream.aclose()
            self.open -= 1
            self._changed.set()
            self._changed = anyio.Event()


# -- an A2A agent over it --------------------------------------------------------------------

#: What the agent does for an operation: its result (a stream's: its events), or an
#: A2ARPCError raised (answered as the codec writes it).
Script = Callable[[Op, OpArgs], Awaitable[Any]]


def a2a_agent(version: str, script: Script) -> Handler:
    """A handler that serves A2A over gRPC in ``version`` ("1.0", "0.3") with the client's
    own codec, the server's side: each request read, ``script``'s answer written."""
    codec = serving_codec(version, "http://127.0.0.1")

    async def handler(call: Call) -> None:
        op = codec.op_for(call.path)
        if op is None:
            await call.trailers_only(12, "no such method")
            return
        try:
            result = await script(op, codec.decode_request(op, call.message))
        except A2ARPCError as exc:
            metadata = {"taskId": exc.task_id} if isinstance(exc, TaskNotFoundError) else {}
            status, trailers = codec.encode_error(exc.code, exc.message, metadata)
            await call.trailers_only(status, **trailers)
            return
        await call.head()
        if op.streams:
            for event in result:
                await call.send(codec.encode_event(event))
        else:
            await call.send(codec.encode_result(op, result))
        await call.end()

    return handler
