"""A2AClient against FakeAgent (v1.0 and v0.3 JSON-RPC), served and in-process."""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

import anyio
import pytest

from a2a_anyio import (
    AgentPool,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
)
from a2a_anyio.testing import FakeAgent, Fault, SkillContext, artifact, reply, status
from a2a_anyio.testing._skills import Emit

from ._helpers import Gate, client_for, send_task, wait_until

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["1.0", "0.3"])
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def make_agent(dialect: str, **kwargs: object) -> FakeAgent:
    agent = FakeAgent(dialect=dialect, **kwargs)  # type: ignore[arg-type]

    @agent.skill("report", description="Writes a report in two chunks")
    async def report(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working", "writing")
        yield artifact(f"report on {ctx.text}", name="report")
        yield artifact(" (continued)", append=True, last_chunk=True)

    @agent.skill("hello")
    async def hello(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield reply(f"hello {ctx.text}")

    @agent.skill("size")
    async def size(ctx: SkillContext) -> AsyncGenerator[Emit, Message | None]:
        answer = yield status("input-required", "which size?")
        assert answer is not None
        yield artifact(f"resized to {answer.text}")

    return agent


async def test_send_stream_get(dialect: str, mode: str) -> None:
    agent = make_agent(dialect)
    async with client_for(agent, mode) as client:
        card = await client.get_card()
        task = await send_task(client, "cats")
        hello = await client.send_message("you", metadata={"skillId": "hello"})
        events = []
        async with client.stream_message("dogs") as stream:
            async for event in stream:
                events.append(event)
        streamed = stream.task
        got = await client.get_task(task.id)
    assert [s.id for s in card.skills] == ["report", "hello", "size"]
    assert card.skills[0].description == "Writes a report in two chunks"
    assert isinstance(task, Task)
    assert (task.state, task.text) == (TaskState.COMPLETED, "report on cats (continued)")
    assert isinstance(hello, Message)
    assert hello.text == "hello you"
    assert [type(e).__name__ for e in events] == [
        "Task",
        "TaskStatusUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.final
    assert isinstance(events[3], TaskArtifactUpdateEvent)
    assert (events[3].append, events[3].last_chunk) == (True, True)
    assert streamed is not None
    assert streamed.text == "report on dogs (continued)"
    assert got.id == task.id
    assert got.history[0].text == "cats"
    assert [r.op for r in agent.requests] == ["card", "send", "send", "stream", "get"]
    assert agent.requests[1].headers.get("a2a-version") == dialect


async def test_input_required_continuation(dialect: str, mode: str) -> None:
    agent = make_agent(dialect)
    async with client_for(agent, mode) as client:
        asked = await client.send_message("photo", metadata={"skillId": "size"})
        assert isinstance(asked, Task)
        assert asked.state is TaskState.INPUT_REQUIRED
        assert asked.status.message is not None
        assert asked.status.message.text == "which size?"
        done = await client.send_message("800x600", task_id=asked.id, context_id=asked.context_id)
    assert isinstance(done, Task)
    assert (done.state, done.text) == (TaskState.COMPLETED, "resized to 800x600")


async def test_non_blocking_subscribe_cancel(dialect: str, mode: str) -> None:
    gate = Gate()
    agent = FakeAgent(dialect=dialect, skills={"gate": gate.skill})  # type: ignore[arg-type]
    async with client_for(agent, mode) as client:
        task = await send_task(client, "slow", blocking=False)
        assert task.state is TaskState.SUBMITTED
        await gate.started.wait()
        events = []

        async def cancel_soon() -> None:
            await wait_until(lambda: agent.streams(task.id) == 1)
            canceled = await client.cancel_task(task.id)
            assert canceled.state is TaskState.CANCELED

        async with anyio.create_task_group() as tg:
            tg.start_soon(cancel_soon)
            async with client.subscribe(task.id) as stream:
                async for event in stream:
                    events.append(event)
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(task.id)
        with pytest.raises(TaskNotFoundError):
            await client.get_task("no-such-task")
        final = await client.wait(task.id, poll_interval=0.01)
    assert isinstance(events[0], Task)
    assert events[0].state is TaskState.WORKING
    assert isinstance(events[-1], TaskStatusUpdateEvent)
    assert events[-1].status.state is TaskState.CANCELED
    assert final.state is TaskState.CANCELED
    assert agent.get_task(task.id).state is TaskState.CANCELED


async def test_list_tasks(dialect: str, mode: str) -> None:
    agent = make_agent(dialect)
    async with client_for(agent, mode) as client:
        first = await send_task(client, "a", context_id="ctx")
        second = await send_task(client, "b", context_id="ctx")
        await client.send_message("c")
        page = await client.list_tasks(context_id="ctx", limit=1)
        rest = await client.list_tasks(context_id="ctx", limit=1, cursor=page.next_cursor)
        done = await client.list_tasks(status=TaskState.COMPLETED, include_artifacts=True)
    assert [t.id for t in page.tasks] == [second.id]
    assert (page.total_size, page.page_size) == (2, 1)
    assert [t.id for t in rest.tasks] == [first.id]
    assert rest.next_cursor is None
    assert len(done.tasks) == 3
    assert done.tasks[-1].text == "report on a (continued)"


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_a_v03_agent_lists_tasks_over_both_bindings(binding: str, mode: str) -> None:
    """The v0.3 FakeAgent serves ``tasks/list`` and ``GET /v1/tasks``; one that answers as
    if it had no such method (a fault here) is UnsupportedOperationError."""
    agent = make_agent("0.3", binding="both")
    async with client_for(agent, mode, bindings=(binding,)) as client:
        first = await send_task(client, "a", context_id="ctx")
        await send_task(client, "b", context_id="other")
        page = await client.list_tasks(context_id="ctx", include_artifacts=True)
        working = await client.list_tasks(status=TaskState.WORKING)
        agent.faults.append(
            Fault(op="list", times=1, error=-32601)
            if binding == "jsonrpc"
            else Fault(op="list", times=1, http_status=404)
        )
        with pytest.raises(UnsupportedOperationError, match="does not serve"):
            await client.list_tasks()
        again = await client.list_tasks(limit=1)
    assert [t.id for t in page.tasks] == [first.id]
    assert page.tasks[0].artifacts[0].text == "report on a (continued)"
    assert (page.next_cursor, page.total_size) == (None, 1)
    assert working.tasks == []
    assert (len(again.tasks), again.total_size) == (1, 2) and again.next_cursor is not None
    listed = [r for r in agent.requests if r.op == "list"]
    expected = "POST /a2a" if binding == "jsonrpc" else "GET /rest/v1/tasks"
    assert {f"{r.method} {r.path}" for r in listed} == {expected}
    assert {r.rpc_method for r in listed} == {"tasks/list" if binding == "jsonrpc" else None}


async def test_a_pool_sends_again_after_aclose(dialect: str) -> None:
    """As a messenger's close() must: the pool's clients and connections are closed, and
    the next send opens new ones (over 127.0.0.1)."""
    agent = make_agent(dialect)
    async with agent.serve():
        pool = AgentPool()
        first = await pool.send(agent.url, text="one")
        old_http, old_client = pool.http_client, pool.client(agent.url)
        await pool.aclose()
        assert old_http.is_closed and old_client.closed
        second = await pool.send(agent.url, text="two")
        assert pool.http_client is not old_http and not pool.http_client.is_closed
        assert pool.client(agent.url) is not old_client
        await pool.aclose()
        await pool.aclose()
    assert first == {"text": "report on one (continued)"}
    assert second == {"text": "report on two (continued)"}
    assert [r.op for r in agent.requests].count("card") == 2  # a new client, its own card


async def test_push_configs_and_extended_card(dialect: str, mode: str) -> None:
    agent = make_agent(dialect, extended_card={"description": "the extended card"})
    async with client_for(agent, mode) as client:
        task = await send_task(client, "x")
        created = await client.create_push_config(
            task.id,
            "https://hooks.example.com/a2a",
            token="tok",
            config_id="c1",
            auth_scheme="Bearer",
            auth_credentials="secret",
        )
        other = await client.create_push_config(task.id, "https://hooks.example.com/other")
        got = await client.get_push_config(task.id, "c1")
        listed = await client.list_push_configs(task.id)
        await client.delete_push_config(task.id, "c1")
        after = await client.list_push_configs(task.id)
        extended = await client.get_extended_card()
    assert (created.id, created.task_id, created.url, created.token) == (
        "c1",
        task.id,
        "https://hooks.example.com/a2a",
        "tok",
    )
    assert (created.auth_scheme, created.auth_credentials) == ("Bearer", "secret")
    assert other.id
    assert got.url == created.url
    assert [c.id for c in listed] == ["c1", other.id]
    assert [c.id for c in after] == [other.id]
    assert extended.description == "the extended card"


async def test_auth_required_by_agent(dialect: str, mode: str) -> None:
    agent = make_agent(dialect, auth="Bearer s3cret")
    async with client_for(agent, mode, auth="Bearer s3cret") as client:
        task = await client.send_message("x")
    assert isinstance(task, Task)
    assert all(r.headers.get("authorization") == "Bearer s3cret" for r in agent.requests)


async def test_a_non_blocking_send_to_a_tasks_send_agent_is_not_followed_up(mode: str) -> None:
    """The legacy dialect has no ``blocking`` flag: ``blocking=False`` sends the same request
    and returns the agent's answer as it is, with no follow-up request."""
    agent = FakeAgent(dialect="legacy", answers_at_once=True)
    async with client_for(agent, mode) as client:
        answered = await client.send_message("hello", blocking=False)
        assert isinstance(answered, Task) and not answered.state.is_final
        sent = [r.op for r in agent.requests if r.op not in (None, "card")]  # discovery aside
        assert sent == ["send"]  # no follow-up request
        done = await client.send_message("hello")  # a blocking send follows the task up
        assert isinstance(done, Task) and done.state is TaskState.COMPLETED
