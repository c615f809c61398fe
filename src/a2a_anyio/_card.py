"""The card layer: fetching, caching and normalising Agent Cards."""

from __future__ import annotations

import email.utils
import functools
import json
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import anyio

from a2a_anyio._auth import Credentials, origin_of
from a2a_anyio._deadline import CLIENT_TIMEOUT, Timeout, deadline, resolve_timeout
from a2a_anyio._dialects._values import retry_after as parse_retry_after
from a2a_anyio._dialects.card import parse_card
from a2a_anyio._errors import (
    A2AClientError,
    A2ADiscoveryError,
    A2AProtocolError,
    ErrorContext,
    instead,
    located,
)
from a2a_anyio._http import DEFAULT_TIMEOUT, AsyncClient, HttpTransport, RawResponse
from a2a_anyio._model import AgentCard
from a2a_anyio._observe import redacted
from a2a_anyio._retry import NO_RETRY, RetryPolicy

if TYPE_CHECKING:
    from a2a_anyio._signing import CardVerifier

WELL_KNOWN_PATHS = ("/.well-known/agent-card.json", "/.well-known/agent.json")
MAX_CARD_BYTES = 1024 * 1024


class _Cached:
    """A card, where it came from, until when it is fresh, and its validators: the ``ETag``
    and ``Last-Modified`` values sent back as ``If-None-Match`` and ``If-Modified-Since``."""

    __slots__ = ("card", "etag", "expires", "last_modified", "url")

    def __init__(
        self,
        card: AgentCard,
        url: str,
        etag: str | None,
        expires: float,
        last_modified: str | None = None,
    ) -> None:
        self.card = card
        self.url = url
        self.etag = etag
        self.expires = expires
        self.last_modified = last_modified

    def conditions(self) -> dict[str, str]:
        """The headers of a conditional request for this card."""
        out = {}
        if self.etag:
            out["If-None-Match"] = self.etag
        if self.last_modified:
            out["If-Modified-Since"] = self.last_modified
        return out


def card_urls(base_url: str) -> list[str]:
    """Where to look for the card of ``base_url``: itself if it names a .json file, else the
    well-known paths under it (v0.3+ first, then the legacy/v0.2 name)."""
    parts = urlsplit(base_url)
    if parts.path.endswith(".json"):
        return [base_url]
    root = base_url.split("?", 1)[0].split("#", 1)[0].rstrip("/")
    return [root + path for path in WELL_KNOWN_PATHS]


def origin_card_urls(base_url: str) -> list[str]:
    """The well-known paths at the root of ``base_url``'s origin, when ``base_url`` has a path
    below it (an endpoint given for the agent's URL, ``https://host/a2a/jsonrpc``): where its
    card may be instead. Empty for a root or a ``.json`` URL."""
    parts = urlsplit(base_url)
    if parts.path.endswith(".json") or not parts.path.strip("/"):
        return []
    return [f"{parts.scheme}://{parts.netloc}{path}" for path in WELL_KNOWN_PATHS]


def _serves(card: AgentCard, url: str) -> bool:
    """True when one of ``card``'s interfaces is at ``url`` (a trailing ``/`` aside)."""
    want = (origin_of(url), urlsplit(url).path.rstrip("/"))
    for interface in card.interfaces:
        try:
            if (origin_of(interface.url), urlsplit(interface.url).path.rstrip("/")) == want:
                return True
        except ValueError:  # a port that is no number: not this URL
            continue
    return False


def _max_age(cache_control: str) -> float | None:
    """Seconds the response may be reused (0 for no-store / no-cache), None when unsaid."""
    directives = [d.strip().lower() for d in cache_control.split(",") if d.strip()]
    if "no-store" in directives or "no-cache" in directives:
        return 0.0
    for d in directives:
        if d.startswith("max-age="):
            try:
                return max(0.0, float(d.split("=", 1)[1].strip('"')))
            except ValueError:
                return None
    return None


