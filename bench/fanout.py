"""Fan-out at scale: many concurrent streams from one process against a loopback server.

    uv run --frozen python bench/fanout.py --streams 1000
    uv run --frozen python bench/fanout.py --streams 10000 --pools 40 --backends trio
    uv run --frozen python bench/fanout.py --streams 1000 --impl floor
    uv run --frozen python bench/fanout.py --streams 1000 --impl sdk --backends asyncio

Each measurement gets a fresh ``loopback_server.py --hold N`` (a process of its own on
127.0.0.1, its open-files limit raised to the hard limit) and a fresh client process
(``fanout_child.py``), so that RSS and CPU time are that client's. The server holds every
stream after its first event until all N are open at once: the server's peak of open
streams is then N unless some stream queued behind another for a connection (the hold then
gives up after ``hold_timeout`` seconds and the peak stays short of N).

``run`` measures every case twice: a2a-anyio, and the floor (httpx + httpx-sse +
``json.loads``, nothing kept), which says what the connections alone cost. A case with
``pools`` > 1 spreads its streams over that many pools, each with its own httpx client: what
a user with thousands of streams in one process does (httpcore's pool walks all of its
connections on every request that starts or ends, so one pool of 10,000 costs O(N^2)).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import urllib.request
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from _serve import served

HERE = Path(__file__).resolve().parent


@dataclass(frozen=True)
class Case:
    """``streams`` concurrent streams of ``events`` events each, spread over ``pools`` pools
    (``AgentPool()``s; httpx clients for the floor), the client cut after ``timeout`` seconds;
    the target's bound on extra RSS, and whether it says that no stream waits for a
    connection."""

    streams: int
    events: int
    timeout: float
    rss_max_mb: float | None = None
    no_wait: bool = False
    pools: int = 1

    @property
    def hold_timeout(self) -> float:
        return self.timeout / 2


#: Issue 17's two fan-outs, the 10,000 streams over pools of 250; the quick ones keep their
#: bounds per stream (60 and 40 KB) and streams per pool.
FULL = (Case(1000, 20, 120.0, 60.0, True), Case(10_000, 20, 120.0, 400.0, pools=40))
QUICK = (Case(200, 20, 60.0, 12.0, True), Case(500, 20, 60.0, 20.0, pools=2))
#: Who is measured: a2a-anyio, then the floor.
IMPLS = ("anyio", "floor")


def listen_overflows() -> int | None:
    """The kernel's count of connections its listen queues dropped (this network namespace)."""
    try:
        lines = Path("/proc/net/netstat").read_text().splitlines()
    except OSError:
        return None
    for names, values in zip(lines[::2], lines[1::2], strict=True):
        if names.startswith("TcpExt:"):
            row = dict(zip(names.split()[1:], values.split()[1:], strict=True))
            return int(row["ListenOverflows"]) if "ListenOverflows" in row else None
    return None


def stats(url: str) -> dict[str, Any]:
    """The server's stream figures since the previous call (``peak``: open at once)."""
    with urllib.request.urlopen(f"{url}/stats", timeout=30) as resp:
        value: dict[str, Any] = json.loads(resp.read())
    return value


def measure(
    case: Case,
    backend: str,
    impl: str = "anyio",
    max_connections: int = 0,
    keep_events: int = -1,
) -> dict[str, Any]:
    """One client run against a fresh server; the child's JSON report and the server's view."""
    head = {"impl": impl, "backend": backend, "streams": case.streams, "case": asdict(case)}
    args = (
        f"--events={case.events}",
        f"--hold={case.streams}",
        f"--hold-timeout={case.hold_timeout:.0f}",
        f"--lifetime={case.timeout + 120:.0f}",
    )
    with served("loopback_server.py", *args) as url:
        cmd = [
            sys.executable,
            str(HERE / "fanout_child.py"),
            f"--impl={impl}",
            f"--backend={backend}",
            f"--streams={case.streams}",
            f"--url={url}",
            f"--max-connections={max_connections}",
            f"--keep-events={keep_events}",
            f"--pools={case.pools}",
            f"--timeout={case.timeout}",
        ]
        stats(url)
        dropped = listen_overflows()
        try:
            out = subprocess.run(
                cmd, capture_output=True, text=True, timeout=case.timeout + 60, check=False
            )
        except subprocess.TimeoutExpired:  # subprocess.run kills and reaps the child
            return head | {"failed": f"timed out after {case.timeout + 60:.0f} s"}
        seen = stats(url)
        after = listen_overflows()
    if out.returncode != 0 or not out.stdout.strip():
        why = out.stderr.strip().splitlines()[-1:] or [f"exit {out.returncode}"]
        return head | {"failed": why[0][-300:]}
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["case"] = asdict(case)
    result["server"] = seen
    result["listen_overflows"] = None if dropped is None or after is None else after - dropped
    return result


def run(cases: Sequence[Case], backends: Sequence[str] = ("asyncio", "trio")) -> dict[str, Any]:
    """a2a-anyio with ``AgentPool()`` and ``merge_streams`` on their defaults, and the floor,
    every case on every backend."""
    runs = []
    for case in cases:
        for backend in backends:
            for impl in IMPLS:
                print(
                    f"fan-out: {case.streams} streams on {backend}, {impl}",
                    file=sys.stderr,
                    flush=True,
                )
                runs.append(measure(case, backend, impl))
    return {"cases": [asdict(c) for c in cases], "runs": runs}


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--streams", type=int, default=1000)
    p.add_argument("--events", type=int, default=20, help="events per stream")
    p.add_argument("--timeout", type=float, default=300.0, help="the client's run, seconds")
    p.add_argument("--backends", default="asyncio,trio")
    p.add_argument("--impl", choices=("anyio", "floor", "sdk"), default="anyio")
    p.add_argument("--pools", type=int, default=1, help="the streams spread over this many pools")
    p.add_argument("--max-connections", type=int, default=0, help="0: the default pool")
    p.add_argument("--keep-events", type=int, default=-1, help="-1: the default")
    a = p.parse_args()
    one = Case(a.streams, a.events, a.timeout, pools=a.pools)
    print(
        json.dumps(
            [
                measure(one, b, a.impl, a.max_connections, a.keep_events)
                for b in a.backends.split(",")
            ],
            indent=1,
        )
    )
