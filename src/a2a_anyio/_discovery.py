"""What a client knows of its agent: the card (read through the fetcher's cache, within the
deadline of the call that needs it, through the interceptors) and the wire codec of the
interface in use (``_wires``), learned from it or from a bare endpoint."""

from __future__ import annotations

import functools
import math
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import anyio

from a2a_anyio._auth import Credentials
from a2a_anyio._bindings import WireCodec
from a2a_anyio._card import AgentCardFetcher
from a2a_anyio._deadline import Call
from a2a_anyio._dialects import OpArgs
from a2a_anyio._dialects.card import describe_security
from a2a_anyio._errors import ExtendedCardNotConfiguredError
from a2a_anyio._http import HttpTransport
from a2a_anyio._intercept import Sending
from a2a_anyio._model import AgentCard
from a2a_anyio._observe import Tracing
from a2a_anyio._retry import RetryPolicy
from a2a_anyio._wires import Wires, card_candidates, endpoint_candidates

if TYPE_CHECKING:
    from a2a_anyio._signing import CardVerifier

#: How a look-up goes through the client's interceptors: ``(name, args, credentials, until,
#: send, part_of)`` gives the result and the credentials the interceptors left.
Intercepted = Callable[
    [str, OpArgs, Credentials, float, Sending, "str | None"], Awaitable[tuple[Any, Credentials]]
]


class Discovery:
    """The card and the codec in use of one client's agent: ``url`` (its card is looked
    up there) or ``endpoint`` (no card: the codec from the URL and ``protocol``)."""

    def __init__(
        self,
        http: HttpTransport,
        url: str | None,
        endpoint: str | None,
        *,
        protocol: str,
        bindings: Sequence[str],
        tenant: str | None,
        extensions: tuple[str, ...],
        card: AgentCard | None,
        card_ttl: float,
        timeout: float | None,
        credentials: Credentials,
        retry: RetryPolicy,
        verifier: CardVerifier | None,
        tracing: Tracing,
        intercepted: Intercepted,
    ) -> None:
        self.url, self.endpoint = url, endpoint
        self._protocol, self._bindings = protocol, tuple(bindings)
        self._tenant, self._extensions = tenant, extensions
        self._timeout = timeout
        self._auth = credentials.auth
        self._tracing = tracing
        self._intercepted = intercepted
        self.fetcher = AgentCardFetcher(
            http, url or endpoint or "", ttl=card_ttl, timeout=timeout,
            credentials=credentials, retry=retry, verifier=verifier,
        )  # fmt: skip
        key = f"{url or endpoint}|{protocol}|{','.join(self._bindings)}"
        self.wires = Wires(key, tenant=tenant, extensions=extensions)
        self.card: AgentCard | None = None
        if card is not None:
            self._learned(card)

    def _learned(self, card: AgentCard) -> None:
        self.card = card
        if self._auth is not None:
            self._auth.use_card(card)
        self._tracing.named(card.name, card.version)

    async def fetch(
        self,
        refresh: bool,
        limit: float | None,
        credentials: Credentials,
        within: Call | None = None,
        part_of: str | None = None,
    ) -> AgentCard:
        """The card (an operation of its own to the interceptors, or a part of ``within``'s,
        ``part_of``), within ``limit``.

        Raises:
            TypeError: an interceptor answered with something that is not an ``AgentCard``.
        """

        async def fetch(args: OpArgs, credentials: Credentials, event: Any) -> AgentCard:
            return await self.fetcher.fetch(force=refresh, timeout=limit, credentials=credentials)

        until = within.until if within is not None else math.inf
        if limit is not None:
            until = min(until, anyio.current_time() + limit)
        card, _ = await self._intercepted("card", None, credentials, until, fetch, part_of)
        if not isinstance(card, AgentCard):
            raise TypeError(
                f"an interceptor answers a card with an AgentCard, not {type(card).__name__}"
            )
        self._learned(card)
        return card

    async def card_for(
        self, call: Call | None, credentials: Credentials, part_of: str | None = None
    ) -> AgentCard:
        """The card, fetched if need be as a part of ``call`` (or of the operation
        ``part_of``): within the time the call has left (a deadline of the fetch's own, so
        that a ``Retry-After`` past it ends it at once), with no limit in a call that has
        none; outside a call, within the client's timeout."""
        if self.card is not None:
            return self.card
        if call is None:
            limit = self._timeout
        else:
            left = call.until - anyio.current_time()
            limit = None if call.until == math.inf else max(0.0, round(left, 3))
            part_of = part_of or call.context.get("operation")
        return await self.fetch(False, limit, credentials, call, part_of)

    async def codec(
        self, call: Call | None, credentials: Credentials, part_of: str | None = None
    ) -> WireCodec:
        """The codec of the interface in use (the card fetched, if need be, as a part of
        ``call`` or of ``part_of``, with its ``credentials``; outside a call, within the
        client's timeout)."""
        found = self.wires.codec
        if found is None:
            find = functools.partial(self._candidates, call, credentials, part_of)
            found = await self.wires.resolve(find)
        return found

    async def _candidates(
        self, call: Call | None, credentials: Credentials, part_of: str | None = None
    ) -> list[WireCodec]:
        tenant, extensions = self._tenant, self._extensions
        if self.endpoint is not None:
            return endpoint_candidates(
                self.endpoint, self._protocol, tenant=tenant, extensions=extensions
            )
        card = await self.card_for(call, credentials, part_of)
        card_url = self.fetcher.card_url
        return card_candidates(
            card, card_url, card_url or self.url or "", protocol=self._protocol,
            bindings=self._bindings, tenant=tenant, extensions=extensions, agent=self.url,
        )  # fmt: skip

    async def can_stream(self, call: Call | None, credentials: Credentials) -> bool:
        """Whether the card says the agent streams (a bare endpoint declares nothing: yes)."""
        if self.url is None and self.card is None:
            return True
        return (await self.card_for(call, credentials)).capabilities.streaming

    def check_extended_card(self, call: Call) -> None:
        """An agent whose card announces no extended card has none, whatever the binding
        (a v0.3 agent says so over JSON-RPC with -32007; over gRPC, ``GetAgentCard`` would
        answer the public card as if it were the extended one).

        Raises:
            ExtendedCardNotConfiguredError: the card announces none.
        """
        card = self.card
        if card is not None and not card.capabilities.extended_agent_card:
            raise ExtendedCardNotConfiguredError(
                "the agent's card announces no extended card", **call.context
            )

    def schemes(self) -> list[str]:
        """What the card asks for (for an auth error that does not say it)."""
        return describe_security(self.card) if self.card is not None else []
