"""The fake agent's HTTP side: the ASGI app that serves an ``AgentConfig`` and a ``TaskStore``
(cards, JSON-RPC and HTTP+JSON routes, SSE, faults, the requests it records), and the poster of
the store's push notifications. Methods, paths, params, results and errors are read and written
by the client's codecs."""

from __future__ import annotations

import http
import inspect
import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable
from contextlib import aclosing, asynccontextmanager
from dataclasses import dataclass
from typing import Any

import anyio
import httpx
from anyio.streams.memory import MemoryObjectReceiveStream

import a2a_anyio.testing._errors as codes
from a2a_anyio._asgi import (
    HTTPRequest,
    Receive,
    Scope,
    Send,
    dumps,
    lifespan,
    send_json,
    send_response,
)
from a2a_anyio._bindings import WireCodec
from a2a_anyio._bindings.jsonrpc import PLAIN_GETS, read_request
from a2a_anyio._card import WELL_KNOWN_PATHS
from a2a_anyio._dialects import (
    Cancel,
    ListTasks,
    Op,
    OpArgs,
    PushCreate,
    PushRef,
    TaskRef,
)
from a2a_anyio._dialects import Send as SendMessage
from a2a_anyio._errors import A2ARPCError
from a2a_anyio._model import (
    JSONDict,
    Message,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPage,
    TaskStatusUpdateEvent,
)
from a2a_anyio.testing._config import AgentConfig
from a2a_anyio.testing._errors import AgentError
from a2a_anyio.testing._store import TaskStore
from a2a_anyio.testing._types import Method, PushDelivery, RecordedRequest, trim_history
from a2a_anyio.testing._wire import InvalidParams, read_args

_NEW_CARD, _OLD_CARD = WELL_KNOWN_PATHS
CARD_PATHS = {
    "1.0": (_NEW_CARD,),
    "0.3": (_NEW_CARD, _OLD_CARD),
    "0.2": (_OLD_CARD,),
    "legacy": (_OLD_CARD,),
}
_SSE_HEADERS = [
    (b"content-type", b"text/event-stream; charset=utf-8"),
    (b"cache-control", b"no-cache"),
]


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


def _is_final(event: StreamEvent) -> bool:
    if isinstance(event, Message):
        return True
    return isinstance(event, TaskStatusUpdateEvent) and event.status.state.is_final


class _Guard:
    """Whether a wait was cut short by a client disconnect or the agent stopping."""

    interrupted = False


