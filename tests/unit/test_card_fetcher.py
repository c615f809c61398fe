"""AgentCardFetcher: fallback path, TTL, Cache-Control, ETag, single flight, failures."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AConnectionError,
    A2ADiscoveryError,
    A2ATimeoutError,
    AgentCardFetcher,
    AgentPool,
    AgentRegistry,
)
from a2a_anyio._http import HttpTransport

from ._support import BASE, jump, on_mock_clock, v1_card

pytestmark = pytest.mark.anyio

CARD = v1_card()
NEW = BASE + "/.well-known/agent-card.json"
OLD = BASE + "/.well-known/agent.json"


class CardServer:
    """Answers card requests with ``respond(request)``; keeps every request."""

    def __init__(self, respond: Callable[[httpx.Request], httpx.Response]) -> None:
        self.respond = respond
        self.requests: list[httpx.Request] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        await anyio.lowlevel.checkpoint()
        return self.respond(request)

    @property
    def urls(self) -> list[str]:
        return [str(r.url) for r in self.requests]


def card_response(headers: dict[str, str] | None = None, card: Any = CARD) -> httpx.Response:
    return httpx.Response(200, json=card, headers=headers or {})


async def fetch_with(
    server: CardServer, *, base: str = BASE, ttl: float = 300.0, times: int = 1
) -> Any:
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), base, ttl=ttl)
        return [await fetcher.fetch() for _ in range(times)]


async def test_fetches_and_caches() -> None:
    server = CardServer(lambda r: card_response())
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(http, BASE)  # a bare httpx client is accepted too
        first = await fetcher.fetch()
        second = await fetcher.fetch()
    assert first.name == "Test Agent"
    assert second is first
    assert server.urls == [NEW]
    assert fetcher.card_url == NEW
    assert fetcher.requests == 1


async def test_falls_back_to_agent_json_on_404() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("agent-card.json"):
            return httpx.Response(404, text="nope")
        return card_response()

    server = CardServer(respond)
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), BASE + "/")
        card = await fetcher.fetch()
    assert card.name == "Test Agent"
    assert server.urls == [NEW, OLD]
    assert fetcher.card_url == OLD


async def test_falls_back_on_an_html_page() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("agent-card.json"):
            return httpx.Response(200, html="<html>welcome</html>")
        return card_response()

    server = CardServer(respond)
    [card] = await fetch_with(server)
    assert card.name == "Test Agent"
    assert server.urls == [NEW, OLD]


async def test_card_url_given_directly() -> None:
    server = CardServer(lambda r: card_response())
    [card] = await fetch_with(server, base=BASE + "/cards/me.json")
    assert card.name == "Test Agent"
    assert server.urls == [BASE + "/cards/me.json"]


@on_mock_clock()
async def test_ttl_expiry() -> None:
    server = CardServer(lambda r: card_response())
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), BASE, ttl=300)
        first = await fetcher.fetch()
        jump(299)
        assert await fetcher.fetch() is first
        assert len(server.requests) == 1
        jump(2)
        again = await fetcher.fetch()
    assert again.name == first.name
    assert server.urls == [NEW, NEW]


@on_mock_clock()
async def test_max_age_shorter_than_ttl() -> None:
    server = CardServer(lambda r: card_response({"Cache-Control": "public, max-age=10"}))
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), BASE, ttl=300)
        await fetcher.fetch()
        jump(9)
        await fetcher.fetch()
        assert len(server.requests) == 1
        jump(2)
        await fetcher.fetch()
    assert len(server.requests) == 2


@on_mock_clock()
async def test_max_age_longer_than_ttl() -> None:
    server = CardServer(lambda r: card_response({"Cache-Control": "max-age=100"}))
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), BASE, ttl=5)
        await fetcher.fetch()
        jump(50)
        await fetcher.fetch()
        assert len(server.requests) == 1
        jump(51)
        await fetcher.fetch()
    assert len(server.requests) == 2


@on_mock_clock()
async def test_no_store_disables_reuse_and_etag() -> None:
    server = CardServer(lambda r: card_response({"Cache-Control": "no-store", "ETag": '"v1"'}))
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), BASE, ttl=300)
        for _ in range(3):
            await fetcher.fetch()
    assert len(server.requests) == 3
    assert all("if-none-match" not in r.headers for r in server.requests)


@on_mock_clock()
async def test_no_cache_revalidates_every_time_with_the_etag() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if request.headers.get("if-none-match") == '"v1"':
            return httpx.Response(304, headers={"Cache-Control": "no-cache"})
        return card_response({"Cache-Control": "no-cache", "ETag": '"v1"'})

    server = CardServer(respond)
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), BASE, ttl=300)
        first = await fetcher.fetch()
        assert await fetcher.fetch() is first
        assert await fetcher.fetch() is first
    assert [r.headers.get("if-none-match") for r in server.requests] == [None, '"v1"', '"v1"']


@on_mock_clock()
async def test_etag_and_304_renew_the_card() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        if request.headers.get("if-none-match") == 'W/"abc"':
            return httpx.Response(304, headers={"Cache-Control": "max-age=60"})
        return card_response({"ETag": 'W/"abc"', "Cache-Control": "max-age=60"})

    server = CardServer(respond)
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), BASE, ttl=300)
        first = await fetcher.fetch()
        assert "if-none-match" not in server.requests[0].headers
        jump(61)
        assert await fetcher.fetch() is first  # 304: the same card
        assert server.requests[1].headers["if-none-match"] == 'W/"abc"'
        jump(59)
        assert await fetcher.fetch() is first  # renewed for max-age=60 by the 304
        assert len(server.requests) == 2
        jump(2)
        assert await fetcher.fetch() is first
    assert len(server.requests) == 3
    assert server.urls == [NEW, NEW, NEW]


@on_mock_clock()
async def test_changed_card_replaces_the_cached_one() -> None:
    cards = iter([v1_card(), v1_card(name="Renamed")])
    server = CardServer(lambda r: card_response({"ETag": '"x"'}, card=next(cards)))
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), BASE, ttl=10)
        assert (await fetcher.fetch()).name == "Test Agent"
        jump(11)
        assert (await fetcher.fetch()).name == "Renamed"


async def test_force_and_invalidate() -> None:
    server = CardServer(lambda r: card_response({"ETag": '"e"'}))
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), BASE)
        await fetcher.fetch()
        await fetcher.fetch(force=True)
        assert server.requests[1].headers["if-none-match"] == '"e"'
        fetcher.invalidate()
        assert fetcher.card_url is None
        await fetcher.fetch()
        assert "if-none-match" not in server.requests[2].headers
    assert len(server.requests) == 3


async def test_concurrent_first_fetches_make_one_request() -> None:
    started = 0
    seen_started: list[int] = []

    async def handle(request: httpx.Request) -> httpx.Response:
        seen_started.append(started)
        for _ in range(50):  # let every other caller run up to the lock while we "work"
            await anyio.lowlevel.checkpoint()
        seen_started.append(started)
        return card_response()

    cards: list[Any] = []
    async with httpx.AsyncClient(transport=httpx.MockTransport(handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), BASE)

        async def one() -> None:
            nonlocal started
            started += 1
            cards.append(await fetcher.fetch())

        async with anyio.create_task_group() as tg:
            for _ in range(100):
                tg.start_soon(one)
    assert len(seen_started) == 2  # exactly one HTTP request
    assert seen_started[1] == 100  # and all 100 callers were waiting while it ran
    assert len(cards) == 100
    assert all(c is cards[0] for c in cards)
    assert fetcher.requests == 1


@pytest.mark.parametrize(
    ("response", "match"),
    [
        (httpx.Response(500, text="oops"), "HTTP 500"),
        (httpx.Response(401, text="who?"), "HTTP 401"),
        (httpx.Response(200, html="<html>hi</html>"), "no agent card found"),
        (httpx.Response(404), "no agent card found"),
        (
            httpx.Response(200, content=b"{not json", headers={"content-type": "application/json"}),
            "not JSON",
        ),
        (httpx.Response(200, json={"hello": "world"}), "no name"),
        (httpx.Response(200, json=[CARD]), "not a JSON object"),
        (httpx.Response(200, json={"name": "x"}), "no endpoint"),
    ],
    ids=["500", "401", "html", "404", "bad-json", "not-a-card", "array", "no-endpoint"],
)
async def test_failures_are_discovery_errors(response: httpx.Response, match: str) -> None:
    body, status, headers = response.content, response.status_code, dict(response.headers)
    server = CardServer(lambda r: httpx.Response(status, content=body, headers=headers))
    with pytest.raises(A2ADiscoveryError, match=match):
        await fetch_with(server)


async def test_card_too_large() -> None:
    huge = {**CARD, "description": "x" * (1024 * 1024)}
    server = CardServer(
        lambda r: httpx.Response(
            200, content=json.dumps(huge).encode(), headers={"content-type": "application/json"}
        )
    )
    with pytest.raises(A2ADiscoveryError, match="larger than"):
        await fetch_with(server)


async def test_connection_errors_are_not_swallowed() -> None:
    def respond(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(A2AConnectionError, match="cannot connect"):
        await fetch_with(CardServer(respond))


@on_mock_clock()
async def test_a_fetch_has_a_deadline_of_its_own_by_default() -> None:
    async def silent(request: httpx.Request) -> httpx.Response:
        await anyio.sleep_forever()
        raise AssertionError("not reached")

    async with httpx.AsyncClient(transport=httpx.MockTransport(silent)) as http:
        with pytest.raises(A2ATimeoutError) as info:
            await AgentCardFetcher(http, BASE).fetch()
        assert anyio.current_time() == 30
    assert info.value.timeout == "deadline" and info.value.operation == "card"


# -- an endpoint's URL given as the agent's URL -----------------------------------------------

ENDPOINT = BASE + "/a2a/jsonrpc"


def at_the_root(card: Any) -> Callable[[httpx.Request], httpx.Response]:
    """A server with ``card`` at its origin's well-known path only."""

    def respond(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/.well-known/agent-card.json":
            return card_response(card=card)
        return httpx.Response(404, text="not found")

    return respond


async def test_an_endpoint_url_finds_the_card_at_the_origin_that_names_it() -> None:
    server = CardServer(at_the_root(v1_card(ENDPOINT + "/")))
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), ENDPOINT)
        card = await fetcher.fetch()
        again = await fetcher.fetch(force=True)
    assert card.interfaces[0].url == ENDPOINT + "/"
    assert again.name == card.name
    assert server.urls == [
        ENDPOINT + "/.well-known/agent-card.json",
        ENDPOINT + "/.well-known/agent.json",
        NEW,
        NEW,  # refreshed where it was found
    ]
    assert fetcher.card_url == NEW


