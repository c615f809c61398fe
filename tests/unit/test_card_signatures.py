"""A2AClient(card_verifier=...): signed cards checked on discovery, keys from a JWKS URL."""

from __future__ import annotations

import json
from typing import Any

import httpx
import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from a2a_anyio import A2AClient, A2ADiscoveryError, CardVerifier, sign_card

from ._support import BASE, v1_card

pytestmark = pytest.mark.anyio

KEY = ec.generate_private_key(ec.SECP256R1())
OTHER = ec.generate_private_key(ec.SECP256R1())


def serve(
    card: dict[str, Any], jwks: dict[str, Any] | None = None
) -> tuple[httpx.AsyncClient, list[str]]:
    seen: list[str] = []

    def handle(request: httpx.Request) -> httpx.Response:
        seen.append(f"{request.url.path} auth={request.headers.get('authorization')}")
        if request.url.path == "/keys.json" and jwks is not None:
            return httpx.Response(200, json=jwks)
        return httpx.Response(200, json=card)

    return httpx.AsyncClient(transport=httpx.MockTransport(handle)), seen


async def test_a_signed_card_verifies_and_a_tampered_one_is_refused() -> None:
    signed = sign_card(v1_card(), KEY, kid="k1")
    http, _ = serve(signed)
    verifier = CardVerifier(keys={"k1": KEY.public_key()})
    async with A2AClient(BASE, http_client=http, card_verifier=verifier) as client:
        assert (await client.get_card()).name == "Test Agent"

    tampered = {**signed, "name": "Evil Agent"}
    http, _ = serve(tampered)
    async with A2AClient(BASE, http_client=http, card_verifier=verifier) as client:
        with pytest.raises(A2ADiscoveryError, match="k1"):
            await client.get_card()


async def test_require_refuses_an_unsigned_card() -> None:
    http, _ = serve(v1_card())
    verifier = CardVerifier(keys=[KEY.public_key()], policy="require")
    async with A2AClient(BASE, http_client=http, card_verifier=verifier) as client:
        with pytest.raises(A2ADiscoveryError):
            await client.get_card()
    http, _ = serve(v1_card())
    async with A2AClient(BASE, http_client=http, card_verifier=CardVerifier(keys=[KEY.public_key()])) as client:  # fmt: skip
        await client.get_card()  # verify-if-present: unsigned passes


async def test_keys_from_a_jwks_url_fetched_without_the_agents_credentials() -> None:
    jwk = json.loads(jwt.algorithms.ECAlgorithm.to_jwk(KEY.public_key()))
    jwks = {"keys": [{**jwk, "kid": "k1", "alg": "ES256", "use": "sig"}]}
    http, seen = serve(sign_card(v1_card(), KEY, kid="k1"), jwks)
    verifier = CardVerifier(jwks_url=BASE + "/keys.json")
    async with A2AClient(BASE, http_client=http, auth="Bearer s3cret", card_verifier=verifier) as client:  # fmt: skip
        await client.get_card()
    assert "/keys.json auth=None" in seen
    assert "/.well-known/agent-card.json auth=Bearer s3cret" in seen

    http, _ = serve(sign_card(v1_card(), OTHER, kid="k1"), jwks)
    async with A2AClient(BASE, http_client=http, card_verifier=verifier) as client:
        with pytest.raises(A2ADiscoveryError):
            await client.get_card()
