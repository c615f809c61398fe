"""a2a_anyio.push: receive A2A push notifications (the ``push`` extra).

``PushReceiver`` is an ASGI app: mount it in Starlette or FastAPI, or serve it on its own with
``async with receiver.serve() as url``. It accepts both notification forms:

* v0.3 (and earlier): the body is the whole Task, the token is in ``X-A2A-Notification-Token``;
* v1.0: the body is a ``StreamResponse`` (``{"task"}``, ``{"statusUpdate"}``...), the token is
  in ``Authorization`` (the scheme and credentials of the push config; the token header is
  accepted too).

It answers 401 unless the token is one the receiver issued (``new_config``, ``expect``,
``watch``) for that task, or its receiver-wide ``token``. With a ``PushVerifier``, the
notification must also carry a JWT that proves its sender (signed by the agent's key or with a
shared secret), checked before the body is read (401 or 403, a ``PushAuthError`` kept in
``refused``). Each accepted notification is decoded into the library's model and handed to the
handlers of its type (``register_push_handler(Task, callback)``, ``"*"`` for all), to the
handlers of its task (``add_task_handler``), and to ``async for`` consumers (``subscribe``,
``watch``)::

    receiver = PushReceiver()
    async with receiver.serve():
        task = await client.send_message("long job", blocking=False)
        async with receiver.watch(client, task.id) as notifications:
            async for event in notifications:      # ends after a terminal state
                print(event)
"""

from __future__ import annotations

import inspect
import logging
import math
import re
import secrets
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar, overload

import anyio
import httpx
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from a2a_anyio._asgi import (
    ASGIMessage,
    Receive,
    Scope,
    Send,
    lifespan,
    send_json,
    send_response,
    serve_app,
)
from a2a_anyio._decoding import BodyDecoder, UndecodableBody
from a2a_anyio._dialects import v03, v1
from a2a_anyio._errors import A2AClientError, A2AProtocolError, shown
from a2a_anyio._http import DEFAULT_MAX_EVENT_BYTES
from a2a_anyio._limits import MAX_JSON_DEPTH, loads
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
from a2a_anyio._push_verify import PushAuthError, PushVerifier, VerifiedPush

if TYPE_CHECKING:
    from a2a_anyio._client import A2AClient

__all__ = ["PushAuthError", "PushNotification", "PushReceiver", "PushVerifier", "VerifiedPush"]

LOGGER = logging.getLogger("a2a_anyio.push")
#: How many refusals ``PushReceiver.refused`` keeps (the latest).
MAX_REFUSALS_KEPT = 100

E = TypeVar("E", Task, Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent)
Callback = Callable[[Any], Any]
_V1_KEYS = ("task", "message", "statusUpdate", "artifactUpdate", "status_update", "artifact_update")


@dataclass(slots=True)
class PushNotification:
    """One accepted notification: the decoded ``event``, the task it is about, its ``form``
    ("0.3": a Task body; "1.0": a StreamResponse body), the token it carried, the raw
    request, and what proved its sender (``verified``, with a ``PushVerifier``)."""

    event: StreamEvent
    task_id: str | None
    form: Literal["0.3", "1.0"]
    token: str | None
    headers: dict[str, str] = field(repr=False)
    body: JSONDict = field(repr=False)
    verified: VerifiedPush | None = field(default=None, repr=False)

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


_DIGITS = re.compile(r"[0-9]{1,18}")
#: What is read, unparsed, of a refused post's body once it is answered (``_discarding``).
DISCARD_BYTES = 64 * 1024 * 1024
DISCARD_SECONDS = 10.0


def _discarding(send: Send, receive: Receive) -> Send:
    """``send`` for the answer to a refused post whose body is unread: the answer goes
    whole at once, and its end (which lets the server close the connection) only once what
    is left of the body is read and dropped, unparsed. A sender may send its body whole
    before it reads the answer, and a connection closed with bytes unread is reset, the
    answer lost with it. Bounded by ``DISCARD_BYTES`` and ``DISCARD_SECONDS``: past them
    the connection is left to close."""

    async def held(message: ASGIMessage) -> None:
        if message["type"] != "http.response.body" or message.get("more_body", False):
            await send(message)
            return
        await send({**message, "more_body": True})
        size = 0
        with anyio.move_on_after(DISCARD_SECONDS):
            while size <= DISCARD_BYTES:
                request = await receive()
                if request["type"] != "http.request" or not request.get("more_body", False):
                    break
                size += len(request.get("body", b""))
        await send({"type": "http.response.body", "body": b"", "more_body": False})

    return held


class _Refused(Exception):
    """A post answered with a client error: its status, reason and extra headers."""

    def __init__(
        self,
        status: int,
        reason: str,
        headers: dict[str, str] | None = None,
        *,
        ended: bool = False,
    ) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.headers = headers
        self.ended = ended  # the request ended (nothing more to read)


