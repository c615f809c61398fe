"""One scale-benchmark client, alone in its process, so that its time and RSS are its own.

    python bench/scale_child.py --mode fanout --impl anyio --backend trio --timeout 3 \\
        --slow-every 3 < urls.txt
    python bench/scale_child.py --mode streams --impl floor --streams 1000 < urls.txt

The agents are ``agents_server.py``'s: their base URLs on standard input, one a line, in
the order of their numbers (the same URL N times for N sends to one agent). Prints one JSON
object.

``--mode fanout``: one round of ``pool.fan_out(urls, "hello", timeout=T)`` over a fresh
``AgentPool()`` (cold: every card is discovered within the deadline, as ``fan_out(urls, ...)``
does with its own pool), then a second over the same pool (warm: cards known, connections
to the fast agents kept). Per round: the time to return, its overshoot past ``T``, the
answers (``AgentResult.ok``), the fast agents' answers (every ``--slow-every``-th agent
names a task and never ends it), the errors that are not the deadline's and the cancels
sent; with ``--slow-requests`` (one agent holding every ``--slow-every``-th request, not
every such agent) the answers are counted against the requests it answers. The floor
(``--impl floor``) does the same with raw httpx, one ``httpx.AsyncClient`` per 10 agents
(per 10 URLs of the list): GET the card (once per URL) and POST ``SendStreamingMessage`` to
its interface (cold), POST only (warm), as the fan-out does (it streams, to learn each task
at once), each event read with httpx-sse and ``json.loads``, every request in one task group inside ``anyio.move_on_after(T)``, then
``CancelTask`` for each task it cut (its answer read), as the fan-out cancels them.
``--impl httpx2``: the same as the floor with httpx2 (a fork of httpx whose connection pool
no longer walks its connections for each request), one ``httpx2.AsyncClient`` for all.

``--mode streams``: ``--streams`` streams at once, stream i to agent i mod agents, each read
to its idle end (``--events`` events; the agents then hold the stream open), then RSS is read
after a ``gc.collect()`` and the streams are closed. a2a-anyio: one ``AgentPool()`` on its
defaults, its clients' cards discovered before the baseline, one task per stream
(``async with client.stream_message(...)``: every option on its default). The floor: httpx +
httpx-sse + ``json.loads``, nothing kept, one task per stream, one ``httpx.AsyncClient`` per
agent. Extra RSS is over the RSS after imports, setup and a ``gc.collect()``: at idle (the
streams open, every event read: half a second after the last event, then after a
``gc.collect()``) and at its peak (``VmRSS`` sampled
every 20 ms, and ``VmHWM`` when it grew).

The soft limit of open files is raised to the hard limit (``ulimit -Hn``); the result says
what it was and what it became.
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import math
import resource
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from fanout_child import _cpu, _status_kb

#: Agents per httpx client of the fan-out's floor.
AGENTS_PER_FLOOR_CLIENT = 10


def open_files() -> dict[str, int]:
    """The soft limit of open files raised to the hard limit."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return {"was": soft, "now": hard}


# -- fan-out ------------------------------------------------------------------------------


#: One round: each agent's outcome (answered, not, or an error's text) and the cancels sent.
Round = Callable[[], Awaitable[tuple[list[bool | str], int]]]


async def _anyio_fanout(args: argparse.Namespace, urls: list[str]) -> tuple[Round, Any]:
    import httpcore  # noqa: F401  (what httpx imports with its first transport, as the floor's)

    from a2a_anyio import A2ATimeoutError, AgentPool

    pool = AgentPool()

    async def one_round() -> tuple[list[bool | str], int]:
        results = await pool.fan_out(urls, "hello", timeout=args.timeout)
        out: list[bool | str] = []
        for r in results:
            if r.ok:
                out.append(True)
            elif r.error is not None and not isinstance(r.error, A2ATimeoutError):
                out.append(f"{type(r.error).__name__}: {r.error}")
            else:
                out.append(False)
        return out, sum(r.cancel_outcome is not None for r in results)

    return one_round, pool


