"""Credentials stay where they belong, with real servers on two loopback addresses.

An agent on 127.0.0.1 publishes a card whose interface is on 127.0.0.2, and an endpoint that
answers 307 to 127.0.0.2; the agent on 127.0.0.2 records every request. After both, it has
received no credential.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from a2a_anyio import A2AClient, A2ADiscoveryError, A2AHTTPError, MethodNotFoundError, Task
from a2a_anyio.testing import FakeAgent, serve_app

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

SECRET = "Bearer s3cret-token"
CREDENTIAL_HEADERS = ("authorization", "cookie", "x-api-key")


def leaked(agent: FakeAgent) -> list[tuple[str, str]]:
    """Every credential header the agent received."""
    return [
        (r.path, name) for r in agent.requests for name in CREDENTIAL_HEADERS if name in r.headers
    ]


@asynccontextmanager
async def two_origins() -> AsyncIterator[tuple[str, FakeAgent, dict[str, Any]]]:
    """(the first server's URL, the recording agent on 127.0.0.2, what the first received)."""
    async with FakeAgent(name="Elsewhere").serve(host="127.0.0.2") as elsewhere:
        other_rpc = elsewhere.url + "/a2a"
        seen: dict[str, Any] = {"card": [], "rpc": []}

        async def card(request: Request) -> Response:
            seen["card"].append(dict(request.headers))
            return JSONResponse(
                {
                    "name": "Pointer",
                    "description": "its interface is on another origin",
                    "version": "1",
                    "supportedInterfaces": [
                        {"url": other_rpc, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
                    ],
                    "capabilities": {"streaming": True},
                    "defaultInputModes": ["text/plain"],
                    "defaultOutputModes": ["text/plain"],
                    "skills": [],
                }
            )

        async def moved(request: Request) -> Response:
            seen["rpc"].append(dict(request.headers))
            return RedirectResponse(other_rpc, status_code=307)

        app = Starlette(
            routes=[
                Route("/.well-known/agent-card.json", card),
                Route("/rpc", moved, methods=["POST"]),
            ]
        )
        async with serve_app(app, "127.0.0.1") as url:
            yield url, elsewhere, seen


def client(url: str | None = None, **options: Any) -> A2AClient:
    return A2AClient(
        url,
        auth=SECRET,
        cookies={"session": "c00kie"},
        headers={"X-Api-Key": "k3y"},
        **options,
    )


async def test_a_card_pointing_elsewhere_gets_no_credentials() -> None:
    async with two_origins() as (url, elsewhere, seen):
        async with client(url) as c:
            task = await c.send_message("hello")
        assert isinstance(task, Task)
        assert [r.rpc_method for r in elsewhere.requests] == ["SendMessage"]
        assert leaked(elsewhere) == []
        # the card is on the user's origin: it got them
        assert seen["card"][0]["authorization"] == SECRET


async def test_a_redirect_elsewhere_is_followed_without_credentials() -> None:
    async with two_origins() as (url, elsewhere, seen):
        async with client(endpoint=url + "/rpc", protocol="1.0") as c:
            task = await c.send_message("hello")
            async with c.stream_message("stream too") as stream:
                await stream.result()
            with pytest.raises(MethodNotFoundError):  # a call that may stream
                await c.call("ext/none", on_event=lambda _: None)
        assert isinstance(task, Task)
        assert seen["rpc"][0]["authorization"] == SECRET  # the user's origin
        assert len(elsewhere.requests) == 3
        assert leaked(elsewhere) == []


async def test_refuse_policy() -> None:
    async with two_origins() as (url, elsewhere, _):
        async with client(url, cross_origin="refuse") as c:
            with pytest.raises(A2ADiscoveryError, match="another one"):
                await c.send_message("hello")
        async with client(endpoint=url + "/rpc", protocol="1.0", cross_origin="refuse") as c:
            with pytest.raises(A2AHTTPError, match="refusing a redirect"):
                await c.send_message("hello")
        assert elsewhere.requests == []


async def test_trusted_origins_opt_in() -> None:
    async with two_origins() as (url, elsewhere, _):
        async with client(url, trusted_origins=[elsewhere.url]) as c:
            await c.send_message("hello")
        assert {name for _, name in leaked(elsewhere)} == set(CREDENTIAL_HEADERS)


CALL_HEADERS = {"X-User-Token": "u-s3cret"}


def carried(requests: list[Any]) -> list[str | None]:
    """The call's header in each request (recorded header dicts, or the agent's requests)."""
    return [(r if isinstance(r, dict) else r.headers).get("x-user-token") for r in requests]


async def test_a_calls_headers_stay_on_the_agents_origin() -> None:
    """``headers=`` and ``request_headers`` are bound as the client's own: the card's other
    origin and a redirect's get none of them."""
    async with two_origins() as (url, elsewhere, seen):
        async with A2AClient(url) as c:
            await c.send_message("hello", headers=CALL_HEADERS)
            with c.request_headers(CALL_HEADERS):
                await c.send_message("again")
        async with A2AClient(endpoint=url + "/rpc", protocol="1.0") as c:
            await c.send_message("hello", headers=CALL_HEADERS)
            with c.request_headers(CALL_HEADERS):
                async with c.stream_message("stream too") as stream:
                    await stream.result()
                with pytest.raises(MethodNotFoundError):
                    await c.call("ext/none", on_event=lambda _: None)
        assert carried(seen["card"]) == ["u-s3cret"]  # the user's origin
        assert carried(seen["rpc"]) == ["u-s3cret"] * 3
        assert len(elsewhere.requests) == 5
        assert carried(elsewhere.requests) == [None] * 5


async def test_a_calls_headers_are_credentials_to_the_refuse_policy() -> None:
    async with two_origins() as (url, elsewhere, _):
        async with A2AClient(url, cross_origin="refuse") as c:
            await c.send_message("no credentials: it may go there")
            with pytest.raises(A2ADiscoveryError, match="another one"):
                await c.send_message("hello", headers=CALL_HEADERS)
        assert carried(elsewhere.requests) == [None]
