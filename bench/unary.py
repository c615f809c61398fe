"""Unary overhead: N send_message calls answered with the recorded completed Task.

Three contenders on the same ``httpx.MockTransport`` (the same response bytes):

- floor: a raw httpx POST of the JSON-RPC request plus ``json.loads`` of the answer;
- a2a-anyio: ``A2AClient(endpoint=..., http_client=..., timeout=None)``.send_message("hello"):
  no deadline, so no cancel scope;
- a2a-anyio-scoped: the same with the default ``timeout``: the call's one cancel scope;
- a2a-sdk: the 1.x ``Client`` from ``ClientFactory`` (asyncio only).

Each round times N calls of every contender (in a rotating order); the result is the median
per-call time over the rounds, measured as process CPU time (other work on the machine
does not inflate it) and as wall time.
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

Call = Callable[[int], Awaitable[None]]


async def _floor(http: httpx.AsyncClient) -> Call:
    async def call(i: int) -> None:
        resp = await http.post(c.URL, content=c.floor_request_body(i), headers=c.FLOOR_HEADERS)
        value = json.loads(resp.content)
        assert value["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

    return call


async def _anyio(http: httpx.AsyncClient, *, scoped: bool = False) -> Call:
    from a2a_anyio import A2AClient, Task, TaskState

    deadline: dict[str, Any] = {} if scoped else {"timeout": None}
    client = A2AClient(endpoint=c.URL, http_client=http, **deadline)

    async def call(i: int) -> None:
        task = await client.send_message("hello")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert len(task.artifacts) == 1

    return call


async def _sdk(http: httpx.AsyncClient) -> Call:
    client = c.sdk_client(http, c.URL, streaming=False)

    async def call(i: int) -> None:
        last: Any = None
        async for event in client.send_message(c.sdk_request()):
            last = event
        assert last is not None and last.task.status.state == 3  # TASK_STATE_COMPLETED
        assert len(last.task.artifacts) == 1

    return call


async def _time(call: Call, n: int) -> tuple[float, float]:
    gc.collect()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for i in range(n):
        await call(i + 1)
    return time.process_time() - cpu0, time.perf_counter() - wall0


async def _main(backend: str, n: int, rounds: int) -> dict[str, Any]:
    makers: dict[str, Callable[[httpx.AsyncClient], Awaitable[Call]]] = {
        "floor": _floor,
        "a2a-anyio": _anyio,
        "a2a-anyio-scoped": lambda http: _anyio(http, scoped=True),
    }
    if backend == "asyncio":
        makers["a2a-sdk"] = _sdk
    calls: dict[str, Call] = {}
    clients = []
    for name, make in makers.items():
        http = httpx.AsyncClient(transport=c.unary_transport())
        clients.append(http)
        calls[name] = await make(http)
        for i in range(max(20, n // 20)):  # warm-up
            await calls[name](i + 1)
    cpu: dict[str, list[float]] = {k: [] for k in calls}
    wall: dict[str, list[float]] = {k: [] for k in calls}
    for r in range(rounds):
        for name in c.rotate(list(calls), r):
            dc, dw = await _time(calls[name], n)
            cpu[name].append(dc / n * 1e6)
            wall[name].append(dw / n * 1e6)
    for http in clients:
        await http.aclose()
    out: dict[str, Any] = {"n": n, "rounds": rounds}
    for name in makers:
        out[name] = {"us": c.median(cpu[name]), "wall_us": c.median(wall[name])}
    out["a2a-sdk"] = out.get("a2a-sdk")
    out["ratio_anyio_floor"] = c.round_ratio(cpu, "a2a-anyio", "floor")
    out["ratio_scoped_floor"] = c.round_ratio(cpu, "a2a-anyio-scoped", "floor")
    out["ratio_sdk_anyio"] = c.round_ratio(cpu, "a2a-sdk", "a2a-anyio")
    return out


def run(backend: str, n: int, rounds: int) -> dict[str, Any]:
    """Per-call microseconds of each contender on ``backend``, with ratios.

    A ratio is the median over rounds of that round's ratio.
    """
    res: dict[str, Any] = anyio.run(_main, backend, n, rounds, backend=backend)
    return res


if __name__ == "__main__":
    import sys

    for be in ("asyncio", "trio"):
        print(be, json.dumps(run(be, int(sys.argv[1]) if len(sys.argv) > 1 else 500, 3)))
