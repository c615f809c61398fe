"""The I/O boundary: the only client module that imports httpx.

Every httpx exception becomes an ``A2AClientError`` here, once, with the cause chained.
"""

from __future__ import annotations

import http.cookiejar
import logging
import ssl
import time
import warnings
from collections.abc import AsyncIterator, Callable, Mapping
from typing import TYPE_CHECKING, Any, NamedTuple
from urllib.parse import urlencode, urljoin, urlsplit

import anyio
import httpx

from a2a_anyio._auth import Auth, Credentials, MutualTLS, Origin, merged, origin_of
from a2a_anyio._bindings.base import HttpStatus
from a2a_anyio._decoding import ACCEPT_ENCODING, BodyDecoder, UndecodableBody
from a2a_anyio._errors import (
    A2AAuthError,
    A2AClientError,
    A2AConnectionError,
    A2ADiscoveryError,
    A2AHTTPError,
    A2AProtocolError,
    A2ATimeoutError,
    ErrorContext,
    instead,
    located,
    shown,
)
from a2a_anyio._observe import Observer, about, redacted
from a2a_anyio._sent import ON_SENT, request_sent
from a2a_anyio._transport_rules import renew

if TYPE_CHECKING:
    from a2a_anyio._cookies import CookieJar
    from a2a_anyio._network import NetworkGuard, NetworkPolicy

AsyncClient = httpx.AsyncClient
VerifyTypes = bool | str | ssl.SSLContext

DEFAULT_TIMEOUT = 30.0
DEFAULT_CONNECT_TIMEOUT = 10.0
DEFAULT_MAX_RESPONSE_BYTES = 32 * 1024 * 1024
DEFAULT_MAX_EVENT_BYTES = 8 * 1024 * 1024
#: Parsed URLs a transport keeps (``HttpTransport._url``).
MAX_PARSED_URLS = 64
_USER_AGENT = "a2a-anyio"


class RawResponse(NamedTuple):
    """A response read whole: status, headers and body bytes."""

    status: HttpStatus
    headers: Mapping[str, str]
    content: bytes
    url: str

    @property
    def content_type(self) -> str:
        """The media type without parameters, lower-cased."""
        return self.headers.get("content-type", "").split(";", 1)[0].strip().lower()


class OwnClient(httpx.AsyncClient):
    """The httpx client the library makes: httpx's own network transport, whose per-read
    timeout bounds the idle gap of a stream (no cancel scope per read is needed), one per
    origin (``origins``). It has no read, write or pool timeout of its own: a call's deadline
    is its only limit."""

    def __init__(self, *, origins: OriginTransports, **options: Any) -> None:
        self._no_cookies = _NoCookieStore(_NoCookies())
        super().__init__(transport=origins, **options)
        #: The transports it sends through, by origin.
        self.origins = origins
        #: The network policy its transports enforce (``_network``), or None.
        self.network_policy = origins.network_policy

    @property
    def cookies(self) -> httpx.Cookies:
        """Its cookies: none, ever (agents' cookies are ``HttpTransport.cookies``)."""
        return self._no_cookies

    @cookies.setter
    def cookies(self, cookies: Any) -> None:
        return None  # it keeps none


#: Connections of one of httpx's transports. Its connection pool goes over all its
#: connections (and, for each idle one, over all of them again) whenever a request starts or
#: ends: a pool of C connections costs O(C^2) a request. Small pools keep that cost flat, for
#: thousands of agents on as many origins, on ten, or behind one. Each idle connection a
#: walk meets is also asked whether its socket is readable, which costs more than the rest
#: of its check: 4 measured cheaper than 10 (docs/performance.md, "Scale").
SHARD_CONNECTIONS = 4
#: Idle transports kept alive, with their connections (the least recently used go first):
#: this many, or as many as were ever in use at once when that is more (a fan-out's agents
#: between their card and their send, the agents a fan-out will call again); a transport
#: idle past the keep-alive expiry goes, its connections expired.
MAX_IDLE_SHARDS = 100


class _Shard:
    """One of httpx's transports, the requests on it now (responses not yet closed), and the
    most it takes at once (hence the connections it opens)."""

    __slots__ = ("active", "cap", "idle_since", "origin", "transport")

    def __init__(self, origin: _Origin, transport: httpx.AsyncBaseTransport, cap: int) -> None:
        self.origin = origin
        self.transport = transport
        self.cap = cap
        self.active = 0
        self.idle_since = 0.0


