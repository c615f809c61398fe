"""Where an idle stream's memory goes: tracemalloc bytes a stream, a2a-anyio against the floor.

    uv run --frozen python bench/idle_probe.py                       # 300 chunks streams, both
    uv run --frozen python bench/idle_probe.py --diff                # each line over the floor's
    uv run --frozen python bench/idle_probe.py --streams 500 --shape status --backend trio
    uv run --frozen python bench/idle_probe.py --impl anyio --top 40 --key traceback

``--streams`` streams over ``--agents`` agents (``agents_server.py``: ``--events`` events of
about 500 bytes, then the stream held open), read as ``scale_child.py`` reads them; once
every event is read and after a ``gc.collect()``, the allocations made since the streams
started (tracemalloc, traced from after the setup), divided by the streams. Grouped by the
line that allocated (``--key lineno``), by whole traceback (``--key traceback``, the frames
of this file left out), or by the innermost frame in a2a-anyio (``--key anyio``); with
``--diff``, each group's bytes over the floor's. Each contender and backend runs in a process
of its own.
"""

from __future__ import annotations

import argparse
import gc
import json
import subprocess
import sys
import tracemalloc
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


async def _probe(a: argparse.Namespace, urls: list[str]) -> dict[str, Any]:
    import anyio
    import scale_child

    make = scale_child._anyio_streams if a.impl == "anyio" else scale_child._floor_streams
    one, owner = await make(a, urls)
    events = [0] * a.streams
    want = a.streams * a.events
    gc.collect()
    tracemalloc.start(a.frames)
    before = tracemalloc.take_snapshot()
    async with anyio.create_task_group() as tg:
        for i in range(a.streams):
            tg.start_soon(one, i, events)
        with anyio.fail_after(120):
            while sum(events) < want:  # noqa: ASYNC110 - as scale_child.py waits
                await anyio.sleep(0.05)
        await anyio.sleep(0.5)
        gc.collect()
        after = tracemalloc.take_snapshot()
        tg.cancel_scope.cancel()
    tracemalloc.stop()
    with anyio.move_on_after(30, shield=True):
        await owner.aclose()
    here = str(HERE / Path(__file__).name)
    flt = [tracemalloc.Filter(False, tracemalloc.__file__), tracemalloc.Filter(False, here)]
    before, after = before.filter_traces(flt), after.filter_traces(flt)
    n = a.streams
    total = sum(s.size_diff for s in after.compare_to(before, "filename"))
    groups: dict[str, float] = defaultdict(float)
    if a.key == "anyio":
        for stat in after.compare_to(before, "traceback"):
            frames = [f for f in stat.traceback if "a2a_anyio" in f.filename]
            where = frames[-1] if frames else stat.traceback[-1]
            groups[f"{_short(where.filename)}:{where.lineno}"] += stat.size_diff
    else:
        for stat in after.compare_to(before, a.key):
            frames = list(stat.traceback)
            if a.key == "traceback":
                frames = frames[-a.depth :]
                name = " < ".join(f"{_short(f.filename)}:{f.lineno}" for f in reversed(frames))
            else:
                name = f"{_short(frames[0].filename)}:{frames[0].lineno}"
            groups[name] += stat.size_diff
    top = sorted(groups.items(), key=lambda kv: -abs(kv[1]))[: a.top]
    return {
        "impl": a.impl,
        "backend": a.backend,
        "streams": n,
        "events": sum(events),
        "bytes_per_stream": total / n,
        "top": [(name, size / n) for name, size in top],
        "all": [(name, size / n) for name, size in groups.items()],
    }


def _short(filename: str) -> str:
    for mark in ("site-packages/", "/src/", "/lib/python3"):
        if mark in filename:
            return filename.split(mark, 1)[1]
    return filename


def child(a: argparse.Namespace) -> None:
    import anyio

    sys.path.insert(0, str(HERE))
    urls = [line.strip() for line in sys.stdin if line.strip()]
    out = anyio.run(_probe, a, urls, backend=a.backend)
    json.dump(out, sys.stdout)


def main(a: argparse.Namespace) -> None:
    sys.path.insert(0, str(HERE))
    from _serve import started

    opts = (f"--events={a.events}", "--event-bytes=500", f"--shape={a.shape}")
    impls = ("anyio", "floor") if a.impl == "both" else (a.impl,)
    backends = ("asyncio", "trio") if a.backend == "both" else (a.backend,)
    with started("agents_server.py", f"--agents={a.agents}", *opts) as line:
        urls = line.split()
        results = {}
        for backend in backends:
            for impl in impls:
                cmd = [
                    sys.executable, __file__, "--child", f"--impl={impl}",
                    f"--backend={backend}", f"--streams={a.streams}", f"--events={a.events}",
                    f"--key={a.key}", f"--top={a.top}", f"--frames={a.frames}",
                    f"--depth={a.depth}",
                ]  # fmt: skip
                out = subprocess.run(
                    cmd, input="\n".join(urls), capture_output=True, text=True, check=False
                )
                if out.returncode:
                    sys.exit(out.stderr)
                r = json.loads(out.stdout)
                results[backend, impl] = r
                print(f"{impl} on {backend}: {r['bytes_per_stream'] / 1024:.2f} KB a stream")
                if not a.diff:
                    for name, size in r["top"]:
                        print(f"  {size:9.0f}  {name}")
        for backend in backends:
            if len(impls) == 2:
                mine = results[backend, "anyio"]["bytes_per_stream"]
                floor = results[backend, "floor"]["bytes_per_stream"]
                print(
                    f"{backend}: {mine / 1024:.2f} against {floor / 1024:.2f} KB a stream, "
                    f"{(mine - floor) / 1024:.2f} KB over; by {a.key}, over the floor's:"
                )
                if a.diff:
                    ours = dict(results[backend, "anyio"]["all"])
                    theirs = dict(results[backend, "floor"]["all"])
                    over = {k: ours.get(k, 0) - theirs.get(k, 0) for k in ours.keys() | theirs}
                    for name, size in sorted(over.items(), key=lambda kv: -abs(kv[1]))[: a.top]:
                        print(f"  {size:9.0f}  {name}")


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--impl", choices=("anyio", "floor", "both"), default="both")
    p.add_argument("--backend", choices=("asyncio", "trio", "both"), default="both")
    p.add_argument("--streams", type=int, default=300)
    p.add_argument("--agents", type=int, default=2)
    p.add_argument("--events", type=int, default=20)
    p.add_argument("--shape", choices=("status", "chunks"), default="chunks")
    p.add_argument("--key", choices=("lineno", "traceback", "anyio"), default="lineno")
    p.add_argument("--top", type=int, default=25)
    p.add_argument("--frames", type=int, default=1, help="frames tracemalloc keeps")
    p.add_argument("--depth", type=int, default=4, help="--key traceback: frames shown")
    p.add_argument("--diff", action="store_true", help="both: each group's excess")
    p.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.key != "lineno" and args.frames == 1:
        args.frames = 30
    child(args) if args.child else main(args)
