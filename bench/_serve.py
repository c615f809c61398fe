"""Starting a bench server in a process of its own (standard library only)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent


@contextmanager
def served(script: str, *args: str, python: str | Path = sys.executable) -> Iterator[str]:
    """The base URL of ``script`` (a server of this folder that prints its port and stops
    when its stdin closes), run with ``args`` by ``python``; stopped and reaped on exit."""
    with started(script, *args, python=python) as port:
        if not port.isdigit():
            raise RuntimeError(f"{script} did not start: {port!r}")
        yield f"http://127.0.0.1:{port}"


@contextmanager
def started(script: str, *args: str, python: str | Path = sys.executable) -> Iterator[str]:
    """The first line ``script`` prints (a server of this folder that stops when its stdin
    closes), run with ``args`` by ``python``; stopped and reaped on exit."""
    proc = subprocess.Popen(
        [str(python), str(HERE / script), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()
