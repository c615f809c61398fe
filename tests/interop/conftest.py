"""Fixtures that start real A2A servers built with the official a2a-sdk on 127.0.0.1."""

from __future__ import annotations

import os
import selectors
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

SERVER = Path(__file__).with_name("sdk_server.py")
START_TIMEOUT = 30.0


def start_server(*args: str) -> tuple[subprocess.Popen[str], str]:
    """Start ``sdk_server.py`` with ``args``; return the process and its base URL."""
    proc = subprocess.Popen(
        [sys.executable, str(SERVER), *args, "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert proc.stdout is not None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        if not sel.select(timeout=deadline - time.monotonic()):
            break
        line = proc.stdout.readline()
        if line.startswith("READY "):
            return proc, line.split(" ", 1)[1].strip()
        if not line and proc.poll() is not None:
            break
    stop_server(proc)
    err = proc.stderr.read() if proc.stderr else ""
    raise RuntimeError(f"sdk_server {args} did not start: {err[-2000:]}")


def stop_server(proc: subprocess.Popen[str]) -> None:
    """Stop the server and reap it (bounded)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=10)
    for stream in (proc.stdout, proc.stderr):
        if stream is not None:
            stream.close()


@pytest.fixture(scope="session")
def strict_server() -> Iterator[str]:
    """Base URL of an a2a-sdk 1.x server speaking strict v1.0."""
    proc, url = start_server("--mode", "strict")
    yield url
    stop_server(proc)


@pytest.fixture(scope="session")
def compat_server() -> Iterator[str]:
    """Base URL of an a2a-sdk 1.x server with its v0.3 compatibility layer on."""
    proc, url = start_server("--mode", "compat")
    yield url
    stop_server(proc)


@pytest.fixture(scope="session")
def slow_server() -> Iterator[str]:
    """Base URL of a strict v1.0 a2a-sdk server whose every new request waits 30 s."""
    proc, url = start_server("--mode", "strict", "--delay", "30")
    yield url
    stop_server(proc)
