"""A blocking send answered before its task is done is followed up: re-attached to when the
agent streams, polled otherwise, within the call's timeout; ``wait()``, ``AgentPool.send``
and the sync facade take the same path. On virtual clocks, against the testing kit's agent
answering every send at once (as fasta2a does)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2ATimeoutError,
    AgentPool,
    Message,
    StreamEvent,
    Task,
    TaskNotFoundError,
    TaskState,
)
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, reply, status

from ._support import kit_client, on_mock_clock

pytestmark = pytest.mark.anyio


def slow_agent(*, streaming: bool = True, dialect: Any = "1.0", **options: Any) -> FakeAgent:
    """Answers every send at once; its task works for 10 s, then completes with an artifact
    (``takes`` in the message metadata changes how long)."""
    agent = FakeAgent(
        dialect=dialect, streaming=streaming, answers_at_once=True, push_notifications=False,
        **options,
    )  # fmt: skip

    @agent.skill("slow")
    async def slow(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working", "on it")
        await anyio.sleep(float(ctx.metadata.get("takes", 10)))
        yield artifact(f"done: {ctx.text}", name="out")
        yield status("completed")

    return agent


def ops(agent: FakeAgent) -> list[str | None]:
    return [r.op for r in agent.requests if r.op != "card"]


@on_mock_clock()
@pytest.mark.parametrize(("streaming", "follow_op"), [(True, "subscribe"), (False, "get")])
async def test_a_blocking_send_answered_at_once_is_followed_to_its_end(
    streaming: bool, follow_op: str
) -> None:
    agent = slow_agent(streaming=streaming)
    async with kit_client(agent, timeout=60) as client:
        start = anyio.current_time()
        done = await client.send_message("hi")
        took = anyio.current_time() - start
    assert isinstance(done, Task)
    assert done.status.state is TaskState.COMPLETED
    assert done.artifacts[0].text == "done: hi"
    assert 10 <= took < 13
    seen = ops(agent)
    assert seen[0] == "send"
    assert set(seen[1:]) == {follow_op}
    if not streaming:
        assert 4 <= len(seen) - 1 <= 12  # polls at 0.2 s growing by half up to 2 s


@on_mock_clock()
async def test_not_blocking_returns_at_once() -> None:
    agent = slow_agent()
    async with kit_client(agent) as client:
        start = anyio.current_time()
        task = await client.send_message("hi", blocking=False)
        assert anyio.current_time() == start
    assert isinstance(task, Task)
    assert not task.status.state.is_final
    assert ops(agent) == ["send"]


@on_mock_clock()
@pytest.mark.parametrize("streaming", [True, False])
async def test_the_follow_up_ends_at_the_calls_timeout_with_the_task(streaming: bool) -> None:
    agent = slow_agent(streaming=streaming)
    async with kit_client(agent, timeout=60) as client:
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError) as info:
            await client.send_message("hi", timeout=5, metadata={"takes": 100})
        took = anyio.current_time() - start
        # the client's timeout bounds the whole call unless the call says otherwise
        with pytest.raises(A2ATimeoutError):
            await client.send_message("hi", metadata={"takes": 100})
        assert anyio.current_time() - start - took == pytest.approx(60, abs=0.01)
    err = info.value
    assert took == pytest.approx(5, abs=0.01)
    assert err.timeout == "deadline"
    assert err.operation == "send"
    assert err.agent == agent.url + agent.rpc_path  # the endpoint, not the card's URL
    [task] = err.events
    assert isinstance(task, Task)
    assert task.status.state is TaskState.WORKING
    assert agent.get_task(task.id).state is TaskState.WORKING


@on_mock_clock()
async def test_a_refused_re_attach_is_polled() -> None:
    agent = slow_agent()
    agent.fault("subscribe", error=-32004)  # UnsupportedOperation
    async with kit_client(agent) as client:
        done = await client.send_message("hi")
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    seen = ops(agent)
    assert seen[:2] == ["send", "subscribe"]
    assert set(seen[2:]) == {"get"}


@on_mock_clock()
async def test_the_follow_up_shows_its_events_to_on_event() -> None:
    agent = slow_agent(streaming=False)  # on_event streams when the agent can: this one cannot
    seen: list[StreamEvent] = []
    async with kit_client(agent) as client:
        done = await client.send_message("hi", on_event=seen.append)
    assert isinstance(done, Task)
    assert [type(e) for e in seen] == [Task, Task]
    assert isinstance(seen[-1], Task) and seen[-1].status.state is TaskState.COMPLETED


@on_mock_clock()
@pytest.mark.parametrize("dialect", ["1.0", "0.3", "legacy"])
async def test_wait_takes_the_same_path(dialect: Any) -> None:
    agent = slow_agent(dialect=dialect)
    async with kit_client(agent) as client:
        task = await client.send_message("hi", blocking=False)
        assert isinstance(task, Task)
        agent.clear_requests()
        done = await client.wait(task.id)
        assert done.status.state is TaskState.COMPLETED
        assert ops(agent) == ["get", "subscribe"]
        again = await client.wait(task.id)  # final already: one look
        assert again.status.state is TaskState.COMPLETED
        with pytest.raises(TaskNotFoundError):
            await client.wait("no-such-task")


@on_mock_clock()
async def test_wait_with_intervals_and_timeout_polls_an_agent_that_does_not_stream() -> None:
    agent = slow_agent(streaming=False)
    async with kit_client(agent) as client:
        task = await client.send_message("hi", blocking=False, metadata={"takes": 3600})
        assert isinstance(task, Task)
        agent.clear_requests()
        with pytest.raises(A2ATimeoutError) as info:
            await client.wait(task.id, timeout=600, poll_interval=60, max_interval=120)
    assert info.value.operation == "wait"
    assert isinstance(info.value.events[0], Task)
    assert 5 <= len(ops(agent)) <= 8  # 0, 60, 150, 270, 390, 510: no faster than asked


@on_mock_clock()
async def test_the_pool_follows_up_too() -> None:
    agent = slow_agent()
    async with (
        httpx.AsyncClient(transport=agent.transport()) as http,
        AgentPool(http_client=http) as pool,
    ):
        assert await pool.send(agent.url, text="hi", timeout=60) == {"text": "done: hi"}
        with pytest.raises(A2ATimeoutError):
            await pool.send(agent.url, text="hi", timeout=5, metadata={"takes": 100})


@on_mock_clock()
async def test_a_message_reply_is_not_followed_up() -> None:
    agent = FakeAgent(answers_at_once=True)

    @agent.skill("reply")
    async def reply_at_once(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield reply("pong")

    async with kit_client(agent) as client:
        result = await client.send_message("ping")
    assert isinstance(result, Message)
    assert ops(agent) == ["send"]


@on_mock_clock()
async def test_a_silent_task_is_looked_at_again_at_each_idle_limit() -> None:
    agent = slow_agent()
    async with kit_client(agent, idle_timeout=300) as client:
        task = await client.send_message("hi", blocking=False, metadata={"takes": 700})
        assert isinstance(task, Task)
        agent.clear_requests()
        done = await client.wait(task.id)
    assert done.status.state is TaskState.COMPLETED
    assert ops(agent) == ["get", "subscribe", "subscribe", "subscribe"]
