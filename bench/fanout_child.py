"""One fan-out client, alone in its process, so that its RSS and CPU time are its own.

    python bench/fanout_child.py --backend trio --streams 1000 --url http://127.0.0.1:PORT

Discovers the agent from its card (served by ``loopback_server.py --hold N``), then opens
``--streams`` streaming sends at once and reads every one to its end: a2a-anyio with
``AgentPool()`` and ``merge_streams`` on their defaults (``--max-connections`` and
``--keep-events`` change them), the floor (httpx + httpx-sse + ``json.loads``, one task per
stream, ``--impl floor``) or the a2a-sdk client, one task per stream (``--impl sdk``).
``--pools K`` spreads the streams over K pools (K ``AgentPool()``s, or K httpx clients for the
floor), stream i on pool i mod K, all of them in one ``merge_streams``.
Prints one JSON object: wall time, CPU seconds (user + system), RSS after imports and setup,
its peak during the run (``VmRSS`` of ``/proc/self/status`` sampled every 20 ms, and
``VmHWM`` when it grew) and the difference, streams completed, events, failures.

How long each stream waited for its connection is seen through public hooks: an httpx
request hook stamps the request and sets httpcore's ``trace`` extension, whose first call
(a new connection's TCP connect, or a reused one's request headers) ends the wait; the TCP
connects are timed the same way. The server's count of the streams open at once tells
whether any stream queued behind another (``fanout.py``).

The soft limit of open files is raised, up to the hard limit, when the streams need more;
the result says what it was and what it became. After ``--timeout`` seconds the run is cut
and reported as it stands (``timed_out``).
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio

#: Open files besides the streams' sockets: the interpreter, the card request, stdio.
SPARE_FILES = 64


def _status_kb(field: str) -> int:
    """A ``kB`` field of ``/proc/self/status`` (``VmRSS``, ``VmHWM``)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


def open_files_for(streams: int) -> dict[str, int]:
    """The soft limit of open files raised (up to the hard limit) to hold ``streams``."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = min(streams + SPARE_FILES, hard)
    if soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))
    return {"was": soft, "now": max(soft, want), "hard": hard}


class Tally:
    def __init__(self, streams: int) -> None:
        self.events = [0] * streams
        self.done = [False] * streams
        self.errors: list[str] = []
        self.waits: list[float] = []  # request sent to httpx -> its connection in hand
        self.connects: list[float] = []  # TCP connect, new connections

    def event(self, i: int) -> None:
        self.events[i] += 1

    async def on_request(self, request: Any) -> None:
        """httpx request hook: time the wait for a connection through httpcore's trace."""
        if request.method != "POST":
            return
        sent = time.perf_counter()
        connecting = 0.0

        async def trace(name: str, info: Any) -> None:
            nonlocal sent, connecting
            now = time.perf_counter()
            if sent:
                self.waits.append(now - sent)
                sent = 0.0
            if name == "connection.connect_tcp.started":
                connecting = now
            elif name == "connection.connect_tcp.complete" and connecting:
                self.connects.append(now - connecting)

        request.extensions["trace"] = trace


def _hook(http: Any, tally: Tally) -> None:
    hooks = http.event_hooks
    http.event_hooks = {**hooks, "request": [*hooks["request"], tally.on_request]}


Runner = Callable[[Tally], Awaitable[None]]


async def _anyio_runner(args: argparse.Namespace, tally: Tally) -> tuple[Runner, Any]:
    from a2a_anyio import AgentPool, TaskState, merge_streams

    options: dict[str, Any] = {}
    if args.max_connections:
        options["max_connections"] = args.max_connections
    if args.keep_events >= 0:
        options["keep_events"] = args.keep_events
    pools = [AgentPool(**options) for _ in range(args.pools)]
    clients = [pool.client(args.url) for pool in pools]
    for pool, client in zip(pools, clients, strict=True):
        await client.get_card()
        _hook(pool.http_client, tally)

    async def run(t: Tally) -> None:
        mapping = {
            str(i): clients[i % len(clients)].stream_message(f"hello {i}")
            for i in range(args.streams)
        }
        async with merge_streams(mapping) as merged:
            async for item in merged:
                if item.error is not None:
                    t.errors.append(f"{type(item.error).__name__}: {item.error}")
                    continue
                t.event(int(item.agent))
        for key, stream in mapping.items():
            task = stream.task
            t.done[int(key)] = task is not None and task.status.state is TaskState.COMPLETED

    return run, _Closer(pools)


