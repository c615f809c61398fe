"""The transport boundary: what the client's I/O line (``_exchange``, ``_stream``) asks of
whatever carries its requests, below the bindings.

A unary exchange gives a ``Reply``: a status, its metadata and the answer's bytes. A server
stream gives ``Messages``: opened, either a plain ``Reply`` (an answer that is no stream) or
one message at a time until the end. The transport's own failures (connection, timeouts,
size limits) are typed ``A2AClientError``s; what a status or a message means is the codec's
to read. ``HttpWire`` is HTTP/1.1 with JSON bodies and server-sent events (httpx,
httpx-sse); docs/architecture.md says how HTTP/2 with protobuf messages and trailers
(gRPC) implements the same protocol.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from a2a_anyio._auth import Credentials
from a2a_anyio._bindings import Fallback, WireRequest
from a2a_anyio._bindings.base import EventData, Status
from a2a_anyio._errors import ErrorContext
from a2a_anyio._http import HttpTransport
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
    point."""

    @property
    def error_response(self) -> Reply | None: ...
    async def open(self) -> Any: ...
    async def next_event(self) -> EventData | None: ...
    async def aclose(self) -> None: ...


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
