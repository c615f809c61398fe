"""The I/O boundary: the only client module that imports httpx.

Every httpx exception becomes an ``A2AClientError`` here, once, with the cause chained.
"""

from __future__ import annotations

import math
import ssl
import sys
from collections.abc import AsyncIterator, Callable, Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from types import TracebackType
from typing import Any
from urllib.parse import urlencode, urljoin

import anyio
import httpx

from a2a_anyio._auth import Credentials, MutualTLS
from a2a_anyio._errors import (
    A2AClientError,
    A2AConnectionError,
    A2ADiscoveryError,
    A2AHTTPError,
    A2AProtocolError,
    A2ATimeoutError,
)
from a2a_anyio._sse import SSEDecoder

AsyncClient = httpx.AsyncClient
VerifyTypes = bool | str | ssl.SSLContext

DEFAULT_TIMEOUT = 30.0
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024
DEFAULT_MAX_EVENT_BYTES = 8 * 1024 * 1024
_USER_AGENT = "a2a-anyio"


@dataclass(slots=True)
class RawResponse:
    """A response read whole: status, headers and body bytes."""

    status: int
    headers: Mapping[str, str]
    content: bytes
    url: str

    @property
    def content_type(self) -> str:
        """The media type without parameters, lower-cased."""
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


def make_client(
    *,
    verify: VerifyTypes = True,
    timeout: float | None = DEFAULT_TIMEOUT,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    max_connections: int | None = None,
    client_cert: MutualTLS | None = None,
) -> httpx.AsyncClient:
    """The httpx client an A2AClient owns when none is injected."""
    if isinstance(verify, str) or client_cert is not None:
        verify = _ssl_context(verify, client_cert)
    client = httpx.AsyncClient(
        verify=verify,
        timeout=httpx.Timeout(timeout, connect=connect_timeout),
        # No cap by default: each open stream holds a connection, and a capped pool would
        # queue the streams past the cap behind the ones running (a fan-out stalls).
        limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=100),
        headers={"User-Agent": _USER_AGENT},
        follow_redirects=False,
    )
    # Imported here: it needs httpcore, which httpx itself loads only with its first transport.
    from a2a_anyio import _network

    _network.install([t._pool for t in _transports(client) if hasattr(t, "_pool")])
    return client


def _transports(client: httpx.AsyncClient) -> list[httpx.AsyncBaseTransport]:
    """Every transport ``client`` may send through (proxy mounts included)."""
    mounts = [t for t in client._mounts.values() if t is not None]
    return [client._transport, *mounts]


def keeps_deadlines(client: httpx.AsyncClient) -> bool:
    """True when every request of ``client`` goes through httpcore pools whose sockets end
    by the call's deadline (``_network``): then no cancel scope is needed to keep it."""
    network = sys.modules.get("a2a_anyio._network")
    if network is None:  # no client was made by make_client yet
        return False
    for transport in _transports(client):
        is_http = type(transport) is httpx.AsyncHTTPTransport
        pool = getattr(transport, "_pool", None) if is_http else None
        if not isinstance(getattr(pool, "_network_backend", None), network.DeadlineBackend):
            return False
    return True


#: Everything httpx raises at run time (InvalidURL and StreamError are not HTTPErrors).
HTTPX_ERRORS = (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError)


def _ssl_context(verify: VerifyTypes, client_cert: MutualTLS | None) -> ssl.SSLContext:
    if isinstance(verify, ssl.SSLContext):
        context = verify
    elif isinstance(verify, str):
        context = ssl.create_default_context(cafile=verify)
    else:
        context = ssl.create_default_context()
        if not verify:
            context.check_hostname = False
            context.verify_mode = ssl.CERT_NONE
    if client_cert is not None:
        context.load_cert_chain(client_cert.cert, client_cert.key, client_cert.password)
    return context


_REDIRECTS = (301, 302, 303, 307, 308)
MAX_REDIRECTS = 5