async def _floor_runner(args: argparse.Namespace, tally: Tally) -> tuple[Runner, Any]:
    """The floor: httpx + httpx-sse + ``json.loads``, nothing kept, one task per stream, on
    ``--pools`` httpx clients with ``AgentPool()``'s limits (no connection cap, 100 kept
    alive) and read timeout (300 s, a stream's idle limit). It does not retry, so it waits up
    to 30 s for a connection (``AgentPool()``: 10 s, then retries): 10,000 connects at once
    overflow the kernel's queue of half-open connections, which drops some SYNs, resent
    after 1, 3, 7 and 15 s."""
    import _common as c
    import httpx
    from httpx_sse import aconnect_sse

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=100)
    timeout = httpx.Timeout(30.0, read=300.0)
    https = [httpx.AsyncClient(limits=limits, timeout=timeout) for _ in range(args.pools)]
    endpoint = f"{args.url}/a2a/jsonrpc"
    await https[0].get(f"{args.url}/.well-known/agent-card.json")
    for http in https:
        _hook(http, tally)

    async def one(t: Tally, i: int) -> None:
        body = c.floor_request_body(i, "SendStreamingMessage")
        http = https[i % len(https)]
        state = None
        try:
            async with aconnect_sse(
                http, "POST", endpoint, content=body, headers=dict(c.SSE_HEADERS)
            ) as source:
                async for sse in source.aiter_sse():
                    result = json.loads(sse.data)["result"]
                    t.event(i)
                    update = result.get("statusUpdate")
                    state = update["status"]["state"] if update else state
        except Exception as exc:
            t.errors.append(f"{type(exc).__name__}: {exc}")
            return
        t.done[i] = state == "TASK_STATE_COMPLETED"

    async def run(t: Tally) -> None:
        async with anyio.create_task_group() as tg:
            for i in range(args.streams):
                tg.start_soon(one, t, i)

    return run, _Closer(https)


class _Closer:
    """Closes every pool (or httpx client) of a run."""

    def __init__(self, owners: list[Any]) -> None:
        self.owners = owners

    async def aclose(self) -> None:
        for owner in self.owners:
            await owner.aclose()


async def _sdk_runner(args: argparse.Namespace, tally: Tally) -> tuple[Runner, Any]:
    import _common as c
    import httpx
    from a2a.client import ClientConfig, ClientFactory

    limits = (
        httpx.Limits(max_connections=args.max_connections, max_keepalive_connections=100)
        if args.max_connections
        else httpx.Limits()
    )
    http = httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(30.0, read=None))
    config = ClientConfig(streaming=True, httpx_client=http)
    client = await ClientFactory(config).create_from_url(args.url)
    _hook(http, tally)

    async def one(t: Tally, i: int) -> None:
        last: Any = None
        try:
            async for event in client.send_message(c.sdk_request(f"hello {i}")):
                t.event(i)
                last = event
        except Exception as exc:
            t.errors.append(f"{type(exc).__name__}: {exc}")
            return
        state = last.status_update.status.state if last is not None else None
        t.done[i] = state == 3  # TASK_STATE_COMPLETED

    async def run(t: Tally) -> None:
        async with anyio.create_task_group() as tg:
            for i in range(args.streams):
                tg.start_soon(one, t, i)

    return run, http


def _spread(values: list[float]) -> dict[str, float | None]:
    if not values:
        return {"p50": None, "max": None}
    return {"p50": statistics.median(values), "max": max(values)}


async def main(args: argparse.Namespace) -> dict[str, Any]:
    files = open_files_for(args.streams)
    tally = Tally(args.streams)
    make = {"anyio": _anyio_runner, "floor": _floor_runner, "sdk": _sdk_runner}[args.impl]
    run, owner = await make(args, tally)
    gc.collect()
    base_hwm, base_rss = _status_kb("VmHWM"), _status_kb("VmRSS")
    sampled = [base_rss]

    async def sample(scope: anyio.CancelScope) -> None:
        with scope:
            while True:
                sampled.append(_status_kb("VmRSS"))
                await anyio.sleep(0.02)

    cpu0, t0 = _cpu(), time.perf_counter()
    with anyio.move_on_after(args.timeout) as limit:
        async with anyio.create_task_group() as tg:
            sampler = anyio.CancelScope()
            tg.start_soon(sample, sampler)
            await run(tally)
            sampler.cancel()
    wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
    hwm = _status_kb("VmHWM")
    peak = max(max(sampled), hwm if hwm > base_hwm else 0)
    with anyio.move_on_after(10, shield=True):
        await owner.aclose()
    return {
        "impl": args.impl,
        "backend": args.backend,
        "streams": args.streams,
        "pools": args.pools,
        "max_connections": args.max_connections or "default",
        "keep_events": "default" if args.keep_events < 0 else args.keep_events,
        "open_files": files,
        "timed_out": limit.cancelled_caught,
        "wall_s": wall,
        "cpu_s": cpu,
        "rss_base_mb": base_rss / 1024,
        "peak_rss_mb": peak / 1024,
        "extra_rss_mb": (peak - base_rss) / 1024,
        "completed": sum(tally.done),
        "events": sum(tally.events),
        "errors": len(tally.errors),
        "first_error": tally.errors[0] if tally.errors else None,
        "connection_wait_s": _spread(tally.waits),
        "tcp_connect_s": _spread(tally.connects),
    }


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--impl", choices=("anyio", "floor", "sdk"), default="anyio")
    p.add_argument("--pools", type=int, default=1, help="the streams spread over this many pools")
    p.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    p.add_argument("--streams", type=int, default=1000)
    p.add_argument("--url", required=True)
    p.add_argument("--max-connections", type=int, default=0, help="0: the default pool")
    p.add_argument(
        "--keep-events", type=int, default=-1, help="a2a-anyio: keep_events (-1: the default)"
    )
    p.add_argument("--timeout", type=float, default=120.0)
    a = p.parse_args()
    out = anyio.run(main, a, backend=a.backend)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