class _Origin:
    """An origin's transports: those with room for one more request first, oldest first;
    and, under a connection cap, the requests that may run at once."""

    __slots__ = ("caps", "key", "room", "shards", "slots")

    def __init__(self, key: Origin, slots: anyio.Semaphore | None) -> None:
        self.key = key
        self.shards: dict[_Shard, None] = {}
        self.room: dict[_Shard, None] = {}
        self.caps = 0  # the connections its transports may hold, together
        self.slots = slots


class OriginTransports(httpx.AsyncBaseTransport):
    """httpx's own network transports (``httpx.AsyncHTTPTransport``), each for one origin and
    at most ``SHARD_CONNECTIONS`` requests at once (so as many connections), made with the
    same TLS context and limits, so
    that starting or ending a request costs the same however many agents and streams the
    client holds, and wherever they are hosted.

    A request goes to a transport of its origin with room for it, else to a new one: no
    request waits behind another for a connection, unless ``limits`` caps the origin's
    connections (``max_connections``: the cap is per origin, and the requests past it wait
    for one to end). A transport whose last request ends is kept, with its idle
    connections, among the ``MAX_IDLE_SHARDS`` used last, or among as many as were ever in
    use at once when that is more, until its connections expire; the others are closed.
    """

    def __init__(
        self,
        *,
        verify: ssl.SSLContext,
        limits: httpx.Limits,
        network_policy: NetworkPolicy | None = None,
    ) -> None:
        self.verify = verify
        self.limits = limits
        self.network_policy = network_policy
        self._origins: dict[Origin, _Origin] = {}
        self._idle: dict[_Shard, None] = {}  # transports without a request, oldest first
        self._busy = 0  # transports with a request
        self._peak = 0  # the most transports with a request at once

    def active(self) -> dict[Origin, list[int]]:
        """The requests open now on each transport, by origin (idle transports too)."""
        return {key: [s.active for s in o.shards] for key, o in self._origins.items()}

    def caps(self) -> dict[Origin, list[int]]:
        """The requests each transport takes at once (so the connections it may hold), by
        origin (as ``active``)."""
        return {key: [s.cap for s in o.shards] for key, o in self._origins.items()}

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        origin = self._origin(_origin(request.url))
        if origin.slots is not None:
            await origin.slots.acquire()
        try:
            shard = self._take(origin)
        except BaseException:
            if origin.slots is not None:
                origin.slots.release()
            raise
        try:
            response = await shard.transport.handle_async_request(request)
        except BaseException:
            await self.release(shard)
            raise
        body = response.stream
        assert isinstance(body, httpx.AsyncByteStream)  # an async transport's
        response.stream = _Released(body, self, shard)
        return response

    def _origin(self, key: Origin) -> _Origin:
        origin = self._origins.get(key)
        if origin is None:
            cap = self.limits.max_connections
            slots = None if cap is None else anyio.Semaphore(cap)
            origin = self._origins[key] = _Origin(key, slots)
        return origin

    def _take(self, origin: _Origin) -> _Shard:
        """A transport of ``origin`` with room for one more request, or a new one."""
        shard = next(iter(origin.room), None)
        if shard is None:
            cap = SHARD_CONNECTIONS
            if self.limits.max_connections is not None:  # (the slots leave room for one)
                cap = min(cap, self.limits.max_connections - origin.caps)
            keep = self.limits.max_keepalive_connections
            # No cap of httpcore's own: a request never waits there (the count of requests
            # bounds the connections), and a connection that a cancelled request left
            # unopened in httpcore's pool can take no place that a request needs.
            limits = httpx.Limits(
                max_connections=None,
                max_keepalive_connections=cap if keep is None else min(cap, keep),
                keepalive_expiry=self.limits.keepalive_expiry,
            )
            transport: httpx.AsyncBaseTransport
            transport = httpx.AsyncHTTPTransport(verify=self.verify, limits=limits)
            if self.network_policy is not None:  # a transport per origin, pinned per request
                from a2a_anyio._http_pinned import PinnedTransport

                transport = PinnedTransport(transport, self.network_policy)
            shard = _Shard(origin, transport, cap)
            origin.shards[shard] = None
            origin.caps += cap
            origin.room[shard] = None
        self._idle.pop(shard, None)
        if not shard.active:
            self._busy += 1
            self._peak = max(self._peak, self._busy)
        shard.active += 1
        if shard.active >= shard.cap:
            del origin.room[shard]
        return shard

    async def release(self, shard: _Shard) -> None:
        """A request of ``shard`` ended: its slot is free; close what is no longer kept."""
        shard.active -= 1
        origin = shard.origin
        if origin.slots is not None:
            origin.slots.release()
        if self._origins.get(origin.key) is not origin:  # closed with the client
            return
        origin.room[shard] = None
        if shard.active:
            return
        self._busy -= 1
        now = shard.idle_since = anyio.current_time()
        self._idle[shard] = None
        kept, expiry = max(MAX_IDLE_SHARDS, self._peak), self.limits.keepalive_expiry
        for _ in range(2):  # (a release adds one idle transport)
            oldest = next(iter(self._idle))
            expired = expiry is not None and now - oldest.idle_since > expiry
            if len(self._idle) <= kept and not expired:
                break
            del self._idle[oldest]
            self._forget(oldest)
            await _close(oldest)

    def _forget(self, shard: _Shard) -> None:
        origin = shard.origin
        del origin.shards[shard], origin.room[shard]
        origin.caps -= shard.cap
        if not origin.shards:  # (no request runs there, so none waits for a slot either)
            del self._origins[origin.key]

    async def aclose(self) -> None:
        shards = [s for origin in self._origins.values() for s in origin.shards]
        for origin in self._origins.values():  # (its shards name it: no cycle left behind)
            origin.shards.clear()
            origin.room.clear()
        self._origins.clear()
        self._idle.clear()
        self._busy = self._peak = 0
        for shard in shards:
            await shard.transport.aclose()


