"""The network policy, with real servers on loopback addresses.

The machine has no public network, so the tests give the policy a resolver of their own and
``allow=["127.0.0.2/32"]``: a name that resolves to 127.0.0.2 plays an agent on the internet,
and 127.0.0.1 stays what it is, loopback. A "victim" agent on 127.0.0.1 records whatever
reaches it: after each refusal, nothing has.
"""

from __future__ import annotations

import json
import ssl
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.abc
import httpx
import pytest
from anyio.streams.tls import TLSListener
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

from a2a_anyio import (
    A2AClient,
    A2AClientError,
    A2AConnectionError,
    A2ANetworkPolicyError,
    AgentPool,
    NetworkPolicy,
    discover,
)
from a2a_anyio._network import literal, scope_of
from a2a_anyio.testing import FakeAgent, serve_app

PUBLIC = "127.0.0.2"


class Resolver:
    """Answers names from a table; a name with several answers gives them in turn (the
    last one again and again): DNS rebinding."""

    def __init__(self, answers: dict[str, list[str]]) -> None:
        self.answers = answers
        self.asked: list[str] = []

    async def __call__(self, host: str, port: int) -> Sequence[str]:
        self.asked.append(host)
        table = self.answers.get(host)
        if table is None:
            raise OSError(f"no such name: {host}")
        return [table.pop(0) if len(table) > 1 else table[0]]


def policy(resolver: Resolver, **options: Any) -> NetworkPolicy:
    return NetworkPolicy(allow=[f"{PUBLIC}/32"], resolver=resolver, **options)


def card(url: str) -> dict[str, Any]:
    binding = "GRPC" if url.startswith("grpc://") else "JSONRPC"
    return {
        "name": "Pointer",
        "description": "its interface is elsewhere",
        "version": "1",
        "supportedInterfaces": [{"url": url, "protocolBinding": binding, "protocolVersion": "1.0"}],
        "capabilities": {"streaming": False},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }


@asynccontextmanager
async def pointer(interface: str) -> AsyncIterator[str]:
    """A server on 127.0.0.2 whose card's interface is ``interface``; its URL."""

    async def give_card(request: Request) -> Response:
        return JSONResponse(card(interface))

    app = Starlette(routes=[Route("/.well-known/agent-card.json", give_card)])
    async with serve_app(app, PUBLIC, 0) as url:
        yield url


@pytest.fixture
async def victim() -> AsyncIterator[FakeAgent]:
    async with FakeAgent(name="Victim").serve() as agent:
        yield agent


# -- what the policy sees in an address -------------------------------------------------------


@pytest.mark.parametrize(
    ("spelled", "scope"),
    [
        ("127.0.0.1", "loopback"), ("2130706433", "loopback"), ("0x7f000001", "loopback"),
        ("0177.0.0.1", "loopback"), ("127.1", "loopback"), ("[::1]", "loopback"),
        ("::ffff:127.0.0.1", "loopback"), ("[::ffff:7f00:1]", "loopback"),
        ("64:ff9b::7f00:1", "loopback"), ("2002:7f00:1::", "loopback"),
        ("10.0.0.1", "private"), ("172.16.5.4", "private"), ("192.168.1.1", "private"),
        ("100.64.0.1", "private"), ("fd00:ec2::254", "private"), ("::ffff:10.1.2.3", "private"),
        ("169.254.169.254", "link-local"), ("fe80::1%eth0", "link-local"),
        ("::ffff:169.254.169.254", "link-local"),
        ("0.0.0.0", "loopback"), ("::", "loopback"), ("240.0.0.1", "reserved"),
        ("224.0.0.1", "reserved"), ("::127.0.0.1", "reserved"),
        ("93.184.216.34", "public"), ("2606:4700::1111", "public"), ("::ffff:8.8.8.8", "public"),
    ],
)  # fmt: skip
def test_every_spelling_of_an_address_has_its_scope(spelled: str, scope: str) -> None:
    ip = literal(spelled)
    assert ip is not None
    assert scope_of(ip) == scope


@pytest.mark.parametrize("name", ["agent.example", "1.2.3.4.example", "0x7f000001.example", ""])
def test_names_are_not_addresses(name: str) -> None:
    assert literal(name) is None


