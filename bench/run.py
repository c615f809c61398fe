"""a2a-anyio benchmarks: issue 17's targets, against the floor (httpx itself), a2a-sdk and fasta2a.

    uv run --frozen python bench/run.py                   # the targets' parts, a table (~10 min)
    uv run --frozen python bench/run.py --quick           # a small version (~1.5 min)
    uv run --frozen python bench/run.py --only loopback   # one part (or several, comma-separated)
    uv run --frozen python bench/run.py --json            # one JSON document on stdout
    uv run --frozen python bench/run.py --only loopback --src ../old/src  # another tree
    uv run --frozen python bench/run.py --only unary,streaming --save out.json  # the mock rows

The parts, on asyncio and trio:

1. loopback, the main rows: every client on its defaults against a real HTTP/1.1 server on
   127.0.0.1 in its own process, a fresh client process per contender, backend and round:
   unary sends and one stream (``loopback.py``);
2. fanout: 1,000 and 10,000 concurrent streams with ``AgentPool()`` and ``merge_streams`` on
   their defaults (the 10,000 spread over 40 pools), and the floor (httpx + httpx-sse), a
   fresh server and client process each (``fanout.py``);
3. imports: ``import a2a_anyio`` against ``import httpx, httpx_sse, anyio`` in a clean
   virtualenv with the core dependencies only, fresh interpreters (``imports.py``);
4. unary and streaming (secondary, not run unless named): the same calls through
   httpx.MockTransport in this process (``unary.py``, ``streaming.py``).

Then every target of issue 17 with PASS or FAIL (``targets.py``), also in the JSON document
(``targets``). Progress goes to stderr.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fanout
import imports
import loopback
import streaming
import unary
from _table import f1, grid, times
from targets import targets, verdict


@dataclass(frozen=True)
class Params:
    loopback: loopback.Size
    fanout: tuple[fanout.Case, ...]
    import_runs: int
    unary_calls: int  # the mock rows
    unary_rounds: int
    stream_events: int
    stream_rounds: int


FULL = Params(loopback.FULL, fanout.FULL, 21, 1000, 11, 10_000, 7)
QUICK = Params(loopback.QUICK, fanout.QUICK, 7, 300, 3, 2_000, 3)
MEASUREMENTS = ("loopback", "fanout", "imports", "unary", "streaming")
DEFAULT = ("loopback", "fanout", "imports")


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def machine() -> dict[str, Any]:
    """Where the run happened: CPUs, load, versions, the a2a-anyio source state."""
    model = ""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    root = Path(__file__).resolve().parent.parent

    def git(cwd: Path, *args: str) -> str:
        try:
            out = subprocess.run(
                ["git", *args], cwd=cwd, capture_output=True, text=True, timeout=10, check=False
            )
        except OSError:
            return ""
        return out.stdout.strip()

    spec = importlib.util.find_spec("a2a_anyio")
    package = Path(spec.origin).parent if spec and spec.origin else None
    tree = package.parent if package else root / "src"  # the src/ directory measured
    versions: dict[str, str | None] = {}
    for dist in ("a2a-anyio", "a2a-sdk", "httpx", "httpcore", "httpx-sse", "anyio", "trio"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = None
    return {
        "cpus": os.cpu_count(),
        "cpu_model": model,
        "python": platform.python_version(),
        "platform": platform.platform(),
        "load_avg_start": list(os.getloadavg()),
        "versions": versions,
        "a2a_anyio_path": str(package) if package else None,
        "bench_commit": git(root, "rev-parse", "--short", "HEAD"),
        "commit": git(tree, "rev-parse", "--short", "HEAD"),
        "src_dirty": bool(git(tree, "status", "--porcelain", "--", ".")),
    }


def _elsewhere(m: dict[str, Any]) -> str:
    """`` (a2a_anyio from PATH)`` when the package measured is not this repository's src/."""
    path = m.get("a2a_anyio_path")
    here = str(Path(__file__).resolve().parent.parent / "src" / "a2a_anyio")
    return f" (a2a_anyio from {path})" if path and path != here else ""


