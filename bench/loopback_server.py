"""A minimal A2A JSON-RPC server for the loopback benchmark, in a process of its own.

Plain asyncio streams, HTTP/1.1 with keep-alive, no framework, every answer prepared once
at start-up: the server costs little, and the same for every client measured. It binds
127.0.0.1 only, prints its port on stdout, then serves until its stdin closes or
``--lifetime`` seconds pass.

What it serves, the request's JSON-RPC ``id`` echoed into every answer:

- ``GET /.well-known/agent-card.json``: the recorded v1.0 card (``tests/frames/v1_0/card.json``)
  naming a JSON-RPC 1.0 interface at ``/a2a/jsonrpc`` and a JSON-RPC 0.3 one at ``/a2a/v03``;
- ``POST /a2a/jsonrpc``, A2A v1.0: ``SendMessage`` is answered with the recorded completed Task
  (``tests/frames/v1_0/send_message_task.json``), ``SendStreamingMessage`` with a chunked
  ``text/event-stream`` of ``--events`` events shaped like the recorded stream
  (``_common.stream_results``), one event per chunk;
- ``POST /a2a/v03``, A2A v0.3: ``message/send`` and ``message/stream``, the same content in the
  v0.3 shapes (``tests/frames/v0_3/``: results with ``kind``, lowercase states and roles);
- ``POST /fasta2a/``: what a fasta2a 2.x server writes for ``message/send`` and
  ``message/stream``: the v1.0 shapes (``{"task": ...}``, ``{"statusUpdate": ...}``, parts
  without ``kind``) with the v0.3 enum values (``completed``, ``user``). That is the only form
  fasta2a's client reads: it validates the v0.3 shapes into empty results.

A request whose body contains ``bench-warm-up`` gets a stream of ``WARM_EVENTS`` events (the
children warm up with it). Anything else is a 404, or a JSON-RPC "method not found".

For the fan-out, ``--hold N`` holds every stream after its first event until N streams are
open at once (or ``--hold-timeout`` seconds after the first one opened), then sends the rest:
the streams are then concurrent by construction, and a client that queues some of them
behind others (a connection pool's cap) never brings N together. ``GET /stats`` tells the
streams open, the most open at once, the streams served, the seconds from the first stream
to that peak and the server's own CPU seconds, since the previous look (then reset). The
server raises its open-files limit to the hard limit and listens with a backlog of 4,096.

    python bench/loopback_server.py --events 2000
    python bench/loopback_server.py --events 20 --hold 10000
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import json
import os
import re
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

import _common as c

FRAMES_V03 = c.ROOT / "tests" / "frames" / "v0_3"
CARD_PATH = b"/.well-known/agent-card.json"
V10_PATH = b"/a2a/jsonrpc"
V03_PATH = b"/a2a/v03"
FASTA2A_PATH = b"/fasta2a/"
STATS_PATH = b"/stats"
WARM_MARK = b"bench-warm-up"
WARM_EVENTS = 50
MAX_REQUESTS_PER_CONNECTION = 10_000_000
MAX_HEADER_BYTES = 64 * 1024
BACKLOG = 4096

_METHOD = re.compile(rb'"method":\s*"([^"\\]*)"')


# -- the answers ----------------------------------------------------------------------------


def unary_v10() -> dict[str, Any]:
    """The recorded v1.0 SendMessage result, whole: a completed Task with two artifacts."""
    frame = json.loads((c.FRAMES / "send_message_task.json").read_text())
    result: dict[str, Any] = frame["response"]["body"]["result"]
    return result


def unary_v03() -> dict[str, Any]:
    """The recorded v0.3 message/send result: the same completed Task, v0.3 shapes."""
    frame = json.loads((FRAMES_V03 / "send_message_task.json").read_text())
    result: dict[str, Any] = frame["response"]["body"]["result"]
    return result


def _recorded_v03_stream() -> list[dict[str, Any]]:
    frame = json.loads((FRAMES_V03 / "stream_message.json").read_text())
    out = []
    for block in frame["response"]["sse"].split("\r\n\r\n"):
        if block.startswith("data: "):
            out.append(json.loads(block[len("data: ") :])["result"])
    return out


def stream_v03(events: int) -> list[dict[str, Any]]:
    """``events`` v0.3 stream results laid out like ``_common.stream_results`` (v1.0).

    A Task snapshot, every tenth event a WORKING status update with an agent message, the
    others artifact chunks of one report (``append`` after the first, the last marked
    ``lastChunk``), and a final COMPLETED status update (``final``).
    """
    if events < 4:
        raise ValueError("a stream needs at least 4 events")
    snapshot, working, first_chunk, _, _, completed = _recorded_v03_stream()
    out = [snapshot]
    chunk = 0
    for i in range(1, events - 1):
        if i % 10 == 1:
            out.append(working)
            continue
        ev = copy.deepcopy(first_chunk)
        ev["artifact"]["parts"] = [{"kind": "text", "text": f" token {chunk}"}]
        ev["append"] = chunk > 0
        ev["lastChunk"] = i == events - 2
        chunk += 1
        out.append(ev)
    out.append(completed)
    return out


_ROLE_V03 = {"ROLE_USER": "user", "ROLE_AGENT": "agent"}
_APPLICATION_KEYS = frozenset({"data", "metadata"})


def fasta2a_enums(value: Any) -> Any:
    """A v1.0 value with its enums written as fasta2a writes them (``completed``, ``user``).

    The inverse of fasta2a's own ``jsonrpc_v1.to_v1``: ``data`` and ``metadata`` are the
    application's and copied as they are.
    """
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            if key in _APPLICATION_KEYS:
                out[key] = item
            elif key == "role" and isinstance(item, str):
                out[key] = _ROLE_V03.get(item, item)
            elif key == "state" and isinstance(item, str) and item.startswith("TASK_STATE_"):
                out[key] = item[len("TASK_STATE_") :].lower().replace("_", "-")
            else:
                out[key] = fasta2a_enums(item)
        return out
    if isinstance(value, list):
        return [fasta2a_enums(item) for item in value]
    return value


def _unary_template(result: dict[str, Any]) -> tuple[bytes, bytes]:
    return b'{"jsonrpc":"2.0","id":', b',"result":' + c.compact(result) + b"}"


def _response(status: bytes, ctype: bytes, body: bytes) -> bytes:
    return (
        b"HTTP/1.1 " + status + b"\r\ncontent-type: " + ctype
        + b"\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )  # fmt: skip


_SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-store\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)
_NOT_FOUND = _response(b"404 Not Found", b"text/plain", b"not found")


def card(port: int) -> bytes:
    """The recorded v1.0 card, its interfaces pointing here, without security schemes."""
    frame = json.loads((c.FRAMES / "card.json").read_text())
    value = frame["response"]["body"]
    base = f"http://127.0.0.1:{port}"
    value["supportedInterfaces"] = [
        {"protocolBinding": "JSONRPC", "protocolVersion": "1.0", "url": f"{base}/a2a/jsonrpc"},
        {"protocolBinding": "JSONRPC", "protocolVersion": "0.3", "url": f"{base}/a2a/v03"},
    ]
    value.pop("securityRequirements", None)
    value.pop("securitySchemes", None)
    return c.compact(value)


class Dialect:
    """One wire form: the unary answer and the stream's event templates, prepared once."""

    def __init__(
        self,
        unary_method: bytes,
        stream_method: bytes,
        unary: dict[str, Any],
        stream: Callable[[int], list[dict[str, Any]]],
        events: int,
    ) -> None:
        self.unary_method = unary_method
        self.stream_method = stream_method
        self.unary_head, self.unary_tail = _unary_template(unary)
        self.events = c.sse_templates(stream(events))
        self.warm_events = c.sse_templates(stream(WARM_EVENTS))


