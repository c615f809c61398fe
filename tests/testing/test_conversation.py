"""Conversations against FakeAgent in every dialect, served and in-process, async and sync."""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator

import pytest
from anyio.from_thread import start_blocking_portal

from a2a_anyio import (
    AuthRequiredError,
    Message,
    SyncA2AClient,
    Task,
    TaskState,
)
from a2a_anyio.testing import FakeAgent, SkillContext, artifact, status
from a2a_anyio.testing._skills import Emit

from ._helpers import client_for

DIALECTS = ["1.0", "0.3", "legacy"]


@pytest.fixture(params=DIALECTS)
def dialect(request: pytest.FixtureRequest) -> str:
    return str(request.param)


def make_agent(dialect: str, **kwargs: object) -> FakeAgent:
    agent = FakeAgent(dialect=dialect, **kwargs)  # type: ignore[arg-type]

    @agent.skill("size")
    async def size(ctx: SkillContext) -> AsyncGenerator[Emit, Message | None]:
        answer = yield status("input-required", "which size?")
        assert answer is not None
        yield artifact(f"resized to {answer.text} in {ctx.context_id}")

    @agent.skill("vault")
    async def vault(ctx: SkillContext) -> AsyncGenerator[Emit, Message | None]:
        answer = yield status("auth-required", "sign in to the vault first")
        assert answer is not None
        yield artifact(f"opened after {answer.text}")

    @agent.skill("echo")
    async def echo(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield artifact(f"echo {ctx.text}")

    return agent


SIZE = {"skillId": "size"}


@pytest.mark.anyio
async def test_turns_continue_the_open_task_then_start_new_ones(dialect: str, mode: str) -> None:
    agent = make_agent(dialect)
    async with client_for(agent, mode) as client:
        conv = client.conversation()
        assert (conv.context_id, conv.task, conv.history) == (None, None, [])
        asked = await conv.send("photo", metadata=SIZE)
        assert isinstance(asked, Task) and asked.state is TaskState.INPUT_REQUIRED
        context = conv.context_id
        assert context is not None and context == asked.context_id
        assert conv.task is not None and conv.task.id == asked.id
        done = await conv.send("800x600")
        assert isinstance(done, Task)
        assert (done.id, done.state) == (asked.id, TaskState.COMPLETED)
        assert done.text == f"resized to 800x600 in {context}"
        assert conv.state()["task"] is None  # finished: no open task
        again = await conv.send("hi", metadata={"skillId": "echo"})
    assert isinstance(again, Task)
    assert again.id != asked.id and again.context_id == context
    assert [turn.sent.text for turn in conv.history] == ["photo", "800x600", "hi"]
    assert [turn.received for turn in conv.history] == [asked, done, again]
    sends = agent.requests_for("send")
    assert len(sends) == 3
    # Each turn but the first names the context; the second names the task too.
    assert [turn.sent.context_id for turn in conv.history] == [None, context, context]
    assert [turn.sent.task_id for turn in conv.history] == [None, asked.id, None]


@pytest.mark.anyio
async def test_a_given_context_is_kept(dialect: str) -> None:
    agent = make_agent(dialect)
    async with client_for(agent, "inproc") as client:
        conv = client.conversation("ctx-1")
        first = await conv.send("hi", metadata={"skillId": "echo"})
        second = await conv.send("again", metadata={"skillId": "echo"})
    assert isinstance(first, Task) and isinstance(second, Task)
    assert (first.context_id, second.context_id, conv.context_id) == ("ctx-1",) * 3
    assert first.id != second.id


@pytest.mark.anyio
async def test_stream_turns_learn_the_task_from_the_events(dialect: str, mode: str) -> None:
    agent = make_agent(dialect)
    async with client_for(agent, mode) as client:
        conv = client.conversation()
        async with conv.stream("photo", metadata=SIZE) as stream:
            async for _ in stream:
                pass
        asked = stream.task
        assert asked is not None and asked.state is TaskState.INPUT_REQUIRED
        assert conv.task is not None and conv.task.id == asked.id
        assert conv.context_id == asked.context_id
        done = await conv.send("800x600")
        assert conv.state()["task"] is None  # finished: no open task
        async with conv.stream("hi", metadata={"skillId": "echo"}) as stream:
            assert conv.history[-1].received is None  # nothing read yet
            again = await stream.result()
    assert isinstance(done, Task)
    assert (done.id, done.state) == (asked.id, TaskState.COMPLETED)
    assert isinstance(again, Task)
    assert again.id != asked.id and again.context_id == asked.context_id
    assert conv.state()["task"] is None
    assert [turn.received for turn in conv.history] == [asked, done, again]
    assert [turn.sent.task_id for turn in conv.history] == [None, asked.id, None]


@pytest.mark.anyio
async def test_auth_required_is_raised_and_the_task_stays_open(dialect: str) -> None:
    agent = make_agent(dialect, auth="Bearer s3cret")
    async with client_for(agent, "inproc", auth="Bearer s3cret") as client:
        conv = client.conversation()
        with pytest.raises(AuthRequiredError) as caught:
            await conv.send("open", metadata={"skillId": "vault"})
        error = caught.value
        assert error.task.state is TaskState.AUTH_REQUIRED
        assert error.text == "sign in to the vault first"
        assert error.schemes and "bearer" in error.schemes[0].lower()
        assert "needs authentication: sign in to the vault first" in str(error)
        assert conv.task is not None and conv.task.id == error.task.id
        assert conv.auth_required is not None
        done = await conv.send("signed in")
    assert isinstance(done, Task)
    assert (done.id, done.text) == (error.task.id, "opened after signed in")
    assert conv.auth_required is None


@pytest.mark.anyio
async def test_a_stream_that_turns_auth_required_says_so_and_the_next_turn_continues(
    dialect: str,
) -> None:
    agent = make_agent(dialect, auth="Bearer s3cret")
    async with client_for(agent, "inproc", auth="Bearer s3cret") as client:
        conv = client.conversation()
        async with conv.stream("open", metadata={"skillId": "vault"}) as stream:
            held = await stream.result()  # a stream shows the state; it does not raise
        assert isinstance(held, Task) and held.state is TaskState.AUTH_REQUIRED
        assert conv.auth_required is not None
        assert conv.auth_required.text == "sign in to the vault first"
        assert conv.task is not None and conv.task.id == held.id
        async with conv.stream("signed in") as stream:
            done = await stream.result()
    assert isinstance(done, Task)
    assert (done.id, done.text) == (held.id, "opened after signed in")
    assert conv.task is None
    assert conv.auth_required is None  # type: ignore[unreachable]  # mypy keeps the narrowing


@pytest.mark.anyio
async def test_state_round_trip_resumes_the_open_task(dialect: str) -> None:
    agent = make_agent(dialect)
    async with client_for(agent, "inproc") as client:
        conv = client.conversation()
        asked = await conv.send("photo", metadata=SIZE)
        assert isinstance(asked, Task)
        state = json.loads(json.dumps(conv.state()))  # plain JSON all through
        resumed = client.conversation(state=state)
        assert resumed.context_id == conv.context_id
        assert resumed.task is not None and resumed.task.id == asked.id
        assert [turn.sent.text for turn in resumed.history] == ["photo"]
        done = await resumed.send("800x600")
    assert isinstance(done, Task)
    assert (done.id, done.state) == (asked.id, TaskState.COMPLETED)


@pytest.mark.anyio
async def test_caller_mistakes() -> None:
    agent = make_agent("1.0")
    async with client_for(agent, "inproc") as client:
        conv = client.conversation()
        with pytest.raises(TypeError, match="a conversation sets context_id and task_id itself"):
            await conv.send("hi", context_id="x", task_id="y")  # type: ignore[call-arg]
        with pytest.raises(TypeError, match="a conversation sets task_id itself"):
            conv.stream("hi", task_id="y")  # type: ignore[call-arg]
        with pytest.raises(ValueError, match="not a conversation state: a conversation state is"):
            client.conversation(state={"context_id": 3})
        with pytest.raises(ValueError, match="a context_id or a state, not both"):
            client.conversation("c", state=conv.state())
        with pytest.raises(TypeError, match="context_id must be a str, not int"):
            client.conversation(3)  # type: ignore[arg-type]
    assert agent.requests_for("send") == []


# A tasks/send agent's stream events carry no session: the turn streamed below cannot say
# its context in that dialect (its sends can).
@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_sync_conversation(backend: str, dialect: str) -> None:
    agent = make_agent(dialect)
    with (
        start_blocking_portal(backend) as portal,  # the agent's own loop, on 127.0.0.1
        portal.wrap_async_context_manager(agent.serve()),
        SyncA2AClient(agent.url, backend=backend) as client,
    ):
        conv = client.conversation()
        asked = conv.send("photo", metadata=SIZE)
        assert isinstance(asked, Task) and asked.state is TaskState.INPUT_REQUIRED
        assert conv.task is not None and conv.context_id == asked.context_id
        done = conv.send("800x600")
        assert conv.state()["task"] is None  # finished: no open task
        with conv.stream("more", metadata={"skillId": "echo"}) as stream:
            streamed = stream.result()
        assert isinstance(streamed, Task) and streamed.context_id == asked.context_id
        resumed = client.conversation(state=conv.state())
        again = resumed.send("hi", metadata={"skillId": "echo"})
    assert isinstance(done, Task) and done.id == asked.id
    assert isinstance(again, Task) and again.context_id == asked.context_id
    assert [turn.sent.text for turn in resumed.history] == ["photo", "800x600", "more", "hi"]
