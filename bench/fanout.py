"""Fan-out at scale: many concurrent streams from one process against a local server.

The bench starts ``sse_server.py`` on 127.0.0.1 in a subprocess, then runs each client in a
child process of its own (``fanout_child.py``) so that RSS and CPU time are that client's.
The server closes when its stdin does, and after ``--lifetime`` seconds in any case.
"""

from __future__ import annotations

import json
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from _serve import served

HERE = Path(__file__).resolve().parent


@contextmanager
def server(events: int, interval: float, lifetime: float = 600.0) -> Iterator[str]:
    """The URL of a running bench SSE server; it is stopped on exit."""
    args = (f"--events={events}", f"--interval={interval}", f"--lifetime={lifetime}")
    with served("sse_server.py", *args) as url:
        yield url


def stats(url: str) -> dict[str, int]:
    """The server's stream counts since the previous call (``peak``: open at once)."""
    with urllib.request.urlopen(f"{url}/stats", timeout=10) as resp:
        value: dict[str, int] = json.loads(resp.read())
    return value


def child(
    url: str,
    impl: str,
    backend: str,
    streams: int,
    max_connections: int,
    duration: float,
    timeout: float = 120.0,
    mode: str = "merge",
    keep_events: int = -1,
) -> dict[str, Any]:
    """Run one client configuration in a fresh interpreter; its JSON report."""
    cmd = [
        sys.executable,
        str(HERE / "fanout_child.py"),
        f"--impl={impl}",
        f"--mode={mode}",
        f"--backend={backend}",
        f"--streams={streams}",
        f"--url={url}",
        f"--max-connections={max_connections}",
        f"--duration={duration}",
        f"--timeout={timeout}",
        f"--keep-events={keep_events}",
    ]
    stats(url)
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout + 60, check=False)
    seen = stats(url)
    if out.returncode != 0:
        return {"impl": impl, "backend": backend, "failed": out.stderr.strip()[-2000:]}
    result: dict[str, Any] = json.loads(out.stdout.strip().splitlines()[-1])
    result["server_peak_open"] = seen["peak"]
    result["server_served"] = seen["served"]
    return result


def run(
    streams: int,
    events: int,
    interval: float,
    backends: tuple[str, ...] = ("asyncio", "trio"),
    default_pool_timeout: float | None = 60.0,
) -> dict[str, Any]:
    """Every configuration against one server.

    a2a-anyio (``AgentPool(max_connections=streams, keep_events=0)``, ``merge_streams``: the
    merged stream hands every event over, so the streams keep no copy) on each backend, and
    once with the streams keeping their events (the default ``keep_events``); a2a-sdk on
    asyncio with an httpx pool of the same size; then, unless ``default_pool_timeout`` is
    None, a2a-anyio with ``AgentPool()`` as it comes, cut after that many seconds.
    """
    duration = events * interval
    limit = max(120.0, 6 * duration)
    runs: list[dict[str, Any]] = []
    with server(events, interval) as url:
        for backend in backends:
            runs.append(
                child(url, "anyio", backend, streams, streams, duration, limit, keep_events=0)
            )
        runs.append(child(url, "anyio", backends[0], streams, streams, duration, limit))
        runs.append(child(url, "sdk", "asyncio", streams, streams, duration, limit))
        if default_pool_timeout is not None:
            runs.append(
                child(url, "anyio", backends[0], streams, 0, duration, default_pool_timeout)
            )
    return {
        "streams": streams,
        "events_per_stream": events,
        "interval_s": interval,
        "stream_duration_s": duration,
        "runs": runs,
    }


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    print(json.dumps(run(n, 20, 0.5), indent=1))
