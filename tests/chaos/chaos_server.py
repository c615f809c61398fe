"""A chaos A2A v1.0 server: well-behaved or broken in one chosen way, for fault tests.

Run it as::

    python tests/chaos/chaos_server.py [--port 0]

It binds ``127.0.0.1`` only (port 0 lets the OS pick a free port), prints exactly one line
``READY http://127.0.0.1:<port>`` on stdout once it accepts connections, and exits 0 on
SIGTERM or SIGINT. Plain Starlette on uvicorn (h11); no a2a-sdk.

Every fault lives under its own path prefix ``/{fault}``:

* ``GET  /{fault}/.well-known/agent-card.json``: a v1.0 card (always well-behaved) whose only
  interface is JSONRPC 1.0 at ``/{fault}/rpc``.
* ``POST /{fault}/rpc``: JSON-RPC (``SendMessage``, ``SendStreamingMessage``, ``GetTask``,
  ``SubscribeToTask``; v1.0 ProtoJSON shapes; a request without ``A2A-Version: 1.0`` gets
  -32009).
* ``GET  /_connections``: ``{"open": N}``, the TCP connections the server holds open, the
  asking one excluded.
* ``POST /_reset``: forget every task and every per-client fault counter.

Unary faults break every RPC of their prefix; stream faults break ``SendStreamingMessage`` only
(``SendMessage``, ``GetTask`` and ``SubscribeToTask`` then behave as under ``ok``):

* ``ok``: send answers a completed task with artifact ``result`` (text ``Hello, world!``);
  the stream is task snapshot (submitted), working, two chunks of ``result`` (``Hello, `` then
  ``world!`` appended, last chunk), completed; GetTask returns the stored task.
* ``reset``: the TCP connection is reset (SO_LINGER 0 + abort: RST) with no response at all.
* ``close``: the TCP connection is closed cleanly (FIN) with no response at all.
* ``cut-stream``: snapshot and working, then the connection is closed (FIN) in the middle of
  the chunked body, without its final chunk. The task completes server-side 300 ms later.
* ``cut-stream-rst``: the same, but the connection is reset (RST) instead.
* ``eof-working``: snapshot and working, then the body ends cleanly while the task still works;
  it completes server-side 300 ms later.
* ``drip``: one event (the snapshot), then nothing for 30 s.
* ``keepalive``: ``: ping`` comments every 100 ms for 1 s, then the ``ok`` events.
* ``crlf-multiline``: the ``ok`` events, each pretty-printed over several ``data:`` lines,
  CRLF line endings, sent in small chunks whose boundaries fall anywhere (also between ``\\r``
  and ``\\n``).
* ``truncated-json``: a 200 ``application/json`` body cut in the middle of the JSON.
* ``wrong-id``: a JSON-RPC response whose id is not the request's.
* ``html-200``: a 200 ``text/html`` page. ``html-502``: a 502 HTML page like a proxy's.
* ``rate-limit``: 429 with ``Retry-After: 1`` for the first two calls of each client, then
  success. ``unavailable-once``: 503 for the first call of each client, then success. A client
  is told apart by its ``X-Chaos-Client`` header (no header: one shared client).
* ``slow-drip``: a 200 ``application/json`` answer that never ends: one byte every 100 ms for
  30 s. Every read succeeds at once, so only a deadline on the whole call ends it.
* ``huge``: a 50 MiB JSON-RPC response body, sent in 64 KiB chunks with a Content-Length;
  ``huge-chunked``: the same body with chunked transfer encoding.
* ``stream-error``: snapshot and working, then an ``event: error`` whose data is a JSON-RPC
  error (-32603), then the end of the body.

SubscribeToTask of a task that still works sends its snapshot, then (when it completes, at
most 300 ms later) the artifact and the completed status; of a terminal task it answers -32004
as a plain JSON-RPC error (like the a2a-sdk); of an unknown task -32001.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import enum
import json
import logging
import random
import signal
import socket
import struct
import sys
import time
import uuid
from collections.abc import AsyncGenerator, Callable
from dataclasses import dataclass
from typing import Any

import anyio
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

HOST = "127.0.0.1"
COMPLETE_AFTER_S = 0.3
EVENT_GAP_S = 0.01
CUT_AFTER_S = 0.1
DRIP_SILENCE_S = 30.0
PING_EVERY_S = 0.1
PING_COUNT = 10
HUGE_CHUNK = 64 * 1024
HUGE_CHUNKS = 800  # 50 MiB of payload
DISCONNECT_WAIT_S = 2.0
ARTIFACT_TEXT = ("Hello, ", "world!")

UNARY_FAULTS = frozenset(
    {
        "reset",
        "close",
        "truncated-json",
        "wrong-id",
        "html-200",
        "html-502",
        "rate-limit",
        "unavailable-once",
        "huge",
        "huge-chunked",
        "slow-drip",
    }
)
STREAM_FAULTS = frozenset(
    {
        "cut-stream",
        "cut-stream-rst",
        "eof-working",
        "drip",
        "keepalive",
        "crlf-multiline",
        "stream-error",
    }
)
FAULTS = frozenset({"ok"}) | UNARY_FAULTS | STREAM_FAULTS
#: How many calls of one client fail before the fault lets them through.
FAILING_CALLS = {"rate-limit": 2, "unavailable-once": 1}

HTML_502 = (
    b"<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
    b"<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx</center>\r\n"
    b"</body>\r\n</html>\r\n"
)
HTML_200 = (
    b"<!DOCTYPE html><html><head><title>Welcome</title></head>"
    b"<body><h1>It works!</h1><p>This is not an A2A agent.</p></body></html>"
)


class Cut(enum.Enum):
    """How a script ends the connection: FIN (clean close) or RST (reset)."""

    FIN = "fin"
    RST = "rst"


Step = bytes | Cut
Script = AsyncGenerator[Step, None]


# --------------------------------------------------------------------------------------------
# Tasks
# --------------------------------------------------------------------------------------------


@dataclass
class ChaosTask:
    """A task of the store; it is completed once ``time.monotonic()`` passes ``completes_at``."""

    id: str
    context_id: str
    completes_at: float | None  # None: never

    @property
    def completed(self) -> bool:
        return self.completes_at is not None and time.monotonic() >= self.completes_at

    def snapshot(self, state: str | None = None) -> dict[str, Any]:
        state = state or ("TASK_STATE_COMPLETED" if self.completed else "TASK_STATE_WORKING")
        task: dict[str, Any] = {
            "id": self.id,
            "contextId": self.context_id,
            "status": {"state": state},
        }
        if state == "TASK_STATE_COMPLETED":
            task["artifacts"] = [artifact("".join(ARTIFACT_TEXT))]
        return task


def artifact(text: str) -> dict[str, Any]:
    return {"artifactId": "result", "name": "result", "parts": [{"text": text}]}


class Store:
    """Tasks by id, and per-(fault, client) call counters; all forgotten by ``reset``."""

    def __init__(self) -> None:
        self.tasks: dict[str, ChaosTask] = {}
        self.calls: dict[tuple[str, str], int] = {}

    def new_task(self, completes_in: float | None) -> ChaosTask:
        at = None if completes_in is None else time.monotonic() + completes_in
        task = ChaosTask(str(uuid.uuid4()), str(uuid.uuid4()), at)
        self.tasks[task.id] = task
        return task

    def count_call(self, fault: str, client: str) -> int:
        """The number of this call of ``client`` on ``fault``, from 1."""
        key = (fault, client)
        self.calls[key] = self.calls.get(key, 0) + 1
        return self.calls[key]

    def reset(self) -> None:
        self.tasks.clear()
        self.calls.clear()


# --------------------------------------------------------------------------------------------
# Wire helpers
# --------------------------------------------------------------------------------------------


def rpc_result(req_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "result": result}


def rpc_error(req_id: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "error": {"code": code, "message": message}}


def sse(payload: Any, *, event: str | None = None) -> bytes:
    head = f"event: {event}\n" if event else ""
    return f"{head}data: {json.dumps(payload)}\n\n".encode()


def status_update(task: ChaosTask, state: str) -> dict[str, Any]:
    return {
        "statusUpdate": {
            "taskId": task.id,
            "contextId": task.context_id,
            "status": {"state": state},
        }
    }


def artifact_update(
    task: ChaosTask, text: str, *, append: bool = False, last: bool = False
) -> dict[str, Any]:
    update: dict[str, Any] = {
        "taskId": task.id,
        "contextId": task.context_id,
        "artifact": artifact(text),
    }
    if append:
        update["append"] = True
    if last:
        update["lastChunk"] = True
    return {"artifactUpdate": update}


def ok_results(task: ChaosTask) -> list[dict[str, Any]]:
    """The results of a well-behaved stream: snapshot, working, two chunks, completed."""
    first, second = ARTIFACT_TEXT
    return [
        {"task": task.snapshot("TASK_STATE_SUBMITTED")},
        status_update(task, "TASK_STATE_WORKING"),
        artifact_update(task, first),
        artifact_update(task, second, append=True, last=True),
        status_update(task, "TASK_STATE_COMPLETED"),
    ]


def crlf_multiline(payloads: list[Any]) -> bytes:
    """Events pretty-printed over several ``data:`` lines, with CRLF line endings."""
    out = []
    for payload in payloads:
        lines = json.dumps(payload, indent=2).split("\n")
        out.append("".join(f"data: {line}\r\n" for line in lines) + "\r\n")
    return "".join(out).encode()


def split_anywhere(body: bytes, seed: int = 7) -> list[bytes]:
    """``body`` in chunks of 1..40 bytes; every CRLF of the first events is split in two."""
    rng = random.Random(seed)
    cuts = {i + 1 for i in range(len(body) - 1) if body[i : i + 2] == b"\r\n" and i < 600}
    pos = 0
    while pos < len(body):
        pos += rng.randint(1, 40)
        cuts.add(pos)
    edges = sorted(c for c in cuts if 0 < c < len(body))
    return [body[a:b] for a, b in zip([0, *edges], [*edges, len(body)], strict=True)]


# --------------------------------------------------------------------------------------------
# Responses that misbehave at the socket level
# --------------------------------------------------------------------------------------------


def _cut(server: Any, scope: Scope, how: Cut) -> None:
    """Close (FIN) or reset (RST) the TCP connection that carries ``scope``'s request."""
    client = tuple(scope.get("client") or ())
    for proto in list(server.server_state.connections):
        if tuple(getattr(proto, "client", None) or ()) == client:
            transport = proto.transport
            if how is Cut.RST:
                sock = transport.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                transport.abort()
            else:
                transport.close()
            return
    raise RuntimeError(f"no connection for client {client}")


