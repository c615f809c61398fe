"""Streams of task events: ``async with client.stream_message(...) as stream``."""

from __future__ import annotations

import functools
import math
import warnings
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any, NoReturn, Protocol, TypeVar

import anyio

from a2a_anyio import _retry
from a2a_anyio._abandon import CancelGuard, CancelOutcome
from a2a_anyio._bindings import WireCodec, WireRequest
from a2a_anyio._bindings.base import EventData
from a2a_anyio._deadline import sooner
from a2a_anyio._errors import (
    A2AAuthError,
    A2AClientError,
    A2AProtocolError,
    A2ATimeoutError,
    ErrorContext,
    clipped,
    instead,
)
from a2a_anyio._follower import (
    DEFAULT_KEEP_EVENTS,
    DEFAULT_RESUME_ATTEMPTS,
    DROP,
    Action,
    ActionKind,
    StreamFollower,
)
from a2a_anyio._model import Message, StreamEvent, Task
from a2a_anyio._observe import NO_SPAN, Observer, Span, redacted
from a2a_anyio._payloads import PayloadTypes
from a2a_anyio._retry import NO_RETRY, RetryPolicy
from a2a_anyio._transport import Messages, Reply


class StreamWire:
    """An opened-to-be stream and how to read it: the connection (not yet entered), and the
    codec and request whose events and plain answers it decodes, the data parts of both
    then decoded by the client's ``types``. ``fall_back(error)`` is told the error of a
    plain answer to a stream's first request: True when the client moved to another wire
    because of it, and the stream is to be opened again."""

    __slots__ = (
        "auth_failed",
        "codec",
        "conn",
        "decode",
        "events",
        "fall_back",
        "request",
        "types",
    )

    def __init__(
        self,
        conn: Messages,
        codec: WireCodec,
        request: WireRequest[Any],
        fall_back: Callable[[A2AClientError], bool] | None = None,
        types: PayloadTypes | None = None,
        auth_failed: Callable[[A2AAuthError], NoReturn] | None = None,
    ) -> None:
        self.conn = conn
        #: Raises an auth error of a plain answer as the client completes it (what the card
        #: asks for, how to give a token).
        self.auth_failed = auth_failed
        self.codec = codec
        self.request = request
        self.events = codec.event_decoder(request)
        self.fall_back = fall_back
        self.types = types
        #: One event from its SSE data (the event decoder's own when no type is registered).
        #: It holds no connection: the events a stream keeps are typed again with it.
        self.decode: Callable[[EventData], StreamEvent] = (
            _typed_by(self.events.decode, types, request.context) if types else self.events.decode
        )

    def _type(self, value: Any) -> None:
        if self.types:
            self.types.parts(value, self.request.context)

    def answer(self, resp: Reply) -> StreamEvent:
        """The one event of a plain (non-stream) answer, or the error it carries raised."""
        try:
            event: StreamEvent = self.codec.decode(
                self.request, resp.status, resp.headers, resp.content
            )
        except A2AAuthError as exc:
            if self.auth_failed is None:
                raise
            self.auth_failed(exc)
        self._type(event)
        return event


def _typed_by(
    decode: Callable[[EventData], StreamEvent], types: PayloadTypes, context: ErrorContext
) -> Callable[[EventData], StreamEvent]:
    """``decode``, and then the data parts decoded by ``types``."""

    def typed(data: EventData) -> StreamEvent:
        event = decode(data)
        types.parts(event, context)
        return event

    return typed


T = TypeVar("T")

#: Polling a task after a refused re-attach: the first wait and the longest.
POLL_INTERVAL = 0.2
MAX_POLL_INTERVAL = 2.0