async def _close(shard: _Shard) -> None:
    # Its connections are idle: closing them is quick, and not the business of the
    # cancellation that may be ending the request that let it go.
    with anyio.CancelScope(shield=True):
        await shard.transport.aclose()


class _Released(httpx.AsyncByteStream):
    """A response body that tells its transport when it is closed."""

    __slots__ = ("body", "origins", "shard")

    def __init__(self, body: httpx.AsyncByteStream, origins: OriginTransports, shard: _Shard):
        self.body = body
        self.origins: OriginTransports | None = origins
        self.shard = shard

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self.body.__aiter__()  # no layer of its own on every chunk

    async def aclose(self) -> None:
        origins, self.origins = self.origins, None
        try:
            await self.body.aclose()
        finally:
            if origins is not None:
                await origins.release(self.shard)


class _LetGo(httpx.AsyncByteStream):
    """A response's body as httpx made it, let go of once closed: httpx's body refers back to
    its response, a cycle that would keep the response, its request and its connection's
    streams alive until the collector's next full pass (thousands of them in a fan-out)."""

    __slots__ = ("body",)

    def __init__(self, body: httpx.AsyncByteStream) -> None:
        self.body: httpx.AsyncByteStream | None = body

    def __aiter__(self) -> AsyncIterator[bytes]:
        if self.body is None:
            raise httpx.StreamClosed()
        return self.body.__aiter__()  # no layer of its own on every chunk

    async def aclose(self) -> None:
        body = self.body
        if body is not None:
            try:
                await body.aclose()
            finally:
                self.body = None


class _NoCookies(http.cookiejar.CookieJar):
    """The jar of the httpx clients the library makes: it keeps nothing. Cookies agents set
    are kept per origin by ``HttpTransport`` instead (``_cookies.CookieJar``)."""

    def extract_cookies(self, response: Any, request: Any) -> None:
        return None


class _NoCookieStore(httpx.Cookies):
    """httpx's cookies of a client the library makes, over a jar that keeps nothing: a
    response is not read for them (httpx would wrap it and its request, for the jar, each
    time: more than a tenth of what a call costs the client)."""

    def extract_cookies(self, response: httpx.Response) -> None:
        return None


def unlimited(connect: float | None, read: float | None = None) -> httpx.Timeout:
    """httpx's timeouts for a request whose deadline is a cancel scope of ours: ``connect``
    bounds a connect, ``read`` (a stream's idle limit) each read; no write or pool timeout,
    which would cut the call's own deadline shorter."""
    return httpx.Timeout(connect=connect, read=read, write=None, pool=None)


