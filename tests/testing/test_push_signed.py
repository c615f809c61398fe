"""PushReceiver with a PushVerifier: notifications signed with real keys (a JWT in
``Authorization``), the agent's JWK Set served over HTTP on 127.0.0.1, the receiver served by
hypercorn; every hostile token refused with a typed error before the body is read."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import AsyncIterator, Callable, Generator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import anyio
import httpx
import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from a2a_anyio import A2AClient, Task, TaskState, TaskStatusUpdateEvent
from a2a_anyio._asgi import Receive, Scope, Send, send_json, serve_app
from a2a_anyio.push import PushAuthError, PushReceiver, PushVerifier
from a2a_anyio.testing import FakeAgent, SkillContext, status
from a2a_anyio.testing._skills import Emit
from tests.unit._support import jump, on_mock_clock

from ._helpers import wait_until
from .test_push import post

pytestmark = pytest.mark.anyio

ISSUER = "https://agent.example.com"
AGENT_KEY = ec.generate_private_key(ec.SECP256R1())
OTHER_KEY = ec.generate_private_key(ec.SECP256R1())
SECRET = "s" * 40
MIB = 1 << 20


def public_jwk(key: ec.EllipticCurvePrivateKey, kid: str) -> dict[str, Any]:
    jwk = ECAlgorithm.to_jwk(key.public_key(), as_dict=True)
    return {**jwk, "kid": kid, "alg": "ES256", "use": "sig"}


def note(task_id: str = "t-1") -> bytes:
    return json.dumps(
        {"statusUpdate": {"taskId": task_id, "status": {"state": "TASK_STATE_COMPLETED"}}}
    ).encode()


@dataclass
class KeyServer:
    """A JWK Set over HTTP: ``/jwks.json`` the agent's keys, ``/huge.json`` 2 MiB of them."""

    keys: list[dict[str, Any]] = field(default_factory=lambda: [public_jwk(AGENT_KEY, "k1")])
    requests: list[str] = field(default_factory=list)
    url: str = ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        self.requests.append(scope["path"])
        if scope["path"] == "/huge.json":
            padding = [{"kty": "oct", "k": "x" * 1000}] * (2 * MIB // 1000)
            await send_json(send, 200, {"keys": [*self.keys, *padding]})
        else:
            await send_json(send, 200, {"keys": self.keys})

    @property
    def jwks(self) -> str:
        return f"{self.url}/jwks.json"


@asynccontextmanager
async def key_server() -> AsyncIterator[KeyServer]:
    server = KeyServer()
    async with serve_app(server) as url:
        server.url = url
        yield server


def sign(
    audience: str,
    *,
    key: Any = AGENT_KEY,
    alg: str = "ES256",
    headers: dict[str, Any] | None = None,
    **claims: Any,
) -> str:
    now = int(time.time())
    payload = {"iss": ISSUER, "aud": audience, "iat": now, "jti": str(uuid.uuid4()), **claims}
    payload = {k: v for k, v in payload.items() if v is not None}
    return jwt.encode(payload, key, algorithm=alg, headers=headers)


def bearer(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def verifier(keys: KeyServer, **options: Any) -> PushVerifier:
    return PushVerifier(issuer=ISSUER, agent=keys.url, **options)


async def test_a_signed_notification_is_accepted_and_the_key_set_cached() -> None:
    async with key_server() as keys:
        receiver = PushReceiver(verifier=verifier(keys))
        async with receiver.serve() as url, httpx.AsyncClient() as http:
            head = {"kid": "k1", "jku": keys.jwks}
            for _ in range(3):
                answer = await http.post(
                    url, content=note(), headers=bearer(sign(url, headers=head))
                )
                assert answer.status_code == 200
    assert keys.requests == ["/jwks.json"]  # fetched once, then cached
    [first, *_] = receiver.received
    assert first.verified is not None
    assert (first.verified.kid, first.verified.jwks_url, first.verified.alg) == (
        "k1",
        keys.jwks,
        "ES256",
    )
    assert first.verified.claims["iss"] == ISSUER
    assert receiver.rejected == 0 and not receiver.refused


def hostile_tokens(url: str, keys: KeyServer, elsewhere: KeyServer) -> dict[str, tuple[str, str]]:
    """Name -> (the Authorization header, the reason it is refused for)."""
    head = {"kid": "k1", "jku": keys.jwks}
    public_pem = AGENT_KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    unsigned = jwt.encode(
        {"iss": ISSUER, "aud": url, "iat": int(time.time()), "jti": "x"},
        "",
        algorithm="none",
        headers=head,
    )
    header, payload, _ = sign(url, headers=head).split(".")
    return {
        "no-authorization": ("", "missing"),
        "basic-scheme": ("Basic dXNlcjpwYXNz", "missing"),
        "not-a-jwt": ("Bearer not.a.jwt", "malformed"),
        "expired": (f"Bearer {sign(url, headers=head, exp=int(time.time()) - 600)}", "expired"),
        "not-yet-valid": (
            f"Bearer {sign(url, headers=head, nbf=int(time.time()) + 600)}",
            "not-yet-valid",
        ),
        "wrong-audience": (f"Bearer {sign('https://elsewhere.example', headers=head)}", "audience"),
        "wrong-issuer": (f"Bearer {sign(url, headers=head, iss='https://evil.example')}", "issuer"),
        "iat-too-old": (f"Bearer {sign(url, headers=head, iat=int(time.time()) - 3600)}", "iat"),
        "iat-in-the-future": (
            f"Bearer {sign(url, headers=head, iat=int(time.time()) + 3600)}",
            "iat",
        ),
        "no-jti": (f"Bearer {sign(url, headers=head, jti=None)}", "claims"),
        "kid-not-in-the-jwks": (
            f"Bearer {sign(url, key=OTHER_KEY, headers={**head, 'kid': 'k9'})}",
            "kid",
        ),
        "signed-by-another-key": (f"Bearer {sign(url, key=OTHER_KEY, headers=head)}", "signature"),
        "tampered-payload": (f"Bearer {header}.{payload}x.{'A' * 86}", "signature"),
        "jku-on-another-origin": (
            f"Bearer {sign(url, key=OTHER_KEY, headers={'kid': 'k1', 'jku': elsewhere.jwks})}",
            "jku",
        ),
        "jku-not-a-url": (f"Bearer {sign(url, headers={'kid': 'k1', 'jku': 'file:///x'})}", "jku"),
        "alg-none": (f"Bearer {unsigned}", "algorithm"),
        "hs256-with-the-public-key-as-secret": (
            f"Bearer {hs256_with(public_pem, url, head)}",
            "algorithm",
        ),
    }


def hs256_with(secret: bytes, audience: str, headers: dict[str, Any]) -> str:
    """A token an attacker makes with the agent's public key as an HMAC secret (PyJWT refuses
    to, so the signature is made by hand)."""
    import base64
    import hashlib
    import hmac

    def b64(data: bytes) -> str:
        return base64.urlsafe_b64encode(data).rstrip(b"=").decode()

    head = b64(json.dumps({"alg": "HS256", "typ": "JWT", **headers}).encode())
    body = b64(
        json.dumps({"iss": ISSUER, "aud": audience, "iat": int(time.time()), "jti": "j"}).encode()
    )
    mac = hmac.new(secret, f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{b64(mac)}"


async def raw_post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, int]:
    """POST ``body`` over a socket of our own, its first 64 KiB before the answer is read;
    the answer's status and how many of the body's bytes went."""
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    head = f"POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(body)}\r\n"
    head += "".join(f"{name}: {value}\r\n" for name, value in headers.items())
    first = body[: 64 * 1024]
    async with await anyio.connect_tcp(host, int(port)) as sock:
        await sock.send(head.encode() + b"\r\n" + first)
        sent = len(first)
        answer = b""
        with anyio.fail_after(10):
            while b"\r\n" not in answer:
                with anyio.move_on_after(0.25):
                    answer += await sock.receive()
                    continue
                if sent < len(body):  # no answer yet: the server reads on
                    chunk = body[sent : sent + MIB]
                    await sock.send(chunk)
                    sent += len(chunk)
    return int(answer.split(b" ", 2)[1]), sent


async def test_hostile_tokens_are_refused_before_the_body_is_read() -> None:
    body = b'{"statusUpdate": "' + b"x" * (20 * MIB) + b'"}'
    async with key_server() as keys, key_server() as elsewhere:
        elsewhere.keys = [public_jwk(OTHER_KEY, "k1")]
        receiver = PushReceiver(verifier=verifier(keys))
        async with receiver.serve() as url:
            cases = hostile_tokens(url, keys, elsewhere)
            for name, (authorization, reason) in cases.items():
                headers = {"Authorization": authorization} if authorization else {}
                status, sent = await raw_post(url, body, headers)
                refused = receiver.refused[-1]
                assert isinstance(refused, PushAuthError), name
                assert refused.reason == reason, (name, refused)
                want = 403 if reason in ("audience", "issuer") else 401
                assert (status, refused.status_code) == (want, want), name
                assert sent == 64 * 1024, name  # not a byte more was asked for
            async with httpx.AsyncClient() as http:  # and it serves on
                token = sign(url, headers={"kid": "k1", "jku": keys.jwks})
                ok = await http.post(url, content=note(), headers=bearer(token))
    assert ok.status_code == 200
    assert len(receiver.received) == 1 and receiver.rejected == len(cases)
    assert elsewhere.requests == []  # a jku elsewhere is never fetched
    # Fetched once: the unknown kid found it fetched within the refetch interval.
    assert keys.requests == ["/jwks.json"]


async def test_a_replayed_token_is_refused() -> None:
    async with key_server() as keys:
        receiver = PushReceiver(verifier=verifier(keys))
        async with receiver.serve() as url, httpx.AsyncClient() as http:
            token = sign(url, headers={"kid": "k1", "jku": keys.jwks})
            first = await http.post(url, content=note(), headers=bearer(token))
            again = await http.post(url, content=note(), headers=bearer(token))
    assert (first.status_code, again.status_code) == (200, 401)
    assert again.json() == {"error": "the token was used before (replayed jti)"}
    assert again.headers["www-authenticate"] == 'Bearer error="invalid_token"'
    assert [e.reason for e in receiver.refused] == ["replayed"]


async def test_a_key_set_url_on_the_allow_list_or_configured() -> None:
    async with key_server() as keys, key_server() as other:
        other.keys = [public_jwk(OTHER_KEY, "o1")]
        check = PushVerifier(issuer=ISSUER, jwks_url=keys.jwks, allowed_jwks=[other.jwks])
        receiver = PushReceiver(verifier=check)
        async with receiver.serve() as url, httpx.AsyncClient() as http:
            no_jku = sign(url, headers={"kid": "k1"})
            allowed = sign(url, key=OTHER_KEY, headers={"kid": "o1", "jku": other.jwks})
            elsewhere = sign(url, headers={"kid": "k1", "jku": f"{other.url}/other.json"})
            answers = [
                (await http.post(url, content=note(), headers=bearer(t))).status_code
                for t in (no_jku, allowed, elsewhere)
            ]
    assert answers == [200, 200, 401]
    assert [e.reason for e in receiver.refused] == ["jku"]


async def test_keys_given_are_tried_first_then_the_key_set() -> None:
    pinned = OTHER_KEY.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    async with key_server() as keys:
        check = PushVerifier(issuer=ISSUER, keys=[pinned], jwks_url=keys.jwks)
        receiver = PushReceiver(url="http://hooks.test", verifier=check)
        by_pinned = sign("http://hooks.test", key=OTHER_KEY, headers={"kid": "k1"})
        assert (await post(receiver, [note()], bearer(by_pinned), token=None)).status == 200
        assert keys.requests == []  # the key given verified it: no fetch
        by_published = sign("http://hooks.test", headers={"kid": "k1"})
        assert (await post(receiver, [note()], bearer(by_published), token=None)).status == 200
    assert keys.requests == ["/jwks.json"]
    assert [n.verified.jwks_url for n in receiver.received if n.verified] == [None, keys.jwks]


async def test_the_task_id_claim_binds_the_token_to_its_task() -> None:
    receiver = PushReceiver(url="http://hooks.test", verifier=hmac_verifier())
    wrong = await post(receiver, [note("t-2")], bearer(hmac_token("t-1")), token=None)
    right = await post(receiver, [note("t-1")], bearer(hmac_token("t-1")), token=None)
    assert (wrong.status, right.status) == (403, 200)
    assert wrong.reads > 0  # the task is known only from the body
    assert [e.reason for e in receiver.refused] == ["task"]


def hmac_verifier(**options: Any) -> PushVerifier:
    return PushVerifier(issuer=ISSUER, hmac_secret=SECRET, **options)


def hmac_token(task_id: str | None = None, secret: str = SECRET, **claims: Any) -> str:
    return sign("http://hooks.test", key=secret, alg="HS256", taskId=task_id, **claims)


@pytest.mark.parametrize(
    ("token", "status", "reason"),
    [
        (lambda: hmac_token(), 200, None),
        (lambda: hmac_token(secret="t" * 40), 401, "signature"),
        (lambda: hmac_token(iss="someone"), 403, "issuer"),
        (lambda: sign("http://hooks.test", key=OTHER_KEY), 401, "algorithm"),
    ],
    ids=["shared-secret", "wrong-secret", "wrong-issuer", "es256-without-keys"],
)
async def test_an_hmac_shared_secret(
    token: Callable[[], str], status: int, reason: str | None
) -> None:
    receiver = PushReceiver(url="http://hooks.test", verifier=hmac_verifier())
    posted = await post(receiver, [b"[" * 100_000], bearer(token()), token=None)
    assert posted.status == (status if reason else 400)  # a good token: the body is read
    assert posted.reads_before_answer == (0 if reason else posted.reads)
    assert [e.reason for e in receiver.refused] == ([reason] if reason else [])


async def test_token_ids_are_remembered_within_a_bound() -> None:
    receiver = PushReceiver(url="http://hooks.test", verifier=hmac_verifier(max_jtis=2))
    statuses = [
        (await post(receiver, [note()], bearer(hmac_token()), token=None)).status for _ in range(3)
    ]
    # A live id is never dropped to make room (its token could then be replayed).
    assert statuses == [200, 200, 429]
    assert [(e.reason, e.status_code) for e in receiver.refused] == [("replay-memory-full", 429)]


async def test_the_token_header_is_still_checked_with_a_verifier() -> None:
    receiver = PushReceiver(url="http://hooks.test", verifier=hmac_verifier(), require_token=True)
    token = receiver.expect("t-1")
    without = await post(receiver, [note()], bearer(hmac_token()), token=None)
    unsigned = await post(receiver, [note()], {}, token=token)
    both = await post(receiver, [note()], bearer(hmac_token()), token=token)
    assert (without.status, unsigned.status, both.status) == (401, 401, 200)
    assert receiver.received[0].token == token


async def test_the_audience_is_the_receivers_url_unless_given() -> None:
    nowhere = PushReceiver(verifier=hmac_verifier())  # mounted, and not told its URL
    given = PushReceiver(verifier=hmac_verifier(audience=["https://a.example", "https://b"]))
    for_b = sign("https://b", key=SECRET, alg="HS256")
    refused = await post(nowhere, [note()], bearer(hmac_token()), token=None)
    accepted = await post(given, [note()], bearer(for_b), token=None)
    assert (refused.status, accepted.status) == (401, 200)
    assert "no URL to check the token's audience" in nowhere.refused[0].message


def test_a_verifier_needs_what_it_checks_with() -> None:
    with pytest.raises(ValueError, match="key source"):
        PushVerifier(issuer=ISSUER)
    with pytest.raises(ValueError, match="32 bytes"):
        PushVerifier(issuer=ISSUER, hmac_secret="short")
    with pytest.raises(ValueError, match="asymmetric"):
        PushVerifier(issuer=ISSUER, agent="https://a.example", algorithms=["HS256"])
    with pytest.raises(ValueError, match="issuer"):
        PushVerifier(issuer="", agent="https://a.example")
    with pytest.raises(ValueError, match="audience"):
        PushVerifier(issuer=ISSUER, agent="https://a.example", audience=[])
    with pytest.raises(ValueError, match="jwks_url"):
        PushVerifier(issuer=ISSUER, jwks_url="file:///etc/keys")


async def test_a_huge_key_set_is_refused() -> None:
    async with key_server() as keys:
        check = PushVerifier(issuer=ISSUER, allowed_jwks=[f"{keys.url}/huge.json"])
        receiver = PushReceiver(verifier=check)
        async with receiver.serve() as url, httpx.AsyncClient() as http:
            head = {"kid": "k1", "jku": f"{keys.url}/huge.json"}
            answers = [
                await http.post(url, content=note(), headers=bearer(sign(url, headers=head)))
                for _ in range(2)
            ]
    assert [a.status_code for a in answers] == [401, 401]
    [error, _] = receiver.refused
    assert error.reason == "jwks" and "larger than 262144 bytes" in error.message
    assert keys.requests == ["/huge.json"]  # the failure is held: no second fetch


async def test_a_key_set_is_read_up_to_its_first_100_members() -> None:
    filler = [public_jwk(OTHER_KEY, f"f{i}") for i in range(100)]
    sets = {
        "/first": [public_jwk(AGENT_KEY, "k1"), *filler],
        "/last": [*filler, public_jwk(AGENT_KEY, "k1")],
    }

    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json={"keys": sets[request.url.path]})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        check = PushVerifier(issuer=ISSUER, agent="https://keys.test", http_client=http)
        receiver = PushReceiver(url="http://hooks.test", verifier=check)
        statuses = []
        for path in sets:
            token = sign(
                "http://hooks.test", headers={"kid": "k1", "jku": f"https://keys.test{path}"}
            )
            statuses.append((await post(receiver, [note()], bearer(token), token=None)).status)
    assert statuses == [200, 401]
    assert [e.reason for e in receiver.refused] == ["kid"]


class SlowKeys:
    """Key sets that answer in ``delay`` seconds (of the test's clock), counting requests."""

    def __init__(self, delay: float) -> None:
        self.delay = delay
        self.requests = 0

    async def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        await anyio.sleep(self.delay)
        return httpx.Response(200, json={"keys": [public_jwk(AGENT_KEY, "k1")]})


@on_mock_clock()
async def test_a_slow_key_set_is_refused_and_not_asked_again_at_once() -> None:
    slow = SlowKeys(delay=3600)
    async with httpx.AsyncClient(transport=httpx.MockTransport(slow)) as http:
        check = PushVerifier(issuer=ISSUER, agent="https://keys.test", http_client=http)
        receiver = PushReceiver(url="http://hooks.test", verifier=check)
        head = {"kid": "k1", "jku": "https://keys.test/jwks.json"}

        async def posted() -> int:
            token = sign("http://hooks.test", headers=head)
            return (await post(receiver, [note()], bearer(token), token=None)).status

        first, second = await posted(), await posted()
        slow.delay = 0
        jump(11)  # past the refetch interval: asked again
        third = await posted()
    assert (first, second, third) == (401, 401, 200)
    assert [e.reason for e in receiver.refused] == ["jwks", "jwks"]
    assert "no answer within 10 s" in receiver.refused[0].message
    assert slow.requests == 2


@on_mock_clock()
async def test_an_unknown_kid_refetches_the_key_set_at_most_once_per_interval() -> None:
    served = [public_jwk(AGENT_KEY, "k1")]
    requests: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        requests.append(str(request.url))
        return httpx.Response(200, json={"keys": served})

    async with httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http:
        check = PushVerifier(issuer=ISSUER, jwks_url="https://keys.test/jwks", http_client=http)
        receiver = PushReceiver(url="http://hooks.test", verifier=check)

        async def status(kid: str, key: Any = AGENT_KEY) -> int:
            token = sign("http://hooks.test", key=key, headers={"kid": kid})
            return (await post(receiver, [note()], bearer(token), token=None)).status

        assert await status("k1") == 200
        served.append(public_jwk(OTHER_KEY, "k2"))  # the agent rotates its keys
        assert await status("k2", OTHER_KEY) == 401  # fetched just now: not again yet
        jump(11)
        assert [await status("k2", OTHER_KEY) for _ in range(5)] == [200] * 5
        assert [await status("k3") for _ in range(5)] == [401] * 5
        jump(11)
        assert await status("k3") == 401
    # The first fetch, the refetch that found k2 (k3 then asked for none), one after that.
    assert len(requests) == 3
    assert check.jwks_requests == 3


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_watch_end_to_end_with_an_agent_that_signs_its_notifications(dialect: str) -> None:
    async with key_server() as keys:
        gate = anyio.Event()
        signer = Signer(keys.jwks)
        async with httpx.AsyncClient(auth=signer) as push_client:
            agent = FakeAgent(dialect=dialect, push_client=push_client)  # type: ignore[arg-type]

            @agent.skill("slow")
            async def slow(ctx: SkillContext) -> AsyncIterator[Emit]:
                yield status("working", "started")
                await gate.wait()
                yield status("completed", "done")

            receiver = PushReceiver(verifier=PushVerifier(issuer=ISSUER, allowed_jwks=[keys.jwks]))
            async with agent.serve(), receiver.serve() as url, A2AClient(agent.url) as client:
                signer.audience = url
                task = await client.send_message("go", blocking=False)
                assert isinstance(task, Task)
                async with receiver.watch(client, task.id) as notifications:
                    [config] = await client.list_push_configs(task.id)
                    gate.set()
                    events = [event async for event in notifications]
                await wait_until(lambda: all(d.status_code for d in agent.push_deliveries))
    # The config asked the agent for a Bearer scheme and no credentials: it signs its own.
    assert (config.auth_scheme, config.auth_credentials) == ("Bearer", None)
    assert isinstance(events[-1], TaskStatusUpdateEvent if dialect == "1.0" else Task)
    assert events[-1].status.state is TaskState.COMPLETED
    assert {d.status_code for d in agent.push_deliveries} == {200}
    assert all(n.verified and n.verified.task_id == n.task_id for n in receiver.received)
    assert keys.requests == ["/jwks.json"]


class Signer(httpx.Auth):
    """An agent's push client signing each notification: a fresh JWT with the task id."""

    requires_request_body = True

    def __init__(self, jku: str) -> None:
        self.jku = jku
        self.audience = ""

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        body = json.loads(request.content)
        update = body.get("statusUpdate") or body.get("artifactUpdate") or {}
        task_id = update.get("taskId") or body.get("task", body).get("id")  # v1.0, v0.3
        token = sign(self.audience, headers={"kid": "k1", "jku": self.jku}, taskId=task_id)
        request.headers["Authorization"] = f"Bearer {token}"
        yield request