def _cpu_s() -> float:
    ru = resource.getrusage(resource.RUSAGE_SELF)
    return ru.ru_utime + ru.ru_stime


class Streams:
    """The count of open streams, their peak, and the ``--hold`` barrier."""

    def __init__(self, hold: int, hold_timeout: float) -> None:
        self.hold = hold
        self.hold_timeout = hold_timeout
        self.together = asyncio.Event()
        self.hold_from: float | None = None  # when the first stream opened
        self.reset()

    def reset(self) -> None:
        self.open = self.peak = self.served = 0
        self.first_at: float | None = None
        self.peak_after: float | None = None
        self.cpu0 = _cpu_s()

    def opened(self) -> None:
        now = time.perf_counter()
        if self.first_at is None:
            self.first_at = now
        if self.hold_from is None:
            self.hold_from = now
        self.open += 1
        if self.open > self.peak:
            self.peak = self.open
            self.peak_after = now - self.first_at
        if self.hold and self.open >= self.hold:
            self.together.set()

    async def held(self) -> None:
        """Back when ``hold`` streams have been open at once, or the hold timed out."""
        if not self.hold or self.together.is_set():
            return
        assert self.hold_from is not None
        left = self.hold_from + self.hold_timeout - time.perf_counter()
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(self.together.wait(), max(left, 0.0))

    def stats(self) -> bytes:
        """The figures since the previous look; then they start again."""
        value = {
            "open": self.open,
            "peak": self.peak,
            "served": self.served,
            "peak_after_s": self.peak_after,
            "cpu_s": _cpu_s() - self.cpu0,
        }
        open_now = self.open
        self.reset()
        self.open = self.peak = open_now
        return c.compact(value)