class AgentCardFetcher:
    """Fetches an agent's card and keeps it for ``ttl`` seconds.

    ``Cache-Control`` overrides the TTL (``max-age``; ``no-store``/``no-cache`` disable reuse);
    an ``ETag`` is sent back as ``If-None-Match``, a ``Last-Modified`` date as
    ``If-Modified-Since`` (neither after ``no-store``), and a 304 renews the cached card. Concurrent
    first calls share one request. Time is read from ``anyio.current_time()``, so trio's
    MockClock drives expiry in tests. Errors name ``base_url`` as the agent and ``card`` as
    the operation. ``timeout`` (30 s by default; None: no limit) is the deadline of a fetch,
    and its only limit: the read timeout of an ``httpx.AsyncClient`` given as ``http`` does
    not apply.

    A ``base_url`` with a path under which no card is found (an endpoint's URL given as the
    agent's, ``https://host/a2a/jsonrpc``) is looked up at the well-known paths of its
    origin's root too; that card is taken only when one of its interfaces is at
    ``base_url``, and the error says what was found there otherwise.
    """

    def __init__(
        self,
        http: HttpTransport | AsyncClient,
        base_url: str,
        *,
        ttl: float = 300.0,
        headers: Mapping[str, str] | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        retry: RetryPolicy = NO_RETRY,
        credentials: Credentials | None = None,
        verifier: CardVerifier | None = None,
    ) -> None:
        self._http = http if isinstance(http, HttpTransport) else HttpTransport(http)
        self.base_url = base_url
        self.ttl = ttl
        self._headers = dict(headers or {})
        self._timeout = timeout
        self._retry = retry
        self._credentials = credentials
        self._verifier = verifier
        self._cached: _Cached | None = None
        self._lock = anyio.Lock()
        self._context: ErrorContext = {"agent": base_url, "operation": "card"}
        self.requests = 0  # HTTP requests made, for observability

    @property
    def card_url(self) -> str | None:
        """The URL the cached card came from, once one has been fetched."""
        return self._cached.url if self._cached else None

    def invalidate(self) -> None:
        """Forget the cached card (the ETag goes too)."""
        self._cached = None

    async def fetch(
        self,
        *,
        force: bool = False,
        timeout: Timeout = CLIENT_TIMEOUT,
        credentials: Credentials | None = None,
    ) -> AgentCard:
        """The card, from the cache while it is fresh, else from the agent, within
        ``timeout`` (by default the fetcher's; None: no limit), with ``credentials`` (by
        default the fetcher's: those of the call that needs the card). The card is shared:
        a fetch that waits for another's takes its card.

        Raises:
            A2ADiscoveryError: no card at the well-known paths, an answer that is not a card (or is too large), or
                a signature the verifier refuses.
            A2AConnectionError: the agent cannot be reached (``A2ATimeoutError``: not within the timeout).
        """
        cached = self._cached
        if not force and cached is not None and anyio.current_time() < cached.expires:
            return cached.card
        limit = resolve_timeout(timeout, self._timeout)
        with deadline(limit, agent=self.base_url, operation="card") as call:
            async with self._lock:
                cached = self._cached  # another task may have refreshed it while we waited
                if not force and cached is not None and anyio.current_time() < cached.expires:
                    return cached.card
                return await self._refresh(cached, call.until, credentials or self._credentials)

    async def _refresh(
        self, cached: _Cached | None, until: float, credentials: Credentials | None
    ) -> AgentCard:
        urls = [cached.url] if cached is not None else card_urls(self.base_url)
        failures: list[str] = []
        for url in urls:
            headers = dict(self._headers)
            if cached is not None:
                headers.update(cached.conditions())
            resp = await self._request(url, headers, until, credentials)
            if resp.status == 304 and cached is not None:
                cached.expires = self._expiry(resp)
                return cached.card
            if _missing(resp):
                failures.append(f"{url}: HTTP {resp.status} {resp.content_type or ''}".strip())
                continue
            return await self._keep(resp, url)
        if cached is None:  # an endpoint's URL given: the card may be at its origin's root
            for url in origin_card_urls(self.base_url):
                resp = await self._request(url, dict(self._headers), until, credentials)
                if _missing(resp):
                    failures.append(f"{url}: HTTP {resp.status} {resp.content_type or ''}".strip())
                    continue
                try:
                    card = await self._read(resp)
                except A2AClientError as exc:  # not this agent's problem: say what was there
                    failures.append(f"{url}: no usable card ({exc})")
                    break
                if _serves(card, self.base_url):
                    return await self._keep(resp, url, card)
                listed = ", ".join(i.url for i in card.interfaces) or "none"
                failures.append(f"{url}: the card of another service (its interfaces: {listed})")
                break
        raise A2ADiscoveryError(
            "no agent card found (" + "; ".join(failures) + ")", not_found=True, **self._context
        )

    async def _request(
        self, url: str, headers: dict[str, str], until: float, credentials: Credentials | None
    ) -> RawResponse:
        return await self._retry.run(
            functools.partial(self._get, url, headers, credentials),
            operation="card",
            idempotent=True,
            until=until,
            observer=self._http.observer,
        )

    async def _read(self, resp: RawResponse) -> AgentCard:
        """The card ``resp`` holds, verified when the fetcher has a verifier."""
        value = _card_json(resp, self._context)
        try:
            if self._verifier is not None and isinstance(value, dict):
                await self._verifier.verify(value, self._fetch_keys)
            return parse_card(value)
        except A2AClientError as exc:  # the card's reader and verifier know no agent
            instead(located(exc, self._context))

    async def _keep(self, resp: RawResponse, url: str, card: AgentCard | None = None) -> AgentCard:
        """The card of ``resp`` (read unless given), cached as the card found at ``url``."""
        if card is None:
            card = await self._read(resp)
        no_store = "no-store" in resp.headers.get("cache-control", "").lower()
        etag = None if no_store else _etag(resp.headers.get("etag"))
        modified = None if no_store else _http_date(resp.headers.get("last-modified"))
        self._cached = _Cached(card, url, etag, self._expiry(resp), modified)
        return card

    async def _get(
        self, url: str, headers: dict[str, str], credentials: Credentials | None
    ) -> RawResponse:
        self.requests += 1
        try:
            resp = await self._http.request(
                "GET",
                url,
                headers=headers,
                credentials=credentials,
                max_bytes=MAX_CARD_BYTES,
                context=self._context,
            )
        except A2AProtocolError as exc:  # mostly: over the size limit
            why = f"is larger than {exc.limit} bytes" if exc.limit else f": {exc.message}"
            raise A2ADiscoveryError(f"agent card at {url} {why}", **self._context) from exc
        if resp.status not in (200, 304, 404):
            raise A2ADiscoveryError(
                f"agent card at {url}: HTTP {resp.status}",
                status_code=resp.status,
                retry_after=parse_retry_after(resp.headers.get("retry-after")),
                **self._context,
            )
        return resp

    async def _fetch_keys(self, url: str) -> Any:
        """A JWKS document for the verifier: no agent credentials, card-sized at most."""
        from a2a_anyio._jwks import fetch_jwks  # signed cards only

        return await fetch_jwks(self._http, url, max_bytes=MAX_CARD_BYTES, context=self._context)

    def _expiry(self, resp: RawResponse) -> float:
        max_age = _max_age(resp.headers.get("cache-control", ""))
        return anyio.current_time() + (self.ttl if max_age is None else max_age)


