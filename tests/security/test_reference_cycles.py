"""What a call leaves behind is freed as it ends, not by the garbage collector: no object of
the library, no frame of its code and no httpx response is part of a reference cycle after a
call answered, refused or failed, a stream read to its end or broken, or a fan-out's agent cut
at the deadline. A cycle is found only by the collector's next full pass, which walks every
object alive: in a fan-out to thousands of agents, the cycles of each call made those passes
the larger part of the client's CPU. Over a socket of the test's own loop (``_raw_server``),
on the virtual clocks."""

from __future__ import annotations

import gc
import json
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from types import FrameType

import anyio
import anyio.lowlevel
import httpx
import pytest

from a2a_anyio import A2AClient, A2AClientError, fan_out

from ..unit._support import on_mock_clock
from ._raw_server import Answer, RawServer, Request, jsonrpc, sse

pytestmark = [pytest.mark.anyio, on_mock_clock()]

EVENTS = {"Content-Type": "text/event-stream"}
JSON = {"Content-Type": "application/json"}
WORKING = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}
DONE = {**WORKING, "status": {"state": "TASK_STATE_COMPLETED"}}


def rpc_error(request: Request, code: int = -32001) -> bytes:
    error = {"code": code, "message": "no such task"}
    return json.dumps({"jsonrpc": "2.0", "id": request.rpc_id, "error": error}).encode()


def answer(request: Request) -> Answer:
    """The agent: how it answers each test's request is in the request's path."""
    route = request.path.rsplit("/", 1)[-1]
    if route == "unary":
        return Answer([jsonrpc(request, DONE)], JSON)
    if route == "send":
        return Answer([jsonrpc(request, {"task": DONE})], JSON)
    if route == "stream":
        return Answer([sse(request, {"task": WORKING}, {"task": DONE})], EVENTS)
    if route == "stream-error":
        return Answer(
            [sse(request, {"task": WORKING}), b"data: " + rpc_error(request) + b"\n\n"], EVENTS
        )
    if route == "stream-cut":
        return Answer([sse(request, {"task": WORKING}), b"data: {cut"], EVENTS)
    if route == "refused":
        return Answer([b"<html>down</html>"], {"Content-Type": "text/html"}, status=500)
    if route == "bad-json":
        return Answer([b"{not json"], JSON)
    if route == "held":  # a task that never ends: its stream stays open
        return Answer([sse(request, {"task": WORKING})], EVENTS, hold=True)
    return Answer([rpc_error(request)], JSON)


async def get(client: A2AClient) -> None:
    await client.get_task("t-1")


async def send(client: A2AClient) -> None:
    await client.send_message("hi", blocking=False)


async def stream(client: A2AClient) -> None:
    async with client.stream_message("hi") as events:
        async for _ in events:
            pass


async def fanned_out(client: A2AClient) -> None:
    (result,) = await fan_out([client], "hi", timeout=5)
    assert result.cancelled


CALLS: dict[str, tuple[str, Callable[[A2AClient], Awaitable[None]]]] = {
    "answered": ("unary", get),
    "sent": ("send", send),
    "task-not-found": ("missing", get),
    "refused": ("refused", get),
    "bad-json": ("bad-json", get),
    "streamed": ("stream", stream),
    "stream-error": ("stream-error", stream),
    "stream-cut": ("stream-cut", stream),
    "fan-out-cut": ("held", fanned_out),
}
#: The calls that end without an error.
ANSWERED = ("answered", "sent", "streamed", "fan-out-cut")


def ours(obj: object) -> bool:
    if isinstance(obj, FrameType):
        return "a2a_anyio" in obj.f_code.co_filename
    return type(obj).__module__.startswith("a2a_anyio") or isinstance(obj, httpx.Response)


def shown(obj: object) -> str:
    if isinstance(obj, FrameType):
        return f"frame of {obj.f_code.co_name}"
    return type(obj).__qualname__


def cycle_through(start: object, garbage: dict[int, object]) -> str | None:
    """The cycle ``start`` is part of, as the objects along it; None when it is in none."""
    came_from: dict[int, object] = {}
    todo = [start]
    while todo:
        obj = todo.pop(0)
        for ref in gc.get_referents(obj):
            if ref is start:
                path = [obj]
                while path[-1] is not start:
                    path.append(came_from[id(path[-1])])
                return " -> ".join(shown(o) for o in [*reversed(path), start])
            if id(ref) in garbage and id(ref) not in came_from:
                came_from[id(ref)] = obj
                todo.append(ref)
    return None


@contextmanager
def cycles_of_ours() -> Iterator[list[str]]:
    """The cycles the block left through objects of ours (the collector off meanwhile)."""
    found: list[str] = []
    gc.collect()
    gc.disable()
    try:
        yield found
    finally:
        gc.set_debug(gc.DEBUG_SAVEALL)
        try:
            gc.collect()
            garbage = {id(o): o for o in gc.garbage}
            for obj in gc.garbage:
                cycle = cycle_through(obj, garbage) if ours(obj) else None
                if cycle is not None:
                    found.append(cycle)
        finally:
            gc.set_debug(0)
            gc.garbage.clear()
            gc.enable()


@pytest.mark.parametrize("case", list(CALLS))
async def test_a_call_leaves_no_reference_cycle_of_ours(case: str) -> None:
    route, call = CALLS[case]
    server = RawServer(answer)
    async with server.serve() as url:
        with cycles_of_ours() as found:
            async with A2AClient(endpoint=f"{url}/{route}", protocol="1.0") as client:
                try:
                    await call(client)
                except A2AClientError:
                    assert case not in ANSWERED
                else:
                    assert case in ANSWERED
                await anyio.lowlevel.checkpoint()
    assert found == [], found[0]
