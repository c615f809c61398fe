"""Cookies agents set: sent back only to the origin that set them, and bounded.

A hostile agent sets cookies meant to travel (``Domain`` of a parent, plain attributes on
https that a browser would send over http, a host whose other ports belong to someone else),
and floods the jar (a new cookie on every answer, cookies of 4 KiB, many origins). Requests to
every other origin carry none of them, and what is kept and sent stays small.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from a2a_anyio import A2AClient
from a2a_anyio._cookies import (
    MAX_BYTES,
    MAX_BYTES_PER_ORIGIN,
    MAX_COOKIE_BYTES,
    MAX_COOKIES,
    MAX_COOKIES_PER_ORIGIN,
)
from a2a_anyio.testing import serve_app
from tests.unit._support import on_mock_clock, rpc_result, v1_card

pytestmark = pytest.mark.anyio

OWN = "https://agent.example.com"
TASK = {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}}
Answer = Callable[[httpx.Request], httpx.Response]


def origin(url: httpx.URL) -> str:
    return f"{url.scheme}://{url.netloc.decode()}"


def cookies_of(request: httpx.Request) -> dict[str, str]:
    """The cookies a request carried, by name."""
    header = request.headers.get("cookie", "")
    return dict(p.strip().split("=", 1) for p in header.split(";") if p.strip())


class Servers:
    """A MockTransport handler that stands for several servers, one answer function per
    origin; it keeps every request."""

    def __init__(self) -> None:
        self.answers: dict[str, Answer] = {}
        self.requests: list[httpx.Request] = []

    def at(self, url: str) -> list[httpx.Request]:
        """The requests one origin received."""
        return [r for r in self.requests if origin(r.url) == url]

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        await anyio.lowlevel.checkpoint()
        return self.answers[origin(request.url)](request)

    def client(self, url: str = OWN, **options: Any) -> A2AClient:
        http = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))
        return A2AClient(url, http_client=http, protocol="1.0", **options)


def agent(interface: str, set_cookies: list[str], redirect: str | None = None) -> Answer:
    """An agent: a card naming ``interface``, GetTask answered (or redirected with 307 to
    ``redirect``); every answer sets ``set_cookies``."""

    def answer(request: httpx.Request) -> httpx.Response:
        headers = [("set-cookie", c) for c in set_cookies]
        if request.method == "GET":
            return httpx.Response(200, json=v1_card(url=interface), headers=headers)
        if redirect is not None:
            return httpx.Response(307, headers=[*headers, ("location", redirect)])
        body = rpc_result(json.loads(request.content)["id"], TASK)
        return httpx.Response(200, json=body, headers=headers)

    return answer


# -- 7: to the same scheme, host and port only ------------------------------------------------

ELSEWHERE = [
    "http://agent.example.com",  # plain http after https
    "https://agent.example.com:8443",  # another port of the same host
    "https://rpc.example.com",  # a sibling host, named by Domain=example.com
    "https://example.com",  # the parent domain itself
]
TRAVELLING = ["sid=own; Path=/", "wide=1; Domain=example.com; Path=/", "lax=1; SameSite=None"]


@pytest.mark.parametrize("elsewhere", ELSEWHERE)
@pytest.mark.parametrize("via", ["card", "redirect"])
async def test_cookies_never_go_to_another_origin(elsewhere: str, via: str) -> None:
    servers = Servers()
    interface = elsewhere + "/a2a" if via == "card" else OWN + "/a2a"
    redirect = elsewhere + "/a2a" if via == "redirect" else None
    servers.answers[OWN] = agent(interface, TRAVELLING, redirect)
    servers.answers[elsewhere] = agent(interface, ["theirs=2; Domain=example.com; Path=/"])
    async with servers.client() as client:
        for _ in range(2):
            await client.get_task("t")
        await client.get_card(refresh=True)
    there = servers.at(elsewhere)
    assert len(there) == 2
    assert cookies_of(there[0]) == {}  # nothing of the agent's own origin
    assert cookies_of(there[1]) == {"theirs": "2"}  # its own cookie comes back
    own = servers.at(OWN)
    assert all("theirs" not in cookies_of(r) for r in own)
    assert cookies_of(own[-1]) == {"sid": "own", "wide": "1", "lax": "1"}


async def test_cookies_follow_each_hop_of_a_redirect_chain() -> None:
    servers = Servers()
    a, b, c = OWN, "https://agent.example.com:444", "http://agent.example.com"
    servers.answers[a] = agent(a + "/a2a", ["a=1; Path=/"], redirect=b + "/a2a")
    servers.answers[b] = agent(a + "/a2a", ["b=1; Path=/"], redirect=c + "/a2a")
    servers.answers[c] = agent(a + "/a2a", ["c=1; Path=/"])
    async with servers.client() as client:
        await client.get_task("t")
        await client.get_task("t")
    # a set its cookie on the card already
    expected = {a: [{"a": "1"}] * 2, b: [{}, {"b": "1"}], c: [{}, {"c": "1"}]}
    for url, cookies in expected.items():
        assert [cookies_of(r) for r in servers.at(url) if r.method == "POST"] == cookies


async def test_the_cookies_in_an_injected_clients_jar_are_not_sent() -> None:
    servers = Servers()
    servers.answers[OWN] = agent(OWN + "/a2a", [])
    http = httpx.AsyncClient(
        transport=httpx.MockTransport(servers.handle), cookies={"stale": "from-elsewhere"}
    )
    async with A2AClient(OWN, http_client=http, protocol="1.0") as client:
        await client.get_task("t")
    assert all("cookie" not in r.headers for r in servers.requests)


async def test_the_users_cookies_win_over_the_agents() -> None:
    servers = Servers()
    servers.answers[OWN] = agent(OWN + "/a2a", ["sid=agent; Path=/", "extra=1; Path=/"])
    async with servers.client(cookies={"sid": "user"}) as client:
        await client.get_task("t")
    assert servers.requests[-1].headers["cookie"] == "sid=user; extra=1"


@on_mock_clock()
async def test_path_and_expiry_are_kept() -> None:
    servers = Servers()
    servers.answers[OWN] = agent(
        OWN + "/a2a",
        [
            "here=1; Path=/a2a",
            "there=1; Path=/elsewhere",
            "card=1",  # the card's path: /.well-known
            "short=1; Path=/; Max-Age=60",
            "gone=1; Path=/; Max-Age=0",
            "past=1; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT",
            "long=1; Path=/; Max-Age=" + "9" * 5000,  # a lifetime with thousands of digits
            "both=1; Path=/; Expires=Thu, 01 Jan 1970 00:00:00 GMT; Max-Age=600",  # Max-Age wins
        ],
    )
    async with servers.client() as client:
        await client.get_card()
        servers.answers[OWN] = agent(OWN + "/a2a", [])
        await client.get_task("t")
        assert cookies_of(servers.requests[-1]) == {
            "here": "1",
            "short": "1",
            "long": "1",
            "both": "1",
        }
        await anyio.sleep(61)
        await client.get_task("t")
        assert cookies_of(servers.requests[-1]) == {"here": "1", "long": "1", "both": "1"}


async def test_cookies_a_header_cannot_carry_are_dropped() -> None:
    servers = Servers()
    hostile = ["bad=caf\u00e9", "nul=a\x00b", "=noname", "novalue", "sp ace=1", "ok=1"]
    answer = agent(OWN + "/a2a", [])

    def with_raw_cookies(request: httpx.Request) -> httpx.Response:
        response = answer(request)
        raw = [(b"set-cookie", c.encode("latin-1") + b"; Path=/") for c in hostile]
        return httpx.Response(200, headers=[*response.headers.raw, *raw], content=response.content)

    servers.answers[OWN] = with_raw_cookies
    async with servers.client() as client:
        await client.get_card()
        servers.answers[OWN] = answer
        await client.get_task("t")  # the next request still goes out
    assert servers.requests[-1].headers["cookie"] == "ok=1"


# -- 3: bounded ---------------------------------------------------------------------------------


def flood(size: int, per_answer: int) -> Answer:
    """An agent that sets ``per_answer`` new cookies of about ``size`` bytes on every answer."""
    count = 0

    def answer(request: httpx.Request) -> httpx.Response:
        nonlocal count
        cookies = []
        for _ in range(per_answer):
            count += 1
            cookies.append(f"c{count}={'v' * size}")
        return agent(OWN + "/a2a", cookies)(request)

    return answer


@pytest.mark.parametrize(("size", "per_answer"), [(10, 7), (300, 20), (4000, 3)])
async def test_a_cookie_flood_keeps_every_request_small(size: int, per_answer: int) -> None:
    servers = Servers()
    servers.answers[OWN] = flood(size, per_answer)
    async with servers.client() as client:
        for _ in range(150):
            await client.get_task("t")
        held = client._http.cookies
        assert held is not None
        assert len(held) <= MAX_COOKIES_PER_ORIGIN and held.size <= MAX_BYTES_PER_ORIGIN
    for request in servers.requests:
        sent = cookies_of(request)
        assert len(sent) <= MAX_COOKIES_PER_ORIGIN
        assert len(request.headers.get("cookie", "")) <= MAX_BYTES_PER_ORIGIN + 3 * len(sent)
    # the newest cookies are the ones kept
    assert f"c{150 * per_answer}" in cookies_of(servers.requests[-1])


async def test_a_cookie_larger_than_4_kib_is_not_kept() -> None:
    servers = Servers()
    servers.answers[OWN] = agent(OWN + "/a2a", ["big=" + "x" * MAX_COOKIE_BYTES, "small=1"])
    async with servers.client() as client:
        await client.get_task("t")
        await client.get_task("t")
    assert cookies_of(servers.requests[-1]) == {"small": "1"}


async def test_cookies_of_many_origins_stay_bounded_overall() -> None:
    servers = Servers()
    ports = iter(range(10000, 10200))
    big = [f"c{i}={'v' * 300}" for i in range(MAX_COOKIES_PER_ORIGIN)]

    def bounce(request: httpx.Request) -> httpx.Response:
        port = next(ports)  # every answer names a new origin, which floods its own jar
        servers.answers[f"https://agent.example.com:{port}"] = agent(OWN + "/a2a", big)
        return agent(OWN + "/a2a", [], redirect=f"https://agent.example.com:{port}/a2a")(request)

    servers.answers[OWN] = bounce
    async with servers.client() as client:
        await client.get_card()
        for _ in range(100):
            await client.get_task("t")
        held = client._http.cookies
        assert held is not None
        assert 0 < len(held) <= MAX_COOKIES and held.size <= MAX_BYTES


# -- over real sockets, with the httpx client the library makes ---------------------------------


@asynccontextmanager
async def recording_server(
    host: str, set_cookies: Callable[[], list[str]], interface: str | None = None
) -> AsyncIterator[tuple[str, list[dict[str, str]]]]:
    """An agent on ``host`` that sets ``set_cookies()`` on every answer and records the
    headers of every request; its card names ``interface`` (default: itself)."""
    seen: list[dict[str, str]] = []
    base = ""

    def headers() -> list[tuple[str, str]]:
        return [("set-cookie", c) for c in set_cookies()]

    async def card(request: Request) -> Response:
        seen.append(dict(request.headers))
        response = JSONResponse(v1_card(url=interface or base + "/a2a"))
        response.raw_headers.extend((k.encode(), v.encode()) for k, v in headers())
        return response

    async def rpc(request: Request) -> Response:
        seen.append(dict(request.headers))
        body = await request.json()
        response = JSONResponse(rpc_result(body["id"], TASK))
        response.raw_headers.extend((k.encode(), v.encode()) for k, v in headers())
        return response

    app = Starlette(
        routes=[
            Route("/.well-known/agent-card.json", card),
            Route("/a2a", rpc, methods=["POST"]),
        ]
    )
    async with serve_app(app, host) as url:
        base = url
        yield url, seen


async def test_cookies_stay_with_their_port_over_real_sockets() -> None:
    async with recording_server("127.0.0.1", lambda: ["rpc=1"]) as (rpc_url, rpc_seen):
        cookie = ["sid=1; Path=/"]
        async with (
            recording_server("127.0.0.1", lambda: cookie, rpc_url + "/a2a") as (url, seen),
            A2AClient(url) as client,
        ):
            await client.get_task("t")
            await client.get_task("t")
            await client.get_card(refresh=True)
    assert "cookie" not in rpc_seen[0]
    assert rpc_seen[1]["cookie"] == "rpc=1"
    assert "cookie" not in seen[0]
    assert seen[-1]["cookie"] == "sid=1"


async def test_a_cookie_flood_over_real_sockets_keeps_requests_small() -> None:
    count = 0

    def twenty_new() -> list[str]:
        nonlocal count
        count += 20
        return [f"c{count - i}={'v' * 200}" for i in range(20)]

    async with recording_server("127.0.0.1", twenty_new) as (url, seen), A2AClient(url) as client:
        for _ in range(15):  # past 16 KiB of cookies in all: more than a server reads
            await client.get_task("t")
    assert len(seen) == 16
    assert max(len(h.get("cookie", "")) for h in seen) <= MAX_BYTES_PER_ORIGIN + 200
