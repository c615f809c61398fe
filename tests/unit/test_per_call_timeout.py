"""A per-call ``timeout=`` on every unary operation replaces the client's for that call: a
shorter one ends it sooner, a longer one lets it finish, None sets no limit; past it,
``A2ATimeoutError(timeout="deadline")``. On the virtual clocks, against the testing kit's
agent delaying the one request each operation makes."""

from __future__ import annotations

import inspect
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    CLIENT_TIMEOUT,
    A2AClient,
    A2ATimeoutError,
    AgentCard,
    AgentPool,
    SyncA2AClient,
    Task,
    TaskState,
    fan_out,
)
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, status

from ._support import (
    BASE,
    MOCK_CLOCK_BACKENDS,
    kit_client,
    mock_clock_options,
    on_mock_clock,
    v1_card,
)

pytestmark = pytest.mark.anyio

CLIENT = 10  # the client's timeout
SLOW = 20  # how long the agent takes to answer the delayed request
HOOK = "https://hook.example/cb"


def agent_with_a_task(*, takes: float | None = None) -> FakeAgent:
    """An agent whose task works until cancelled (or ``takes`` seconds, then completes), with
    an extension method and an extended card; push deliveries go nowhere."""
    hooks = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(204)))
    agent = FakeAgent(extended_card={"name": "More"}, push_client=hooks)

    @agent.skill("work")
    async def work(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        if takes is None:
            await anyio.sleep_forever()
        else:
            await anyio.sleep(takes)
        yield artifact("done")
        yield status("completed")

    @agent.method("ext/echo")
    async def echo(params: Any) -> Any:
        return params

    return agent


@asynccontextmanager
async def ready(agent: FakeAgent) -> AsyncIterator[tuple[A2AClient, Task]]:
    """A client (timeout ``CLIENT``) that has the card, a working task and a push config; the
    agent served on a socket in the test's loop, the client with its own httpx client (whose
    network transport would apply read timeouts to each socket read)."""
    async with agent.serve(), A2AClient(agent.url, timeout=CLIENT) as client:
        task = await client.send_message("start", blocking=False)
        assert isinstance(task, Task)
        await client.create_push_config(task.id, HOOK, config_id="c1")
        yield client, task


Invoke = Callable[[A2AClient, Task, dict[str, Any]], Awaitable[Any]]

# operation -> (the fault's name of its one request, the call)
OPERATIONS: dict[str, tuple[str, Invoke]] = {
    "get_card": ("card", lambda c, t, kw: c.get_card(refresh=True, **kw)),
    "discover": ("card", lambda c, t, kw: c.discover(refresh=True, **kw)),
    "get_extended_card": ("extended_card", lambda c, t, kw: c.get_extended_card(**kw)),
    "call": ("call", lambda c, t, kw: c.call("ext/echo", {"n": 1}, **kw)),
    "ping": ("card", lambda c, t, kw: c.ping(**kw)),
    "send_message": ("send", lambda c, t, kw: c.send_message("more", blocking=False, **kw)),
    "get_task": ("get", lambda c, t, kw: c.get_task(t.id, **kw)),
    "list_tasks": ("list", lambda c, t, kw: c.list_tasks(**kw)),
    "cancel_task": ("cancel", lambda c, t, kw: c.cancel_task(t.id, **kw)),
    "create_push_config": ("push_create", lambda c, t, kw: c.create_push_config(t.id, HOOK, **kw)),
    "get_push_config": ("push_get", lambda c, t, kw: c.get_push_config(t.id, "c1", **kw)),
    "list_push_configs": ("push_list", lambda c, t, kw: c.list_push_configs(t.id, **kw)),
    "delete_push_config": ("push_delete", lambda c, t, kw: c.delete_push_config(t.id, "c1", **kw)),
}
# Operations without the client's timeout as their default: streams (``total_timeout``) and
# ``wait`` (no limit by default, each of its requests within the client's timeout).
OTHER_LIMITS = {"stream_message", "subscribe", "wait"}


def test_every_unary_operation_takes_a_timeout_defaulting_to_the_clients() -> None:
    public = {
        name
        for name, member in inspect.getmembers(A2AClient, inspect.iscoroutinefunction)
        # authenticate: a sign-in waits for the user, bounded by the flow's own limits.
        if not name.startswith("_") and name not in ("close", "aclose", "as_tool", "authenticate")
    }
    assert public - OTHER_LIMITS == set(OPERATIONS)
    for name in OPERATIONS:
        for cls in (A2AClient, SyncA2AClient):
            param = inspect.signature(getattr(cls, name)).parameters["timeout"]
            assert param.kind is param.KEYWORD_ONLY, f"{cls.__name__}.{name}"
            assert param.default is CLIENT_TIMEOUT, f"{cls.__name__}.{name}"


@on_mock_clock()
@pytest.mark.parametrize("operation", OPERATIONS)
@pytest.mark.parametrize(
    ("options", "expired_at"),
    [
        pytest.param({}, CLIENT, id="default-is-the-clients"),
        pytest.param({"timeout": 5}, 5, id="shorter"),
        pytest.param({"timeout": 30}, None, id="longer"),
        pytest.param({"timeout": None}, None, id="no-limit"),
    ],
)
async def test_a_calls_timeout_replaces_the_clients(
    operation: str, options: dict[str, Any], expired_at: int | None
) -> None:
    fault_op, invoke = OPERATIONS[operation]
    agent = agent_with_a_task()
    async with ready(agent) as (client, task):
        agent.fault(fault_op, times=1, delay=SLOW)
        start = anyio.current_time()
        if expired_at is None:
            await invoke(client, task, options)
            assert anyio.current_time() - start == pytest.approx(SLOW)
            return
        with pytest.raises(A2ATimeoutError) as info:
            await invoke(client, task, options)
        assert anyio.current_time() - start == pytest.approx(expired_at)
    error = info.value
    assert error.timeout == "deadline"
    assert f"within {expired_at}s" in str(error)


@on_mock_clock()
async def test_a_longer_timeout_covers_the_card_fetched_on_the_way() -> None:
    agent = agent_with_a_task()
    async with kit_client(agent, timeout=CLIENT) as client:
        agent.fault("card", times=1, delay=SLOW)
        page = await client.list_tasks(timeout=30)  # its card is read first, within 30 s
        assert anyio.current_time() == pytest.approx(SLOW)
    assert page.tasks == []


@on_mock_clock()
@pytest.mark.retry_delays
async def test_a_retry_after_of_the_card_past_a_calls_timeout_ends_it_at_once() -> None:
    async def busy(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, headers={"Retry-After": "30"})

    http = httpx.AsyncClient(transport=httpx.MockTransport(busy))
    async with A2AClient(BASE, http_client=http, timeout=100) as client:
        with pytest.raises(A2ATimeoutError, match="past the call's deadline") as info:
            await client.get_task("t-1", timeout=10)  # the card is read first, within 10 s
        assert anyio.current_time() == 0
    assert info.value.operation == "card"


@on_mock_clock()
async def test_wait_bounds_each_request_by_the_clients_timeout_only_without_a_limit() -> None:
    agent = agent_with_a_task(takes=15)
    async with ready(agent) as (client, task):
        agent.fault("get", times=1, delay=SLOW)
        with pytest.raises(A2ATimeoutError) as info:
            await client.wait(task.id)  # no limit: its stuck first look ends at the client's
        assert anyio.current_time() == pytest.approx(CLIENT)
        assert info.value.timeout == "deadline" and info.value.method == "GetTask"

        agent.fault("get", times=1, delay=SLOW)
        start = anyio.current_time()
        done = await client.wait(task.id, timeout=30)  # the wait's deadline bounds its look
        assert anyio.current_time() - start == pytest.approx(SLOW)
    assert done.status.state is TaskState.COMPLETED


@on_mock_clock()
async def test_a_streamed_send_with_on_event_ends_at_its_timeout() -> None:
    agent = agent_with_a_task(takes=100)
    seen: list[Any] = []
    async with ready(agent) as (client, _):
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError) as info:
            await client.send_message("slow", on_event=seen.append, timeout=30)
        assert anyio.current_time() - start == pytest.approx(30)
    error = info.value
    assert error.timeout == "deadline" and error.operation == "send"
    assert [r.op for r in agent.requests][-1] == "stream"
    assert seen  # the events before the deadline were shown
    [last] = error.events  # the task as last seen
    assert isinstance(last, Task) and last.status.state is TaskState.WORKING


