"""A gRPC server that sends what an attacker (or a broken peer) would: each answer is a typed
error within its limit, with nothing left open. On the virtual clocks, over sockets of the
test's own loop (``tests/unit/_grpc_server``)."""

from __future__ import annotations

import gzip
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from a2a_anyio import (
    A2AAuthError,
    A2AClientError,
    A2AConnectionError,
    A2AHTTPError,
    A2AProtocolError,
)
from a2a_anyio._grpc_transport import GrpcTransport

from ..unit._grpc_server import Call, GrpcServer, framed
from ..unit._support import on_mock_clock
from ..unit.test_grpc_transport import SEND, STREAM, own, request

pytestmark = [pytest.mark.anyio, on_mock_clock()]

LIMIT = 4096


@asynccontextmanager
async def served(
    handler: Callable[[Call], Awaitable[object]],
) -> AsyncIterator[tuple[str, GrpcTransport, GrpcServer]]:
    from a2a_anyio._http import HttpTransport

    server = GrpcServer(handler)
    async with server.serve() as url:
        http = HttpTransport(max_response_bytes=LIMIT, max_event_bytes=LIMIT)
        grpc = GrpcTransport(http, connect_timeout=5)
        try:
            yield url, grpc, server
        finally:
            await grpc.aclose()
            await http.aclose()
            await server.until_no_connection()  # nothing left open


async def call_fails(
    handler: Callable[[Call], Awaitable[object]], *, stream: bool = False
) -> A2AClientError:
    """The error a call answered by ``handler`` raises, within a second of virtual time."""
    async with served(handler) as (url, grpc, _):
        started = anyio.current_time()
        with pytest.raises(A2AClientError) as info:
            req = request(url, STREAM if stream else SEND)
            if stream:
                conn = grpc.stream(req, own(url), idle_timeout=30, open_timeout=30)
                try:
                    await conn.open()
                    while await conn.next_event() is not None:
                        pass
                finally:
                    await conn.aclose()
            else:
                await grpc.unary(req, own(url), req.context)
        assert anyio.current_time() - started < 1
    return info.value


def answering(*steps: Callable[[Call], Awaitable[object]]) -> Callable[[Call], Awaitable[object]]:
    async def handler(call: Call) -> None:
        for step in steps:
            await step(call)
        await call.until_reset(within=60)

    return handler


@pytest.mark.parametrize("stream", [False, True], ids=["unary", "stream"])
async def test_a_bad_length_prefix(stream: bool) -> None:
    error = await call_fails(
        answering(Call.head, lambda c: c.raw(b"\x80\x00\x00\x00\x02hi")), stream=stream
    )
    assert isinstance(error, A2AProtocolError)
    assert "a message with the flags 0x80 (a bad length prefix)" in error.message


@pytest.mark.parametrize("stream", [False, True], ids=["unary", "stream"])
async def test_a_message_over_the_limit_is_refused_by_its_prefix(stream: bool) -> None:
    # Only the prefix and a few bytes come: the client does not wait for the rest.
    step = lambda c: c.raw(framed(b"x" * 10, length=LIMIT + 1))  # noqa: E731
    error = await call_fails(answering(Call.head, step), stream=stream)
    assert isinstance(error, A2AProtocolError)
    assert error.limit == LIMIT
    assert f"of {LIMIT + 1} bytes is over the limit of {LIMIT}" in error.message


async def test_a_message_in_an_unknown_compression() -> None:
    head = lambda c: c.head(**{"grpc-encoding": "snappy"})  # noqa: E731
    error = await call_fails(answering(head, lambda c: c.send(b"zz", flag=1)))
    assert isinstance(error, A2AProtocolError)
    assert "compressed with 'snappy', which this client does not decode" in error.message


async def test_a_compressed_message_without_an_encoding() -> None:
    error = await call_fails(answering(Call.head, lambda c: c.send(b"zz", flag=1)))
    assert isinstance(error, A2AProtocolError)
    assert "compressed with ''" in error.message


