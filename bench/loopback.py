"""Loopback: every client on its defaults against a real HTTP/1.1 server on 127.0.0.1.

    uv run --frozen python bench/loopback.py --quick
    uv run --frozen python bench/loopback.py --src ../old/src   # another checkout
    uv run --frozen python bench/loopback.py --json

``loopback_server.py`` runs in a process of its own, the same for every contender, serving
prepared bytes. Each (contender, backend, round) runs in a fresh child process
(``loopback_child.py``): N unary sends, then one stream of M events, timed with the child's
own ``time.process_time()`` (CPU: the server's work is not in it) and wall time. The
contenders of a round run one after the other, in an order rotated per round; the ratios
are the medians of the per-round ratios (each round's contender against that round's floor
on the same backend), steadier than the ratio of the medians when the machine drifts.

Contenders: the floor (raw httpx, httpx-sse), a2a-anyio (``A2AClient(url)`` as it comes),
a2a-sdk 1.x and fasta2a's client (installed on first use in ``bench/.venv-fasta2a`` with
``python -m venv`` and pip, pinned, beside the same httpx, httpcore, h11, anyio and trio
versions as the dev environment, so ``uv.lock`` is not touched), every one on asyncio and
on trio (both peers' clients are plain httpx, which runs on either).

``--src PATH`` puts PATH (a ``src/`` directory) first on the a2a-anyio children's PYTHONPATH,
so the same bench measures another checkout, e.g. a git worktree of an older commit.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from _serve import served
from _table import f1, grid, times

HERE = Path(__file__).resolve().parent
CONTENDERS = ("floor", "a2a-anyio", "a2a-sdk", "fasta2a")
#: The other A2A clients: each is compared with a2a-anyio too.
PEERS = ("a2a-sdk", "fasta2a")
FASTA2A_VENV = HERE / ".venv-fasta2a"
FASTA2A_REQUIREMENT = "fasta2a==2.1.1"
#: Installed beside fasta2a at the dev environment's versions: the same HTTP stack for all.
SAME_AS_DEV = ("httpx", "httpcore", "h11", "anyio", "trio")


@dataclass(frozen=True)
class Size:
    calls: int
    events: int
    rounds: int


FULL = Size(1000, 10_000, 5)
QUICK = Size(200, 2_000, 3)


def _log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)


def _env(first: str | None = None, *, inherit: bool = True) -> dict[str, str]:
    """A child's environment: ``first`` put before the inherited PYTHONPATH (if ``inherit``)."""
    env = dict(os.environ)
    paths = env.pop("PYTHONPATH", "").split(os.pathsep) if inherit else []
    paths = [p for p in ([first] if first else []) + paths if p]
    if paths:
        env["PYTHONPATH"] = os.pathsep.join(paths)
    return env


# -- fasta2a's own virtualenv ---------------------------------------------------------------


