"""Auth schemes, 401/403 naming the card's schemes, TLS settings and redaction."""

from __future__ import annotations

import base64
import json
import warnings
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest

from a2a_anyio import (
    A2AAuthError,
    A2AClient,
    ApiKey,
    Basic,
    Bearer,
    MutualTLS,
    OAuth2ClientCredentials,
)

from ._support import BASE, RPC_URL, on_mock_clock, rpc_result, v1_card

pytestmark = pytest.mark.anyio

TASK = {"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}}


class Agent:
    """Answers GetTask; serves an OAuth token endpoint at /token; 401 when ``reject`` says so."""

    def __init__(self) -> None:
        self.requests: list[httpx.Request] = []
        self.tokens = 0
        self.reject: set[str] = set()  # Authorization values answered 401

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        await anyio.lowlevel.checkpoint()
        if request.url.path == "/token":
            self.tokens += 1
            form = dict(x.split("=", 1) for x in request.content.decode().split("&"))
            assert form["grant_type"] == "client_credentials"
            return httpx.Response(
                200, json={"access_token": f"tok-{self.tokens}", "expires_in": 3600}
            )
        if request.method == "GET":
            card = v1_card(
                securitySchemes={"bearer": {"httpAuthSecurityScheme": {"scheme": "Bearer"}}},
                securityRequirements=[{"schemes": {"bearer": {"list": ["tasks.read"]}}}],
            )
            return httpx.Response(200, json=card)
        credential = any(
            h in request.headers for h in ("authorization", "x-api-key", "x-key", "cookie")
        )
        credential = credential or "api_key" in request.url.params
        if request.headers.get("authorization") in self.reject or not credential:
            return httpx.Response(401, text="who are you?")
        return httpx.Response(200, json=rpc_result(json.loads(request.content)["id"], TASK))

    def client(self, **options: Any) -> A2AClient:
        options.setdefault("endpoint", RPC_URL)
        http = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))
        return A2AClient(protocol="1.0", http_client=http, **options)


async def test_header_schemes() -> None:
    agent = Agent()
    for auth, header, value in (
        (Bearer("abc"), "authorization", "Bearer abc"),
        (Basic("ann", "pw"), "authorization", "Basic " + base64.b64encode(b"ann:pw").decode()),
        (ApiKey("k1"), "x-api-key", "k1"),
        (ApiKey("k2", name="X-Key"), "x-key", "k2"),
        ("Token raw", "authorization", "Token raw"),
    ):
        async with agent.client(auth=auth) as client:
            await client.get_task("t")
        assert agent.requests[-1].headers[header] == value


async def test_api_key_in_query_and_cookie() -> None:
    agent = Agent()
    async with agent.client(auth=ApiKey("q1", name="api_key", location="query")) as client:
        await client.get_task("t")
    assert agent.requests[-1].url.params["api_key"] == "q1"
    async with agent.client(auth=ApiKey("c1", name="key", location="cookie"), cookies={"a": "b"}) as c:  # fmt: skip
        await c.get_task("t")
    assert agent.requests[-1].headers["cookie"] == "a=b; key=c1"
    with pytest.raises(ValueError, match="location"):
        ApiKey("x", location="body")


async def test_callable_providers_sync_and_async() -> None:
    agent = Agent()
    calls = []

    def sync_provider() -> str:
        calls.append(1)
        return f"Bearer s{len(calls)}"

    async def async_provider() -> str:
        await anyio.lowlevel.checkpoint()
        return "Bearer async"

    async with agent.client(auth=sync_provider) as client:
        await client.get_task("t")
        await client.get_task("t")
    assert [r.headers["authorization"] for r in agent.requests[-2:]] == ["Bearer s1", "Bearer s2"]
    agent.reject.add("Bearer s3")  # a 401 asks the provider once more
    async with agent.client(auth=sync_provider) as client:
        await client.get_task("t")
    assert agent.requests[-1].headers["authorization"] == "Bearer s4"
    async with agent.client(auth=async_provider) as client:
        await client.get_task("t")
    assert agent.requests[-1].headers["authorization"] == "Bearer async"


