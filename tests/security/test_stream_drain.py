"""A stream closed at its final event reads the rest of its body first, briefly, so that its
connection is used again (``_http_sse.DRAIN_GRACE``, ``DRAIN_BYTES``): the next call goes over
it; a body held open past the grace, longer than the budget or cut, is closed with its
connection as before, and what comes after the final event is never seen nor raised. The drain keeps to
the caller's limits: a cancelled caller does not wait, and a stream's own deadline during it
is no error. On the virtual clocks, over a socket of the test's own loop (``_raw_server``)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import anyio
import pytest

from a2a_anyio import A2AClient, StreamEvent, Task, TaskState
from a2a_anyio._http_sse import DRAIN_BYTES, DRAIN_GRACE

from ..unit._support import on_mock_clock
from ._raw_server import Answer, RawServer, Request, sse

pytestmark = [pytest.mark.anyio, on_mock_clock()]

EVENTS = {"Content-Type": "text/event-stream"}
WORKING = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}
DONE = {**WORKING, "status": {"state": "TASK_STATE_COMPLETED"}}
GARBAGE = b"data: {not json\n\n\x00\xff no event end"


def done_then(tail: Callable[[Request], Iterable[bytes]], *, hold: bool = False) -> RawServer:
    """A server whose streams answer working, completed (the final event), then ``tail``."""

    def answer(request: Request) -> Answer:
        head = [sse(request, {"task": WORKING}), sse(request, {"task": DONE})]
        return Answer(itertools.chain(head, tail(request)), EVENTS, hold=hold)

    return RawServer(answer)


def agent(url: str, **options: Any) -> A2AClient:
    return A2AClient(endpoint=url + "/rpc", protocol="1.0", **options)


async def streamed(client: A2AClient, **options: Any) -> list[StreamEvent]:
    async with client.stream_message("hi", **options) as stream:
        events = [event async for event in stream]
        assert stream.finished
        return events


def completed(events: list[StreamEvent]) -> None:
    assert len(events) == 2  # what followed the final event is not seen
    last = events[-1]
    assert isinstance(last, Task) and last.status.state is TaskState.COMPLETED


@pytest.mark.parametrize(
    "tail",
    [
        pytest.param(lambda r: [], id="nothing"),
        pytest.param(lambda r: [sse(r, {"task": WORKING})], id="another-event"),
        pytest.param(lambda r: [GARBAGE], id="garbage"),
    ],
)
async def test_the_next_call_uses_the_connection_of_a_stream_that_ended_at_its_final_event(
    tail: Callable[[Request], Iterable[bytes]],
) -> None:
    server = done_then(tail)
    async with server.serve() as url, agent(url) as client:
        completed(await streamed(client))
        completed(await streamed(client))
        assert anyio.current_time() == 0  # the body's end came at once: no grace waited
    assert server.connections == 1


PIECE = b"x" * 8192


def cut(request: Request) -> Iterator[bytes]:
    yield PIECE
    raise OSError("gone")  # the server closes the connection mid-body: a read error


@pytest.mark.parametrize(
    ("server", "closed_at"),
    [
        pytest.param(
            lambda: done_then(lambda r: [PIECE] * (DRAIN_BYTES // len(PIECE) + 2)),
            0,
            id="a-tail-past-the-byte-budget",
        ),
        pytest.param(
            lambda: done_then(lambda r: [], hold=True), DRAIN_GRACE, id="held-open-past-the-grace"
        ),
        pytest.param(lambda: done_then(cut), 0, id="cut-mid-body"),
    ],
)
async def test_a_body_that_does_not_end_within_the_bounds_is_closed(
    server: Callable[[], RawServer], closed_at: float
) -> None:
    raw = server()
    async with raw.serve() as url, agent(url) as client:
        completed(await streamed(client))
        assert anyio.current_time() == pytest.approx(closed_at)
        await raw.until_no_connection()
        completed(await streamed(client))
    assert raw.connections == 2


async def test_the_streams_own_deadline_during_the_drain_is_no_error() -> None:
    server = done_then(lambda r: [], hold=True)
    async with server.serve() as url, agent(url) as client:
        completed(await streamed(client, total_timeout=DRAIN_GRACE / 2))
        assert anyio.current_time() == pytest.approx(DRAIN_GRACE / 2)
        await server.until_no_connection()


async def test_the_callers_deadline_during_the_drain_ends_it_then() -> None:
    server = done_then(lambda r: [], hold=True)
    async with server.serve() as url, agent(url) as client:
        with anyio.move_on_after(DRAIN_GRACE / 2) as scope:
            await streamed(client)
        assert scope.cancelled_caught
        assert anyio.current_time() == pytest.approx(DRAIN_GRACE / 2)
        await server.until_no_connection()


class CancelAtTheEnd:
    """Cancels the caller's scope as the final event is delivered."""

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()

    def event(self, op: object, event: StreamEvent) -> None:
        if isinstance(event, Task) and event.status.state.is_final:
            self.scope.cancel()


async def test_a_cancelled_caller_closes_at_once() -> None:
    server = done_then(lambda r: [], hold=True)
    canceller = CancelAtTheEnd()
    async with server.serve() as url, agent(url, interceptors=[canceller]) as client:
        with canceller.scope:
            completed(await streamed(client))  # delivered: the stream had ended
            await anyio.lowlevel.checkpoint()
        assert canceller.scope.cancelled_caught
        assert anyio.current_time() == 0
        await server.until_no_connection()