def make_client(
    *,
    verify: VerifyTypes = True,
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
    max_connections: int | None = None,
    client_cert: MutualTLS | None = None,
    network_policy: NetworkPolicy | None = None,
) -> httpx.AsyncClient:
    """The httpx client an A2AClient or an AgentPool owns when none is injected (under a
    ``network_policy``, it takes no proxy from the environment: the policy resolves and
    connects itself)."""
    if isinstance(verify, str) or client_cert is not None:
        context = ssl_context(verify, client_cert)
    else:
        # One context for every origin's transport (httpx would make one for each).
        context = httpx.create_ssl_context(verify)
    # No cap by default: each open stream holds a connection, and a capped pool would
    # queue the streams past the cap behind the ones running (a fan-out stalls).
    limits = httpx.Limits(max_connections=max_connections, max_keepalive_connections=100)
    return OwnClient(
        origins=OriginTransports(verify=context, limits=limits, network_policy=network_policy),
        trust_env=network_policy is None,
        verify=context,  # for the proxies of the environment, if any
        timeout=unlimited(connect_timeout),
        headers={"User-Agent": _USER_AGENT},
        follow_redirects=False,
    )


#: Everything httpx raises at run time (InvalidURL and StreamError are not HTTPErrors).
HTTPX_ERRORS = (httpx.HTTPError, httpx.InvalidURL, httpx.StreamError)


def warn_unverified(where: str) -> None:
    """The one warning of ``verify=False``: a ``UserWarning`` for the code that asked for it
    (a thing to change, not an event of the run: it is not logged)."""
    warnings.warn(f"TLS certificates are not verified for {where}", UserWarning, stacklevel=3)


def ssl_context(verify: VerifyTypes, client_cert: MutualTLS | None) -> ssl.SSLContext:
    """The TLS context of ``verify`` (a given context is used as it is) with the client
    certificate, if any."""
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
#: An OAuth token response is a small JSON object.
MAX_TOKEN_BYTES = 64 * 1024
_DEFAULT_PORTS = {"http": 80, "https": 443}


def url_problem(url: str) -> str | None:
    """Why ``url`` cannot be requested, as a phrase ("is not an absolute http(s) URL"), or
    None when it can: it must be an absolute http(s) URL that httpx reads, with a port from
    1 to 65535 and no lone surrogate. The user's URLs and those servers give (a card's
    interfaces, a redirect's ``Location``) are checked alike."""
    try:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            return "is not an absolute http(s) URL"
        try:
            port = parts.port
        except ValueError:
            port = 0
        if port == 0:
            return "has an invalid port"
        url.encode()
        httpx.URL(url)
    except UnicodeError:
        return "holds a lone surrogate (not valid Unicode)"
    except (ValueError, httpx.InvalidURL) as exc:
        return f"cannot be read ({str(exc)[:100]})"
    return None


def resolve(base: str, ref: str) -> tuple[str, str | None]:
    """``ref`` (a URL a server gave, maybe relative) made absolute against ``base``, and
    why it cannot be requested (``url_problem``), or None."""
    try:
        url = urljoin(base, ref)
    except ValueError as exc:  # a broken IPv6 literal
        return ref, f"cannot be read ({str(exc)[:100]})"
    return url, url_problem(url)


def check_url(url: str, what: str = "url") -> str:
    """``url`` if it is an absolute http(s) URL that can be requested, else ValueError."""
    if not isinstance(url, str):
        raise ValueError(f"{what} must be a string, not {type(url).__name__}")
    problem = url_problem(url)
    if problem is not None:
        raise ValueError(f"{what} {problem}: {shown(url, 200)}")
    return url


def _origin(url: httpx.URL) -> Origin:
    return url.scheme, url.host, url.port or _DEFAULT_PORTS.get(url.scheme)


def _on(url: str, origin: Origin) -> bool:
    """True if ``url`` is on ``origin``; a URL without a readable origin is not."""
    try:
        return origin_of(url) == origin
    except ValueError:
        return False


