"""The transport boundary: what the client's I/O line (``_exchange``, ``_stream``) asks of
whatever carries its requests, below the bindings.

A unary exchange gives a ``Reply``: a status (``HttpStatus`` or ``GrpcStatus``: the
transport says which), its metadata and the answer's bytes. A server stream gives
``Messages``: opened, either a plain ``Reply`` (an answer that is no stream) or one message
at a time until the end. The transport's own failures (connection, timeouts, size limits)
are typed ``A2AClientError``s; what a status or a message means is the codec's to read.

Each codec names the transport that carries it (``WireCodec.transport``), a key of
``TRANSPORTS``; a client's ``Carriers`` makes each at its first request. ``HttpWire`` is
HTTP/1.1 with JSON bodies and server-sent events (httpx, httpx-sse); ``GrpcTransport``
(``_grpc_transport``, the ``grpc`` extra) is gRPC over HTTP/2. What every transport keeps
alike (a stream's open and idle limits, the credentials renewed once after a refusal) is
written once, in ``_transport_rules``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, NamedTuple, Protocol

from a2a_anyio._auth import Credentials, MutualTLS
from a2a_anyio._bindings import Fallback, WireCodec, WireRequest
from a2a_anyio._bindings.base import EventData, Status
from a2a_anyio._errors import ErrorContext
from a2a_anyio._http import HttpTransport, VerifyTypes
from a2a_anyio._http_sse import open_sse
from a2a_anyio._observe import Observer


class Reply(Protocol):
    """A whole answer: ``status`` says how the call went (``HttpStatus``, ``GrpcStatus``:
    the transport's own), ``headers`` are its metadata, ``content`` its bytes."""

    @property
    def status(self) -> Status: ...
    @property
    def headers(self) -> Mapping[str, str]: ...
    @property
    def content(self) -> bytes: ...


class Messages(Protocol):
    """A server stream: ``open()`` sends the request and reads the answer's head; then
    ``error_response`` holds a plain answer, or ``next_event()`` gives each message until
    the end (None): an SSE event's data, a gRPC message, or the status a gRPC stream ended
    with when it is no success (for the codec to raise). ``aclose()`` releases it at any
    point; ``aclose(drain=True)`` after its final message, when the server is to end it now
    (an HTTP/1.1 stream reads the rest of its body briefly, for its connection to be used
    again)."""

    @property
    def error_response(self) -> Reply | None: ...
    async def open(self) -> Any: ...
    async def next_event(self) -> EventData | None: ...
    async def aclose(self, *, drain: bool = False) -> None: ...


class Transport(Protocol):
    """What carries a codec's requests; ``observer`` hears about each of them."""

    observer: Observer

    async def unary(
        self, request: WireRequest[Any], credentials: Credentials, context: ErrorContext
    ) -> Reply:
        """Send ``request`` and read its whole answer (errors built with ``context``)."""
        ...

    def stream(
        self,
        request: WireRequest[Any],
        credentials: Credentials,
        *,
        idle_timeout: float | None,
        open_timeout: float | None,
    ) -> Messages:
        """``request`` as a stream to be opened, within those limits."""
        ...

    async def aclose(self) -> None:
        """Release what it holds of its own (connections)."""
        ...


class HttpWire:
    """The transport of HTTP/1.1 with JSON bodies and server-sent events: one request per
    call through ``http``, a stream's events framed by httpx-sse. A stream answered 405 is
    sent once in its alternative form when the codec gave one for that."""

    def __init__(self, http: HttpTransport) -> None:
        self.http = http
        self.observer = http.observer

    async def unary(
        self, request: WireRequest[Any], credentials: Credentials, context: ErrorContext
    ) -> Reply:
        return await self.http.request(
            request.method,
            request.url,
            content=request.body,
            headers=request.headers,
            credentials=credentials,
            context=context,
        )

    def stream(
        self,
        request: WireRequest[Any],
        credentials: Credentials,
        *,
        idle_timeout: float | None,
        open_timeout: float | None,
    ) -> Messages:
        alternative = request.alternative
        if request.when is not Fallback.METHOD_NOT_ALLOWED:
            alternative = None
        return open_sse(
            self.http,
            request.method,
            request.url,
            content=request.body,
            headers=request.headers,
            credentials=credentials,
            on_405=None if alternative is None else alternative.resend,
            context=request.context,
            idle_timeout=idle_timeout,
            open_timeout=open_timeout,
        )

    async def aclose(self) -> None:
        return None  # its HTTP transport is the client's, closed with it


class TransportOptions(NamedTuple):
    """What a client gives the transports it makes, beside its HTTP transport: the TLS
    options of connections a transport makes itself, and its connect limit."""

    verify: VerifyTypes = True
    client_cert: MutualTLS | None = None
    connect_timeout: float | None = None


def _http_wire(http: HttpTransport, options: TransportOptions) -> Transport:
    return HttpWire(http)


def _grpc(http: HttpTransport, options: TransportOptions) -> Transport:
    from a2a_anyio._grpc_transport import GrpcTransport  # the grpc extra: h2, protobuf

    return GrpcTransport(
        http,
        verify=options.verify,
        client_cert=options.client_cert,
        connect_timeout=options.connect_timeout,
    )


#: The transports a codec may name (``WireCodec.transport``), each with how a client makes
#: it: a new transport is a line here.
TRANSPORTS: dict[str, Callable[[HttpTransport, TransportOptions], Transport]] = {
    "http": _http_wire,
    "grpc": _grpc,
}


class Carriers:
    """The transports of one client, each made at its first request (a client of HTTP
    agents never loads gRPC's) and closed together; ``observer`` hears about every
    request."""

    def __init__(self, http: HttpTransport, options: TransportOptions) -> None:
        self.http = http
        self.observer = http.observer
        self._options = options
        self._made: dict[str, Transport] = {}

    def of(self, codec: WireCodec) -> Transport:
        """The transport that carries ``codec``'s requests."""
        made = self._made.get(codec.transport)
        if made is None:
            made = self._made[codec.transport] = TRANSPORTS[codec.transport](
                self.http, self._options
            )
        return made

    async def aclose(self) -> None:
        """Close every transport made (the HTTP transport itself is its owner's)."""
        made = list(self._made.values())
        self._made.clear()
        for transport in made:
            await transport.aclose()
