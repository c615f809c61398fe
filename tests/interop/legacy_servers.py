"""Small A2A servers of our own that speak the dialects no maintained SDK serves any more.

Run one as::

    python tests/interop/legacy_servers.py --dialect legacy|legacy-cookie|v02 [--port 0]

It binds ``127.0.0.1`` (port 0 lets the OS pick a free port), prints exactly one line
``READY http://127.0.0.1:<port>`` on stdout once it accepts connections, and exits 0 on
SIGTERM or SIGINT. Starlette + uvicorn, everything in memory.

Dialects (see ``a2a-protocol.md``, dialect L and v0.2):

``legacy``
    The launch-era ``tasks/send`` agent. Card at ``/.well-known/agent.json`` only (no
    ``agent-card.json``), with ``url`` = ``{base}/a2a``, an ``authentication`` object and no
    ``protocolVersion``. JSON-RPC at ``POST /a2a``: ``tasks/send``, ``tasks/sendSubscribe``,
    ``tasks/get``, ``tasks/cancel``, ``tasks/resubscribe``, ``tasks/pushNotification/set`` and
    ``/get``. Parts carry ``type``; the client chooses the task id (``params.id``) and reuses it
    to continue a task; ``sessionId`` groups tasks; stream events are ``{id, status, final}``
    and ``{id, artifact}`` (artifact chunking fields inside the artifact, no initial Task).
    There are no Message replies: ``message...`` completes a task whose status message is the
    reply. ``tasks/send`` answers once the task is terminal or input-required, except that the
    long-running ``slow...`` task is answered as soon as it is working (as early agents did).

``legacy-cookie``
    The same agent behind a login: every request (card included) needs a ``user=<name>``
    cookie, else HTTP 401. The name is copied into each task's ``metadata.user``.

``v02``
    A v0.2.5 agent. Card at ``/.well-known/agent.json`` only, ``protocolVersion`` "0.2.5",
    ``url`` = ``{base}/a2a``, ``preferredTransport`` JSONRPC, ``securitySchemes``/``security``,
    ``supportsAuthenticatedExtendedCard``. JSON-RPC at ``POST /a2a``: ``message/send`` (Task or
    Message, ``configuration.blocking``), ``message/stream``, ``tasks/get``, ``tasks/cancel``,
    ``tasks/resubscribe``, ``tasks/pushNotificationConfig/{set,get,list,delete}``; ``kind``
    discriminators everywhere and ``final`` on status events. The extended card is the 0.2
    plain ``GET /agent/authenticatedExtendedCard`` (there is no JSON-RPC method for it).

Both speak only their own method names: anything else (``SendMessage``, ``message/send`` to
the legacy agent, ``tasks/send`` to the v0.2 one) is JSON-RPC -32601, and a part without the
dialect's discriminator is -32602, so a client in the wrong dialect fails loudly.

The scripted agent is the one of ``sdk_server.py``, chosen by the first text part:
``message...`` reply ``pong: <text>``; ``stream...`` working ("working") -> three chunks of
artifact ``report`` -> completed; ``slow...`` working, up to 30 s, cancellable; ``input...``
input-required ("need more input"), a follow-up on the same task completes it with ``echo``;
``fail...`` failed ("it failed"); otherwise artifact ``echo`` (``echo: <text>``) [+ ``data``,
the first data part] -> completed.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import signal
import socket
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Receive, Scope, Send

HOST = "127.0.0.1"
RPC_PATH = "/a2a"
EXTENDED_CARD_PATH = "/agent/authenticatedExtendedCard"
DIALECTS = ("legacy", "legacy-cookie", "v02")

SLOW_TIMEOUT_S = 30.0
STREAM_DELAY_S = 0.05
SEND_WAIT_S = 35.0  # longest a blocking send waits (the slow task ends after 30 s)
STREAM_IDLE_S = 40.0  # a stream with no event for this long ends

TERMINAL = frozenset({"completed", "canceled", "failed", "rejected"})
SETTLED = TERMINAL | {"input-required"}

JSONDict = dict[str, Any]

logger = logging.getLogger("legacy_servers")


def now() -> str:
    return datetime.now(timezone.utc).isoformat()


class RPCError(Exception):
    """A JSON-RPC error answer."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def task_not_found(task_id: object) -> RPCError:
    return RPCError(-32001, f"Task not found: {task_id}")


def invalid_params(message: str) -> RPCError:
    return RPCError(-32602, f"Invalid params: {message}")


