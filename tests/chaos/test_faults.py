"""The client against a real server that breaks in one way per test (``chaos_server.py``).

Every test runs on asyncio and trio, within ``BOUND`` seconds, and ends by checking from the
server's side that the client left no TCP connection open.

What the client does about each fault today is asserted in one place, the ``expect_*``
functions of the section "Current outcomes" below: when a behaviour changes (retries, stream
resume, error mapping), the function of that fault changes, and nothing else. Retries and
resume run with their real delays here (no ``no_retry_delays``): Retry-After is honoured on
the wall clock, and a resumed stream may either re-attach (SubscribeToTask) or, when its
jittered backoff outlasts the 300 ms the task still works, poll its final state instead.
"""

from __future__ import annotations

import time
import tracemalloc
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    A2AClientError,
    A2AConnectionError,
    A2AHTTPError,
    A2AProtocolError,
    A2AServerError,
    A2ATimeoutError,
    AgentPool,
    Message,
    MessageStream,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
)

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

BOUND = 5.0  # seconds, for each whole test
ARTIFACT_TEXT = "Hello, world!"
MiB = 1024 * 1024

T = TypeVar("T")
E = TypeVar("E", bound=BaseException)


# -- helpers ------------------------------------------------------------------------------------


@dataclass
class Outcome(Generic[T]):
    """What one call did: its value, or the client error it raised, and how long it took."""

    value: T | None = None
    error: A2AClientError | None = None
    seconds: float = 0.0

    def raised(self, cls: type[E]) -> E:
        """The error, checked to be a ``cls`` (the assertion names what happened instead)."""
        assert isinstance(self.error, cls), (
            f"expected {cls.__name__}, got error {self.error!r} / value {self.value!r}"
        )
        return self.error

    def returned(self) -> T:
        assert self.error is None, f"expected a value, got {self.error!r}"
        assert self.value is not None
        return self.value


async def attempt(call: Callable[[], Awaitable[T]]) -> Outcome[T]:
    """Run ``call``; a client error is kept in the outcome, anything else propagates."""
    start = time.monotonic()
    try:
        value = await call()
    except A2AClientError as exc:
        return Outcome(error=exc, seconds=time.monotonic() - start)
    return Outcome(value=value, seconds=time.monotonic() - start)


@dataclass
class Streamed:
    """A stream read to its end: its events, the task folded from them, its resumes."""

    events: list[StreamEvent] = field(default_factory=list)
    task: Task | None = None
    resumes: int = 0


async def read_stream(
    client: A2AClient, *, idle_timeout: float | None = None, resume: bool | None = None
) -> Streamed:
    async with client.stream_message("hello", idle_timeout=idle_timeout, resume=resume) as stream:
        events = [event async for event in stream]
        return Streamed(events, stream.task, stream.resumes)


def agent(base: str, fault: str, **kwargs: Any) -> A2AClient:
    """A client of the agent with ``fault``; it is its own client for per-client faults."""
    headers = {"X-Chaos-Client": uuid.uuid4().hex}
    return A2AClient(f"{base}/{fault}", headers=headers, **kwargs)


async def completed_task_id(base: str) -> str:
    """The id of a completed task (tasks are shared by every fault of the server)."""
    async with agent(base, "ok") as client:
        task = await client.send_message("hello")
    assert isinstance(task, Task)
    return task.id


async def assert_no_connections_left(base: str) -> None:
    """The server holds no connection open but the one asking (polled, bounded)."""
    seen = -1
    async with httpx.AsyncClient(timeout=2.0) as http:
        for _ in range(100):
            seen = (await http.get(f"{base}/_connections")).json()["open"]
            if seen == 0:
                return
            await anyio.sleep(0.02)
    pytest.fail(f"the server still holds {seen} connection(s) open")