def test_the_options_are_checked() -> None:
    with pytest.raises(ValueError, match="allow holds networks"):
        NetworkPolicy(allow=["not a network"])
    with pytest.raises(TypeError, match="allow is a sequence"):
        NetworkPolicy(allow="10.0.0.0/8")
    with pytest.raises(TypeError, match="pin must be a bool"):
        NetworkPolicy(pin=1)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="network_policy must be a NetworkPolicy"):
        A2AClient("http://127.0.0.1:1", network_policy="strict")  # type: ignore[arg-type]


@pytest.mark.anyio
async def test_a_client_of_another_http_client_cannot_enforce_it() -> None:
    async with httpx.AsyncClient() as http:
        with pytest.raises(ValueError, match="network_policy needs the HTTP client"):
            A2AClient("http://127.0.0.1:1", http_client=http, network_policy=NetworkPolicy())
        with pytest.raises(ValueError, match="network_policy needs the HTTP client"):
            AgentPool(http_client=http, network_policy=NetworkPolicy())


# -- the one decision, for any URL an agent gave ---------------------------------------------


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("url", "rule", "address"),
    [
        ("http://169.254.169.254/latest/meta-data/", "link-local", "169.254.169.254"),
        ("https://10.0.0.7/jwks.json", "private", "10.0.0.7"),
        ("http://[::ffff:127.0.0.1]:8080/", "loopback", "::ffff:7f00:1"),
        ("http://0x7f000001/", "loopback", "127.0.0.1"),
        ("http://localhost:9000/x", "loopback", "127.0.0.1"),
        ("http://files.internal/x", "private", "10.9.9.9"),
    ],
)
async def test_a_url_an_agent_gave_is_refused_with_its_address_and_rule(
    url: str, rule: str, address: str
) -> None:
    resolver = Resolver({"agent.example": ["93.184.216.34"], "files.internal": ["10.9.9.9"]})
    rules = NetworkPolicy(resolver=resolver)
    with pytest.raises(A2ANetworkPolicyError) as caught:
        await rules.check(url, own=["https://agent.example"])
    assert (caught.value.url, caught.value.address, caught.value.rule) == (url, address, rule)
    assert f"a {rule} address" in str(caught.value)


@pytest.mark.anyio
async def test_what_the_agents_own_url_reaches_is_allowed() -> None:
    rules = NetworkPolicy(resolver=Resolver({"corp.lan": ["10.0.0.5"]}))
    assert await rules.check("http://127.0.0.1:9/", own=["http://localhost:8000"])
    assert await rules.check("http://10.1.1.1/", own=["http://corp.lan"])
    assert await rules.check("http://8.8.8.8/", own=["http://corp.lan"])
    with pytest.raises(A2ANetworkPolicyError, match="link-local"):
        await rules.check("http://169.254.169.254/", own=["http://corp.lan"])
    with pytest.raises(A2ANetworkPolicyError, match="loopback"):
        await rules.check("http://127.0.0.1/", own=["http://corp.lan"])
    with pytest.raises(A2AConnectionError, match=r"cannot resolve nowhere\.test"):
        await rules.check("http://nowhere.test/")


# -- a client's calls -----------------------------------------------------------------------


@pytest.mark.anyio
async def test_off_by_default_and_local_development_works_with_it(victim: FakeAgent) -> None:
    async with A2AClient(victim.url) as client:
        assert (await client.send_message("hi")) is not None
    async with A2AClient(victim.url, network_policy=NetworkPolicy()) as client:
        assert (await client.send_message("hi")) is not None
    local = victim.url.replace("127.0.0.1", "localhost")
    async with A2AClient(local, network_policy=NetworkPolicy()) as client:
        assert (await client.send_message("hi")) is not None


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("interface", "rule"),
    [
        ("http://10.0.0.1:{port}/a2a", "private"),
        ("http://169.254.169.254/latest/meta-data", "link-local"),
        ("http://[::ffff:127.0.0.1]:{port}/a2a", "loopback"),
        ("http://0x7f000001:{port}/a2a", "loopback"),
        ("http://2130706433:{port}/a2a", "loopback"),
        ("http://localhost:{port}/a2a", "loopback"),
        ("http://intranet.test:{port}/a2a", "loopback"),
    ],
)
async def test_a_public_agents_card_cannot_point_the_client_inside(
    victim: FakeAgent, interface: str, rule: str
) -> None:
    port = victim.url.rsplit(":", 1)[1]
    async with pointer(interface.format(port=port)) as url:
        name = url.replace(PUBLIC, "agent.test")
        resolver = Resolver({"agent.test": [PUBLIC], "intranet.test": ["127.0.0.1"]})
        async with A2AClient(name, network_policy=policy(resolver)) as client:
            card = await client.get_card()  # the card itself is on a public address
            assert card.name == "Pointer"
            with pytest.raises(A2ANetworkPolicyError) as caught:
                await client.send_message("hi")
        assert caught.value.rule == rule
        assert victim.requests == []
        # Without the policy, the same card leads the client to the victim.
        if "localhost" in interface or "0x7f" in interface:
            async with A2AClient(url) as client:
                await client.send_message("hi")
            assert victim.requests


