"""The connections of an AgentPool (and of any client the library makes its httpx client for):
httpx's transports, each for one origin and at most ``SHARD_CONNECTIONS`` connections, another
for the requests past that, a cap on an origin's connections honoured over all of them, idle
ones kept for the transports used last, every one closed with the pool. Over sockets of the
test's own loop (``_raw_server``)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager

import anyio
import httpx
import pytest

from a2a_anyio import A2ATimeoutError, AgentPool, MessageStream, Task
from a2a_anyio import _http as http

from ..security._raw_server import Answer, RawServer, Request, jsonrpc, sse
from ._support import jump, on_mock_clock, v1_card

pytestmark = pytest.mark.anyio

JSON = {"Content-Type": "application/json"}
EVENTS = {"Content-Type": "text/event-stream"}
WORKING = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}
DONE = {**WORKING, "status": {"state": "TASK_STATE_COMPLETED"}}


def answer(request: Request) -> Answer:
    """An agent: its card, a completed task for a send, a stream held open after its first
    event."""
    if request.method == "GET":
        card = v1_card(f"http://{request.headers['host']}/rpc")
        return Answer([json.dumps(card).encode()], JSON)
    if json.loads(request.body)["method"] == "SendStreamingMessage":
        return Answer([sse(request, {"task": WORKING})], EVENTS, hold=True)
    return Answer([jsonrpc(request, {"task": DONE})], JSON)


@asynccontextmanager
async def agents(count: int) -> AsyncIterator[list[tuple[RawServer, str]]]:
    async with AsyncExitStack() as stack:
        out = []
        for _ in range(count):
            server = RawServer(answer)
            out.append((server, await stack.enter_async_context(server.serve())))
        yield out


def origin(url: str) -> tuple[str, str, int]:
    u = httpx.URL(url)
    assert u.port is not None
    return u.scheme, u.host, u.port


def active(pool: AgentPool) -> dict[tuple[str, str, int | None], list[int]]:
    """The requests open on each of the pool's transports, by origin."""
    client = pool.http_client
    assert isinstance(client, http.OwnClient)
    return client.origins.active()


async def opened(stream: MessageStream) -> MessageStream:
    """``stream`` entered, its first event read."""
    await stream.__aenter__()
    assert isinstance(await stream.__anext__(), Task)
    return stream


async def test_each_origin_has_a_transport_of_its_own_and_the_pool_closes_them_all() -> None:
    async with agents(3) as served, AgentPool() as pool:
        for _, url in served:
            assert isinstance(await pool.client(url).send_message("hi"), Task)
        assert active(pool) == {origin(url): [0] for _, url in served}
        assert all(server.open == 1 for server, _ in served)  # kept alive
        await pool.aclose()
        for server, _ in served:
            await server.until_no_connection()


def caps(pool: AgentPool) -> dict[tuple[str, str, int | None], list[int]]:
    """The connections each of the pool's transports may hold, by origin."""
    client = pool.http_client
    assert isinstance(client, http.OwnClient)
    return client.origins.caps()


async def test_no_transport_holds_more_than_its_share_of_an_origins_connections() -> None:
    async with agents(1) as [(server, url)], AgentPool() as pool:
        client = pool.client(url)
        await client.get_card()
        streams = [await opened(client.stream_message(f"s{i}")) for i in range(25)]
        share = http.SHARD_CONNECTIONS
        full, rest = divmod(25, share)
        assert active(pool) == {origin(url): [share] * full + [rest] * (rest > 0)}
        assert caps(pool) == {origin(url): [share] * (full + (rest > 0))}
        assert server.open == 25
        for stream in streams:
            await stream.aclose()
        await server.until_no_connection()  # streams closed early: their connections too


async def test_requests_past_a_share_go_to_another_transport_kept_when_they_end(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http, "SHARD_CONNECTIONS", 3)
    async with agents(1) as [(server, url)], AgentPool() as pool:
        client = pool.client(url)
        await client.get_card()
        streams = [await opened(client.stream_message(f"s{i}")) for i in range(5)]
        assert active(pool) == {origin(url): [3, 2]}
        for stream in streams[3:]:
            await stream.aclose()
        assert active(pool) == {origin(url): [3, 0]}
        streams.append(await opened(client.stream_message("one more")))
        assert active(pool) == {origin(url): [3, 1]}
        await streams[0].aclose()
        streams.append(await opened(client.stream_message("where there is room")))
        assert active(pool) == {origin(url): [2, 2]}
        for stream in streams:
            await stream.aclose()
        assert active(pool) == {origin(url): [0, 0]}
        await server.until_no_connection()


