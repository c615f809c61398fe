"""Structured concurrency against real a2a-sdk servers: parallel streams, fan-out, deadlines,
cancellation, and what the connection pools and servers see afterwards. Both backends."""

from __future__ import annotations

import anyio
import anyio.lowlevel
import httpx
import pytest

from a2a_anyio import (
    A2ATimeoutError,
    AgentPool,
    MessageStream,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotFoundError,
    TaskState,
    TaskStatusUpdateEvent,
    fan_out,
    fan_out_stream,
    merge_streams,
)
from a2a_anyio._http import OwnClient

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


def active_connections(pool: AgentPool) -> int:
    """Requests of the pool's httpx client whose responses are still open."""
    client = pool.http_client
    assert isinstance(client, OwnClient)
    return sum(sum(shards) for shards in client.origins.active().values())


async def server_connections(url: str) -> int:
    """Connections the server holds open, not counting the one asking."""
    async with httpx.AsyncClient() as probe:
        response = await probe.get(url + "/debug/connections")
        return int(response.json()["open"]) - 1


async def until_server_has(url: str, count: int) -> None:
    """Wait (bounded: 5 s) until the server holds ``count`` connections besides the probe."""
    with anyio.fail_after(5):
        while await server_connections(url) != count:
            await anyio.sleep(0.02)


async def test_twenty_streams_in_parallel(strict_server: str, compat_server: str) -> None:
    async with AgentPool() as pool:
        streams: dict[str, MessageStream] = {}
        for i in range(10):
            streams[f"strict-{i}"] = pool.client(strict_server).stream_message(f"stream {i}")
            streams[f"compat-{i}"] = pool.client(compat_server).stream_message(f"stream {i}")
        seen: dict[str, list[object]] = {name: [] for name in streams}
        start = anyio.current_time()
        async with merge_streams(streams, timeout=20) as merged:
            async for agent, event in merged:
                seen[agent].append(event)
        elapsed = anyio.current_time() - start
        for agent, events in seen.items():
            assert isinstance(events[0], Task), agent
            chunks = [e.artifact.text for e in events if isinstance(e, TaskArtifactUpdateEvent)]
            assert chunks == ["part 1", " part 2", " part 3"], agent
            last = events[-1]
            assert isinstance(last, TaskStatusUpdateEvent), agent
            assert last.status.state is TaskState.COMPLETED
            task = streams[agent].task
            assert task is not None and task.text == "part 1 part 2 part 3"
        # one stream takes about 0.25 s; twenty one after another would take 5 s
        assert elapsed < 3.0
        assert active_connections(pool) == 0


async def test_one_failing_stream_does_not_stop_the_others(strict_server: str) -> None:
    async with AgentPool() as pool:
        client = pool.client(strict_server)
        streams = {"bad": client.subscribe("no-such-task"), "good": client.stream_message("stream")}
        items = []
        async with merge_streams(streams) as merged:
            async for item in merged:
                items.append(item)
        errors = [i for i in items if i.error is not None]
        assert [e.agent for e in errors] == ["bad"]
        assert isinstance(errors[0].error, TaskNotFoundError)
        good = [i.event for i in items if i.agent == "good"]
        assert isinstance(good[-1], TaskStatusUpdateEvent) and good[-1].final


async def test_fail_fast_raises_the_first_error(strict_server: str, slow_server: str) -> None:
    async with AgentPool() as pool:
        streams = {
            "bad": pool.client(strict_server).subscribe("no-such-task"),
            "slow": pool.client(slow_server).stream_message("stream"),
        }
        with pytest.raises(TaskNotFoundError):
            async with merge_streams(streams, fail_fast=True) as merged:
                async for _ in merged:
                    pass
        assert active_connections(pool) == 0
    await until_server_has(slow_server, 0)


async def test_slow_agent_cut_by_the_deadline(
    strict_server: str, compat_server: str, slow_server: str
) -> None:
    start = anyio.current_time()
    results = await fan_out([strict_server, compat_server, slow_server], "hello", timeout=1.5)
    elapsed = anyio.current_time() - start
    assert [r.agent for r in results] == [strict_server, compat_server, slow_server]
    for fast in results[:2]:
        assert fast.ok and not fast.cancelled
        assert isinstance(fast.value, Task) and fast.value.text == "echo: hello"
        assert fast.elapsed < 1.5
    slow = results[2]
    assert slow.cancelled and slow.value is None
    assert isinstance(slow.error, A2ATimeoutError) and slow.error.timeout == "deadline"
    assert 1.4 < elapsed < 4.0  # the deadline, not the slow agent's 30 s
    await until_server_has(slow_server, 0)