def _mock_rows(res: dict[str, Any]) -> list[str]:
    """The secondary rows: the mock transport, in this process."""
    rows: list[tuple[str, ...]] = [
        ("measurement", "backend", "floor", "a2a-anyio", "a2a-sdk", "anyio/floor", "sdk/anyio")
    ]
    for key, label in (("unary", "unary, us/call"), ("streaming", "streaming, us/event")):
        for backend, r in res.get(key, {}).items():
            sdk = r["a2a-sdk"]["us"] if r["a2a-sdk"] else None
            rows.append(
                (
                    label,
                    backend,
                    f1(r["floor"]["us"]),
                    f1(r["a2a-anyio"]["us"]),
                    f1(sdk),
                    times(r["ratio_anyio_floor"]),
                    times(r["ratio_sdk_anyio"]),
                )
            )
    for key, label in (("unary", "  a scope per call"), ("streaming", "  a scope per read")):
        for backend, r in res.get(key, {}).items():
            rows.append(
                (
                    label,
                    backend,
                    f1(r["floor"]["us"]),
                    f1(r["a2a-anyio-scoped"]["us"]),
                    "",
                    times(r["ratio_scoped_floor"]),
                    "",
                )
            )
    p = res["params"]
    notes = []
    if "unary" in res:
        notes.append(f"unary: {p['unary_calls']} calls x {p['unary_rounds']} rounds")
    if "streaming" in res:
        notes.append(f"streaming: {p['stream_events']} events x {p['stream_rounds']} rounds")
    return [
        "mock transport (secondary): in this process, httpx.MockTransport, a2a-anyio's "
        "limits off unless a row says otherwise",
        *grid(rows),
        "(" + "; ".join(notes) + "; medians of process CPU time; a2a-sdk on asyncio only)",
    ]


def _fanout_rows(fan: dict[str, Any]) -> list[str]:
    rows: list[tuple[str, ...]] = [
        ("streams", "pools", "backend", "client", "wall s", "CPU s", "extra RSS MB", "KB/stream",
         "complete", "errors", "server: open at once", "after s", "CPU s",
         "conn. wait p50/max ms", "listen drops"),
    ]  # fmt: skip
    for r in fan["runs"]:
        n, pools = r["streams"], str(r["case"].get("pools", 1))
        client = "a2a-anyio" if r.get("impl", "anyio") == "anyio" else r["impl"]
        if "failed" in r:
            rows.append((f"{n:,}", pools, r["backend"], client, "failed: " + r["failed"][-80:]))
            continue
        server, wait = r["server"], r["connection_wait_s"]
        rows.append(
            (
                f"{n:,}",
                pools,
                r["backend"],
                client,
                f1(r["wall_s"]) + (" (cut)" if r["timed_out"] else ""),
                f1(r["cpu_s"]),
                f1(r["extra_rss_mb"]),
                "-" if r["timed_out"] else f"{r['extra_rss_mb'] * 1024 / n:.0f}",
                f"{r['completed']:,}",
                str(r["errors"]),
                f"{server['peak']:,}",
                f1(server["peak_after_s"]),
                f1(server["cpu_s"]),
                "n/a"
                if wait["max"] is None
                else f"{wait['p50'] * 1000:.0f}/{wait['max'] * 1000:.0f}",
                str(r["listen_overflows"]),
            )
        )
    events = sorted({r["case"]["events"] for r in fan["runs"]})
    return [
        "fan-out: a2a-anyio, AgentPool()s and merge_streams on their defaults (events kept), "
        "and the floor (httpx + httpx-sse + json.loads, nothing kept); a fresh server (held "
        "until every stream is open) and client process per row",
        *grid(rows),
        f"({'/'.join(map(str, events))} events a stream; pools: AgentPool()s (the floor's: httpx "
        "clients), stream i on pool i mod pools; RSS: the client's peak over its RSS after "
        "imports and setup; wait: from the request handed to httpx to its connection)",
    ]


def _import_rows(imp: dict[str, Any]) -> list[str]:
    rows: list[tuple[str, ...]] = [("command", "CPU ms", "wall ms", "modules")]
    for name in ("a2a-anyio", "floor", "bare"):
        r = imp[name]
        rows.append((r["command"], f1(r["cpu_ms"]), f1(r["wall_ms"]), str(r.get("modules", ""))))
    return [
        "imports: a clean virtualenv (" + ", ".join(imp["environment"]) + "), "
        f"{imp['runs']} fresh interpreters per command, each timed whole (medians)",
        *grid(rows, left=(0,)),
        f"(a2a-anyio / floor, medians of per-round ratios: CPU {times(imp['ratio_anyio_floor'])}, "
        f"wall {times(imp['ratio_anyio_floor_wall'])})",
    ]