def _mapped(exc: Exception, url: str) -> A2AClientError:
    # The request never left: connect failures are safe to retry for any operation.
    if isinstance(exc, httpx.ConnectTimeout):
        return A2ATimeoutError(f"connect timeout to {url}", timeout="connect", request_sent=False)
    if isinstance(exc, httpx.ReadTimeout):
        return A2ATimeoutError(f"read timeout from {url}", timeout="read")
    if isinstance(exc, httpx.WriteTimeout):
        return A2ATimeoutError(f"write timeout to {url}", timeout="write")
    if isinstance(exc, httpx.PoolTimeout):
        return A2ATimeoutError(f"no free connection for {url}", timeout="pool", request_sent=False)
    if isinstance(exc, httpx.ConnectError):
        return A2AConnectionError(f"cannot connect to {url}: {exc}", request_sent=False)
    if isinstance(exc, httpx.RemoteProtocolError):
        # Mostly a peer that closed the connection mid-response: a cut, not bad data.
        return A2AConnectionError(f"connection to {url} broke: {exc}")
    if isinstance(exc, httpx.DecodingError):
        return A2AProtocolError(f"undecodable HTTP response from {url}: {exc}")
    if isinstance(exc, httpx.TransportError):
        return A2AConnectionError(f"connection to {url} failed: {exc}")
    return A2AProtocolError(f"HTTP error with {url}: {exc}")


def _deadline_passed(url: str, deadline: float | None) -> A2ATimeoutError:
    return A2ATimeoutError(
        f"no answer from {url} within the {deadline}s deadline", timeout="deadline"
    )


def _refused(url: str, hop: int) -> A2AClientError:
    why = (
        f"credentials are bound to the agent's own origin; {url} is another one "
        "(trusted_origins= allows it, or cross_origin='strip' sends without credentials)"
    )
    if hop == 0:
        return A2ADiscoveryError(f"refusing to call {url}: {why}")
    return A2AHTTPError(307, f"refusing a redirect to {url}: {why}")


