"""The I/O boundary's event streams: httpx-sse frames them, over bytes counted on arrival.

httpx-sse turns a response into events. Under it: the body is decoded in bounded steps
(``_http.decoded_body``) when it has a content coding, each chunk is reported as it arrives (bytes of a keep-alive comment
push back an idle limit kept by a scope of ours), and an event that grows past ``max_event_bytes`` of decoded
bytes is refused before more than the limit plus one chunk (a network read, or a decoded step
of at most 64 KiB) is buffered. A stream closed at its final event reads the rest of its body
first, briefly and unframed (``SSEConnection.aclose(drain=True)``), so its connection is kept.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Mapping
from contextlib import suppress
from types import MappingProxyType, TracebackType

import anyio
import httpx
from httpx_sse import EventSource, ServerSentEvent

from a2a_anyio._auth import Credentials
from a2a_anyio._bindings.base import HttpStatus
from a2a_anyio._decoding import UndecodableBody, codings
from a2a_anyio._errors import A2AClientError, A2AProtocolError, ErrorContext
from a2a_anyio._http import (
    HTTPX_ERRORS,
    HttpTransport,
    RawResponse,
    decoded_body,
    finish,
    mapped,
    unlimited,
)
from a2a_anyio._observe import redacted
from a2a_anyio._transport_rules import UNSCOPED, StreamTimeouts

#: A request sent again in another form: method, URL, body.
Resend = tuple[str, str, bytes | None]
_BOM = b"\xef\xbb\xbf"
#: Every way a blank line (the end of an event) can be spelled with CR, LF and CRLF.
_EVENT_ENDS = (b"\n\n", b"\r\r", b"\n\r")
#: A stream closed at its end (its final event came) reads the rest of its body, discarded,
#: for at most this long (seconds) and this many bytes, so that its connection can be used
#: again; a body that does not end by then is closed with its connection, as any other.
DRAIN_GRACE = 0.05
DRAIN_BYTES = 64 * 1024
#: The headers of a connection whose request went out: it is not sent again.
_SENT: Mapping[str, str] = MappingProxyType({})


def oversize(url: str, limit: int, context: ErrorContext) -> A2AProtocolError:
    """The error for an event larger than ``max_event_bytes``."""
    return A2AProtocolError(
        f"an event from {redacted(url)} is larger than {limit} bytes", limit=limit, **context
    )


class _CountedBody(httpx.AsyncByteStream):
    """A response's decoded bytes, counted between event ends, for httpx-sse to frame;
    ``close`` releases what they come from."""

    def __init__(
        self,
        body: AsyncIterable[bytes],
        close: Callable[[], Awaitable[None]],
        limit: int,
        url: str,
        on_chunk: Callable[[], None] | None,
        context: ErrorContext,
    ) -> None:
        self._body = body
        self._close = close
        self._limit = limit
        self._url = url
        self._on_chunk = on_chunk
        self._context = context
        self._chunks: AsyncIterator[bytes] | None = None

    async def __aiter__(self) -> AsyncIterator[bytes]:
        pending = 0  # bytes since the last event end: what the framer may be holding
        last = b""  # the previous chunk's last byte: an event end may span two chunks
        head: bytes | None = b""  # the body's first bytes, held while they may be a BOM
        limit, on_chunk = self._limit, self._on_chunk
        chunks = self._chunks = self._body.__aiter__()
        async for chunk in chunks:
            if on_chunk is not None:  # an empty piece too: bytes arrived that decode to nothing
                on_chunk()
            if head is not None:
                head += chunk
                if len(head) < len(_BOM) and _BOM.startswith(head):
                    continue  # a BOM's first bytes, or none yet: it may come over reads
                chunk = head.removeprefix(_BOM)  # httpx-sse keeps a BOM; the spec drops it
                head = None
            if not chunk:
                continue
            end = max(chunk.rfind(b"\n\n"), chunk.rfind(b"\r\r"), chunk.rfind(b"\n\r"))
            if end >= 0:
                pending = len(chunk) - end - 2
            elif (last + chunk[:1]) in _EVENT_ENDS:
                pending = len(chunk) - 1
            else:
                pending += len(chunk)
            if pending > limit:
                await self._close()
                await finish(chunks)  # every generator under this one ends now, not in the GC
                raise oversize(self._url, limit, self._context)
            last = chunk[-1:]
            yield chunk
        if head:
            yield head  # a body of part of a BOM only: not a BOM

    async def aclose(self) -> None:
        await self._close()

    async def drain(self) -> None:
        """Read the rest of the body, discarded (not framed: no event of it is seen), up to
        ``DRAIN_BYTES``."""
        chunks = self._chunks
        if chunks is None:
            return
        left = DRAIN_BYTES
        async for chunk in chunks:
            left -= len(chunk)
            if left < 0:
                return


def _plain_body(response: httpx.Response) -> httpx.AsyncByteStream | None:
    """The body's own stream when its bytes need no decoding (no content coding) and are
    not read yet; None otherwise."""
    stream = response.stream
    if response.is_stream_consumed or not isinstance(stream, httpx.AsyncByteStream):
        return None
    try:
        if codings(response.headers.get("content-encoding", "")):
            return None
    except UndecodableBody:
        return None  # decoded_body says why
    try:
        response.content  # noqa: B018 - read whole already (a mock's): httpx-sse reads that
    except httpx.ResponseNotRead:
        return stream
    return None


class SSEConnection:
    """An open event stream; ``error_response`` is set instead when the server did not stream.

    Servers answer a failing streaming call with a plain JSON body (or an HTTP error) rather
    than an event stream; that answer is read whole and kept for the caller to decode.
    Errors are built with ``context``: which call the stream answers.
    """

    def __init__(
        self,
        transport: HttpTransport,
        method: str,
        url: str,
        content: bytes | None,
        headers: Mapping[str, str],
        credentials: Credentials | None = None,
        on_405: Resend | None = None,
        context: ErrorContext | None = None,
        idle_timeout: float | None = None,
        open_timeout: float | None = None,
    ) -> None:
        self._context: ErrorContext = context or {}
        self._transport = transport
        self._on_405 = on_405
        self._method = method
        self._credentials = credentials
        self.url = url
        self._content = content
        # A request that accepts JSON too (a call that may stream) says so itself.
        accept = headers.get("Accept", "text/event-stream")
        self._headers: Mapping[str, str] = {
            **headers,
            "Accept": accept,
            "Cache-Control": "no-store",
        }
        self._response: httpx.Response | None = None
        self._events: AsyncIterator[ServerSentEvent] | None = None
        self._body: _CountedBody | None = None  # what the events are framed from
        self._max_event_bytes = transport.max_event_bytes
        self.error_response: RawResponse | None = None
        #: The idle limit: the longest wait for the answer and then for each next bytes of
        #: the stream; the open limit: the whole answer's head (and a plain answer's body),
        #: which bytes that trickle in do not push back.
        self.timeouts = StreamTimeouts(url, self._context, idle=idle_timeout, open=open_timeout)
        self._scoped = False  # the idle limit is kept by a scope of ours, not by httpx

    async def __aenter__(self) -> SSEConnection:
        return await self.open()

    async def open(self) -> SSEConnection:
        """Send the request and read the answer's head (a plain answer whole, into
        ``error_response``); the connection is released on a failure."""
        try:
            return await self._opened()
        except BaseException:
            await self.aclose()
            raise

    async def _opened(self) -> SSEConnection:
        # httpx's network transport applies its read timeout to every socket read, so it
        # bounds the idle gap; other transports (an injected client's, mocks, in-process
        # ASGI) may not, and each wait is then guarded by a cancel scope instead.
        timeouts = self.timeouts
        idle = timeouts.idle
        by_transport = idle is not None and self._transport.bounds_reads
        self._scoped = idle is not None and not by_transport
        connect = self._transport.unary_timeout.connect
        timeout = unlimited(connect, idle if by_transport else None)
        with timeouts.opening():
            with timeouts.waiting() if self._scoped else UNSCOPED:
                try:
                    return await self._open(timeout)
                finally:
                    timeouts.done()
            raise timeouts.idle_expired()
        raise timeouts.open_expired()

    async def _open(self, timeout: httpx.Timeout) -> SSEConnection:
        transport = self._transport
        try:
            response, _ = await transport.exchange(
                self._method,
                self.url,
                self._content,
                self._headers,
                self._credentials,
                timeout,
                context=self._context,
                failed=self._error,
            )
            if response.status_code == 405 and self._on_405 is not None:
                # The other form of the call (REST subscribe: POST per the spec, GET per the
                # proto; servers differ).
                await response.aclose()
                method, url, content = self._on_405
                response, _ = await transport.exchange(
                    method,
                    url,
                    content,
                    self._headers,
                    self._credentials,
                    timeout,
                    context=self._context,
                    failed=self._error,
                )
        except HTTPX_ERRORS as exc:
            raise self._error(exc) from exc
        self._response = response
        # Sent, never again: an idle stream holds none of what made its request.
        self._content = self._on_405 = self._credentials = None
        self._headers = _SENT
        ctype = response.headers.get("content-type", "")
        if response.status_code != 200 or "text/event-stream" not in ctype:
            try:
                body = await transport.read_body(response, self.url, context=self._context)
            except HTTPX_ERRORS as exc:
                raise mapped(exc, self.url, self._context) from exc
            finally:
                await self.aclose()
            self.error_response = RawResponse(
                HttpStatus(response.status_code), response.headers, body, self.url
            )
            return self
        on_chunk = self._touch if self._scoped else None  # else no scope of ours to push back
        limit = transport.max_event_bytes
        plain = _plain_body(response)
        if plain is not None:
            # The usual case: the body's bytes are counted as httpx reads them, and
            # httpx-sse frames the response itself.
            response.stream = self._body = _CountedBody(
                plain, plain.aclose, limit, self.url, on_chunk, self._context
            )
            if response.charset_encoding is None:
                response.encoding = "utf-8"  # an event stream's, whatever the client's default
            framed = response
        else:
            try:
                decoded = decoded_body(response, self.url, self._context)
            except A2AProtocolError:
                await self.aclose()
                raise
            counted = self._body = _CountedBody(
                decoded, response.aclose, limit, self.url, on_chunk, self._context
            )
            # httpx-sse's public API frames events from an httpx.Response only (EventSource;
            # its decoder is private): the counted, decoded bytes are handed to it as one.
            framed = httpx.Response(
                response.status_code,
                headers={"content-type": ctype},  # the bytes are decoded already
                stream=counted,
                request=response.request,
            )
        self._events = EventSource(framed).aiter_sse()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    async def next_event(self) -> str | None:
        """The data of the next event that carries some (comments and empty events skipped);
        None at the end of the body. ``A2ATimeoutError`` when no bytes come within the idle
        limit."""
        events = self._events
        if events is None:
            return None
        scoped = self._scoped
        with self.timeouts.waiting() if scoped else UNSCOPED:
            try:
                while True:
                    try:
                        event = await events.__anext__()
                    except StopAsyncIteration:
                        return None
                    data = event.data
                    if len(data) > self._max_event_bytes:  # one that came whole in one chunk
                        raise self._oversize()
                    if data:
                        return data
            except HTTPX_ERRORS as exc:
                raise self._error(exc) from exc
            finally:
                if scoped:
                    self.timeouts.done()
        raise self.timeouts.idle_expired()  # only a scope of ours ends the block without a return

    def _touch(self) -> None:
        """Bytes arrived (a keep-alive comment too): the idle limit counts from now."""
        self.timeouts.touch()

    def _oversize(self) -> A2AProtocolError:
        return oversize(self.url, self._max_event_bytes, self._context)

    def _error(
        self, exc: Exception, url: str | None = None, context: ErrorContext | None = None
    ) -> A2AClientError:
        """The error of ``exc``, raised by the request to ``url`` (this stream's by default)."""
        if (
            isinstance(exc, httpx.ReadTimeout)
            and self.timeouts.idle is not None
            and not self._scoped
        ):
            return self.timeouts.idle_expired()
        return mapped(exc, url or self.url, context or self._context)

    async def aclose(self, *, drain: bool = False) -> None:
        """Release the connection; safe to call more than once, also while cancelled.

        ``drain``: the server is to end the body now (the stream's final event came): its
        rest is read first, within ``DRAIN_GRACE`` and the caller's own limits, so that the
        connection goes back to the pool instead of being closed. Not when the caller is
        cancelled already; a cancel that comes meanwhile is raised once the connection is
        released. A failure there is not raised: the connection is closed as without it.
        """
        try:
            if drain and self._response is not None:
                await self._drain()
        finally:
            await self._release()

    async def _drain(self) -> None:
        body = self._body
        if body is None or anyio.current_effective_deadline() <= anyio.current_time():
            return  # cancelled, or out of time: closed at once
        # A failure is not the call's: the connection is closed, as without the drain.
        with anyio.move_on_after(DRAIN_GRACE), suppress(Exception):
            await body.drain()

    async def _release(self) -> None:
        events, self._events = self._events, None
        response, self._response = self._response, None
        self._body = None
        with anyio.CancelScope(shield=True):
            if response is not None:
                await response.aclose()
            if events is not None:
                await finish(events)


def open_sse(
    transport: HttpTransport,
    method: str,
    url: str,
    *,
    content: bytes | None,
    headers: Mapping[str, str],
    credentials: Credentials | None = None,
    on_405: Resend | None = None,
    context: ErrorContext | None = None,
    idle_timeout: float | None = None,
    open_timeout: float | None = None,
) -> SSEConnection:
    """A server-sent-events connection, opened by ``open()`` or by entering it; ``on_405`` is
    the request (method, URL, body) sent instead when the server answers 405 Method Not
    Allowed; ``context`` says which call its errors belong to; ``idle_timeout`` and
    ``open_timeout`` are its limits (``SSEConnection``)."""
    return SSEConnection(
        transport, method, url, content, headers, credentials, on_405, context,
        idle_timeout, open_timeout,
    )  # fmt: skip
