"""``--save-files`` with many file parts: N parts of one name against N of distinct names.

    uv run --frozen python bench/save_files.py            # 2,000 parts, asyncio and trio
    uv run --frozen python bench/save_files.py --parts 5000

Each row writes N small inline file parts into a fresh directory with the command line's
``save_files`` (the part of ``send --save-files`` after the answer has come) and reports the
process's CPU time (user + system, the worker threads' included: robust to other work on a
shared machine) and the wall time beside it. Parts of one name get numbered names
(``report-1.txt``...); the next free number is remembered per name, so both rows should cost
about the same: the target is the median of the rounds' ratios of CPU times (one name /
distinct names), at most 1.5.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

import anyio

from a2a_anyio import A2AClient, Artifact, FilePart, Part, Task, TaskState, TaskStatus
from a2a_anyio.cli._files import save_files

TARGET = 1.5


def task(parts: int, same_name: bool) -> Task:
    files: list[Part] = [
        FilePart(
            data=b"x" * 64, media_type="text/plain", name="report.txt" if same_name else f"r{n}.txt"
        )
        for n in range(parts)
    ]
    artifacts = [Artifact(artifact_id="a", parts=files)]
    return Task(id="t", context_id="c", status=TaskStatus(TaskState.COMPLETED), artifacts=artifacts)


async def measure(parts: int, same_name: bool) -> tuple[float, float]:
    answer = task(parts, same_name)
    with tempfile.TemporaryDirectory() as tmp:
        async with A2AClient("http://127.0.0.1:1") as client:  # inline files: never asked
            cpu, wall = time.process_time(), time.perf_counter()
            saved = await save_files(client, answer, Path(tmp))
            cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    assert all(item.error is None for item in saved), [i.error for i in saved if i.error]
    return cpu, wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--parts", type=int, default=2000)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    for backend in ("asyncio", "trio"):
        rows: dict[bool, list[tuple[float, float]]] = {False: [], True: []}
        for n in range(args.rounds):
            for same_name in (n % 2 == 0, n % 2 == 1):  # the order alternates
                rows[same_name].append(anyio.run(measure, args.parts, same_name, backend=backend))
        ratio = statistics.median(s[0] / d[0] for s, d in zip(rows[True], rows[False], strict=True))
        distinct, same = (statistics.median(c for c, _ in rows[k]) for k in (False, True))
        walls = [statistics.median(w for _, w in rows[k]) for k in (False, True)]
        verdict = "PASS" if ratio <= TARGET else "FAIL"
        print(
            f"{backend:8} {args.parts} parts, median of {args.rounds} rounds: distinct names "
            f"{distinct:.2f} s CPU ({walls[0]:.2f} s wall), one name {same:.2f} s CPU "
            f"({walls[1]:.2f} s wall); ratio {ratio:.2f} <= {TARGET}: {verdict}"
        )


if __name__ == "__main__":
    main()
