"""a2a-anyio benchmarks: against the floor (httpx itself), a2a-sdk and fasta2a.

    uv run --frozen python bench/run.py                  # the full run, a table
    uv run --frozen python bench/run.py --quick          # a small version
    uv run --frozen python bench/run.py --quick --only loopback   # well under a minute
    uv run --frozen python bench/run.py --json           # one JSON document on stdout
    uv run --frozen python bench/run.py --only loopback --src ../old/src  # another tree
    uv run --frozen python bench/run.py --only unary,streaming --backends asyncio --save out.json

Five measurements, on asyncio and trio (a2a-sdk and fasta2a run on asyncio only):

1. loopback, the main rows: every client on its defaults against a real HTTP/1.1 server on
   127.0.0.1 in its own process, a fresh client process per contender, backend and round:
   unary sends and one stream (``loopback.py``);
2. unary: send_message answered with a recorded completed Task, through httpx.MockTransport;
3. streaming: one stream of 10,000 v1.0 events through MockTransport, folded into the task;
4. fan-out: 1,000 concurrent streams against a local server (a child process per client);
5. import time in fresh interpreters.

Then every target of issue 9 (defined on the mock rows and the fan-out) with PASS or FAIL.
Progress goes to stderr.
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
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import fanout
import imports
import loopback
import streaming
import unary


@dataclass(frozen=True)
class Params:
    unary_calls: int
    unary_rounds: int
    stream_events: int
    stream_rounds: int
    fan_streams: int
    fan_events: int
    fan_interval: float
    fan_default_timeout: float
    import_runs: int
    loop_calls: int
    loop_events: int
    loop_rounds: int


_LF, _LQ = loopback.FULL, loopback.QUICK
FULL = Params(1000, 11, 10_000, 7, 1000, 20, 0.5, 45.0, 15, _LF.calls, _LF.events, _LF.rounds)
QUICK = Params(300, 3, 2_000, 3, 200, 10, 0.2, 20.0, 5, _LQ.calls, _LQ.events, _LQ.rounds)
MEASUREMENTS = ("loopback", "unary", "streaming", "fanout", "imports")

UNARY_MAX = 1.25
STREAM_MAX = 1.5
SDK_UNARY_MIN = 2.0
SDK_STREAM_MIN = 5.0
RSS_MAX_MB_PER_1000 = 60.0
IMPORT_MAX = 1.3


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


def _target(
    name: str, backend: str, value: float | None, limit: float, at_most: bool, shown: str = ""
) -> dict[str, Any]:
    ok = None if value is None else (value <= limit if at_most else value >= limit)
    return {
        "target": name,
        "backend": backend,
        "value": value,
        "limit": limit,
        "pass": ok,
        "shown": shown or ("n/a" if value is None else f"{value:.2f}x"),
    }


def targets(res: dict[str, Any], p: Params) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for backend, r in res.get("unary", {}).items():
        out.append(
            _target("unary <= 1.25x floor", backend, r["ratio_anyio_floor"], UNARY_MAX, True)
        )
    for backend, r in res.get("streaming", {}).items():
        out.append(
            _target("streaming <= 1.5x floor", backend, r["ratio_anyio_floor"], STREAM_MAX, True)
        )
    for backend, r in res.get("unary", {}).items():
        out.append(
            _target(
                "a2a-sdk >= 2x slower (unary)", backend, r["ratio_sdk_anyio"], SDK_UNARY_MIN, False
            )
        )
    for backend, r in res.get("streaming", {}).items():
        out.append(
            _target(
                "a2a-sdk >= 5x slower (streaming)",
                backend,
                r["ratio_sdk_anyio"],
                SDK_STREAM_MIN,
                False,
            )
        )
    fan = res.get("fanout")
    if fan:
        n = fan["streams"]
        rss_max = RSS_MAX_MB_PER_1000 * n / 1000
        for r in fan["runs"]:
            if r.get("impl") != "anyio" or r.get("max_connections") == "default":
                continue
            if r.get("keep_events") not in (0, None):
                continue  # shown in the table: the streams' own copies of the events
            if "failed" in r:
                out.append(_target(f"{n} streams: extra RSS < {rss_max:.0f} MB", r["backend"],
                                   None, rss_max, True, "run failed"))  # fmt: skip
                continue
            whole = r["completed"] == n and r["errors"] == 0 and not r["timed_out"]
            t = _target(
                f"{n} streams: extra RSS < {rss_max:.0f} MB, all complete",
                r["backend"],
                r["extra_rss_mb"],
                rss_max,
                True,
                f"{r['extra_rss_mb']:.1f} MB, {r['completed']}/{n} complete",
            )
            t["pass"] = bool(t["pass"]) and whole
            out.append(t)
        for r in fan["runs"]:
            if r.get("impl") != "anyio" or r.get("max_connections") != "default":
                continue
            if "failed" in r:
                continue
            queued = r["max_queued_for_connection"]
            ok = queued == 0 and r["completed"] == n and not r["timed_out"]
            out.append(
                {
                    "target": f"{n} streams: none starved by the pool default",
                    "backend": r["backend"],
                    "value": queued,
                    "limit": 0,
                    "pass": ok,
                    "shown": (
                        f"{queued} waited for a connection; {r['completed']}/{n} complete"
                        + (f" when cut at {r['wall_s']:.0f} s" if r["timed_out"] else "")
                        + (f", {r['errors']} errors" if r["errors"] else "")
                    ),
                }
            )
    imp = res.get("imports")
    if imp:
        out.append(_target("import <= 1.3x floor", "-", imp["ratio_anyio_floor"], IMPORT_MAX, True))
    return out


def _elsewhere(m: dict[str, Any]) -> str:
    """`` (a2a_anyio from PATH)`` when the package measured is not this repository's src/."""
    path = m.get("a2a_anyio_path")
    here = str(Path(__file__).resolve().parent.parent / "src" / "a2a_anyio")
    return f" (a2a_anyio from {path})" if path and path != here else ""