# --------------------------------------------------------------------------------------------
# The scripted agent, dialect-neutral
# --------------------------------------------------------------------------------------------
#
# Neutral shapes: a part is {"text": str} | {"data": dict} | {"file": dict}; a message is
# {"role", "parts", "message_id"}; an event is {"event": "status", "final": bool, ...} or
# {"event": "artifact", "artifact": {...}, "append": bool, "last_chunk": bool}.


@dataclass
class Record:
    """One task and everything the agent keeps about it."""

    id: str
    context_id: str
    metadata: JSONDict
    history: list[JSONDict] = field(default_factory=list)
    state: str = "submitted"
    status_text: str | None = None
    status_message_id: str = ""
    timestamp: str = field(default_factory=now)
    artifacts: list[JSONDict] = field(default_factory=list)
    listeners: list[asyncio.Queue[JSONDict]] = field(default_factory=list)
    # set when the task is terminal or input-required
    done: asyncio.Event = field(default_factory=asyncio.Event)
    # set when `done`, or when the agent went on working in the background (slow...)
    settled: asyncio.Event = field(default_factory=asyncio.Event)
    cancel_requested: asyncio.Event = field(default_factory=asyncio.Event)
    push: dict[str, JSONDict] = field(default_factory=dict)
    runner: asyncio.Task[None] | None = None

    def status_event(self) -> JSONDict:
        return {
            "event": "status",
            "state": self.state,
            "text": self.status_text,
            "message_id": self.status_message_id,
            "timestamp": self.timestamp,
            "final": self.state in SETTLED,
        }


class Agent:
    """Runs the scripted behaviours and fans each event out to the task's listeners."""

    def __init__(self) -> None:
        self.tasks: dict[str, Record] = {}

    def get(self, task_id: object) -> Record:
        if not isinstance(task_id, str) or task_id not in self.tasks:
            raise task_not_found(task_id)
        return self.tasks[task_id]

    def create(self, task_id: str, context_id: str, metadata: JSONDict) -> Record:
        rec = Record(id=task_id, context_id=context_id, metadata=metadata)
        self.tasks[task_id] = rec
        return rec

    @staticmethod
    def _emit(rec: Record, event: JSONDict) -> None:
        for queue in list(rec.listeners):
            queue.put_nowait(event)

    def set_state(self, rec: Record, state: str, text: str | None = None) -> None:
        if rec.state in TERMINAL:
            return  # canceled while working: nothing changes a terminal task
        rec.state = state
        rec.status_text = text
        rec.status_message_id = str(uuid.uuid4())
        rec.timestamp = now()
        self._emit(rec, rec.status_event())
        if state in SETTLED:
            rec.done.set()
            rec.settled.set()

    def add_artifact(
        self,
        rec: Record,
        name: str,
        parts: list[JSONDict],
        *,
        artifact_id: str | None = None,
        append: bool = False,
        last_chunk: bool = False,
    ) -> None:
        if rec.state in TERMINAL:
            return
        existing = next((a for a in rec.artifacts if a["artifact_id"] == artifact_id), None)
        if append and existing is not None:
            existing["parts"].extend(parts)
            index = existing["index"]
        else:
            index = len(rec.artifacts)
            rec.artifacts.append(
                {
                    "artifact_id": artifact_id or str(uuid.uuid4()),
                    "name": name,
                    "index": index,
                    "parts": list(parts),
                }
            )
        chunk = {
            "artifact_id": artifact_id or rec.artifacts[index]["artifact_id"],
            "name": name,
            "index": index,
            "parts": list(parts),
        }
        self._emit(
            rec,
            {"event": "artifact", "artifact": chunk, "append": append, "last_chunk": last_chunk},
        )

    def start(self, rec: Record, message: JSONDict, *, continuing: bool) -> None:
        rec.history.append(message)
        rec.done.clear()
        rec.settled.clear()
        rec.runner = asyncio.create_task(self._run(rec, message, continuing))

    async def _run(self, rec: Record, message: JSONDict, continuing: bool) -> None:
        try:
            await self._behave(rec, message, continuing)
        except Exception:
            logger.exception("agent failed on task %s", rec.id)
            self.set_state(rec, "failed", "internal error")
        finally:
            rec.settled.set()

    async def _behave(self, rec: Record, message: JSONDict, continuing: bool) -> None:
        text = next((p["text"] for p in message["parts"] if "text" in p), "")
        if continuing:
            self.set_state(rec, "working")
            self.add_artifact(rec, "echo", [{"text": f"echo: {text}"}])
            self.set_state(rec, "completed")
        elif text.startswith("message"):
            # Only the legacy agent gets here (it has no Message replies).
            self.set_state(rec, "completed", f"pong: {text}")
        elif text.startswith("stream"):
            await asyncio.sleep(STREAM_DELAY_S)
            self.set_state(rec, "working", "working")
            for index, chunk in enumerate(("part 1", " part 2", " part 3")):
                await asyncio.sleep(STREAM_DELAY_S)
                self.add_artifact(
                    rec,
                    "report",
                    [{"text": chunk}],
                    artifact_id="report",
                    append=index > 0,
                    last_chunk=index == 2,
                )
            await asyncio.sleep(STREAM_DELAY_S)
            self.set_state(rec, "completed")
        elif text.startswith("slow"):
            self.set_state(rec, "working")
            rec.settled.set()  # works on in the background
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(rec.cancel_requested.wait(), SLOW_TIMEOUT_S)
            if not rec.cancel_requested.is_set():
                self.add_artifact(rec, "echo", [{"text": f"echo: {text}"}])
                self.set_state(rec, "completed")
        elif text.startswith("input"):
            self.set_state(rec, "input-required", "need more input")
        elif text.startswith("fail"):
            self.set_state(rec, "failed", "it failed")
        else:
            self.set_state(rec, "working")
            self.add_artifact(rec, "echo", [{"text": f"echo: {text}"}])
            data = next((p for p in message["parts"] if "data" in p), None)
            if data is not None:
                self.add_artifact(rec, "data", [dict(data)])
            self.set_state(rec, "completed")

    def cancel(self, rec: Record) -> None:
        if rec.state in TERMINAL:
            raise RPCError(-32002, f"Task cannot be canceled - current state: {rec.state}")
        self.set_state(rec, "canceled", "canceled")
        rec.cancel_requested.set()

    @contextlib.asynccontextmanager
    async def listen(self, rec: Record) -> AsyncIterator[asyncio.Queue[JSONDict]]:
        queue: asyncio.Queue[JSONDict] = asyncio.Queue()
        rec.listeners.append(queue)
        try:
            yield queue
        finally:
            rec.listeners.remove(queue)


