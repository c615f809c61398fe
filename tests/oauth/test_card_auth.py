"""Auth chosen from the card, against a real authorization server: every card version's
spelling of its security schemes, flows filled from discovery documents, and each URL a card
names used only on an origin the user trusts."""

from __future__ import annotations

from typing import Any

import pytest
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import HTMLResponse, JSONResponse, Response
from starlette.routing import Route

from a2a_anyio import A2AAuthError, A2AClient, A2AProtocolError, AgentPool, ApiKey, CardAuth
from a2a_anyio.testing import FakeAgent, serve_app
from tests._bombs import bomb
from tests.oauth.conftest import Idp

pytestmark = pytest.mark.anyio

CLIENT: dict[str, Any] = {"client_id": "service", "client_secret": "service-secret"}


def v1_oauth(flow: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "securitySchemes": {"oauth": {"oauth2SecurityScheme": {"flows": flow, **extra}}},
        "securityRequirements": [{"schemes": {"oauth": {"list": ["a2a"]}}}],
    }


def v03_scheme(scheme: dict[str, Any], scopes: list[str] | None = None) -> dict[str, Any]:
    return {"securitySchemes": {"s": scheme}, "security": [{"s": scopes or []}]}


async def send(agent: FakeAgent, auth: CardAuth) -> None:
    async with agent.serve():
        await send_to(agent, auth)


@pytest.mark.parametrize(
    ("dialect", "card"),
    [
        ("1.0", lambda idp: v1_oauth({"clientCredentials": {"tokenUrl": idp + "/token"}})),
        (
            "0.3",
            lambda idp: v03_scheme(
                {"type": "oauth2", "flows": {"clientCredentials": {"tokenUrl": idp + "/token"}}}
            ),
        ),
        (  # the flow names no URL: the RFC 8414 metadata does
            "1.0",
            lambda idp: v1_oauth(
                {"clientCredentials": {"scopes": {"a2a": "call"}}},
                oauth2MetadataUrl=idp + "/.well-known/oauth-authorization-server",
            ),
        ),
        (  # OpenID Connect: every URL from discovery
            "0.3",
            lambda idp: v03_scheme(
                {
                    "type": "openIdConnect",
                    "openIdConnectUrl": idp + "/.well-known/openid-configuration",
                },
                ["a2a"],
            ),
        ),
        (
            "1.0",
            lambda idp: {
                "securitySchemes": {
                    "oidc": {
                        "openIdConnectSecurityScheme": {
                            "openIdConnectUrl": idp + "/.well-known/openid-configuration"
                        }
                    }
                },
                "securityRequirements": [{"schemes": {"oidc": {"list": []}}}],
            },
        ),
    ],
    ids=["v1-flow", "v03-flow", "v1-metadata-url", "v03-oidc", "v1-oidc"],
)
async def test_the_card_chooses_client_credentials(idp: Idp, dialect: str, card: Any) -> None:
    agent = FakeAgent(dialect=dialect, auth=idp.check(), card=card(idp.url))  # type: ignore[arg-type]
    before = (await idp.issued()).get("client_credentials", 0)
    auth = CardAuth(**CLIENT, trusted_issuers=[idp.url])
    await send(agent, auth)
    assert (await idp.issued())["client_credentials"] == before + 1
    assert [type(a).__name__ for a in auth.chosen or ()] == ["OAuth2ClientCredentials"]


async def test_an_alternative_it_can_meet_is_chosen_with_the_cards_key_name() -> None:
    agent = FakeAgent(
        dialect="0.3",
        card={
            "securitySchemes": {
                "oauth": {"type": "oauth2", "flows": {}},
                "key": {"type": "apiKey", "in": "query", "name": "k"},
                "basic": {"type": "http", "scheme": "basic"},
            },
            "security": [{"oauth": []}, {"key": [], "basic": []}],
        },
    )
    await send(agent, CardAuth(api_key="sesame", basic=("u", "p")))
    sent = agent.requests[-1]
    assert sent.query.get("k") == "sesame"
    assert sent.headers["authorization"].startswith("Basic ")


async def test_a_legacy_card_names_its_scheme_only() -> None:
    agent = FakeAgent(dialect="legacy", auth="Bearer tok")
    await send(agent, CardAuth(bearer="tok"))
    assert agent.requests[-1].headers["authorization"] == "Bearer tok"


async def test_a_scheme_of_the_users_own_by_name() -> None:
    agent = FakeAgent(dialect="1.0", card=v1_oauth({}))
    await send(agent, CardAuth(schemes={"oauth": ApiKey("x", "X-Own")}))
    assert agent.requests[-1].headers["x-own"] == "x"


async def test_nothing_it_holds_fits_names_what_the_card_asks_and_what_to_give() -> None:
    agent = FakeAgent(
        dialect="0.3",
        card=v03_scheme({"type": "apiKey", "in": "header", "name": "X-Key"})
        | {
            "securitySchemes": {
                "s": {"type": "apiKey", "in": "header", "name": "X-Key"},
                "m": {"type": "mutualTLS"},
            },
            "security": [{"s": []}, {"m": []}],
        },
    )
    with pytest.raises(A2AAuthError) as info:
        await send(agent, CardAuth(bearer="tok"))
    said = str(info.value)
    assert "asks for s (an API key in header X-Key) or m (a client certificate" in said
    assert "give api_key=" in said and "MutualTLS" in said
    assert "tok" not in said.replace("token", "")
    assert info.value.schemes == [
        "s (an API key in header X-Key)",
        "m (a client certificate (mutual TLS))",
    ]
    assert [r.op for r in agent.requests] == ["card"]  # no call went to the agent