def mapped(exc: Exception, url: str, context: ErrorContext | None = None) -> A2AClientError:
    """The error of ours for an httpx exception, saying which call it broke (``context``)."""
    where = context or {}
    url = redacted(url)  # a server may have chosen it (a redirect, a card's interface)
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
            f"pool timeout: no free connection for {url}",
            timeout="pool",
            request_sent=False,
            **where,
        )
    if isinstance(exc, httpx.ConnectError):
        return A2AConnectionError(f"cannot connect to {url}: {exc}", request_sent=False, **where)
    if isinstance(exc, httpx.RemoteProtocolError):
        # Mostly a peer that closed the connection mid-response: a cut, not bad data.
        return A2AConnectionError(f"connection to {url} broke: {exc}", **where)
    if isinstance(exc, httpx.LocalProtocolError):
        # Its text, and that of the errors under it, quotes the header the HTTP layer refused,
        # which may hold a credential: scrubbed, so that no traceback shows it.
        cause: BaseException | None = exc
        for _ in range(16):  # a chain is short, and must not loop forever if it is a cycle
            if cause is None:
                break
            cause.args = ("a header or the request line is not valid HTTP",)
            cause = cause.__cause__ or cause.__context__
        return A2AClientError(
            f"the request to {url} could not be sent: it is not valid HTTP", **where
        )
    if isinstance(exc, httpx.DecodingError):
        return A2AProtocolError(f"undecodable HTTP response from {url}: {exc}", **where)
    if isinstance(exc, httpx.TransportError):
        return A2AConnectionError(f"connection to {url} failed: {exc}", **where)
    return A2AProtocolError(f"HTTP error with {url}: {exc}", **where)


#: Makes the error of an httpx exception raised by the request to a URL, in a context.
Failed = Callable[[Exception, str, ErrorContext], A2AClientError]


def _refused(url: str, hop: int, where: ErrorContext) -> A2AClientError:
    url = redacted(url)
    why = (
        f"credentials are bound to the agent's own origin; {url} is another one "
        "(trusted_origins= allows it, or cross_origin='strip' sends without credentials)"
    )
    if hop == 0:
        return A2ADiscoveryError(f"refusing to call {url}: {why}", **where)
    return A2AHTTPError(status_code=307, body=f"refusing a redirect to {url}: {why}", **where)


