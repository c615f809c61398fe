"""The CLI run as a subprocess against real servers on 127.0.0.1.

The a2a-sdk servers come from the interop suite; ``auth_server`` is a tiny stdlib HTTP server
that wants ``Authorization: Bearer good`` and answers everything else with 401; ``raw_agent``
is one whose answers are JSON text written by hand, with escapes no JSON encoder writes;
``FileServer`` serves files, beside a FakeAgent on its origin or on an origin of its own.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from functools import partial
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import anyio.to_thread
import pytest

from a2a_anyio._asgi import Receive, Scope, Send, send_response
from a2a_anyio.testing import FakeAgent, serve_app
from tests.interop.conftest import (  # noqa: F401
    compat_server,
    fasta2a_server,
    slow_server,
    start_server,
    stop_server,
    strict_server,
)

CLI_TIMEOUT = 30.0
GOOD_TOKEN = "good-token-123"


@dataclass
class Run:
    """One finished run of the CLI."""

    code: int
    out: str
    err: str

    def json(self) -> Any:
        return json.loads(self.out)

    def jsonl(self) -> list[Any]:
        return [json.loads(line) for line in self.out.splitlines()]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment of a run: no user config, no colours forced, the given variables."""
    skip = ("A2A_ANYIO_", "A2ACLI_", "FORCE_COLOR", "NO_COLOR", "PYTHONDONTWRITEBYTECODE")
    # Bytecode caches may be written: every run after the first then starts twice as fast.
    env = {k: v for k, v in os.environ.items() if not k.startswith(skip)}
    env.update(PYTHONUNBUFFERED="1", COLUMNS="200")
    env.update(extra)
    return env


def cli(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    timeout: float = CLI_TIMEOUT,
    input: str | None = None,
) -> Run:
    """Run ``python -m a2a_anyio.cli ARGS`` and wait for it (bounded); ``input`` is piped to
    its standard input (else it reads nothing)."""
    proc = subprocess.run(
        [sys.executable, "-m", "a2a_anyio.cli", *args],
        capture_output=True,
        text=True,
        env=env if env is not None else clean_env(),
        cwd=cwd,
        timeout=timeout,
        input=input,
        stdin=subprocess.DEVNULL if input is None else None,
    )
    return Run(proc.returncode, proc.stdout, proc.stderr)


async def run(backend: str, *args: str, input: str | None = None) -> Run:
    """``cli`` in a worker thread, on ``backend``: the test's loop serves the agent meanwhile."""
    return await anyio.to_thread.run_sync(partial(cli, "--backend", backend, *args, input=input))


def closed_port() -> int:
    """A port on 127.0.0.1 nobody listens on (bound, then released)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


class _AuthHandler(BaseHTTPRequestHandler):
    """A card anyone may read; a JSON-RPC endpoint that wants ``Bearer good-token-123``;
    a card under /private/ that wants it too."""

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, body: Any, headers: dict[str, str] | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(data)

    def _authorized(self) -> bool:
        return self.headers.get("Authorization") == f"Bearer {GOOD_TOKEN}"

    def _refuse(self) -> None:
        self._send(401, {"error": "unauthorized"}, {"WWW-Authenticate": 'Bearer realm="test"'})

    def _card(self) -> dict[str, Any]:
        base = f"http://{self.headers.get('Host', '')}"
        return {
            "name": "Auth Test Agent",
            "description": "Wants a bearer token.",
            "version": "0.0.1",
            "supportedInterfaces": [
                {"url": f"{base}/rpc", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}
            ],
            "capabilities": {"streaming": False},
            "defaultInputModes": ["text/plain"],
            "defaultOutputModes": ["text/plain"],
            "skills": [],
        }

    def do_GET(self) -> None:
        if self.path == "/.well-known/agent-card.json":
            self._send(200, self._card())
        elif self.path.startswith("/private/") and not self._authorized():
            self._refuse()
        elif self.path == "/private/.well-known/agent-card.json":
            self._send(200, self._card())
        else:
            self._send(404, {"error": "not found"})

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        if not self._authorized():
            self._refuse()
            return
        key = self.headers.get("X-Api-Key", "")
        message = {
            "messageId": "m1",
            "role": "ROLE_AGENT",
            "parts": [{"text": f"authorized; X-Api-Key={key}"}],
        }
        self._send(200, {"jsonrpc": "2.0", "id": request.get("id"), "result": {"message": message}})


@pytest.fixture(scope="session")
def auth_server() -> Iterator[str]:
    """Base URL of a local server that answers 401 without ``Bearer good-token-123``."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _AuthHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