def fasta2a_python() -> tuple[Path | None, str]:
    """The fasta2a virtualenv's interpreter, created or refreshed if needed; else a reason.

    The requirements are written into the venv (``bench-requirements.txt``); the venv is
    made again when they change.
    """
    try:
        pins = [f"{d}=={metadata.version(d)}" for d in SAME_AS_DEV]
    except metadata.PackageNotFoundError as exc:
        return None, f"not in the dev environment: {exc}"
    wanted = "\n".join([FASTA2A_REQUIREMENT, *pins]) + "\n"
    python = FASTA2A_VENV / "bin" / "python"
    stamp = FASTA2A_VENV / "bench-requirements.txt"
    if python.exists() and stamp.exists() and stamp.read_text() == wanted:
        return python, ""
    _log(f"loopback: creating {FASTA2A_VENV.name} ({FASTA2A_REQUIREMENT}, {', '.join(pins)})")
    shutil.rmtree(FASTA2A_VENV, ignore_errors=True)
    steps = [
        [sys.executable, "-m", "venv", str(FASTA2A_VENV)],
        [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
         FASTA2A_REQUIREMENT, *pins],
        [str(python), "-c", "import fasta2a.client, httpx"],
    ]  # fmt: skip
    for cmd in steps:
        try:
            out = subprocess.run(
                cmd,
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
                env=_env(inherit=False),
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return None, f"{cmd[1:3]}: {exc}"
        if out.returncode != 0:
            return None, f"{' '.join(cmd[1:4])}: {out.stderr.strip()[-500:]}"
    stamp.write_text(wanted)
    return python, ""


# -- the server -----------------------------------------------------------------------------


@contextmanager
def server(events: int, lifetime: float) -> Iterator[str]:
    """The base URL of a running ``loopback_server.py``; it is stopped and reaped on exit."""
    with served("loopback_server.py", f"--events={events}", f"--lifetime={lifetime:.0f}") as url:
        yield url


# -- the children ---------------------------------------------------------------------------


def child(
    python: Path | str,
    contender: str,
    backend: str,
    url: str,
    size: Size,
    env: dict[str, str],
    timeout: float,
) -> dict[str, Any]:
    """One contender in a fresh interpreter; its JSON report, or ``{"failed": why}``."""
    cmd = [
        str(python),
        str(HERE / "loopback_child.py"),
        f"--contender={contender}",
        f"--backend={backend}",
        f"--url={url}",
        f"--calls={size.calls}",
        f"--events={size.events}",
    ]
    head = {"contender": contender, "backend": backend}
    try:
        out = subprocess.run(
            cmd, capture_output=True, text=True, timeout=timeout, check=False, env=env
        )
    except subprocess.TimeoutExpired:  # subprocess.run kills and reaps the child
        return head | {"failed": f"timed out after {timeout:.0f} s"}
    lines = out.stdout.strip().splitlines()
    if out.returncode != 0 or not lines:
        why = out.stderr.strip().splitlines()[-1:] or [f"exit {out.returncode}"]
        return head | {"failed": why[0][-300:]}
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _ratio(a: Sequence[float], b: Sequence[float]) -> float | None:
    pairs = [x / y for x, y in zip(a, b, strict=True) if y]
    return statistics.median(pairs) if pairs else None


METRICS = ("unary_us", "unary_wall_us", "stream_us", "stream_wall_us")


def _metrics(r: dict[str, Any]) -> dict[str, float]:
    return {
        "unary_us": r["unary"]["cpu_us"],
        "unary_wall_us": r["unary"]["wall_us"],
        "stream_us": r["stream"]["cpu_us"],
        "stream_wall_us": r["stream"]["wall_us"],
    }


def aggregate(runs: list[dict[str, Any]], rounds: int) -> dict[str, Any]:
    """Medians per (backend, contender) and medians of per-round ratios.

    ``ratios[metric]["a2a-anyio/floor"]`` pairs each round's a2a-anyio with that round's floor
    on the same backend; ``"a2a-sdk/a2a-anyio"`` likewise. A round where either failed is
    left out of that ratio.
    """
    by: dict[str, dict[str, list[dict[str, float] | None]]] = {}
    for r in runs:
        cell = by.setdefault(r["backend"], {}).setdefault(r["contender"], [None] * rounds)
        cell[r["round"]] = None if "failed" in r else _metrics(r)
    out: dict[str, Any] = {}
    for backend, contenders in by.items():
        b: dict[str, Any] = {}
        for name, per_round in contenders.items():
            ok = [m for m in per_round if m is not None]
            b[name] = (
                {k: statistics.median(m[k] for m in ok) for k in METRICS} | {"rounds": len(ok)}
                if ok
                else None
            )
        ratios: dict[str, dict[str, float | None]] = {}
        pairs = [(c, "floor") for c in contenders if c != "floor"]
        pairs += [(c, "a2a-anyio") for c in contenders if c in PEERS]
        for metric in METRICS:
            ratios[metric] = {}
            for num, den in pairs:
                if num not in contenders or den not in contenders:
                    continue
                both = [
                    (x[metric], y[metric])
                    for x, y in zip(contenders[num], contenders[den], strict=True)
                    if x is not None and y is not None
                ]
                ratios[metric][f"{num}/{den}"] = _ratio([x for x, _ in both], [y for _, y in both])
        b["ratios"] = ratios
        out[backend] = b
    return out


def _git(path: Path, *args: str) -> str:
    try:
        out = subprocess.run(
            ["git", "-C", str(path), *args],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
    except OSError:
        return ""
    return out.stdout.strip()


def run(
    size: Size,
    backends: Sequence[str] = ("asyncio", "trio"),
    contenders: Sequence[str] = CONTENDERS,
    src: str | None = None,
) -> dict[str, Any]:
    """Every (contender, backend) ``size.rounds`` times, each in a fresh process."""
    if src is not None:
        src = str(Path(src).resolve())
        if not (Path(src) / "a2a_anyio" / "__init__.py").is_file():
            raise ValueError(f"--src {src}: no a2a_anyio package there")
    start = time.perf_counter()
    pythons: dict[str, Path | str] = dict.fromkeys(contenders, sys.executable)
    failures: dict[str, str] = {}
    fasta2a_version = None
    if "fasta2a" in contenders:
        python, why = fasta2a_python()
        if python is None:
            failures["fasta2a"] = f"could not install {FASTA2A_REQUIREMENT}: {why}"
        else:
            pythons["fasta2a"] = python
            fasta2a_version = FASTA2A_REQUIREMENT.split("==")[1]
    envs = {c: _env() for c in contenders} | {
        "a2a-anyio": _env(src),
        "fasta2a": _env(inherit=False),
    }
    jobs = [(c, b) for b in backends for c in contenders if c not in failures]
    timeout = 60.0 + size.calls * 0.05 + size.events * 0.005
    lifetime = size.rounds * len(jobs) * timeout + 60.0
    runs: list[dict[str, Any]] = []
    anyio_paths: set[str] = set()
    with server(size.events, lifetime) as url:
        for r in range(size.rounds):
            _log(f"loopback: round {r + 1}/{size.rounds}")
            k = r % len(jobs) if jobs else 0
            for contender, backend in [*jobs[k:], *jobs[:k]]:
                env = envs[contender]
                res = child(pythons[contender], contender, backend, url, size, env, timeout)
                res["round"] = r
                if "a2a_anyio_path" in res:
                    anyio_paths.add(str(Path(res["a2a_anyio_path"]).parent))
                    if src is not None and not res["a2a_anyio_path"].startswith(src + os.sep):
                        res = {
                            "contender": contender,
                            "backend": backend,
                            "round": r,
                            "failed": f"imported {res['a2a_anyio_path']}, not from {src}",
                        }
                if "failed" in res:
                    _log(f"loopback: {contender} on {backend} failed: {res['failed']}")
                runs.append(res)
    for res in runs:
        if "failed" in res:
            failures.setdefault(f"{res['contender']} ({res['backend']})", res["failed"])
    anyio_dir = src or (sorted(anyio_paths)[0] if anyio_paths else None)
    return {
        "calls": size.calls,
        "events": size.events,
        "rounds": size.rounds,
        "backends": list(backends),
        "src": src,
        "a2a_anyio_path": sorted(anyio_paths),
        "a2a_anyio_commit": _git(Path(anyio_dir), "rev-parse", "--short", "HEAD")
        if anyio_dir
        else None,
        "a2a_anyio_dirty": bool(_git(Path(anyio_dir), "status", "--porcelain", "--", "."))
        if anyio_dir
        else None,
        "fasta2a": fasta2a_version,
        "results": aggregate(runs, size.rounds),
        "failures": failures,
        "runs": runs,
        "elapsed_s": time.perf_counter() - start,
    }


# -- the table ------------------------------------------------------------------------------


def _here(path: str) -> str:
    """``path`` relative to this checkout when it is inside it."""
    root = HERE.parent
    return str(Path(path).relative_to(root)) if Path(path).is_relative_to(root) else path


def _cell(b: dict[str, Any], name: str, metric: str) -> str:
    if name not in b:
        return "-"
    return "failed" if b[name] is None else f1(b[name][metric])


def table(res: dict[str, Any]) -> list[str]:
    """The loopback rows: per-operation medians and the medians of per-round ratios."""
    where = res["src"] or ", ".join(map(_here, res["a2a_anyio_path"])) or "?"
    commit = res["a2a_anyio_commit"] or "?"
    lines = [
        "loopback: a server on 127.0.0.1 in its own process; a fresh client process per "
        "contender, backend and round; every client on its defaults",
        f"a2a-anyio from {where} ({commit}{' + uncommitted' if res['a2a_anyio_dirty'] else ''})"
        + (f"; fasta2a {res['fasta2a']}" if res["fasta2a"] else ""),
    ]
    rows: list[tuple[str, ...]] = [
        ("measurement", "backend", "floor", "a2a-anyio", "a2a-sdk", "fasta2a", "anyio/floor",
         "sdk/anyio", "fasta2a/anyio"),
    ]  # fmt: skip
    labels = {
        "unary_us": "unary, us/call (CPU)",
        "stream_us": "stream, us/event (CPU)",
        "unary_wall_us": "unary, us/call (wall)",
        "stream_wall_us": "stream, us/event (wall)",
    }
    for metric, label in labels.items():
        for backend, b in res["results"].items():
            ratios = b["ratios"][metric]
            rows.append(
                (
                    label,
                    backend,
                    *(_cell(b, name, metric) for name in CONTENDERS),
                    times(ratios.get("a2a-anyio/floor")),
                    times(ratios.get("a2a-sdk/a2a-anyio")),
                    times(ratios.get("fasta2a/a2a-anyio")),
                )
            )
    lines += grid(rows)
    lines.append(
        f"({res['calls']} unary calls and one {res['events']}-event stream per process, "
        f"x {res['rounds']} rounds; medians; ratios are medians of per-round ratios; "
        "every contender on every backend)"
    )
    for what, why in res["failures"].items():
        lines.append(f"failed: {what}: {why}")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="the small size (well under a minute)")
    ap.add_argument("--calls", type=int, help="unary calls per process")
    ap.add_argument("--events", type=int, help="events in the stream")
    ap.add_argument("--rounds", type=int, help="fresh processes per contender and backend")
    ap.add_argument("--backends", default="asyncio,trio")
    ap.add_argument("--contenders", default=",".join(CONTENDERS))
    ap.add_argument("--src", metavar="PATH", help="a src/ directory whose a2a_anyio to measure")
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    args = ap.parse_args(argv)
    base = QUICK if args.quick else FULL
    size = Size(args.calls or base.calls, args.events or base.events, args.rounds or base.rounds)
    backends = [b for b in args.backends.split(",") if b]
    contenders = [c for c in args.contenders.split(",") if c]
    if set(backends) - {"asyncio", "trio"} or set(contenders) - set(CONTENDERS):
        ap.error(f"unknown backends or contenders: {backends} {contenders}")
    if size.events < 4 or size.calls < 1 or size.rounds < 1:
        ap.error("at least 1 call, 4 events and 1 round")
    res = run(size, backends, contenders, args.src)
    if args.json:
        json.dump(res, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print("\n".join(table(res)))
        print(f"\n({res['elapsed_s']:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