def _f(x: float | None, spec: str = ".1f") -> str:
    return "n/a" if x is None else format(x, spec)


def _x(x: float | None) -> str:
    return "n/a" if x is None else f"{x:.2f}x"


def table(res: dict[str, Any]) -> str:
    m = res["machine"]
    lines = [
        f"a2a-anyio bench ({res['mode']} run) - {m['cpus']} CPUs ({m['cpu_model']}), "
        f"Python {m['python']}, load average {m['load_avg_start'][0]:.2f} at start; "
        f"a2a-anyio {m['commit']}{' + uncommitted src' if m['src_dirty'] else ''}"
        f"{_elsewhere(m)}, "
        f"a2a-sdk {m['versions']['a2a-sdk']}, httpx {m['versions']['httpx']}",
        "",
    ]
    if "loopback" in res:
        lines += [*loopback.table(res["loopback"]), ""]
    if any(k in res for k in ("unary", "streaming", "imports")):
        lines.append(
            "mock transport (secondary): in this process, httpx.MockTransport, a2a-anyio's "
            "limits off unless a row says otherwise"
        )
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
                    _f(r["floor"]["us"]),
                    _f(r["a2a-anyio"]["us"]),
                    _f(sdk),
                    _x(r["ratio_anyio_floor"]),
                    _x(r["ratio_sdk_anyio"]),
                )
            )
    for key, label in (("unary", "  a scope per call"), ("streaming", "  a scope per read")):
        for backend, r in res.get(key, {}).items():
            rows.append(
                (
                    label,
                    backend,
                    _f(r["floor"]["us"]),
                    _f(r["a2a-anyio-scoped"]["us"]),
                    "",
                    _x(r["ratio_scoped_floor"]),
                    "",
                )
            )
    imp = res.get("imports")
    if imp:
        rows.append(
            (
                "import, ms",
                "-",
                _f(imp["floor"]["ms"]),
                _f(imp["a2a-anyio"]["ms"]),
                _f(imp["a2a-sdk"]["ms"]),
                _x(imp["ratio_anyio_floor"]),
                _x(imp["ratio_sdk_floor"] / imp["ratio_anyio_floor"]),
            )
        )
    if len(rows) > 1:
        lines += _grid(rows)
    p = res["params"]
    notes = []
    if "unary" in res:
        notes.append(f"unary: {p['unary_calls']} calls x {p['unary_rounds']} rounds")
    if "streaming" in res:
        notes.append(f"streaming: {p['stream_events']} events x {p['stream_rounds']} rounds")
    if imp:
        notes.append(f"import: {imp['runs']} fresh interpreters each, ratios per round")
    if notes:
        lines.append("(" + "; ".join(notes) + "; medians of process CPU time)")
    fan = res.get("fanout")
    if fan:
        lines += [
            "",
            f"fan-out: {fan['streams']} concurrent streams x {fan['events_per_stream']} events "
            f"({fan['interval_s']} s apart, {fan['stream_duration_s']:.0f} s per stream), "
            "local server on 127.0.0.1, one child process per client",
        ]
        fan_rows: list[tuple[str, ...]] = [
            ("client", "backend", "pool", "kept", "wall s", "CPU s", "peak RSS MB", "extra RSS MB",
             "complete", "errors", "max queued", "server peak open", "first event p50/max s"),
        ]  # fmt: skip
        for r in fan["runs"]:
            name = "a2a-anyio" if r.get("impl") == "anyio" else "a2a-sdk"
            if "failed" in r:
                fan_rows.append((name, r["backend"], "-", "failed: " + r["failed"][-60:]))
                continue
            pool = str(r["max_connections"])
            fan_rows.append(
                (
                    name,
                    r["backend"],
                    pool,
                    str(r.get("keep_events", "-")) if name == "a2a-anyio" else "-",
                    _f(r["wall_s"]) + (" (cut)" if r["timed_out"] else ""),
                    _f(r["cpu_s"]),
                    _f(r["peak_rss_mb"]),
                    _f(r["extra_rss_mb"]),
                    f"{r['completed']}/{r['streams']}",
                    str(r["errors"]),
                    str(r["max_queued_for_connection"]),
                    str(r["server_peak_open"]),
                    f"{_f(r['ttfe_p50_s'], '.2f')}/{_f(r['ttfe_max_s'], '.2f')}",
                )
            )
        lines += _grid(fan_rows)
    if res["targets"]:
        lines += ["", "targets (issue 9: on the mock rows, the fan-out and the imports):"]
        target_rows: list[tuple[str, ...]] = [("target", "backend", "result", "measured")]
        for t in res["targets"]:
            verdict = "n/a" if t["pass"] is None else ("PASS" if t["pass"] else "FAIL")
            target_rows.append((t["target"], t["backend"], verdict, t["shown"]))
        lines += _grid(target_rows, left=(0, 1, 2, 3))
    lines.append(f"\n({res['elapsed_s']:.0f} s)")
    return "\n".join(lines)


