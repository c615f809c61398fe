"""AgentPool: one client per URL over one connection pool, and the messenger's send()."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AConnectionError,
    A2AProtocolError,
    A2ATimeoutError,
    AgentPool,
    AgentRegistry,
    SyncAgentPool,
    TaskFailedError,
    TaskNotFoundError,
    cancel_task,
    get_task,
    send_text,
)

from ._support import (
    BASE,
    MOCK_CLOCK_BACKENDS,
    FakeAgent,
    mock_clock_options,
    on_mock_clock,
    v1_card,
)

pytestmark = pytest.mark.anyio


def task(
    state: str, artifacts: list[dict[str, Any]] | None = None, note: str = ""
) -> dict[str, Any]:
    out: dict[str, Any] = {"id": "t1", "contextId": "c1", "status": {"state": state}}
    if note:
        out["status"]["message"] = {
            "messageId": "m",
            "role": "ROLE_AGENT",
            "parts": [{"text": note}],
        }
    if artifacts is not None:
        out["artifacts"] = artifacts
    return out


def pool_for(agent: FakeAgent) -> AgentPool:
    return AgentPool(http_client=httpx.AsyncClient(transport=agent.transport()))


async def test_same_client_for_the_same_url_and_one_connection_pool() -> None:
    agent = FakeAgent(v1_card())
    async with pool_for(agent) as pool:
        a, b = pool.client(BASE), pool.client(BASE)
        assert a is b
        assert pool.client(BASE + "/other") is not a
        assert a._http.client is pool.http_client


async def test_send_returns_the_data_part_or_the_text() -> None:
    agent = FakeAgent(v1_card())
    data_artifacts = [{"artifactId": "a", "parts": [{"text": "see data"}, {"data": {"x": 1}}]}]
    agent.results["SendMessage"] = {"task": task("TASK_STATE_COMPLETED", data_artifacts)}
    async with pool_for(agent) as pool:
        assert await pool.send(BASE, text="hi", data={"q": 1}) == {"x": 1}
        sent = agent.calls[-1]["params"]["message"]
        assert sent["parts"] == [{"text": "hi"}, {"data": {"q": 1}}]
        first_id = sent["messageId"]

        text_artifacts = [{"artifactId": "a", "parts": [{"text": "hello "}]}, {"artifactId": "b", "parts": [{"text": "world"}]}]  # fmt: skip
        agent.results["SendMessage"] = {"task": task("TASK_STATE_COMPLETED", text_artifacts)}
        assert await pool.send(BASE, text="hi") == {"text": "hello world"}
        assert agent.calls[-1]["params"]["message"]["messageId"] != first_id

        reply = {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "pong"}]}
        agent.results["SendMessage"] = {"message": reply}
        assert await pool.send(BASE, text="ping") == {"text": "pong"}

        agent.results["SendMessage"] = {"task": task("TASK_STATE_COMPLETED", [{"artifactId": "a", "parts": [{"data": [1, 2]}]}])}  # fmt: skip
        assert await pool.send(BASE, data={"n": 1}) == {"data": [1, 2]}


@pytest.mark.parametrize("state", ["TASK_STATE_FAILED", "TASK_STATE_REJECTED", "TASK_STATE_CANCELED", "TASK_STATE_INPUT_REQUIRED"])  # fmt: skip
async def test_send_raises_task_failed_with_the_status_message(state: str) -> None:
    agent = FakeAgent(v1_card())
    agent.results["SendMessage"] = {"task": task(state, note="disk full")}
    async with pool_for(agent) as pool:
        with pytest.raises(TaskFailedError, match="disk full") as info:
            await pool.send(BASE, text="hi")
    assert info.value.task.id == "t1"


async def test_completed_without_artifacts_is_a_clear_error() -> None:
    agent = FakeAgent(v1_card())
    agent.results["SendMessage"] = {"task": task("TASK_STATE_COMPLETED")}
    async with pool_for(agent) as pool:
        with pytest.raises(A2AProtocolError, match="without artifacts"):
            await pool.send(BASE, text="hi")


@on_mock_clock()
async def test_send_waits_through_non_final_states() -> None:
    agent = FakeAgent(v1_card())
    agent.results["SendMessage"] = {"task": task("TASK_STATE_WORKING")}
    polls = iter(["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING", "TASK_STATE_COMPLETED"])

    def get_task(params: Any) -> dict[str, Any]:
        state = next(polls)
        arts = [{"artifactId": "a", "parts": [{"text": "done"}]}]
        return task(state, arts if state == "TASK_STATE_COMPLETED" else None)

    agent.results["GetTask"] = get_task
    async with pool_for(agent) as pool:
        start = anyio.current_time()
        assert await pool.send(BASE, text="hi") == {"text": "done"}
        # polls at 0, 0.2, 0.5: the interval grows by half each time
        assert anyio.current_time() - start == pytest.approx(0.5)


@on_mock_clock()
async def test_send_timeout_while_waiting() -> None:
    agent = FakeAgent(v1_card())
    agent.results["SendMessage"] = {"task": task("TASK_STATE_WORKING")}
    agent.results["GetTask"] = task("TASK_STATE_WORKING")
    async with pool_for(agent) as pool:
        with pytest.raises(A2ATimeoutError) as info:
            await pool.send(BASE, text="hi", timeout=10)
    assert info.value.timeout == "deadline"
    # bounded backoff: 0.2, 0.3, 0.45, ... capped at 2 s
    intervals = len([c for c in agent.calls if c["method"] == "GetTask"])
    assert 6 < intervals < 12


def slow_agent(agent: FakeAgent, seconds: float) -> httpx.AsyncClient:
    """An httpx client of ``agent`` whose every answer to a call takes ``seconds``."""

    async def handle(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            await anyio.sleep(seconds)
        return await agent.handle(request)

    return httpx.AsyncClient(transport=httpx.MockTransport(handle))


@on_mock_clock()
async def test_the_pool_s_timeout_bounds_send_unless_the_call_gives_its_own() -> None:
    agent = FakeAgent(v1_card())
    done = [{"artifactId": "a", "parts": [{"text": "late"}]}]
    agent.results["SendMessage"] = {"task": task("TASK_STATE_COMPLETED", done)}
    async with AgentPool(timeout=0.5, http_client=slow_agent(agent, 3)) as pool:
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError) as info:
            await pool.send(BASE, text="hi")
        assert info.value.timeout == "deadline"
        assert anyio.current_time() - start == pytest.approx(0.5)
        start = anyio.current_time()
        assert await pool.send(BASE, text="hi", timeout=None) == {"text": "late"}
        assert await pool.send(BASE, text="hi", timeout=5) == {"text": "late"}
        assert anyio.current_time() - start == pytest.approx(6)


@pytest.mark.parametrize("backend", MOCK_CLOCK_BACKENDS)
def test_the_sync_pool_s_timeout_bounds_send(backend: str) -> None:
    agent = FakeAgent(v1_card())
    done = [{"artifactId": "a", "parts": [{"text": "late"}]}]
    agent.results["SendMessage"] = {"task": task("TASK_STATE_COMPLETED", done)}
    options = mock_clock_options(backend)
    with SyncAgentPool(
        backend=backend, backend_options=options, timeout=0.5, http_client=slow_agent(agent, 3)
    ) as pool:
        with pytest.raises(A2ATimeoutError) as info:
            pool.send(BASE, text="hi")
        assert info.value.timeout == "deadline"
        assert pool.send(BASE, text="hi", timeout=None) == {"text": "late"}


@on_mock_clock()
async def test_the_one_shot_helpers_and_a_registry_s_clients_keep_their_timeout() -> None:
    """Their ``timeout`` option is the client's, the default of the call each makes."""
    agent = FakeAgent(v1_card())
    agent.results["SendMessage"] = {"task": task("TASK_STATE_COMPLETED")}
    agent.results["GetTask"] = agent.results["CancelTask"] = task("TASK_STATE_CANCELED")
    http = slow_agent(agent, 3)
    registry = AgentRegistry.from_dict({"agents": [{"name": "slow", "url": BASE}]})

    async def registry_send() -> Any:
        async with registry.client("slow", timeout=0.5, http_client=http) as client:
            return await client.send_message("hi")

    calls: list[Callable[[], Awaitable[Any]]] = [
        lambda: send_text(BASE, "hi", timeout=0.5, http_client=http),
        lambda: get_task(BASE, "t1", timeout=0.5, http_client=http),
        lambda: cancel_task(BASE, "t1", timeout=0.5, http_client=http),
        registry_send,
    ]
    for call in calls:
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError):
            await call()
        assert anyio.current_time() - start == pytest.approx(0.5)
    await http.aclose()


