"""Many A2A agents in one process, for the scale benchmarks (``scale.py``).

    python bench/agents_server.py --agents 100 --first 0 --slow-every 3
    python bench/agents_server.py --agents 100 --first 0 --per-origin 100 --slow-every 3
    python bench/agents_server.py --agents 1 --events 20 --event-bytes 500

Plain asyncio streams, HTTP/1.1 with keep-alive, no framework, every answer prepared at
start-up. By default each agent listens on a port of its own on 127.0.0.1 (agents are
distinct origins); with ``--per-origin N``, N agents share a port, each under a path of its
own, ``/a<n>`` (as framework servers host many agents behind one origin). The process prints
its agents' base URLs on one line, space-separated, then serves until its stdin closes or
``--lifetime`` seconds pass. Its open-files limit is raised to the hard limit.

Agent number ``first + k`` (the k-th URL) serves, under its base URL, the request's JSON-RPC
``id`` echoed:

- ``GET /.well-known/agent-card.json``: the recorded v1.0 card naming a JSON-RPC 1.0
  interface at ``/a2a/jsonrpc`` under its base URL;
- ``SendMessage``: the recorded completed Task at once, unless the agent is slow (every
  ``--slow-every``-th agent: numbers ``n`` with ``n % slow_every == slow_every - 1``), which
  never answers: it holds the request until the client closes the connection; with
  ``--slow-requests``, every ``--slow-every``-th request an agent is sent is held instead
  (one agent then has fast and slow calls alike);
- ``SendStreamingMessage``, with ``--answer-streams`` (a fan-out's agents): answered as
  ``SendMessage`` is, the completed Task its one event, then the stream ends; a slow agent
  (or held request) sends a WORKING Task of its own (``held-<n>``) and holds the stream,
  never finishing it; without it: ``--events`` events of about ``--event-bytes`` bytes of SSE data
  each, each flushed, then nothing: the stream stays open, idle, until the client closes it.
  A Task snapshot, then (``--shape status``) WORKING status updates, each with a progress
  message of its own, or (``--shape chunks``) a status update and chunks appended to one
  artifact.
- ``CancelTask``: the recorded Task, CANCELED, at once, counted; ``GET /_cancels`` (any port of the
  process) answers the number of ``CancelTask`` requests the process received.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import copy
import json
import socket
import sys
from typing import Any

import _common as c
from loopback_server import (
    MAX_HEADER_BYTES,
    _stdin_closed,
    card,
    raise_open_files,
    unary_v10,
)

BACKLOG = 4096
_SSE_HEAD = (
    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-store\r\n"
    b"transfer-encoding: chunked\r\n\r\n"
)


def _response(ctype: bytes, body: bytes) -> bytes:
    return (
        b"HTTP/1.1 200 OK\r\ncontent-type: " + ctype
        + b"\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n" + body
    )  # fmt: skip


def _padded(event: dict[str, Any], text: dict[str, Any], event_bytes: int, label: str) -> None:
    """Set ``text["text"]`` so that ``event``'s SSE data is about ``event_bytes`` long."""
    text["text"] = ""
    size = len(b'data: {"jsonrpc":"2.0","result":' + c.compact(event) + b',"id":1}')
    text["text"] = label.ljust(max(0, event_bytes - size))


def stream_results(events: int, event_bytes: int, shape: str) -> list[dict[str, Any]]:
    """A Task snapshot, then ``events - 1`` events, each's SSE data about ``event_bytes``
    long: ``status``, WORKING status updates, each with a message of its own (what the task
    keeps is the latest); ``chunks``, a WORKING status update, then chunks of one artifact
    (``append``: the task keeps them all)."""
    snapshot, working, first_chunk, *_ = c.stream_results(4)
    out = [snapshot]
    for i in range(1, events):
        if shape == "status" or i == 1:
            event = copy.deepcopy(working)
            message = event["statusUpdate"]["status"]["message"]
            message["messageId"] = f"{message['messageId'][:-4]}{i:04d}"
            _padded(event, message["parts"][0], event_bytes, f"step {i} ")
        else:
            event = copy.deepcopy(first_chunk)
            update = event["artifactUpdate"]
            update["append"] = i > 2
            update["artifact"]["parts"] = [{"text": ""}]
            _padded(event, update["artifact"]["parts"][0], event_bytes, f"chunk {i} ")
        out.append(event)
    return out


async def _until_closed(reader: asyncio.StreamReader) -> None:
    """Wait until the client closes the connection (what it sends meanwhile is dropped)."""
    while await reader.read(65536):
        pass


class _Agent:
    """One agent's answers: its card, whether it is slow, the requests it was sent."""

    __slots__ = ("card", "requests", "slow")

    def __init__(self, card_body: bytes, slow: bool) -> None:
        self.card = card_body
        self.slow = slow
        self.requests = 0


