"""The OAuth2 client secret goes only to the token URL's origin.

A hostile (or hijacked) token endpoint answers the client-credentials request with a redirect
to another origin: another host, another port, plain http. A 307 or 308 would carry the form,
client secret included, to it. The client refuses any such redirect with ``A2AAuthError``:
the other origin receives nothing, and neither does the agent.
"""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio.lowlevel
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from a2a_anyio import A2AAuthError, A2AClient, OAuth2ClientCredentials
from a2a_anyio.testing import serve_app
from tests.unit._support import rpc_result

pytestmark = pytest.mark.anyio

AGENT = "https://agent.example.com"
IDP = "https://idp.example.com"
SECRET = "s3cret-client-secret"
TASK = {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}}


class World:
    """An agent, a token endpoint that redirects where it is told, and the origins it names.
    Every request is kept."""

    def __init__(self, redirects: dict[str, tuple[int, str]]) -> None:
        self.redirects = redirects  # token endpoint path -> (status, Location)
        self.requests: list[httpx.Request] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        await anyio.lowlevel.checkpoint()
        if str(request.url).startswith(AGENT):
            body = rpc_result(json.loads(request.content)["id"], TASK)
            return httpx.Response(200, json=body)
        if request.url.path in self.redirects:
            status, location = self.redirects[request.url.path]
            return httpx.Response(status, headers={"location": location})
        return httpx.Response(200, json={"access_token": "tok", "expires_in": 3600})

    def to(self, prefix: str) -> list[httpx.Request]:
        return [r for r in self.requests if str(r.url).startswith(prefix)]

    def client(self) -> A2AClient:
        auth = OAuth2ClientCredentials(IDP + "/token", "client", SECRET)
        http = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))
        return A2AClient(endpoint=AGENT + "/a2a", protocol="1.0", auth=auth, http_client=http)


ELSEWHERE = ["https://evil.example", "http://idp.example.com", "https://idp.example.com:8443"]


@pytest.mark.parametrize("status", [307, 308, 301, 302, 303])
@pytest.mark.parametrize("elsewhere", ELSEWHERE)
async def test_a_token_endpoint_redirecting_elsewhere_is_refused(
    status: int, elsewhere: str
) -> None:
    world = World({"/token": (status, elsewhere + "/token")})
    async with world.client() as client:
        with pytest.raises(A2AAuthError, match="another origin") as info:
            await client.get_task("t")
    assert info.value.status_code == status
    assert SECRET not in str(info.value)
    assert world.to(elsewhere) == []
    assert world.to(AGENT) == []  # no call without a token
    assert len(world.to(IDP)) == 1  # refused once, not retried


async def test_a_redirect_elsewhere_later_in_the_chain_is_refused() -> None:
    world = World(
        {
            "/token": (307, "/v2/token"),  # same origin: followed
            "/v2/token": (308, "https://evil.example/token"),
        }
    )
    async with world.client() as client:
        with pytest.raises(A2AAuthError, match="another origin"):
            await client.get_task("t")
    assert [r.url.path for r in world.to(IDP)] == ["/token", "/v2/token"]
    assert world.to("https://evil.example") == []


@pytest.mark.parametrize("location", ["https://idp.example.com:99999/token", "//evil.example/t"])
async def test_a_redirect_to_no_readable_or_a_scheme_relative_origin_is_refused(
    location: str,
) -> None:
    world = World({"/token": (307, location)})
    async with world.client() as client:
        with pytest.raises(A2AAuthError, match="another origin"):
            await client.get_task("t")
    assert [str(r.url) for r in world.requests] == [IDP + "/token"]


async def test_a_redirect_on_the_token_origin_is_followed() -> None:
    world = World({"/token": (307, IDP + "/oauth/token")})
    async with world.client() as client:
        await client.get_task("t")
    final = world.to(IDP)[-1]
    assert final.url.path == "/oauth/token"
    secret = base64.b64encode(f"client:{SECRET}".encode()).decode()
    assert final.headers["authorization"] == f"Basic {secret}"  # the hop on its origin has it
    assert world.to(AGENT)[0].headers["authorization"] == "Bearer tok"


@asynccontextmanager
async def recorder(host: str) -> AsyncIterator[tuple[str, list[bytes]]]:
    """A server on ``host`` that keeps the body of every request."""
    bodies: list[bytes] = []

    async def anything(request: Request) -> Response:
        bodies.append(await request.body())
        return JSONResponse({"access_token": "stolen", "expires_in": 3600})

    app = Starlette(routes=[Route("/{path:path}", anything, methods=["GET", "POST"])])
    async with serve_app(app, host) as url:
        yield url, bodies


async def test_over_real_sockets_the_secret_stays_on_its_origin() -> None:
    async with recorder("127.0.0.2") as (elsewhere, stolen):

        async def token(request: Request) -> Response:
            return RedirectResponse(elsewhere + "/token", status_code=307)

        app = Starlette(routes=[Route("/token", token, methods=["POST"])])
        async with serve_app(app, "127.0.0.1") as idp:
            auth = OAuth2ClientCredentials(idp + "/token", "client", SECRET)
            async with A2AClient(endpoint=idp + "/a2a", protocol="1.0", auth=auth) as client:
                with pytest.raises(A2AAuthError, match="another origin"):
                    await client.get_task("t")
    assert stolen == []
