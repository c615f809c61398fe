"""The OAuth 2.0 flows against a real authorization server: device code, authorization code
with PKCE through the loopback redirect, token exchange, JWT bearer; refresh tokens; one
token for concurrent callers; renewal after a 401; tokens never in a log record."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from a2a_anyio import (
    A2AAuthError,
    A2AClient,
    A2AClientError,
    CardAuth,
    DeviceCode,
    OAuth2AuthorizationCode,
    OAuth2ClientCredentials,
    OAuth2DeviceCode,
    OAuth2JWTBearer,
    OAuth2TokenExchange,
    TokenSet,
)
from a2a_anyio._auth import Auth
from a2a_anyio.testing import FakeAgent, serve_app
from tests.oauth.conftest import Idp

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def agent_client(
    idp: Idp, auth: Auth, audience: str | None = None
) -> AsyncIterator[tuple[FakeAgent, A2AClient]]:
    agent = FakeAgent(auth=idp.check(audience))
    async with agent.serve(), A2AClient(agent.url, auth=auth, timeout=30) as client:
        yield agent, client


def approving(idp: Idp, shown: list[DeviceCode]) -> Callable[[DeviceCode], Awaitable[None]]:
    async def on_code(code: DeviceCode) -> None:
        shown.append(code)
        await idp.approve(code.user_code)  # the user, on another device

    return on_code


def device_flow(idp: Idp, shown: list[DeviceCode], **options: object) -> OAuth2DeviceCode:
    return OAuth2DeviceCode(
        idp.url + "/device_authorization",
        idp.url + "/token",
        "cli",
        on_code=approving(idp, shown),
        scopes=("a2a",),
        **options,  # type: ignore[arg-type]
    )


async def test_device_code_then_refresh_after_a_401(idp: Idp) -> None:
    shown: list[DeviceCode] = []
    kept: list[TokenSet] = []
    auth = device_flow(idp, shown, on_tokens=kept.append)
    before = await idp.issued()
    async with agent_client(idp, auth) as (agent, client):
        await client.send_message("hi")
        assert len(shown) == 1 and shown[0].verification_uri == idp.url + "/device"
        await idp.control(revoke="1")  # the access token no longer works; the refresh does
        await client.send_message("again")
        after = await idp.issued()
        assert len(shown) == 1  # the user was not asked again
    grant = "urn:ietf:params:oauth:grant-type:device_code"
    assert after[grant] == before.get(grant, 0) + 1
    assert after["refresh_token"] == before.get("refresh_token", 0) + 1
    assert len(kept) == 2 and kept[0].refresh_token != kept[1].refresh_token  # rotated
    assert [r.headers["authorization"] for r in agent.requests[-1:]] == [
        f"Bearer {kept[1].access_token}"
    ]


async def test_a_revoked_refresh_token_asks_the_user_again(idp: Idp) -> None:
    shown: list[DeviceCode] = []
    auth = device_flow(idp, shown)
    async with agent_client(idp, auth) as (_, client):
        await client.send_message("hi")
        await idp.control(revoke_refresh="1")
        await client.send_message("again")
    assert len(shown) == 2


async def test_a_device_the_user_refuses_is_a_typed_error(idp: Idp) -> None:
    await idp.control(deny="1")
    try:
        async with agent_client(idp, device_flow(idp, [])) as (agent, client):
            with pytest.raises(A2AAuthError, match=r"refused the grant \(access_denied\)"):
                await client.send_message("hi")
    finally:
        await idp.control(deny="0")
    assert [r.op for r in agent.requests if r.op != "card"] == []


async def test_authorization_code_with_pkce_and_a_loopback_redirect(idp: Idp) -> None:
    opened: list[str] = []

    async def browser(url: str) -> None:
        opened.append(url)
        # The user's browser: the server signs alice in and redirects to the loopback.
        async with httpx.AsyncClient(follow_redirects=True) as http:
            page = await http.get(url)
        assert page.status_code == 200 and "Signed in" in page.text

    auth = OAuth2AuthorizationCode(
        idp.url + "/authorize", idp.url + "/token", "cli", open_url=browser, scopes=("a2a",)
    )
    async with agent_client(idp, auth) as (_, client):
        await client.send_message("hi")
        await client.send_message("again")
    assert len(opened) == 1
    query = httpx.URL(opened[0]).params
    assert query["code_challenge_method"] == "S256" and len(query["code_challenge"]) == 43
    assert query["redirect_uri"].startswith("http://127.0.0.1:")
    assert auth.tokens is not None and auth.tokens.refresh_token


async def test_a_redirect_with_the_wrong_state_is_refused(idp: Idp) -> None:
    async def forged(url: str) -> None:
        redirect = httpx.URL(url).params["redirect_uri"]
        async with httpx.AsyncClient() as http:
            await http.get(redirect, params={"code": "stolen", "state": "forged"})

    auth = OAuth2AuthorizationCode(
        idp.url + "/authorize", idp.url + "/token", "cli", open_url=forged
    )
    async with agent_client(idp, auth) as (_, client):
        with pytest.raises(A2AAuthError, match="wrong state"):
            await client.send_message("hi")


async def test_token_exchange_acts_for_the_user(idp: Idp) -> None:
    user = OAuth2DeviceCode(
        idp.url + "/device_authorization", idp.url + "/token", "cli",
        on_code=approving(idp, []),
    )  # fmt: skip
    async with agent_client(idp, user) as (_, client):
        await client.send_message("hi")  # the user's own token
    assert user.tokens is not None
    subject = user.tokens.access_token
    auth = OAuth2TokenExchange(
        idp.url + "/token", "service", "service-secret", lambda: subject, audience="agent-b"
    )
    async with agent_client(idp, auth, audience="agent-b") as (agent, client):
        await client.send_message("on alice's behalf")
    assert auth.tokens is not None and auth.tokens.access_token != subject
    assert agent.requests[-1].headers["authorization"] == f"Bearer {auth.tokens.access_token}"


async def test_jwt_bearer_assertion_signed_with_the_clients_key(idp: Idp) -> None:
    key = (await idp.control())["signer_key"]
    auth = OAuth2JWTBearer(
        idp.url + "/token", key=key, issuer="signer", subject="robot", algorithm="ES256"
    )
    async with agent_client(idp, auth) as (_, client):
        await client.send_message("hi")
    other = OAuth2JWTBearer(idp.url + "/token", assertion="not.a.jwt")
    async with agent_client(idp, other) as (_, client):
        with pytest.raises(A2AAuthError, match=r"\(invalid_grant\)"):
            await client.send_message("hi")


async def test_one_token_for_concurrent_callers_and_one_renewal_after_their_401s(
    idp: Idp,
) -> None:
    auth = OAuth2ClientCredentials(idp.url + "/token", "service", "service-secret")
    before = (await idp.issued()).get("client_credentials", 0)
    async with agent_client(idp, auth) as (_, client):
        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(client.send_message, "hi")
        assert (await idp.issued())["client_credentials"] == before + 1
        await idp.control(revoke="1")
        async with anyio.create_task_group() as group:
            for _ in range(20):
                group.start_soon(client.send_message, "hi")
        assert (await idp.issued())["client_credentials"] == before + 2


async def test_a_token_for_another_audience_is_refused_after_one_renewal(idp: Idp) -> None:
    auth = OAuth2ClientCredentials(
        idp.url + "/token", "service", "service-secret", audience="agent-b"
    )
    before = (await idp.issued()).get("client_credentials", 0)
    async with agent_client(idp, auth, audience="agent-a") as (_, client):
        with pytest.raises(A2AAuthError) as info:
            await client.send_message("hi")
    assert info.value.status_code == 401
    assert (await idp.issued())["client_credentials"] == before + 2  # renewed once, no more


async def test_tokens_never_show_in_logs_errors_or_reprs(
    idp: Idp, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    shown: list[DeviceCode] = []
    auth = device_flow(idp, shown)
    card_auth = CardAuth(bearer="hush-bearer-token", client_id="cli", client_secret="hush-secret")
    async with agent_client(idp, auth) as (_, client):
        await client.send_message("hi")
        await idp.control(revoke="1")
        await client.send_message("again")
        texts = [repr(auth), repr(auth.tokens), repr(client), repr(card_auth)]
    assert auth.tokens is not None
    secrets = [auth.tokens.access_token, auth.tokens.refresh_token, "hush"]
    texts += [r.getMessage() for r in caplog.records]
    assert any("request POST" in t for t in texts)  # the debug records were there
    for text in texts:
        for secret in secrets:
            assert secret and secret not in text


async def test_authenticate_signs_in_before_the_first_call(idp: Idp) -> None:
    shown: list[DeviceCode] = []
    auth = CardAuth(
        client_id="cli", on_device_code=approving(idp, shown), trusted_issuers=[idp.url]
    )
    url = idp.url + "/.well-known/openid-configuration"
    card = {
        "securitySchemes": {"o": {"openIdConnectSecurityScheme": {"openIdConnectUrl": url}}},
        "securityRequirements": [{"schemes": {"o": {}}}],
    }
    agent = FakeAgent(auth=idp.check(), card=card)
    async with agent.serve(), A2AClient(agent.url, auth=auth, timeout=30) as client:
        await client.authenticate()
        assert len(shown) == 1 and [r.op for r in agent.requests] == ["card"]
        await client.send_message("hi")
    assert len(shown) == 1


async def test_a_token_about_to_expire_is_renewed_through_the_refresh_token(idp: Idp) -> None:
    await idp.control(lifetime="20")  # under the 30 s margin: renewed before each use
    try:
        shown: list[DeviceCode] = []
        before = await idp.issued()
        async with agent_client(idp, device_flow(idp, shown)) as (_, client):
            await client.send_message("hi")
            await client.send_message("again")
        after = await idp.issued()
    finally:
        await idp.control(lifetime="3600")
    assert len(shown) == 1
    assert after["refresh_token"] > before.get("refresh_token", 0)


async def test_a_refresh_url_on_an_untrusted_origin_is_refused(idp: Idp) -> None:
    flow = {
        "deviceCode": {
            "deviceAuthorizationUrl": idp.url + "/device_authorization",
            "tokenUrl": idp.url + "/token",
            "refreshUrl": "https://elsewhere.example/refresh",
        }
    }
    card = {
        "securitySchemes": {"o": {"oauth2SecurityScheme": {"flows": flow}}},
        "securityRequirements": [{"schemes": {"o": {}}}],
    }
    shown: list[DeviceCode] = []
    auth = CardAuth(
        client_id="cli", on_device_code=approving(idp, shown), trusted_issuers=[idp.url]
    )
    agent = FakeAgent(auth=idp.check(), card=card)
    async with agent.serve(), A2AClient(agent.url, auth=auth) as client:
        with pytest.raises(A2AAuthError, match=r"elsewhere\.example"):
            await client.send_message("hi")
    assert shown == []


@pytest.mark.parametrize(
    "answer",
    [
        {
            "device_code": "d",
            "user_code": "U",
            "verification_uri": "https://x/d",
            "verification_uri_complete": "https://x/\x1b]8;;evil\x07",
        },
        {"device_code": "d", "user_code": "U", "verification_uri": "javascript:alert(1)"},
        {"device_code": "d", "user_code": "U\n", "verification_uri": "https://x/d"},
        {"device_code": "d", "verification_uri": "https://x/d"},
        {"device_code": "d", "user_code": "U", "verification_uri": "https://x/d", "interval": -1},
    ],
)
async def test_a_device_answer_that_cannot_be_shown_is_refused(answer: dict[str, Any]) -> None:
    async def device(request: Request) -> Response:
        return JSONResponse(answer)

    app = Starlette(routes=[Route("/device", device, methods=["POST"])])
    shown: list[DeviceCode] = []
    async with serve_app(app) as issuer:
        auth = OAuth2DeviceCode(issuer + "/device", issuer + "/token", "cli", on_code=shown.append)
        agent = FakeAgent()
        async with agent.serve(), A2AClient(agent.url, auth=auth) as client:
            # Typed (on the card's request, whose fetch reports it as a discovery error).
            with pytest.raises(A2AClientError, match="bad device authorization response"):
                await client.send_message("hi")
    assert shown == []


async def test_the_card_fetched_again_keeps_the_sign_in(idp: Idp) -> None:
    shown: list[DeviceCode] = []
    auth = CardAuth(
        client_id="cli", on_device_code=approving(idp, shown), trusted_issuers=[idp.url]
    )
    url = idp.url + "/.well-known/openid-configuration"
    card = {
        "securitySchemes": {"o": {"openIdConnectSecurityScheme": {"openIdConnectUrl": url}}},
        "securityRequirements": [{"schemes": {"o": {}}}],
    }
    agent = FakeAgent(auth=idp.check(), card=card)
    async with agent.serve(), A2AClient(agent.url, auth=auth) as client:
        await client.send_message("hi")
        await client.get_card(refresh=True)  # a new card object, asking for the same
        await client.send_message("again")
    assert len(shown) == 1