async def test_the_card_at_the_origin_of_another_service_is_not_taken() -> None:
    server = CardServer(at_the_root(v1_card(BASE + "/other")))
    with pytest.raises(A2ADiscoveryError) as caught:
        await fetch_with(server, base=ENDPOINT)
    assert caught.value.not_found
    assert (
        f"{NEW}: the card of another service (its interfaces: {BASE}/other)" in caught.value.message
    )
    assert OLD not in server.urls  # a card was there: the legacy name is not tried


async def test_no_card_under_the_path_nor_at_the_origin_names_every_place_tried() -> None:
    server = CardServer(lambda r: httpx.Response(404, text="not found"))
    with pytest.raises(A2ADiscoveryError, match="no agent card found") as caught:
        await fetch_with(server, base=ENDPOINT)
    for url in (ENDPOINT + "/.well-known/agent-card.json", NEW, OLD):
        assert url in caught.value.message
    root = CardServer(lambda r: httpx.Response(404, text="not found"))
    with pytest.raises(A2ADiscoveryError):
        await fetch_with(root, base=BASE)
    assert root.urls == [NEW, OLD]  # the root: nothing more to try


@on_mock_clock()
async def test_last_modified_is_sent_back_and_a_304_renews_the_card() -> None:
    stamp = "Tue, 01 Dec 2026 10:00:00 GMT"

    def respond(request: httpx.Request) -> httpx.Response:
        if request.headers.get("if-modified-since") == stamp:
            return httpx.Response(304, headers={"Cache-Control": "max-age=30"})
        return card_response({"Last-Modified": stamp, "Cache-Control": "max-age=30"})

    server = CardServer(respond)
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), BASE, ttl=300)
        first = await fetcher.fetch()
        jump(31)
        assert await fetcher.fetch() is first
        jump(29)
        assert await fetcher.fetch() is first  # renewed by the 304 for max-age=30
    assert [r.headers.get("if-modified-since") for r in server.requests] == [None, stamp]
    assert "if-none-match" not in server.requests[1].headers


