"""RetryPolicy, Retry-After, what is retried and what is not; waits on the virtual clocks."""

from __future__ import annotations

import email.utils
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest

from a2a_anyio import (
    NO_RETRY,
    A2AClient,
    A2AClientError,
    A2AConnectionError,
    A2ADiscoveryError,
    A2AHTTPError,
    RetryAttempt,
    RetryPolicy,
    Task,
    no_retry_delays,
)
from a2a_anyio._dialects._values import retry_after
from a2a_anyio.testing import FakeAgent, SkillContext, status
from a2a_anyio.testing._skills import Emit

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


@on_mock_clock()
@pytest.mark.retry_delays
async def test_the_switch_removes_the_waits() -> None:
    flaky = Flaky(429, 429, retry_after="100")
    with anyio.fail_after(2), no_retry_delays():
        async with flaky.client() as client:
            await client.get_task("t-1")
    assert len(flaky.times) == 3
    assert flaky.times[0] == flaky.times[-1]  # not even virtual time passed


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


# -- what is retried, operation by operation ---------------------------------------------------
#
# A refusal (429, or 503 with Retry-After) is retried for every operation: the agent did not
# take the request. A 502 or a 503 without Retry-After only for idempotent ones. The retry is
# the same request: same message id, same JSON-RPC id, so that an agent can deduplicate.

PUSH_URL = "https://hooks.example/a2a"
Run = Callable[[A2AClient, str], Awaitable[object]]


async def _stream(client: A2AClient, task_id: str) -> object:
    async with client.stream_message("streamed") as stream:
        return await stream.result()


#: operation -> (the fault's operation name, how to run it on a task, idempotent)
OPERATIONS: dict[str, tuple[str, Run, bool]] = {
    "send": ("send", lambda c, t: c.send_message("again"), False),
    "stream": ("stream", _stream, False),
    "get": ("get", lambda c, t: c.get_task(t), True),
    "list": ("list", lambda c, t: c.list_tasks(), True),
    "cancel": ("cancel", lambda c, t: c.cancel_task(t), True),
    "push_create": (
        "push_create",
        lambda c, t: c.create_push_config(t, PUSH_URL, config_id="p2"),
        False,
    ),
    "push_get": ("push_get", lambda c, t: c.get_push_config(t, "p1"), True),
    "push_list": ("push_list", lambda c, t: c.list_push_configs(t), True),
    "push_delete": ("push_delete", lambda c, t: c.delete_push_config(t, "p1"), True),
    "call": ("get", lambda c, t: c.call("GetTask", {"id": t}), False),
    "call-idempotent": ("get", lambda c, t: c.call("GetTask", {"id": t}, idempotent=True), True),
}


@asynccontextmanager
async def working_task(
    **options: Any,
) -> AsyncIterator[tuple[FakeAgent, A2AClient, str]]:
    """A FakeAgent (in process) with a task that keeps working and has push config "p1"."""
    hooks = httpx.AsyncClient(transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    agent = FakeAgent(push_client=hooks)
    release = anyio.Event()

    @agent.skill("done")  # the first: what a message without a skillId runs
    async def done(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("completed")

    @agent.skill("work")
    async def work(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        await release.wait()

    async with (
        hooks,
        httpx.AsyncClient(transport=agent.transport()) as http,
        A2AClient(agent.url, http_client=http, **options) as client,
    ):
        task = await client.send_message("work", blocking=False, metadata={"skillId": "work"})
        assert isinstance(task, Task)
        await client.create_push_config(task.id, PUSH_URL, config_id="p1")
        agent.clear_requests()
        yield agent, client, task.id
        release.set()


def _same_request_twice(agent: FakeAgent, op: str) -> dict[str, Any]:
    first, again = agent.requests_for(op)
    assert again.raw_body == first.raw_body  # same JSON-RPC id, same message id
    body: dict[str, Any] = first.body
    return body


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize("refusal", ["429", "503+Retry-After", "429+Retry-After-date-past"])
async def test_a_refusal_is_retried_for_every_operation_with_the_same_ids(
    operation: str, refusal: str
) -> None:
    op, run, _ = OPERATIONS[operation]
    status = int(refusal[:3])
    retry_after = {"429": None, "503+Retry-After": "0"}.get(
        refusal, "Thu, 01 Jan 1970 00:00:00 GMT"
    )
    async with working_task() as (agent, client, task_id):
        agent.fault(op, times=1, http_status=status, retry_after=retry_after)
        await run(client, task_id)
    body = _same_request_twice(agent, op)
    assert isinstance(body["id"], int)
    if op in ("send", "stream"):
        assert body["params"]["message"]["messageId"]


@pytest.mark.parametrize("operation", sorted(OPERATIONS))
@pytest.mark.parametrize("status", [502, 503, 504])
async def test_a_server_error_is_retried_for_idempotent_operations_only(
    operation: str, status: int
) -> None:
    op, run, idempotent = OPERATIONS[operation]
    async with working_task() as (agent, client, task_id):
        agent.fault(op, times=1, http_status=status)
        if idempotent:
            await run(client, task_id)
            _same_request_twice(agent, op)
        else:
            with pytest.raises(A2AHTTPError) as info:
                await run(client, task_id)
            assert info.value.status_code == status
            assert len(agent.requests_for(op)) == 1


async def test_retry_if_decides_last_among_the_safe_cases() -> None:
    asked: list[int] = []

    def never(error: A2AClientError) -> bool:
        asked.append(getattr(error, "status_code", 0))
        return False

    def always(error: A2AClientError) -> bool:
        asked.append(getattr(error, "status_code", 0))
        return True

    # It can say no to what would be retried: a 429 on a send.
    async with working_task(retry=RetryPolicy(retry_if=never)) as (agent, client, _):
        agent.fault("send", times=1, http_status=429)
        with pytest.raises(A2AHTTPError):
            await client.send_message("again")
    assert asked == [429] and len(agent.requests_for("send")) == 1
    # It is not asked when another try is unsafe: a 502 on a send.
    asked.clear()
    async with working_task(retry=RetryPolicy(retry_if=always)) as (agent, client, task_id):
        agent.fault("send", times=1, http_status=502)
        with pytest.raises(A2AHTTPError):
            await client.send_message("again")
        assert asked == [] and len(agent.requests_for("send")) == 1
        # It can say yes to what would not be retried: a 500 on a get.
        agent.fault("get", times=1, http_status=500)
        await client.get_task(task_id)
    assert asked == [500] and len(agent.requests_for("get")) == 2


async def test_a_send_over_rest_answered_429_is_sent_again_unchanged() -> None:
    agent = FakeAgent(binding="rest")
    agent.fault("send", times=1, http_status=429, retry_after="0")
    async with (
        httpx.AsyncClient(transport=agent.transport()) as http,
        A2AClient(agent.url, http_client=http, bindings=("rest",)) as client,
    ):
        await client.send_message("hello")
    _same_request_twice(agent, "send")
