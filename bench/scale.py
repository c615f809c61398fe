"""Scale: a fan-out to hundreds and thousands of agents, and thousands of idle streams.

    uv run --frozen python bench/scale.py                    # both parts, every size (~10 min)
    uv run --frozen python bench/scale.py --quick            # 300 agents, 1,000 streams
    uv run --frozen python bench/scale.py --only fanout --agents 1000 --backends asyncio
    uv run --frozen python bench/scale.py --only streams --streams 10000 --json

The agents are ``agents_server.py``'s: ``SERVERS`` processes on 127.0.0.1, each serving its
share of the agents on a port per agent (distinct origins, as users meet them). Every
measurement is a fresh client process (``scale_child.py``), a2a-anyio and the floor beside
it, on asyncio and trio.

- **fanout**: ``pool.fan_out(urls, "hello", timeout=T)`` over a fresh ``AgentPool()``, every
  third agent slow (it never answers): the time to return, its overshoot past ``T``, the
  answers of the fast agents; a cold round (every card discovered within the deadline, what
  ``fan_out(urls, ...)`` does) and a warm one over the same pool. The floor: raw httpx, one
  ``httpx.AsyncClient`` per 10 agents, the same requests in one task group inside
  ``move_on_after(T)``. Target: a2a-anyio returns within ``T`` + 10 % with every fast agent
  answered.
- **streams**: N streams at once over ``STREAM_AGENTS`` agents (one per server process), each
  read through ``STREAM_EVENTS`` events of about 500 bytes, after which the agents hold them
  open, idle: the client's extra RSS at idle (after a ``gc.collect()``) and at its peak, over
  its RSS after setup. a2a-anyio: one ``AgentPool()``, every option on its default; the floor:
  httpx + httpx-sse + ``json.loads``, nothing kept, one httpx client per agent. Target:
  a2a-anyio's extra RSS at idle at most 1.25x the floor's.

Each case gets fresh agent servers; each client raises its soft limit of open files to the
hard limit (10,000 streams need 10,000 sockets and a few more: ``ulimit -Hn`` at least
10,100; the servers need their share each).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from _serve import started
from _table import f1, grid, times

HERE = Path(__file__).resolve().parent
SERVERS = 10
FANOUT_AGENTS = (300, 1000, 3000)


#: The fan-out's timeout for a number of agents: 3 s, and 1 s more for each 500 agents past
#: 1,000 (3,000 cold connects, card requests and sends saturate the 2 cores of the machine
#: used so far for about 4.5 s, the floor's too).
def fanout_timeout(agents: int) -> float:
    return 3.0 + max(0, agents - 1000) // 500


SLOW_EVERY = 3
STREAMS = (1000, 10_000)
STREAM_AGENTS = 10
STREAM_EVENTS = 20
#: What the streams carry (``agents_server.py --shape``): progress messages (status updates,
#: the task keeps the latest) or chunks appended to one artifact (the task keeps them all).
STREAM_SHAPES = ("status", "chunks")
EVENT_BYTES = 500
#: The targets: a fan-out returns within its timeout and this much of it; idle streams cost
#: at most this many times the floor's extra RSS.
OVERSHOOT_MAX = 0.10
RSS_MAX = 1.25
IMPLS = ("anyio", "floor")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


@contextmanager
def agents(count: int, *options: str) -> Iterator[list[int]]:
    """``count`` agents over ``SERVERS`` processes (agent i in process i // share); their
    ports, in the order of their numbers. Stopped on exit."""
    share = math.ceil(count / SERVERS)
    with ExitStack() as stack:
        ports: list[int] = []
        for first in range(0, count, share):
            n = min(share, count - first)
            line = stack.enter_context(
                started("agents_server.py", f"--agents={n}", f"--first={first}", *options)
            )
            got = [int(p) for p in line.split()]
            if len(got) != n:
                raise RuntimeError(f"agents_server.py did not start: {line!r}")
            ports += got
        yield ports


def child(
    mode: str, impl: str, backend: str, ports: Sequence[int], *options: str
) -> dict[str, Any]:
    """One ``scale_child.py`` run; its JSON report, or ``{"failed": why}``."""
    cmd = [
        sys.executable,
        str(HERE / "scale_child.py"),
        f"--mode={mode}",
        f"--impl={impl}",
        f"--backend={backend}",
        "--ports=" + ",".join(map(str, ports)),
        *options,
    ]
    head = {"mode": mode, "impl": impl, "backend": backend}
    try:
        out = subprocess.run(cmd, capture_output=True, text=True, timeout=400, check=False)
    except subprocess.TimeoutExpired:
        return head | {"failed": "timed out after 400 s"}
    if out.returncode != 0 or not out.stdout.strip():
        why = out.stderr.strip().splitlines()[-1:] or [f"exit {out.returncode}"]
        return head | {"failed": why[0][-300:]}
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def run_fanout(
    sizes: Sequence[int], backends: Sequence[str], timeout: float | None = None
) -> list[dict[str, Any]]:
    runs = []
    for n in sizes:
        t = timeout if timeout is not None else fanout_timeout(n)
        with agents(n, f"--slow-every={SLOW_EVERY}", "--answer-streams") as ports:
            for backend in backends:
                for impl in IMPLS:
                    _log(f"fanout: {n} agents on {backend}, {impl}")
                    r = child(
                        "fanout", impl, backend, ports,
                        f"--timeout={t}", f"--slow-every={SLOW_EVERY}",
                    )  # fmt: skip
                    runs.append(r | {"agents": n, "timeout": t})
    return runs


def stream_rounds(streams: int) -> int:
    """Client processes per contender for ``streams`` streams: the RSS a process keeps at
    idle moves by a few MB from one to the next (the floor's on trio by up to a fifth), so
    the smaller cases take the median of three."""
    return 3 if streams <= 1000 else 1


def run_streams(
    sizes: Sequence[int],
    backends: Sequence[str],
    shapes: Sequence[str] = STREAM_SHAPES,
    rounds: int | None = None,
) -> list[dict[str, Any]]:
    runs = []
    for shape in shapes:
        options = (f"--events={STREAM_EVENTS}", f"--event-bytes={EVENT_BYTES}", f"--shape={shape}")
        with agents(STREAM_AGENTS, *options) as ports:
            for n in sizes:
                for backend in backends:
                    got: dict[str, list[dict[str, Any]]] = {impl: [] for impl in IMPLS}
                    for k in range(rounds or stream_rounds(n)):
                        for impl in IMPLS[k % 2 :] + IMPLS[: k % 2]:  # the order alternates
                            _log(f"streams: {n} of {shape} on {backend}, {impl}, round {k + 1}")
                            opts = (f"--streams={n}", f"--events={STREAM_EVENTS}")
                            got[impl].append(child("streams", impl, backend, ports, *opts))
                    for results in got.values():
                        runs.append(_median_run(results) | {"streams": n, "shape": shape})
    return runs


def _median_run(results: list[dict[str, Any]]) -> dict[str, Any]:
    """One row from a contender's rounds: the medians of the figures, the worst of the rest
    (``rounds`` keeps each round's)."""
    done = [r for r in results if "failed" not in r]
    if not done:
        return results[0]
    out = dict(done[0])
    for key in ("wall_s", "cpu_s", "extra_rss_idle_mb", "extra_rss_peak_mb"):
        out[key] = statistics.median(r[key] for r in done)
    out["idle"] = min(r["idle"] for r in done)
    out["errors"] = sum(r["errors"] for r in done) + len(results) - len(done)
    out["cut"] = any(r["cut"] for r in done)
    out["rounds"] = results
    return out


def _floor_of(runs: list[dict[str, Any]], r: dict[str, Any], *keys: str) -> dict[str, Any] | None:
    for other in runs:
        if (
            other["impl"] == "floor"
            and other["backend"] == r["backend"]
            and all(other[k] == r[k] for k in keys)
        ):
            return other
    return None


def fanout_table(runs: list[dict[str, Any]]) -> list[str]:
    rows: list[tuple[str, ...]] = [
        ("agents", "timeout", "backend", "client", "round", "returned s", "overshoot", "fast answered",
         "errors", "CPU s", "target"),
    ]  # fmt: skip
    for r in runs:
        client = "a2a-anyio" if r["impl"] == "anyio" else "floor"
        if "failed" in r:
            rows.append(
                (f"{r['agents']:,}", "", r["backend"], client, "failed: " + r["failed"][-80:])
            )
            continue
        t = r["timeout"]
        for rd in r["rounds"]:
            ok = rd["returned_s"] <= t * (1 + OVERSHOOT_MAX) and rd["fast_answers"] == r["fast"]
            rows.append(
                (
                    f"{r['agents']:,}",
                    f"{t:g} s",
                    r["backend"],
                    client,
                    rd["round"],
                    f"{rd['returned_s']:.2f}",
                    f"{rd['overshoot_s']:+.2f} s ({rd['overshoot_s'] / t:+.0%})",
                    f"{rd['fast_answers']:,}/{r['fast']:,}",
                    str(rd["errors"]),
                    f1(rd["cpu_s"]),
                    ("PASS" if ok else "FAIL") if r["impl"] == "anyio" else "",
                )
            )
    return [
        "fan-out: fan_out(..., timeout=T) over a fresh AgentPool() to agents on "
        f"{SERVERS} server processes (a port each), every {SLOW_EVERY}rd agent never answering; "
        "the floor: raw httpx, one AsyncClient per 10 agents",
        *grid(rows, left=(0, 2, 3, 4)),
        f"(cold: every card discovered within the deadline; warm: the same pool again; target: "
        f"returned within the timeout + {OVERSHOOT_MAX:.0%}, every fast agent answered; a fresh "
        "client process per row)",
    ]


def streams_table(runs: list[dict[str, Any]]) -> list[str]:
    rows: list[tuple[str, ...]] = [
        ("events", "streams", "backend", "client", "to idle s", "CPU s", "idle", "errors",
         "extra RSS idle MB", "KB/stream", "peak MB", "x floor", "target"),
    ]  # fmt: skip
    for r in runs:
        client = "a2a-anyio" if r["impl"] == "anyio" else "floor"
        if "failed" in r:
            rows.append(
                (
                    r["shape"],
                    f"{r['streams']:,}",
                    r["backend"],
                    client,
                    "failed: " + r["failed"][-80:],
                )
            )
            continue
        floor = _floor_of(runs, r, "streams", "shape") if r["impl"] == "anyio" else None
        ratio = None
        if floor is not None and "failed" not in floor and floor["extra_rss_idle_mb"] > 0:
            ratio = r["extra_rss_idle_mb"] / floor["extra_rss_idle_mb"]
        complete = r["idle"] == r["streams"] and not r["errors"]
        verdict = ""
        if r["impl"] == "anyio":
            verdict = "PASS" if complete and ratio is not None and ratio <= RSS_MAX else "FAIL"
        rows.append(
            (
                r["shape"],
                f"{r['streams']:,}",
                r["backend"],
                client,
                f1(r["wall_s"]) + (" (cut)" if r["cut"] else ""),
                f1(r["cpu_s"]),
                f"{r['idle']:,}",
                str(r["errors"]),
                f1(r["extra_rss_idle_mb"]),
                f"{r['extra_rss_idle_mb'] * 1024 / r['streams']:.0f}",
                f1(r["extra_rss_peak_mb"]),
                times(ratio) if ratio is not None else "",
                verdict,
            )
        )
    return [
        f"idle streams: N streams at once over {STREAM_AGENTS} agents (a server process each), idle after "
        f"{STREAM_EVENTS} events of ~{EVENT_BYTES} bytes; a2a-anyio: one AgentPool() on its "
        "defaults; the floor: httpx + httpx-sse + json.loads, nothing kept, an httpx client per "
        "agent",
        *grid(rows, left=(0, 1, 2, 3)),
        "(events: status, a progress message in each (the task keeps the latest); chunks, a "
        "status, then chunks appended to one artifact (the task keeps them all); "
        f"extra RSS over the client's RSS after setup: at idle after gc.collect(), and its "
        f"peak; target: at most {RSS_MAX}x the floor's at idle, every stream idle; a fresh "
        "client process per round, medians of 3 rounds up to 1,000 streams, one above)",
    ]


def run(
    only: Sequence[str],
    backends: Sequence[str],
    fanout_sizes: Sequence[int] = FANOUT_AGENTS,
    stream_sizes: Sequence[int] = STREAMS,
    timeout: float | None = None,
    shapes: Sequence[str] = STREAM_SHAPES,
    rounds: int | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "fanout" in only:
        out["fanout"] = run_fanout(fanout_sizes, backends, timeout)
    if "streams" in only:
        out["streams"] = run_streams(stream_sizes, backends, shapes, rounds)
    return out


def table(res: dict[str, Any]) -> list[str]:
    lines: list[str] = []
    if "fanout" in res:
        lines += fanout_table(res["fanout"])
    if "streams" in res:
        lines += ["", *streams_table(res["streams"])] if lines else streams_table(res["streams"])
    return lines


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--only", default="fanout,streams", help="fanout and/or streams")
    p.add_argument("--quick", action="store_true", help="300 agents, 1,000 streams")
    p.add_argument("--backends", default="asyncio,trio")
    p.add_argument("--agents", help="fan-out sizes, comma-separated")
    p.add_argument("--streams", help="stream counts, comma-separated")
    p.add_argument("--timeout", type=float, help="the fan-out's timeout (default: by size)")
    p.add_argument("--shapes", default=",".join(STREAM_SHAPES), help="the streams' events")
    p.add_argument("--rounds", type=int, help="streams: processes per contender (default: by size)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    a = p.parse_args()
    fan = (300,) if a.quick else FANOUT_AGENTS
    strm = (1000,) if a.quick else STREAMS
    if a.agents:
        fan = tuple(int(x) for x in a.agents.split(","))
    if a.streams:
        strm = tuple(int(x) for x in a.streams.split(","))
    start = time.perf_counter()
    load = os.getloadavg()[0]
    res = run(
        a.only.split(","),
        a.backends.split(","),
        fan,
        strm,
        a.timeout,
        a.shapes.split(","),
        a.rounds,
    )
    res["load_avg"] = [load, os.getloadavg()[0]]
    res["elapsed_s"] = time.perf_counter() - start
    if a.json:
        print(json.dumps(res, indent=1))
    else:
        print("\n".join(table(res)))
        print(f"\n(load average {load:.2f} at start, {os.getloadavg()[0]:.2f} at the end; "
              f"{res['elapsed_s']:.0f} s)")  # fmt: skip