async def test_a_gzip_message_is_decoded_within_the_limit() -> None:
    async def small(call: Call) -> None:
        await call.head(**{"grpc-encoding": "gzip"})
        await call.send(gzip.compress(b"hello"), flag=1)
        await call.end()

    async with served(small) as (url, grpc, _):
        req = request(url)
        reply = await grpc.unary(req, own(url), req.context)
    assert reply.content == b"hello"
    bomb = gzip.compress(b"\0" * (LIMIT * 100))
    head = lambda c: c.head(**{"grpc-encoding": "gzip"})  # noqa: E731
    error = await call_fails(answering(head, lambda c: c.send(bomb, flag=1)))
    assert isinstance(error, A2AProtocolError)
    assert error.limit == LIMIT
    assert "over the limit of 4096 bytes once decoded" in error.message


@pytest.mark.parametrize("stream", [False, True], ids=["unary", "stream"])
async def test_an_answer_without_grpc_status_was_cut(stream: bool) -> None:
    async def cut(call: Call) -> None:
        await call.head()
        await call.send(b"m0")
        await call.end_stream()

    error = await call_fails(cut, stream=stream)
    assert type(error) is A2AConnectionError
    assert "ended without a status: it was cut" in error.message


async def test_trailers_without_grpc_status_were_cut() -> None:
    async def cut(call: Call) -> None:
        await call.head()
        await call.send(b"m0")
        await call.conn.send_headers(call.stream_id, [("x-other", "1")], end=True)

    error = await call_fails(cut)
    assert type(error) is A2AConnectionError


async def test_a_bad_grpc_status() -> None:
    async def bad(call: Call) -> None:
        await call.head()
        await call.conn.send_headers(call.stream_id, [("grpc-status", "99999")], end=True)

    error = await call_fails(bad)
    assert isinstance(error, A2AProtocolError)
    assert "grpc-status '99999' is no status code" in error.message


@pytest.mark.parametrize("stream", [False, True], ids=["unary", "stream"])
async def test_a_reset_mid_stream(stream: bool) -> None:
    async def reset(call: Call) -> None:
        await call.head()
        await call.send(b"m0")
        await call.reset_stream(2)

    error = await call_fails(reset, stream=stream)
    assert type(error) is A2AConnectionError
    assert error.request_sent is True
    assert "the server reset the stream (INTERNAL_ERROR)" in error.message


async def test_a_refused_stream_was_never_processed() -> None:
    error = await call_fails(lambda call: call.reset_stream(7))
    assert isinstance(error, A2AConnectionError)
    assert error.request_sent is False


async def test_a_dropped_connection() -> None:
    error = await call_fails(answering(Call.head, lambda c: c.send(b"m0"), Call.drop), stream=True)
    assert type(error) is A2AConnectionError
    assert "the connection was closed" in error.message


async def test_goaway_refuses_the_calls_above_its_last_stream_and_a_new_one_is_made() -> None:
    calls: list[Call] = []
    both = anyio.Event()

    async def handler(call: Call) -> None:
        if len(server.calls) > 2:
            await call.head()
            await call.send(b"new")
            await call.end()
            return
        calls.append(call)
        if len(calls) == 2:
            both.set()
            first = min(calls, key=lambda c: c.stream_id)
            await call.goaway(first.stream_id)
        await call.until_reset(within=60)

    errors: list[A2AConnectionError] = []
    async with served(handler) as (url, grpc, server):
        req = request(url)

        async def one() -> None:
            with pytest.raises(A2AConnectionError) as info:
                await grpc.unary(req, own(url), req.context)
            errors.append(info.value)

        async with anyio.create_task_group() as group:
            group.start_soon(one)
            group.start_soon(one)
        reply = await grpc.unary(req, own(url), req.context)
        assert reply.content == b"new"
        assert server.connections == 2
    sent = sorted(error.request_sent for error in errors)
    assert sent == [False, True]  # the call above the last stream id was not processed
    assert all("GOAWAY" in error.message for error in errors)


