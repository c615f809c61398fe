"""Streams of task events: ``async with client.stream_message(...) as stream``."""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, TypeVar

import anyio

from a2a_anyio import _retry
from a2a_anyio._dialects import Dialect
from a2a_anyio._dialects._jsonrpc import RequestId, decode_http, unwrap
from a2a_anyio._dialects.reducer import TaskReducer
from a2a_anyio._errors import (
    A2AClientError,
    A2AConnectionError,
    A2AHTTPError,
    A2AProtocolError,
    A2ARPCError,
    A2ATimeoutError,
)
from a2a_anyio._http import SSEConnection
from a2a_anyio._model import Message, StreamEvent, Task, TaskStatusUpdateEvent
from a2a_anyio._retry import NO_RETRY, RetryPolicy


@dataclass(slots=True)
class StreamWire:
    """An opened-to-be stream and how to read it in its binding.

    ``unwrap`` turns one event's JSON into a result (raising the error it may carry);
    ``answer`` decodes a plain HTTP answer given instead of a stream (status, body,
    Retry-After header).
    """

    conn: SSEConnection
    dialect: Dialect
    unwrap: Callable[[Any], Any]
    answer: Callable[[int, bytes, str | None], Any]


def jsonrpc_wire(conn: SSEConnection, dialect: Dialect, req_id: RequestId) -> StreamWire:
    """A stream of JSON-RPC responses to request ``req_id``."""
    return StreamWire(
        conn,
        dialect,
        lambda value: unwrap(value, req_id, version=dialect.version),
        lambda status, content, retry_after: decode_http(
            status, content, req_id, version=dialect.version, retry_after=retry_after
        ),
    )


#: Opens the HTTP stream: returns the connection (not yet entered) and how to read it.
Opener = Callable[[], Awaitable[StreamWire]]
T = TypeVar("T")

DEFAULT_RESUME_ATTEMPTS = 3


def ends_stream(event: StreamEvent, dialect: Dialect) -> bool:
    """True when ``event`` is the last of its stream, in any dialect."""
    if isinstance(event, TaskStatusUpdateEvent):
        return event.final
    if isinstance(event, Message):
        return True
    if isinstance(event, Task):
        state = event.status.state
        # v1.0 closes after a terminal or interrupted state; older dialects send final: true.
        return state.is_terminal or (dialect.version == "1.0" and state.is_interrupted)
    return False


def _is_cut(exc: BaseException) -> bool:
    """A broken connection (not a time limit): what re-attaching can repair."""
    return isinstance(exc, A2AConnectionError) and not isinstance(exc, A2ATimeoutError)


def _unrecovered(cut: A2AClientError, failure: A2AClientError) -> A2AClientError:
    """The cut that broke a stream, saying why it could not be repaired."""
    cut.message = f"{cut.message} (and the task could not be followed up: {failure.message})"
    return cut