@dataclass(frozen=True, slots=True)
class StreamLimits:
    """The limits of a stream.

    ``idle``: the longest wait for the next bytes; ``total``: the whole stream, its
    re-attaches and polls included; ``open``: each connection's answer head (or a plain
    answer whole); None: no limit. ``resume_attempts``: re-attaches after cuts;
    ``keep_events`` and ``max_bytes``: what ``events`` keeps and what the folded task may
    grow to. Polls wait ``poll_interval`` seconds, growing by half up to
    ``max_poll_interval``.
    """

    idle: float | None = None
    total: float | None = None
    open: float | None = None
    resume_attempts: int = DEFAULT_RESUME_ATTEMPTS
    keep_events: int | None = DEFAULT_KEEP_EVENTS
    max_bytes: int | None = None
    poll_interval: float = POLL_INTERVAL
    max_poll_interval: float = MAX_POLL_INTERVAL


class StreamHooks(Protocol):
    """Told of a stream's start, of each event it delivers and of its end (a client's
    interceptors)."""

    async def begin(self) -> None: ...

    async def event(self, event: StreamEvent) -> None: ...

    async def end(self, result: Task | Message | None, error: Exception | None) -> Exception | None:
        """The error the stream is to raise (None: it ends as it came)."""

    def left(self, exc: BaseException | None) -> None:
        """The stream ended by ``exc`` (a cancellation, Ctrl-C), or was left before its end
        (None, or the error of the block it was read in)."""


class StreamSource(ABC):
    """Where one stream's events come from: the request that opens it (``open``), the
    re-attach to its task (``reattach``, when ``reattaches``) and a look at the task
    (``poll``, when ``polls``). ``agent`` and ``method`` name it in errors and spans;
    ``retry`` and ``idempotent`` say how its first open is retried; ``hooks`` are told of
    what the stream does. ``task_id``: the task it is about from the start (a re-attach, a
    message that continues a task); ``cancel``: asks the agent to cancel a task the stream
    is left with (within the grace of such a cancel), None when it cannot."""

    agent: str | None
    method: str
    retry: RetryPolicy = NO_RETRY
    idempotent: bool = False
    reattaches: bool = False
    polls: bool = False
    hooks: StreamHooks | None = None
    task_id: str | None = None
    cancel: Callable[[str], Awaitable[Task]] | None = None

    @abstractmethod
    async def open(self, limits: StreamLimits) -> StreamWire:
        """The connection (not yet opened, within ``limits``) and how to read it."""

    def opened(self) -> None:  # noqa: B027 - most sources keep nothing for the first open
        """The stream is open: ``open`` is not called again, and what only it needed (the
        request, its message) may go."""

    async def reattach(self, task_id: str, limits: StreamLimits) -> StreamWire:
        """The connection re-attached to ``task_id``'s events."""
        raise NotImplementedError

    async def poll(self, task_id: str) -> Task:
        """The task as the agent reports it now."""
        raise NotImplementedError