async def test_a_token_url_on_an_untrusted_origin_is_refused_before_any_request(idp: Idp) -> None:
    agent = FakeAgent(card=v1_oauth({"clientCredentials": {"tokenUrl": idp.url + "/token"}}))
    before = await idp.issued()
    with pytest.raises(A2AAuthError, match="another origin than the agent's") as info:
        await send(agent, CardAuth(**CLIENT))  # no trusted_issuers
    assert f"trusted_issuers=['{idp.url}']" in str(info.value)
    assert await idp.issued() == before


async def test_discovery_on_an_untrusted_origin_is_refused(idp: Idp) -> None:
    url = idp.url + "/.well-known/openid-configuration"
    agent = FakeAgent(
        dialect="0.3", card=v03_scheme({"type": "openIdConnect", "openIdConnectUrl": url})
    )
    with pytest.raises(A2AAuthError, match="discovery URL is on another origin"):
        await send(agent, CardAuth(**CLIENT))


async def test_a_discovery_document_naming_another_issuer_or_endpoint_is_refused() -> None:
    documents: list[dict[str, Any]] = []

    async def metadata(request: Request) -> Response:
        return JSONResponse(documents[-1])

    async def token(request: Request) -> Response:
        return HTMLResponse("<html>sign in</html>")

    app = Starlette(
        routes=[
            Route("/.well-known/openid-configuration", metadata),
            Route("/token", token, methods=["POST"]),
        ]
    )
    async with serve_app(app) as issuer:
        card = v03_scheme(
            {
                "type": "openIdConnect",
                "openIdConnectUrl": issuer + "/.well-known/openid-configuration",
            }
        )
        agent = FakeAgent(dialect="0.3", card=card)
        auth: dict[str, Any] = {**CLIENT, "trusted_issuers": [issuer]}
        async with agent.serve():
            documents.append(
                {"issuer": "https://evil.example", "token_endpoint": issuer + "/token"}
            )
            with pytest.raises(A2AAuthError, match="names another issuer"):
                await send_to(agent, CardAuth(**auth))
            documents.append({"issuer": issuer, "token_endpoint": "https://evil.example/token"})
            with pytest.raises(A2AAuthError, match="another origin than the agent's"):
                await send_to(agent, CardAuth(**auth))
            documents.append({"issuer": issuer, "token_endpoint": issuer + "/token"})
            with pytest.raises(A2AProtocolError, match="bad token response"):
                await send_to(agent, CardAuth(**auth))
            documents.append({"issuer": issuer})
            with pytest.raises(A2AAuthError, match=r"need client_secret|no usable flow"):
                await send_to(agent, CardAuth(**auth))
        assert [r.op for r in agent.requests if r.op != "card"] == []


async def send_to(agent: FakeAgent, auth: CardAuth) -> None:
    async with A2AClient(agent.url, auth=auth) as client:
        await client.send_message("hi")


@pytest.mark.parametrize("where", ["discovery", "token"])
async def test_a_compression_bomb_from_the_issuer_is_refused(where: str) -> None:
    async def metadata(request: Request) -> Response:
        if where == "discovery":
            return Response(bomb("gzip", 16), headers={"Content-Encoding": "gzip"})
        base = str(request.base_url).rstrip("/")
        return JSONResponse({"issuer": base, "token_endpoint": base + "/token"})

    async def token(request: Request) -> Response:
        return Response(bomb("gzip", 16), headers={"Content-Encoding": "gzip"})

    app = Starlette(
        routes=[
            Route("/.well-known/openid-configuration", metadata),
            Route("/token", token, methods=["POST"]),
        ]
    )
    async with serve_app(app) as issuer:
        url = issuer + "/.well-known/openid-configuration"
        agent = FakeAgent(
            dialect="0.3", card=v03_scheme({"type": "openIdConnect", "openIdConnectUrl": url})
        )
        async with agent.serve():
            auth = CardAuth(**CLIENT, trusted_issuers=[issuer])
            with pytest.raises(A2AProtocolError, match="exceeds 65536 bytes"):
                await send_to(agent, auth)


async def test_one_card_auth_serves_a_pool_of_agents_that_ask_for_different_things() -> None:
    keyed = FakeAgent(
        dialect="0.3", card=v03_scheme({"type": "apiKey", "in": "header", "name": "X-Key"})
    )
    bearer = FakeAgent(auth="Bearer tok")
    auth = CardAuth(api_key="k3y", bearer="tok")
    async with keyed.serve(), bearer.serve(), AgentPool(auth=auth) as pool:
        for agent in (keyed, bearer, keyed):
            await pool.client(agent.url).send_message("hi")
    assert keyed.requests[-1].headers.get("x-key") == "k3y"
    assert "authorization" not in keyed.requests[-1].headers
    assert bearer.requests[-1].headers["authorization"] == "Bearer tok"
    assert "x-key" not in bearer.requests[-1].headers
