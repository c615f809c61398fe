"""Streams of task events: ``async with client.stream_message(...) as stream``."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import Any, TypeVar

import anyio

from a2a_anyio import _retry
from a2a_anyio._dialects import EventDecoder, WireCodec, WireRequest
from a2a_anyio._dialects.reducer import TaskReducer
from a2a_anyio._errors import (
    A2AClientError,
    A2AConnectionError,
    A2AHTTPError,
    A2AProtocolError,
    A2ARPCError,
    A2ATimeoutError,
)
from a2a_anyio._http import RawResponse
from a2a_anyio._http_sse import SSEConnection
from a2a_anyio._model import Message, StreamEvent, Task
from a2a_anyio._retry import NO_RETRY, RetryPolicy


class StreamWire:
    """An opened-to-be stream and how to read it: the connection (not yet entered), and the
    codec and request whose events and plain answers it decodes."""

    __slots__ = ("codec", "conn", "events", "request")

    def __init__(self, conn: SSEConnection, codec: WireCodec, request: WireRequest[Any]) -> None:
        self.conn = conn
        self.codec = codec
        self.request = request
        self.events = codec.event_decoder(request)

    def answer(self, resp: RawResponse) -> StreamEvent:
        """The one event of a plain (non-stream) answer, or the error it carries raised."""
        event: StreamEvent = self.codec.decode(
            self.request, resp.status, resp.headers, resp.content
        )
        return event


#: Opens the HTTP stream: returns the connection (not yet entered) and how to read it.
Opener = Callable[[], Awaitable[StreamWire]]
T = TypeVar("T")

DEFAULT_RESUME_ATTEMPTS = 3
#: How many of the latest events a stream keeps in ``events`` (None: all of them).
DEFAULT_KEEP_EVENTS = 100


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
        keep_events: int | None = DEFAULT_KEEP_EVENTS,
    ) -> None:
        self._opener = opener
        self.idle_timeout = idle_timeout
        self.total_timeout = total_timeout
        self.agent = agent
        self.method = method
        self._keep = keep_events
        self._events: list[StreamEvent] = []  # up to twice ``keep_events``, trimmed in bulk
        #: How many times the stream was re-attached after a cut.
        self.resumes = 0
        self._retry = retry
        self._idempotent = idempotent
        self._resubscribe = resubscribe
        self._poll = poll
        self._resume_attempts = resume_attempts
        self._reducer = TaskReducer()
        self._conn: SSEConnection | None = None
        self._events_in: EventDecoder | None = None
        self._deadline = math.inf
        self._state = "new"  # new -> open -> done
        self._pending: StreamEvent | None = None
        self._polled: Task | None = None
        self._replaying = False  # just re-attached: a snapshot and replays may come first
        self._cut: A2AClientError | None = None  # what broke the stream last
        self._idle_scope: anyio.CancelScope | None = None
        self._guarded = True  # reads need a scope of ours for the idle limit or the deadline
        self._final_seen = False

    @property
    def task(self) -> Task | None:
        """The current task, folded from the events so far (None before any task event)."""
        return self._reducer.task

    @property
    def events(self) -> list[StreamEvent]:
        """The events delivered so far, the latest ``keep_events`` of them (a copy).

        Keeping every event of a long stream would grow without bound (``task`` already
        holds what they add up to); ``keep_events=None`` keeps them all.
        """
        if self._keep is None:
            return list(self._events)
        return self._events[-self._keep :] if self._keep else []

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
        self._events_in = wire.events
        conn.on_activity = self._touch
        conn.idle_timeout = self.idle_timeout
        try:
            await self._within(conn.__aenter__(), "stream-idle")
        except BaseException:
            await conn.aclose()
            raise
        resp = conn.error_response
        if resp is None:
            self._conn = conn
            # A cancel scope per read costs more than decoding the event: it is entered only
            # for a limit no one else enforces.
            idle_enforced = conn.idle_by_transport or self.idle_timeout is None
            self._guarded = not idle_enforced or self._deadline != math.inf
            return
        # A server that does not stream may answer with one plain result.
        self._pending = wire.answer(resp)

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
                if self._accept(event):
                    await self.aclose()
                return event
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
        assert self._events_in is not None
        if self._guarded:
            data = await self._within(self._conn.next_event(), "stream-idle")
        else:
            data = await self._conn.next_event()  # no limit of ours to watch: no scope needed
        if data is None:
            return None
        return self._events_in.decode(data)

    def _accept(self, event: StreamEvent) -> bool:
        """Record and fold ``event``; True when it is the last."""
        assert self._events_in is not None
        keep = self._keep
        if keep is None or keep:
            events = self._events
            events.append(event)
            if keep is not None and len(events) > 2 * keep:
                del events[:-keep]
        self._reducer.apply(event)
        if event is self._polled or self._events_in.ends(event):
            self._final_seen = True
        return self._final_seen

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
        """Wait for the task's final state by polling, within the idle limit and the total
        deadline (a task that never finishes ends the stream there); else fail with the cut
        ``cause``."""
        task = self._reducer.task
        assert task is not None
        assert self._poll is not None
        await self._drop_connection()
        self._replaying = False
        with anyio.CancelScope(deadline=self._wait_deadline()) as scope:
            try:
                self._polled = self._pending = await self._poll(task.id)
            except A2AClientError as exc:
                raise _unrecovered(cause, exc) from cause.__cause__
        if scope.cancelled_caught:
            raise self._expired("stream-idle")

    def _is_replay(self, event: StreamEvent) -> bool:
        """After re-attaching: drop the leading snapshot (folded quietly) and repeats."""
        assert self._events_in is not None
        if isinstance(event, Task) and not self._events_in.ends(event):
            self._reducer.apply(event)
            return True
        if event.raw is not None and any(e.raw == event.raw for e in self._events):
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
        with anyio.CancelScope(deadline=self._wait_deadline()) as scope:
            self._idle_scope = scope
            try:
                return await awaitable
            finally:
                self._idle_scope = None
        raise self._expired(which)

    def _expired(self, which: str) -> A2ATimeoutError:
        """The time limit that ended a wait: the total deadline if it passed, else ``which``."""
        expired = "deadline" if anyio.current_time() >= self._deadline else which
        secs = self.total_timeout if expired == "deadline" else self.idle_timeout
        return A2ATimeoutError(f"stream {expired} timeout: nothing within {secs}s", timeout=expired)

    def _wait_deadline(self) -> float:
        if self.idle_timeout is None:
            return self._deadline
        return min(anyio.current_time() + self.idle_timeout, self._deadline)

    def _touch(self) -> None:
        """The reader waits again after a chunk: the idle limit counts from now."""
        if self._idle_scope is not None and self.idle_timeout is not None:
            self._idle_scope.deadline = self._wait_deadline()

    async def _fail(self, exc: BaseException) -> None:
        await self.aclose()
        if isinstance(exc, A2AClientError):
            exc.events = self.events
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
