"""The gRPC transport (``_grpc``) against a gRPC server of the suite's own (``_grpc_server``),
on both backends: calls, streams, one connection per origin, MAX_CONCURRENT_STREAMS, the
deadline as ``grpc-timeout``, a cancelled call's RST_STREAM, credentials by origin, TLS."""

from __future__ import annotations

import datetime
import ipaddress
import ssl
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest
from anyio.streams.tls import TLSListener

from a2a_anyio import A2AConnectionError, A2ATimeoutError
from a2a_anyio._auth import CallableAuth, Credentials, MutualTLS, credentials
from a2a_anyio._bindings.base import GrpcStatus, StreamStatus, WireRequest
from a2a_anyio._dialects.ops import Op
from a2a_anyio._grpc_transport import GrpcTransport, grpc_timeout
from a2a_anyio._http import HttpTransport

from ._grpc_server import Call, GrpcServer, framed
from ._support import on_mock_clock

pytestmark = pytest.mark.anyio

SEND = "/lf.a2a.v1.A2AService/SendMessage"
STREAM = "/lf.a2a.v1.A2AService/SendStreamingMessage"


def request(url: str, path: str = SEND, body: bytes = b"hello", **headers: str) -> WireRequest[Any]:
    op = Op.STREAM if path == STREAM else Op.SEND
    return WireRequest(
        op, "POST", url + path, {"a2a-version": "1.0", **headers}, body, False, None, path[1:]
    )


def own(url: str, **options: Any) -> Credentials:
    return credentials(
        options.pop("auth", None), options.pop("headers", None), None, [url], "strip"
    )


@asynccontextmanager
async def transport(**options: Any) -> AsyncIterator[GrpcTransport]:
    http = HttpTransport(
        max_response_bytes=options.pop("max_response_bytes", 1 << 20),
        max_event_bytes=options.pop("max_event_bytes", 1 << 20),
    )
    grpc = GrpcTransport(http, **options)
    try:
        yield grpc
    finally:
        await grpc.aclose()
        await http.aclose()


async def echo(call: Call) -> None:
    await call.head()
    await call.send(call.message[::-1])
    await call.end()


async def test_a_unary_call_carries_its_message_and_its_metadata() -> None:
    server = GrpcServer(echo)
    async with server.serve() as url, transport() as grpc:
        req = request(url)
        reply = await grpc.unary(req, own(url, headers={"X-Trace": "t1"}), req.context)
        await grpc.aclose()
        await server.until_no_connection()
    assert (reply.status, reply.content) == (0, b"olleh")
    sent = server.calls[0].headers
    assert sent[":path"] == SEND
    assert sent["content-type"] == "application/grpc"
    assert sent["te"] == "trailers"
    assert sent["a2a-version"] == "1.0"
    assert sent["x-trace"] == "t1"
    assert "grpc-timeout" not in sent  # no deadline, none sent


async def test_the_callers_deadline_goes_as_grpc_timeout() -> None:
    server = GrpcServer(echo)
    async with server.serve() as url, transport() as grpc:
        for _ in range(2):
            req = request(url)
            with anyio.fail_after(20):
                await grpc.unary(req, own(url), req.context)
    # The calls of one timeout send one value (HPACK then sends it as an index).
    assert [call.headers["grpc-timeout"] for call in server.calls] == ["20S", "20S"]


def test_grpc_timeout_values() -> None:
    """Rounded up, in the coarsest unit at most 1 % over, else the finest that fits."""
    assert grpc_timeout(0.0) == "1u"
    assert grpc_timeout(0.0003) == "300u"
    assert grpc_timeout(0.29998) == "300m"
    assert grpc_timeout(1.5) == "1500m"
    assert grpc_timeout(29.99986) == "30S"
    assert grpc_timeout(299.9) == "5M"
    assert grpc_timeout(1000.0) == "1000S"
    assert grpc_timeout(10**9) == "277778H"
    assert grpc_timeout(10**12) == "99999999H"


