"""Import time: ``import a2a_anyio`` against ``import a2a.client`` and the floor
``import httpx, httpx_sse, anyio``, each in a fresh interpreter, several runs, median.

The time is taken inside the child around the import statement alone (interpreter start-up
excluded), with ``time.perf_counter``; each round runs the three back to back, and the ratios
are the medians of the per-round ratios. The number of modules each import loads is reported
too.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
from typing import Any

TARGETS = {
    "floor": "httpx, httpx_sse, anyio",
    "a2a-anyio": "a2a_anyio",
    "a2a-sdk": "a2a.client",
}

_PROBE = (
    "import sys, time\n"
    "n = len(sys.modules)\n"
    "t = time.perf_counter()\n"
    "import {modules}\n"
    "t = time.perf_counter() - t\n"
    "print(t, len(sys.modules) - n)\n"
)


def _env() -> dict[str, str]:
    """The children's environment, taken when they start (``run.py --src`` sets PYTHONPATH).

    The children may write bytecode: with PYTHONDONTWRITEBYTECODE set (as in some shells and
    CI images) a freshly edited module would be compiled again on every import, which is not
    what an installed package costs.
    """
    return {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def _once(modules: str) -> tuple[float, int]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE.format(modules=modules)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
        env=_env(),
    )
    secs, count = out.stdout.split()
    return float(secs), int(count)


def run(runs: int) -> dict[str, Any]:
    """Median milliseconds per target over ``runs`` fresh interpreters, and the ratios."""
    for modules in TARGETS.values():  # write the .pyc caches, warm the page cache
        _once(modules)
    times: dict[str, list[float]] = {k: [] for k in TARGETS}
    counts: dict[str, int] = {}
    for _ in range(runs):
        for name, modules in TARGETS.items():
            secs, counts[name] = _once(modules)
            times[name].append(secs * 1000)
    out: dict[str, Any] = {"runs": runs}
    for name in TARGETS:
        out[name] = {
            "ms": statistics.median(times[name]),
            "min_ms": min(times[name]),
            "modules": counts[name],
        }
    # Each round runs the three back to back: the median of the per-round ratios is steadier
    # on a busy machine than the ratio of the medians.
    floor = times["floor"]
    out["ratio_anyio_floor"] = statistics.median(
        a / f for a, f in zip(times["a2a-anyio"], floor, strict=True)
    )
    out["ratio_sdk_floor"] = statistics.median(
        s / f for s, f in zip(times["a2a-sdk"], floor, strict=True)
    )
    return out


if __name__ == "__main__":
    print(json.dumps(run(int(sys.argv[1]) if len(sys.argv) > 1 else 7), indent=1))