async def _wait_disconnect(receive: Receive, timeout: float | None = DISCONNECT_WAIT_S) -> None:
    """Until the client is gone, or ``timeout`` seconds have passed."""
    with anyio.move_on_after(timeout):
        for _ in range(1000):
            if (await receive())["type"] == "http.disconnect":
                return


class NoResponse(Response):
    """Read the request, then end the connection without a byte of response."""

    def __init__(self, server: Any, how: Cut) -> None:
        self.server = server
        self.how = how

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        _cut(self.server, scope, self.how)
        await _wait_disconnect(receive)


class Scripted(Response):
    """A response whose body is a script of byte chunks, possibly ending in a cut.

    The script stops as soon as the client disconnects, so no step outlives the connection.
    """

    def __init__(
        self,
        server: Any,
        script: Callable[[], Script],
        *,
        status_code: int = 200,
        media_type: str = "text/event-stream",
        headers: dict[str, str] | None = None,
    ) -> None:
        self.server = server
        self.script = script
        self.status_code = status_code
        self.media_type = media_type
        self.background = None
        self.init_headers({"cache-control": "no-store", **(headers or {})})

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await send(
            {"type": "http.response.start", "status": self.status_code, "headers": self.raw_headers}
        )
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                # The request body was read already: the next message is the disconnect.
                await _wait_disconnect(receive, None)
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            async with contextlib.aclosing(self.script()) as steps:
                async for step in steps:
                    if isinstance(step, Cut):
                        _cut(self.server, scope, step)
                        await anyio.sleep(DISCONNECT_WAIT_S)  # the watcher ends this
                        break
                    await send({"type": "http.response.body", "body": step, "more_body": True})
                else:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
            tg.cancel_scope.cancel()