class HttpTransport:
    """Sends requests through one httpx.AsyncClient and reads bounded responses."""

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        owns_client: bool | None = None,
        verify: VerifyTypes = True,
        timeout: float | None = DEFAULT_TIMEOUT,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_connections: int | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        client_cert: MutualTLS | None = None,
    ) -> None:
        self.owns_client = owns_client if owns_client is not None else client is None
        if client is None:
            client = make_client(
                verify=verify,
                timeout=timeout,
                connect_timeout=connect_timeout,
                max_connections=max_connections,
                client_cert=client_cert,
            )
        self.client = client
        self.timeout = timeout
        #: Deadlines kept by the sockets' own timeouts rather than by a cancel scope.
        self.deadline_by_transport = keeps_deadlines(client)
        self._deadline_var: ContextVar[float] | None = (
            sys.modules["a2a_anyio._network"].DEADLINE if self.deadline_by_transport else None
        )
        # httpcore counts no cap as sys.maxsize connections.
        self._capped_pool = any(
            getattr(getattr(t, "_pool", None), "_max_connections", sys.maxsize) < sys.maxsize
            for t in _transports(client)
        )
        self.max_response_bytes = max_response_bytes
        self.max_event_bytes = max_event_bytes

    async def request(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        deadline: float | None = None,
        credentials: Credentials | None = None,
        max_bytes: int | None = None,
    ) -> RawResponse:
        """Send a request and read the whole response, within ``deadline`` seconds if given.

        ``credentials`` are attached only where they may go (see ``exchange``).
        """
        if deadline is None or self._deadline_var is not None:
            return await self._request(
                method, url, content, headers or {}, credentials, max_bytes, deadline
            )
        # A bare cancel scope: anyio.fail_after costs a generator context manager more.
        with anyio.CancelScope(deadline=anyio.current_time() + deadline):
            return await self._request(method, url, content, headers or {}, credentials, max_bytes)
        raise _deadline_passed(url, deadline)

    async def _request(
        self,
        method: str,
        url: str,
        content: bytes | None,
        headers: Mapping[str, str],
        credentials: Credentials | None,
        max_bytes: int | None,
        seconds: float | None = None,
    ) -> RawResponse:
        """``request`` itself; ``seconds`` is a deadline the sockets keep (``_network``)."""
        timeout = None
        limit = math.inf
        var, token = self._deadline_var, None
        if seconds is not None and var is not None:
            limit = anyio.current_time() + seconds
            token = var.set(limit)
            if self._capped_pool:
                # Waiting for a free connection is not a socket operation: bound it here.
                base = self.client.timeout
                pool = seconds if base.pool is None else min(base.pool, seconds)
                timeout = httpx.Timeout(
                    connect=base.connect, read=base.read, write=base.write, pool=pool
                )
        try:
            response, url = await self.exchange(method, url, content, headers, credentials, timeout)
            try:
                body = await self._read(response, url, max_bytes)
            finally:
                await response.aclose()
        except HTTPX_ERRORS as exc:
            if isinstance(exc, httpx.TimeoutException) and anyio.current_time() >= limit:
                raise _deadline_passed(url, seconds) from exc
            raise _mapped(exc, url) from exc
        finally:
            if var is not None and token is not None:
                var.reset(token)
        return RawResponse(response.status_code, response.headers, body, url)

    async def exchange(
        self,
        method: str,
        url: str,
        content: bytes | None,
        headers: Mapping[str, str],
        credentials: Credentials | None,
        timeout: httpx.Timeout | None = None,
    ) -> tuple[httpx.Response, str]:
        """Send a request; the response with its body unread, and the URL that gave it.

        Credentials go only to their origins: for another origin the request goes without
        them, or is refused (the credentials' policy). Redirects (at most five) are followed
        here, hop by hop under the same rule. After a 401, a scheme that can renew its
        credentials does, and the request is sent once more.
        """
        renewed = False
        for hop in range(MAX_REDIRECTS + 1):
            sent_headers: Mapping[str, str] = headers
            target = url
            if credentials is not None and credentials.present:
                if credentials.allows(url):
                    with_credentials = {**headers, **credentials.headers}
                    if credentials.auth is not None:
                        target = await credentials.auth.apply(
                            url, with_credentials, self._post_form
                        )
                    sent_headers = with_credentials
                elif credentials.policy == "refuse":
                    raise _refused(url, hop)
            request = self.client.build_request(
                method,
                target,
                content=content,
                headers=sent_headers,
                timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
            )
            response = await self.client.send(request, stream=True, follow_redirects=False)
            status = response.status_code
            if status < 300:
                return response, url
            location = response.headers.get("location") if status in _REDIRECTS else None
            if location:
                await response.aclose()
                url = urljoin(url, location)
                if response.status_code == 303 or (
                    response.status_code in (301, 302) and method == "POST"
                ):
                    method, content = "GET", None
                continue
            if (
                response.status_code == 401
                and not renewed
                and credentials is not None
                and credentials.auth is not None
                and credentials.allows(url)
                and await credentials.auth.refresh()
            ):
                renewed = True
                await response.aclose()
                continue
            return response, url
        raise A2AHTTPError(310, f"more than {MAX_REDIRECTS} redirects, the last to {url}")

    async def _post_form(self, url: str, form: Mapping[str, str]) -> tuple[int, bytes]:
        """A form POST with no client credentials (OAuth token requests)."""
        resp = await self.request(
            "POST",
            url,
            content=urlencode(form).encode(),
            headers={"Content-Type": "application/x-www-form-urlencoded"},
            deadline=self.timeout,
        )
        return resp.status, resp.content

    async def _read(
        self, response: httpx.Response, url: str, max_bytes: int | None = None
    ) -> bytes:
        limit = self.max_response_bytes if max_bytes is None else max_bytes
        headers = response.headers
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit():
            if int(declared) > limit:
                raise A2AProtocolError(f"response from {url} is {declared} bytes, over {limit}")
            if "content-encoding" not in headers:
                # HTTP framing stops the body at its declared length: no need to count.
                return await response.aread()
        chunks: list[bytes] = []
        size = 0
        reader = response.aiter_bytes()
        async for chunk in reader:
            size += len(chunk)
            if size > limit:
                await response.aclose()
                await _finish(reader)
                raise A2AProtocolError(f"response from {url} exceeds {limit} bytes")
            chunks.append(chunk)
        return b"".join(chunks)

    def open_sse(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None,
        headers: Mapping[str, str],
        credentials: Credentials | None = None,
        get_on_405: bool = False,
    ) -> SSEConnection:
        """A server-sent-events connection, opened by entering it; ``get_on_405`` sends it
        again as a GET when the method is not allowed."""
        return SSEConnection(self, method, url, content, headers, credentials, get_on_405)

    async def aclose(self) -> None:
        """Close the httpx client if this transport created it."""
        if self.owns_client:
            await self.client.aclose()