async def test_cancelling_the_outer_scope_leaves_nothing_behind(slow_server: str) -> None:
    before = len(anyio.get_running_tasks())
    async with AgentPool() as pool:
        with anyio.move_on_after(0.5) as scope:
            await pool.fan_out([slow_server] * 3, "hello")
        assert scope.cancelled_caught
        assert active_connections(pool) == 0
        assert len(anyio.get_running_tasks()) == before
    await until_server_has(slow_server, 0)


async def test_first_returns_after_the_fastest(strict_server: str, slow_server: str) -> None:
    async with AgentPool() as pool:
        targets = [slow_server, slow_server, strict_server, slow_server, slow_server]
        start = anyio.current_time()
        with anyio.fail_after(10):
            results = await pool.fan_out(targets, "hello", first=1)
        assert anyio.current_time() - start < 3.0
        assert [r.ok for r in results] == [False, False, True, False, False]
        assert all(r.cancelled and r.error is None for i, r in enumerate(results) if i != 2)
        assert active_connections(pool) == 0
        # the slow agent's side: its four requests are closed
        await until_server_has(slow_server, 0)


async def test_leaving_a_stream_block_releases_the_connection(slow_server: str) -> None:
    async with AgentPool() as pool:
        stream = pool.client(slow_server).stream_message("stream")
        with anyio.move_on_after(0.5) as scope:
            async with stream:  # the slow agent sends no event (not even headers) for 30 s
                async for _ in stream:
                    pass
        assert scope.cancelled_caught
        assert stream.task is None and not stream.finished
        assert active_connections(pool) == 0
        await until_server_has(slow_server, 0)


async def test_wait_and_on_event(strict_server: str) -> None:
    async with AgentPool() as pool:
        client = pool.client(strict_server)
        started = await client.send_message("slow", blocking=False)
        assert isinstance(started, Task)
        with pytest.raises(A2ATimeoutError) as info:
            await client.wait(started.id, timeout=0.3)
        assert info.value.timeout == "deadline"

        async with anyio.create_task_group() as group:

            async def cancel_soon() -> None:
                await anyio.sleep(0.2)
                await client.cancel_task(started.id)

            group.start_soon(cancel_soon)
            done = await client.wait(started.id, timeout=5, poll_interval=0.05)
        assert done.status.state is TaskState.CANCELED

        seen: list[object] = []
        result = await client.send_message("stream", on_event=seen.append)
        assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
        assert len(seen) >= 5 and seen[-1] is not result

        async def record(event: object) -> None:
            await anyio.lowlevel.checkpoint()
            seen.append(event)

        seen.clear()
        await client.send_message("hello", on_event=record)
        assert isinstance(seen[-1], TaskStatusUpdateEvent)
        assert seen[-1].status.state is TaskState.COMPLETED


async def test_cancel_scope_mid_stream_releases_the_connection(strict_server: str) -> None:
    async with AgentPool() as pool:
        client = pool.client(strict_server)
        received: list[object] = []
        with anyio.move_on_after(1.0) as scope:
            async with client.stream_message("slow stream") as stream:
                async for event in stream:  # a working task, then nothing for 30 s
                    received.append(event)
        assert scope.cancelled_caught
        assert received and isinstance(received[0], Task)
        assert stream.task is not None and stream.task.status.state is TaskState.WORKING
        assert active_connections(pool) == 0
        await until_server_has(strict_server, 0)
        await client.cancel_task(stream.task.id)


async def test_fan_out_stream_over_urls(strict_server: str, compat_server: str) -> None:
    finals: dict[str, TaskState] = {}
    async with fan_out_stream([strict_server, compat_server], "stream", timeout=10) as merged:
        async for agent, event in merged:
            if isinstance(event, TaskStatusUpdateEvent) and event.final:
                finals[agent] = event.status.state
    assert finals == {strict_server: TaskState.COMPLETED, compat_server: TaskState.COMPLETED}
    await until_server_has(strict_server, 0)
