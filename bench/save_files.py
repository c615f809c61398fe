"""``--save-files`` with many file parts: N parts of one name against N of distinct names.

    uv run --frozen python bench/save_files.py            # 2,000 parts, asyncio and trio
    uv run --frozen python bench/save_files.py --parts 5000

Each row writes N small inline file parts into a fresh directory with the command line's
``save_files`` (the part of ``send --save-files`` after the answer has come) and reports the
process's CPU time (user + system, the worker threads' included: robust to other work on a
shared machine) and the wall time beside it. Parts of one name get numbered names
(``report-1.txt``...); the next free number is remembered per name, so both rows should cost
about the same: the target is a ratio of CPU times (one name / distinct names) under 1.5.
"""

from __future__ import annotations

import argparse
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
    args = parser.parse_args()
    for backend in ("asyncio", "trio"):
        distinct = anyio.run(measure, args.parts, False, backend=backend)
        same = anyio.run(measure, args.parts, True, backend=backend)
        ratio = same[0] / distinct[0]
        verdict = "PASS" if ratio <= TARGET else "FAIL"
        print(
            f"{backend:8} {args.parts} parts: distinct names {distinct[0]:.2f} s CPU "
            f"({distinct[1]:.2f} s wall), one name {same[0]:.2f} s CPU ({same[1]:.2f} s wall); "
            f"ratio {ratio:.2f} <= {TARGET}: {verdict}"
        )


if __name__ == "__main__":
    main()