class SSEConnection:
    """An open event stream; ``error_response`` is set instead when the server did not stream.

    Servers answer a failing streaming call with a plain JSON body (or an HTTP error) rather
    than an event stream; that answer is read whole and kept for the caller to decode.
    """

    def __init__(
        self,
        transport: HttpTransport,
        method: str,
        url: str,
        content: bytes | None,
        headers: Mapping[str, str],
        credentials: Credentials | None = None,
        get_on_405: bool = False,
    ) -> None:
        self._transport = transport
        self._get_on_405 = get_on_405
        self._method = method
        self._credentials = credentials
        self.url = url
        self._content = content
        self._headers = {**headers, "Accept": "text/event-stream", "Cache-Control": "no-store"}
        self._response: httpx.Response | None = None
        self._chunks: AsyncIterator[bytes] | None = None
        self._decoder = SSEDecoder(transport.max_event_bytes, url)
        self._ready: Iterator[str] | None = None  # the rest of a chunk's events
        self.error_response: RawResponse | None = None
        #: Called when the reader, having received a chunk, goes back to wait for the next.
        self.on_activity: Callable[[], None] | None = None
        #: The longest wait allowed for the next bytes of the stream (set before entering).
        self.idle_timeout: float | None = None
        #: True when the transport itself bounds each read by ``idle_timeout``.
        self.idle_by_transport = False

    async def __aenter__(self) -> SSEConnection:
        client = self._transport.client
        # httpx's network transport applies its read timeout to every socket read, so it
        # bounds the idle gap (keep-alive bytes push it back) at no cost of ours; other
        # transports (mocks, in-process ASGI) ignore it, and the reader guards them instead.
        self.idle_by_transport = self.idle_timeout is not None and isinstance(
            client._transport_for_url(httpx.URL(self.url)), httpx.AsyncHTTPTransport
        )
        read = self.idle_timeout if self.idle_by_transport else None
        base = client.timeout
        timeout = httpx.Timeout(connect=base.connect, read=read, write=base.write, pool=base.pool)
        try:
            response, _ = await self._transport.exchange(
                self._method, self.url, self._content, self._headers, self._credentials, timeout
            )
            if response.status_code == 405 and self._get_on_405:
                # REST subscribe: POST says the spec, GET the proto; servers differ.
                await response.aclose()
                response, _ = await self._transport.exchange(
                    "GET", self.url, None, self._headers, self._credentials, timeout
                )
        except HTTPX_ERRORS as exc:
            raise self._error(exc) from exc
        self._response = response
        ctype = response.headers.get("content-type", "")
        if response.status_code != 200 or "text/event-stream" not in ctype:
            try:
                body = await self._transport._read(response, self.url)
            except HTTPX_ERRORS as exc:
                raise _mapped(exc, self.url) from exc
            finally:
                await self.aclose()
            self.error_response = RawResponse(
                response.status_code, response.headers, body, self.url
            )
            return self
        self._chunks = response.aiter_bytes()
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
        None at the end of the body."""
        if self._ready is not None:
            event = next(self._ready, None)
            if event is not None:
                return event
            self._ready = None
        chunks = self._chunks
        if chunks is None:
            return None
        try:
            while True:
                try:
                    chunk = await chunks.__anext__()
                except StopAsyncIteration:
                    return None
                events = self._decoder.feed(chunk)
                if events:
                    if len(events) > 1:
                        self._ready = iter(events[1:])
                    return events[0]
                # Bytes without a whole event (a keep-alive comment, part of one): wait again.
                if self.on_activity is not None:
                    self.on_activity()
        except HTTPX_ERRORS as exc:
            raise self._error(exc) from exc

    def _error(self, exc: Exception) -> A2AClientError:
        if isinstance(exc, httpx.ReadTimeout) and self.idle_by_transport:
            return A2ATimeoutError(
                f"stream stream-idle timeout: nothing from {self.url} within {self.idle_timeout}s",
                timeout="stream-idle",
            )
        return _mapped(exc, self.url)

    async def aclose(self) -> None:
        """Release the connection; safe to call more than once, also while cancelled."""
        chunks, self._chunks = self._chunks, None
        response, self._response = self._response, None
        with anyio.CancelScope(shield=True):
            if response is not None:
                await response.aclose()
            if chunks is not None:
                await _finish(chunks)


async def _finish(events: AsyncIterator[Any]) -> None:
    """End a half-read iterator over a response, and every generator under it, once the
    response is closed.

    httpx reads through a chain of async generators; closing only the outer one would abandon
    the inner ones, which trio reports as garbage-collected generators.
    Stepping the chain inside an already-expired cancel scope raises the cancellation (or the
    read error of the closed response) in the innermost generator, and it ends each one on its
    way out.
    """
    with anyio.move_on_after(0):
        try:
            async for _ in events:
                pass
        except (*HTTPX_ERRORS, anyio.ClosedResourceError):
            pass