async def test_a_server_that_never_answers_is_left_at_the_callers_deadline() -> None:
    async with served(lambda call: call.until_reset(within=120)) as (url, grpc, server):
        req = request(url)
        with anyio.move_on_after(30):
            await grpc.unary(req, own(url), req.context)
        assert anyio.current_time() == pytest.approx(30)
        assert await server.calls[0].until_reset() == 8  # the server hears of it: CANCEL
        assert server.calls[0].headers["grpc-timeout"] == "30S"


@pytest.mark.parametrize(
    ("status", "expected"), [(503, A2AHTTPError), (401, A2AAuthError)], ids=["503", "401"]
)
async def test_an_answer_that_is_no_grpc(status: int, expected: type[Exception]) -> None:
    async def html(call: Call) -> None:
        await call.conn.send_headers(
            call.stream_id, [(":status", str(status)), ("content-type", "text/html")], end=True
        )

    error = await call_fails(html)
    assert type(error) is expected
    assert isinstance(error, A2AHTTPError)
    assert error.status_code == status
    assert "a text/html answer, not gRPC" in error.body


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ([("content-type", "application/grpc")], A2AHTTPError),  # no :status
        ([(":status", "200"), ("Content-Type", "application/grpc")], A2AProtocolError),
        ([(":status", "200"), (":status", "200"), ("content-type", "application/grpc")],
         A2AHTTPError),
        ([("content-type", "application/grpc"), (":status", "200")], None),  # out of order
    ],
    ids=["no-status", "upper-case", "two-statuses", "pseudo-last"],
)  # fmt: skip
async def test_headers_that_break_http2s_rules(
    headers: list[tuple[str, str]], expected: type[Exception] | None
) -> None:
    """What the transport reads it checks itself: h2 does not check every header."""

    async def broken(call: Call) -> None:
        await call.conn.send_headers(call.stream_id, headers)
        await call.send(b"m")
        await call.end()

    if expected is None:
        async with served(broken) as (url, grpc, _):
            req = request(url)
            assert (await grpc.unary(req, own(url), req.context)).content == b"m"
        return
    error = await call_fails(broken)
    assert type(error) is expected


async def test_a_server_that_speaks_no_http2() -> None:
    async def http1(stream: Any) -> None:
        await stream.receive()
        await stream.send(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n")
        await stream.aclose()

    listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
    port = listener.extra(anyio.abc.SocketAttribute.local_port)
    from a2a_anyio._http import HttpTransport

    http = HttpTransport()
    async with listener, anyio.create_task_group() as group:
        group.start_soon(listener.serve, http1)
        url = f"http://127.0.0.1:{port}"
        grpc = GrpcTransport(http)
        req = request(url)
        with pytest.raises(A2AConnectionError) as info:
            await grpc.unary(req, own(url), req.context)
        await grpc.aclose()
        await http.aclose()
        group.cancel_scope.cancel()
    assert info.value.request_sent is False
    assert "the server answers in HTTP/1.x, not HTTP/2" in info.value.message


async def test_a_header_list_past_the_limit() -> None:
    async def huge(call: Call) -> None:
        await call.conn.send_headers(
            call.stream_id,
            [(":status", "200"), ("content-type", "application/grpc")]
            + [(f"x-pad-{n}", "p" * 1000) for n in range(100)],
        )
        await call.until_reset(within=60)

    error = await call_fails(huge)
    assert type(error) is A2AConnectionError
    assert "the server broke HTTP/2" in error.message


async def test_a_unary_answer_of_two_messages_or_none() -> None:
    async def two(call: Call) -> None:
        await call.head()
        await call.send(b"m0")
        await call.send(b"m1")
        await call.end()

    error = await call_fails(two)
    assert isinstance(error, A2AProtocolError)
    assert "the answer carried more than one message" in error.message
    error = await call_fails(lambda call: call.trailers_only(0))
    assert isinstance(error, A2AProtocolError)
    assert "the answer carried no message" in error.message
