"""ASGI plumbing shared by the fake agent and the push receiver: reading requests, sending
responses, serving an app on 127.0.0.1 with hypercorn (asyncio or trio, in the caller's event
loop), and an httpx transport that runs an app in-process and *streams* its body."""

from __future__ import annotations

import contextlib
import importlib.util
import json
import math
import socket
import sys
from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, field
from types import TracebackType
from typing import Any
from urllib.parse import parse_qsl

import anyio
import httpx
from anyio.abc import TaskGroup

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


# -- in-process transport -------------------------------------------------------------------


class _Exchange:
    """One request run through the app: the app's messages flow through a memory stream."""

    def __init__(self, body: bytes) -> None:
        self.body = body
        self.body_sent = False
        self.disconnected = anyio.Event()
        self.send_stream, self.receive_stream = anyio.create_memory_object_stream[ASGIMessage](
            math.inf
        )
        self.scope = anyio.CancelScope()

    async def receive(self) -> ASGIMessage:
        if not self.body_sent:
            self.body_sent = True
            return {"type": "http.request", "body": self.body, "more_body": False}
        await self.disconnected.wait()
        return {"type": "http.disconnect"}

    async def send(self, message: ASGIMessage) -> None:
        # When the client went away, the app notices through receive().
        with contextlib.suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
            self.send_stream.send_nowait(message)

    async def run(self, app: ASGIApp, scope: Scope) -> None:
        try:
            with self.scope:
                await app(scope, self.receive, self.send)
        except Exception as exc:  # handed to the reader instead of crashing the task group
            await self.send({"type": "a2a_anyio.error", "error": exc})
        finally:
            self.send_stream.close()

    def close(self) -> None:
        self.disconnected.set()
        self.scope.cancel()
        self.receive_stream.close()


class _StreamedBody(httpx.AsyncByteStream):
    """The response body: the app's body messages, read as they come (no generator, so an
    abandoned body leaves nothing to finalise)."""

    def __init__(self, exchange: _Exchange) -> None:
        self._exchange = exchange
        self._done = False

    def __aiter__(self) -> AsyncIterator[bytes]:
        return self

    async def __anext__(self) -> bytes:
        stream = self._exchange.receive_stream
        while not self._done:
            try:
                message = await stream.receive()
            except (anyio.EndOfStream, anyio.ClosedResourceError):
                raise httpx.RemoteProtocolError(
                    "the app ended without finishing its response"
                ) from None
            if message["type"] == "a2a_anyio.error":
                raise httpx.RemoteProtocolError(
                    f"the app failed mid-response: {message['error']!r}"
                )
            if message["type"] != "http.response.body":
                continue
            self._done = not message.get("more_body", False)
            chunk: bytes = message.get("body", b"")
            if chunk:
                return chunk
        raise StopAsyncIteration

    async def aclose(self) -> None:
        self._exchange.close()


class StreamingASGITransport(httpx.AsyncBaseTransport):
    """An httpx transport that runs an ASGI app in-process and streams its responses.

    Unlike ``httpx.ASGITransport`` it hands the body over chunk by chunk as the app sends it,
    so server-sent events arrive one by one. Each request runs the app in a task of the task
    group ``task_group()`` returns; entered (``async with httpx.AsyncClient(transport=t)``),
    the transport also enters ``context()`` first, e.g. to start the agent it belongs to.
    """

    def __init__(
        self,
        app: ASGIApp,
        task_group: Callable[[], TaskGroup | None],
        context: Callable[[], Any] | None = None,
    ) -> None:
        self._app = app
        self._task_group = task_group
        self._context = context
        self._stack: AsyncExitStack | None = None

    async def __aenter__(self) -> StreamingASGITransport:
        if self._context is not None:
            stack = AsyncExitStack()
            await stack.enter_async_context(self._context())
            self._stack = stack
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None = None,
        exc_value: BaseException | None = None,
        traceback: TracebackType | None = None,
    ) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        """Leave what entering the transport entered (the agent it started, if any)."""
        stack, self._stack = self._stack, None
        if stack is not None:
            await stack.aclose()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        """Run the app for ``request`` in the task group; the response's body streams as the app
        sends it.

        Raises:
            RuntimeError: the app is not running (enter the agent, or the httpx client).
            httpx.RemoteProtocolError: the app ended without a response.
            Exception: what the app raised before it started the response.
        """
        tg = self._task_group()
        if tg is None:
            raise RuntimeError(
                "the app is not running: enter it (async with agent: ...) or enter the "
                "httpx.AsyncClient that uses this transport"
            )
        body = await request.aread()
        url = request.url
        port = url.port or (443 if url.scheme == "https" else 80)
        scope: Scope = {
            "type": "http",
            "asgi": {"version": "3.0", "spec_version": "2.3"},
            "http_version": "1.1",
            "method": request.method,
            "scheme": url.scheme,
            "path": url.path,
            "raw_path": url.raw_path.split(b"?", 1)[0],
            "root_path": "",
            "query_string": url.query,
            "headers": [(k.lower(), v) for k, v in request.headers.raw],
            "client": ("127.0.0.1", 50000),
            "server": (url.host, port),
        }
        exchange = _Exchange(body)
        tg.start_soon(exchange.run, self._app, scope)
        try:
            while True:
                try:
                    message = await exchange.receive_stream.receive()
                except anyio.EndOfStream:
                    raise httpx.RemoteProtocolError("the app ended without a response") from None
                if message["type"] == "a2a_anyio.error":
                    raise message["error"]
                if message["type"] == "http.response.start":
                    break
        except BaseException:
            exchange.close()
            raise
        headers = [(bytes(k), bytes(x)) for k, x in message.get("headers", [])]
        return httpx.Response(
            message["status"], headers=headers, stream=_StreamedBody(exchange), request=request
        )