async def test_what_a_registry_entry_leaves_unsaid_is_the_pool_s() -> None:
    reg = AgentRegistry.from_dict(
        {
            "defaults": {"retries": 2},
            "agents": [
                {"name": "plain", "url": "https://plain.test"},
                {"name": "own", "url": "https://own.test", "timeout_seconds": 3, "protocol": "0.3"},
                {"name": "unbounded", "url": "https://u.test", "timeout_seconds": None},
            ],
        }
    )
    async with AgentPool(registry=reg, timeout=0.5, protocol="1.0") as pool:
        plain, own, unbounded = (pool.client(n) for n in ("plain", "own", "unbounded"))
        assert (plain.timeout, plain.protocol) == (0.5, "1.0")
        assert (own.timeout, own.protocol) == (3, "0.3")
        assert unbounded.timeout is None
        assert plain._http.client is pool.http_client
    alone = reg.client("plain")  # outside a pool: the client's defaults, as before
    assert (alone.timeout, alone.protocol, alone.retry.attempts) == (30, "auto", 2)
    await alone.close()


async def test_errors_are_typed() -> None:
    agent = FakeAgent(v1_card())
    agent.errors["SendMessage"] = {"code": -32001, "message": "no such task"}
    async with pool_for(agent) as pool:
        with pytest.raises(TaskNotFoundError):
            await pool.send(BASE, text="hi")

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    async with AgentPool(
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(refuse))
    ) as pool:
        with pytest.raises(A2AConnectionError):
            await pool.send(BASE, text="hi")