async def test_idle_transports_are_kept_for_those_used_last(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http, "MAX_IDLE_SHARDS", 2)
    async with agents(3) as served, AgentPool() as pool:
        for _, url in served:
            await pool.client(url).send_message("hi")
        (first, first_url), *later = served
        assert active(pool) == {origin(url): [0] for _, url in later}
        await first.until_no_connection()
        assert [server.open for server, _ in later] == [1, 1]
        await pool.client(first_url).send_message("again")  # a new connection
        assert first.open == 1


@on_mock_clock()
async def test_as_many_idle_transports_are_kept_as_were_in_use_until_they_expire(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A fan-out's agents go idle between their card and their send while the others run:
    # their connections are kept for the send (and the next fan-out), not opened again.
    monkeypatch.setattr(http, "MAX_IDLE_SHARDS", 1)
    async with agents(5) as served, AgentPool() as pool:
        streams = [await opened(pool.client(url).stream_message("s")) for _, url in served[:3]]
        for _, url in served[3:]:
            await pool.client(url).send_message("hi")
        assert [server.open for server, _ in served] == [1] * 5  # 4 in use at most
        for stream in streams:
            await stream.aclose()
        assert len(active(pool)) == 4  # as many idle as were in use at once
        jump(6)  # past httpx's keep-alive expiry (5 s): their connections are of no use
        await pool.client(served[0][1]).send_message("again")
        assert len(active(pool)) == 2  # a release closes two expired transports at most


@on_mock_clock()
async def test_a_connection_cap_holds_over_the_transports_of_an_origin(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(http, "SHARD_CONNECTIONS", 2)
    async with agents(1) as [(server, url)], AgentPool(max_connections=5) as pool:
        client = pool.client(url)
        await client.get_card()
        streams = [await opened(client.stream_message(f"s{i}")) for i in range(5)]
        assert caps(pool) == {origin(url): [2, 2, 1]}
        assert active(pool) == {origin(url): [2, 2, 1]}
        # A sixth request waits for one of the five connections, until its deadline.
        with pytest.raises(A2ATimeoutError) as info:
            await client.send_message("hi", timeout=1)
        assert info.value.timeout == "deadline"
        assert server.open == 5
        await streams[2].aclose()
        assert isinstance(await client.send_message("hi", timeout=1), Task)
        assert server.open <= 5
        assert caps(pool) == {origin(url): [2, 2, 1]}
        for stream in streams:
            await stream.aclose()


@on_mock_clock()
async def test_a_connection_cap_applies_to_each_origin() -> None:
    async with agents(2) as [(_, busy), (_, other)], AgentPool(max_connections=1) as pool:
        await pool.client(busy).get_card()
        held = await opened(pool.client(busy).stream_message("hold the one connection"))
        # Another agent is not kept waiting by this one's connections.
        assert isinstance(await pool.client(other).send_message("hi"), Task)
        # This one's cap holds: the send waits for the connection until its deadline.
        with pytest.raises(A2ATimeoutError) as info:
            await pool.client(busy).send_message("hi", timeout=1)
        assert info.value.timeout == "deadline"
        await held.aclose()
        assert isinstance(await pool.client(busy).send_message("hi", timeout=1), Task)


async def test_credentials_headers_and_event_hooks_apply_to_every_origin() -> None:
    seen: list[str] = []

    async def hook(request: httpx.Request) -> None:
        seen.append(str(request.url))

    async with (
        agents(2) as served,
        AgentPool(auth="Bearer s3cret", headers={"X-Team": "a"}) as pool,
    ):
        pool.http_client.event_hooks["request"].append(hook)
        for _, url in served:
            await pool.client(url).send_message("hi")
    for server, url in served:
        assert [r.method for r in server.requests] == ["GET", "POST"]
        for request in server.requests:
            assert request.headers["authorization"] == "Bearer s3cret"
            assert request.headers["x-team"] == "a"
        assert f"{url}/rpc" in seen


@on_mock_clock()
async def test_a_stream_cancelled_by_its_reader_releases_its_transport() -> None:
    async with agents(1) as [(server, url)], AgentPool() as pool:
        client = pool.client(url)
        await client.get_card()
        with anyio.move_on_after(0.1):
            async with client.stream_message("hold") as stream:
                async for _ in stream:
                    pass
        assert active(pool) == {origin(url): [0]}
        await server.until_no_connection()