def table(res: dict[str, Any]) -> str:
    m = res["machine"]
    lines = [
        f"a2a-anyio bench ({res['mode']} run) - {m['cpus']} CPUs ({m['cpu_model']}), "
        f"Python {m['python']}, load average {m['load_avg_start'][0]:.2f} at start, "
        f"{m['load_avg_end'][0]:.2f} at the end; "
        f"a2a-anyio {m['commit']}{' + uncommitted src' if m['src_dirty'] else ''}"
        f"{_elsewhere(m)}, "
        f"a2a-sdk {m['versions']['a2a-sdk']}, httpx {m['versions']['httpx']}",
    ]
    if "loopback" in res:
        lines += ["", *loopback.table(res["loopback"])]
    if "fanout" in res:
        lines += ["", *_fanout_rows(res["fanout"])]
    if "imports" in res:
        lines += ["", *_import_rows(res["imports"])]
    if "unary" in res or "streaming" in res:
        lines += ["", *_mock_rows(res)]
    if res["targets"]:
        rows: list[tuple[str, ...]] = [
            ("target (issue 17)", "backend", "result", "measured", "limit")
        ]
        rows += [
            (t["target"], t["backend"], verdict(t), t["shown"], t["limit_shown"])
            for t in res["targets"]
        ]
        lines += ["", *grid(rows, left=(0, 1, 2, 3, 4))]
    lines.append(f"\n({res['elapsed_s']:.0f} s)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="a2a-anyio benchmarks (issue 17)")
    ap.add_argument("--quick", action="store_true", help="a small version (~1.5 minutes)")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    ap.add_argument(
        "--only",
        default=",".join(DEFAULT),
        help=f"comma-separated subset of {','.join(MEASUREMENTS)} (default: {','.join(DEFAULT)})",
    )
    ap.add_argument("--backends", default="asyncio,trio", help="asyncio and/or trio")
    ap.add_argument("--save", metavar="PATH", help="also write the JSON document to PATH")
    ap.add_argument(
        "--src",
        metavar="PATH",
        help="measure the a2a_anyio of this src/ directory (another checkout, e.g. a worktree)",
    )
    args = ap.parse_args(argv)
    p = QUICK if args.quick else FULL
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    backends = tuple(b.strip() for b in args.backends.split(",") if b.strip())
    unknown = only - set(MEASUREMENTS)
    if unknown or not backends or set(backends) - {"asyncio", "trio"}:
        ap.error(f"unknown selection: {sorted(unknown) or backends}")
    if args.src:
        src = str(Path(args.src).resolve())
        if not (Path(src) / "a2a_anyio" / "__init__.py").is_file():
            ap.error(f"--src {args.src}: no a2a_anyio package there")
        if "imports" in only and not (Path(src).parent / "pyproject.toml").is_file():
            ap.error(
                f"--src {args.src}: imports installs its project, and no pyproject.toml is beside it"
            )
        # Every measurement then uses that tree: this process (the mock rows), the fan-out
        # children (PYTHONPATH), the loopback a2a-anyio children (loopback.run), the clean
        # virtualenv of the imports (its project installed).
        sys.path.insert(0, src)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            x for x in (src, os.environ.get("PYTHONPATH", "")) if x
        )
    start = time.perf_counter()
    res: dict[str, Any] = {
        "mode": "quick" if args.quick else "full",
        "machine": machine(),
        "params": asdict(p) | {"backends": list(backends)},
    }
    if "loopback" in only:
        size = p.loopback
        _log(
            f"loopback: {size.calls} calls and a {size.events}-event stream per process, "
            f"{size.rounds} rounds"
        )
        res["loopback"] = loopback.run(size, backends, src=args.src)
    if "fanout" in only:
        res["fanout"] = fanout.run(p.fanout, backends)
    if "imports" in only:
        _log(f"imports: {p.import_runs} runs")
        res["imports"] = imports.run(p.import_runs, args.src)
    if "unary" in only:
        res["unary"] = {}
        for b in backends:
            _log(f"unary on {b}: {p.unary_calls} calls x {p.unary_rounds} rounds")
            res["unary"][b] = unary.run(b, p.unary_calls, p.unary_rounds)
    if "streaming" in only:
        res["streaming"] = {}
        for b in backends:
            _log(f"streaming on {b}: {p.stream_events} events x {p.stream_rounds} rounds")
            res["streaming"][b] = streaming.run(b, p.stream_events, p.stream_rounds)
    res["machine"]["load_avg_end"] = list(os.getloadavg())
    res["targets"] = targets(res)
    res["elapsed_s"] = time.perf_counter() - start
    if args.save:
        Path(args.save).write_text(json.dumps(res, indent=1) + "\n")
    if args.json:
        json.dump(res, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(table(res))
    return 0


if __name__ == "__main__":
    sys.exit(main())
