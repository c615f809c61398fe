"""One deadline per call: discovery, redirects, token fetches, retries, Retry-After waits and
follow-up polling all end by ``timeout``; on the virtual clocks (``@on_mock_clock()``)."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    A2ATimeoutError,
    OAuth2ClientCredentials,
    RetryPolicy,
)

from ._support import (
    BASE,
    RPC_URL,
    on_mock_clock,
    rpc_error_obj,
    rpc_result,
    v1_card,
)
from .test_stream import StreamingAgent, connect, v1_status, v1_task

pytestmark = [pytest.mark.anyio, pytest.mark.retry_delays]

TASK = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}
WORKING = {**TASK, "status": {"state": "TASK_STATE_WORKING"}}


def client_for(handle: Any, **options: Any) -> A2AClient:
    http = httpx.AsyncClient(transport=httpx.MockTransport(handle))
    options.setdefault("endpoint", RPC_URL)
    return A2AClient(http_client=http, **options)


async def get_task_timing(client: A2AClient) -> tuple[A2ATimeoutError, float]:
    start = anyio.current_time()
    async with client:
        with pytest.raises(A2ATimeoutError) as info:
            await client.get_task("t-1")
    return info.value, anyio.current_time() - start


@on_mock_clock()
@pytest.mark.parametrize("protocol", ["1.0", "rest"])
async def test_a_retry_after_past_the_deadline_ends_the_call_at_once(protocol: str) -> None:
    calls: list[float] = []

    async def handle(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("agent-card.json"):
            rest = {"url": BASE + "/rest", "protocolBinding": "HTTP+JSON", "protocolVersion": "1.0"}
            return httpx.Response(200, json=v1_card(supportedInterfaces=[rest]))
        calls.append(anyio.current_time())
        return httpx.Response(503, headers={"Retry-After": "60"})

    options = {"url": BASE, "endpoint": None} if protocol == "rest" else {}
    error, took = await get_task_timing(client_for(handle, timeout=10, **options))
    assert took == 0 and len(calls) == 1
    assert error.timeout == "deadline"
    assert "retry after 60s, past the call's deadline" in str(error)
    assert "503" in str(error) and isinstance(error.__cause__, Exception)


@on_mock_clock()
async def test_slow_failing_answers_and_their_retries_end_at_the_deadline() -> None:
    calls: list[float] = []

    async def handle(request: httpx.Request) -> httpx.Response:
        calls.append(anyio.current_time())
        await anyio.sleep(3)
        return httpx.Response(503)

    policy = RetryPolicy(attempts=10, backoff=0.1, max_backoff=0.1)
    error, took = await get_task_timing(client_for(handle, timeout=7, retry=policy))
    assert took == pytest.approx(7)
    assert len(calls) == 3  # the third try was cut by the deadline
    assert error.timeout == "deadline" and error.method == "GetTask"


@on_mock_clock()
async def test_discovery_is_inside_the_deadline() -> None:
    async def handle(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(4)
        if request.method == "GET":
            return httpx.Response(200, json=v1_card())
        return httpx.Response(200, json=rpc_result(json.loads(request.content)["id"], TASK))

    error, took = await get_task_timing(client_for(handle, url=BASE, endpoint=None, timeout=6))
    assert took == pytest.approx(6) and error.timeout == "deadline"


async def card_hangs(request: httpx.Request) -> httpx.Response:
    """An agent whose card never comes (and whose calls answer at once)."""
    if request.method == "GET":
        await anyio.sleep_forever()
    return httpx.Response(200, json=rpc_result(json.loads(request.content)["id"], TASK))


@on_mock_clock()
@pytest.mark.parametrize("streams", ["on_event", "cancel_on_exit"])
async def test_a_send_that_may_stream_reads_the_card_within_its_deadline(streams: str) -> None:
    """Whether the send streams is the card's to say: reading it is a part of the call."""
    options: dict[str, Any] = {"on_event": print} if streams == "on_event" else {}
    async with client_for(card_hangs, url=BASE, endpoint=None, timeout=30) as client:
        with pytest.raises(A2ATimeoutError) as info:
            await client.send_message(
                "hi", timeout=2, cancel_on_exit=streams == "cancel_on_exit", **options
            )
        assert anyio.current_time() == pytest.approx(2)
    assert info.value.timeout == "deadline" and info.value.operation == "send"


@on_mock_clock()
@pytest.mark.parametrize("entered", [True, False])
async def test_a_stream_discovers_the_agent_within_its_total_timeout(entered: bool) -> None:
    async with client_for(card_hangs, url=BASE, endpoint=None, timeout=30) as client:
        with pytest.raises(A2ATimeoutError) as info:
            if entered:
                async with client.stream_message("hi", total_timeout=2):
                    pass
            else:
                async for _ in client.stream_message("hi", total_timeout=2):
                    pass
        assert anyio.current_time() == pytest.approx(2)
    assert info.value.timeout == "deadline"


@on_mock_clock()
async def test_a_stream_without_a_total_timeout_reads_the_card_within_the_client_s() -> None:
    async with client_for(card_hangs, url=BASE, endpoint=None, timeout=7) as client:
        with pytest.raises(A2ATimeoutError):
            async with client.stream_message("hi"):
                pass
        assert anyio.current_time() == pytest.approx(7)