class Server:
    def __init__(self, events: int, hold: int = 0, hold_timeout: float = 60.0) -> None:
        def fasta2a_stream(n: int) -> list[dict[str, Any]]:
            return [fasta2a_enums(r) for r in c.stream_results(n)]

        send, stream = b"message/send", b"message/stream"
        self.dialects = {
            V10_PATH: Dialect(
                b"SendMessage", b"SendStreamingMessage", unary_v10(), c.stream_results, events
            ),
            V03_PATH: Dialect(send, stream, unary_v03(), stream_v03, events),
            FASTA2A_PATH: Dialect(send, stream, fasta2a_enums(unary_v10()), fasta2a_stream, events),
        }
        self.card = b""
        self.streams = Streams(hold, hold_timeout)

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            for _ in range(MAX_REQUESTS_PER_CONNECTION):
                head = await reader.readuntil(b"\r\n\r\n")
                line, _, rest = head.partition(b"\r\n")
                method, path, _ = line.split(b" ", 2)
                length = 0
                for h in rest.split(b"\r\n"):
                    name, _, value = h.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                body = await reader.readexactly(length) if length else b""
                if method == b"GET" and path == CARD_PATH:
                    writer.write(_response(b"200 OK", b"application/json", self.card))
                elif method == b"GET" and path == STATS_PATH:
                    stats = self.streams.stats()
                    writer.write(_response(b"200 OK", b"application/json", stats))
                elif method == b"POST" and path in self.dialects:
                    await self.answer(writer, self.dialects[path], body)
                else:
                    writer.write(_NOT_FOUND)
                await writer.drain()
        except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            pass
        except ValueError:  # a malformed request line or header
            pass
        except asyncio.CancelledError:  # shutting down with connections still open
            pass
        finally:
            writer.close()

    async def answer(self, writer: asyncio.StreamWriter, d: Dialect, body: bytes) -> None:
        req_id = c.request_id(body)
        m = _METHOD.search(body)
        rpc = m.group(1) if m else b""
        if rpc == d.unary_method:
            content = d.unary_head + req_id + d.unary_tail
            writer.write(_response(b"200 OK", b"application/json", content))
        elif rpc == d.stream_method:
            templates = d.warm_events if WARM_MARK in body else d.events
            await self.stream(writer, templates, req_id)
        else:
            error = b',"error":{"code":-32601,"message":"Method not found"}}'
            content = b'{"jsonrpc":"2.0","id":' + req_id + error
            writer.write(_response(b"200 OK", b"application/json", content))

    async def stream(
        self, writer: asyncio.StreamWriter, templates: list[bytes], req_id: bytes
    ) -> None:
        """One event per chunk, each flushed (as an agent that writes each event as it comes);
        with ``--hold``, the first one alone until the streams are together."""
        streams = self.streams
        streams.opened()
        try:
            writer.write(_SSE_HEAD)
            for i, template in enumerate(templates):
                data = template + req_id + c.SSE_TAIL
                writer.write(b"%x\r\n%s\r\n" % (len(data), data))
                await writer.drain()
                if i == 0:
                    await streams.held()
            writer.write(b"0\r\n\r\n")
            streams.served += 1
        finally:
            streams.open -= 1


def _stdin_closed() -> asyncio.Future[None]:
    """Done when stdin reaches end of file (the bench closes the pipe to stop the server).

    A stdin that cannot be watched (a regular file, ``/dev/null``) leaves the lifetime alone
    to end the server.
    """
    loop = asyncio.get_running_loop()
    done: asyncio.Future[None] = loop.create_future()
    fd = sys.stdin.fileno()

    def readable() -> None:
        if not os.read(fd, 4096):
            loop.remove_reader(fd)
            if not done.done():
                done.set_result(None)

    try:
        loop.add_reader(fd, readable)
    except (OSError, ValueError):
        print("stdin cannot be watched: stopping after --lifetime", file=sys.stderr)
    return done


def raise_open_files() -> int:
    """The soft limit of open files raised to the hard one; the new limit."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


async def main(events: int, lifetime: float, hold: int, hold_timeout: float) -> None:
    raise_open_files()
    server = Server(events, hold, hold_timeout)
    srv = await asyncio.start_server(
        server.handle, "127.0.0.1", 0, backlog=BACKLOG, limit=MAX_HEADER_BYTES
    )
    port = srv.sockets[0].getsockname()[1]
    server.card = card(port)
    print(port, flush=True)
    async with srv:
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(_stdin_closed(), lifetime)


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--events", type=int, default=2000, help="events per stream")
    p.add_argument("--lifetime", type=float, default=900.0, help="seconds, at most")
    p.add_argument("--hold", type=int, default=0, help="hold streams until this many are open")
    p.add_argument("--hold-timeout", type=float, default=60.0, help="seconds, at most")
    a = p.parse_args()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(a.events, a.lifetime, a.hold, a.hold_timeout))