async def _floor_fanout(args: argparse.Namespace, urls: list[str]) -> tuple[Round, Any]:
    import _common as c
    from httpx_sse import aconnect_sse

    if args.impl == "httpx2":
        import httpx2 as httpx

        per_client = len(urls)
    else:
        import httpx

        per_client = AGENTS_PER_FLOOR_CLIENT
    limits = httpx.Limits(max_connections=None, max_keepalive_connections=100)
    clients = [
        httpx.AsyncClient(limits=limits, timeout=httpx.Timeout(30.0))
        for _ in range(math.ceil(len(urls) / per_client))
    ]
    endpoints: dict[str, str] = {}
    locks: dict[str, anyio.Lock] = {}

    async def one(i: int, out: list[bool | str], tasks: dict[int, str]) -> None:
        http = clients[i // per_client]
        url = urls[i]
        try:
            if url not in endpoints:
                async with locks.setdefault(url, anyio.Lock()):
                    if url not in endpoints:
                        resp = await http.get(f"{url}/.well-known/agent-card.json")
                        card = json.loads(resp.content)
                        endpoints[url] = card["supportedInterfaces"][0]["url"]
            # The request a fan-out sends (it streams, to learn each task at once), every
            # event read with json.loads.
            body = c.floor_request_body(i, "SendStreamingMessage")
            headers = dict(c.SSE_HEADERS)
            async with aconnect_sse(
                http, "POST", endpoints[url], content=body, headers=headers
            ) as es:
                async for sse in es.aiter_sse():
                    task = json.loads(sse.data)["result"]["task"]
                    out[i] = task["status"]["state"] == "TASK_STATE_COMPLETED"
                    tasks[i] = task["id"]
        except Exception as exc:
            out[i] = f"{type(exc).__name__}: {exc}"

    async def cancel(i: int, task_id: str) -> None:
        """What the fan-out does for a task it cut: CancelTask (its answer read)."""
        body = json.dumps(
            {"jsonrpc": "2.0", "id": i, "method": "CancelTask", "params": {"id": task_id}}
        )
        http = clients[i // per_client]
        with contextlib.suppress(Exception):
            await http.post(endpoints[urls[i]], content=body, headers=c.FLOOR_HEADERS)

    async def one_round() -> tuple[list[bool | str], int]:
        out: list[bool | str] = [False] * len(urls)
        tasks: dict[int, str] = {}
        with anyio.move_on_after(args.timeout):
            async with anyio.create_task_group() as tg:
                for i in range(len(urls)):
                    tg.start_soon(one, i, out, tasks)
        cut = [(i, task_id) for i, task_id in tasks.items() if out[i] is False]
        async with anyio.create_task_group() as tg:
            for i, task_id in cut:
                tg.start_soon(cancel, i, task_id)
        return out, len(cut)

    return one_round, _Closer(clients)


class _Closer:
    def __init__(self, owners: list[Any]) -> None:
        self.owners = owners

    async def aclose(self) -> None:
        for owner in self.owners:
            await owner.aclose()


class Collector:
    """The time the cyclic collector takes (``gc.callbacks``), all generations and full."""

    def __init__(self) -> None:
        self.total = self.full = self._start = 0.0
        gc.callbacks.append(self)

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
            return
        took = time.perf_counter() - self._start
        self.total += took
        if info["generation"] == 2:
            self.full += took


async def fanout(args: argparse.Namespace, urls: list[str]) -> dict[str, Any]:
    make = _anyio_fanout if args.impl == "anyio" else _floor_fanout
    one_round, owner = await make(args, urls)
    every = args.slow_every
    # (with --slow-requests, as many requests are held, but which is the server's order)
    fast = [not (every and i % every == every - 1) for i in range(len(urls))]
    rounds = []
    collector = Collector()
    try:
        for name in ("cold", "warm"):
            gc.collect()
            collector.total = collector.full = 0.0
            t0, cpu0 = time.perf_counter(), _cpu()
            outcome, cancels = await one_round()
            took, cpu = time.perf_counter() - t0, _cpu() - cpu0
            errors = [o for o in outcome if isinstance(o, str)]
            rounds.append(
                {
                    "round": name,
                    "returned_s": took,
                    "overshoot_s": took - args.timeout,
                    "cpu_s": cpu,
                    "gc_s": collector.total,
                    "full_gc_s": collector.full,
                    "answers": sum(o is True for o in outcome),
                    "fast_answers": (
                        sum(o is True for o in outcome)
                        if args.slow_requests
                        else sum(o is True for o, f in zip(outcome, fast, strict=True) if f)
                    ),
                    "errors": len(errors),
                    "first_error": errors[0][:300] if errors else None,
                    "cancels": cancels,
                }
            )
    finally:
        with anyio.move_on_after(30, shield=True):
            await owner.aclose()
    return {"agents": len(urls), "fast": sum(fast), "timeout": args.timeout, "rounds": rounds}


# -- idle streams --------------------------------------------------------------------------


Opener = Callable[[int, list[int]], Awaitable[None]]


async def _anyio_streams(args: argparse.Namespace, urls: list[str]) -> tuple[Opener, Any]:
    from a2a_anyio import AgentPool

    pool = AgentPool()
    clients = [pool.client(url) for url in urls]
    for client in clients:
        await client.get_card()

    async def one(i: int, events: list[int]) -> None:
        async with clients[i % len(clients)].stream_message(f"hello {i}") as stream:
            async for _ in stream:
                events[i] += 1

    return one, pool


async def _floor_streams(args: argparse.Namespace, urls: list[str]) -> tuple[Opener, Any]:
    import _common as c
    import httpx
    from httpx_sse import aconnect_sse

    limits = httpx.Limits(max_connections=None, max_keepalive_connections=100)
    timeout = httpx.Timeout(30.0, read=300.0)
    clients = [httpx.AsyncClient(limits=limits, timeout=timeout) for _ in urls]
    endpoints = [f"{url}/a2a/jsonrpc" for url in urls]

    async def one(i: int, events: list[int]) -> None:
        k = i % len(urls)
        body = c.floor_request_body(i, "SendStreamingMessage")
        async with aconnect_sse(
            clients[k], "POST", endpoints[k], content=body, headers=dict(c.SSE_HEADERS)
        ) as source:
            async for sse in source.aiter_sse():
                json.loads(sse.data)["result"]
                events[i] += 1

    return one, _Closer(clients)


async def streams(args: argparse.Namespace, urls: list[str]) -> dict[str, Any]:
    make = _anyio_streams if args.impl == "anyio" else _floor_streams
    one, owner = await make(args, urls)
    n, want = args.streams, args.streams * args.events
    events = [0] * n
    errors: list[str] = []
    gc.collect()
    base_hwm, base_rss = _status_kb("VmHWM"), _status_kb("VmRSS")
    peak = base_rss

    async def run(i: int) -> None:
        try:
            await one(i, events)
        except Exception as exc:
            errors.append(f"{type(exc).__name__}: {exc}")

    t0, cpu0 = time.perf_counter(), _cpu()
    idle_rss = None
    async with anyio.create_task_group() as tg:
        for i in range(n):
            tg.start_soon(run, i)
        with anyio.move_on_after(args.budget) as cut:
            while sum(events) < want and len(errors) < n:
                peak = max(peak, _status_kb("VmRSS"))
                await anyio.sleep(0.02)
        wall, cpu = time.perf_counter() - t0, _cpu() - cpu0
        await anyio.sleep(0.5)  # the last events' work done
        delivered_rss = _status_kb("VmRSS")
        gc.collect()
        idle_rss = _status_kb("VmRSS")
        hwm = _status_kb("VmHWM")
        peak = max(peak, idle_rss, hwm if hwm > base_hwm else 0)
        tg.cancel_scope.cancel()
    with anyio.move_on_after(30, shield=True):
        await owner.aclose()
    return {
        "streams": n,
        "agents": len(urls),
        "events": sum(events),
        "idle": sum(e >= args.events for e in events),
        "cut": cut.cancelled_caught,
        "wall_s": wall,
        "cpu_s": cpu,
        "rss_base_mb": base_rss / 1024,
        "extra_rss_delivered_mb": (delivered_rss - base_rss) / 1024,
        "extra_rss_idle_mb": (idle_rss - base_rss) / 1024,
        "extra_rss_peak_mb": (peak - base_rss) / 1024,
        "errors": len(errors),
        "first_error": errors[0][:300] if errors else None,
    }


async def main(args: argparse.Namespace) -> dict[str, Any]:
    files = open_files()
    urls = [line.strip() for line in sys.stdin if line.strip()]
    run = fanout if args.mode == "fanout" else streams
    out = await run(args, urls)
    return {
        "mode": args.mode,
        "impl": args.impl,
        "backend": args.backend,
        "open_files": files,
    } | out


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--mode", choices=("fanout", "streams"), required=True)
    p.add_argument("--impl", choices=("anyio", "floor", "httpx2"), default="anyio")
    p.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    p.add_argument("--timeout", type=float, default=3.0, help="fanout: the fan-out's timeout")
    p.add_argument("--slow-every", type=int, default=3, help="fanout: as the agents were started")
    p.add_argument(
        "--slow-requests", action="store_true", help="fanout: requests are held, not agents"
    )
    p.add_argument("--streams", type=int, default=1000, help="streams: how many at once")
    p.add_argument("--events", type=int, default=20, help="streams: events before idle")
    p.add_argument("--budget", type=float, default=120.0, help="streams: seconds to reach idle")
    a = p.parse_args()
    result = anyio.run(main, a, backend=a.backend)
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