@pytest.mark.anyio
async def test_a_redirect_to_a_private_address_is_refused(victim: FakeAgent) -> None:
    async def moved(request: Request) -> Response:
        return RedirectResponse(victim.url + "/.well-known/agent-card.json", status_code=302)

    app = Starlette(routes=[Route("/.well-known/agent-card.json", moved)])
    async with serve_app(app, PUBLIC, 0) as url:
        name = url.replace(PUBLIC, "agent.test")
        resolver = Resolver({"agent.test": [PUBLIC]})
        with pytest.raises(A2ANetworkPolicyError) as caught:
            await discover(name, network_policy=policy(resolver))
    assert (caught.value.rule, caught.value.address) == ("loopback", "127.0.0.1")
    assert victim.requests == []


@pytest.mark.anyio
async def test_a_request_connects_to_the_address_it_checked(victim: FakeAgent) -> None:
    """DNS rebinding: the name answers a public address first, then the victim's. The
    request that was checked against the first answer connects to it; the next one is
    checked again, and refused."""
    port = int(victim.url.rsplit(":", 1)[1])
    async with FakeAgent(name="Public").serve(host=PUBLIC, port=port) as public:
        name = f"http://agent.test:{port}"
        # Asked for the client's own URL, then for the card, then for the call.
        resolver = Resolver({"agent.test": [PUBLIC, PUBLIC, "127.0.0.1"]})
        async with A2AClient(name, network_policy=policy(resolver)) as client:
            card = await client.get_card()
            assert card.name == "Public"
            assert resolver.asked == ["agent.test"] * 2  # not asked again to connect
            with pytest.raises(A2ANetworkPolicyError) as caught:
                await client.send_message("hi")
        assert (caught.value.rule, caught.value.address) == ("loopback", "127.0.0.1")
        assert [r.op for r in public.requests] == ["card"]
        assert public.requests[0].headers["host"] == f"agent.test:{port}"  # the name's
    assert victim.requests == []


@pytest.mark.anyio
async def test_without_pinning_the_connection_resolves_the_name_again(victim: FakeAgent) -> None:
    port = victim.url.rsplit(":", 1)[1]
    resolver = Resolver({"agent.test": [PUBLIC]})
    async with A2AClient(
        f"http://agent.test:{port}", network_policy=policy(resolver, pin=False)
    ) as client:
        # The check passes; the connection asks the system's resolver, which knows no
        # agent.test: nothing is reached.
        with pytest.raises(A2AClientError):
            await client.get_card()
    assert victim.requests == []


@pytest.mark.anyio
async def test_a_pools_clients_and_its_own_client_follow_the_policy(victim: FakeAgent) -> None:
    async with pointer("http://169.254.169.254/a2a") as url:
        name = url.replace(PUBLIC, "agent.test")
        resolver = Resolver({"agent.test": [PUBLIC]})
        async with AgentPool(network_policy=policy(resolver)) as pool:
            with pytest.raises(A2ANetworkPolicyError, match="link-local"):
                await pool.client(name).send_message("hi")
            assert (await pool.client(victim.url).send_message("hi")) is not None
            # The pool's own httpx client, used directly: public addresses only.
            with pytest.raises(A2ANetworkPolicyError, match="loopback"):
                await pool.http_client.get(victim.url)