# --------------------------------------------------------------------------------------------
# Dialects
# --------------------------------------------------------------------------------------------

Handler = Callable[[JSONDict, Any, Request], Awaitable[Any]]


def sse_response(req_id: Any, frames: AsyncIterator[JSONDict]) -> StreamingResponse:
    """Each frame becomes one SSE event holding a complete JSON-RPC response."""

    async def body() -> AsyncIterator[bytes]:
        async for result in frames:
            payload = json.dumps({"jsonrpc": "2.0", "id": req_id, "result": result})
            yield f"data: {payload}\n\n".encode()

    return StreamingResponse(
        body(), media_type="text/event-stream", headers={"Cache-Control": "no-store"}
    )


async def follow(queue: asyncio.Queue[JSONDict], closing: asyncio.Event) -> AsyncIterator[JSONDict]:
    """The task's events until a final status event, a long silence or the server closing."""
    while not closing.is_set():
        getter = asyncio.ensure_future(queue.get())
        closer = asyncio.ensure_future(closing.wait())
        done, pending = await asyncio.wait(
            {getter, closer}, timeout=STREAM_IDLE_S, return_when=asyncio.FIRST_COMPLETED
        )
        for waiter in pending:
            waiter.cancel()
        if getter not in done:
            return
        event = getter.result()
        yield event
        if event["event"] == "status" and event["final"]:
            return


