"""gRPC over loopback: a2a-anyio's gRPC binding (asyncio, trio) beside a2a-sdk's grpcio
clients (its raw stub, its ``Client``), all on a2a-sdk 1.x's own gRPC server, and for
context a2a-anyio over the same server's JSON-RPC interface; figures in
docs/performance.md ("gRPC").

    uv run --frozen python bench/grpc_loopback.py            # ~2 min
    uv run --frozen python bench/grpc_loopback.py --quick    # ~30 s
    uv run --frozen python bench/grpc_loopback.py --json
    uv run --frozen python bench/grpc_loopback.py --src ../old/src   # before and after

The server (``grpc_server.py``) and the grpcio clients run in ``bench/.venv-grpc``, made on
first use with ``python -m venv`` and pip from the interop suite's pins of a2a-sdk 1.x with
gRPC (``tests/interop/sdk1grpc/requirements.txt``; never the project's environment: grpcio
is no dependency of a2a-anyio). Each (contender, backend, round) is a fresh process
(``grpc_child.py``) measuring its own CPU time; the contenders of a round run one after
another in an order rotated per round; the figures are medians over rounds, the ratios
medians of per-round ratios to grpcio's raw stub.

Then the cancellation check: each client reads 3 events of a stream that would go on for
30 s and leaves it by cancelling its cancel scope; then one stream is cut by a 0.3 s
deadline. The server logs when each handler ended: how long after the client's cancel the
server stopped is the figure. Last, the installed size of what each gRPC client needs at
run time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from _serve import served
from _table import f1, grid, times

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv-grpc"
REQUIREMENTS = HERE.parent / "tests" / "interop" / "sdk1grpc" / "requirements.txt"
#: (contender, backend, environment, the row's name)
CONTENDERS = (
    ("a2a-anyio", "asyncio", "project", "a2a-anyio gRPC"),
    ("a2a-anyio", "trio", "project", "a2a-anyio gRPC"),
    ("grpcio", "asyncio", "grpc", "grpcio stub"),
    ("a2a-sdk", "asyncio", "grpc", "a2a-sdk Client gRPC"),
    ("a2a-anyio-jsonrpc", "asyncio", "project", "a2a-anyio JSON-RPC"),
    ("a2a-anyio-jsonrpc", "trio", "project", "a2a-anyio JSON-RPC"),
)
BASE = "grpcio stub (asyncio)"
FULL = (1000, 5000, 5)  # unary calls, stream events, rounds
QUICK = (200, 1000, 3)
METRICS = ("unary_cpu_us", "unary_wall_us", "unary_p50_us", "stream_cpu_us", "stream_events_s")
#: What each client needs installed at run time: (environment, distributions).
INSTALLED = {
    "a2a-anyio's grpc extra": (
        "project",
        ("h2", "hpack", "hyperframe", "protobuf", "googleapis-common-protos"),
    ),
    "grpcio": ("grpc", ("grpcio", "protobuf", "googleapis-common-protos")),
}


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def grpc_python() -> Path:
    """The interpreter of ``bench/.venv-grpc``, made (or remade) for ``REQUIREMENTS``."""
    python = VENV / "bin" / "python"
    stamp = VENV / "bench-requirements.txt"
    wanted = REQUIREMENTS.read_text()
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python
    _log(f"grpc: creating {VENV.name} from {REQUIREMENTS.relative_to(HERE.parent)}")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV")}
    for cmd in (
        [sys.executable, "-m", "venv", "--clear", str(VENV)],
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         "-r", str(REQUIREMENTS)],
    ):  # fmt: skip
        subprocess.run(cmd, check=True, timeout=600, env=env)
    stamp.write_text(wanted)
    return python


def name(contender: str, backend: str, row: str | None = None) -> str:
    row = row or next(r for c, b, _, r in CONTENDERS if (c, b) == (contender, backend))
    return f"{row} ({backend})"


def child(
    python: Path, contender: str, backend: str, url: str, *args: str, src: str | None = None
) -> dict[str, Any]:
    cmd = [str(python), str(HERE / "grpc_child.py"), contender, backend, url, *args]
    env = None if src is None else {**os.environ, "PYTHONPATH": src}
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=300, check=False, env=env)
    if out.returncode != 0:
        raise RuntimeError(f"{contender}/{backend}: {out.stderr.strip()[-2000:]}")
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def measure(
    pythons: dict[str, Path], url: str, size: tuple[int, int, int], src: str | None = None
) -> dict[str, Any]:
    calls, events, rounds = size
    contenders = list(CONTENDERS)
    if src is not None:  # the gRPC rows again, with another tree's a2a_anyio
        contenders[2:2] = [(c, b, "project", f"{r}, --src") for c, b, _, r in CONTENDERS[:2]]
    runs: dict[str, list[dict[str, Any]]] = {}
    for r in range(rounds):
        order = contenders[r % len(contenders) :] + contenders[: r % len(contenders)]
        for contender, backend, env, label in order:
            row = name(contender, backend, label)
            other = src if label.endswith("--src") else None
            result = child(
                pythons[env], contender, backend, url, "bench", str(calls), str(events), src=other
            )
            runs.setdefault(row, []).append(result)
            _log(f"round {r + 1}/{rounds} {row}: {result}")
    figures: dict[str, Any] = {}
    for row, results in runs.items():
        figures[row] = {k: statistics.median(run[k] for run in results) for k in METRICS}
        for metric in ("unary_cpu_us", "stream_cpu_us"):
            ratios = [
                run[metric] / base[metric] for run, base in zip(results, runs[BASE], strict=True)
            ]
            figures[row][f"{metric}_ratio"] = statistics.median(ratios)
    return {"calls": calls, "events": events + 3, "rounds": rounds, "figures": figures}


def cancellation(pythons: dict[str, Path], url: str, log: Path) -> dict[str, Any]:
    found = {}
    for contender, backend, env, _ in CONTENDERS:
        if contender not in ("a2a-anyio", "grpcio"):
            continue  # a2a-sdk's Client is grpcio's call underneath: the grpcio row says it
        log.write_text("")
        times = child(pythons[env], contender, backend, url, "cancel")
        lines = [line.split() for line in log.read_text().splitlines()]
        assert len(lines) == 2, lines
        (cut_at, cut_sent), (expired_at, _) = lines
        found[name(contender, backend)] = {
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


def sizes(python: Path, names: tuple[str, ...]) -> dict[str, int]:
    out = subprocess.run(
        [str(python), "-c", SIZE_SNIPPET, *names], capture_output=True, text=True, check=True
    )
    return dict(json.loads(out.stdout))


def table(result: dict[str, Any]) -> list[str]:
    rows: list[tuple[str, ...]] = [
        ("client", "backend", "unary CPU/call", "x grpcio", "p50", "stream CPU/event",
         "x grpcio", "events/s"),
    ]  # fmt: skip
    for row, f in result["figures"].items():
        client, backend = row[:-1].rsplit(" (", 1)
        rows.append((
            client, backend,
            f"{f['unary_cpu_us']:.0f} us", times(f["unary_cpu_us_ratio"]),
            f"{f['unary_p50_us']:.0f} us",
            f"{f1(f['stream_cpu_us'])} us", times(f["stream_cpu_us_ratio"]),
            f"{f['stream_events_s']:,.0f}",
        ))  # fmt: skip
    lines = [
        f"gRPC loopback: {result['calls']:,} unary calls, a stream of {result['events']:,} "
        f"events x {result['rounds']} rounds; medians; ratios are medians of per-round ratios",
        *grid(rows),
        "",
    ]
    rows = [("client", "backend", "cancel -> handler ended", "events sent",
             "deadline 0.3 s -> handler ended")]  # fmt: skip
    for row, c in result["cancellation"].items():
        client, backend = row[:-1].rsplit(" (", 1)
        rows.append((
            client, backend, f"{c['cancel_to_server_end_ms']:.1f} ms",
            str(c["events_sent_before"]), f"{c['deadline_to_server_end_ms']:.0f} ms",
        ))  # fmt: skip
    lines += [*grid(rows), ""]
    for what, dists in result["installed"].items():
        total = sum(dists.values()) / 1e6
        parts = ", ".join(f"{k} {v / 1e6:.2f}" for k, v in dists.items())
        lines.append(f"installed, {what}: {total:.1f} MB ({parts})")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--src", help="also the gRPC rows with the a2a_anyio of this src/")
    args = parser.parse_args()
    if args.src is not None and not (Path(args.src) / "a2a_anyio").is_dir():
        parser.error(f"--src {args.src}: no a2a_anyio package there")
    pythons = {"project": Path(sys.executable), "grpc": grpc_python()}
    started = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        log = Path(tmp) / "server.log"
        log.write_text("")
        with served("grpc_server.py", "--log", str(log), python=pythons["grpc"]) as url:
            result = measure(pythons, url, QUICK if args.quick else FULL, args.src)
            result["cancellation"] = cancellation(pythons, url, log)
    result["installed"] = {what: sizes(pythons[env], d) for what, (env, d) in INSTALLED.items()}
    if args.json:
        print(json.dumps(result))
    else:
        print("\n".join(table(result)))
    _log(f"took {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()
