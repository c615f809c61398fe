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


# --------------------------------------------------------------------------------------------
# Peers of the interop matrix (tests/interop/matrix.py): the a2a-sdk 0.3.x, fasta2a,
# python-a2a and LangGraph servers in virtual environments of their own, the JS SDK and Mastra
# servers under Node, and our legacy / v0.2 servers.
# --------------------------------------------------------------------------------------------

from . import matrix  # noqa: E402


def start_command(
    cmd: list[str], what: str, cwd: Path | None = None
) -> tuple[subprocess.Popen[str], str]:
    """Start a server command that prints ``READY <url>``; return the process and the URL.

    stderr goes to a temporary file (a chatty server can never block on a full pipe) and is
    shown if the server does not start.
    """
    import tempfile

    with tempfile.TemporaryFile(mode="w+") as errors:
        proc = subprocess.Popen(
            cmd,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
        assert proc.stdout is not None
        with selectors.DefaultSelector() as sel:
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
        errors.seek(0)
        raise RuntimeError(f"{what} did not start: {errors.read()[-3000:]}")


def _serve(cmd: list[str], what: str, cwd: Path | None = None) -> Iterator[str]:
    proc, url = start_command(cmd, what, cwd)
    try:
        yield url
    finally:
        stop_server(proc)


def _python_peer(env: matrix.PythonEnv) -> Iterator[str]:
    try:
        python = matrix.peer_python(env)
    except matrix.PythonTooOld as exc:
        pytest.skip(str(exc))
    except matrix.ProvisionError as exc:
        pytest.fail(str(exc), pytrace=False)
    cmd = [str(python), str(env.server), *env.args, "--port", "0"]
    yield from _serve(cmd, f"{env.title} server")


@pytest.fixture(scope="session")
def sdk03_server() -> Iterator[str]:
    """Base URL of an a2a-sdk 0.3.x server (its venv is built on first use, bounded)."""
    yield from _python_peer(matrix.SDK03_ENV)


@pytest.fixture(scope="session")
def sdk1_grpc_server() -> Iterator[str]:
    """Base URL of an a2a-sdk 1.x server whose card lists only its gRPC interfaces (v1.0
    and v0.3; its venv, with grpcio, is built on first use, bounded)."""
    yield from _python_peer(matrix.SDK1_GRPC_ENV)


@pytest.fixture(scope="session")
def sdk03_grpc_server() -> Iterator[str]:
    """Base URL of an a2a-sdk 0.3.x server whose card lists only its gRPC interface (its
    venv, with grpcio, is built on first use, bounded)."""
    yield from _python_peer(matrix.SDK03_GRPC_ENV)


@pytest.fixture(scope="session")
def fasta2a_server() -> Iterator[str]:
    """Base URL of a fasta2a server (its venv is built on first use, bounded)."""
    yield from _python_peer(matrix.FASTA2A_ENV)


@pytest.fixture(scope="session")
def pya2a_server() -> Iterator[str]:
    """Base URL of a python-a2a server (its venv is built on first use, bounded)."""
    yield from _python_peer(matrix.PYA2A_ENV)


@pytest.fixture(scope="session")
def langgraph_server() -> Iterator[str]:
    """URL of the A2A endpoint of LangGraph's API server, in-memory runtime (its venv is built
    on first use, bounded): ``http://127.0.0.1:<port>/a2a/<assistant id>``."""
    yield from _python_peer(matrix.LANGGRAPH_ENV)


def _node_peer(env: matrix.NodeEnv, *args: str) -> Iterator[str]:
    try:
        cwd = matrix.node_modules(env)
        node = matrix.node()
    except matrix.ProvisionError as exc:
        pytest.fail(str(exc), pytrace=False)
    cmd = [node, str(env.server), *args, "--port", "0"]
    yield from _serve(cmd, f"{env.title} server {' '.join(args)}".rstrip(), cwd)


@pytest.fixture(scope="session")
def js_server() -> Iterator[str]:
    """Base URL of an @a2a-js/sdk server, strict v1.0 (``npm ci`` on first use, bounded)."""
    yield from _node_peer(matrix.JS_ENV, "--mode", "strict")


@pytest.fixture(scope="session")
def js_compat_server() -> Iterator[str]:
    """Base URL of an @a2a-js/sdk server with ``legacyCompat`` on (v1.0 + v0.3)."""
    yield from _node_peer(matrix.JS_ENV, "--mode", "compat")


@pytest.fixture(scope="session")
def js_grpc_server() -> Iterator[str]:
    """Base URL of an @a2a-js/sdk server whose card lists only its gRPC interfaces (v1.0 and
    v0.3, on @grpc/grpc-js)."""
    yield from _node_peer(matrix.JS_ENV, "--mode", "grpc")


@pytest.fixture(scope="session")
def mastra_server() -> Iterator[str]:
    """Base URL of a Mastra server, its agent ``echo`` under ``/api`` (``npm ci`` on first
    use, bounded)."""
    yield from _node_peer(matrix.MASTRA_ENV)


def _legacy(dialect: str) -> Iterator[str]:
    cmd = [sys.executable, str(matrix.LEGACY_SERVERS), "--dialect", dialect, "--port", "0"]
    yield from _serve(cmd, f"legacy_servers.py --dialect {dialect}")


@pytest.fixture(scope="session")
def legacy_server() -> Iterator[str]:
    """Base URL of our ``tasks/send`` (dialect L) agent."""
    yield from _legacy("legacy")


@pytest.fixture(scope="session")
def legacy_cookie_server() -> Iterator[str]:
    """Base URL of our ``tasks/send`` agent that answers 401 without a ``user=`` cookie."""
    yield from _legacy("legacy-cookie")


@pytest.fixture(scope="session")
def v02_server() -> Iterator[str]:
    """Base URL of our v0.2.5 (``message/send``, card at agent.json) agent."""
    yield from _legacy("v02")