class MessageStream:
    """The events of one streaming call, folded into ``task`` as they arrive.

    Use it as ``async with ... as stream: async for event in stream`` (the connection is
    released the moment the block exits) or as a plain ``async for`` (released on the final
    event, at the end of the body, on an error, or by ``aclose()``). The iteration ends after
    the event that finishes the interaction.

    A stream cut before that event (a broken connection, or a body that ends while the task
    still works) is re-attached with SubscribeToTask / ``tasks/resubscribe``: the Task snapshot
    that starts the new stream updates ``task`` without being delivered again, and events
    already delivered are dropped. When the agent cannot re-attach, ``get_task`` is polled and
    the task's final state is delivered as the last event. Without a way back (no task known
    yet, attempts spent, ``resume=False``) the cut raises ``A2AConnectionError``: a cut stream
    is never reported as a finished task.

    Like any iterator, one stream is read by one task at a time; to stop it from another task,
    cancel the reader's scope rather than calling ``aclose()`` while it reads.
    """

    def __init__(
        self,
        opener: Opener,
        *,
        idle_timeout: float | None = None,
        total_timeout: float | None = None,
        agent: str | None = None,
        method: str | None = None,
        retry: RetryPolicy = NO_RETRY,
        idempotent: bool = False,
        resubscribe: Callable[[str], Opener] | None = None,
        poll: Callable[[str], Awaitable[Task]] | None = None,
        resume_attempts: int = DEFAULT_RESUME_ATTEMPTS,
    ) -> None:
        self._opener = opener
        self.idle_timeout = idle_timeout
        self.total_timeout = total_timeout
        self.agent = agent
        self.method = method
        self.events: list[StreamEvent] = []
        #: How many times the stream was re-attached after a cut.
        self.resumes = 0
        self._retry = retry
        self._idempotent = idempotent
        self._resubscribe = resubscribe
        self._poll = poll
        self._resume_attempts = resume_attempts
        self._reducer = TaskReducer()
        self._conn: SSEConnection | None = None
        self._dialect: Dialect | None = None
        self._wire: StreamWire | None = None
        self._deadline = math.inf
        self._state = "new"  # new -> open -> done
        self._pending: StreamEvent | None = None
        self._polled: Task | None = None
        self._replaying = False  # just re-attached: a snapshot and replays may come first
        self._cut: A2AClientError | None = None  # what broke the stream last
        self._idle_scope: anyio.CancelScope | None = None
        self._scope_chunks = 0  # the connection's chunk count when the idle scope opened
        self._final_seen = False

    @property
    def task(self) -> Task | None:
        """The current task, folded from the events so far (None before any task event)."""
        return self._reducer.task

    @property
    def message(self) -> Message | None:
        """The agent's Message, when it answered with one instead of a task."""
        return self._reducer.message

    @property
    def finished(self) -> bool:
        """True once the final event has been received."""
        return self._final_seen

    async def __aenter__(self) -> MessageStream:
        await self._open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    def __aiter__(self) -> MessageStream:
        return self

    async def _open(self) -> None:
        if self._state != "new":
            return
        self._state = "open"
        if self.total_timeout is not None:
            self._deadline = anyio.current_time() + self.total_timeout
        try:
            # Retried only before the first event, and for a send only if it never left.
            await self._retry.run(
                lambda: self._connect(self._opener),
                operation=self.method or "stream",
                idempotent=self._idempotent,
            )
        except BaseException as exc:
            await self._fail(exc)
            raise

    async def _connect(self, opener: Opener) -> None:
        """Open one connection; a plain (non-streaming) answer is decoded here."""
        wire = await opener()
        conn = wire.conn
        self._wire, self._dialect = wire, wire.dialect
        conn.on_activity = self._touch
        try:
            await self._within(conn.__aenter__(), "stream-idle")
        except BaseException:
            await conn.aclose()
            raise
        resp = conn.error_response
        if resp is None:
            self._conn = conn
            return
        result = wire.answer(resp.status, resp.content, resp.headers.get("retry-after"))
        # A server that does not stream may answer with one plain result.
        self._pending = wire.dialect.decode_event(result)

    async def __anext__(self) -> StreamEvent:
        if self._state == "new":
            await self._open()
        try:
            while self._state != "done":
                try:
                    event = await self._read()
                except A2AClientError as exc:
                    refused = isinstance(exc, (A2ARPCError, A2AHTTPError))
                    if self._replaying and refused and self._poll is not None:
                        await self._poll_final(self._cut or exc)  # re-attached, then refused
                        continue
                    if not (_is_cut(exc) and self._can_resume()):
                        raise
                    await self._recover(exc)
                    continue
                if event is None:  # the body ended
                    task = self._reducer.task
                    if task is not None and task.status.state.is_final:
                        # Some servers close after an interrupted state without a final flag.
                        self._final_seen = True
                        break
                    cut = A2AConnectionError(
                        "the stream ended before the task reached a final state"
                    )
                    if not self._can_resume():
                        raise cut
                    await self._recover(cut)
                    continue
                if self._replaying and self._is_replay(event):
                    continue
                return await self._accept(event)
        except BaseException as exc:
            await self._fail(exc)
            raise
        await self.aclose()
        raise StopAsyncIteration

    async def _read(self) -> StreamEvent | None:
        """The next event off the wire (or the pending one); None when the body ended."""
        if self._pending is not None:
            event, self._pending = self._pending, None
            return event
        if self._conn is None:
            return None
        assert self._dialect is not None and self._wire is not None
        sse = await self._within(self._conn.next_event(), "stream-idle")
        if sse is None:
            return None
        try:
            value = json.loads(sse.data)
        except (ValueError, RecursionError) as exc:
            raise A2AProtocolError(f"stream event is not JSON: {sse.data[:120]!r}") from exc
        return self._dialect.decode_event(self._wire.unwrap(value))

    async def _accept(self, event: StreamEvent) -> StreamEvent:
        assert self._dialect is not None
        self.events.append(event)
        self._reducer.apply(event)
        if event is self._polled or ends_stream(event, self._dialect):
            self._final_seen = True
            await self.aclose()
        return event

    # -- resuming ---------------------------------------------------------------------------

    def _can_resume(self) -> bool:
        return (
            self._resubscribe is not None
            and self._reducer.task is not None
            and self._reducer.message is None
        )

    async def _recover(self, cause: A2AClientError) -> None:
        """Re-attach to the task after a cut (bounded, with backoff), else poll its end."""
        task = self._reducer.task
        assert task is not None and self._resubscribe is not None
        await self._drop_connection()
        while True:
            if self.resumes >= self._resume_attempts:
                cause.message = f"{cause.message} (re-attaching failed {self.resumes} times)"
                raise cause
            self.resumes += 1
            if _retry.delays_enabled():
                await anyio.sleep(self._retry.delay(self.resumes, cause))
            try:
                await self._connect(self._resubscribe(task.id))
            except A2AClientError as exc:
                if _is_cut(exc):
                    continue
                if self._poll is None:
                    raise _unrecovered(cause, exc) from cause.__cause__
                await self._poll_final(cause)  # the agent cannot re-attach: ask it instead
                return
            self._cut = cause
            self._replaying = True
            return

    async def _poll_final(self, cause: A2AClientError) -> None:
        """Wait for the task's final state by polling; else fail with the cut ``cause``."""
        task = self._reducer.task
        assert task is not None
        assert self._poll is not None
        await self._drop_connection()
        self._replaying = False
        with anyio.CancelScope(deadline=self._deadline) as scope:
            try:
                self._polled = self._pending = await self._poll(task.id)
            except A2AClientError as exc:
                raise _unrecovered(cause, exc) from cause.__cause__
        if scope.cancelled_caught:
            raise A2ATimeoutError(
                f"stream deadline timeout: nothing within {self.total_timeout}s",
                timeout="deadline",
            )

    def _is_replay(self, event: StreamEvent) -> bool:
        """After re-attaching: drop the leading snapshot (folded quietly) and repeats."""
        assert self._dialect is not None
        if isinstance(event, Task) and not ends_stream(event, self._dialect):
            self._reducer.apply(event)
            return True
        if event.raw is not None and any(e.raw == event.raw for e in self.events):
            return True
        self._replaying = False
        return False

    async def _drop_connection(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.aclose()

    # -- time limits, failure, closing ------------------------------------------------------

    async def _within(self, awaitable: Awaitable[T], which: str) -> T:
        """Await within the idle limit and the total deadline, whichever is nearer.

        Bytes arriving on the connection (keep-alive comments too) push the idle limit back.
        """
        idle = self.idle_timeout if self.idle_timeout is not None else math.inf
        with anyio.CancelScope(deadline=min(anyio.current_time() + idle, self._deadline)) as scope:
            self._idle_scope = scope
            self._scope_chunks = self._conn.chunks if self._conn is not None else 0
            try:
                return await awaitable
            finally:
                self._idle_scope = None
        expired = "deadline" if anyio.current_time() >= self._deadline else which
        secs = self.total_timeout if expired == "deadline" else self.idle_timeout
        raise A2ATimeoutError(f"stream {expired} timeout: nothing within {secs}s", timeout=expired)

    def _touch(self) -> None:
        """The reader waits again after a chunk: the idle limit counts from now.

        Moving a deadline costs a timer reschedule, so it is done only when a chunk came in
        while this scope was already waiting (an event split over chunks, a keep-alive
        comment); a scope opened after the last chunk already counts from its own start.
        """
        scope = self._idle_scope
        conn = self._conn
        if scope is None or self.idle_timeout is None or conn is None:
            return
        if conn.chunks != self._scope_chunks:
            self._scope_chunks = conn.chunks
            scope.deadline = min(anyio.current_time() + self.idle_timeout, self._deadline)

    async def _fail(self, exc: BaseException) -> None:
        await self.aclose()
        if isinstance(exc, A2AClientError):
            exc.events = list(self.events)
            exc.agent = exc.agent or self.agent
            exc.method = exc.method or self.method

    async def result(self) -> Task | Message:
        """Consume the rest of the stream; the final Task, or the agent's Message."""
        async for _ in self:
            pass
        if self._reducer.message is not None:
            return self._reducer.message
        if self._reducer.task is None:
            raise A2AProtocolError("the stream carried no task and no message")
        return self._reducer.task

    async def aclose(self) -> None:
        """Release the connection now; iteration stops. Safe to call more than once."""
        self._state = "done"
        await self._drop_connection()
