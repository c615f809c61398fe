"""Scale: a fan-out to hundreds and thousands of agents in every hosting layout, and
thousands of idle streams.

    uv run --frozen python bench/scale.py                    # both parts, every case (~15 min)
    uv run --frozen python bench/scale.py --quick            # 300 agents a layout, 1,000 streams
    uv run --frozen python bench/scale.py --only fanout --layouts path --agents 1000
    uv run --frozen python bench/scale.py --only streams --streams 10000 --json

The agents are ``agents_server.py``'s, on 127.0.0.1. Every measurement is a fresh client
process (``scale_child.py``), a2a-anyio and the floor beside it, on asyncio and trio.

- **fanout**: ``pool.fan_out(urls, "hello", timeout=T)`` over a fresh ``AgentPool()``, every
  third agent slow (it names a task, then never ends it), in each layout (``LAYOUTS``):
  ``port``, a port per agent (``SERVERS`` processes); ``path``, 100 agents per origin, each
  under its own path (``SERVERS`` processes); ``origin``, every agent behind one origin (one
  process); ``sends``, N sends to one agent (one process), every third of them held. Per
  round: the time to return, its overshoot past ``T``, the fast agents' answers and the
  client's CPU; a cold round (every card discovered within the deadline, what
  ``fan_out(urls, ...)`` does) and a warm one over the same pool. Beside it, the floor: raw
  httpx, one ``httpx.AsyncClient`` per 10 agents, the same requests in one task group inside
  ``move_on_after(T)``, then a ``CancelTask`` for each task it cut, as the fan-out cancels
  them; and httpx2 (a fork of httpx with a connection pool that does not walk its
  connections for each request), one client for all, as an anchor. The cancels each client
  sent, and those the agents received. Targets: a2a-anyio returns within ``T`` + 10 % with
  every fast agent answered and every slow one cancelled, for at most 1.5x the floor's CPU.
- **streams**: N streams at once over ``STREAM_AGENTS`` agents (one per server process), each
  read through ``STREAM_EVENTS`` events of about 500 bytes, after which the agents hold them
  open, idle: the client's extra RSS half a second after the last event (delivered), then
  after a ``gc.collect()`` (idle), and at its peak, over its RSS after setup. a2a-anyio: one
  ``AgentPool()``, every option on its default; the floor: httpx + httpx-sse +
  ``json.loads``, nothing kept, one httpx client per agent. Target: a2a-anyio's extra RSS
  delivered and idle at most 1.25x the floor's.

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
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any, NamedTuple

from _serve import started
from _table import f1, grid, times

HERE = Path(__file__).resolve().parent
SERVERS = 10


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
#: The fan-out's contenders: a2a-anyio, its floor, and httpx2 as an anchor.
FANOUT_IMPLS = ("anyio", "floor", "httpx2")
#: A fan-out's client CPU: at most this many times the floor's, in the same run.
CPU_MAX = 1.5


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


#: How the agents are hosted: name -> (what the table says, agents per origin (None: all),
#: server processes (None: ``SERVERS``)). ``sends``: one agent, sent one request per "agent",
#: every ``SLOW_EVERY``-th of them held.
LAYOUTS: dict[str, tuple[str, int | None, int | None]] = {
    "port": ("a port per agent", 1, None),
    "path": ("100 agents per origin, under /a<n>", 100, None),
    "origin": ("every agent behind one origin, under /a<n>", None, 1),
    "sends": ("N sends from one client to one agent", None, 1),
}
#: The fan-outs of a full run: (layout, agents).
FANOUT_CASES = (
    ("port", 300), ("port", 1000), ("port", 3000), ("path", 1000), ("path", 3000),
    ("origin", 1000), ("sends", 1000),
)  # fmt: skip


class Hosted(NamedTuple):
    """Agents started: their base URLs, in the order of their numbers, and one URL a server
    process, where it counts what it was sent."""

    urls: list[str]
    processes: list[str]

    def cancels(self) -> int:
        """The ``CancelTask`` requests the agents received so far."""
        total = 0
        for url in self.processes:
            origin = "/".join(url.split("/", 3)[:3])
            with urllib.request.urlopen(f"{origin}/_cancels", timeout=10) as got:
                total += int(got.read())
        return total


@contextmanager
def agents(count: int, *options: str, layout: str = "port") -> Iterator[Hosted]:
    """``count`` agents hosted as ``layout`` says (agent i in process i // share); their base
    URLs, in the order of their numbers (``sends``: one agent's URL ``count`` times). Stopped
    on exit."""
    _, per_origin, processes = LAYOUTS[layout]
    if layout == "sends":
        with started("agents_server.py", "--agents=1", "--slow-requests", *options) as line:
            yield Hosted(line.split() * count, line.split())
        return
    share = math.ceil(count / (processes or SERVERS))
    with ExitStack() as stack:
        hosted = Hosted([], [])
        for first in range(0, count, share):
            n = min(share, count - first)
            args = (f"--agents={n}", f"--first={first}", f"--per-origin={per_origin or n}")
            line = stack.enter_context(started("agents_server.py", *args, *options))
            got = line.split()
            if len(got) != n:
                raise RuntimeError(f"agents_server.py did not start: {line[:200]!r}")
            hosted.urls.extend(got)
            hosted.processes.append(got[0])
        yield hosted


def child(mode: str, impl: str, backend: str, urls: Sequence[str], *options: str) -> dict[str, Any]:
    """One ``scale_child.py`` run; its JSON report, or ``{"failed": why}``."""
    cmd = [
        sys.executable,
        str(HERE / "scale_child.py"),
        f"--mode={mode}",
        f"--impl={impl}",
        f"--backend={backend}",
        *options,
    ]
    head = {"mode": mode, "impl": impl, "backend": backend}
    try:
        out = subprocess.run(
            cmd, input="\n".join(urls), capture_output=True, text=True, timeout=400, check=False
        )
    except subprocess.TimeoutExpired:
        return head | {"failed": "timed out after 400 s"}
    if out.returncode != 0 or not out.stdout.strip():
        why = out.stderr.strip().splitlines()[-1:] or [f"exit {out.returncode}"]
        return head | {"failed": why[0][-300:]}
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    return result


def run_fanout(
    cases: Sequence[tuple[str, int]], backends: Sequence[str], timeout: float | None = None
) -> list[dict[str, Any]]:
    runs = []
    for layout, n in cases:
        t = timeout if timeout is not None else fanout_timeout(n)
        options = (f"--slow-every={SLOW_EVERY}", "--answer-streams")
        with agents(n, *options, layout=layout) as hosted:
            for backend in backends:
                for impl in FANOUT_IMPLS:
                    _log(f"fanout: {n} agents ({layout}) on {backend}, {impl}")
                    extra = ("--slow-requests",) if layout == "sends" else ()
                    before = hosted.cancels()
                    r = child(
                        "fanout", impl, backend, hosted.urls,
                        f"--timeout={t}", f"--slow-every={SLOW_EVERY}", *extra,
                    )  # fmt: skip
                    cancels = hosted.cancels() - before  # (both rounds)
                    runs.append(
                        r | {"agents": n, "timeout": t, "layout": layout, "cancels": cancels}
                    )
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
        with agents(STREAM_AGENTS, *options) as hosted:
            urls = hosted.urls
            for n in sizes:
                for backend in backends:
                    got: dict[str, list[dict[str, Any]]] = {impl: [] for impl in IMPLS}
                    for k in range(rounds or stream_rounds(n)):
                        for impl in IMPLS[k % 2 :] + IMPLS[: k % 2]:  # the order alternates
                            _log(f"streams: {n} of {shape} on {backend}, {impl}, round {k + 1}")
                            opts = (f"--streams={n}", f"--events={STREAM_EVENTS}")
                            got[impl].append(child("streams", impl, backend, urls, *opts))
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
    for key in (
        "wall_s", "cpu_s", "extra_rss_delivered_mb", "extra_rss_idle_mb", "extra_rss_peak_mb"
    ):  # fmt: skip
        out[key] = statistics.median(r[key] for r in done)
    out["idle"] = min(r["idle"] for r in done)
    out["errors"] = sum(r["errors"] for r in done) + len(results) - len(done)
    out["cut"] = any(r["cut"] for r in done)
    out["rounds"] = results
    return out


def _floor_of(
    runs: list[dict[str, Any]], r: dict[str, Any], *keys: str, impl: str = "floor"
) -> dict[str, Any] | None:
    for other in runs:
        if (
            other["impl"] == impl
            and other["backend"] == r["backend"]
            and all(other[k] == r[k] for k in keys)
        ):
            return other
    return None


def _round(r: dict[str, Any] | None, name: str) -> dict[str, Any] | None:
    if r is None or "failed" in r:
        return None
    return next((rd for rd in r["rounds"] if rd["round"] == name), None)


def fanout_table(runs: list[dict[str, Any]]) -> list[str]:
    rows: list[tuple[str, ...]] = [
        ("layout", "agents", "timeout", "backend", "round", "returned s", "overshoot",
         "fast answered", "slow cancelled", "agents' cancels", "errors", "CPU s", "GC s",
         "floor s", "floor fast", "floor cancelled", "floor CPU", "floor GC", "x floor",
         "httpx2 s", "httpx2 fast", "httpx2 CPU", "time", "CPU", "floor's time"),
    ]  # fmt: skip
    for r in runs:
        if r["impl"] != "anyio":
            continue
        keys = ("agents", "layout")
        floor = _floor_of(runs, r, *keys)
        anchor = _floor_of(runs, r, *keys, impl="httpx2")
        head = (r["layout"], f"{r['agents']:,}", f"{r['timeout']:g} s", r["backend"])
        if "failed" in r:
            rows.append((*head, "failed: " + r["failed"][-80:]))
            continue
        t = r["timeout"]

        slow = r["agents"] - r["fast"]

        def in_time(
            rd: dict[str, Any], r: dict[str, Any] = r, t: float = t, slow: int = slow
        ) -> bool:
            # (sends: the agent holds every third request it receives, counted over both
            # rounds, so that a round may have one held request more or fewer)
            slack = 1 if r["layout"] == "sends" else 0
            answered = rd["fast_answers"] >= r["fast"] - slack
            cancelled = rd.get("cancels", 0) >= slow - slack
            return bool(rd["returned_s"] <= t * (1 + OVERSHOOT_MAX) and answered and cancelled)

        for rd in r["rounds"]:
            fl, an = _round(floor, rd["round"]), _round(anchor, rd["round"])
            ratio = rd["cpu_s"] / fl["cpu_s"] if fl and fl["cpu_s"] > 0 else None
            rows.append(
                (
                    *head,
                    rd["round"],
                    f"{rd['returned_s']:.2f}",
                    f"{rd['overshoot_s']:+.2f} s ({rd['overshoot_s'] / t:+.0%})",
                    f"{rd['fast_answers']:,}/{r['fast']:,}",
                    f"{rd['cancels']:,}/{slow:,}",
                    f"{r['cancels']:,}/{2 * slow:,}",
                    str(rd["errors"]),
                    f1(rd["cpu_s"]),
                    f1(rd["gc_s"]),
                    f"{fl['returned_s']:.2f}" if fl else "n/a",
                    f"{fl['fast_answers']:,}" if fl else "n/a",
                    f"{fl['cancels']:,}" if fl else "n/a",
                    f1(fl["cpu_s"]) if fl else "n/a",
                    f1(fl["gc_s"]) if fl else "n/a",
                    times(ratio),
                    f"{an['returned_s']:.2f}" if an else "n/a",
                    f"{an['fast_answers']:,}" if an else "n/a",
                    f1(an["cpu_s"]) if an else "n/a",
                    "PASS" if in_time(rd) else "FAIL",
                    "PASS" if ratio is not None and ratio <= CPU_MAX else "FAIL",
                    ("PASS" if in_time(fl) else "FAIL") if fl else "n/a",
                )
            )
    return [
        "fan-out: fan_out(..., timeout=T) over a fresh AgentPool(), every "
        f"{SLOW_EVERY}rd agent (sends: request) slow (it names a task, then never ends it); "
        "beside it the floor (raw httpx, one AsyncClient per 10 agents) and httpx2 (one "
        "AsyncClient for all), which cancel the tasks they cut too",
        *grid(rows, left=(0, 1, 3, 4)),
        "(layouts: "
        + "; ".join(f"{name}, {what}" for name, (what, _, _) in LAYOUTS.items())
        + f"; cold: every card discovered within the deadline; warm: the same pool again; "
        "GC s: the cyclic collector's share of the CPU (gc.callbacks); "
        f"slow cancelled: the cancels the client sent in the round; agents' cancels: those "
        f"the agents received, both rounds; targets: time, returned within the timeout + "
        f"{OVERSHOOT_MAX:.0%} with every fast agent answered and every slow one cancelled; "
        f"CPU, at most {CPU_MAX}x the floor's; the floor's time, the time target applied to "
        "the floor; a fresh client process per contender)",
    ]


def _ratio(r: dict[str, Any], floor: dict[str, Any] | None, key: str) -> float | None:
    if floor is None or "failed" in floor or floor.get(key, 0) <= 0:
        return None
    return float(r[key]) / float(floor[key])


def streams_table(runs: list[dict[str, Any]]) -> list[str]:
    rows: list[tuple[str, ...]] = [
        ("events", "streams", "backend", "to idle s", "CPU s", "idle", "errors",
         "delivered MB", "idle MB", "KB/stream", "peak MB", "floor s", "floor CPU",
         "floor delivered", "floor idle", "x floor delivered", "x floor idle", "target"),
    ]  # fmt: skip
    for r in runs:
        if r["impl"] != "anyio":
            continue
        head = (r["shape"], f"{r['streams']:,}", r["backend"])
        if "failed" in r:
            rows.append((*head, "failed: " + r["failed"][-80:]))
            continue
        floor = _floor_of(runs, r, "streams", "shape")
        fl = floor if floor is not None and "failed" not in floor else None
        delivered = _ratio(r, fl, "extra_rss_delivered_mb")
        idle = _ratio(r, fl, "extra_rss_idle_mb")
        complete = r["idle"] == r["streams"] and not r["errors"]
        ok = complete and delivered is not None and idle is not None
        ok = ok and max(delivered or 0, idle or 0) <= RSS_MAX
        rows.append(
            (
                *head,
                f1(r["wall_s"]) + (" (cut)" if r["cut"] else ""),
                f1(r["cpu_s"]),
                f"{r['idle']:,}",
                str(r["errors"]),
                f1(r["extra_rss_delivered_mb"]),
                f1(r["extra_rss_idle_mb"]),
                f"{r['extra_rss_idle_mb'] * 1024 / r['streams']:.0f}",
                f1(r["extra_rss_peak_mb"]),
                f1(fl["wall_s"]) if fl else "n/a",
                f1(fl["cpu_s"]) if fl else "n/a",
                f1(fl["extra_rss_delivered_mb"]) if fl else "n/a",
                f1(fl["extra_rss_idle_mb"]) if fl else "n/a",
                times(delivered),
                times(idle),
                "PASS" if ok else "FAIL",
            )
        )
    return [
        f"idle streams: N streams at once over {STREAM_AGENTS} agents (a server process each), "
        f"idle after {STREAM_EVENTS} events of ~{EVENT_BYTES} bytes; a2a-anyio: one AgentPool() "
        "on its defaults; beside it the floor: httpx + httpx-sse + json.loads, nothing kept, "
        "an httpx client per agent",
        *grid(rows, left=(0, 1, 2)),
        "(events: status, a progress message in each (the task keeps the latest); chunks, a "
        "status, then chunks appended to one artifact (the task keeps them all); extra RSS "
        "over the client's RSS after setup: delivered, half a second after the last event; "
        "idle, then after a gc.collect(); and its peak; target: at most "
        f"{RSS_MAX}x the floor's, delivered and idle, every stream idle; a fresh client "
        "process per round, medians of 3 rounds up to 1,000 streams, one above)",
    ]


def run(
    only: Sequence[str],
    backends: Sequence[str],
    fanout_cases: Sequence[tuple[str, int]] = FANOUT_CASES,
    stream_sizes: Sequence[int] = STREAMS,
    timeout: float | None = None,
    shapes: Sequence[str] = STREAM_SHAPES,
    rounds: int | None = None,
) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if "fanout" in only:
        out["fanout"] = run_fanout(fanout_cases, backends, timeout)
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
    p.add_argument("--quick", action="store_true", help="300 agents a layout, 1,000 streams")
    p.add_argument("--backends", default="asyncio,trio")
    p.add_argument("--agents", help="fan-out sizes, comma-separated (in every --layouts)")
    p.add_argument("--layouts", help=f"fan-out layouts, comma-separated: {', '.join(LAYOUTS)}")
    p.add_argument("--streams", help="stream counts, comma-separated")
    p.add_argument("--timeout", type=float, help="the fan-out's timeout (default: by size)")
    p.add_argument("--shapes", default=",".join(STREAM_SHAPES), help="the streams' events")
    p.add_argument("--rounds", type=int, help="streams: processes per contender (default: by size)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    a = p.parse_args()
    layouts = a.layouts.split(",") if a.layouts else list(LAYOUTS)
    fan = tuple(case for case in FANOUT_CASES if case[0] in layouts)
    if a.quick or a.agents:
        sizes = [int(x) for x in a.agents.split(",")] if a.agents else [300]
        fan = tuple((layout, n) for layout in layouts for n in sizes)
    strm = (1000,) if a.quick else STREAMS
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
