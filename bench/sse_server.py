"""A minimal, fast A2A v1.0 JSON-RPC streaming server for the fan-out benchmark.

Plain asyncio streams, HTTP/1.1 with keep-alive, no framework: the agent card at
``/.well-known/agent-card.json`` and, for every POST to ``/a2a/jsonrpc``, an event stream
(chunked) of ``--events`` events built from the recorded v1.0 frames, ``--interval`` seconds
apart, the request's JSON-RPC id echoed. ``GET /stats`` tells how many streams were open at
once since the previous look. It prints its port on stdout, then serves until it
is terminated, its stdin closes, or ``--lifetime`` seconds pass.

    python bench/sse_server.py --events 10 --interval 0.2
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import sys

import _common as c

_CARD_PATH = b"/.well-known/agent-card.json"
_RPC_PATH = b"/a2a/jsonrpc"
_STATS_PATH = b"/stats"


def _card(port: int) -> bytes:
    frame = json.loads((c.FRAMES / "card.json").read_text())
    card = frame["response"]["body"]
    card["supportedInterfaces"] = [
        {
            "protocolBinding": "JSONRPC",
            "protocolVersion": "1.0",
            "url": f"http://127.0.0.1:{port}/a2a/jsonrpc",
        }
    ]
    card.pop("securityRequirements", None)
    card.pop("securitySchemes", None)
    return c.compact(card)


def _response(status: bytes, ctype: bytes, body: bytes) -> bytes:
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: " + ctype
        + b"\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )  # fmt: skip


_SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-store\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)


class Server:
    def __init__(self, events: int, interval: float) -> None:
        self.templates = c.sse_templates(c.stream_results(events))
        self.interval = interval
        self.card = b""
        self.open = 0
        self.peak = 0
        self.served = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                line, _, rest = head.partition(b"\r\n")
                method, path, _ = line.split(b" ", 2)
                length = 0
                for h in rest.split(b"\r\n"):
                    name, _, value = h.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                if method == b"GET" and path == _CARD_PATH:
                    writer.write(_response(b"200 OK", b"application/json", self.card))
                elif method == b"GET" and path == _STATS_PATH:
                    # How many streams were open at once since the last look (then reset).
                    stats = {"open": self.open, "peak": self.peak, "served": self.served}
                    self.peak, self.served = self.open, 0
                    writer.write(_response(b"200 OK", b"application/json", c.compact(stats)))
                elif method == b"POST" and path == _RPC_PATH:
                    await self.stream(writer, c.request_id(body))
                else:
                    writer.write(_response(b"404 Not Found", b"text/plain", b"not found"))
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, ValueError):
            pass
        except asyncio.CancelledError:  # shutting down with connections still open
            pass
        finally:
            writer.close()

    async def stream(self, writer: asyncio.StreamWriter, req_id: bytes) -> None:
        self.open += 1
        self.peak = max(self.peak, self.open)
        try:
            writer.write(_SSE_HEAD)
            last = len(self.templates) - 1
            for i, template in enumerate(self.templates):
                data = template + req_id + c.SSE_TAIL
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                await writer.drain()
                if self.interval and i < last:
                    await asyncio.sleep(self.interval)
            writer.write(b"0\r\n\r\n")
            self.served += 1
        finally:
            self.open -= 1


def _stdin_closed() -> asyncio.Future[None]:
    """Done when stdin reaches end of file (the bench closes the pipe to stop the server)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    fd = sys.stdin.fileno()

    def readable() -> None:
        if not os.read(fd, 4096):
            loop.remove_reader(fd)
            if not done.done():
                done.set_result(None)

    loop.add_reader(fd, readable)
    return done


async def main(events: int, interval: float, lifetime: float) -> None:
    server = Server(events, interval)
    srv = await asyncio.start_server(server.handle, "127.0.0.1", 0, backlog=4096)
    port = srv.sockets[0].getsockname()[1]
    server.card = _card(port)
    print(port, flush=True)
    async with srv:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(_stdin_closed(), lifetime)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--events", type=int, default=10)
    p.add_argument("--interval", type=float, default=0.2)
    p.add_argument("--lifetime", type=float, default=900.0)
    a = p.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(a.events, a.interval, a.lifetime))