class Dialect:
    """The JSON-RPC endpoint and card of one dialect, on top of the scripted agent."""

    part_key = "type"

    def __init__(self, base_url: str, closing: asyncio.Event) -> None:
        self.base_url = base_url
        self.closing = closing  # set when the server shuts down: open streams end
        self.agent = Agent()
        self.methods: dict[str, Handler] = {}

    # -- shapes --------------------------------------------------------------------------

    def decode_parts(self, raw: object) -> list[JSONDict]:
        if not isinstance(raw, list) or not raw:
            raise invalid_params("message.parts must be a non-empty list")
        parts: list[JSONDict] = []
        for part in raw:
            if not isinstance(part, dict):
                raise invalid_params("a part must be an object")
            kind = part.get(self.part_key)
            if kind == "text" and isinstance(part.get("text"), str):
                parts.append({"text": part["text"]})
            elif kind == "data" and isinstance(part.get("data"), dict):
                parts.append({"data": part["data"]})
            elif kind == "file" and isinstance(part.get("file"), dict):
                parts.append({"file": part["file"]})
            else:
                raise invalid_params(f"a part needs {self.part_key!r} = text|data|file: {part}")
        return parts

    def encode_parts(self, parts: list[JSONDict]) -> list[JSONDict]:
        encoded = []
        for part in parts:
            kind = next(iter(part))
            encoded.append({self.part_key: kind, kind: part[kind]})
        return encoded

    def card(self) -> JSONDict:
        raise NotImplementedError

    # -- HTTP ----------------------------------------------------------------------------

    async def get_card(self, _request: Request) -> Response:
        return JSONResponse(self.card())

    async def rpc(self, request: Request) -> Response:
        try:
            body = json.loads(await request.body())
        except ValueError:
            return self.error(None, RPCError(-32700, "Parse error"))
        if (
            not isinstance(body, dict)
            or body.get("jsonrpc") != "2.0"
            or not isinstance(body.get("method"), str)
        ):
            return self.error(
                body.get("id") if isinstance(body, dict) else None,
                RPCError(-32600, "Invalid Request"),
            )
        req_id = body.get("id")
        params = body.get("params", {})
        handler = self.methods.get(body["method"])
        try:
            if handler is None:
                raise RPCError(-32601, f"Method not found: {body['method']}")
            if not isinstance(params, dict):
                raise invalid_params("params must be an object")
            result = await handler(params, req_id, request)
        except RPCError as exc:
            return self.error(req_id, exc)
        if isinstance(result, Response):
            return result
        return JSONResponse({"jsonrpc": "2.0", "id": req_id, "result": result})

    @staticmethod
    def error(req_id: Any, exc: RPCError) -> Response:
        error = {"code": exc.code, "message": exc.message}
        return JSONResponse({"jsonrpc": "2.0", "id": req_id, "error": error})

    def routes(self) -> list[Route]:
        return [
            Route("/.well-known/agent.json", self.get_card, methods=["GET"]),
            Route(RPC_PATH, self.rpc, methods=["POST"]),
        ]