# --------------------------------------------------------------------------------------------
# The app
# --------------------------------------------------------------------------------------------


async def _drip_json() -> Script:
    for _ in range(300):
        yield b" "  # JSON allows leading whitespace: the body is valid so far
        await anyio.sleep(0.1)


class ChaosApp:
    """The routes, the task store and the fault scripts."""

    def __init__(self) -> None:
        self.store = Store()
        self.server: Any = None  # the uvicorn.Server, set before serving

    def card(self, request: Request) -> Response:
        fault = request.path_params["fault"]
        if fault not in FAULTS:
            return Response("no such fault", status_code=404, media_type="text/plain")
        base = str(request.base_url).rstrip("/")
        return JSONResponse(
            {
                "name": f"Chaos Agent ({fault})",
                "description": f"an A2A agent with fault {fault!r}",
                "version": "1.0.0",
                "supportedInterfaces": [
                    {
                        "url": f"{base}/{fault}/rpc",
                        "protocolBinding": "JSONRPC",
                        "protocolVersion": "1.0",
                    }
                ],
                "capabilities": {"streaming": True, "pushNotifications": False},
                "defaultInputModes": ["text/plain"],
                "defaultOutputModes": ["text/plain"],
                "skills": [
                    {"id": "chaos", "name": "Chaos", "description": "misbehaves", "tags": []}
                ],
            },
            headers={"Cache-Control": "no-store"},
        )

    def connections(self, _request: Request) -> Response:
        open_now = len(self.server.server_state.connections) if self.server else 0
        return JSONResponse({"open": max(0, open_now - 1)})

    def reset(self, _request: Request) -> Response:
        self.store.reset()
        return JSONResponse({"reset": True})

    async def rpc(self, request: Request) -> Response:
        fault = request.path_params["fault"]
        if fault not in FAULTS:
            return Response("no such fault", status_code=404, media_type="text/plain")
        raw = await request.body()
        try:
            body = json.loads(raw)
        except ValueError:
            return JSONResponse(rpc_error(None, -32700, "Parse error"))
        if not isinstance(body, dict):
            return JSONResponse(rpc_error(None, -32600, "Invalid Request"))
        req_id, method = body.get("id"), body.get("method")
        raw_params = body.get("params")
        params: dict[str, Any] = raw_params if isinstance(raw_params, dict) else {}
        if fault in UNARY_FAULTS:
            client = request.headers.get("x-chaos-client", "")
            broken = self.unary_fault(fault, req_id, client)
            if broken is not None:
                return broken
        if request.headers.get("a2a-version") != "1.0":
            return JSONResponse(rpc_error(req_id, -32009, "A2A-Version 1.0 required"))
        if method == "SendMessage":
            task = self.store.new_task(0.0)
            return JSONResponse(rpc_result(req_id, {"task": task.snapshot()}))
        if method == "SendStreamingMessage":
            return self.stream(fault, req_id)
        if method in ("GetTask", "SubscribeToTask"):
            task_id = params.get("id")
            known = self.store.tasks.get(task_id) if isinstance(task_id, str) else None
            if known is None:
                return JSONResponse(rpc_error(req_id, -32001, f"Task not found: {task_id}"))
            if method == "GetTask":
                return JSONResponse(rpc_result(req_id, known.snapshot()))
            return self.subscribe(known, req_id)
        return JSONResponse(rpc_error(req_id, -32601, f"Method not found: {method}"))

    def unary_fault(self, fault: str, req_id: Any, client: str) -> Response | None:
        """The broken answer of a unary fault, or None when this call goes through."""
        if fault in ("reset", "close"):
            return NoResponse(self.server, Cut.RST if fault == "reset" else Cut.FIN)
        if fault == "truncated-json":
            whole = json.dumps(rpc_result(req_id, {"task": self.store.new_task(0).snapshot()}))
            return Response(whole[: len(whole) // 2], media_type="application/json")
        if fault == "wrong-id":
            result = {"task": self.store.new_task(0).snapshot()}
            return JSONResponse(rpc_result(f"not-{req_id}", result))
        if fault == "html-200":
            return Response(HTML_200, media_type="text/html")
        if fault == "html-502":
            return Response(HTML_502, status_code=502, media_type="text/html")
        if fault in FAILING_CALLS:
            if self.store.count_call(fault, client) > FAILING_CALLS[fault]:
                return None
            if fault == "rate-limit":
                return JSONResponse(
                    {"error": "rate limited"}, status_code=429, headers={"Retry-After": "1"}
                )
            return Response(
                b"<html><body><h1>503 Service Unavailable</h1></body></html>",
                status_code=503,
                media_type="text/html",
            )
        if fault in ("huge", "huge-chunked"):
            return self.huge(req_id, chunked=fault == "huge-chunked")
        if fault == "slow-drip":
            return Scripted(self.server, _drip_json, media_type="application/json")
        return None

    def huge(self, req_id: Any, *, chunked: bool) -> Response:
        head = json.dumps(
            {
                "jsonrpc": "2.0",
                "id": req_id,
                "result": {
                    "task": {
                        "id": "huge",
                        "contextId": "c",
                        "status": {"state": "TASK_STATE_COMPLETED"},
                    }
                },
            }
        )
        # ...,"status":{...}}}}  ->  ...,"status":{...},"metadata":{"blob":"xxx..."}}}}
        prefix = (head[: -len("}}}")] + ', "metadata": {"blob": "').encode()
        suffix = b'"}}}}'
        block = b"x" * HUGE_CHUNK
        size = len(prefix) + HUGE_CHUNK * HUGE_CHUNKS + len(suffix)

        async def script() -> Script:
            yield prefix
            for _ in range(HUGE_CHUNKS):
                yield block
            yield suffix

        headers = {} if chunked else {"content-length": str(size)}
        return Scripted(self.server, script, media_type="application/json", headers=headers)

    def stream(self, fault: str, req_id: Any) -> Response:
        def ev(result: Any) -> bytes:
            return sse(rpc_result(req_id, result))

        later = COMPLETE_AFTER_S
        task = self.store.new_task(later if fault in ("cut-stream", "cut-stream-rst") else None)

        async def ok() -> Script:
            for result in ok_results(task):
                await anyio.sleep(EVENT_GAP_S)
                yield ev(result)
            task.completes_at = time.monotonic()

        async def cut() -> Script:
            yield ev({"task": task.snapshot("TASK_STATE_SUBMITTED")})
            yield ev(status_update(task, "TASK_STATE_WORKING"))
            await anyio.sleep(CUT_AFTER_S)  # let the client read both before the cut
            task.completes_at = time.monotonic() + later
            yield Cut.RST if fault == "cut-stream-rst" else Cut.FIN

        async def eof_working() -> Script:
            yield ev({"task": task.snapshot("TASK_STATE_SUBMITTED")})
            yield ev(status_update(task, "TASK_STATE_WORKING"))
            task.completes_at = time.monotonic() + later

        async def drip() -> Script:
            yield ev({"task": task.snapshot("TASK_STATE_SUBMITTED")})
            await anyio.sleep(DRIP_SILENCE_S)

        async def keepalive() -> Script:
            for _ in range(PING_COUNT):
                yield b": ping\n\n"
                await anyio.sleep(PING_EVERY_S)
            async for step in ok():
                yield step

        async def crlf() -> Script:
            body = crlf_multiline([rpc_result(req_id, r) for r in ok_results(task)])
            for chunk in split_anywhere(body):
                yield chunk
                await anyio.sleep(0.002)  # so that the chunks travel apart
            task.completes_at = time.monotonic()

        async def stream_error() -> Script:
            yield ev({"task": task.snapshot("TASK_STATE_SUBMITTED")})
            yield ev(status_update(task, "TASK_STATE_WORKING"))
            yield sse(rpc_error(req_id, -32603, "the agent crashed"), event="error")

        scripts: dict[str, Callable[[], Script]] = {
            "cut-stream": cut,
            "cut-stream-rst": cut,
            "eof-working": eof_working,
            "drip": drip,
            "keepalive": keepalive,
            "crlf-multiline": crlf,
            "stream-error": stream_error,
        }
        return Scripted(self.server, scripts.get(fault, ok))

    def subscribe(self, task: ChaosTask, req_id: Any) -> Response:
        if task.completed:
            return JSONResponse(rpc_error(req_id, -32004, "Task is in a terminal state"))

        async def script() -> Script:
            yield sse(rpc_result(req_id, {"task": task.snapshot("TASK_STATE_WORKING")}))
            if task.completes_at is None:
                await anyio.sleep(DRIP_SILENCE_S)
                return
            await anyio.sleep(max(0.0, task.completes_at - time.monotonic()))
            yield sse(rpc_result(req_id, artifact_update(task, "".join(ARTIFACT_TEXT))))
            yield sse(rpc_result(req_id, status_update(task, "TASK_STATE_COMPLETED")))

        return Scripted(self.server, script)

    def starlette(self) -> Starlette:
        return Starlette(
            routes=[
                Route("/_connections", self.connections, methods=["GET"]),
                Route("/_reset", self.reset, methods=["POST"]),
                Route("/{fault}/.well-known/agent-card.json", self.card, methods=["GET"]),
                Route("/{fault}/rpc", self.rpc, methods=["POST"]),
            ]
        )


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    return sock


async def _serve(sock: socket.socket) -> int:
    port = sock.getsockname()[1]
    chaos = ChaosApp()
    config = uvicorn.Config(
        chaos.starlette(),
        http="h11",
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    chaos.server = server
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    for _ in range(3000):  # 30 s at most
        if server.started:
            break
        if serving.done():
            await serving
            return 1
        await asyncio.sleep(0.01)
    else:
        server.should_exit = True
        await serving
        return 1
    sys.stdout.write(f"READY http://{HOST}:{port}\n")
    sys.stdout.flush()
    await serving
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=0, help="0 = a free port chosen by the OS")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    # uvicorn installs its own SIGINT/SIGTERM handlers while serving and re-raises the signal
    # once it is done; these no-op handlers are what it restores, so the process exits 0.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _signum, _frame: None)
    sock = _bind(args.port)
    try:
        return asyncio.run(_serve(sock))
    finally:
        sock.close()


if __name__ == "__main__":
    sys.exit(main())
