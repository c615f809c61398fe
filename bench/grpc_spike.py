"""The gRPC spike: a minimal h2-over-anyio client (route (b), ``grpc_h2.py``) against
a2a-sdk's grpcio client, both talking to a2a-sdk 1.x's own gRPC server; figures and the
choice in docs/architecture.md ("gRPC").

    uv run --frozen python bench/grpc_spike.py            # ~2 min
    uv run --frozen python bench/grpc_spike.py --quick    # ~40 s
    uv run --frozen python bench/grpc_spike.py --json

The server (``grpc_server.py``) and the grpcio clients run in ``bench/.venv-grpc``, made on
first use with ``python -m venv`` and pip from ``REQUIREMENTS`` (never the project's
environment: grpcio is no dependency of a2a-anyio). Each (contender, backend, round) is a
fresh process (``grpc_child.py``) measuring its own CPU time; the contenders of a round run
one after another in an order rotated per round; the figures are medians over rounds.

Then the cancellation check: each client reads 3 events of a stream that would go on for
30 s and leaves it by cancelling its cancel scope; then one stream is cut by a 0.3 s
deadline. The server logs when each handler ended: how long after the client's cancel
the server stopped is the figure (route (b) resets the stream with RST_STREAM(CANCEL)).
Last, the installed size of what each route needs at run time.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-grpc"
REQUIREMENTS = ("a2a-sdk[grpc]==1.3.0", "grpcio==1.85.3", "protobuf==7.36.2")
#: (contender, backend, environment)
CONTENDERS = (
    ("h2", "asyncio", "project"),
    ("h2", "trio", "project"),
    ("grpcio", "asyncio", "grpc"),
    ("a2a-sdk", "asyncio", "grpc"),
)
FULL = (1000, 5000, 5)  # unary calls, stream events, rounds
QUICK = (200, 1000, 3)
#: What each route needs installed at run time (distributions).
ROUTE_A = ("grpcio", "protobuf", "googleapis-common-protos")
ROUTE_B = ("h2", "hpack", "hyperframe", "protobuf", "googleapis-common-protos")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def grpc_python() -> Path:
    """The interpreter of ``bench/.venv-grpc``, made (or remade) for ``REQUIREMENTS``."""
    python = VENV / "bin" / "python"
    stamp = VENV / "bench-requirements.txt"
    wanted = "\n".join(REQUIREMENTS) + "\n"
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    _log(f"grpc: creating {VENV.name} ({', '.join(REQUIREMENTS)})")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    for cmd in (
        [sys.executable, "-m", "venv", "--clear", str(VENV)],
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         *REQUIREMENTS],
    ):  # fmt: skip
        subprocess.run(cmd, check=True, timeout=600, env=env)
    stamp.write_text(wanted)
    return python


@contextlib.contextmanager
def server(python: Path, log: Path) -> Iterator[int]:
    """The port of a running ``grpc_server.py``; stopped and reaped on exit."""
    proc = subprocess.Popen(
        [str(python), str(HERE / "grpc_server.py"), "--log", str(log)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # the server prints READY or dies
        if not line.startswith("READY "):
            raise RuntimeError(f"grpc_server.py did not start: {line!r}")
        yield int(line.split()[1])
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def child(python: Path, contender: str, backend: str, port: int, *args: str) -> dict[str, Any]:
    cmd = [str(python), str(HERE / "grpc_child.py"), contender, backend, str(port), *args]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"{contender}/{backend}: {out.stderr.strip()[-2000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def measure(pythons: dict[str, Path], port: int, size: tuple[int, int, int]) -> dict[str, Any]:
    calls, events, rounds = size
    runs: dict[str, list[dict[str, Any]]] = {}
    for r in range(rounds):
        order = CONTENDERS[r % len(CONTENDERS) :] + CONTENDERS[: r % len(CONTENDERS)]
        for contender, backend, env in order:
            name = f"{contender} ({backend})"
            result = child(pythons[env], contender, backend, port, "bench", str(calls), str(events))
            runs.setdefault(name, []).append(result)
            _log(f"round {r + 1}/{rounds} {name}: {result}")
    return {
        name: {key: statistics.median(run[key] for run in results) for key in results[0]}
        for name, results in runs.items()
    }


def cancellation(pythons: dict[str, Path], port: int, log: Path) -> dict[str, Any]:
    found = {}
    for contender, backend, env in CONTENDERS:
        if contender == "a2a-sdk":
            continue  # its Client is grpcio's call underneath: the grpcio row says it
        log.write_text("")
        times = child(pythons[env], contender, backend, port, "cancel")
        lines = [line.split() for line in log.read_text().splitlines()]
        assert len(lines) == 2, lines
        (cut_at, cut_sent), (expired_at, _) = lines
        found[f"{contender} ({backend})"] = {
            "cancel_to_server_end_ms": (float(cut_at) - times["cancelled_at"]) * 1e3,
            "events_sent_before": int(cut_sent),
            "deadline_hit": times["deadline_hit"],
            "deadline_to_server_end_ms": (float(expired_at) - times["deadline_started"]) * 1e3,
        }
    return found


SIZE_SNIPPET = (
    "import importlib.metadata as m, json, sys\n"
    "print(json.dumps({n: sum(f.size or 0 for f in m.distribution(n).files or ())"
    " for n in sys.argv[1:]}))"
)


def sizes(python: Path | str, names: tuple[str, ...]) -> dict[str, int]:
    out = subprocess.run(
        [str(python), "-c", SIZE_SNIPPET, *names], capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    pythons = {"project": Path(sys.executable), "grpc": grpc_python()}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        log.write_text("")
        with server(pythons["grpc"], log) as port:
            figures = measure(pythons, port, QUICK if args.quick else FULL)
            cancels = cancellation(pythons, port, log)
    installed = {
        "route (a) grpcio": sizes(pythons["grpc"], ROUTE_A),
        "route (b) h2": sizes(pythons["project"], ROUTE_B),
    }
    if args.json:
        print(json.dumps({"figures": figures, "cancellation": cancels, "installed": installed}))
        return
    grpcio = figures["grpcio (asyncio)"]
    print("| client | unary CPU/call | unary wall/call (p50) | stream CPU/event | events/s |")
    print("| --- | --- | --- | --- | --- |")
    for name, f in figures.items():
        ratio = f["unary_cpu_us"] / grpcio["unary_cpu_us"]
        stream_ratio = f["stream_cpu_us"] / grpcio["stream_cpu_us"]
        print(
            f"| {name} | {f['unary_cpu_us']:.0f} µs ({ratio:.2f}x) | {f['unary_p50_us']:.0f} µs"
            f" | {f['stream_cpu_us']:.1f} µs ({stream_ratio:.2f}x) | {f['stream_events_s']:.0f} |"
        )
    print()
    print("| client | cancel -> server's handler ended | deadline 0.3 s -> server ended |")
    print("| --- | --- | --- |")
    for name, c in cancels.items():
        print(
            f"| {name} | {c['cancel_to_server_end_ms']:.1f} ms (after {c['events_sent_before']}"
            f" events) | {c['deadline_to_server_end_ms']:.0f} ms |"
        )
    print()
    for route, dists in installed.items():
        total = sum(dists.values()) / 1e6
        print(
            f"{route}: {total:.1f} MB ({', '.join(f'{k} {v / 1e6:.1f}' for k, v in dists.items())})"
        )
    _log(f"took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