# -- the command line ---------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_command_lines_flag(anyio_backend_name: str) -> None:
    from tests.cli.conftest import run

    hostile = FakeAgent(
        name="Pointer",
        card={
            "supportedInterfaces": [
                {
                    "url": "http://169.254.169.254/a2a",
                    "protocolBinding": "JSONRPC",
                    "protocolVersion": "1.0",
                }
            ]
        },
    )
    async with FakeAgent(name="Local").serve() as local, hostile.serve():
        ok = await run(
            anyio_backend_name, "--network-policy", "strict", "-a", local.url, "send", "hi"
        )
        debug = await run(
            anyio_backend_name,
            "--network-policy",
            "strict",
            "--debug",
            "-a",
            local.url,
            "send",
            "hi",
        )
        refused = await run(
            anyio_backend_name, "--network-policy", "strict", "-a", hostile.url, "send", "hi"
        )
    assert ok.code == 0 and debug.code == 0, ok.err + debug.err
    assert refused.code != 0
    assert "the network policy refuses http://169.254.169.254/a2a" in refused.err
    assert "a link-local address" in refused.err


# -- TLS: the certificate is checked against the name ---------------------------------------


def tls_files(tmp: Path, name: str) -> tuple[Path, Path, Path]:
    """A CA (its certificate's path), and a certificate for ``name`` it signed, with its key."""
    import datetime

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.timezone.utc)
    ca_key, key = ec.generate_private_key(ec.SECP256R1()), ec.generate_private_key(ec.SECP256R1())
    ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test CA")])
    ca = (
        x509.CertificateBuilder()
        .subject_name(ca_name).issuer_name(ca_name).public_key(ca_key.public_key())
        .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    leaf = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)]))
        .issuer_name(ca_name).public_key(key.public_key())
        .serial_number(2).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(x509.SubjectAlternativeName([x509.DNSName(name)]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )  # fmt: skip
    paths = tmp / "ca.pem", tmp / "cert.pem", tmp / "key.pem"
    paths[0].write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    paths[1].write_bytes(leaf.public_bytes(serialization.Encoding.PEM))
    paths[2].write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return paths


@pytest.mark.anyio
async def test_a_pinned_tls_request_keeps_the_names_host_and_server_name(tmp_path: Path) -> None:
    ca, cert, key = tls_files(tmp_path, "agent.test")
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    seen: dict[str, Any] = {}

    def on_sni(sock: Any, server_name: str | None, ctx: ssl.SSLContext) -> None:
        seen["sni"] = server_name

    context.sni_callback = on_sni
    listener = TLSListener(await anyio.create_tcp_listener(local_host=PUBLIC), context)
    port = listener.listener.extra(anyio.abc.SocketAttribute.local_port)
    url = f"https://agent.test:{port}"

    async def answer(stream: Any) -> None:
        async with stream:
            head = b""
            while b"\r\n\r\n" not in head:
                head += await stream.receive()
            seen["host"] = next(
                line.split(b":", 1)[1].strip().decode()
                for line in head.split(b"\r\n")
                if line.lower().startswith(b"host:")
            )
            body = json.dumps(card(url + "/a2a")).encode()
            await stream.send(
                b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
            )

    resolver = Resolver({"agent.test": [PUBLIC]})
    async with listener, anyio.create_task_group() as tg:
        tg.start_soon(listener.serve, answer)
        async with A2AClient(url, verify=str(ca), network_policy=policy(resolver)) as client:
            assert (await client.get_card()).name == "Pointer"
        tg.cancel_scope.cancel()
    assert seen == {"sni": "agent.test", "host": f"agent.test:{port}"}


# -- gRPC: its own connections are checked and pinned too -----------------------------------


@pytest.mark.anyio
async def test_a_grpc_interface_is_checked_and_pinned(victim: FakeAgent) -> None:
    from tests.unit.test_grpc_client import grpc_card, served

    async with served() as (url, agent):
        port = url.rsplit(":", 1)[1]
        # Local development: the agent's own URL is loopback, its card says localhost.
        card = grpc_card(f"http://localhost:{port}")
        async with A2AClient(url, card=card, network_policy=NetworkPolicy()) as client:
            reply = await client.send_message("ping")
        assert getattr(reply, "text", None) == "pong: ping"
        # An agent on a public address whose card names the same gRPC server.
        async with pointer(f"grpc://localhost:{port}") as public:
            name = public.replace(PUBLIC, "agent.test")
            resolver = Resolver({"agent.test": [PUBLIC]})
            async with A2AClient(
                name, bindings=("grpc",), network_policy=policy(resolver)
            ) as client:
                with pytest.raises(A2ANetworkPolicyError) as caught:
                    await client.send_message("ping")
        assert (caught.value.rule, caught.value.address) == ("loopback", "127.0.0.1")
        assert len(agent.calls) == 1