class HttpTransport:
    """Sends requests through one httpx.AsyncClient and reads bounded responses.

    Every request goes through ``exchange``, which reports it to ``observer``: a DEBUG record
    when it is sent and one when it is answered (method, URL without secrets, status,
    duration, the call's method and JSON-RPC id; never a header), and the tracing context
    in its headers when the client traces.
    """

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        owns_client: bool | None = None,
        verify: VerifyTypes = True,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_connections: int | None = None,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        client_cert: MutualTLS | None = None,
        observer: Observer | None = None,
        network: NetworkGuard | None = None,
    ) -> None:
        self.owns_client = owns_client if owns_client is not None else client is None
        #: The network policy of the client's requests, bound to its own URLs (``_network``).
        self.network = network
        self.observer = observer if observer is not None else Observer()
        if client is None:
            client = make_client(
                verify=verify,
                connect_timeout=connect_timeout,
                max_connections=max_connections,
                client_cert=client_cert,
                network_policy=network.policy if network is not None else None,
            )
        self.client = client
        #: The timeouts of a unary request: the client's connect timeout only (an injected
        #: client's read, write and pool timeouts would cut a call's deadline shorter).
        self.unary_timeout = unlimited(client.timeout.connect)
        #: True when reads go through httpx's own network transport, whose per-read timeout
        #: then bounds a stream's idle gap.
        self.bounds_reads = isinstance(client, OwnClient)
        self.max_response_bytes = max_response_bytes
        self.max_event_bytes = max_event_bytes
        #: What agents set with Set-Cookie, per exact origin (an injected client's jar is
        #: neither read nor sent); made at the first Set-Cookie, which few agents send.
        self.cookies: CookieJar | None = None
        #: The URLs requested last, parsed (``httpx.URL`` is immutable): parsing one costs
        #: more than the rest of a request's build, and a client calls few URLs over and over.
        self._urls: dict[str, httpx.URL] = {}

    async def request(
        self,
        method: str,
        url: str,
        *,
        content: bytes | None = None,
        headers: Mapping[str, str] | None = None,
        credentials: Credentials | None = None,
        max_bytes: int | None = None,
        stay_on_origin: bool = False,
        context: ErrorContext | None = None,
    ) -> RawResponse:
        """Send a request and read the whole response (bounded by ``max_bytes``).

        ``credentials`` are attached only where they may go, and ``stay_on_origin`` refuses
        redirects elsewhere (see ``exchange``). The caller's cancel scope keeps the deadline.
        Errors are built with ``context``: which call this is.
        """
        where = context or {}
        try:
            response, url = await self.exchange(
                method,
                url,
                content,
                headers or {},
                credentials,
                stay_on_origin=stay_on_origin,
                context=where,
            )
            try:
                body = await self.read_body(response, url, max_bytes, where)
            finally:
                await response.aclose()
        except HTTPX_ERRORS as exc:
            raise mapped(exc, url, where) from exc
        return RawResponse(HttpStatus(response.status_code), response.headers, body, url)

    async def exchange(
        self,
        method: str,
        url: str,
        content: bytes | None,
        headers: Mapping[str, str],
        credentials: Credentials | None,
        timeout: httpx.Timeout | None = None,
        *,
        stay_on_origin: bool = False,
        context: ErrorContext | None = None,
        failed: Failed | None = None,
    ) -> tuple[httpx.Response, str]:
        """Send a request; the response with its body unread, and the URL that gave it.

        Credentials go only to their origins: for another origin the request goes without
        them, or is refused (the credentials' policy). Redirects (at most five) are followed
        here, hop by hop under the same rule; with ``stay_on_origin`` (the body holds a
        secret) a redirect to another origin raises ``A2AAuthError``. Each hop carries the
        cookies its own origin set. After a 401, a scheme that can renew its credentials
        does, and the request is sent once more. Errors say ``context``; an httpx error of
        a hop is made an ``A2AClientError`` naming that hop's URL by ``failed`` (``mapped``
        by default).
        """
        where = context or {}
        renewed = False
        start = origin_of(url) if stay_on_origin else None
        debug = self.observer.logger.isEnabledFor(logging.DEBUG)
        for hop in range(MAX_REDIRECTS + 1):
            sent_headers: Mapping[str, str] = headers
            target = url
            if credentials is not None and credentials.present:
                target, sent_headers = await self.with_credentials(
                    url, headers, credentials, where, hop
                )
            request = self._build(method, target, content, sent_headers, timeout)
            if self.cookies:
                self._add_cookies(request, _origin(request.url), sent_headers)
            self.observer.tracing.inject(request.headers)
            try:
                response = await self._send(request, url, where, debug)
            except HTTPX_ERRORS as exc:  # named by the hop that failed, not the first URL
                raise (failed or mapped)(exc, url, where) from exc
            if "set-cookie" in response.headers:
                if self.cookies is None:
                    from a2a_anyio._cookies import CookieJar

                    self.cookies = CookieJar()
                now = anyio.current_time()
                lines = response.headers.get_list("set-cookie")
                self.cookies.store(_origin(request.url), request.url.path, lines, now)
            status = response.status_code
            if status < 300:
                return response, url
            location = response.headers.get("location") if status in _REDIRECTS else None
            if location:
                await response.aclose()
                url, problem = resolve(url, location)
                if start is not None and not _on(url, start):
                    raise A2AAuthError(
                        status_code=status,
                        body=f"the token endpoint redirected to another origin: {redacted(url)}; "
                        "the client secret goes only to the token URL's own origin",
                        **where,
                    )
                if problem is not None:
                    raise A2AProtocolError(
                        f"refusing a redirect to {shown(url, 200)}: it {problem}", **where
                    )
                if response.status_code == 303 or (
                    response.status_code in (301, 302) and method == "POST"
                ):
                    method, content = "GET", None
                continue
            if response.status_code == 401 and not renewed and await renew(credentials, url):
                renewed = True
                await response.aclose()
                continue
            return response, url
        raise A2AHTTPError(
            status_code=310,
            body=f"more than {MAX_REDIRECTS} redirects, the last to {redacted(url)}",
            **where,
        )

    async def with_credentials(
        self,
        url: str,
        headers: Mapping[str, str],
        credentials: Credentials,
        context: ErrorContext,
        hop: int = 0,
    ) -> tuple[str, Mapping[str, str]]:
        """The URL to send (an API key may go into its query) and ``headers`` with the
        credentials, when they may go to ``url``'s origin; else ``headers`` alone, or the
        request refused (the credentials' policy; ``hop``: how many redirects led there)."""
        if not credentials.allows(url):
            if credentials.policy == "refuse":
                raise _refused(url, hop, context)
            return url, headers
        with_credentials = merged(headers, credentials.headers)
        target = url
        if credentials.auth is not None:
            target = await self._apply(credentials.auth, url, with_credentials, context)
        # A call's own headers go over all the client's, its scheme's too.
        return target, merged(with_credentials, credentials.call_headers)

    async def _send(
        self, request: httpx.Request, url: str, where: ErrorContext, debug: bool
    ) -> httpx.Response:
        """Send one request (one hop); its response, body unread. With ``debug``, a record
        when it leaves and one when it is answered, or not. ``url`` is the request's URL
        before credentials were added to it (an API key in the query)."""
        log = self.observer.logger
        if debug:
            shown_url = redacted(url)
            log.debug("request %s %s%s", request.method, shown_url, about(where))
            started = time.perf_counter()
        try:
            response = await self.client.send(request, stream=True, follow_redirects=False)
        except BaseException as exc:
            if debug:
                took = (time.perf_counter() - started) * 1000
                log.debug(
                    "no answer to %s %s after %.1f ms: %s%s",
                    request.method, shown_url, took, type(exc).__name__, about(where),
                )  # fmt: skip
            if isinstance(exc, httpx.InvalidURL) or (
                isinstance(exc, httpx.RemoteProtocolError) and "location header" in str(exc)
            ):
                # httpx reads a redirect's Location before it hands the response over; its
                # message is the only public sign that this, not a cut, is what failed.
                why = f"its Location cannot be read ({exc})"
                raise A2AProtocolError(
                    f"refusing a redirect from {redacted(url)}: {why}", **where
                ) from exc
            raise
        body = response.stream
        if isinstance(body, httpx.AsyncByteStream):
            response.stream = _LetGo(body)
        if debug:
            took = (time.perf_counter() - started) * 1000
            log.debug(
                "answer %d to %s %s in %.1f ms%s",
                response.status_code, request.method, shown_url, took, about(where),
            )  # fmt: skip
        return response

    def _build(
        self,
        method: str,
        url: str,
        content: bytes | None,
        headers: Mapping[str, str],
        timeout: httpx.Timeout | None,
    ) -> httpx.Request:
        """A request with the httpx client's default headers and query parameters, ``timeout``
        (``unary_timeout`` by default), but not its cookies (what ``build_request`` would add): httpx's jar is host-wide, and
        an injected client's jar may hold what any server put there."""
        client = self.client
        sent = httpx.Headers(client.headers)
        sent["Accept-Encoding"] = ACCEPT_ENCODING  # only what decoded_body decodes
        for name, value in headers.items():  # (as update() would, at a third of its cost)
            sent[name] = value
        target = self._url(url)
        if client.params:
            target = target.copy_merge_params(client.params)
        extensions: dict[str, Any] = {
            "timeout": (timeout if timeout is not None else self.unary_timeout).as_dict()
        }
        if ON_SENT.get() is not None:  # someone waits for it to go out (httpcore's trace)
            extensions["trace"] = _tell_when_sent
        if self.network is not None:
            extensions["a2a_anyio.network"] = self.network  # (_network.EXTENSION)
        return httpx.Request(method, target, content=content, headers=sent, extensions=extensions)

    def _url(self, url: str) -> httpx.URL:
        """``url`` parsed, from the last ``MAX_PARSED_URLS`` parsed if it is among them."""
        parsed = self._urls.get(url)
        if parsed is None:
            parsed = httpx.URL(url)
            if len(self._urls) >= MAX_PARSED_URLS:
                del self._urls[next(iter(self._urls))]  # the oldest
            self._urls[url] = parsed
        return parsed

    def _add_cookies(
        self, request: httpx.Request, origin: Origin, sent_headers: Mapping[str, str]
    ) -> None:
        """Add the cookies ``origin`` set itself to the request, after the user's when they
        were attached (the user's win over an agent's of the same name)."""
        assert self.cookies is not None
        own = next((v for k, v in sent_headers.items() if k.lower() == "cookie"), "")
        skip = frozenset(p.split("=", 1)[0].strip() for p in own.split(";"))
        theirs = self.cookies.header(origin, request.url.path, anyio.current_time(), skip)
        if theirs:
            request.headers["Cookie"] = f"{own}; {theirs}" if own else theirs

    async def _apply(
        self, auth: Auth, url: str, headers: dict[str, str], where: ErrorContext
    ) -> str:
        """Let ``auth`` set its credentials (fetching a token, perhaps); the URL to send.

        Its errors say which call needed the credentials.
        """

        async def post_form(
            token_url: str, form: Mapping[str, str] | None, headers: Mapping[str, str] | None = None
        ) -> tuple[int, bytes]:
            # A token request (or, with no form, a GET of OAuth metadata): no credentials of
            # the client go with it, and the form holds a secret, so a redirect to another
            # origin is refused (A2AAuthError).
            resp = await self.request(
                "POST" if form is not None else "GET",
                token_url,
                content=urlencode(form).encode() if form is not None else None,
                headers={
                    **(headers or {}),
                    **(
                        {"Content-Type": "application/x-www-form-urlencoded"}
                        if form is not None
                        else {}
                    ),
                },
                max_bytes=MAX_TOKEN_BYTES,
                stay_on_origin=True,
                context=where,
            )
            return resp.status, resp.content

        try:
            return await auth.apply(url, headers, post_form)
        except A2AClientError as exc:
            instead(located(exc, where))  # an auth scheme knows no call

    async def read_body(
        self,
        response: httpx.Response,
        url: str,
        max_bytes: int | None = None,
        context: ErrorContext | None = None,
    ) -> bytes:
        """The body, decoded; ``A2AProtocolError`` past ``max_bytes`` (``max_response_bytes``
        by default) as decoded or as sent, after reading at most that much and a step."""
        where = context or {}
        limit = self.max_response_bytes if max_bytes is None else max_bytes
        headers = response.headers
        declared = headers.get("content-length")
        if declared is not None and declared.isascii() and declared.isdigit():
            # (never int() of thousands of digits)
            if len(declared.lstrip("0")) > 18 or int(declared) > limit:
                raise A2AProtocolError(
                    f"response from {redacted(url)} declares a length over {limit} bytes",
                    limit=limit,
                    **where,
                )
            if "content-encoding" not in headers:
                # HTTP framing stops the body at its declared length: no need to count.
                return await response.aread()
        chunks: list[bytes] = []
        size = 0
        reader = decoded_body(response, url, where)
        async for chunk in reader:
            size += len(chunk)
            # The bytes as sent count too: a coding can make nothing of what it is sent.
            if size > limit or response.num_bytes_downloaded > limit:
                await response.aclose()
                await finish(reader)
                raise A2AProtocolError(
                    f"response from {redacted(url)} exceeds {limit} bytes", limit=limit, **where
                )
            chunks.append(chunk)
        return b"".join(chunks)

    async def aclose(self) -> None:
        """Close the httpx client if this transport created it."""
        if self.owns_client:
            await self.client.aclose()


