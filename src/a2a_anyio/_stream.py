"""Streams of task events: ``async with client.stream_message(...) as stream``."""

from __future__ import annotations

import json
import math
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TypeVar

import anyio

from a2a_anyio._dialects import Dialect
from a2a_anyio._dialects._jsonrpc import RequestId, decode_http, unwrap
from a2a_anyio._dialects.reducer import TaskReducer
from a2a_anyio._errors import A2AClientError, A2AConnectionError, A2AProtocolError, A2ATimeoutError
from a2a_anyio._http import SSEConnection
from a2a_anyio._model import Message, StreamEvent, Task, TaskStatusUpdateEvent

#: Opens the HTTP stream: returns the connection (not yet entered), the dialect and request id.
Opener = Callable[[], Awaitable[tuple[SSEConnection, Dialect, RequestId]]]
T = TypeVar("T")


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


class MessageStream:
    """The events of one streaming call, folded into ``task`` as they arrive.

    Use it as ``async with ... as stream: async for event in stream`` (the connection is
    released the moment the block exits) or as a plain ``async for`` (released on the final
    event, at the end of the body, on an error, or by ``aclose()``). The iteration ends after
    the event that finishes the interaction; a body that ends before it raises
    ``A2AConnectionError``, because a cut stream is not a finished task. Like any iterator, one
    stream is read by one task at a time; to stop it from another task, cancel the reader's
    scope rather than calling ``aclose()`` while it reads.
    """

    def __init__(
        self,
        opener: Opener,
        *,
        idle_timeout: float | None = None,
        total_timeout: float | None = None,
        agent: str | None = None,
        method: str | None = None,
    ) -> None:
        self._opener = opener
        self.idle_timeout = idle_timeout
        self.total_timeout = total_timeout
        self.agent = agent
        self.method = method
        self.events: list[StreamEvent] = []
        self._reducer = TaskReducer()
        self._conn: SSEConnection | None = None
        self._dialect: Dialect | None = None
        self._req_id: RequestId = 0
        self._deadline = math.inf
        self._state = "new"  # new -> open -> done
        self._pending: StreamEvent | None = None
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
            conn, self._dialect, self._req_id = await self._opener()
            self._conn = conn
            await self._within(conn.__aenter__(), "stream-idle")
            if conn.error_response is not None:
                resp = conn.error_response
                result = decode_http(
                    resp.status, resp.content, self._req_id, version=self._dialect.version
                )
                # A server that does not stream may answer with one plain result.
                self._pending = self._dialect.decode_event(result)
        except BaseException as exc:
            await self._fail(exc)
            raise

    async def __anext__(self) -> StreamEvent:
        if self._state == "new":
            await self._open()
        if self._state == "done":
            raise StopAsyncIteration
        assert self._dialect is not None
        pending = self._pending
        try:
            if pending is not None:
                self._pending = None
                return await self._accept(pending, self._dialect)
            if self._conn is None:
                raise StopAsyncIteration
            sse = await self._within(self._conn.next_event(), "stream-idle")
            if sse is None:
                task = self._reducer.task
                if task is not None and task.status.state.is_final:
                    # Some servers close after an interrupted state without a final flag.
                    self._final_seen = True
                    await self.aclose()
                    raise StopAsyncIteration
                raise A2AConnectionError("the stream ended before the task reached a final state")
            try:
                value = json.loads(sse.data)
            except ValueError as exc:
                raise A2AProtocolError(f"stream event is not JSON: {sse.data[:120]!r}") from exc
            result = unwrap(value, self._req_id, version=self._dialect.version)
            return await self._accept(self._dialect.decode_event(result), self._dialect)
        except BaseException as exc:
            await self._fail(exc)
            raise

    async def _accept(self, event: StreamEvent, dialect: Dialect) -> StreamEvent:
        self.events.append(event)
        self._reducer.apply(event)
        if ends_stream(event, dialect):
            self._final_seen = True
            await self.aclose()
        return event

    async def _within(self, awaitable: Awaitable[T], which: str) -> T | None:
        """Await with the idle limit and the total deadline, whichever is nearer."""
        now = anyio.current_time()
        idle = self.idle_timeout if self.idle_timeout is not None else math.inf
        limit = min(idle, self._deadline - now)
        expired = "deadline" if self._deadline - now <= idle else which
        with anyio.move_on_after(limit if limit != math.inf else None) as scope:
            return await awaitable
        if scope.cancelled_caught:
            secs = self.total_timeout if expired == "deadline" else self.idle_timeout
            raise A2ATimeoutError(
                f"stream {expired} timeout: nothing within {secs}s", timeout=expired
            )
        return None  # pragma: no cover - move_on_after either returns or marks cancelled

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
        conn, self._conn = self._conn, None
        if conn is not None:
            await conn.aclose()