class MessageStream:
    """The events of one streaming call, folded into ``task`` as they arrive.

    Use it as ``async with ... as stream: async for event in stream`` (the connection is
    released the moment the block exits) or as a plain ``async for`` (released on the final
    event, at the end of the body, on an error, or by ``aclose()``: a loop left by ``break``
    holds it until then, and a stream garbage-collected open emits a ``ResourceWarning``
    naming the agent). The iteration ends after the event that finishes the interaction.

    A stream cut before that event (a broken connection, or a body that ends while the task
    still works) is re-attached with SubscribeToTask / ``tasks/resubscribe``: the Task snapshot
    that starts the new stream updates ``task`` without being delivered again, and events
    already delivered are dropped. When the agent cannot re-attach, ``get_task`` is polled
    (within the idle limit and the total deadline) and the task's final state is delivered as
    the last event. Without a way back (no task known yet, attempts spent, ``resume=False``)
    the cut raises ``A2AConnectionError``: a cut stream is never reported as a finished task.

    Its memory is bounded in bytes too (``max_bytes``: the client's ``max_response_bytes``):
    the events kept add up to at most that, and a task folded from more than that (endless
    artifact chunks, say) raises ``A2AProtocolError``.

    What to do after each event, cut or end is decided by a pure ``StreamFollower``; this
    class is its anyio shell: connections, time limits, backoff.

    Its errors carry ``events``, the events delivered before the failure, and say where it
    happened: the request that failed, or ``agent`` and the operation named by ``method``.

    Like any iterator, one stream is read by one task at a time; to stop it from another task,
    cancel the reader's scope rather than calling ``aclose()`` while it reads.

    Its events come from ``source``, within ``limits`` (``StreamLimits``). With ``follows``
    it opens no stream of its own: it follows that task, which an answer left unfinished, to
    its final state, re-attached to it or polling it, and delivers what that shows. Its polls
    are bounded by the total deadline (and whatever scope the caller holds), not by the idle
    limit.

    Each connection's answer (its response head, or a plain answer whole) must come within
    ``limits.open``: bytes that trickle in push the idle limit back, not this one.

    Its retries, re-attaches and polls after a refusal are told to ``observer`` (INFO records
    and span events); ``traced``, it is an operation with a span of its own.

    With ``cancel_on_exit``, a stream closed before its end (its block left early, by an
    error, a time limit, a cancel scope or Ctrl-C; ``aclose()``; a failure while it is read)
    asks the agent to cancel its task, when one is known and not final; ``cancel_outcome``
    then says what came of it.

    Raises:
        A2AConnectionError: (while it is read) the stream was cut and could not be resumed; ``A2ATimeoutError``
            when no event came within the idle limit, no answer within the open limit, or the
            whole stream outlasted the total one.
        A2ARPCError: an error event of the agent, as its subclass; its ``.events`` holds the events that
            came before.
        A2AClientError: a failure to open the stream: an HTTP status, a bad event (``A2AProtocolError``),
            the card.
    """

    __slots__ = (
        "__weakref__",
        "_conn",
        "_context",
        "_data",
        "_deadline",
        "_decode",
        "_follower",
        "_follows",
        "_guard",
        "_hooks",
        "_next",
        "_observer",
        "_pending",
        "_pending_size",
        "_poll_deadline",
        "_retry",
        "_size",
        "_source",
        "_span",
        "_stage",
        "_traced",
        "agent",
        "limits",
        "method",
    )

    def __init__(
        self,
        source: StreamSource,
        limits: StreamLimits = StreamLimits(),
        *,
        follows: Task | None = None,
        observer: Observer | None = None,
        traced: bool = False,
        cancel_on_exit: bool = False,
    ) -> None:
        self._source: StreamSource | None = source
        self.limits = limits
        self._follows = follows
        self.agent = source.agent
        self.method = source.method
        self._retry = source.retry
        self._observer = observer if observer is not None else Observer()
        self._guard = CancelGuard(
            source.cancel, observer=self._observer, agent=self.agent, task_id=source.task_id,
            cancel_on_exit=cancel_on_exit,
        )  # fmt: skip
        self._traced = traced
        self._span: Span = NO_SPAN
        self._hooks = source.hooks
        self._follower = StreamFollower(
            _no_end_yet,
            resume=source.reattaches,
            poll=source.polls,
            resume_attempts=limits.resume_attempts,
            keep_events=limits.keep_events,
            max_bytes=limits.max_bytes,
        )
        self._conn: Messages | None = None
        self._decode: Callable[[EventData], StreamEvent] | None = None
        self._deadline = math.inf
        self._poll_deadline = math.inf
        self._stage = "new"  # new -> open -> done
        self._pending: StreamEvent | None = None
        self._pending_size = 0
        self._next: Action | None = None  # what to do before reading (a follow-up's start)
        self._size = 0  # of the event read last, as received
        self._data: EventData | None = None  # the event read last, as received (None: typed)
        # Where the stream's own errors happen: the latest request, once one is made.
        self._context: ErrorContext = {"agent": self.agent, "operation": self.method}

    @property
    def cancel_on_exit(self) -> bool:
        """Cancel the task on the agent when the stream is closed before its end."""
        return self._guard.cancel_on_exit

    @cancel_on_exit.setter
    def cancel_on_exit(self, value: bool) -> None:
        self._guard.cancel_on_exit = value

    @property
    def cancel_outcome(self) -> CancelOutcome | None:
        """What came of the cancel of the stream's task, once asked for."""
        return self._guard.outcome

    @property
    def cancel_guard(self) -> CancelGuard:
        """The guard that cancels the stream's task when the stream is closed before its end
        (``cancel_on_exit``); a merge that cuts the stream asks it too."""
        return self._guard

    @property
    def task(self) -> Task | None:
        """The current task, folded from the events so far (None before any task event)."""
        return self._follower.task

    @property
    def events(self) -> list[StreamEvent]:
        """The events delivered so far, the latest ``keep_events`` of them (3 by default),
        and no more than ``max_bytes`` of them as received.

        They are kept as received and typed again on each call: equal to the events the
        stream handed out, not the same objects. Keeping every event of a long stream would
        grow without bound (``task`` already holds what they add up to); ``keep_events=None``
        keeps all that fit in ``max_bytes``.
        """
        return self._follower.events

    @property
    def message(self) -> Message | None:
        """The agent's Message, when it answered with one instead of a task."""
        return self._follower.message

    @property
    def finished(self) -> bool:
        """True once the final event has been received."""
        return self._follower.finished

    @property
    def resumes(self) -> int:
        """How many times the stream was re-attached after a cut."""
        return self._follower.resumes

    async def __aenter__(self) -> MessageStream:
        await self._open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self._leave(exc)

    def __aiter__(self) -> MessageStream:
        return self

    async def _open(self) -> None:
        if self._stage != "new":
            return
        self._stage = "open"
        if self.limits.total is not None:
            # The total deadline holds for the cancel of a stream it cuts, too.
            self._deadline = self._guard.answer_by = anyio.current_time() + self.limits.total
        if self._follows is not None:
            self._next = self._follower.follow(self._follows)
            return
        source = self._source
        assert source is not None
        if self._traced:
            self._span = self._observer.tracing.stream(self.method, self.agent)
        with self._span.current():
            try:
                if self._hooks is not None:
                    await self._within(self._hooks.begin())
                # Retried only before the first event, and for a send only if it never left.
                await self._retry.run(
                    lambda: self._connect(source.open, first=True),
                    operation=self.method,
                    idempotent=source.idempotent,
                    until=self._deadline,
                    observer=self._observer,
                )
                source.opened()
            except BaseException as exc:
                await self._fail(exc)

    async def _connect(
        self, opener: Callable[[StreamLimits], Awaitable[StreamWire]], *, first: bool = False
    ) -> None:
        """Open one connection; a plain (non-streaming) answer is decoded here. The plain
        answer to the ``first`` request may move the client to another wire (detection, as
        for any call): the stream is then opened again on that one."""
        while True:
            wire = await self._within(opener(self.limits))  # discovery too, when it is needed
            conn = wire.conn
            self._decode = wire.decode
            self._follower.ends = wire.events.ends
            self._context = self._follower.context = wire.events.context
            await self._within(conn.open())
            resp = conn.error_response
            if resp is None:
                self._conn = conn
                return
            # A server that does not stream may answer with one plain result.
            try:
                self._pending = wire.answer(resp)
            except A2AClientError as exc:
                if first and wire.fall_back is not None and wire.fall_back(exc):
                    continue
                raise
            self._pending_size = len(resp.content)
            return

    def __anext__(self) -> Awaitable[StreamEvent]:
        if self._stage != "new" and self._span is NO_SPAN:
            return self._next_event()  # no coroutine of its own for an idle stream to hold
        return self._opened_next()

    async def _opened_next(self) -> StreamEvent:
        if self._stage == "new":
            await self._open()
        if self._span is NO_SPAN:  # tracing off: no span to make current
            return await self._next_event()
        with self._span.current():  # its requests carry the stream's span, its events go there
            event = await self._next_event()
        self._span.delivered(event)
        return event

    async def _next_event(self) -> StreamEvent:
        follower = self._follower
        try:
            while self._stage != "done":
                event: StreamEvent | None = None
                if self._next is not None:
                    action, self._next = self._next, None
                else:
                    try:
                        event = self._take_pending()
                        if event is None and self._conn is not None:
                            # Awaited here, not in a coroutine of its own that an idle
                            # stream would hold. A scope per event costs more than decoding
                            # it: none without a deadline, nor under a fan-out's sooner one.
                            wait = self._conn.next_event()
                            data = await (self._within(wait) if self._bounded() else wait)
                            event = self._decoded(data)
                    except A2AClientError as exc:
                        action = follower.read_failed(exc)
                    else:
                        if event is None:
                            action = follower.body_ended()
                        else:
                            data = self._data
                            decode = None if data is None else self._decode
                            action = follower.event(event, self._size, data, decode)
                while (
                    action.kind is ActionKind.RESUBSCRIBE
                    or action.kind is ActionKind.POLL
                    or action.kind is ActionKind.REFRESH
                ):
                    if action.kind is ActionKind.RESUBSCRIBE:
                        action = await self._reattach(action)
                    elif action.kind is ActionKind.REFRESH:
                        action = await self._refresh()
                    else:
                        event, action = await self._poll_once(action)
                kind = action.kind
                if kind is ActionKind.DELIVER or kind is ActionKind.DELIVER_LAST:
                    assert event is not None
                    if self._hooks is not None:
                        await self._within(self._hooks.event(event))
                    if kind is ActionKind.DELIVER_LAST:
                        await self._drop_connection(drain=True)
                        await self._finish()
                    return event
                if kind is ActionKind.END:
                    break
                if kind is ActionKind.FAIL:
                    try:
                        assert action.error is not None
                        raise action.error
                    finally:
                        del action  # (the traceback keeps this frame: no cycle through it)
                # DROP (a replay after a re-attach), or a re-attached stream to read
        except BaseException as exc:
            await self._fail(exc)
        await self._finish()
        raise StopAsyncIteration

    async def _finish(self) -> None:
        """Close the stream at its end; raise what its hooks raise in its place."""
        error = await self._end(None)
        if error is not None:
            try:
                raise error
            finally:
                del error  # (the traceback keeps this frame: no cycle through it)

    async def _end(self, error: BaseException | None) -> BaseException | None:
        """Release the connection, tell the hooks how the stream ended (``error``; None:
        well), then close it, its span ending with what the hooks made of the end: the
        error returned (None: none)."""
        hooks, self._hooks = self._hooks, None
        try:
            if hooks is not None:
                try:
                    if error is None or isinstance(error, Exception):
                        await self._drop_connection()
                        error = await hooks.end(self.message or self.task, error)
                    else:  # a cancellation, Ctrl-C
                        hooks.left(error)
                except BaseException as exc:
                    hooks.left(exc)
                    raise
        finally:
            await self._close(error)
        return error

    def _take_pending(self) -> StreamEvent | None:
        """The event of a plain answer, kept typed (its size in ``_size``, ``_data`` None);
        None when there is none."""
        event = self._pending
        if event is not None:
            self._pending = None
            self._size = self._pending_size
            self._data = None
        return event

    def _decoded(self, data: EventData | None) -> StreamEvent | None:
        """The event of ``data`` off the wire (its size in ``_size``, the data as received
        in ``_data``); None when the body ended."""
        if data is None:
            return None
        assert self._decode is not None
        self._size = len(data)
        self._data = data
        return self._decode(data)

    # -- resuming ---------------------------------------------------------------------------

    async def _reattach(self, action: Action) -> Action:
        """Back off, then re-attach to the task; the follower's next step."""
        follower = self._follower
        task_id = follower.task_id
        source = self._source
        assert task_id is not None and source is not None
        await self._drop_connection()
        cut = action.error  # None: a follow-up's start, at once
        if cut is None:
            self._observer.logger.debug("following task %s up: re-attaching", clipped(task_id))
        else:
            self._observer.happened(
                "a2a.resume",
                {"attempt": action.attempt, "error.type": type(cut).__name__},
                "re-attaching to task %s (attempt %d): %s: %s",
                clipped(task_id), action.attempt, type(cut).__name__, redacted(cut.message),
            )  # fmt: skip
            if _retry.delays_enabled():
                await self._within(anyio.sleep(self._retry.delay(action.attempt, cut)))
        try:
            await self._connect(functools.partial(source.reattach, task_id))
        except A2AClientError as exc:
            return follower.reattach_failed(exc)
        follower.reattached()
        return DROP  # nothing to deliver: read the new stream

    async def _refresh(self) -> Action:
        """Read the task again, the connection kept (events were missed across a
        re-attach: see ``generation_of``); the follower's next step."""
        task_id = self._follower.task_id
        source = self._source
        assert task_id is not None and source is not None
        self._observer.happened(
            "a2a.refresh", {}, "reading task %s again: events were missed", clipped(task_id)
        )
        try:
            task = await self._within(source.poll(task_id))
        except A2AClientError as exc:
            return self._follower.refresh_failed(exc)
        return self._follower.refreshed(task)

    async def _poll_once(self, action: Action) -> tuple[Task | None, Action]:
        """Poll the task once (after a wait that grows from poll to poll), within the idle
        limit counted from the first poll and the total deadline."""
        follower = self._follower
        task_id = follower.task_id
        source = self._source
        assert task_id is not None and source is not None
        await self._drop_connection()
        if action.attempt == 1:  # the first poll is the one after a refused re-attach
            self._observer.happened(
                "a2a.poll", {}, "polling task %s: the agent refused to re-attach", clipped(task_id)
            )
            if self.limits.idle is not None and self._follows is None:
                self._poll_deadline = anyio.current_time() + self.limits.idle
        limits = self.limits
        wait = min(limits.poll_interval * 1.5 ** (action.attempt - 2), limits.max_poll_interval)
        with anyio.CancelScope(deadline=min(self._poll_deadline, self._deadline)) as scope:
            if action.attempt > 1:
                await anyio.sleep(wait)
            try:
                task = await source.poll(task_id)
            except A2AClientError as exc:
                return None, follower.poll_failed(exc)
            return task, follower.polled(task)
        assert scope.cancelled_caught
        raise self._expired("stream-idle")

    async def _drop_connection(self, *, drain: bool = False) -> None:
        """Release the connection; ``drain``: the final event came, the body's rest is read
        first (``Messages.aclose``), within the total deadline too, whose passing is then no
        error."""
        conn, self._conn = self._conn, None
        if conn is None:
            return
        if not drain or self._deadline == math.inf:
            await conn.aclose(drain=drain)
            return
        with anyio.CancelScope(deadline=self._deadline):  # at the deadline: closed, no error
            await conn.aclose(drain=True)

    # -- time limits, failure, closing ------------------------------------------------------

    def _bounded(self) -> bool:
        """Whether a wait needs a scope of the total deadline: there is one, and no scope of a
        fan-out's own ends the stream sooner (``sooner``)."""
        return self._deadline != math.inf and not sooner(self._deadline)

    async def _within(self, awaitable: Awaitable[T]) -> T:
        """Await within the total deadline (the connection keeps the idle limit of its own
        waits)."""
        if not self._bounded():
            return await awaitable
        with anyio.CancelScope(deadline=self._deadline):
            return await awaitable
        raise self._expired("deadline")

    def _expired(self, which: str) -> A2ATimeoutError:
        """The time limit that ended a wait: the total deadline if it passed, else ``which``."""
        expired = "deadline" if anyio.current_time() >= self._deadline else which
        secs = self.limits.total if expired == "deadline" else self.limits.idle
        return A2ATimeoutError(
            f"stream {expired.removeprefix('stream-')} timeout: nothing within {secs}s",
            timeout=expired,
            events=self.events,
            **self._context,
        )

    async def _fail(self, exc: BaseException) -> NoReturn:
        """Close the stream and raise what ended it: ``exc``, or when it leaves out where it
        happened or the events delivered before it, a copy that says them in its place, or
        what the hooks raise in place of either."""
        located = exc
        error: BaseException | None = None
        try:
            if isinstance(exc, A2AClientError):
                changes: dict[str, Any] = {
                    name: value
                    for name, value in self._context.items()
                    if value is not None and getattr(exc, name) is None
                }
                events = self.events
                if events and not exc.events:
                    changes["events"] = events
                if changes:
                    located = exc.with_context(**changes)
            error = await self._end(located)
            await self._guard.left()
            if error is not located:
                assert error is not None
                raise error
            if isinstance(located, A2AClientError) and located is not exc:
                instead(located)
            raise exc
        finally:
            # The traceback keeps this frame: holding the error here would make a cycle of
            # it, and keep the whole stream until the collector's next full pass.
            del exc, located, error

    async def result(self) -> Task | Message:
        """Consume the rest of the stream; the final Task, or the agent's Message.

        Raises:
            A2AClientError: as reading the stream does.
            RuntimeError: the stream was closed before its end (its ``async with`` block was
                left, or ``aclose()`` called): call ``result()`` before that.
        """
        async for _ in self:
            pass
        if not self._follower.done:
            raise RuntimeError(
                "the stream was closed before its end: call result() inside its block, "
                "before it is closed"
            )
        if self.message is not None:
            return self.message
        if self.task is None:
            raise A2AProtocolError(
                "the stream carried no task and no message", events=self.events, **self._context
            )
        return self.task

    def __del__(self) -> None:
        # As unclosed files and sockets do: the connection was held until now, and is let go
        # by the garbage collector, not by the stream.
        if self._stage == "open":
            warnings.warn(
                f"unclosed stream of {redacted(self.agent or '')}: use 'async with' or call "
                "aclose()",
                ResourceWarning,
                stacklevel=1,  # no caller of ours to name: the collector runs it
                source=self,
            )

    async def aclose(self) -> None:
        """Release the connection now; iteration stops. Safe to call more than once. Before
        the stream's end, with ``cancel_on_exit``, its task is cancelled on the agent."""
        await self._leave(None)

    async def _leave(self, exc: BaseException | None) -> None:
        """Close the stream, left before its end or not: by ``exc`` (that of the block it
        was read in), which its hooks are told, if it had not ended."""
        hooks, self._hooks = self._hooks, None
        try:
            if hooks is not None:
                hooks.left(exc)
        finally:
            await self._close(None)
            await self._guard.left()

    async def _close(self, error: BaseException | None) -> None:
        """Release the connection and end the span with what the stream came to."""
        self._stage = "done"
        self._span.end(self.message or self.task, self._context, error)
        # A finished stream keeps what it shows (task, events), not the request and the ways
        # of reading it (its follower, done, reads no more events): a fan-out holds thousands
        # of finished streams.
        self._source = None
        if self._follower.finished:
            self._guard.finished()
        else:
            self._guard(self.task)
        self._decode = self._data = None
        self._follower.ends = _no_end_yet
        await self._drop_connection()


def _no_end_yet(event: StreamEvent) -> bool:
    raise RuntimeError("an event was read before its stream was opened")