def _headers(scope: Scope) -> dict[str, str]:
    headers: dict[str, str] = {}
    for raw_name, raw_value in scope.get("headers", []):
        name = raw_name.decode("latin-1").lower()
        value = raw_value.decode("latin-1")
        headers[name] = f"{headers[name]}, {value}" if name in headers else value
    return headers


def _same(sent: str, token: str) -> bool:
    """A token from a header (latin-1 text of its bytes) against an accepted one, in
    constant time, whatever characters either holds."""
    return secrets.compare_digest(
        sent.encode("latin-1", "replace"), token.encode("utf-8", "surrogatepass")
    )


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
    ``require_token=False`` accepts notifications that carry no token (the default with a
    ``verifier``). ``verifier``: a ``PushVerifier`` that every notification must satisfy
    (its JWT is then in ``Authorization``, its token, if any, in
    ``X-A2A-Notification-Token``); each refusal is logged (logger ``a2a_anyio.push``) and
    kept in ``refused`` (the latest 100). A post is read only once its token and signature
    are checked (else 401 or 403), up to ``max_body_bytes`` as sent and as decoded
    (gzip, deflate; else 413) and ``max_depth`` levels of JSON (else 400). A refused post
    is answered at once; what is left of its body is then dropped unparsed (bounded), so
    that a sender still sending it reads the answer.
    """

    def __init__(
        self,
        *,
        token: str | None = None,
        url: str | None = None,
        require_token: bool | None = None,
        max_body_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        max_depth: int = MAX_JSON_DEPTH,
        verifier: PushVerifier | None = None,
    ) -> None:
        self.token = token
        self.verifier = verifier
        self.require_token = verifier is None if require_token is None else require_token
        self.max_body_bytes = max_body_bytes
        self.max_depth = max_depth
        self._url = url.rstrip("/") if url else None
        self._served_url: str | None = None
        #: every notification accepted, in order
        self.received: list[PushNotification] = []
        #: how many posts were refused: no known token (401), too large (413), unreadable
        #: (400) or in an encoding it does not decode (415)
        self.rejected = 0
        #: exceptions raised by handlers (the notification was then answered with 500)
        self.errors: list[BaseException] = []
        #: the latest notifications refused by the ``verifier``, as typed errors
        self.refused: deque[PushAuthError] = deque(maxlen=MAX_REFUSALS_KEPT)
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
        ``Authorization: Bearer <token>``), to pass to ``create_push_config`` or a send.
        With a ``verifier``, the config asks the agent for scheme ``Bearer`` without
        credentials (the agent signs its own token) and the token goes in its own header.

        Raises:
            RuntimeError: the receiver has no URL: ``serve()`` it or give ``url=``.
        """
        url = self.url
        if url is None:
            raise RuntimeError("the receiver has no URL: serve() it or give url=")
        token = self.expect(task_id, token)
        return PushNotificationConfig(
            url=url,
            task_id=task_id,
            token=token,
            auth_scheme="Bearer",
            auth_credentials=None if self.verifier is not None else token,
        )

    def _known_tokens(self, headers: dict[str, str]) -> list[str]:
        """The tokens of a post that the receiver accepts for some task; ``_Refused(401)``
        when it carries none of them (and one is required, or it carries an unknown one)."""
        candidates = []
        if header := headers.get("x-a2a-notification-token"):
            candidates.append(header.strip())
        auth = headers.get("authorization")
        if auth and self.verifier is None:  # else it holds the signed token
            candidates.append(auth.split(" ", 1)[-1].strip())
        known = [
            token
            for token in candidates
            if (self.token is not None and _same(token, self.token))
            or any(_same(token, t) for t in self._tokens)
        ]
        if known or not (candidates or self.require_token):
            return known
        raise _Refused(401, "unknown token", {"WWW-Authenticate": "Bearer"})

    def _token_for(self, known: list[str], task_id: str | None) -> str | None:
        """The token among ``known`` that lets a notification about ``task_id`` pass."""
        for token in known:
            if self.token is not None and _same(token, self.token):
                return token
            for accepted, bound in self._tokens.items():
                if _same(token, accepted) and bound in (None, task_id):
                    return token
        if known:
            raise _Refused(401, "unknown token", {"WWW-Authenticate": "Bearer"})
        return None

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
        ``"*"`` for every one.

        Raises:
            ValueError: not an A2A event type, nor ``"*"``.
        """
        if event_type != "*" and event_type not in (
            Task,
            Message,
            TaskStatusUpdateEvent,
            TaskArtifactUpdateEvent,
        ):
            raise ValueError(f"not an A2A event type: {event_type!r}")
        self._type_handlers.append((event_type, callback))

    def unregister_push_handler(self, event_type: Any, callback: Callable[[Any], Any]) -> None:
        """Remove a handler registered with ``register_push_handler`` (ValueError if absent).

        Raises:
            ValueError: the handler is not registered.
        """
        self._type_handlers.remove((event_type, callback))

    def add_task_handler(self, task_id: str, callback: Callable[[StreamEvent], Any]) -> None:
        """Call ``callback(event)`` (sync or async) for each notification about ``task_id``."""
        self._task_handlers.setdefault(task_id, []).append(callback)

    def remove_task_handler(self, task_id: str, callback: Callable[[StreamEvent], Any]) -> None:
        """Remove a per-task handler (ValueError if absent).

        Raises:
            ValueError: the handler is not registered.
        """
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
        config is deleted (best effort) unless ``delete=False``.

        Raises:
            RuntimeError: the receiver has no URL.
            A2AClientError: ``client.create_push_config`` failed (``PushNotificationNotSupportedError``,
                ``TaskNotFoundError``...).
        """
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
        event loop (asyncio or trio); yields its URL.

        Raises:
            RuntimeError: hypercorn is not installed (the ``push`` extra).
            OSError: the address cannot be bound.
        """
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
        if str(scope.get("method", "GET")).upper() != "POST":
            await send_response(send, 405, b"Method Not Allowed", "text/plain")
            return
        headers = _headers(scope)
        unread = True
        try:
            known = self._known_tokens(headers)  # before a byte of the body is read
            verified = await self._verified(headers)  # so is the signature
            body = await self._read_body(headers, receive)
            unread = False
            try:
                doc = loads(body, self.max_depth)
                event, form = decode_notification(doc)
            except (ValueError, A2AProtocolError) as exc:
                raise _Refused(400, f"not a push notification: {exc}") from None
            task_id = _task_id(event)
            token = self._token_for(known, task_id)
            if verified is not None and verified.task_id not in (None, task_id):
                raise self._refusal(
                    PushAuthError(
                        f"the token is for task {shown(verified.task_id)}, not this one",
                        reason="task",
                        status_code=403,
                    )
                )
        except _Refused as refused:
            self.rejected += 1
            if unread and not refused.ended:  # answered at once, the body dropped meanwhile
                send = _discarding(send, receive)
            await send_json(
                send, refused.status, {"error": refused.reason}, headers=refused.headers
            )
            return
        notification = PushNotification(event, task_id, form, token, headers, doc, verified)
        self.received.append(notification)
        failed = await self._route(notification)
        await send_json(
            send, 500 if failed else 200, {} if not failed else {"error": "handler failed"}
        )

    async def _verified(self, headers: dict[str, str]) -> VerifiedPush | None:
        """What proves the sender, by the ``verifier`` (None without one); ``_Refused``
        (401, 403, 429) when it proves nothing."""
        if self.verifier is None:
            return None
        try:
            return await self.verifier.verify(headers.get("authorization"), audience=self.url)
        except PushAuthError as exc:
            raise self._refusal(exc) from None

    def _refusal(self, error: PushAuthError) -> _Refused:
        self.refused.append(error)
        LOGGER.warning("push notification refused (%s): %s", error.reason, error.message)
        challenge = {"WWW-Authenticate": 'Bearer error="invalid_token"'}
        return _Refused(error.status_code, error.message, challenge)

    async def _read_body(self, headers: dict[str, str], receive: Receive) -> bytes:
        """The body, decoded; ``_Refused`` (400, 413, 415) when it is too large as sent or as
        decoded, or cannot be decoded. No step of the decoding makes more than the limit."""
        limit = self.max_body_bytes
        length = headers.get("content-length")
        if length is not None:
            if not _DIGITS.fullmatch(length.strip()):
                raise _Refused(400, "Content-Length is not a number")
            if int(length) > limit:
                raise _Refused(413, f"the body is larger than {limit} bytes")
        try:
            decoder = BodyDecoder(headers.get("content-encoding", ""))
        except UndecodableBody as exc:
            raise _Refused(415, exc.reason) from None
        chunks: list[bytes] = []
        size = made = 0
        try:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    raise _Refused(400, "the request ended before its body", ended=True)
                chunk: bytes = message.get("body", b"")
                size += len(chunk)
                if size > limit:
                    raise _Refused(413, f"the body is larger than {limit} bytes")
                for piece in decoder.feed(chunk):
                    made += len(piece)
                    if made > limit:
                        raise _Refused(413, f"the body is larger than {limit} bytes once decoded")
                    chunks.append(piece)
                if not message.get("more_body", False):
                    decoder.end()
                    return b"".join(chunks)
        except UndecodableBody as exc:
            raise _Refused(400, exc.reason) from None

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