async def test_credentials_go_only_to_their_origin() -> None:
    server = GrpcServer(echo)
    async with server.serve() as url, transport() as grpc:
        req = request(url)
        elsewhere = credentials(
            "Bearer s3cret", {"X-Key": "k"}, None, ["https://a.example"], "strip"
        )
        await grpc.unary(req, elsewhere, req.context)
        await grpc.unary(req, own(url, auth="Bearer s3cret"), req.context)
        cookie = own(url, headers={"Cookie": " s=1 ", "X-Key": "k "})
        await grpc.unary(req, cookie, req.context)
    first, second, third = server.calls
    assert "authorization" not in first.headers and "x-key" not in first.headers
    assert second.headers["authorization"] == "Bearer s3cret"
    # Credentials are kept out of HPACK's table (as h2 keeps them), values trimmed.
    assert (second.never_indexed, third.never_indexed) == ({"authorization"}, {"cookie"})
    assert (third.headers["cookie"], third.headers["x-key"]) == ("s=1", "k")


async def test_calls_share_one_connection_per_origin() -> None:
    server = GrpcServer(echo)
    async with server.serve() as url, transport() as grpc:
        req = request(url)
        async with anyio.create_task_group() as group:
            for _ in range(10):
                group.start_soon(grpc.unary, req, own(url), req.context)
        await grpc.aclose()
        await server.until_no_connection()
    assert (len(server.calls), server.connections) == (10, 1)


async def test_max_concurrent_streams_is_respected() -> None:
    running = peak = 0
    release = anyio.Event()

    async def slow(call: Call) -> None:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await release.wait()
        running -= 1
        await echo(call)

    server = GrpcServer(slow, max_streams=2)
    replies: list[bytes] = []
    async with server.serve() as url, transport() as grpc:
        req = request(url)

        async def one() -> None:
            replies.append((await grpc.unary(req, own(url), req.context)).content)

        async with anyio.create_task_group() as group:
            for _ in range(5):
                group.start_soon(one)
            with anyio.fail_after(5):
                while len(server.calls) < 2:
                    await anyio.sleep(0.01)
            await anyio.sleep(0.1)
            assert len(server.calls) == 2  # the others wait for a stream
            release.set()
    assert (replies, peak, server.connections) == ([b"olleh"] * 5, 2, 1)


async def test_a_status_that_is_no_success_is_the_replys() -> None:
    async def refuse(call: Call) -> None:
        await call.trailers_only(5, "no%20such%20task")

    server = GrpcServer(refuse)
    async with server.serve() as url, transport() as grpc:
        req = request(url)
        reply = await grpc.unary(req, own(url), req.context)
    assert (reply.status, reply.content) == (5, b"")
    assert type(reply.status) is GrpcStatus  # not an HTTP status: the codec knows which
    assert reply.headers["grpc-message"] == "no%20such%20task"


async def test_a_stream_gives_each_message_then_its_end() -> None:
    async def three(call: Call) -> None:
        await call.head()
        for n in range(3):
            await call.send(b"m%d" % n)
        await call.end()

    server = GrpcServer(three)
    async with server.serve() as url, transport() as grpc:
        conn = grpc.stream(request(url, STREAM), own(url), idle_timeout=5, open_timeout=5)
        await conn.open()
        got = [await conn.next_event() for _ in range(4)]
        await conn.aclose()
    assert got == [b"m0", b"m1", b"m2", None]
    assert server.calls[0].reset is None  # ended: nothing to reset