def _grid(rows: list[tuple[str, ...]], left: tuple[int, ...] = (0, 1)) -> list[str]:
    """Rows as aligned text columns: those in ``left`` flush left, the others right."""
    widths = [max(len(r[i]) for r in rows if i < len(r)) for i in range(len(rows[0]))]
    out = []
    for r in rows:
        cells = [c.ljust(widths[i]) if i in left else c.rjust(widths[i]) for i, c in enumerate(r)]
        out.append("  ".join(cells).rstrip())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="a2a-anyio benchmarks (issue 9)")
    ap.add_argument("--quick", action="store_true", help="a small version, under a minute")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    ap.add_argument(
        "--only",
        default=",".join(MEASUREMENTS),
        help=f"comma-separated subset of {','.join(MEASUREMENTS)}",
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
        # Every measurement then uses that tree: this process (the mock rows), the fan-out
        # and import children (PYTHONPATH), the loopback a2a-anyio children (loopback.run).
        sys.path.insert(0, src)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            x for x in (src, os.environ.get("PYTHONPATH", "")) if x
        )
    start = time.perf_counter()
    res: dict[str, Any] = {
        "mode": "quick" if args.quick else "full",
        "machine": machine(),
        "params": vars(p) | {"backends": list(backends)},
    }
    if "loopback" in only:
        _log(
            f"loopback: {p.loop_calls} calls and a {p.loop_events}-event stream per process, "
            f"{p.loop_rounds} rounds"
        )
        size = loopback.Size(p.loop_calls, p.loop_events, p.loop_rounds)
        res["loopback"] = loopback.run(size, backends, src=args.src)
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
    if "fanout" in only:
        _log(f"fan-out: {p.fan_streams} streams, {len(backends) + 2} client processes")
        res["fanout"] = fanout.run(
            p.fan_streams, p.fan_events, p.fan_interval, backends, p.fan_default_timeout
        )
    if "imports" in only:
        _log(f"imports: {p.import_runs} runs")
        res["imports"] = imports.run(p.import_runs)
    res["machine"]["load_avg_end"] = list(os.getloadavg())
    res["targets"] = targets(res, p)
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