def kinds(events: list[StreamEvent]) -> list[str]:
    """Short names of events: task:<state>, status:<state>, artifact, message."""
    out = []
    for event in events:
        if isinstance(event, Task):
            out.append(f"task:{event.status.state.value}")
        elif isinstance(event, TaskStatusUpdateEvent):
            out.append(f"status:{event.status.state.value}")
        elif isinstance(event, TaskArtifactUpdateEvent):
            out.append("artifact")
        else:
            assert isinstance(event, Message)
            out.append("message")
    return out


OK_EVENTS = ["task:submitted", "status:working", "artifact", "artifact", "status:completed"]
BEFORE_CUT = ["task:submitted", "status:working"]


def assert_completed(task: Task | Message | None) -> None:
    assert isinstance(task, Task)
    assert task.status.state is TaskState.COMPLETED
    assert task.text == ARTIFACT_TEXT
    assert [a.artifact_id for a in task.artifacts] == ["result"]


async def read_all(stream: MessageStream) -> None:
    async with stream:
        async for _ in stream:
            pass


async def resume_by_hand(client: A2AClient, task_id: str) -> None:
    """Re-attach to a task that still works: snapshot, its artifact, completed; then GetTask
    says completed, and subscribing to the now terminal task is -32004."""
    async with client.subscribe(task_id) as stream:
        events = [event async for event in stream]
        assert kinds(events) == ["task:working", "artifact", "status:completed"]
        assert_completed(stream.task)
    assert_completed(await client.get_task(task_id))
    again = await attempt(lambda: read_all(client.subscribe(task_id)))
    assert again.raised(UnsupportedOperationError).code == -32004


# -- Current outcomes ---------------------------------------------------------------------------
# One function per fault: what the client does about it today.


def expect_reset(sent: Outcome[Any], got: Outcome[Any]) -> None:
    # A send that reached the server is never repeated; GetTask is retried (3 attempts).
    err = sent.raised(A2AConnectionError)
    assert not isinstance(err, A2ATimeoutError)
    assert err.retryable
    assert err.attempts == 1
    err = got.raised(A2AConnectionError)
    assert err.attempts == 3
    assert "gave up after 3 attempts" in str(err)


def expect_close(outcome: Outcome[Any]) -> None:
    # A clean FIN instead of any response ("Server disconnected without sending a response").
    err = outcome.raised(A2AConnectionError)
    assert not isinstance(err, A2ATimeoutError)
    assert "disconnected" in str(err)
    assert err.attempts == 1


async def expect_cut(client: A2AClient, outcome: Outcome[Streamed], *, resume: bool) -> None:
    """cut-stream (FIN mid-body), cut-stream-rst (RST mid-body) and eof-working (clean end
    while the task works): resumed seamlessly by default; without resume, a connection error
    after the two events, and the task can be followed by hand."""
    if resume:
        streamed = outcome.returned()
        names = kinds(streamed.events)
        assert names[:2] == BEFORE_CUT
        # Re-attached: artifact + completed status; or polled: the completed task.
        assert names[2:] in (["artifact", "status:completed"], ["task:completed"])
        assert_completed(streamed.task)
        assert streamed.resumes == 1
        return
    err = outcome.raised(A2AConnectionError)
    assert not isinstance(err, A2ATimeoutError)
    assert kinds(err.events) == BEFORE_CUT
    assert isinstance(err.events[0], Task)
    await resume_by_hand(client, err.events[0].id)


def expect_rate_limit(sent: Outcome[Any], got: Outcome[Task]) -> None:
    # 429 + Retry-After: 1 on the first two calls of each client. The server refused them, so
    # a send is repeated as GetTask is, after the Retry-After asked for, twice.
    for outcome in (sent, got):
        assert isinstance(outcome.returned(), (Task, Message))
        assert outcome.seconds >= 1.9
    assert_completed(got.returned())


def expect_unavailable_once(sent: Outcome[Any], got: Outcome[Task]) -> None:
    err = sent.raised(A2AHTTPError)
    assert err.status_code == 503
    assert err.retryable
    assert err.attempts == 1
    assert_completed(got.returned())


# -- the tests ----------------------------------------------------------------------------------