def decoded_body(
    response: httpx.Response, url: str, context: ErrorContext | None = None
) -> AsyncIterator[bytes]:
    """The body of ``response``, its ``Content-Encoding`` undone in steps of at most 64 KiB
    (``_decoding``); ``A2AProtocolError`` for a coding that is not gzip or deflate, or a
    compressed stream that is broken or cut short (built with ``context``).

    A body that httpx has already read whole (a mock transport's, made with its content) is
    taken as it is. A network read that decodes to more than one step has a checkpoint
    between the steps, so that a deadline or a cancellation can end it.
    """
    try:
        content = response.content
    except httpx.ResponseNotRead:
        pass
    else:
        return _whole(content)
    try:
        decoder = BodyDecoder(response.headers.get("content-encoding", ""))
    except UndecodableBody as exc:
        raise A2AProtocolError(
            f"response from {redacted(url)}: {exc.reason}", **(context or {})
        ) from None
    if decoder.identity:
        return response.aiter_raw()
    return _decoded(response, decoder, url, context or {})


async def _whole(content: bytes) -> AsyncIterator[bytes]:
    yield content


async def _decoded(
    response: httpx.Response, decoder: BodyDecoder, url: str, context: ErrorContext
) -> AsyncIterator[bytes]:
    """Each network read decoded; an empty piece for a read that decodes to nothing."""
    # Not imported with this module: anyio.lowlevel loads the parts of anyio that
    # ``import anyio`` leaves until an event loop needs them.
    from anyio.lowlevel import checkpoint

    raw = response.aiter_raw()
    try:
        async for data in raw:
            made = False
            for piece in decoder.feed(data):
                if made:
                    await checkpoint()
                made = True
                yield piece
            if not made:
                yield b""
        decoder.end()
    except UndecodableBody as exc:
        await response.aclose()
        await finish(raw)
        raise A2AProtocolError(f"response from {redacted(url)}: {exc.reason}", **context) from None
    except BaseException:
        # Ended at a step of ours (a checkpoint cancelled, the reader closed): the reads
        # under it end now too, not in the garbage collector.
        await finish(raw)
        raise


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


async def _tell_when_sent(event: str, info: Mapping[str, Any]) -> None:
    """httpcore's trace of a request: its body sent whole is ``request_sent()``."""
    if event.endswith("send_request_body.complete"):
        request_sent()