async def test_messages_already_read_are_taken_without_a_pass_of_the_loop() -> None:
    async def burst(call: Call) -> None:
        await call.head()
        await call.raw(b"".join(framed(b"m%d" % n) for n in range(200)))
        await call.end()

    passes = 0

    async def count_passes() -> None:
        nonlocal passes
        while True:
            await anyio.lowlevel.checkpoint()
            passes += 1

    server = GrpcServer(burst)
    async with server.serve() as url, transport() as grpc:
        conn = grpc.stream(request(url, STREAM), own(url), idle_timeout=5, open_timeout=5)
        await conn.open()
        assert await conn.next_event() == b"m0"  # the 200 came in one DATA frame
        async with anyio.create_task_group() as group:
            group.start_soon(count_passes)
            got = [await conn.next_event() for _ in range(200)]
            group.cancel_scope.cancel()
        await conn.aclose()
    assert got == [b"m%d" % n for n in range(1, 200)] + [None]
    assert passes < 20  # the trailers' reads, not one pass per message (the server's flush)


@pytest.mark.parametrize(
    ("piece", "calls", "messages"),
    [
        # Each call's bytes go back to the connection's window (16 MiB) when it ends, though
        # small messages (and finished calls) are handed back in batches; a stream's window
        # (1 MiB) the same: 17.9 MB of calls, then 5.1 MB of a stream.
        pytest.param(bytes(range(256)) * 50, 1400, 400, id="small"),
        # One message of 3 MiB: many DATA frames, beyond a stream's window, which its bytes
        # reopen as they come, before the message is whole.
        pytest.param(bytes(range(256)) * (3 << 12), 3, 2, id="larger-than-a-window"),
    ],
)
async def test_answers_beyond_the_windows_keep_coming(
    piece: bytes, calls: int, messages: int
) -> None:
    async def repeat(call: Call) -> None:
        await call.head()
        for _ in range(1 if call.path == SEND else messages):
            await call.send(piece)
        await call.end()

    server = GrpcServer(repeat)
    limits = {"max_response_bytes": 4 << 20, "max_event_bytes": 4 << 20}
    async with server.serve() as url, transport(**limits) as grpc:
        req = request(url)
        with anyio.fail_after(20):
            for _ in range(calls):
                assert (await grpc.unary(req, own(url), req.context)).content == piece
            conn = grpc.stream(request(url, STREAM), own(url), idle_timeout=5, open_timeout=5)
            await conn.open()
            got = [await conn.next_event() for _ in range(messages + 1)]
            await conn.aclose()
    assert got == [piece] * messages + [None]
    assert server.connections == 1


async def test_a_stream_ended_with_an_error_status_gives_it_last() -> None:
    async def fail(call: Call) -> None:
        await call.head()
        await call.send(b"m0")
        await call.end(9, "too%20late")

    server = GrpcServer(fail)
    async with server.serve() as url, transport() as grpc:
        conn = grpc.stream(request(url, STREAM), own(url), idle_timeout=5, open_timeout=5)
        await conn.open()
        first, last = await conn.next_event(), await conn.next_event()
        await conn.aclose()
    assert first == b"m0"
    assert isinstance(last, StreamStatus)
    assert (last.status, last.headers["grpc-message"]) == (9, "too%20late")
    assert type(last.status) is GrpcStatus


async def test_a_trailers_only_answer_to_a_stream_is_its_error_response() -> None:
    async def refuse(call: Call) -> None:
        await call.trailers_only(12)

    server = GrpcServer(refuse)
    async with server.serve() as url, transport() as grpc:
        conn = grpc.stream(request(url, STREAM), own(url), idle_timeout=5, open_timeout=5)
        await conn.open()
        assert conn.error_response is not None
        assert conn.error_response.status == 12
        assert await conn.next_event() is None


async def test_a_stream_left_early_is_reset_and_the_connection_stays() -> None:
    async def endless(call: Call) -> None:
        if call.path == SEND:
            return await echo(call)
        await call.head()
        await call.send(b"m0")
        await call.until_reset()

    server = GrpcServer(endless)
    async with server.serve() as url, transport() as grpc:
        conn = grpc.stream(request(url, STREAM), own(url), idle_timeout=5, open_timeout=5)
        await conn.open()
        assert await conn.next_event() == b"m0"
        await conn.aclose()
        assert await server.calls[0].until_reset() == 8  # CANCEL
        req = request(url)
        reply = await grpc.unary(req, own(url), req.context)
    assert reply.content == b"olleh"
    assert server.connections == 1