async def test_aclose_is_idempotent_and_safe_when_unused() -> None:
    unused = AgentPool()
    await unused.aclose()
    await unused.aclose()
    agent = FakeAgent(v1_card())
    pool = pool_for(agent)
    client = pool.client(BASE)
    await pool.aclose()
    await pool.aclose()
    assert client.closed
    again = pool.client(BASE)  # the pool is usable again: a new client
    assert again is not client and not again.closed
    await pool.aclose()


async def test_owned_pool_closes_its_http_client() -> None:
    pool = AgentPool()
    http = pool.http_client
    await pool.aclose()
    assert http.is_closed
    fresh = pool.http_client  # made again after aclose()
    assert (fresh is http, fresh.is_closed) == (False, False)
    await pool.aclose()
    assert fresh.is_closed
    shared = httpx.AsyncClient()
    pool = AgentPool(http_client=shared)
    await pool.aclose()
    assert not shared.is_closed
    assert pool.http_client is shared  # a given client is used again, never closed
    await shared.aclose()


async def test_a_client_closed_by_its_user_is_replaced() -> None:
    agent = FakeAgent(v1_card())
    async with pool_for(agent) as pool:
        first = pool.client(BASE)
        await first.close()
        second = pool.client(BASE)
        assert second is not first
        assert not second.closed


async def test_fan_out_refuses_the_caller_s_mistakes_before_sending() -> None:
    agent = FakeAgent(v1_card())
    async with pool_for(agent) as pool:
        with pytest.raises(ValueError, match=r"^message has no parts: a message is a str"):
            await pool.fan_out([BASE, BASE], {"text": "hi"})
        with pytest.raises(ValueError, match=r"^message has no parts: a message is a str"):
            pool.fan_out_stream([BASE, BASE], {"role": "user", "content": []})
        with pytest.raises(TypeError, match=r"^history_length must be an int, not str$"):
            await pool.fan_out([BASE], "hi", history_length="3")  # type: ignore[arg-type]
    assert agent.requests == []