#: What ``raw_agent`` says, as JSON text: a lone surrogate, a C1 CSI, an OSC title.
RAW_NAME = r"Raw \ud800 agent \u009b2J \u001b]0;pwned\u0007"
RAW_TEXT = r"lone \udc80 surrogate \u009d0;pwned\u009c \u202eevil"


class _RawHandler(BaseHTTPRequestHandler):
    """A v1.0 agent named ``RAW_NAME`` that answers every message with ``RAW_TEXT``."""

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, text: str) -> None:
        data = text.encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        rpc = f"http://{self.headers.get('Host', '')}/rpc"
        self._send(
            f'{{"name": "{RAW_NAME}", "description": "{RAW_TEXT}", "version": "1",'
            f' "supportedInterfaces": [{{"url": "{rpc}", "protocolBinding": "JSONRPC",'
            ' "protocolVersion": "1.0"}], "capabilities": {}, "defaultInputModes": [],'
            f' "defaultOutputModes": [], "skills": [{{"id": "s", "name": "{RAW_NAME}",'
            f' "description": "{RAW_TEXT}", "tags": []}}]}}'
        )

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        request = json.loads(self.rfile.read(length) or b"{}")
        self._send(
            f'{{"jsonrpc": "2.0", "id": {json.dumps(request.get("id"))}, "result": {{"message":'
            f' {{"messageId": "m1", "role": "ROLE_AGENT", "parts": [{{"text": "{RAW_TEXT}"}}]}}}}}}'
        )


@pytest.fixture(scope="session")
def raw_agent() -> Iterator[str]:
    """Base URL of the ``_RawHandler`` agent on 127.0.0.1."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _RawHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()
    thread.join(timeout=5)


@pytest.fixture
def registry_env(
    tmp_path: Path,
    strict_server: str,  # noqa: F811
    compat_server: str,  # noqa: F811
    auth_server: str,
) -> dict[str, str]:
    """A registry file with the test servers, and the environment that points at it."""
    down = f"http://127.0.0.1:{closed_port()}"
    (tmp_path / "agents.yaml").write_text(
        f"""\
defaults: {{timeout_seconds: 20, retries: 1}}
agents:
  - name: strict
    url: {strict_server}
    tags: [sdk]
  - name: compat
    url: {compat_server}
    protocol: 0.3
    tags: [sdk]
  - name: guarded
    url: {auth_server}
    token_env: GUARDED_TOKEN
    headers: {{X-Api-Key: "${{GUARDED_KEY}}"}}
  - name: down
    url: {down}
groups:
  reviewers: [strict, compat]
  everyone: [strict, compat, down]
"""
    )
    return clean_env(
        A2A_ANYIO_CONFIG=str(tmp_path / "agents.yaml"),
        HOME=str(tmp_path),
        XDG_CONFIG_HOME=str(tmp_path / "config"),
    )


@dataclass
class FileServer:
    """An ASGI app that serves ``files`` (path -> status, body, headers; a body of several
    chunks is streamed, without a length) and records each file request's headers; any other
    path goes to ``agent`` (else 404)."""

    agent: FakeAgent | None = None
    files: dict[str, tuple[int, bytes | list[bytes], dict[str, str]]] = field(default_factory=dict)
    seen: dict[str, dict[str, str]] = field(default_factory=dict)
    url: str = ""

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        path = scope.get("path", "")
        if scope["type"] == "http" and path in self.files:
            self.seen[path] = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
            status, body, headers = self.files[path]
            if isinstance(body, bytes):
                rest = dict(headers)
                ctype = rest.pop("Content-Type", "application/octet-stream")
                await send_response(send, status, body, ctype, rest)
                return
            await send({"type": "http.response.start", "status": status, "headers": []})
            for chunk in body:
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        elif self.agent is not None:
            await self.agent(scope, receive, send)
        elif scope["type"] == "http":
            await send_response(send, 404, b"Not Found", "text/plain")

    @asynccontextmanager
    async def serve(self) -> AsyncIterator[FileServer]:
        async with serve_app(self) as self.url:
            yield self
