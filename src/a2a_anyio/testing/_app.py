"""The fake agent's HTTP side: cards, JSON-RPC and HTTP+JSON routes, SSE, faults, records."""

from __future__ import annotations

import http
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import unquote

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream

from a2a_anyio._dialects import _values as v
from a2a_anyio._model import (
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_anyio.testing import _errors as codes
from a2a_anyio.testing._asgi import (
    HTTPRequest,
    Receive,
    Scope,
    Send,
    dumps,
    lifespan,
    send_json,
    send_response,
)
from a2a_anyio.testing._errors import AgentError, jsonrpc_error, rest_error
from a2a_anyio.testing._types import RecordedRequest, trim_history
from a2a_anyio.testing._wire import InvalidParams, SendRequest, Wire

if TYPE_CHECKING:
    from a2a_anyio.testing._agent import FakeAgent

_V03_METHODS = {
    "message/send": "send",
    "message/stream": "stream",
    "tasks/get": "get",
    "tasks/cancel": "cancel",
    "tasks/resubscribe": "subscribe",
    "tasks/pushNotificationConfig/set": "push_create",
    "tasks/pushNotificationConfig/get": "push_get",
    "tasks/pushNotificationConfig/list": "push_list",
    "tasks/pushNotificationConfig/delete": "push_delete",
}
METHODS: dict[str, dict[str, str]] = {
    "1.0": {
        "SendMessage": "send",
        "SendStreamingMessage": "stream",
        "GetTask": "get",
        "ListTasks": "list",
        "CancelTask": "cancel",
        "SubscribeToTask": "subscribe",
        "CreateTaskPushNotificationConfig": "push_create",
        "GetTaskPushNotificationConfig": "push_get",
        "ListTaskPushNotificationConfigs": "push_list",
        "DeleteTaskPushNotificationConfig": "push_delete",
        "GetExtendedAgentCard": "extended_card",
    },
    "0.3": {**_V03_METHODS, "agent/getAuthenticatedExtendedCard": "extended_card"},
    "0.2": dict(_V03_METHODS),
    "legacy": {
        "tasks/send": "send",
        "tasks/sendSubscribe": "stream",
        "tasks/get": "get",
        "tasks/cancel": "cancel",
        "tasks/resubscribe": "subscribe",
        "tasks/pushNotification/set": "push_create",
        "tasks/pushNotification/get": "push_get",
    },
}
CARD_PATHS = {
    "1.0": ("/.well-known/agent-card.json",),
    "0.3": ("/.well-known/agent-card.json", "/.well-known/agent.json"),
    "0.2": ("/.well-known/agent.json",),
    "legacy": ("/.well-known/agent.json",),
}
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
]
_TASK_PATH = re.compile(r"/tasks/([^/]+)")
_PUSH_PATH = re.compile(r"/tasks/([^/]+)/pushNotificationConfigs(?:/([^/]+))?")


class _Reset(Exception):
    """Raised to break the connection (the ``cut="reset"`` fault)."""


@dataclass(slots=True)
class _Plan:
    """The combined effect of the faults that apply to one request."""

    delay: float = 0.0
    event_delay: float = 0.0
    cut_after: int | None = None
    reset: bool = False
    error: AgentError | None = None
    http_status: int | None = None
    retry_after: str | None = None


def _str(params: dict[str, Any], *names: str) -> str:
    for name in names:
        value = params.get(name)
        if isinstance(value, str) and value:
            return value
    raise InvalidParams(f"{names[0]} is required")


def _opt_int(value: Any, name: str) -> int | None:
    if value is None or value == "":
        return None
    if isinstance(value, bool):
        raise InvalidParams(f"{name} is not an integer")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise InvalidParams(f"{name} is not an integer") from None


def _is_final(event: StreamEvent) -> bool:
    if isinstance(event, Message):
        return True
    return isinstance(event, TaskStatusUpdateEvent) and event.status.state.is_final


class _Guard:
    """Whether a wait was cut short by a client disconnect or the agent stopping."""

    interrupted = False