class LegacyDialect(Dialect):
    """Dialect L: ``tasks/send``, ``type`` parts, client-chosen task ids, ``sessionId``."""

    part_key = "type"

    def __init__(self, base_url: str, closing: asyncio.Event, *, cookie: bool = False) -> None:
        super().__init__(base_url, closing)
        self.cookie = cookie
        self.methods = {
            "tasks/send": self.send,
            "tasks/sendSubscribe": self.send_subscribe,
            "tasks/get": self.get_task,
            "tasks/cancel": self.cancel_task,
            "tasks/resubscribe": self.resubscribe,
            "tasks/pushNotification/set": self.push_set,
            "tasks/pushNotification/get": self.push_get,
        }

    def card(self) -> JSONDict:
        name = "Legacy Cookie Test Agent" if self.cookie else "Legacy Test Agent"
        return {
            "name": name,
            "description": "A tasks/send (launch-era A2A) agent, for interop tests.",
            "url": f"{self.base_url}{RPC_PATH}",
            "provider": {"organization": "a2a-anyio tests", "url": "https://example.com/a2a-anyio"},
            "version": "0.1.0",
            "documentationUrl": "https://example.com/a2a-anyio/docs",
            "capabilities": {
                "streaming": True,
                "pushNotifications": True,
                "stateTransitionHistory": False,
            },
            "authentication": {"schemes": ["cookie"] if self.cookie else ["Bearer"]},
            "defaultInputModes": ["text"],
            "defaultOutputModes": ["text"],
            "skills": [
                {
                    "id": "echo",
                    "name": "Echo",
                    "description": "Echoes the text it receives; keywords select behaviours.",
                    "tags": ["echo", "test"],
                    "examples": ["hello", "stream", "slow", "input", "fail"],
                }
            ],
        }

    # -- shapes --------------------------------------------------------------------------

    def encode_message(self, role: str, parts: list[JSONDict]) -> JSONDict:
        return {"role": role, "parts": self.encode_parts(parts)}

    def encode_status(self, event: JSONDict) -> JSONDict:
        status: JSONDict = {"state": event["state"], "timestamp": event["timestamp"]}
        if event["text"] is not None:
            status["message"] = self.encode_message("agent", [{"text": event["text"]}])
        return status

    def encode_task(self, rec: Record, history_length: int | None = None) -> JSONDict:
        task: JSONDict = {
            "id": rec.id,
            "sessionId": rec.context_id,
            "status": self.encode_status(rec.status_event()),
            "artifacts": [
                {"name": a["name"], "index": a["index"], "parts": self.encode_parts(a["parts"])}
                for a in rec.artifacts
            ],
            "metadata": rec.metadata,
        }
        if history_length != 0:
            history = rec.history if history_length is None else rec.history[-history_length:]
            task["history"] = [self.encode_message(m["role"], m["parts"]) for m in history]
        return task

    def encode_event(self, rec: Record, event: JSONDict) -> JSONDict:
        if event["event"] == "status":
            return {"id": rec.id, "status": self.encode_status(event), "final": event["final"]}
        chunk = event["artifact"]
        artifact = {
            "name": chunk["name"],
            "index": chunk["index"],
            "parts": self.encode_parts(chunk["parts"]),
            "append": event["append"],
            "lastChunk": event["last_chunk"],
        }
        return {"id": rec.id, "artifact": artifact}

    # -- methods -------------------------------------------------------------------------

    def _begin(self, params: JSONDict, request: Request) -> tuple[Record, JSONDict, bool]:
        """(the task, the neutral message, whether it continues an input-required task)."""
        task_id = params.get("id")
        if not isinstance(task_id, str) or not task_id:
            raise invalid_params("id (the task id, chosen by the client) is required")
        message = params.get("message")
        if not isinstance(message, dict) or message.get("role") != "user":
            raise invalid_params("message with role 'user' is required")
        neutral = {
            "role": "user",
            "parts": self.decode_parts(message.get("parts")),
            "message_id": str(uuid.uuid4()),  # dialect L messages have no id
        }
        existing = self.agent.tasks.get(task_id)
        if existing is not None:
            if existing.state != "input-required":
                raise invalid_params(f"task {task_id} is {existing.state}")
            return existing, neutral, True
        session = params.get("sessionId")
        metadata = dict(params.get("metadata") or {})
        user = request.cookies.get("user")
        if user:
            metadata["user"] = user
        rec = self.agent.create(
            task_id,
            session if isinstance(session, str) and session else str(uuid.uuid4()),
            metadata,
        )
        push = params.get("pushNotification")
        if isinstance(push, dict):
            rec.push["default"] = push
        return rec, neutral, False

    @staticmethod
    def _history_length(params: JSONDict) -> int | None:
        value = params.get("historyLength")
        if value is None:
            return None
        if not isinstance(value, int) or value < 0:
            raise invalid_params("historyLength must be a non-negative integer")
        return value

    async def send(self, params: JSONDict, _req_id: Any, request: Request) -> JSONDict:
        rec, neutral, continuing = self._begin(params, request)
        self.agent.start(rec, neutral, continuing=continuing)
        with contextlib.suppress(asyncio.TimeoutError):
            await asyncio.wait_for(rec.settled.wait(), SEND_WAIT_S)
        return self.encode_task(rec, self._history_length(params))

    async def send_subscribe(self, params: JSONDict, req_id: Any, request: Request) -> Response:
        rec, neutral, continuing = self._begin(params, request)
        stack = contextlib.AsyncExitStack()
        queue = await stack.enter_async_context(self.agent.listen(rec))
        self.agent.start(rec, neutral, continuing=continuing)
        return sse_response(req_id, self._frames(rec, queue, stack))

    async def _frames(
        self,
        rec: Record,
        queue: asyncio.Queue[JSONDict],
        stack: contextlib.AsyncExitStack,
        first: JSONDict | None = None,
    ) -> AsyncIterator[JSONDict]:
        async with stack:
            if first is not None:
                yield self.encode_event(rec, first)
                if first["final"]:
                    return
            async for event in follow(queue, self.closing):
                yield self.encode_event(rec, event)

    async def get_task(self, params: JSONDict, _req_id: Any, _request: Request) -> JSONDict:
        rec = self.agent.get(params.get("id"))
        return self.encode_task(rec, self._history_length(params))

    async def cancel_task(self, params: JSONDict, _req_id: Any, _request: Request) -> JSONDict:
        rec = self.agent.get(params.get("id"))
        self.agent.cancel(rec)
        return self.encode_task(rec)

    async def resubscribe(self, params: JSONDict, req_id: Any, _request: Request) -> Response:
        rec = self.agent.get(params.get("id"))
        stack = contextlib.AsyncExitStack()
        queue = await stack.enter_async_context(self.agent.listen(rec))
        return sse_response(req_id, self._frames(rec, queue, stack, first=rec.status_event()))

    async def push_set(self, params: JSONDict, _req_id: Any, _request: Request) -> JSONDict:
        rec = self.agent.get(params.get("id"))
        config = params.get("pushNotificationConfig")
        if not isinstance(config, dict) or not isinstance(config.get("url"), str):
            raise invalid_params("pushNotificationConfig with a url is required")
        rec.push["default"] = config
        return {"id": rec.id, "pushNotificationConfig": config}

    async def push_get(self, params: JSONDict, _req_id: Any, _request: Request) -> JSONDict:
        rec = self.agent.get(params.get("id"))
        if "default" not in rec.push:
            raise invalid_params(f"task {rec.id} has no push notification config")
        return {"id": rec.id, "pushNotificationConfig": rec.push["default"]}