async def test_a_cancelled_call_resets_its_stream() -> None:
    async def never(call: Call) -> None:
        await call.until_reset()

    server = GrpcServer(never)
    async with server.serve() as url, transport() as grpc:
        req = request(url)
        with anyio.move_on_after(0.2):
            await grpc.unary(req, own(url), req.context)
        assert await server.calls[0].until_reset() == 8


@on_mock_clock()
async def test_an_idle_stream_ends_at_the_idle_limit() -> None:
    async def quiet(call: Call) -> None:
        await call.head()
        await call.send(b"m0")
        await call.until_reset(within=60)

    server = GrpcServer(quiet)
    async with server.serve() as url, transport() as grpc:
        conn = grpc.stream(request(url, STREAM), own(url), idle_timeout=3, open_timeout=5)
        await conn.open()
        assert await conn.next_event() == b"m0"
        started = anyio.current_time()
        with pytest.raises(A2ATimeoutError) as info:
            await conn.next_event()
        assert anyio.current_time() - started == pytest.approx(3)
        await conn.aclose()
        assert await server.calls[0].until_reset() == 8
    assert info.value.timeout == "stream-idle"


@on_mock_clock()
async def test_the_idle_limit_starts_over_with_each_piece_of_a_message() -> None:
    async def slow(call: Call) -> None:
        await call.head()
        whole = framed(b"x" * 30)
        for n in range(3):  # one message in three pieces, 2 s apart: 4 s in all
            if n:
                await anyio.sleep(2)
            await call.raw(whole[n * 12 : (n + 1) * 12])
        await call.end()

    server = GrpcServer(slow)
    async with server.serve() as url, transport() as grpc:
        conn = grpc.stream(request(url, STREAM), own(url), idle_timeout=3, open_timeout=5)
        await conn.open()
        started = anyio.current_time()
        assert await conn.next_event() == b"x" * 30
        assert anyio.current_time() - started == pytest.approx(4)
        assert await conn.next_event() is None
        await conn.aclose()


@on_mock_clock()
async def test_a_stream_without_its_head_ends_at_the_open_limit_as_over_http() -> None:
    async def silent(call: Call) -> None:
        await call.until_reset(within=60)

    server = GrpcServer(silent)
    async with server.serve() as url, transport() as grpc:
        conn = grpc.stream(request(url, STREAM), own(url), idle_timeout=None, open_timeout=2)
        started = anyio.current_time()
        with pytest.raises(A2ATimeoutError) as info:
            await conn.open()
        assert anyio.current_time() - started == pytest.approx(2)
    assert info.value.timeout == "stream-open"
    assert (
        info.value.message == f"stream open timeout: no whole answer from {url}{STREAM} within 2s"
    )


def counted_tokens() -> tuple[CallableAuth, list[str]]:
    """A scheme that gives a new token at each request, and renews after a refusal."""
    given: list[str] = []

    def token() -> str:
        given.append(f"Bearer t{len(given) + 1}")
        return given[-1]

    return CallableAuth(token), given


@pytest.mark.parametrize("stream", [False, True], ids=["unary", "stream"])
async def test_an_unauthenticated_call_is_sent_once_more_with_renewed_credentials(
    stream: bool,
) -> None:
    async def second_token_only(call: Call) -> None:
        if call.headers.get("authorization") != "Bearer t2":
            await call.trailers_only(16, "who%20are%20you")
            return
        await echo(call)

    auth, given = counted_tokens()
    server = GrpcServer(second_token_only)
    async with server.serve() as url, transport() as grpc:
        req = request(url, STREAM if stream else SEND)
        if stream:
            conn = grpc.stream(req, own(url, auth=auth), idle_timeout=5, open_timeout=5)
            await conn.open()
            assert (conn.error_response, await conn.next_event()) == (None, b"olleh")
            await conn.aclose()
        else:
            reply = await grpc.unary(req, own(url, auth=auth), req.context)
            assert (reply.status, reply.content) == (0, b"olleh")
    assert given == ["Bearer t1", "Bearer t2"]