class AgentApp:
    """The ASGI application of one FakeAgent."""

    def __init__(self, agent: FakeAgent) -> None:
        self.agent = agent

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        try:
            req = await HTTPRequest.read(scope, receive)
        except ValueError:
            await send_response(send, 413, b"Payload Too Large", "text/plain")
            return
        try:
            body = req.json()
        except ValueError:
            body = None
        record = RecordedRequest(
            req.method, req.path, dict(req.query), dict(req.headers), body, req.body
        )
        self.agent.requests.append(record)
        await self._route(req, record, receive, send)

    # -- routing ------------------------------------------------------------------------

    async def _route(
        self, req: HTTPRequest, record: RecordedRequest, receive: Receive, send: Send
    ) -> None:
        a = self.agent
        path = req.path
        if req.method == "GET" and path in CARD_PATHS[a.dialect]:
            record.op = "card"
            if await self._pre(record, req, send, None, a.rpc_wire, check_auth=False) is None:
                return
            await send_json(send, 200, a.card(req.base_url))
            return
        if a.dialect == "0.2" and path == "/agent/authenticatedExtendedCard":
            record.op = "extended_card"
            if await self._pre(record, req, send, None, a.rpc_wire) is None:
                return
            if a.extended_card is None:
                await send_response(send, 404, b"Not Found", "text/plain")
            else:
                await send_json(send, 200, a.card(req.base_url, extended=True))
            return
        if a.binding != "rest" and path == a.rpc_path:
            if req.method != "POST":
                await send_response(send, 405, b"Method Not Allowed", "text/plain")
                return
            await self._jsonrpc(req, record, receive, send)
            return
        if a.rest_wire is not None and (
            not a.rest_path or path == a.rest_path or path.startswith(a.rest_path + "/")
        ):
            await self._rest(req, record, receive, send, path[len(a.rest_path) :])
            return
        await send_response(send, 404, b"Not Found", "text/plain")

    async def _pre(
        self,
        record: RecordedRequest,
        req: HTTPRequest,
        send: Send,
        req_id: Any,
        wire: Wire,
        *,
        check_auth: bool = True,
    ) -> _Plan | None:
        """Check credentials and apply the faults; None when the request was answered here."""
        a = self.agent
        if check_auth and a.auth is not None and req.headers.get("authorization") != a.auth:
            await send_json(
                send, 401, {"error": "unauthorized"}, headers={"WWW-Authenticate": "Bearer"}
            )
            return None
        plan = _Plan(delay=a.delay, event_delay=a.event_delay)
        for f in a.take_faults(record.op):
            plan.delay += f.delay
            plan.event_delay += f.event_delay
            if plan.cut_after is None and f.cut_after is not None:
                plan.cut_after, plan.reset = f.cut_after, f.cut == "reset"
            if plan.error is None and plan.http_status is None:
                if f.http_status is not None:
                    plan.http_status = f.http_status
                    plan.retry_after = None if f.retry_after is None else str(f.retry_after)
                elif f.error is not None:
                    plan.error = AgentError(f.error, f.message)
        if plan.delay:
            await anyio.sleep(plan.delay)
        if plan.http_status is not None:
            status = plan.http_status
            try:
                phrase = http.HTTPStatus(status).phrase
            except ValueError:
                phrase = "Error"
            headers = {"Retry-After": plan.retry_after} if plan.retry_after else None
            await send_response(send, status, phrase.encode(), "text/plain", headers)
            return None
        if plan.error is not None:
            await self._error(send, wire, req_id, plan.error)
            return None
        return plan

    async def _error(self, send: Send, wire: Wire, req_id: Any, err: AgentError) -> None:
        if wire.rest:
            status, body = rest_error(wire.version, err)
            await send_json(send, status, body)
        else:
            error = jsonrpc_error(wire.version, err)
            await send_json(send, 200, {"jsonrpc": "2.0", "id": req_id, "error": error})

    def _version_error(self, req: HTTPRequest) -> AgentError | None:
        if self.agent.dialect != "1.0" or not self.agent.strict:
            return None
        version = req.headers.get("a2a-version") or req.query.get("A2A-Version") or "0.3"
        if version.strip() == "1" or version.strip().startswith("1."):
            return None
        return AgentError(
            codes.VERSION_NOT_SUPPORTED,
            f"A2A version '{version}' is not supported by this handler. Expected version '1.0'.",
        )

    # -- JSON-RPC -----------------------------------------------------------------------

    async def _jsonrpc(
        self, req: HTTPRequest, record: RecordedRequest, receive: Receive, send: Send
    ) -> None:
        a = self.agent
        wire = a.rpc_wire
        try:
            body = json.loads(req.body)
        except ValueError:
            await self._error(send, wire, None, AgentError(codes.PARSE_ERROR))
            return
        if not isinstance(body, dict):
            await self._error(send, wire, None, AgentError(codes.INVALID_REQUEST))
            return
        req_id = body.get("id")
        method = body.get("method")
        if body.get("jsonrpc") != "2.0" or not isinstance(method, str):
            await self._error(send, wire, req_id, AgentError(codes.INVALID_REQUEST))
            return
        record.rpc_method = method
        op = METHODS[a.dialect].get(method)
        record.op = op
        plan = await self._pre(record, req, send, req_id, wire)
        if plan is None:
            return
        if op is None:
            await self._error(send, wire, req_id, AgentError(codes.METHOD_NOT_FOUND))
            return
        params = body.get("params")
        try:
            if (err := self._version_error(req)) is not None:
                raise err
            if not isinstance(params, (dict, type(None))):
                raise InvalidParams("params must be an object")
            p: dict[str, Any] = params or {}
            if op in ("stream", "subscribe"):
                events = self._open_stream(op, wire, p, req)
                await self._stream(events, wire, plan, req_id, receive, send)
                return
            result = await self._unary_rpc(op, wire, p, req, receive)
        except AgentError as err:
            await self._error(send, wire, req_id, err)
            return
        except InvalidParams as exc:
            await self._error(send, wire, req_id, AgentError(codes.INVALID_PARAMS, str(exc)))
            return
        await send_json(send, 200, {"jsonrpc": "2.0", "id": req_id, "result": result})

    def _open_stream(
        self, op: str, wire: Wire, params: dict[str, Any], req: HTTPRequest
    ) -> MemoryObjectReceiveStream[StreamEvent]:
        a = self.agent
        if not a.streaming:
            raise AgentError(codes.UNSUPPORTED_OPERATION, "Streaming is not supported")
        if op == "subscribe":
            return a.subscribe(_str(params, "id"))
        return a.start_send(wire.send_request(params), req.headers)

    async def _unary_rpc(
        self, op: str, wire: Wire, p: dict[str, Any], req: HTTPRequest, receive: Receive
    ) -> Any:
        a = self.agent
        v1 = wire.version == "1.0"
        if op == "send":
            return await self._send(wire, wire.send_request(p), req, receive)
        if op == "get":
            return self._task(
                wire, a.get(_str(p, "id")), _opt_int(p.get("historyLength"), "historyLength")
            )
        if op == "cancel":
            return wire.task(a.cancel(_str(p, "id")))
        if op == "list":
            return self._list(wire, p)
        if op == "push_create":
            return wire.push_config(a.push_create(wire.decode_push_config(p)))
        if op == "push_get":
            if v1:
                return wire.push_config(a.push_get(_str(p, "taskId"), _str(p, "id")))
            config_id = p.get("pushNotificationConfigId")
            return wire.push_config(a.push_get(_str(p, "id"), config_id or None))
        if op == "push_list":
            return wire.push_configs(a.push_list(_str(p, "taskId") if v1 else _str(p, "id")))
        if op == "push_delete":
            if v1:
                a.push_delete(_str(p, "taskId"), _str(p, "id"))
            else:
                a.push_delete(_str(p, "id"), _str(p, "pushNotificationConfigId"))
            return None
        return self._extended_card(wire, req)

    # -- shared operations --------------------------------------------------------------

    def _task(self, wire: Wire, task: Task, history_length: int | None) -> Any:
        return wire.task(trim_history(task, history_length, wire.zero_history_is_none))

    def _extended_card(self, wire: Wire, req: HTTPRequest) -> Any:
        a = self.agent
        if a.extended_card is None:
            if wire.version == "1.0":
                raise AgentError(codes.UNSUPPORTED_OPERATION, "Extended agent card not supported")
            raise AgentError(codes.EXTENDED_CARD_NOT_CONFIGURED)
        return a.card(req.base_url, extended=True)

    def _list(self, wire: Wire, p: dict[str, Any]) -> Any:
        state = None
        raw_state = p.get("status")
        if raw_state:
            state = v.state(raw_state)
            if state is TaskState.UNKNOWN and raw_state != "TASK_STATE_UNSPECIFIED":
                raise InvalidParams(f"unknown task state {raw_state!r}")
        include = p.get("includeArtifacts")
        if isinstance(include, str):
            include = include.lower() == "true"
        history = _opt_int(p.get("historyLength"), "historyLength")
        tasks, token, size, total = self.agent.list_tasks(
            context_id=p.get("contextId") or None,
            state=state,
            page_size=_opt_int(p.get("pageSize"), "pageSize"),
            page_token=p.get("pageToken") or None,
            updated_after=p.get("statusTimestampAfter") or None,
        )
        out = []
        for task in tasks:
            task = trim_history(task, history, wire.zero_history_is_none)
            if not include:
                task.artifacts = []
            out.append(wire.task(task))
        return {"tasks": out, "nextPageToken": token, "pageSize": size, "totalSize": total}

    @asynccontextmanager
    async def _guard(self, receive: Receive) -> AsyncIterator[_Guard]:
        """Cancel the body when the client disconnects or the agent stops."""
        guard = _Guard()
        closing = self.agent.closing

        async with anyio.create_task_group() as tg:

            async def disconnect() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                guard.interrupted = True
                tg.cancel_scope.cancel()

            async def stopping() -> None:
                if closing is not None:
                    await closing.wait()
                    guard.interrupted = True
                    tg.cancel_scope.cancel()

            tg.start_soon(disconnect)
            tg.start_soon(stopping)
            yield guard
            tg.cancel_scope.cancel()

    async def _send(self, wire: Wire, sreq: SendRequest, req: HTTPRequest, receive: Receive) -> Any:
        """A (blocking or not) send: wait for the first snapshot or a final event."""
        a = self.agent
        events = a.start_send(sreq, req.headers)
        result: Task | Message | None = None
        task_id: str | None = None
        with events:
            async with self._guard(receive):
                async for event in events:
                    if isinstance(event, Message):
                        result = event
                        break
                    if isinstance(event, Task):
                        task_id = event.id
                        if not sreq.blocking:
                            result = event
                            break
                    elif _is_final(event):
                        break
        if result is None:
            if task_id is None:
                raise AgentError(codes.INTERNAL_ERROR, "the agent stopped")
            result = a.get(task_id)
        if isinstance(result, Task):
            result = trim_history(result, sreq.history_length, wire.zero_history_is_none)
        return wire.send_result(result)

    async def _stream(
        self,
        events: MemoryObjectReceiveStream[StreamEvent],
        wire: Wire,
        plan: _Plan,
        req_id: Any,
        receive: Receive,
        send: Send,
        *,
        rpc: bool = True,
    ) -> None:
        """Write the events as SSE until a final one (or a cut)."""
        a = self.agent
        await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        count = 0
        reset = False
        with events:
            async with self._guard(receive):
                async for event in events:
                    if not wire.snapshots and isinstance(event, Task):
                        continue
                    if plan.event_delay:
                        await anyio.sleep(plan.event_delay)
                    task = None
                    if isinstance(event, TaskArtifactUpdateEvent):
                        rec = a._records.get(event.task_id)
                        task = rec.task if rec is not None else None
                    payload = wire.event(event, task)
                    if rpc:
                        payload = {"jsonrpc": "2.0", "id": req_id, "result": payload}
                    data = b"data: " + dumps(payload) + b"\n\n"
                    await send({"type": "http.response.body", "body": data, "more_body": True})
                    count += 1
                    if _is_final(event):
                        break
                    if plan.cut_after is not None and count >= plan.cut_after:
                        reset = plan.reset
                        break
        if reset:
            raise _Reset("connection reset by the cut fault")
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    # -- HTTP+JSON ----------------------------------------------------------------------

    def _rest_route(self, method: str, sub: str) -> tuple[str | None, dict[str, str], bool]:
        """(operation, path arguments, method allowed) of a REST path."""
        v1 = self.agent.dialect == "1.0"
        if sub == "/message:send":
            return "send", {}, method == "POST"
        if sub == "/message:stream":
            return "stream", {}, method == "POST"
        if sub == ("/extendedAgentCard" if v1 else "/card"):
            return "extended_card", {}, method == "GET"
        if sub == "/tasks" and v1:
            return "list", {}, method == "GET"
        if m := _PUSH_PATH.fullmatch(sub):
            task_id, config_id = unquote(m[1]), m[2]
            if config_id is None:
                op = "push_create" if method == "POST" else "push_list"
                return op, {"taskId": task_id}, method in ("POST", "GET")
            op = "push_delete" if method == "DELETE" else "push_get"
            args = {"taskId": task_id, "id": unquote(config_id)}
            return op, args, method in ("GET", "DELETE")
        if m := _TASK_PATH.fullmatch(sub):
            ref = unquote(m[1])
            if ref.endswith(":cancel"):
                return "cancel", {"id": ref[: -len(":cancel")]}, method == "POST"
            if ref.endswith(":subscribe"):
                return "subscribe", {"id": ref[: -len(":subscribe")]}, method in ("POST", "GET")
            if ":" in ref:  # a custom verb this agent does not have
                return None, {}, False
            return "get", {"id": ref}, method == "GET"
        return None, {}, False

    async def _rest(
        self, req: HTTPRequest, record: RecordedRequest, receive: Receive, send: Send, sub: str
    ) -> None:
        a = self.agent
        wire = a.rest_wire
        assert wire is not None
        if wire.version != "1.0":
            if not sub.startswith("/v1/"):
                await send_response(send, 404, b"Not Found", "text/plain")
                return
            sub = sub[3:]
        op, args, allowed = self._rest_route(req.method, sub)
        record.op = op
        if op is None:
            await send_response(send, 404, b"Not Found", "text/plain")
            return
        if not allowed:
            await send_response(send, 405, b"Method Not Allowed", "text/plain")
            return
        plan = await self._pre(record, req, send, None, wire)
        if plan is None:
            return
        ctype = "application/a2a+json" if wire.version == "1.0" else "application/json"
        try:
            if (err := self._version_error(req)) is not None:
                raise err
            body: Any = None
            if req.method in ("POST", "PUT") and req.body.strip():
                try:
                    body = json.loads(req.body)
                except ValueError:
                    raise AgentError(codes.PARSE_ERROR) from None
            if body is not None and not isinstance(body, dict):
                raise InvalidParams("the body must be a JSON object")
            p: dict[str, Any] = body or {}
            if op in ("stream", "subscribe"):
                events = self._open_stream(op, wire, {**p, **args}, req)
                await self._stream(events, wire, plan, None, receive, send, rpc=False)
                return
            result = await self._unary_rest(op, wire, p, args, req, receive)
        except AgentError as err:
            await self._error(send, wire, None, err)
            return
        except InvalidParams as exc:
            await self._error(send, wire, None, AgentError(codes.INVALID_PARAMS, str(exc)))
            return
        await send_json(send, 200, result, ctype)

    async def _unary_rest(
        self,
        op: str,
        wire: Wire,
        body: dict[str, Any],
        args: dict[str, str],
        req: HTTPRequest,
        receive: Receive,
    ) -> Any:
        a = self.agent
        query = req.query
        if op == "send":
            return await self._send(wire, wire.send_request(body), req, receive)
        if op == "get":
            return self._task(
                wire, a.get(args["id"]), _opt_int(query.get("historyLength"), "historyLength")
            )
        if op == "cancel":
            return wire.task(a.cancel(args["id"]))
        if op == "list":
            return self._list(wire, dict(query))
        if op == "push_create":
            config = wire.decode_push_config(body, args["taskId"])
            return wire.push_config(a.push_create(config))
        if op == "push_get":
            return wire.push_config(a.push_get(args["taskId"], args["id"]))
        if op == "push_list":
            return wire.push_configs(a.push_list(args["taskId"]))
        if op == "push_delete":
            a.push_delete(args["taskId"], args["id"])
            return {}
        return self._extended_card(wire, req)
