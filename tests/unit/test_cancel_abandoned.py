"""A task nobody waits for any more is cancelled on its agent: what the library abandons (a
fan-out's stragglers, the streams a merge cuts) by default, what the user abandons when asked
(``cancel_on_exit``). In-process testing-kit agents on virtual clocks; the agents' own records
say whether the task ended canceled."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractContextManager, AsyncExitStack, asynccontextmanager, nullcontext
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    A2AServerError,
    A2ATimeoutError,
    CancelGuard,
    CancelOutcome,
    StreamEvent,
    Task,
    TaskNotCancelableError,
    TaskState,
    fan_out,
    fan_out_stream,
    merge_streams,
)
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, status

from ._support import on_mock_clock

pytestmark = pytest.mark.anyio

SLOW = 1000.0  # how long the slow skill works, in virtual seconds


async def quick(ctx: SkillContext) -> AsyncIterator[Emit]:
    yield status("working")
    await anyio.sleep(1)
    yield artifact(f"done: {ctx.text}")


async def slow(ctx: SkillContext) -> AsyncIterator[Emit]:
    yield status("working")
    await anyio.sleep(SLOW)
    yield artifact("late")


def agent_of(skill: Any, name: str, **options: Any) -> FakeAgent:
    return FakeAgent(skills={"main": skill}, base_url=f"http://{name}.test", **options)


@asynccontextmanager
async def running(*agents: FakeAgent, **options: Any) -> AsyncIterator[list[A2AClient]]:
    """A client of each agent, in process (the agents run while the block does)."""
    async with AsyncExitStack() as stack:
        clients = []
        for agent in agents:
            http = await stack.enter_async_context(
                httpx.AsyncClient(transport=agent.transport(), base_url=agent.url)
            )
            client = A2AClient(agent.url, http_client=http, **options)
            clients.append(await stack.enter_async_context(client))
        yield clients


def only_task(agent: FakeAgent) -> Task:
    [task] = agent.tasks.values()
    return task


def state_of(agent: FakeAgent) -> TaskState:
    return only_task(agent).status.state


# -- fan_out ---------------------------------------------------------------------------------


@on_mock_clock()
async def test_fan_out_timeout_cancels_the_straggler_on_its_agent() -> None:
    agents = [agent_of(quick, "a"), agent_of(quick, "b"), agent_of(slow, "c")]
    async with running(*agents) as clients:
        start = anyio.current_time()
        results = await fan_out(clients, "go", timeout=2)
        assert anyio.current_time() - start == pytest.approx(2)
        a, b, c = results
        assert a.ok and b.ok and not c.ok
        assert c.cancelled and isinstance(c.error, A2ATimeoutError)
        assert [r.task_id for r in results] == [only_task(agent).id for agent in agents]
        assert a.cancel_outcome is None and b.cancel_outcome is None
        # The cancel went out at the timeout; its answer is not awaited past it.
        assert c.cancel_outcome is not None and c.cancel_outcome.task_id == c.task_id
        assert isinstance(c.cancel_outcome.error, A2ATimeoutError)
        assert "went out" in str(c.cancel_outcome.error)
        assert len(agents[2].requests_for("cancel")) == 1
        assert [state_of(agent) for agent in agents] == [
            TaskState.COMPLETED, TaskState.COMPLETED, TaskState.CANCELED
        ]  # fmt: skip


@on_mock_clock()
async def test_fan_out_first_k_cancels_the_rest_on_their_agents() -> None:
    agents = [agent_of(slow, "a"), agent_of(quick, "b"), agent_of(slow, "c")]
    async with running(*agents) as clients:
        results = await fan_out(clients, "go", first=1)
        assert [r.ok for r in results] == [False, True, False]
        assert [r.cancel_outcome is not None for r in results] == [True, False, True]
        assert [state_of(agent) for agent in agents] == [
            TaskState.CANCELED, TaskState.COMPLETED, TaskState.CANCELED
        ]  # fmt: skip


@on_mock_clock()
async def test_fan_out_cancels_when_the_callers_own_scope_ends_it() -> None:
    agents = [agent_of(slow, "a"), agent_of(slow, "b")]
    async with running(*agents) as clients:
        with anyio.move_on_after(3):
            await fan_out(clients, "go")
        assert [state_of(agent) for agent in agents] == [TaskState.CANCELED] * 2


@on_mock_clock()
async def test_fan_out_cancel_on_exit_false_leaves_the_tasks_running() -> None:
    agents = [agent_of(quick, "a"), agent_of(slow, "b")]
    async with running(*agents) as clients:
        results = await fan_out(clients, "go", timeout=2, cancel_on_exit=False)
        assert results[1].cancelled and results[1].cancel_outcome is None
        assert results[1].task_id == only_task(agents[1]).id
        assert state_of(agents[1]) is TaskState.WORKING


@on_mock_clock()
async def test_an_agent_that_does_not_stream_names_its_task_only_when_it_answers() -> None:
    # Blocking: it answers when the task is done, so the fan-out cut it knowing no task.
    # Answering at once (as some agents do): the task is known, followed, and cancelled.
    silent = agent_of(slow, "silent", streaming=False)
    prompt = agent_of(slow, "prompt", streaming=False, answers_at_once=True)
    async with running(silent, prompt) as clients:
        unknown, known = await fan_out(clients, "go", timeout=2)
        assert unknown.cancelled and unknown.task_id is None and unknown.cancel_outcome is None
        assert state_of(silent) is TaskState.WORKING
        assert known.task_id == only_task(prompt).id
        assert known.cancel_outcome is not None and known.cancel_outcome.task_id == known.task_id
        assert state_of(prompt) is TaskState.CANCELED
    assert silent.requests_for("stream") == [] and len(silent.requests_for("send")) == 1


@on_mock_clock()
async def test_fan_out_follows_each_streaming_agent_and_calls_the_users_on_event() -> None:
    agents = [agent_of(quick, "a"), agent_of(slow, "b")]
    seen: list[tuple[type, str | None]] = []

    async def on_event(event: StreamEvent) -> None:
        seen.append((type(event), getattr(event, "task_id", None) or getattr(event, "id", None)))

    async with running(*agents) as clients:
        results = await fan_out(clients, "go", timeout=2, on_event=on_event)
        assert [len(agent.requests_for("stream")) for agent in agents] == [1, 1]
        assert [len(agent.requests_for("send")) for agent in agents] == [0, 0]
        ids = {r.task_id for r in results}
        assert {task_id for _, task_id in seen} == ids and None not in ids


@on_mock_clock()
async def test_a_cancel_that_fails_is_recorded_and_logged_not_raised(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger="a2a_anyio")
    agents = [agent_of(quick, "a"), agent_of(slow, "b", cancelable=False)]
    async with running(*agents) as clients:
        results = await fan_out(clients, "go", first=1)  # no timeout: the answer awaited
        outcome = results[1].cancel_outcome
        assert outcome is not None and not outcome.confirmed
        assert isinstance(outcome.error, TaskNotCancelableError)
        assert state_of(agents[1]) is TaskState.WORKING
    [record] = [r for r in caplog.records if "abandoned" in r.getMessage()]
    assert record.levelno == logging.INFO
    assert record.getMessage().startswith(
        f"could not cancel abandoned task {outcome.task_id} at http://b.test: "
        "TaskNotCancelableError: "
    )


@on_mock_clock()
@pytest.mark.parametrize(
    ("timeout", "first", "cut_at", "returns_at"),
    [
        (None, 1, 1, 2.5),  # first=1 at 1 s, no timeout: the answer awaited for the grace
        (1.8, 1, 1, 1.8),  # ... with a timeout sooner than the grace: until the timeout
        (2, None, 2, 2),  # cut at the timeout: the cancel goes out, its answer not awaited
    ],
)
async def test_the_fan_outs_timeout_or_the_grace_bounds_a_cancel_to_an_agent_that_hangs(
    timeout: float | None, first: int | None, cut_at: float, returns_at: float
) -> None:
    agents = [agent_of(quick, "a"), agent_of(slow, "b")]
    agents[1].fault("cancel", delay=SLOW)
    async with running(*agents, cancel_grace=1.5) as clients:
        start = anyio.current_time()
        _, result = await fan_out(clients, "go", timeout=timeout, first=first)
        assert anyio.current_time() - start == pytest.approx(returns_at)
        assert result.elapsed == pytest.approx(cut_at)
        assert len(agents[1].requests_for("cancel")) == 1  # it went out
        outcome = result.cancel_outcome
        assert outcome is not None and isinstance(outcome.error, A2ATimeoutError)
        assert outcome.error.timeout == "deadline"


# -- fan_out_stream and merge_streams --------------------------------------------------------


@on_mock_clock()
@pytest.mark.parametrize("cut", ["timeout", "stream_timeout", "fail_fast", "left"])
async def test_fan_out_stream_cancels_what_it_cuts_and_what_is_left(cut: str) -> None:
    agents = [agent_of(slow, "a"), agent_of(slow, "b"), agent_of(quick, "c")]
    agents[2].fault("stream", error=-32603, delay=1)  # an error item, after the others began
    options: dict[str, Any] = {"fail_fast": True} if cut == "fail_fast" else {}
    if cut.endswith("timeout"):
        options[cut] = 2
    raises: AbstractContextManager[Any] = (
        pytest.raises(A2AServerError) if cut == "fail_fast" else nullcontext()
    )
    async with running(*agents) as clients:
        with raises:
            async with fan_out_stream(clients, "go", **options) as merged:
                async for item in merged:
                    if cut == "left" and item.error is not None:
                        break
        assert [state_of(agent) for agent in agents[:2]] == [TaskState.CANCELED] * 2
        outcomes = [s.cancel_outcome for s in merged.streams.values()][:2]
        assert all(o is not None and o.confirmed for o in outcomes)


@on_mock_clock()
async def test_fan_out_stream_cancel_on_exit_false_leaves_them_running() -> None:
    agents = [agent_of(slow, "a")]
    async with running(*agents) as clients:
        async with fan_out_stream(clients, "go", timeout=2, cancel_on_exit=False) as merged:
            items = [item async for item in merged]
        assert isinstance(items[-1].error, A2ATimeoutError)
        assert state_of(agents[0]) is TaskState.WORKING


@on_mock_clock()
@pytest.mark.parametrize("cut", ["timeout", "stream_timeout", "fail_fast"])
async def test_merge_streams_cancels_what_its_own_limits_cut(cut: str) -> None:
    agents = [agent_of(slow, "a"), agent_of(quick, "b")]
    agents[1].fault("stream", error=-32603, delay=1)
    options: dict[str, Any] = {"fail_fast": True} if cut == "fail_fast" else {cut: 2}
    raises: AbstractContextManager[Any] = (
        pytest.raises(A2AServerError) if cut == "fail_fast" else nullcontext()
    )
    async with running(*agents) as clients:
        streams = {name: c.stream_message("go") for name, c in zip("ab", clients, strict=True)}
        assert not any(s.cancel_on_exit for s in streams.values())
        with raises:
            async with merge_streams(streams, **options) as merged:
                async for _ in merged:
                    pass
        assert state_of(agents[0]) is TaskState.CANCELED
        assert streams["a"].cancel_outcome is not None


@on_mock_clock()
@pytest.mark.parametrize("cancel_on_exit", [False, True])
async def test_merge_streams_left_early_follows_each_streams_cancel_on_exit(
    cancel_on_exit: bool,
) -> None:
    agents = [agent_of(slow, "a")]
    async with running(*agents) as clients:
        streams = {"a": clients[0].stream_message("go", cancel_on_exit=cancel_on_exit)}
        async with merge_streams(streams) as merged:
            async for _ in merged:
                break
        expected = TaskState.CANCELED if cancel_on_exit else TaskState.WORKING
        assert state_of(agents[0]) is expected
        assert (streams["a"].cancel_outcome is not None) is cancel_on_exit


# -- cancel_on_exit on each call -------------------------------------------------------------

Call = Callable[[A2AClient, dict[str, Any]], Awaitable[Any]]


async def send(client: A2AClient, options: dict[str, Any]) -> Any:
    limit = options.pop("limit", None)
    return await client.send_message("go", timeout=limit, **options)


async def stream(client: A2AClient, options: dict[str, Any]) -> Any:
    limit = options.pop("limit", None)
    async with client.stream_message("go", total_timeout=limit, **options) as s:
        return await s.result()


async def started(client: A2AClient) -> str:
    task = await client.send_message("go", blocking=False)
    assert isinstance(task, Task)
    return task.id


async def subscribe(client: A2AClient, options: dict[str, Any]) -> Any:
    limit = options.pop("limit", None)
    task_id = await started(client)
    async with client.subscribe(task_id, total_timeout=limit, **options) as s:
        return await s.result()


async def wait(client: A2AClient, options: dict[str, Any]) -> Any:
    limit = options.pop("limit", None)
    task_id = await started(client)
    return await client.wait(task_id, timeout=limit, **options)


CALLS: dict[str, Call] = {"send": send, "stream": stream, "subscribe": subscribe, "wait": wait}


@on_mock_clock()
@pytest.mark.parametrize("ended_by", ["scope", "deadline"])
@pytest.mark.parametrize("call", list(CALLS))
async def test_cancel_on_exit_cancels_the_task_of_an_abandoned_call(
    call: str, ended_by: str
) -> None:
    agent = agent_of(slow, "a")
    async with running(agent) as [client]:
        options: dict[str, Any] = {"cancel_on_exit": True}
        if ended_by == "deadline":
            with pytest.raises(A2ATimeoutError):
                await CALLS[call](client, {**options, "limit": 2})
        else:
            with anyio.move_on_after(2) as scope:
                await CALLS[call](client, options)
            assert scope.cancelled_caught
        assert state_of(agent) is TaskState.CANCELED
        assert len(agent.requests_for("cancel")) == 1


@on_mock_clock()
@pytest.mark.parametrize("call", list(CALLS))
async def test_a_calls_deadline_holds_for_its_cancel_to_an_agent_that_hangs(call: str) -> None:
    # Ended by its own deadline (a stream's total_timeout): the cancel goes out, its answer
    # is not awaited past the deadline (it was, for the client's cancel_grace: 3 s more).
    agent = agent_of(slow, "a")
    agent.fault("cancel", delay=SLOW)
    async with running(agent) as [client]:
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError):
            await CALLS[call](client, {"cancel_on_exit": True, "limit": 2})
        assert anyio.current_time() - start == pytest.approx(2)
        assert len(agent.requests_for("cancel")) == 1


@on_mock_clock()
@pytest.mark.parametrize("call", list(CALLS))
async def test_without_cancel_on_exit_what_the_user_abandons_keeps_running(call: str) -> None:
    agent = agent_of(slow, "a")
    async with running(agent) as [client]:
        with anyio.move_on_after(2):
            await CALLS[call](client, {})
        assert state_of(agent) is TaskState.WORKING
        assert agent.requests_for("cancel") == []


@on_mock_clock()
async def test_the_clients_cancel_on_exit_is_every_calls_default() -> None:
    agent = agent_of(slow, "a")
    async with running(agent, cancel_on_exit=True) as [client]:
        with anyio.move_on_after(2):
            await send(client, {})
        assert state_of(agent) is TaskState.CANCELED
        with anyio.move_on_after(2):
            await send(client, {"cancel_on_exit": False})
        assert [t.status.state for t in agent.tasks.values()].count(TaskState.WORKING) == 1


@on_mock_clock()
async def test_a_blocking_send_with_cancel_on_exit_streams_to_know_its_task_at_once() -> None:
    agent = agent_of(quick, "a")
    async with running(agent) as [client]:
        await client.send_message("go", cancel_on_exit=True)
        assert len(agent.requests_for("stream")) == 1 and agent.requests_for("send") == []
        await client.send_message("go")
        assert len(agent.requests_for("send")) == 1


@on_mock_clock()
async def test_a_stream_left_before_its_end_says_what_came_of_its_cancel() -> None:
    agent = agent_of(slow, "a")
    async with running(agent) as [client]:
        async with client.stream_message("go", cancel_on_exit=True) as s:
            async for _ in s:
                break
        outcome = s.cancel_outcome
        assert isinstance(outcome, CancelOutcome) and outcome.confirmed
        assert outcome.task is not None and outcome.task.id == only_task(agent).id
        await s.aclose()  # once: closing again asks nothing more
        assert len(agent.requests_for("cancel")) == 1


@on_mock_clock()
async def test_a_finished_stream_or_a_final_task_is_never_cancelled() -> None:
    agent = agent_of(quick, "a")
    async with running(agent) as [client]:
        async with client.stream_message("go", cancel_on_exit=True) as s:
            await s.result()
        task = only_task(agent)
        with anyio.move_on_after(5):
            await client.wait(task.id, cancel_on_exit=True)
        assert s.cancel_outcome is None and agent.requests_for("cancel") == []


# -- a guard of the caller's own --------------------------------------------------------------


@on_mock_clock()
@pytest.mark.parametrize("ended_by", ["scope", "deadline"])
async def test_a_guard_cancels_the_task_its_abandoned_block_left_and_says_so(
    ended_by: str,
) -> None:
    # An agent that does not stream names its task in its answer: a deadline's error carries
    # it, as last seen, and the guard reads it there.
    plain = {"streaming": False, "answers_at_once": True} if ended_by == "deadline" else {}
    agent = agent_of(slow, "a", **plain)
    async with running(agent) as [client]:
        guard = client.cancel_guard()
        assert isinstance(guard, CancelGuard)
        if ended_by == "deadline":
            with pytest.raises(A2ATimeoutError):
                async with guard:
                    await client.send_message("go", timeout=2)
        else:
            with anyio.move_on_after(2):
                async with guard:
                    await client.send_message("go", on_event=guard)
        task = only_task(agent)
        assert task.status.state is TaskState.CANCELED
        assert guard.task_id == task.id
        assert guard.outcome is not None and guard.outcome.confirmed


@on_mock_clock()
async def test_a_guard_without_cancel_on_exit_names_the_task_left_running_and_asks_nothing() -> (
    None
):
    agent = agent_of(slow, "a")
    async with running(agent) as [client]:
        guard = client.cancel_guard(cancel_on_exit=False)
        with anyio.move_on_after(2):
            async with guard:
                await client.send_message("go", on_event=guard)
        assert guard.task_id == only_task(agent).id and guard.outcome is None
        assert state_of(agent) is TaskState.WORKING and agent.requests_for("cancel") == []


@on_mock_clock()
async def test_a_guard_whose_block_ends_otherwise_cancels_nothing() -> None:
    agent = agent_of(quick, "a")
    agent.fault("send", error=-32603)
    async with running(agent) as [client]:
        guard = client.cancel_guard(only_task_id := "t-unknown")
        with pytest.raises(A2AServerError):
            async with guard:
                await client.send_message("go")
        async with client.cancel_guard(only_task_id) as done:
            pass
        assert guard.task_id is None and done.task_id is None
        assert agent.requests_for("cancel") == []


@on_mock_clock()
async def test_merge_streams_takes_cancel_cut_still_with_a_deprecation_warning() -> None:
    agents = [agent_of(slow, "a")]
    async with running(*agents) as clients:
        streams = {"a": clients[0].stream_message("go")}
        with pytest.warns(DeprecationWarning, match=r"cancel_cut=\.\.\.\) is deprecated"):
            merged = merge_streams(streams, timeout=2, cancel_cut=False)
        assert merged.cancel_on_exit is False
        async with merged:
            async for _ in merged:
                pass
        assert state_of(agents[0]) is TaskState.WORKING
        assert streams["a"].cancel_outcome is None


async def test_the_options_are_checked() -> None:
    for grace in (-1, 0):
        with pytest.raises(
            ValueError,
            match=rf"^cancel_grace must be a positive, finite number of seconds, not {grace}$",
        ):
            A2AClient("http://agent.test", cancel_grace=grace)
    with pytest.raises(TypeError, match=r"^cancel_on_exit must be a bool, not str$"):
        A2AClient("http://agent.test", cancel_on_exit="yes")  # type: ignore[arg-type]
