"""ASGI plumbing of the server pieces (the testing kit and the push receiver): reading
requests, sending responses, and serving an app on 127.0.0.1 with hypercorn (asyncio or trio,
in the caller's event loop; hypercorn is imported only then). No client module imports it."""

from __future__ import annotations

import importlib.util
import json
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qsl

import anyio

from a2a_anyio._groups import beside

Scope = MutableMapping[str, Any]
ASGIMessage = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[ASGIMessage]]
Send = Callable[[ASGIMessage], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

MAX_BODY_BYTES = 16 * 1024 * 1024


@dataclass(slots=True)
class HTTPRequest:
    """An HTTP request read whole from an ASGI scope; ``path`` is relative to the mount."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes
    scheme: str = "http"
    root_path: str = ""
    host: str = "localhost"
    query_string: str = field(default="", repr=False)

    @classmethod
    async def read(cls, scope: Scope, receive: Receive) -> HTTPRequest:
        """Read the request line, headers and whole body."""
        headers: dict[str, str] = {}
        for raw_name, raw_value in scope.get("headers", []):
            name = raw_name.decode("latin-1").lower()
            value = raw_value.decode("latin-1")
            headers[name] = f"{headers[name]}, {value}" if name in headers else value
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            chunk = message.get("body", b"")
            size += len(chunk)
            if size > MAX_BODY_BYTES:
                raise ValueError("request body too large")
            chunks.append(chunk)
            if not message.get("more_body", False):
                break
        root = scope.get("root_path", "") or ""
        path = scope.get("path", "/")
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        query_string = scope.get("query_string", b"").decode("latin-1")
        server = scope.get("server") or ("localhost", None)
        host = headers.get("host") or (f"{server[0]}:{server[1]}" if server[1] else server[0])
        return cls(
            method=scope.get("method", "GET").upper(),
            path=path,
            query=dict(parse_qsl(query_string, keep_blank_values=True)),
            headers=headers,
            body=b"".join(chunks),
            scheme=scope.get("scheme", "http"),
            root_path=root,
            host=host,
            query_string=query_string,
        )

    @property
    def base_url(self) -> str:
        """The URL this app is reached at (scheme, host and mount path)."""
        return f"{self.scheme}://{self.host}{self.root_path}"

    def json(self) -> Any:
        """The body parsed as JSON (ValueError if it is not)."""
        return json.loads(self.body) if self.body else None


def dumps(value: Any) -> bytes:
    """Compact JSON bytes."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False).encode()


async def send_response(
    send: Send,
    status: int,
    body: bytes,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
) -> None:
    """A whole response in one go."""
    raw = [(b"content-type", content_type.encode()), (b"content-length", str(len(body)).encode())]
    raw += [(k.lower().encode(), str(x).encode()) for k, x in (headers or {}).items()]
    await send({"type": "http.response.start", "status": status, "headers": raw})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def send_json(
    send: Send,
    status: int,
    value: Any,
    content_type: str = "application/json",
    headers: dict[str, str] | None = None,
) -> None:
    """A JSON response."""
    await send_response(send, status, dumps(value), content_type, headers)


async def lifespan(receive: Receive, send: Send) -> None:
    """Answer the ASGI lifespan protocol (nothing to start or stop)."""
    while True:
        message = await receive()
        if message["type"] == "lifespan.startup":
            await send({"type": "lifespan.startup.complete"})
        elif message["type"] == "lifespan.shutdown":
            await send({"type": "lifespan.shutdown.complete"})
            return


# -- serving on 127.0.0.1 -------------------------------------------------------------------


def _on_trio() -> bool:
    trio = sys.modules.get("trio")
    if trio is None:
        return False
    try:
        trio.lowlevel.current_task()
    except RuntimeError:
        return False
    return True


def _with_lifespan(app: ASGIApp) -> ASGIApp:
    """``app``, made to answer the lifespan protocol when it ignores it (returns at once):
    hypercorn's trio worker fails on such apps, which ASGI allows."""

    async def wrapped(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await app(scope, receive, send)
            return
        sent: set[str] = set()

        async def tracking(message: ASGIMessage) -> None:
            sent.add(message["type"])
            await send(message)

        await app(scope, receive, tracking)
        if "lifespan.shutdown.complete" not in sent:
            await lifespan(receive, send)

    return wrapped


def need_hypercorn() -> None:
    """Raise ``RuntimeError`` naming the extra to install when hypercorn is missing."""
    if importlib.util.find_spec("hypercorn") is None:
        raise RuntimeError(
            "serving needs hypercorn: pip install 'a2a-anyio[testing]' (or [push], or [cli])"
        )


@asynccontextmanager
async def serve_app(
    app: ASGIApp,
    host: str = "127.0.0.1",
    port: int = 0,
    *,
    before_shutdown: Callable[[], None] | None = None,
    graceful_timeout: float = 2.0,
) -> AsyncIterator[str]:
    """Serve ``app`` with hypercorn on ``host:port`` (0: a free port) and yield its base URL.

    The server runs in the caller's event loop (asyncio or trio) as a task of a task group
    this context manager owns; leaving it stops the server gracefully (open connections get
    ``graceful_timeout`` seconds) and then cancels what is left.

    Raises:
        RuntimeError: hypercorn is not installed (the ``testing`` or ``push`` extra).
        OSError: the address cannot be bound.
    """
    need_hypercorn()
    from hypercorn.app_wrappers import ASGIWrapper
    from hypercorn.config import Config, Sockets

    if _on_trio():
        from hypercorn.trio.run import worker_serve
    else:
        from hypercorn.asyncio.run import worker_serve  # type: ignore[assignment]

    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP named: asyncio sets TCP_NODELAY only on sockets that say so, and without
    # it every answer waits out the peer's delayed ACK (about 40 ms).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(128)
        sock.setblocking(False)
        bound_port = sock.getsockname()[1]
        config = Config()
        config.graceful_timeout = graceful_timeout
        config.loglevel = "WARNING"
        config.keep_alive_timeout = 5.0
        stop = anyio.Event()
        stopped = anyio.Event()

        async def run() -> None:
            try:
                await worker_serve(
                    ASGIWrapper(_with_lifespan(app)),  # type: ignore[arg-type]
                    config,
                    sockets=Sockets([], [sock], []),
                    shutdown_trigger=stop.wait,
                )
            finally:
                stopped.set()

        url_host = f"[{host}]" if family == socket.AF_INET6 else host
        async with beside() as tg:
            tg.start_soon(run)
            try:
                yield f"http://{url_host}:{bound_port}"
            finally:
                if before_shutdown is not None:
                    before_shutdown()
                stop.set()
                with anyio.move_on_after(graceful_timeout + 1.0, shield=True):
                    await stopped.wait()
                tg.cancel_scope.cancel()
    finally:
        sock.close()
