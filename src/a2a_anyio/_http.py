"""The I/O boundary: the only client module that imports httpx.

Every httpx exception becomes an ``A2AClientError`` here, once, with the cause chained.
"""

from __future__ import annotations

import ssl
from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urljoin

import anyio
import httpx

from a2a_anyio._auth import Auth, Credentials, MutualTLS
from a2a_anyio._errors import (
    A2AClientError,
    A2AConnectionError,
    A2ADiscoveryError,
    A2AHTTPError,
    A2AProtocolError,
    A2ATimeoutError,
    ErrorContext,
    located,
)

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


class OwnClient(httpx.AsyncClient):
    """The httpx client the library makes: httpx's own network transport, whose per-read
    timeout bounds the idle gap of a stream (no cancel scope per read is needed)."""


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
    return OwnClient(
        verify=verify,
        timeout=httpx.Timeout(timeout, connect=connect_timeout),
        # No cap by default: each open stream holds a connection, and a capped pool would
        # queue the streams past the cap behind the ones running (a fan-out stalls).
        limits=httpx.Limits(max_connections=max_connections, max_keepalive_connections=100),
        headers={"User-Agent": _USER_AGENT},
        follow_redirects=False,
    )


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


def mapped(exc: Exception, url: str, context: ErrorContext | None = None) -> A2AClientError:
    """The error of ours for an httpx exception, saying which call it broke (``context``)."""
    where = context or {}
    # The request never left: connect failures are safe to retry for any operation.
    if isinstance(exc, httpx.ConnectTimeout):
        return A2ATimeoutError(
            f"connect timeout to {url}", timeout="connect", request_sent=False, **where
        )
    if isinstance(exc, httpx.ReadTimeout):
        return A2ATimeoutError(f"read timeout from {url}", timeout="read", **where)
    if isinstance(exc, httpx.WriteTimeout):
        return A2ATimeoutError(f"write timeout to {url}", timeout="write", **where)
    if isinstance(exc, httpx.PoolTimeout):
        return A2ATimeoutError(
            f"no free connection for {url}", timeout="pool", request_sent=False, **where
        )
    if isinstance(exc, httpx.ConnectError):
        return A2AConnectionError(f"cannot connect to {url}: {exc}", request_sent=False, **where)
    if isinstance(exc, httpx.RemoteProtocolError):
        # Mostly a peer that closed the connection mid-response: a cut, not bad data.
        return A2AConnectionError(f"connection to {url} broke: {exc}", **where)
    if isinstance(exc, httpx.DecodingError):
        return A2AProtocolError(f"undecodable HTTP response from {url}: {exc}", **where)
    if isinstance(exc, httpx.TransportError):
        return A2AConnectionError(f"connection to {url} failed: {exc}", **where)
    return A2AProtocolError(f"HTTP error with {url}: {exc}", **where)


def _refused(url: str, hop: int, where: ErrorContext) -> A2AClientError:
    why = (
        f"credentials are bound to the agent's own origin; {url} is another one "
        "(trusted_origins= allows it, or cross_origin='strip' sends without credentials)"
    )
    if hop == 0:
        return A2ADiscoveryError(f"refusing to call {url}: {why}", **where)
    return A2AHTTPError(307, f"refusing a redirect to {url}: {why}", **where)


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
        #: True when reads go through httpx's own network transport, whose per-read timeout
        #: then bounds a stream's idle gap.
        self.bounds_reads = isinstance(client, OwnClient)
        self.max_response_bytes = max_response_bytes
        self.max_event_bytes = max_event_bytes

    async def request(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        credentials: Credentials | None = None,
        max_bytes: int | None = None,
        context: ErrorContext | None = None,
    ) -> RawResponse:
        """Send a request and read the whole response (bounded by ``max_bytes``).

        ``credentials`` are attached only where they may go (see ``exchange``). The caller's
        cancel scope keeps the deadline. Errors are built with ``context``: which call this is.
        """
        where = context or {}
        try:
            response, url = await self.exchange(
                method, url, content, headers or {}, credentials, context=where
            )
            try:
                body = await self.read_body(response, url, max_bytes, where)
            finally:
                await response.aclose()
        except HTTPX_ERRORS as exc:
            raise mapped(exc, url, where) from exc
        return RawResponse(response.status_code, response.headers, body, url)

    async def exchange(
        self,
        method: str,
        url: str,
        content: bytes | None,
        headers: Mapping[str, str],
        credentials: Credentials | None,
        timeout: httpx.Timeout | None = None,
        *,
        context: ErrorContext | None = None,
    ) -> tuple[httpx.Response, str]:
        """Send a request; the response with its body unread, and the URL that gave it.

        Credentials go only to their origins: for another origin the request goes without
        them, or is refused (the credentials' policy). Redirects (at most five) are followed
        here, hop by hop under the same rule. After a 401, a scheme that can renew its
        credentials does, and the request is sent once more. Errors say ``context``.
        """
        where = context or {}
        renewed = False
        for hop in range(MAX_REDIRECTS + 1):
            sent_headers: Mapping[str, str] = headers
            target = url
            if credentials is not None and credentials.present:
                if credentials.allows(url):
                    with_credentials = {**headers, **credentials.headers}
                    if credentials.auth is not None:
                        target = await self._apply(credentials.auth, url, with_credentials, where)
                    sent_headers = with_credentials
                elif credentials.policy == "refuse":
                    raise _refused(url, hop, where)
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
        raise A2AHTTPError(310, f"more than {MAX_REDIRECTS} redirects, the last to {url}", **where)

    async def _apply(
        self, auth: Auth, url: str, headers: dict[str, str], where: ErrorContext
    ) -> str:
        """Let ``auth`` set its credentials (fetching a token, perhaps); the URL to send.

        Its errors say which call needed the credentials.
        """

        async def post_form(token_url: str, form: Mapping[str, str]) -> tuple[int, bytes]:
            # A token request: no credentials of the client go with it.
            resp = await self.request(
                "POST",
                token_url,
                content=urlencode(form).encode(),
                headers={"Content-Type": "application/x-www-form-urlencoded"},
                context=where,
            )
            return resp.status, resp.content

        try:
            return await auth.apply(url, headers, post_form)
        except A2AClientError as exc:
            error = located(exc, where)  # an auth scheme knows no call
            if error is exc:
                raise
            raise error from exc

    async def read_body(
        self,
        response: httpx.Response,
        url: str,
        max_bytes: int | None = None,
        context: ErrorContext | None = None,
    ) -> bytes:
        """The response's body, refused past ``max_bytes`` (the transport's limit if None)."""
        where = context or {}
        limit = self.max_response_bytes if max_bytes is None else max_bytes
        headers = response.headers
        declared = headers.get("content-length")
        if declared is not None and declared.isdigit():
            if int(declared) > limit:
                raise A2AProtocolError(
                    f"response from {url} is {declared} bytes, over {limit}", limit=limit, **where
                )
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
                await finish(reader)
                raise A2AProtocolError(
                    f"response from {url} exceeds {limit} bytes", limit=limit, **where
                )
            chunks.append(chunk)
        return b"".join(chunks)

    async def aclose(self) -> None:
        """Close the httpx client if this transport created it."""
        if self.owns_client:
            await self.client.aclose()


async def finish(events: AsyncIterator[Any]) -> None:
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