@on_mock_clock()
async def test_oauth2_client_credentials_cached_renewed_and_refreshed_on_401() -> None:
    agent = Agent()
    auth = OAuth2ClientCredentials(BASE + "/token", "client", "s3cret", scopes=("a", "b"))
    async with agent.client(auth=auth) as client:
        async with anyio.create_task_group() as group:
            for _ in range(10):
                group.start_soon(client.get_task, "t")
        assert agent.tokens == 1  # one token for ten concurrent calls
        anyio_time = anyio.current_time()
        await anyio.sleep(3600 - 30 - (anyio.current_time() - anyio_time) + 1)
        await client.get_task("t")
        assert agent.tokens == 2  # renewed before it expired
        agent.reject.add("Bearer tok-2")
        await client.get_task("t")
        assert agent.tokens == 3  # refreshed once after the 401
    token_request = next(r for r in agent.requests if r.url.path == "/token")
    # The client's own identity (HTTP Basic, RFC 6749 section 2.3.1), not the agent's token.
    assert (
        token_request.headers["authorization"]
        == "Basic " + base64.b64encode(b"client:s3cret").decode()
    )
    assert b"s3cret" not in token_request.content
    assert b"scope=a+b" in token_request.content


async def test_401_names_the_schemes_the_card_asks_for() -> None:
    agent = Agent()
    async with agent.client(endpoint=None, url=BASE) as client:
        await client.get_card()
        with pytest.raises(A2AAuthError) as info:
            await client.get_task("t")
    assert info.value.status_code == 401
    assert info.value.schemes == ["bearer (HTTP Bearer with scopes tasks.read)"]
    assert "the agent asks for: bearer (HTTP Bearer" in str(info.value)


NO_SCHEME = "the Authorization value sent has no scheme: auth= is the whole header value"


async def test_a_401_to_a_token_without_its_scheme_says_how_to_give_one() -> None:
    agent = Agent()
    agent.reject.add("secret-token")
    async with agent.client(auth="secret-token") as client:
        with pytest.raises(A2AAuthError) as unary:
            await client.get_task("t")
        with pytest.raises(A2AAuthError) as streamed:
            async with client.stream_message("hi") as stream:
                async for _ in stream:
                    pass
        with pytest.raises(A2AAuthError) as sent:
            await client.send_message("hi", on_event=print)
    for info in (unary, streamed, sent):
        said = str(info.value)
        assert info.value.status_code == 401
        assert said.count(NO_SCHEME) == 1 and "auth=Bearer(token)" in said
        assert "secret-token" not in said


async def test_a_token_with_its_scheme_gets_no_such_hint() -> None:
    agent = Agent()
    agent.reject.update({"Bearer secret-token", "secret-token"})
    for options in (
        {"auth": "Bearer secret-token"},
        {"auth": Bearer("secret-token")},
        {"auth": "secret-token", "headers": {}},
    ):
        async with agent.client(**options) as client:
            scheme = {"Authorization": "Bearer secret-token"} if "headers" in options else None
            with pytest.raises(A2AAuthError) as info:
                await client.get_task("t", headers=scheme)
        assert NO_SCHEME not in str(info.value), options


async def test_secrets_never_show() -> None:
    agent = Agent()
    agent.reject.add("Bearer hush-hush")
    async with agent.client(auth="Bearer hush-hush", headers={"X-Api-Key": "k3y"}) as client:
        with pytest.raises(A2AAuthError) as info:
            await client.get_task("t")
        texts = [str(info.value), repr(info.value), repr(client), repr(client._credentials)]
    for text in texts:
        assert "hush-hush" not in text and "k3y" not in text
    for auth in (Bearer("hush"), Basic("u", "hush"), ApiKey("hush"), OAuth2ClientCredentials("https://idp/t", "c", "hush"), MutualTLS("c.pem", "k.pem", "hush")):  # fmt: skip
        assert "hush" not in repr(auth)


def test_verify_false_warns_once_per_client() -> None:
    with pytest.warns(UserWarning, match="not verified") as record:
        A2AClient("https://agent.example.com", verify=False)
    assert len(record) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        A2AClient("https://agent.example.com")  # verification on: no warning


def test_a_custom_ca_bundle_and_a_client_certificate(tmp_path: Any) -> None:
    from datetime import datetime, timedelta, timezone

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "client")])
    now = datetime.now(timezone.utc)
    cert = (
        x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
        .serial_number(1).not_valid_before(now).not_valid_after(now + timedelta(days=1))
        .sign(key, hashes.SHA256())
    )  # fmt: skip
    cert_path, key_path = tmp_path / "c.pem", tmp_path / "k.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))  # fmt: skip
    client = A2AClient("https://agent.example.com", verify=str(cert_path), auth=MutualTLS(str(cert_path), str(key_path)))  # fmt: skip
    assert client._http.owns_client
    with pytest.raises(FileNotFoundError):
        A2AClient("https://agent.example.com", auth=MutualTLS(str(tmp_path / "missing.pem")))
