"""A hostile HTTP/1.1 server of the suite's own: it sends exactly the bytes it is told.

It runs on 127.0.0.1 in the test's event loop (asyncio or trio), answers every request on a
connection (keep-alive) with what its ``answer`` function returns, sends each body chunked and
piece by piece as its iterator makes them (an endless body is fine: it stops when the client
goes), and counts the connections it holds, so a test can wait for the client to let go, and
those it accepted, so a test can see the client use one again.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import Any

import anyio
from anyio.abc import SocketAttribute, SocketStream

MAX_HEAD = 64 * 1024


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def rpc_id(self) -> Any:
        return json.loads(self.body)["id"]


@dataclass
class Answer:
    """A status, headers and a body sent chunked, one piece (a non-empty ``bytes``) at a time."""

    body: Iterable[bytes]
    headers: dict[str, str] = field(default_factory=dict)
    status: int = 200
    #: Seconds between the bytes of the head, sent one at a time (0: the head at once).
    head_gap: float = 0.0
    #: After the body, send no last chunk: the answer stays open until the client goes.
    hold: bool = False


class RawServer:
    def __init__(self, answer: Callable[[Request], Answer]) -> None:
        self.answer = answer
        self.requests: list[Request] = []
        #: connections open now, and accepted in all
        self.open = 0
        self.connections = 0
        self._changed = anyio.Event()

    @asynccontextmanager
    async def serve(self) -> AsyncIterator[str]:
        """Serve on a free port of 127.0.0.1; yield the base URL."""
        listener = await anyio.create_tcp_listener(local_host="127.0.0.1")
        async with listener, anyio.create_task_group() as tg:
            port = listener.extra(SocketAttribute.local_port)
            tg.start_soon(listener.serve, self._handle)
            try:
                yield f"http://127.0.0.1:{port}"
            finally:
                tg.cancel_scope.cancel()

    async def until_no_connection(self, within: float = 5.0) -> None:
        """Wait until the client has closed every connection (bounded)."""
        with anyio.fail_after(within):
            while self.open:
                await self._changed.wait()

    async def _handle(self, stream: SocketStream) -> None:
        self.open += 1
        self.connections += 1
        buffer = b""
        try:
            while True:
                request, buffer = await _read_request(stream, buffer)
                if request is None:
                    return
                self.requests.append(request)
                await _send(stream, self.answer(request))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
            pass  # the client went away mid-answer: what a refusing client does
        finally:
            with anyio.CancelScope(shield=True):
                await stream.aclose()
            self.open -= 1
            self._changed.set()
            self._changed = anyio.Event()


async def _read_request(stream: SocketStream, buffer: bytes) -> tuple[Request | None, bytes]:
    try:
        while b"\r\n\r\n" not in buffer:
            if len(buffer) > MAX_HEAD:
                return None, b""
            buffer += await stream.receive()
        head, _, buffer = buffer.partition(b"\r\n\r\n")
        line, *lines = head.decode("latin-1").split("\r\n")
        method, path, _ = line.split(" ", 2)
        headers = {}
        for header in lines:
            name, _, value = header.partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0"))
        while len(buffer) < length:
            buffer += await stream.receive()
    except anyio.EndOfStream:
        return None, b""
    return Request(method, path, headers, buffer[:length]), buffer[length:]


async def _send(stream: SocketStream, answer: Answer) -> None:
    head = [f"HTTP/1.1 {answer.status} Whatever", "Transfer-Encoding: chunked"]
    head += [f"{name}: {value}" for name, value in answer.headers.items()]
    raw = ("\r\n".join(head) + "\r\n\r\n").encode("latin-1")
    if answer.head_gap:
        for byte in raw:
            await stream.send(bytes([byte]))
            await anyio.sleep(answer.head_gap)
    else:
        await stream.send(raw)
    for piece in answer.body:
        if piece:
            await stream.send(b"%x\r\n%s\r\n" % (len(piece), piece))
    if answer.hold:
        with suppress(anyio.EndOfStream):  # or a reset: OSError, as for any send
            while True:
                await stream.receive()
        return
    await stream.send(b"0\r\n\r\n")


def jsonrpc(request: Request, result: Any) -> bytes:
    """The JSON-RPC answer to ``request`` with ``result``."""
    return json.dumps({"jsonrpc": "2.0", "id": request.rpc_id, "result": result}).encode()


def sse(request: Request, *results: Any) -> bytes:
    """Server-sent events, one JSON-RPC answer to ``request`` per result."""
    return b"".join(b"data: " + jsonrpc(request, r) + b"\n\n" for r in results)
