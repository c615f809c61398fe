"""Streaming decode: one stream of E events (status and artifact updates) per round.

The events are shaped like the recorded v1.0 stream (``tests/frames/v1_0/stream_message.json``)
and served by ``httpx.MockTransport`` as a streamed body, one event per body chunk (as an
agent that flushes each event delivers them) unless ``per_chunk`` says otherwise.

- floor: ``httpx_sse.aconnect_sse`` plus ``json.loads`` of every event;
- a2a-anyio: ``client.stream_message(...)``, every event typed and folded by the task reducer,
  the idle limit left to the transport as over the network (``idle_timeout=None``: over httpx's
  network transport it is httpx's per-read timeout, which costs a2a-anyio nothing; a
  MockTransport has none);
- a2a-anyio-scoped: the same with the default ``idle_timeout``, which over a transport that
  cannot bound its reads (this MockTransport) puts a cancel scope around each read;
- a2a-sdk: the 1.x ``Client.send_message`` with streaming on (asyncio only).

The result is the median over rounds of microseconds per event (process CPU time; wall
time is kept too).
"""

from __future__ import annotations

import gc
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import _common as c
import anyio
import httpx
from httpx_sse import aconnect_sse

Run = Callable[[], Awaitable[int]]


def _floor(http: httpx.AsyncClient, events: int) -> Run:
    async def stream() -> int:
        n = 0
        body = c.floor_request_body(1, "SendStreamingMessage")
        async with aconnect_sse(http, "POST", c.URL, content=body, headers=c.SSE_HEADERS) as source:
            async for sse in source.aiter_sse():
                value = json.loads(sse.data)
                assert "result" in value
                n += 1
        return n

    return stream


def _anyio(http: httpx.AsyncClient, events: int, *, scoped: bool = False) -> Run:
    from a2a_anyio import A2AClient, TaskState

    idle: dict[str, Any] = {} if scoped else {"idle_timeout": None}
    client = A2AClient(endpoint=c.URL, http_client=http, **idle)

    async def stream() -> int:
        n = 0
        async with client.stream_message("hello") as s:
            async for _ in s:
                n += 1
        task = s.task
        assert task is not None and task.status.state is TaskState.COMPLETED
        assert len(task.artifacts) == 1
        return n

    return stream


def _sdk(http: httpx.AsyncClient, events: int) -> Run:
    client = c.sdk_client(http, c.URL, streaming=True)

    async def stream() -> int:
        n = 0
        async for _ in client.send_message(c.sdk_request()):
            n += 1
        return n

    return stream


async def _main(backend: str, events: int, rounds: int, per_chunk: int) -> dict[str, Any]:
    templates = c.sse_templates(c.stream_results(events))
    makers: dict[str, Callable[[httpx.AsyncClient, int], Run]] = {
        "floor": _floor,
        "a2a-anyio": _anyio,
        "a2a-anyio-scoped": lambda http, events: _anyio(http, events, scoped=True),
    }
    if backend == "asyncio":
        makers["a2a-sdk"] = _sdk
    runs: dict[str, Run] = {}
    clients = []
    for name, make in makers.items():
        http = httpx.AsyncClient(transport=c.stream_transport(templates, per_chunk))
        clients.append(http)
        runs[name] = make(http, events)
        got = await runs[name]()  # warm-up, and a check that every event arrives
        assert got == events, (name, got)
    cpu: dict[str, list[float]] = {k: [] for k in runs}
    wall: dict[str, list[float]] = {k: [] for k in runs}
    for r in range(rounds):
        for name in c.rotate(list(runs), r):
            gc.collect()
            cpu0, wall0 = time.process_time(), time.perf_counter()
            got = await runs[name]()
            dc, dw = time.process_time() - cpu0, time.perf_counter() - wall0
            assert got == events
            cpu[name].append(dc / events * 1e6)
            wall[name].append(dw / events * 1e6)
    for http in clients:
        await http.aclose()
    out: dict[str, Any] = {"events": events, "rounds": rounds, "per_chunk": per_chunk}
    for name in makers:
        out[name] = {"us": c.median(cpu[name]), "wall_us": c.median(wall[name])}
    out["a2a-sdk"] = out.get("a2a-sdk")
    out["ratio_anyio_floor"] = c.round_ratio(cpu, "a2a-anyio", "floor")
    out["ratio_scoped_floor"] = c.round_ratio(cpu, "a2a-anyio-scoped", "floor")
    out["ratio_sdk_anyio"] = c.round_ratio(cpu, "a2a-sdk", "a2a-anyio")
    return out


def run(backend: str, events: int, rounds: int, per_chunk: int = 1) -> dict[str, Any]:
    """Per-event microseconds of each contender on ``backend``, with ratios.

    A ratio is the median over rounds of that round's ratio.
    """
    res: dict[str, Any] = anyio.run(_main, backend, events, rounds, per_chunk, backend=backend)
    return res


if __name__ == "__main__":
    import sys

    n = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    k = int(sys.argv[2]) if len(sys.argv) > 2 else 1
    for be in ("asyncio", "trio"):
        print(be, json.dumps(run(be, n, 3, k)))
