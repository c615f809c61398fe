"""One fan-out client, alone in its process, so that its RSS and CPU time are its own.

    python bench/fanout_child.py --impl anyio --backend trio --streams 1000 \\
        --url http://127.0.0.1:PORT --max-connections 1000 --duration 10

Discovers the agent from its card (served by ``sse_server.py``), then opens ``--streams``
streaming sends at once and reads every one to its end. Prints one JSON object: wall time,
CPU seconds (user + system, from ``resource.getrusage``), peak RSS (``/proc/self/statm``
sampled every 20 ms, and ``ru_maxrss``) and its growth over the RSS taken after imports and
setup, streams completed, failures, and the time from the start to each stream's first event.

Starvation by the connection pool is seen directly: the most requests ever waiting in the
httpx pool for a connection (sampled every 20 ms). ``late_first_event`` counts the streams
whose first event came later than a whole stream lasts on the server (``--duration``).
``--max-connections 0`` leaves the library's default pool. After ``--timeout`` seconds the
run is cut and reported as it stands (``timed_out``).
"""

from __future__ import annotations

import argparse
import gc
import json
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio


def _rss_kb() -> int:
    with open("/proc/self/statm") as f:
        pages = int(f.read().split()[1])
    return pages * resource.getpagesize() // 1024


def _peak_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def _cpu() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


class Tally:
    def __init__(self, streams: int) -> None:
        self.first: list[float | None] = [None] * streams
        self.events = [0] * streams
        self.done = [False] * streams
        self.errors: list[str] = []
        self.t0 = 0.0

    def event(self, i: int) -> None:
        if self.first[i] is None:
            self.first[i] = time.perf_counter() - self.t0
        self.events[i] += 1


Runner = Callable[[Tally], Awaitable[None]]
Made = tuple[Runner, Any, Any]  # the runner, what to close, the httpx client


async def _anyio_runner(args: argparse.Namespace, streams: int) -> Made:
    from a2a_anyio import AgentPool, TaskState, merge_streams

    options: dict[str, Any] = {}
    if args.max_connections:
        options["max_connections"] = args.max_connections
    if args.keep_events >= 0:
        options["keep_events"] = args.keep_events
    pool = AgentPool(**options)
    client = pool.client(args.url)
    await client.get_card()

    async def one(t: Tally, i: int) -> None:
        try:
            async with client.stream_message(f"hello {i}") as stream:
                async for _ in stream:
                    t.event(i)
        except Exception as exc:
            t.errors.append(f"{type(exc).__name__}: {exc}")
            return
        task = stream.task
        t.done[i] = task is not None and task.status.state is TaskState.COMPLETED

    async def run_tasks(t: Tally) -> None:
        async with anyio.create_task_group() as tg:
            for i in range(streams):
                tg.start_soon(one, t, i)

    async def run(t: Tally) -> None:
        mapping = {str(i): client.stream_message(f"hello {i}") for i in range(streams)}
        async with merge_streams(mapping) as merged:
            async for item in merged:
                i = int(item.agent)
                if item.error is not None:
                    t.errors.append(f"{type(item.error).__name__}: {item.error}")
                    continue
                t.event(i)
        for key, stream in mapping.items():
            task = stream.task
            t.done[int(key)] = task is not None and task.status.state is TaskState.COMPLETED

    return (run_tasks if args.mode == "tasks" else run), pool, pool.http_client


async def _sdk_runner(args: argparse.Namespace, streams: int) -> Made:
    import _common as c
    import httpx
    from a2a.client import ClientConfig, ClientFactory

    limits = (
        httpx.Limits(max_connections=args.max_connections, max_keepalive_connections=100)
        if args.max_connections
        else httpx.Limits()
    )
    http = httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(30.0, read=None))
    client = await ClientFactory(ClientConfig(streaming=True, httpx_client=http)).create_from_url(
        args.url
    )

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
            for i in range(streams):
                tg.start_soon(one, t, i)

    return run, http, http


def _queued(http: Any) -> int:
    """Requests waiting in the httpx (httpcore) pool for a connection: streams being starved.

    Reads httpcore internals (``AsyncConnectionPool._requests``); 0 if they are not there.
    """
    pool = getattr(getattr(http, "_transport", None), "_pool", None)
    requests = getattr(pool, "_requests", None) or []
    return sum(1 for r in requests if getattr(r, "is_queued", lambda: False)())


async def main(args: argparse.Namespace) -> dict[str, Any]:
    make = _anyio_runner if args.impl == "anyio" else _sdk_runner
    run, owner, http = await make(args, args.streams)
    tally = Tally(args.streams)
    gc.collect()
    base_peak, base_rss = _peak_kb(), _rss_kb()
    sampled = [base_rss]
    queued = [0]

    async def sample(scope: anyio.CancelScope) -> None:
        with scope:
            while True:
                sampled.append(_rss_kb())
                queued.append(_queued(http))
                await anyio.sleep(0.02)

    cpu0 = _cpu()
    tally.t0 = time.perf_counter()
    with anyio.move_on_after(args.timeout) as limit:
        async with anyio.create_task_group() as tg:
            sampler = anyio.CancelScope()
            tg.start_soon(sample, sampler)
            await run(tally)
            sampler.cancel()
    wall = time.perf_counter() - tally.t0
    cpu = _cpu() - cpu0
    peak = max(max(sampled), _peak_kb() if _peak_kb() > base_peak else 0)
    with anyio.move_on_after(10, shield=True):
        await owner.aclose()
    firsts = sorted(f for f in tally.first if f is not None)
    return {
        "impl": args.impl,
        "mode": args.mode if args.impl == "anyio" else "tasks",
        "backend": args.backend,
        "streams": args.streams,
        "max_connections": args.max_connections or "default",
        "keep_events": "default" if args.keep_events < 0 else args.keep_events,
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
        "ttfe_p50_s": firsts[len(firsts) // 2] if firsts else None,
        "ttfe_max_s": firsts[-1] if firsts else None,
        "max_queued_for_connection": max(queued),
        "late_first_event": sum(1 for f in tally.first if f is None or f > args.duration),
    }


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--impl", choices=("anyio", "sdk"), required=True)
    p.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    p.add_argument(
        "--mode",
        choices=("merge", "tasks"),
        default="merge",
        help="a2a-anyio: merge_streams (default) or one task per stream in a task group",
    )
    p.add_argument("--streams", type=int, default=1000)
    p.add_argument("--url", required=True)
    p.add_argument("--max-connections", type=int, default=0)
    p.add_argument(
        "--keep-events", type=int, default=-1, help="a2a-anyio: keep_events (-1: the default)"
    )
    p.add_argument("--duration", type=float, required=True, help="one stream's length (s)")
    p.add_argument("--timeout", type=float, default=120.0)
    a = p.parse_args()
    out = anyio.run(main, a, backend=a.backend)
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
