"""RetryPolicy, Retry-After, what is retried and what is not; on trio's MockClock."""

from __future__ import annotations

import email.utils
import json
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest

from a2a_anyio import (
    NO_RETRY,
    A2AClient,
    A2AConnectionError,
    A2ADiscoveryError,
    A2AHTTPError,
    RetryAttempt,
    RetryPolicy,
    Task,
    no_retry_delays,
)
from a2a_anyio._dialects._values import retry_after

from ._support import BASE, RPC_URL, on_mock_clock, rpc_result, v1_card

pytestmark = pytest.mark.anyio

TASK = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}


class Flaky:
    """Answers with ``failures`` (status codes, or exceptions to raise) first, then success."""

    def __init__(self, *failures: Any, retry_after: str | None = None) -> None:
        self.failures = list(failures)
        self.retry_after = retry_after
        self.times: list[float] = []
        self.methods: list[str] = []

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.times.append(anyio.current_time())
        if request.method == "GET":
            self.methods.append("card")
        else:
            self.methods.append(json.loads(request.content)["method"])
        if self.failures:
            failure = self.failures.pop(0)
            if isinstance(failure, BaseException):
                raise failure
            headers = {"Retry-After": self.retry_after} if self.retry_after else {}
            return httpx.Response(failure, headers=headers, text="busy")
        if request.method == "GET":
            return httpx.Response(200, json=v1_card())
        req_id = json.loads(request.content)["id"]
        method = json.loads(request.content)["method"]
        result = {"task": TASK} if method == "SendMessage" else TASK
        return httpx.Response(200, json=rpc_result(req_id, result))

    def client(self, **options: Any) -> A2AClient:
        http = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))
        options.setdefault("endpoint", RPC_URL)
        return A2AClient(http_client=http, **options)


@pytest.mark.retry_delays
@on_mock_clock()
async def test_429_with_retry_after_twice_then_success_needs_no_user_code() -> None:
    flaky = Flaky(429, 429, retry_after="1")
    async with flaky.client() as client:
        task = await client.get_task("t-1")
    assert task.id == "t-1"
    assert flaky.times == pytest.approx([0.0, 1.0, 2.0], abs=1e-6)


@pytest.mark.retry_delays
@on_mock_clock()
async def test_503_once_then_success_with_jittered_backoff() -> None:
    seen: list[RetryAttempt] = []
    policy = RetryPolicy(backoff=4, on_retry=seen.append)
    flaky = Flaky(503)
    async with flaky.client(retry=policy) as client:
        await client.cancel_task("t-1")
    [attempt] = seen
    assert attempt.attempt == 1
    assert isinstance(attempt.error, A2AHTTPError) and attempt.error.status_code == 503
    assert 0 <= attempt.delay <= 4
    assert flaky.times[1] - flaky.times[0] == pytest.approx(attempt.delay)


@pytest.mark.retry_delays
@on_mock_clock()
async def test_backoff_grows_and_is_capped() -> None:
    seen: list[float] = []
    policy = RetryPolicy(
        attempts=6, backoff=1, max_backoff=3, on_retry=lambda a: seen.append(a.delay)
    )
    flaky = Flaky(502, 502, 502, 502, 502)
    async with flaky.client(retry=policy) as client:
        await client.get_task("t-1")
    caps = [1, 2, 3, 3, 3]
    assert len(seen) == 5
    assert all(0 <= d <= cap for d, cap in zip(seen, caps, strict=True))


async def test_attempts_run_out_and_the_error_says_so() -> None:
    flaky = Flaky(503, 503, 503, 503)
    async with flaky.client() as client:
        with pytest.raises(A2AHTTPError) as info:
            await client.get_task("t-1")
    assert info.value.status_code == 503
    assert info.value.attempts == 3
    assert "gave up after 3 attempts" in str(info.value)
    assert len(flaky.times) == 3


async def test_a_send_that_reached_the_server_is_not_retried() -> None:
    flaky = Flaky(503)
    async with flaky.client() as client:
        with pytest.raises(A2AHTTPError):
            await client.send_message("hi")
    assert flaky.methods == ["SendMessage"]


async def test_a_send_whose_connection_failed_is_retried() -> None:
    refused = httpx.ConnectError("refused")
    flaky = Flaky(refused, refused)
    async with flaky.client() as client:
        result = await client.send_message("hi")
    assert isinstance(result, Task)
    assert flaky.methods == ["SendMessage"] * 3

    reset = httpx.ReadError("reset")
    flaky = Flaky(reset)
    async with flaky.client() as client:
        with pytest.raises(A2AConnectionError) as info:
            await client.send_message("hi")
    assert info.value.request_sent
    assert flaky.methods == ["SendMessage"]


@pytest.mark.retry_delays
@on_mock_clock()
async def test_the_retry_deadline_bounds_all_tries() -> None:
    flaky = Flaky(429, 429, retry_after="5")
    async with flaky.client(retry=RetryPolicy(attempts=5, deadline=7)) as client:
        with pytest.raises(A2AHTTPError) as info:
            await client.get_task("t-1")
    assert "7" in str(info.value) and "deadline" in str(info.value)
    assert len(flaky.times) == 2  # the third try would start after 10 s


async def test_predicate_and_async_hook() -> None:
    flaky = Flaky(503, 503)
    async with flaky.client(retry=RetryPolicy(retry_if=lambda e: False)) as client:
        with pytest.raises(A2AHTTPError):
            await client.get_task("t-1")
    assert len(flaky.times) == 1

    calls: list[int] = []

    async def hook(attempt: RetryAttempt) -> None:
        await anyio.lowlevel.checkpoint()
        calls.append(attempt.attempt)

    flaky = Flaky(503, 503)
    async with flaky.client(retry=RetryPolicy(on_retry=hook)) as client:
        await client.get_task("t-1")
    assert calls == [1, 2]


async def test_no_retry_and_a_bad_policy() -> None:
    flaky = Flaky(503)
    async with flaky.client(retry=NO_RETRY) as client:
        with pytest.raises(A2AHTTPError):
            await client.get_task("t-1")
    with pytest.raises(ValueError, match="attempts"):
        RetryPolicy(attempts=0)


@pytest.mark.retry_delays
async def test_the_switch_removes_the_waits_in_real_time() -> None:
    flaky = Flaky(429, 429, retry_after="100")
    with anyio.fail_after(2), no_retry_delays():
        async with flaky.client() as client:
            await client.get_task("t-1")
    assert len(flaky.times) == 3


async def test_card_requests_are_retried() -> None:
    flaky = Flaky(503, 503)
    async with flaky.client(endpoint=None, url=BASE) as client:
        card = await client.get_card()
    assert card.name == "Test Agent"
    assert flaky.methods == ["card"] * 3

    flaky = Flaky(500)
    async with flaky.client(endpoint=None, url=BASE) as client:
        with pytest.raises(A2ADiscoveryError) as info:
            await client.get_card()
    assert info.value.status_code == 500
    assert flaky.methods == ["card"]


def test_retry_after_values() -> None:
    assert retry_after("3") == 3.0
    assert retry_after(None) is None
    assert retry_after("soon") is None
    date = email.utils.formatdate(1_000_030, usegmt=True)
    assert retry_after(date, now=1_000_000) == pytest.approx(30)
    assert retry_after(date, now=2_000_000) == 0.0