@on_mock_clock()
async def test_redirects_and_the_token_fetch_are_inside_the_deadline() -> None:
    async def handle(request: httpx.Request) -> httpx.Response:
        await anyio.sleep(2)
        if request.url.path == "/token":
            return httpx.Response(200, json={"access_token": "t", "expires_in": 3600})
        # every answer is a redirect to the next hop, each two seconds away
        hop = int(request.url.params.get("hop", "0"))
        return httpx.Response(307, headers={"Location": f"{RPC_URL}?hop={hop + 1}"})

    auth = OAuth2ClientCredentials(BASE + "/token", "client", "secret")
    error, took = await get_task_timing(client_for(handle, timeout=5, auth=auth))
    assert took == pytest.approx(5) and error.timeout == "deadline"


@on_mock_clock()
async def test_the_card_fetch_has_the_same_deadline() -> None:
    async def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, headers={"Retry-After": "30"})

    async with client_for(handle, url=BASE, endpoint=None, timeout=10) as client:
        with pytest.raises(A2ATimeoutError, match="past the call's deadline"):
            await client.get_card()
        assert anyio.current_time() == 0


@on_mock_clock()
@pytest.mark.parametrize(
    ("limits", "expired", "after"),
    [
        ({"idle_timeout": 40}, "stream-idle", 40),
        ({"idle_timeout": None, "total_timeout": 90}, "deadline", 90),
        ({"idle_timeout": 500, "total_timeout": 90}, "deadline", 90),
    ],
)
async def test_a_task_that_never_finishes_after_a_refused_re_attach_is_not_polled_forever(
    limits: dict[str, Any], expired: str, after: float
) -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [v1_task(), v1_status("WORKING")])
    agent.errors["SubscribeToTask"] = {"code": -32004, "message": "cannot re-attach"}
    agent.results["GetTask"] = WORKING
    async with connect(agent) as client:
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError) as info:
            await client.stream_message("x", **limits).result()
        took = anyio.current_time() - start
    assert info.value.timeout == expired
    # a poll in flight is cut, not awaited (the clock's sums may land a hair under ``after``)
    assert after - 1e-9 <= took <= after + 3
    assert [c["method"] for c in agent.calls].count("GetTask") > 3


@on_mock_clock()
@pytest.mark.parametrize(
    ("limits", "expired", "after"),
    [
        ({"idle_timeout": None, "total_timeout": 90}, "deadline", 90),
        ({"idle_timeout": 500, "total_timeout": 90}, "deadline", 90),
        ({"idle_timeout": 40, "total_timeout": 90}, "stream-idle", 40),
    ],
)
async def test_subscribe_to_a_task_that_never_finishes_ends_at_its_total_timeout(
    limits: dict[str, Any], expired: str, after: float
) -> None:
    """The stream of ``subscribe`` ends while the task works; re-attaching again is refused,
    so the task is polled: ``total_timeout`` (or the idle limit) ends it."""
    agent = StreamingAgent()
    agent.stream("SubscribeToTask", [v1_task("WORKING")])
    first = agent.responders["SubscribeToTask"]
    refusal = rpc_error_obj(None, -32004, "cannot re-attach")

    def subscribe(req_id: Any, params: Any) -> httpx.Response:
        if len(agent.bodies) == 0:
            return first(req_id, params)
        return httpx.Response(200, json={**refusal, "id": req_id})

    agent.responders["SubscribeToTask"] = subscribe
    agent.results["GetTask"] = WORKING
    async with connect(agent) as client:
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError) as info:
            async with client.subscribe("t-1", **limits) as stream:
                async for _ in stream:
                    pass
        took = anyio.current_time() - start
    assert info.value.timeout == expired
    # a poll in flight is cut, not awaited (the clock's sums may land a hair under ``after``)
    assert after - 1e-9 <= took <= after + 3
    methods = [c["method"] for c in agent.calls]
    assert methods[:2] == ["SubscribeToTask", "SubscribeToTask"]
    assert methods.count("GetTask") > 3
    assert agent.body.closed


@on_mock_clock()
async def test_a_users_own_scope_ends_a_call_with_retries_pending() -> None:
    async def handle(request: httpx.Request) -> httpx.Response:
        return httpx.Response(503, headers={"Retry-After": "5"})

    async with client_for(handle, timeout=None, retry=RetryPolicy(attempts=100)) as client:
        with anyio.move_on_after(12) as scope:
            await client.get_task("t-1")
    assert scope.cancelled_caught and anyio.current_time() == 12


@on_mock_clock()
async def test_a_deadline_a_fan_outs_scope_keeps_sooner_makes_no_scope() -> None:
    from a2a_anyio._deadline import deadline, held

    with anyio.move_on_after(2) as around, held(around):
        within = deadline(5, agent=BASE, operation="send")
        with within as call:
            assert within._scope is None  # the fan-out's scope ends it first
            assert call.until == pytest.approx(anyio.current_time() + 5)
            await anyio.sleep(10)
    assert around.cancelled_caught
    with (
        anyio.move_on_after(9) as around,
        held(around),
        pytest.raises(A2ATimeoutError) as raised,
        deadline(5, agent=BASE, operation="send"),
    ):
        await anyio.sleep(10)  # its own limit is the sooner: its error
    assert raised.value.timeout == "deadline"


@on_mock_clock()
async def test_a_callers_scope_that_moves_later_leaves_the_calls_own_deadline() -> None:
    from a2a_anyio._deadline import deadline

    async def move_later(scope: anyio.CancelScope) -> None:
        await anyio.sleep(1)
        scope.deadline = anyio.current_time() + 20

    async with anyio.create_task_group() as tg:
        with anyio.move_on_after(2) as around:
            tg.start_soon(move_later, around)
            with (
                pytest.raises(A2ATimeoutError) as raised,
                deadline(5, agent=BASE, operation="send"),
            ):
                await anyio.sleep(10)
    assert raised.value.timeout == "deadline" and anyio.current_time() == 5