class Agents:
    def __init__(
        self,
        first: int,
        slow_every: int,
        events: int,
        event_bytes: int,
        shape: str,
        answer_streams: bool = False,
        slow_requests: bool = False,
    ) -> None:
        self.first = first
        self.slow_every = slow_every
        self.answer_streams = answer_streams
        self.slow_requests = slow_requests
        self.unary_head = b'{"jsonrpc":"2.0","id":'
        self.unary_tail = b',"result":' + c.compact(unary_v10()) + b"}"
        canceled = copy.deepcopy(unary_v10()["task"])
        canceled["status"] = {"state": "TASK_STATE_CANCELED"}
        self.cancel_tail = b',"result":' + c.compact(canceled) + b"}"
        self.cancels = 0
        self.held_streams = 0
        self.events = c.sse_templates(stream_results(events, event_bytes, shape))

    def slow(self, number: int) -> bool:
        return self.slow_every > 0 and number % self.slow_every == self.slow_every - 1

    def agent(self, number: int, port: int, prefix: str) -> _Agent:
        value = json.loads(card(port))
        for interface in value["supportedInterfaces"]:
            base, _, path = interface["url"].rpartition(f":{port}")
            interface["url"] = f"{base}:{port}{prefix}{path}"
        body = _response(b"application/json", c.compact(value))
        return _Agent(body, not self.slow_requests and self.slow(number))

    def held(self, agent: _Agent) -> bool:
        """True if this request to ``agent`` is never answered."""
        if not self.slow_requests:
            return agent.slow
        agent.requests += 1
        return self.slow(agent.requests - 1)

    def handler(self, by_prefix: dict[bytes, _Agent]) -> Any:
        only = next(iter(by_prefix.values())) if len(by_prefix) == 1 else None

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                while True:
                    head = await reader.readuntil(b"\r\n\r\n")
                    line, _, rest = head.partition(b"\r\n")
                    method, path, _ = line.split(b" ", 2)
                    if path == b"/_cancels":
                        writer.write(_response(b"application/json", b"%d" % self.cancels))
                        await writer.drain()
                        continue
                    agent = only or by_prefix[path.split(b"/", 2)[1]]
                    length = 0
                    for h in rest.split(b"\r\n"):
                        name, _, value = h.partition(b":")
                        if name.strip().lower() == b"content-length":
                            length = int(value)
                    body = await reader.readexactly(length) if length else b""
                    if method == b"GET":
                        writer.write(agent.card)
                    elif b"SendStreamingMessage" in body and not self.answer_streams:
                        await self.stream(reader, writer, c.request_id(body))
                        return
                    elif b"CancelTask" in body:
                        self.cancels += 1
                        content = self.unary_head + c.request_id(body) + self.cancel_tail
                        writer.write(_response(b"application/json", content))
                    elif self.held(agent):
                        if b"SendStreamingMessage" in body:  # a task of its own, never done
                            writer.write(_SSE_HEAD + self.held_task(c.request_id(body)))
                            await writer.drain()
                        await _until_closed(reader)
                        return
                    elif b"SendStreamingMessage" in body:
                        data = b"data: " + self.unary_head + c.request_id(body) + self.unary_tail
                        data += b"\n\n"
                        writer.write(_SSE_HEAD + b"%x\r\n%s\r\n0\r\n\r\n" % (len(data), data))
                    else:
                        content = self.unary_head + c.request_id(body) + self.unary_tail
                        writer.write(_response(b"application/json", content))
                    await writer.drain()
            except (asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
                pass
            except (ValueError, KeyError, IndexError):  # a malformed request, an unknown path
                pass
            except asyncio.CancelledError:  # shutting down with connections still open
                pass
            finally:
                writer.close()

        return handle

    def held_task(self, req_id: bytes) -> bytes:
        """The one event of a held stream, a chunk: a WORKING task of its own."""
        self.held_streams += 1
        task = {
            "id": f"held-{self.held_streams}",
            "contextId": "held",
            "status": {"state": "TASK_STATE_WORKING"},
        }
        data = b'data: {"jsonrpc":"2.0","id":%s,"result":{"task":%s}}\n\n' % (
            req_id,
            c.compact(task),
        )
        return b"%x\r\n%s\r\n" % (len(data), data)

    async def stream(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, req_id: bytes
    ) -> None:
        writer.write(_SSE_HEAD)
        for template in self.events:
            data = template + req_id + c.SSE_TAIL
            writer.write(b"%x\r\n%s\r\n" % (len(data), data))
            await writer.drain()
        await _until_closed(reader)


async def main(a: argparse.Namespace) -> None:
    raise_open_files()
    agents = Agents(
        a.first, a.slow_every, a.events, a.event_bytes, a.shape, a.answer_streams,
        a.slow_requests,
    )  # fmt: skip
    servers = []
    urls = []
    for start in range(0, a.agents, a.per_origin):
        sock = socket.socket()
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        by_prefix: dict[bytes, _Agent] = {}
        for k in range(start, min(start + a.per_origin, a.agents)):
            number = a.first + k
            prefix = f"/a{number}" if a.per_origin > 1 else ""
            by_prefix[prefix[1:].encode()] = agents.agent(number, port, prefix)
            urls.append(f"http://127.0.0.1:{port}{prefix}")
        srv = await asyncio.start_server(
            agents.handler(by_prefix), sock=sock, backlog=BACKLOG, limit=MAX_HEADER_BYTES
        )
        servers.append(srv)
    print(" ".join(urls), flush=True)
    with contextlib.suppress(asyncio.TimeoutError):
        await asyncio.wait_for(_stdin_closed(), a.lifetime)
    for srv in servers:
        srv.close()


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--agents", type=int, default=1, help="agents in this process")
    p.add_argument("--per-origin", type=int, default=1, help="agents per port, under /a<n>")
    p.add_argument(
        "--slow-requests", action="store_true", help="every n-th request is held, not agent"
    )
    p.add_argument("--first", type=int, default=0, help="the number of the first agent")
    p.add_argument("--slow-every", type=int, default=0, help="every n-th agent never answers")
    p.add_argument("--events", type=int, default=20, help="events of a stream, then idle")
    p.add_argument("--event-bytes", type=int, default=500, help="SSE data bytes of an event")
    p.add_argument("--shape", choices=("status", "chunks"), default="status", help="the events")
    p.add_argument(
        "--answer-streams", action="store_true", help="a stream answered as a send is, then ended"
    )
    p.add_argument("--lifetime", type=float, default=1800.0, help="seconds, at most")
    args = p.parse_args()
    if args.events < 3:
        sys.exit("--events must be at least 3")
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(main(args))
