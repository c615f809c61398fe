"""a2a_anyio.push: receive A2A push notifications (the ``push`` extra).

``PushReceiver`` is an ASGI app: mount it in Starlette or FastAPI, or serve it on its own with
``async with receiver.serve() as url``. It accepts both notification forms:

* v0.3 (and earlier): the body is the whole Task, the token is in ``X-A2A-Notification-Token``;
* v1.0: the body is a ``StreamResponse`` (``{"task"}``, ``{"statusUpdate"}``...), the token is
  in ``Authorization`` (the scheme and credentials of the push config; the token header is
  accepted too).

It answers 401 unless the token is one the receiver issued (``new_config``, ``expect``,
``watch``) for that task, or its receiver-wide ``token``. Each accepted notification is decoded
into the library's model and handed to the handlers of its type
(``register_push_handler(Task, callback)``, ``"*"`` for all), to the handlers of its task
(``add_task_handler``), and to ``async for`` consumers (``subscribe``, ``watch``)::

    receiver = PushReceiver()
    async with receiver.serve():
        task = await client.send_message("long job", blocking=False)
        async with receiver.watch(client, task.id) as notifications:
            async for event in notifications:      # ends after a terminal state
                print(event)
"""

from __future__ import annotations

import inspect
import math
import secrets
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import anyio
import httpx
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from a2a_anyio._dialects import v03, v1
from a2a_anyio._errors import A2AClientError, A2AProtocolError
from a2a_anyio._model import (
    JSONDict,
    Message,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_anyio.testing._asgi import (
    HTTPRequest,
    Receive,
    Scope,
    Send,
    lifespan,
    send_json,
    send_response,
    serve_app,
)

if TYPE_CHECKING:
    from a2a_anyio._client import A2AClient

__all__ = ["PushNotification", "PushReceiver"]

E = TypeVar("E", Task, Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent)
Callback = Callable[[Any], Any]
_V1_KEYS = ("task", "message", "statusUpdate", "artifactUpdate", "status_update", "artifact_update")


@dataclass(slots=True)
class PushNotification:
    """One accepted notification: the decoded ``event``, the task it is about, its ``form``
    ("0.3": a Task body; "1.0": a StreamResponse body), the token it carried, and the raw
    request."""

    event: StreamEvent
    task_id: str | None
    form: Literal["0.3", "1.0"]
    token: str | None
    headers: dict[str, str] = field(repr=False)
    body: JSONDict = field(repr=False)

    @property
    def state(self) -> TaskState | None:
        """The task state it reports, if it reports one."""
        if isinstance(self.event, Task):
            return self.event.status.state
        if isinstance(self.event, TaskStatusUpdateEvent):
            return self.event.status.state
        return None

    @property
    def is_terminal(self) -> bool:
        """True when it reports a terminal state (completed, canceled, failed, rejected)."""
        state = self.state
        return state is not None and state.is_terminal


def _task_id(event: StreamEvent) -> str | None:
    if isinstance(event, Task):
        return event.id
    if isinstance(event, Message):
        return event.task_id
    return event.task_id


def decode_notification(body: Any) -> tuple[StreamEvent, Literal["0.3", "1.0"]]:
    """The event a notification body carries, and its form (``A2AProtocolError`` if none)."""
    if not isinstance(body, dict):
        raise A2AProtocolError("a push notification body is a JSON object")
    if any(key in body for key in _V1_KEYS):
        return v1.decode_stream_response(body), "1.0"
    event = v03.decode_result(body)
    if isinstance(event, Task) and event.context_id is None:
        session = body.get("sessionId")  # the legacy dialect's name for the context
        if isinstance(session, str):
            event.context_id = session
    return event, "0.3"


class _Subscription:
    """An ``async for`` view of one subscriber queue."""

    def __init__(self, stream: MemoryObjectReceiveStream[StreamEvent], until_terminal: bool):
        self._stream = stream
        self._until_terminal = until_terminal
        self._done = False

    def __aiter__(self) -> _Subscription:
        return self

    async def __anext__(self) -> StreamEvent:
        if self._done:
            raise StopAsyncIteration
        try:
            event = await self._stream.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None
        if self._until_terminal and _terminal(event):
            self._done = True
        return event


def _terminal(event: StreamEvent) -> bool:
    if isinstance(event, (Task, TaskStatusUpdateEvent)):
        return event.status.state.is_terminal
    return False


class PushReceiver:
    """An ASGI app that receives A2A push notifications and routes them.

    ``token`` is accepted for every task; ``url`` is the address agents should post to when
    the receiver is mounted in another app (``serve()`` sets it while serving);
    ``require_token=False`` accepts notifications that carry no known token.
    """

    def __init__(
        self,
        *,
        token: str | None = None,
        url: str | None = None,
        require_token: bool = True,
    ) -> None:
        self.token = token
        self.require_token = require_token
        self._url = url.rstrip("/") if url else None
        self._served_url: str | None = None
        #: every notification accepted, in order
        self.received: list[PushNotification] = []
        #: how many notifications were refused (401) or unreadable (400)
        self.rejected = 0
        #: exceptions raised by handlers (the notification was then answered with 500)
        self.errors: list[BaseException] = []
        self._tokens: dict[str, str | None] = {}
        self._type_handlers: list[tuple[type[Any] | str, Callback]] = []
        self._task_handlers: dict[str, list[Callback]] = {}
        self._subscribers: list[tuple[str | None, MemoryObjectSendStream[StreamEvent]]] = []

    @property
    def url(self) -> str | None:
        """Where agents post: the served URL, else the ``url`` given."""
        return self._served_url or self._url

    # -- tokens -------------------------------------------------------------------------

    def expect(self, task_id: str | None = None, token: str | None = None) -> str:
        """Accept ``token`` (a fresh one when None) for ``task_id`` (None: any task); return it."""
        token = token or secrets.token_urlsafe(24)
        self._tokens[token] = task_id
        return token

    def forget(self, token: str) -> None:
        """Stop accepting ``token``."""
        self._tokens.pop(token, None)

    def new_config(
        self, task_id: str | None = None, token: str | None = None
    ) -> PushNotificationConfig:
        """A push config pointing at this receiver with a fresh token it accepts (also as
        ``Authorization: Bearer <token>``), to pass to ``create_push_config`` or a send."""
        url = self.url
        if url is None:
            raise RuntimeError("the receiver has no URL: serve() it or give url=")
        token = self.expect(task_id, token)
        return PushNotificationConfig(
            url=url, task_id=task_id, token=token, auth_scheme="Bearer", auth_credentials=token
        )

    def _authorized(self, headers: dict[str, str], task_id: str | None) -> tuple[bool, str | None]:
        """Whether the notification may pass, and the token that let it."""
        candidates = []
        if header := headers.get("x-a2a-notification-token"):
            candidates.append(header.strip())
        if auth := headers.get("authorization"):
            candidates.append(auth.split(" ", 1)[-1].strip())
        for token in candidates:
            if self.token is not None and secrets.compare_digest(token, self.token):
                return True, token
            for known, bound in self._tokens.items():
                if secrets.compare_digest(token, known) and bound in (None, task_id):
                    return True, token
        return not self.require_token and not candidates, None

    # -- handlers -----------------------------------------------------------------------

    @overload
    def register_push_handler(self, event_type: type[E], callback: Callable[[E], Any]) -> None: ...

    @overload
    def register_push_handler(
        self, event_type: Literal["*"], callback: Callable[[StreamEvent], Any]
    ) -> None: ...

    def register_push_handler(self, event_type: Any, callback: Callable[[Any], Any]) -> None:
        """Call ``callback(event)`` (sync or async) for each notification of ``event_type``:
        ``Task``, ``TaskStatusUpdateEvent``, ``TaskArtifactUpdateEvent``, ``Message`` or
        ``"*"`` for every one."""
        if event_type != "*" and event_type not in (
            Task,
            Message,
            TaskStatusUpdateEvent,
            TaskArtifactUpdateEvent,
        ):
            raise ValueError(f"not an A2A event type: {event_type!r}")
        self._type_handlers.append((event_type, callback))

    def unregister_push_handler(self, event_type: Any, callback: Callable[[Any], Any]) -> None:
        """Remove a handler registered with ``register_push_handler`` (ValueError if absent)."""
        self._type_handlers.remove((event_type, callback))

    def add_task_handler(self, task_id: str, callback: Callable[[StreamEvent], Any]) -> None:
        """Call ``callback(event)`` (sync or async) for each notification about ``task_id``."""
        self._task_handlers.setdefault(task_id, []).append(callback)

    def remove_task_handler(self, task_id: str, callback: Callable[[StreamEvent], Any]) -> None:
        """Remove a per-task handler (ValueError if absent)."""
        handlers = self._task_handlers.get(task_id, [])
        handlers.remove(callback)
        if not handlers:
            self._task_handlers.pop(task_id, None)

    @asynccontextmanager
    async def subscribe(
        self, task_id: str | None = None, *, until_terminal: bool = False
    ) -> AsyncIterator[_Subscription]:
        """``async for event in ...`` over the notifications (of ``task_id`` only, if given)
        accepted while the block runs; with ``until_terminal`` the iteration ends after a
        terminal state."""
        send, receive = anyio.create_memory_object_stream[StreamEvent](math.inf)
        entry = (task_id, send)
        self._subscribers.append(entry)
        try:
            with receive:
                yield _Subscription(receive, until_terminal)
        finally:
            self._subscribers.remove(entry)
            send.close()

    @asynccontextmanager
    async def watch(
        self,
        client: A2AClient,
        task_id: str,
        *,
        token: str | None = None,
        delete: bool = True,
    ) -> AsyncIterator[_Subscription]:
        """Create a push config on ``task_id`` pointing here (``client.create_push_config``)
        and iterate its notifications until the task reaches a terminal state. On exit the
        config is deleted (best effort) unless ``delete=False``."""
        config = self.new_config(task_id, token)
        assert config.token is not None
        try:
            async with self.subscribe(task_id, until_terminal=True) as events:
                created = await client.create_push_config(
                    task_id,
                    config.url,
                    token=config.token,
                    auth_scheme=config.auth_scheme,
                    auth_credentials=config.auth_credentials,
                )
                try:
                    yield events
                finally:
                    if delete and created.id:
                        with anyio.move_on_after(5, shield=True):
                            with suppress(A2AClientError):
                                await client.delete_push_config(task_id, created.id)
        finally:
            self.forget(config.token)

    # -- serving ------------------------------------------------------------------------

    @asynccontextmanager
    async def serve(self, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[str]:
        """Serve the receiver with hypercorn on ``host:port`` (0: a free port) in the caller's
        event loop (asyncio or trio); yields its URL."""
        async with serve_app(self, host, port) as url:
            self._served_url = url
            try:
                yield url
            finally:
                self._served_url = None

    def transport(self) -> httpx.ASGITransport:
        """An in-process httpx transport to this receiver (for an agent's push client)."""
        return httpx.ASGITransport(app=self)

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
        if req.method != "POST":
            await send_response(send, 405, b"Method Not Allowed", "text/plain")
            return
        try:
            body = req.json()
            event, form = decode_notification(body)
        except (ValueError, A2AProtocolError) as exc:
            self.rejected += 1
            await send_json(send, 400, {"error": f"not a push notification: {exc}"})
            return
        task_id = _task_id(event)
        allowed, token = self._authorized(req.headers, task_id)
        if not allowed:
            self.rejected += 1
            await send_json(
                send, 401, {"error": "unknown token"}, headers={"WWW-Authenticate": "Bearer"}
            )
            return
        notification = PushNotification(event, task_id, form, token, req.headers, body)
        self.received.append(notification)
        failed = await self._route(notification)
        await send_json(
            send, 500 if failed else 200, {} if not failed else {"error": "handler failed"}
        )

    async def _route(self, notification: PushNotification) -> bool:
        event = notification.event
        callbacks = [cb for kind, cb in self._type_handlers if kind == "*" or type(event) is kind]
        if notification.task_id is not None:
            callbacks += self._task_handlers.get(notification.task_id, [])
        failed = False
        for callback in callbacks:
            try:
                outcome = callback(event)
                if inspect.isawaitable(outcome):
                    await outcome
            except Exception as exc:
                self.errors.append(exc)
                failed = True
        for wanted, stream in list(self._subscribers):
            if wanted is None or wanted == notification.task_id:
                with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    stream.send_nowait(event)
        return failed