@on_mock_clock()
@pytest.mark.parametrize(
    ("headers", "sent"),
    [
        ({"Last-Modified": "yesterday"}, None),  # not an HTTP date
        ({"Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT", "Cache-Control": "no-store"}, None),
        ({"ETag": '"v2"', "Last-Modified": "Tue, 01 Dec 2026 10:00:00 GMT"}, '"v2"'),
    ],
)
async def test_validators_kept_only_when_usable_and_storable(
    headers: dict[str, str], sent: str | None
) -> None:
    server = CardServer(lambda r: card_response(headers))
    async with httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http:
        fetcher = AgentCardFetcher(HttpTransport(http), BASE, ttl=10)
        await fetcher.fetch()
        jump(11)
        await fetcher.fetch()
    second = server.requests[1].headers
    assert second.get("if-none-match") == sent
    kept = "Cache-Control" not in headers and "yesterday" not in headers.values()
    assert ("if-modified-since" in second) is kept


@on_mock_clock()
async def test_a_registry_agents_card_is_kept_fresh_by_its_caching_headers() -> None:
    stamp = "Tue, 01 Dec 2026 10:00:00 GMT"

    def respond(request: httpx.Request) -> httpx.Response:
        if request.headers.get("if-none-match") == '"v1"':
            return httpx.Response(304, headers={"Cache-Control": "max-age=60"})
        headers = {"ETag": '"v1"', "Last-Modified": stamp, "Cache-Control": "max-age=60"}
        return card_response(headers)

    server = CardServer(respond)
    registry = AgentRegistry.from_dict({"agents": [{"name": "one", "url": BASE}]})
    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(server.handle)) as http,
        AgentPool(registry=registry, http_client=http) as pool,
    ):
        client = pool.client("one")
        first = await client.get_card()
        jump(59)
        assert await client.get_card() is first  # fresh: no request
        jump(2)
        assert await client.get_card() is first  # stale: asked again, 304
    assert len(server.requests) == 2
    assert server.requests[1].headers["if-none-match"] == '"v1"'
    assert server.requests[1].headers["if-modified-since"] == stamp