class V02Dialect(Dialect):
    """v0.2.5: ``message/send`` family, ``kind`` discriminators, ``final``, card at agent.json."""

    part_key = "kind"

    def __init__(self, base_url: str, closing: asyncio.Event) -> None:
        super().__init__(base_url, closing)
        self.methods = {
            "message/send": self.send,
            "message/stream": self.stream,
            "tasks/get": self.get_task,
            "tasks/cancel": self.cancel_task,
            "tasks/resubscribe": self.resubscribe,
            "tasks/pushNotificationConfig/set": self.push_set,
            "tasks/pushNotificationConfig/get": self.push_get,
            "tasks/pushNotificationConfig/list": self.push_list,
            "tasks/pushNotificationConfig/delete": self.push_delete,
        }

    def card(self, *, extended: bool = False) -> JSONDict:
        skills = [
            {
                "id": "echo",
                "name": "Echo",
                "description": "Echoes the text it receives; keywords select behaviours.",
                "tags": ["echo", "test"],
                "examples": ["hello", "message ping", "stream", "slow", "input", "fail"],
            }
        ]
        if extended:
            skills.append(
                {
                    "id": "extended-skill",
                    "name": "Extended skill",
                    "description": "Only listed on the extended agent card.",
                    "tags": ["extended"],
                }
            )
        return {
            "protocolVersion": "0.2.5",
            "name": "v0.2 Test Agent",
            "description": "A v0.2.5 A2A agent, for interop tests.",
            "url": f"{self.base_url}{RPC_PATH}",
            "preferredTransport": "JSONRPC",
            "provider": {"organization": "a2a-anyio tests", "url": "https://example.com/a2a-anyio"},
            "version": "0.2.5",
            "documentationUrl": "https://example.com/a2a-anyio/docs",
            "capabilities": {
                "streaming": True,
                "pushNotifications": True,
                "stateTransitionHistory": False,
            },
            "securitySchemes": {
                "bearer": {
                    "type": "http",
                    "scheme": "bearer",
                    "bearerFormat": "JWT",
                    "description": "Declared for card tests; not enforced.",
                }
            },
            "security": [{"bearer": []}],
            "defaultInputModes": ["text/plain", "application/json"],
            "defaultOutputModes": ["text/plain", "application/json"],
            "skills": skills,
            "supportsAuthenticatedExtendedCard": True,
        }

    async def get_extended_card(self, _request: Request) -> Response:
        return JSONResponse(self.card(extended=True))

    def routes(self) -> list[Route]:
        return [
            *super().routes(),
            Route(EXTENDED_CARD_PATH, self.get_extended_card, methods=["GET"]),
        ]

    # -- shapes --------------------------------------------------------------------------

    def encode_message(
        self, role: str, parts: list[JSONDict], message_id: str, rec: Record | None
    ) -> JSONDict:
        message: JSONDict = {
            "kind": "message",
            "role": role,
            "messageId": message_id,
            "parts": self.encode_parts(parts),
        }
        if rec is not None:
            message["taskId"] = rec.id
            message["contextId"] = rec.context_id
        return message

    def encode_status(self, rec: Record, event: JSONDict) -> JSONDict:
        status: JSONDict = {"state": event["state"], "timestamp": event["timestamp"]}
        if event["text"] is not None:
            status["message"] = self.encode_message(
                "agent", [{"text": event["text"]}], event["message_id"], rec
            )
        return status

    def encode_task(self, rec: Record, history_length: int | None = None) -> JSONDict:
        history = rec.history
        if history_length is not None and history_length > 0:
            history = history[-history_length:]
        return {
            "kind": "task",
            "id": rec.id,
            "contextId": rec.context_id,
            "status": self.encode_status(rec, rec.status_event()),
            "artifacts": [
                {
                    "artifactId": a["artifact_id"],
                    "name": a["name"],
                    "parts": self.encode_parts(a["parts"]),
                }
                for a in rec.artifacts
            ],
            "history": [
                self.encode_message(m["role"], m["parts"], m["message_id"], rec) for m in history
            ],
            "metadata": rec.metadata,
        }

    def encode_event(self, rec: Record, event: JSONDict) -> JSONDict:
        if event["event"] == "status":
            return {
                "kind": "status-update",
                "taskId": rec.id,
                "contextId": rec.context_id,
                "status": self.encode_status(rec, event),
                "final": event["final"],
            }
        chunk = event["artifact"]
        return {
            "kind": "artifact-update",
            "taskId": rec.id,
            "contextId": rec.context_id,
            "artifact": {
                "artifactId": chunk["artifact_id"],
                "name": chunk["name"],
                "parts": self.encode_parts(chunk["parts"]),
            },
            "append": event["append"],
            "lastChunk": event["last_chunk"],
        }

    # -- methods -------------------------------------------------------------------------

    def _message(self, params: JSONDict) -> JSONDict:
        message = params.get("message")
        if not isinstance(message, dict) or message.get("kind") != "message":
            raise invalid_params("message with kind 'message' is required")
        if message.get("role") != "user":
            raise invalid_params("message.role must be 'user'")
        if not isinstance(message.get("messageId"), str) or not message["messageId"]:
            raise invalid_params("message.messageId is required")
        return message

    def _begin(self, params: JSONDict) -> tuple[Record | None, JSONDict, JSONDict, bool]:
        """(the task, or None for a Message reply; the neutral message; the raw message;
        whether it continues an input-required task)."""
        message = self._message(params)
        neutral = {
            "role": "user",
            "parts": self.decode_parts(message.get("parts")),
            "message_id": message["messageId"],
        }
        task_id = message.get("taskId")
        if task_id is not None:
            rec = self.agent.get(task_id)
            if rec.state != "input-required":
                raise invalid_params(f"task {task_id} is {rec.state}")
            return rec, neutral, message, True
        text = next((p["text"] for p in neutral["parts"] if "text" in p), "")
        context_id = message.get("contextId")
        if not isinstance(context_id, str) or not context_id:
            context_id = str(uuid.uuid4())
        if text.startswith("message"):
            return None, neutral, {**message, "contextId": context_id}, False
        rec = self.agent.create(str(uuid.uuid4()), context_id, dict(params.get("metadata") or {}))
        return rec, neutral, message, False

    def _reply(self, message: JSONDict, neutral: JSONDict) -> JSONDict:
        text = next((p["text"] for p in neutral["parts"] if "text" in p), "")
        reply = self.encode_message("agent", [{"text": f"pong: {text}"}], str(uuid.uuid4()), None)
        reply["contextId"] = message["contextId"]
        return reply

    async def send(self, params: JSONDict, _req_id: Any, _request: Request) -> JSONDict:
        rec, neutral, message, continuing = self._begin(params)
        if rec is None:
            return self._reply(message, neutral)
        self.agent.start(rec, neutral, continuing=continuing)
        configuration = params.get("configuration") or {}
        if configuration.get("blocking", True) is not False:
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(rec.done.wait(), SEND_WAIT_S)
        return self.encode_task(rec, configuration.get("historyLength"))

    async def stream(self, params: JSONDict, req_id: Any, _request: Request) -> Response:
        rec, neutral, message, continuing = self._begin(params)
        if rec is None:
            reply = self._reply(message, neutral)

            async def single() -> AsyncIterator[JSONDict]:
                yield reply

            return sse_response(req_id, single())
        stack = contextlib.AsyncExitStack()
        queue = await stack.enter_async_context(self.agent.listen(rec))
        self.agent.start(rec, neutral, continuing=continuing)
        return sse_response(req_id, self._frames(rec, queue, stack, self.encode_task(rec)))

    async def _frames(
        self,
        rec: Record,
        queue: asyncio.Queue[JSONDict],
        stack: contextlib.AsyncExitStack,
        snapshot: JSONDict,
    ) -> AsyncIterator[JSONDict]:
        async with stack:
            yield snapshot
            async for event in follow(queue, self.closing):
                yield self.encode_event(rec, event)

    async def get_task(self, params: JSONDict, _req_id: Any, _request: Request) -> JSONDict:
        rec = self.agent.get(params.get("id"))
        return self.encode_task(rec, params.get("historyLength"))

    async def cancel_task(self, params: JSONDict, _req_id: Any, _request: Request) -> JSONDict:
        rec = self.agent.get(params.get("id"))
        self.agent.cancel(rec)
        return self.encode_task(rec)

    async def resubscribe(self, params: JSONDict, req_id: Any, _request: Request) -> Response:
        rec = self.agent.get(params.get("id"))
        if rec.state in TERMINAL:
            raise invalid_params(f"task {rec.id} is in a terminal state: {rec.state}")
        stack = contextlib.AsyncExitStack()
        queue = await stack.enter_async_context(self.agent.listen(rec))
        return sse_response(req_id, self._frames(rec, queue, stack, self.encode_task(rec)))

    async def push_set(self, params: JSONDict, _req_id: Any, _request: Request) -> JSONDict:
        rec = self.agent.get(params.get("taskId"))
        config = params.get("pushNotificationConfig")
        if not isinstance(config, dict) or not isinstance(config.get("url"), str):
            raise invalid_params("pushNotificationConfig with a url is required")
        config = {**config, "id": config.get("id") or rec.id}
        rec.push[config["id"]] = config
        return {"taskId": rec.id, "pushNotificationConfig": config}

    async def push_get(self, params: JSONDict, _req_id: Any, _request: Request) -> JSONDict:
        rec = self.agent.get(params.get("id"))
        config_id = params.get("pushNotificationConfigId")
        if config_id is None and rec.push:
            config_id = next(iter(rec.push))
        if config_id not in rec.push:
            raise task_not_found(f"{rec.id} push config {config_id}")
        return {"taskId": rec.id, "pushNotificationConfig": rec.push[config_id]}

    async def push_list(self, params: JSONDict, _req_id: Any, _request: Request) -> list[JSONDict]:
        rec = self.agent.get(params.get("id"))
        return [{"taskId": rec.id, "pushNotificationConfig": c} for c in rec.push.values()]

    async def push_delete(self, params: JSONDict, _req_id: Any, _request: Request) -> None:
        rec = self.agent.get(params.get("id"))
        config_id = params.get("pushNotificationConfigId")
        if config_id not in rec.push:
            raise task_not_found(f"{rec.id} push config {config_id}")
        del rec.push[config_id]
        return


