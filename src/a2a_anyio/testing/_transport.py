"""An httpx transport that runs an ASGI app in-process and *streams* its body."""

from __future__ import annotations

import contextlib
import math
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack
from types import TracebackType
from typing import Any

import anyio
import httpx
from anyio.abc import TaskGroup

from a2a_anyio._asgi import ASGIApp, ASGIMessage, Scope


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
        if (trace := request.extensions.get("trace")) is not None:  # as httpcore's trace
            await trace("http11.send_request_body.complete", {})
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
