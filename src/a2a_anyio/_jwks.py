"""JSON Web Key Sets: the one place a JWKS URL is fetched (``fetch_jwks``) and the one cache
of a key set (``KeySet``), for signed Agent Cards and signed push notifications alike."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio

from a2a_anyio._errors import (
    A2AClientError,
    A2ADiscoveryError,
    A2AProtocolError,
    ErrorContext,
    context_of,
    shown,
)
from a2a_anyio._limits import MAX_JSON_DEPTH, loads
from a2a_anyio._observe import redacted
from a2a_anyio._signing_keys import Key, jwks_keys

if TYPE_CHECKING:
    from a2a_anyio._http import HttpTransport

FetchJSON = Callable[[str], Awaitable[Any]]

#: At most this many members of a JWK Set are read (the rest are ignored).
MAX_JWKS_KEYS = 100


async def fetch_jwks(
    http: HttpTransport, url: str, *, max_bytes: int, context: ErrorContext | None = None
) -> Any:
    """The JSON document at ``url``: a GET without credentials, no redirect followed, at most
    ``max_bytes`` (as sent and as decoded). ``A2ADiscoveryError`` when it is not there, too
    large or not JSON."""
    where = context or {}
    try:
        resp = await http.request("GET", url, max_bytes=max_bytes, context=where)
    except A2AProtocolError as exc:  # mostly: over the size limit
        why = f"is larger than {exc.limit} bytes" if exc.limit else f": {exc.message}"
        raise A2ADiscoveryError(f"key set at {redacted(url)} {why}", **where) from exc
    if resp.status != 200:
        raise A2ADiscoveryError(
            f"key set at {redacted(url)}: HTTP {resp.status}", status_code=resp.status, **where
        )
    try:
        return loads(resp.content, MAX_JSON_DEPTH)
    except ValueError as exc:
        raise A2ADiscoveryError(f"key set at {redacted(url)} is not JSON: {exc}", **where) from None


class KeySet:
    """The keys of the JWK Set at ``url``, fetched through the ``fetch_json`` given to ``keys``
    and kept ``ttl`` seconds; ``keys(force=True)`` (a key was not found: it may have rotated)
    fetches again at most once per ``refetch_interval`` seconds. Concurrent callers share one
    fetch. With ``hold_failures``, a failed fetch is not tried again within
    ``refetch_interval`` either: its error is raised again (for keys that strangers' requests
    make it fetch)."""

    def __init__(
        self,
        url: str,
        *,
        ttl: float = 300.0,
        refetch_interval: float = 10.0,
        hold_failures: bool = False,
    ) -> None:
        self.url = url
        self.hold_failures = hold_failures
        self.ttl = ttl
        self.refetch_interval = refetch_interval
        self._keys: list[Key] | None = None
        self._fetched = -math.inf
        self._expires = -math.inf
        self._failed: A2ADiscoveryError | None = None
        self._lock = anyio.Lock()
        #: fetches made, for observability
        self.requests = 0

    async def keys(self, fetch_json: FetchJSON, *, force: bool = False) -> list[Key]:
        """The cached keys, fetched when stale (or when ``force``d and not fetched within
        ``refetch_interval``). A failed fetch is not retried within ``refetch_interval``:
        its error is raised again.

        Raises:
            A2ADiscoveryError: the key set could not be fetched, or is not a JWK Set.
        """
        if self._fresh(force):
            return self._cached()
        async with self._lock:
            if self._fresh(force):
                return self._cached()
            self.requests += 1
            try:
                doc = await self._fetch(fetch_json)
                if isinstance(doc, dict) and isinstance(doc.get("keys"), list):
                    doc = {**doc, "keys": doc["keys"][:MAX_JWKS_KEYS]}  # (parsed, keys cost)
                keys = jwks_keys(doc, self.url)
            except A2ADiscoveryError as exc:
                if self.hold_failures:
                    self._failed, self._fetched = exc, anyio.current_time()
                raise
            self._keys, self._failed = keys, None
            self._fetched = anyio.current_time()
            self._expires = self._fetched + self.ttl
            return keys

    def _fresh(self, force: bool) -> bool:
        now = anyio.current_time()
        if self._failed is not None or (self._keys is not None and force):
            return now - self._fetched < self.refetch_interval
        return self._keys is not None and now < self._expires

    def _cached(self) -> list[Key]:
        if self._failed is not None:
            raise self._failed.with_context()
        assert self._keys is not None
        return self._keys

    async def _fetch(self, fetch_json: FetchJSON) -> Any:
        try:
            return await fetch_json(self.url)
        except Exception as exc:
            status = getattr(exc, "status_code", None)
            ours = exc if isinstance(exc, A2AClientError) else None
            why = str(exc) if ours is None else ours.message
            raise A2ADiscoveryError(
                f"could not fetch the JWKS at {self.url}: {shown(why, 200)}",
                status_code=status if isinstance(status, int) else None,
                retry_after=getattr(exc, "retry_after", None),
                retryable=None if ours is None else ours.retryable,
                **({} if ours is None else context_of(ours)),
            ) from exc
