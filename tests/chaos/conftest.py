"""The chaos server (``chaos_server.py``) started once per session on 127.0.0.1."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import pytest

SERVER = Path(__file__).with_name("chaos_server.py")
START_TIMEOUT = 30.0
STOP_TIMEOUT = 10.0


def start_server(log: IO[str]) -> tuple[subprocess.Popen[str], str]:
    """Start the chaos server, its stderr going to ``log``; return the process and base URL."""
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=log,  # a file, not a pipe: nobody drains a pipe while the tests run
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + START_TIMEOUT
    try:
        while time.monotonic() < deadline:
            if not sel.select(timeout=deadline - time.monotonic()):
                break
            line = proc.stdout.readline()
            if line.startswith("READY "):
                return proc, line.split(" ", 1)[1].strip()
            if not line and proc.poll() is not None:
                break
    finally:
        sel.close()
    stop_server(proc)
    raise RuntimeError(f"chaos_server did not start: {_tail(log)}")


def stop_server(proc: subprocess.Popen[str]) -> None:
    """Stop the server and reap it (bounded)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=STOP_TIMEOUT)
    if proc.stdout is not None:
        proc.stdout.close()


def _tail(log: IO[str]) -> str:
    try:
        return Path(log.name).read_text()[-2000:]
    except (OSError, AttributeError, TypeError):
        return ""


@pytest.fixture(scope="session")
def chaos_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of the chaos server; ``{base}/{fault}`` is an agent with that fault."""
    log_path = tmp_path_factory.mktemp("chaos") / "chaos_server.log"
    with log_path.open("w") as log:
        proc, url = start_server(log)
        try:
            yield url
        finally:
            stop_server(proc)