#: An ETag sent back as it came: visible ASCII (quotes and ``W/`` included), 8 KiB at most.
_ETAG = re.compile(r"[\x21-\x7e](?:[\x20-\x7e]{0,8190}[\x21-\x7e])?")


def _etag(value: str | None) -> str | None:
    """The ETag to send back in ``If-None-Match``; None for one that no header could carry
    unchanged (characters outside ASCII, controls): kept, it would break every refresh."""
    return value if value is not None and _ETAG.fullmatch(value) else None


def _http_date(value: str | None) -> str | None:
    """A ``Last-Modified`` value to send back in ``If-Modified-Since``, as it came; None for
    one that is not an HTTP date (RFC 9110: the server compares it, the client never does)."""
    if value is None or len(value) > 64 or not _ETAG.fullmatch(value):
        return None
    try:
        email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return value


def _missing(resp: RawResponse) -> bool:
    """True for an answer that says no card is there: 404, or a page that is not JSON."""
    return resp.status == 404 or (resp.status == 200 and not _looks_json(resp))


def _looks_json(resp: RawResponse) -> bool:
    ctype = resp.content_type
    if "json" in ctype:
        return True
    return not ctype and resp.content.lstrip()[:1] == b"{"


def _card_json(resp: RawResponse, context: ErrorContext) -> Any:
    if len(resp.content) > MAX_CARD_BYTES:
        raise A2ADiscoveryError(
            f"agent card at {redacted(resp.url)} is larger than {MAX_CARD_BYTES} bytes", **context
        )
    try:
        return json.loads(resp.content)
    except (ValueError, RecursionError) as exc:
        raise A2ADiscoveryError(
            f"agent card at {redacted(resp.url)} is not JSON: {exc}", **context
        ) from exc