@on_mock_clock()
async def test_a_call_that_streams_ends_at_its_timeout() -> None:
    agent = agent_with_a_task()

    @agent.method("ext/ticks")
    async def ticks(params: Any) -> AsyncIterator[Any]:
        for tick in range(10):
            yield tick
            await anyio.sleep(10)

    seen: list[Any] = []
    async with ready(agent) as (client, _):
        start = anyio.current_time()
        last = await client.call("ext/ticks", on_event=seen.append, timeout=None)
        assert anyio.current_time() - start == pytest.approx(100)
        assert last == 9 and seen == list(range(10))
        seen.clear()
        with pytest.raises(A2ATimeoutError) as info:
            await client.call("ext/ticks", on_event=seen.append, timeout=25)
        assert seen == [0, 1, 2]
    assert info.value.timeout == "deadline" and info.value.method == "ext/ticks"


@pytest.mark.parametrize("backend", MOCK_CLOCK_BACKENDS)
def test_the_sync_facade_passes_the_timeout(backend: str) -> None:
    delays: list[float] = []

    async def card(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(delays.pop() if delays else 0)
        return httpx.Response(200, json=v1_card())

    http = httpx.AsyncClient(transport=httpx.MockTransport(card))
    options = mock_clock_options(backend)
    with SyncA2AClient(
        BASE, backend=backend, backend_options=options, http_client=http, timeout=CLIENT
    ) as client:
        assert isinstance(client.get_card(), AgentCard)
        delays.append(SLOW)
        assert client.ping(timeout=None) >= 0
        delays.append(SLOW)
        with pytest.raises(A2ATimeoutError) as info:
            client.get_card(refresh=True, timeout=1)
    assert info.value.timeout == "deadline"


@on_mock_clock()
@pytest.mark.parametrize("longer", [True, False], ids=["longer", "shorter"])
async def test_an_injected_clients_timeouts_do_not_cut_a_calls_deadline(longer: bool) -> None:
    agent = agent_with_a_task()
    async with (
        agent.serve(),
        httpx.AsyncClient(timeout=1) as http,  # httpx's read timeout: 1 s
        A2AClient(agent.url, http_client=http, timeout=CLIENT) as client,
    ):
        task = await client.send_message("start", blocking=False)
        assert isinstance(task, Task)
        agent.fault("get", times=1, delay=SLOW)
        start = anyio.current_time()
        if longer:
            assert (await client.get_task(task.id, timeout=30)).id == task.id
            assert anyio.current_time() - start == pytest.approx(SLOW)
            return
        with pytest.raises(A2ATimeoutError) as info:
            await client.get_task(task.id)
        assert anyio.current_time() - start == pytest.approx(CLIENT)
    assert info.value.timeout == "deadline"


@on_mock_clock()
async def test_a_pool_and_a_fan_out_give_a_send_their_deadline_not_the_clients() -> None:
    agent = agent_with_a_task(takes=SLOW)
    async with agent.serve(), AgentPool(timeout=CLIENT) as pool:
        start = anyio.current_time()
        answer = await pool.send(agent.url, text="work", timeout=30)
        assert anyio.current_time() - start == pytest.approx(SLOW)
        assert answer == {"text": "done"}

        start = anyio.current_time()
        [result] = await fan_out([agent.url], "work", timeout=30, pool=pool)
        assert anyio.current_time() - start == pytest.approx(SLOW)
        assert isinstance(result.value, Task) and result.value.status.state is TaskState.COMPLETED

        start = anyio.current_time()
        [result] = await fan_out([agent.url], "work", timeout=5, pool=pool)
        assert anyio.current_time() - start == pytest.approx(5)
    assert isinstance(result.error, A2ATimeoutError) and result.error.timeout == "deadline"