class AgentApp:
    """The ASGI application that serves ``config`` and ``store``; it records every request
    and posts the store's push notifications (``post_pushes``)."""

    def __init__(self, config: AgentConfig, store: TaskStore) -> None:
        self.config = config
        self.store = store
        #: every request received, in order
        self.requests: list[RecordedRequest] = []
        #: every push notification sent, in order
        self.push_deliveries: list[PushDelivery] = []

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
        self.requests.append(record)
        await self._route(req, record, receive, send)

    async def post_pushes(
        self,
        queue: MemoryObjectReceiveStream[tuple[PushNotificationConfig, StreamEvent, Task]],
        client: httpx.AsyncClient,
    ) -> None:
        """Post each notification of ``queue`` with ``client``, recording each delivery."""
        async with queue:
            async for config, event, task in queue:
                body = self.config.rpc_codec.dialect.encode_notification(event, task)
                await self._deliver(client, config, body)

    async def _deliver(
        self, client: httpx.AsyncClient, config: PushNotificationConfig, body: JSONDict
    ) -> None:
        v1 = self.config.dialect == "1.0"
        headers = {"Content-Type": "application/a2a+json" if v1 else "application/json"}
        if config.token:
            headers["X-A2A-Notification-Token"] = config.token
        if config.auth_scheme and config.auth_credentials:
            headers["Authorization"] = f"{config.auth_scheme} {config.auth_credentials}"
        delivery = PushDelivery(config.url, headers, body)
        self.push_deliveries.append(delivery)
        try:
            response = await client.post(config.url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            delivery.error = f"{type(exc).__name__}: {exc}"
        else:
            delivery.status_code = response.status_code

    # -- routing ------------------------------------------------------------------------

    async def _route(
        self, req: HTTPRequest, record: RecordedRequest, receive: Receive, send: Send
    ) -> None:
        a = self.config
        path = req.path
        if req.method == "GET" and path in CARD_PATHS[a.dialect]:
            record.op = "card"
            if await self._pre(record, req, send, None, a.rpc_codec, check_auth=False) is None:
                return
            await send_json(send, 200, a.card(req.base_url))
            return
        if path == PLAIN_GETS.get(a.dialect, {}).get(Op.EXTENDED_CARD):
            record.op = "extended_card"
            if await self._pre(record, req, send, None, a.rpc_codec) is None:
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
        if a.rest_codec is not None and (
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
        codec: WireCodec,
        *,
        check_auth: bool = True,
    ) -> _Plan | None:
        """Check credentials and apply the faults; None when the request was answered here."""
        a = self.config
        if check_auth and not await a.authorized(req.headers.get("authorization")):
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
            await self._error(send, codec, req_id, plan.error)
            return None
        return plan

    async def _error(self, send: Send, codec: WireCodec, req_id: Any, err: AgentError) -> None:
        status, body = codec.encode_error(err.code, err.message, err.metadata, req_id)
        await send_json(send, status, body)

    def _version_error(self, req: HTTPRequest) -> AgentError | None:
        if self.config.dialect != "1.0" or not self.config.strict:
            return None
        version = req.headers.get("a2a-version") or req.query.get("A2A-Version") or "0.3"
        if version.strip() == "1" or version.strip().startswith("1."):
            return None
        return AgentError(
            codes.VERSION_NOT_SUPPORTED,
            f"A2A version '{version}' is not supported by this handler. Expected version '1.0'.",
        )

    # -- the bindings -------------------------------------------------------------------

    async def _jsonrpc(
        self, req: HTTPRequest, record: RecordedRequest, receive: Receive, send: Send
    ) -> None:
        codec = self.config.rpc_codec
        try:
            req_id, method, params = read_request(req.body)
        except A2ARPCError as exc:  # not JSON, or no JSON-RPC request
            await self._error(send, codec, exc.request_id, AgentError(exc.code))
            return
        record.rpc_method = method
        op = codec.op_for(method)
        extension = self.config.methods.get(method) if op is None else None
        record.op = op.value if op is not None else "call" if extension is not None else None
        plan = await self._pre(record, req, send, req_id, codec)
        if plan is None:
            return
        if extension is not None:
            await self._call(extension, params, codec, plan, req_id, receive, send)
            return
        if op is None:
            await self._error(send, codec, req_id, AgentError(codes.METHOD_NOT_FOUND))
            return
        await self._answer(op, codec, lambda: params, plan, req_id, req, receive, send)

    async def _rest(
        self, req: HTTPRequest, record: RecordedRequest, receive: Receive, send: Send, sub: str
    ) -> None:
        codec = self.config.rest_codec
        assert codec is not None
        match = codec.route(req.method, sub)
        record.op = match.op.value if match is not None else None
        if match is None:
            await send_response(send, 404, b"Not Found", "text/plain")
            return
        if not match.allowed:
            await send_response(send, 405, b"Method Not Allowed", "text/plain")
            return
        plan = await self._pre(record, req, send, None, codec)
        if plan is None:
            return

        def params() -> Any:
            body: Any = None
            if req.method in ("POST", "PUT") and req.body.strip():
                try:
                    body = json.loads(req.body)
                except ValueError:
                    raise AgentError(codes.PARSE_ERROR) from None
                if not isinstance(body, dict):
                    raise InvalidParams("the body must be a JSON object")
            return match.params(req.query, body)

        await self._answer(match.op, codec, params, plan, None, req, receive, send)

    async def _answer(
        self,
        op: Op,
        codec: WireCodec,
        params: Callable[[], Any],
        plan: _Plan,
        req_id: Any,
        req: HTTPRequest,
        receive: Receive,
        send: Send,
    ) -> None:
        """Read the request's params, run ``op`` and write its answer (or its error)."""
        try:
            if (err := self._version_error(req)) is not None:
                raise err
            args = read_args(codec, op, params(), self.config.strict)
            if op.streams:
                events = self._open_stream(args, req)
                await self._stream(events, codec, plan, req_id, receive, send)
                return
            result = await self._run(op, args, req, receive)
        except AgentError as err:
            await self._error(send, codec, req_id, err)
            return
        except InvalidParams as exc:
            await self._error(send, codec, req_id, AgentError(codes.INVALID_PARAMS, str(exc)))
            return
        await send_json(send, 200, codec.encode_result(op, result, req_id), codec.content_type)

    # -- operations ---------------------------------------------------------------------

    def _open_stream(
        self, args: OpArgs, req: HTTPRequest
    ) -> MemoryObjectReceiveStream[StreamEvent]:
        if not self.config.streaming:
            raise AgentError(codes.UNSUPPORTED_OPERATION, "Streaming is not supported")
        if isinstance(args, TaskRef):
            return self.store.subscribe(args.task_id)
        assert isinstance(args, SendMessage)
        return self.store.start_send(args, req.headers)

    async def _run(self, op: Op, args: OpArgs, req: HTTPRequest, receive: Receive) -> Any:
        a, store = self.config, self.store
        if isinstance(args, SendMessage):
            return await self._send(args, req, receive)
        if isinstance(args, TaskRef):
            return trim_history(store.get(args.task_id), args.history_length)
        if isinstance(args, Cancel):
            return store.cancel(args.task_id)
        if isinstance(args, ListTasks):
            return self._list(args)
        if isinstance(args, PushCreate):
            return store.push_create(args.config)
        if isinstance(args, PushRef):
            if op is Op.PUSH_GET:
                return store.push_get(args.task_id, args.config_id)
            if op is Op.PUSH_LIST:
                return store.push_list(args.task_id)
            if args.config_id is None:
                raise InvalidParams("the push config's id is required")
            store.push_delete(args.task_id, args.config_id)
            return None
        if a.extended_card is None:
            if a.dialect == "1.0":
                raise AgentError(codes.UNSUPPORTED_OPERATION, "Extended agent card not supported")
            raise AgentError(codes.EXTENDED_CARD_NOT_CONFIGURED)
        return a.card(req.base_url, extended=True)

    def _list(self, args: ListTasks) -> TaskPage:
        tasks, token, size, total = self.store.list_tasks(
            context_id=args.context_id,
            state=args.status,
            page_size=args.limit,
            page_token=args.cursor,
            updated_after=args.updated_after,
        )
        for i, task in enumerate(tasks):
            tasks[i] = trim_history(task, args.history_length)
            if not args.include_artifacts:
                tasks[i].artifacts = []
        return TaskPage(tasks, token or None, total_size=total, page_size=size)

    @asynccontextmanager
    async def _guard(self, receive: Receive) -> AsyncIterator[_Guard]:
        """Cancel the body when the client disconnects or the agent stops."""
        guard = _Guard()
        closing = self.store.closing

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

    async def _send(self, args: SendMessage, req: HTTPRequest, receive: Receive) -> Any:
        """A (blocking or not) send: wait for the first snapshot or a final event."""
        events = self.store.start_send(args, req.headers)
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
                        if not args.config.blocking or self.config.answers_at_once:
                            result = event
                            break
                    elif _is_final(event):
                        break
        if result is None:
            if task_id is None:
                raise AgentError(codes.INTERNAL_ERROR, "the agent stopped")
            result = self.store.get(task_id)
        if isinstance(result, Task):
            result = trim_history(result, args.config.history_length)
        return result

    async def _stream(
        self,
        events: MemoryObjectReceiveStream[StreamEvent],
        codec: WireCodec,
        plan: _Plan,
        req_id: Any,
        receive: Receive,
        send: Send,
    ) -> None:
        """Write the events as SSE until a final one (or a cut)."""
        store = self.store

        async def payloads() -> AsyncGenerator[tuple[Any, bool], None]:
            with events:  # closed with the generator: before the body's end is sent
                async for event in events:
                    if codec.version == "legacy" and isinstance(event, Task):
                        continue  # legacy streams carry no task snapshot
                    task = None
                    if isinstance(event, TaskArtifactUpdateEvent):
                        task = store.live(event.task_id)
                    yield codec.encode_event(event, req_id, task), _is_final(event)

        with events:  # here too, for a generator that never ran
            await self._write_sse(payloads(), plan, receive, send)

    async def _call(
        self,
        method: Method,
        params: Any,
        codec: WireCodec,
        plan: _Plan,
        req_id: Any,
        receive: Receive,
        send: Send,
    ) -> None:
        """Run an extension method: its result as a JSON-RPC answer, or, from an async
        generator, each value as one event of a stream (an ``AgentError`` raised there as
        the last event)."""
        try:
            outcome = method(params)
            if inspect.isasyncgen(outcome):
                await self._write_sse(_results(outcome, codec, req_id), plan, receive, send)
                return
            if inspect.isawaitable(outcome):
                outcome = await outcome
        except AgentError as err:
            await self._error(send, codec, req_id, err)
            return
        body = codec.encode_result(Op.CALL, outcome, req_id)
        await send_json(send, 200, body, codec.content_type)

    async def _write_sse(
        self,
        payloads: AsyncGenerator[tuple[Any, bool], None],
        plan: _Plan,
        receive: Receive,
        send: Send,
    ) -> None:
        """Write each payload as one event, until the one marked last (or a cut); the
        payloads are closed before the end of the body is sent."""
        await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
        count = 0
        reset = False
        async with aclosing(payloads), self._guard(receive):
            async for payload, last in payloads:
                if plan.event_delay:
                    await anyio.sleep(plan.event_delay)
                data = b"data: " + dumps(payload) + b"\n\n"
                await send({"type": "http.response.body", "body": data, "more_body": True})
                count += 1
                if last:
                    break
                if plan.cut_after is not None and count >= plan.cut_after:
                    reset = plan.reset
                    break
        if reset:
            raise _Reset("connection reset by the cut fault")
        await send({"type": "http.response.body", "body": b"", "more_body": False})


async def _results(
    values: AsyncGenerator[Any, Any], codec: WireCodec, req_id: Any
) -> AsyncGenerator[tuple[Any, bool], None]:
    """The events of a streamed extension method: each value in a result envelope, an
    ``AgentError`` in an error one."""
    async with aclosing(values):
        try:
            async for value in values:
                yield codec.encode_result(Op.CALL, value, req_id), False
        except AgentError as err:
            yield codec.encode_error(err.code, err.message, err.metadata, req_id)[1], True