async def test_credentials_refused_again_are_renewed_once_only() -> None:
    async def never(call: Call) -> None:
        await call.trailers_only(16)

    auth, given = counted_tokens()
    server = GrpcServer(never)
    async with server.serve() as url, transport() as grpc:
        req = request(url)
        reply = await grpc.unary(req, own(url, auth=auth), req.context)
    assert (reply.status, len(given), len(server.calls)) == (16, 2, 2)


async def test_a_refused_connection_is_a_connection_error_never_sent() -> None:
    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    url = f"http://127.0.0.1:{listener.extra(anyio.abc.SocketAttribute.local_port)}"
    await listener.aclose()
    async with transport() as grpc:
        req = request(url)
        with pytest.raises(A2AConnectionError) as info:
            await grpc.unary(req, own(url), req.context)
    assert info.value.request_sent is False
    assert info.value.message.startswith(f"cannot connect to {url}{SEND}")


# -- TLS -------------------------------------------------------------------------------------


def _certificate(tmp: Path) -> tuple[Path, Path]:
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(days=1))
        .not_valid_after(now + datetime.timedelta(days=1))
        .add_extension(
            x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
            critical=False,
        )
        .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
        .sign(key, hashes.SHA256())
    )
    cert_path, key_path = tmp / "cert.pem", tmp / "key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return cert_path, key_path


@asynccontextmanager
async def tls_server(
    server: GrpcServer, tmp: Path, alpn: list[str], *, client_cert: bool = False
) -> AsyncIterator[str]:
    cert, key = _certificate(tmp)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)
    context.set_alpn_protocols(alpn)
    if client_cert:  # the client must show a certificate of this CA (its own, here)
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cert)
    listener = TLSListener(
        await anyio.create_tcp_listener(local_host="127.0.0.1"), context, standard_compatible=False
    )
    port = listener.listener.extra(anyio.abc.SocketAttribute.local_port)
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, server._handle)
        try:
            yield f"https://127.0.0.1:{port}"
        finally:
            group.cancel_scope.cancel()


async def test_tls_with_alpn_h2_and_the_clients_verify(tmp_path: Path) -> None:
    server = GrpcServer(echo)
    async with tls_server(server, tmp_path, ["h2"]) as url:
        async with transport(verify=str(tmp_path / "cert.pem")) as grpc:
            req = request(url)
            reply = await grpc.unary(req, own(url), req.context)
        assert reply.content == b"olleh"
        async with transport() as grpc:  # the system's roots do not know it
            with pytest.raises(A2AConnectionError) as info:
                await grpc.unary(req, own(url), req.context)
        assert "TLS failed" in info.value.message
        assert info.value.request_sent is False


async def test_a_tls_server_without_h2_is_refused(tmp_path: Path) -> None:
    server = GrpcServer(echo)
    verify = str(tmp_path / "cert.pem")
    async with tls_server(server, tmp_path, ["http/1.1"]) as url, transport(verify=verify) as grpc:
        req = request(url)
        with pytest.raises(A2AConnectionError) as info:
            await grpc.unary(req, own(url), req.context)
    assert "does not speak HTTP/2 over TLS (ALPN: None)" in info.value.message
    assert server.calls == []


async def test_a_client_certificate_as_the_client_gives_it(tmp_path: Path) -> None:
    server = GrpcServer(echo)
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    async with tls_server(server, tmp_path, ["h2"], client_cert=True) as url:
        req = request(url)
        mine = MutualTLS(str(cert), str(key))
        async with transport(verify=str(cert), client_cert=mine) as grpc:
            assert (await grpc.unary(req, own(url), req.context)).content == b"olleh"
        async with transport(verify=str(cert)) as grpc:  # no certificate: refused
            with pytest.raises(A2AConnectionError):
                await grpc.unary(req, own(url), req.context)