class RequireUserCookie:
    """ASGI middleware: HTTP 401 unless the request carries a non-empty ``user`` cookie."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not Request(scope).cookies.get("user"):
            response = JSONResponse(
                {"error": "unauthorized", "message": "log in first: send a user=<name> cookie"},
                status_code=401,
                headers={"WWW-Authenticate": 'Cookie realm="a2a", cookie-name="user"'},
            )
            await response(scope, receive, send)
            return
        await self.app(scope, receive, send)


def build_app(base_url: str, dialect: str, closing: asyncio.Event) -> ASGIApp:
    if dialect == "v02":
        served: Dialect = V02Dialect(base_url, closing)
    else:
        served = LegacyDialect(base_url, closing, cookie=dialect == "legacy-cookie")
    app: ASGIApp = Starlette(routes=served.routes())
    if dialect == "legacy-cookie":
        app = RequireUserCookie(app)
    return app


# --------------------------------------------------------------------------------------------
# Entry point
# --------------------------------------------------------------------------------------------


def _bind(port: int) -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    if port:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((HOST, port))
    return sock


async def _serve(dialect: str, sock: socket.socket) -> int:
    port = sock.getsockname()[1]
    base_url = f"http://{HOST}:{port}"
    closing = asyncio.Event()
    config = uvicorn.Config(
        build_app(base_url, dialect, closing),
        log_level="warning",
        lifespan="off",
        timeout_graceful_shutdown=3,
    )
    server = uvicorn.Server(config)
    serving = asyncio.create_task(server.serve(sockets=[sock]))
    while not server.started:
        if serving.done():
            await serving
            return 1
        await asyncio.sleep(0.01)
    sys.stdout.write(f"READY {base_url}\n")
    sys.stdout.flush()
    # uvicorn's signal handlers set should_exit; end the open streams then, so that the
    # graceful shutdown does not wait for them.
    while not serving.done() and not server.should_exit:
        await asyncio.sleep(0.05)
    closing.set()
    await serving
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--dialect", choices=DIALECTS, required=True)
    parser.add_argument("--port", type=int, default=0, help="0 = a free port chosen by the OS")
    args = parser.parse_args(argv)

    logging.basicConfig(level=logging.WARNING, stream=sys.stderr)
    # uvicorn restores these handlers and re-raises the signal once it has shut down.
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda _signum, _frame: None)

    sock = _bind(args.port)
    try:
        return asyncio.run(_serve(args.dialect, sock))
    finally:
        sock.close()


if __name__ == "__main__":
    sys.exit(main())