async def test_ok(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        async with agent(chaos_server, "ok") as client:
            task = await client.send_message("hello")
            assert_completed(task)
            assert isinstance(task, Task)
            assert_completed(await client.get_task(task.id))
            streamed = await read_stream(client)
            assert kinds(streamed.events) == OK_EVENTS
            assert_completed(streamed.task)
            assert streamed.resumes == 0
            assert isinstance(streamed.task, Task)
            terminal = await attempt(lambda: read_all(client.subscribe(task.id)))
            assert terminal.raised(UnsupportedOperationError).code == -32004
        await assert_no_connections_left(chaos_server)


async def test_reset(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        task_id = await completed_task_id(chaos_server)
        async with agent(chaos_server, "reset") as client:
            sent = await attempt(lambda: client.send_message("hello"))
            got = await attempt(lambda: client.get_task(task_id))
        expect_reset(sent, got)
        await assert_no_connections_left(chaos_server)


async def test_close_without_response(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        async with agent(chaos_server, "close") as client:
            outcome = await attempt(lambda: client.send_message("hello"))
        expect_close(outcome)
        await assert_no_connections_left(chaos_server)


@pytest.mark.parametrize("resume", [True, False], ids=["resume", "no-resume"])
@pytest.mark.parametrize("fault", ["cut-stream", "cut-stream-rst", "eof-working"])
async def test_stream_cut(chaos_server: str, fault: str, resume: bool) -> None:
    with anyio.fail_after(BOUND):
        async with agent(chaos_server, fault) as client:
            outcome = await attempt(lambda: read_stream(client, resume=resume))
            await expect_cut(client, outcome, resume=resume)
        await assert_no_connections_left(chaos_server)


async def test_drip_hits_the_idle_timeout(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        async with agent(chaos_server, "drip") as client:
            outcome = await attempt(lambda: read_stream(client, idle_timeout=0.5))
        err = outcome.raised(A2ATimeoutError)
        assert err.timeout == "stream-idle"
        assert kinds(err.events) == ["task:submitted"]
        assert 0.4 <= outcome.seconds < 2.0
        await assert_no_connections_left(chaos_server)


async def test_keepalive_comments_then_events(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        # a second of pings and no event, with a 0.5 s idle limit: pings are proof of life
        async with agent(chaos_server, "keepalive", idle_timeout=0.5) as client:
            outcome = await attempt(lambda: read_stream(client))
        streamed = outcome.returned()
        assert kinds(streamed.events) == OK_EVENTS
        assert_completed(streamed.task)
        assert outcome.seconds >= 0.9  # the pings came first
        await assert_no_connections_left(chaos_server)


async def test_crlf_multiline_split_anywhere(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        async with agent(chaos_server, "crlf-multiline") as client:
            outcome = await attempt(lambda: read_stream(client))
        streamed = outcome.returned()
        assert kinds(streamed.events) == OK_EVENTS
        assert_completed(streamed.task)
        await assert_no_connections_left(chaos_server)


async def test_truncated_json(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        async with agent(chaos_server, "truncated-json") as client:
            outcome = await attempt(lambda: client.send_message("hello"))
        err = outcome.raised(A2AProtocolError)
        assert "not JSON" in str(err)
        await assert_no_connections_left(chaos_server)


async def test_wrong_id(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        async with agent(chaos_server, "wrong-id") as client:
            outcome = await attempt(lambda: client.send_message("hello"))
        err = outcome.raised(A2AProtocolError)
        assert "'not-" in str(err)
        await assert_no_connections_left(chaos_server)


async def test_html_200(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        async with agent(chaos_server, "html-200") as client:
            outcome = await attempt(lambda: client.send_message("hello"))
        err = outcome.raised(A2AProtocolError)
        assert "<html" in str(err).lower()
        await assert_no_connections_left(chaos_server)


async def test_html_502(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        async with agent(chaos_server, "html-502") as client:
            outcome = await attempt(lambda: client.send_message("hello"))
        err = outcome.raised(A2AHTTPError)
        assert err.status_code == 502
        assert "502 Bad Gateway" in err.body
        assert err.retryable
        await assert_no_connections_left(chaos_server)


async def test_rate_limit(chaos_server: str) -> None:
    with anyio.fail_after(2 * BOUND):  # two calls that each wait two seconds
        task_id = await completed_task_id(chaos_server)
        async with agent(chaos_server, "rate-limit") as client:
            sent = await attempt(lambda: client.send_message("hello"))
        async with agent(chaos_server, "rate-limit") as client:  # another client: fresh count
            got = await attempt(lambda: client.get_task(task_id))
        expect_rate_limit(sent, got)
        await assert_no_connections_left(chaos_server)


async def test_unavailable_once(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        task_id = await completed_task_id(chaos_server)
        async with agent(chaos_server, "unavailable-once") as client:
            sent = await attempt(lambda: client.send_message("hello"))
        async with agent(chaos_server, "unavailable-once") as client:
            got = await attempt(lambda: client.get_task(task_id))
        expect_unavailable_once(sent, got)
        await assert_no_connections_left(chaos_server)


@pytest.mark.parametrize(
    ("fault", "peak_limit"),
    [
        # The declared Content-Length alone is over the limit: nothing is read.
        pytest.param("huge", 8 * MiB, id="content-length"),
        # Read up to the 32 MiB limit, then given up.
        pytest.param("huge-chunked", 40 * MiB, id="chunked"),
    ],
)
async def test_huge_response(chaos_server: str, fault: str, peak_limit: int) -> None:
    with anyio.fail_after(BOUND):
        async with agent(chaos_server, fault) as client:
            await client.get_card()
            tracing = tracemalloc.is_tracing()
            if not tracing:
                tracemalloc.start()
            tracemalloc.reset_peak()
            try:
                outcome = await attempt(lambda: client.send_message("hello"))
                peak = tracemalloc.get_traced_memory()[1]
            finally:
                if not tracing:
                    tracemalloc.stop()
        err = outcome.raised(A2AProtocolError)
        assert "bytes" in str(err)
        assert peak < peak_limit, f"the client held {peak / MiB:.1f} MiB at its peak"
        await assert_no_connections_left(chaos_server)


async def test_slow_drip_hits_the_call_deadline(chaos_server: str) -> None:
    # Each byte comes 0.1 s after the last: no read ever waits long, only the deadline ends it.
    with anyio.fail_after(BOUND):
        async with agent(chaos_server, "slow-drip", timeout=1.0) as client:
            await client.get_card()
            outcome = await attempt(lambda: client.send_message("hello"))
        err = outcome.raised(A2ATimeoutError)
        assert err.timeout == "deadline"
        assert 0.9 <= outcome.seconds < 2.0
        await assert_no_connections_left(chaos_server)


async def test_a_full_pool_waits_no_longer_than_the_call_deadline(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        # The pool's own wait for a connection is 30 s; the call's deadline is 1 s.
        async with (
            AgentPool(max_connections=1) as pool,
            A2AClient(f"{chaos_server}/drip", http_client=pool.http_client, timeout=1.0) as client,
        ):
            await client.get_card()
            async with client.stream_message("hello") as stream:  # holds the one connection
                await stream.__anext__()
                outcome = await attempt(lambda: client.get_task("any"))
        err = outcome.raised(A2ATimeoutError)
        assert err.timeout == "deadline"
        assert 0.9 <= outcome.seconds < 2.0
        await assert_no_connections_left(chaos_server)


async def test_stream_error_event(chaos_server: str) -> None:
    with anyio.fail_after(BOUND):
        async with agent(chaos_server, "stream-error") as client:
            outcome = await attempt(lambda: read_stream(client))
        err = outcome.raised(A2AServerError)
        assert err.code == -32603
        assert "the agent crashed" in str(err)
        assert kinds(err.events) == ["task:submitted", "status:working"]
        await assert_no_connections_left(chaos_server)
