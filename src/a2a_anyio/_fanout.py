"""Many agents at once: merged streams, and sending to many clients, in one task group per
call (the fan-outs that take agents by name are the pool's)."""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager, suppress
from dataclasses import dataclass
from types import TracebackType
from typing import Any, NamedTuple

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from a2a_anyio._abandon import CancelGuard, CancelOutcome
from a2a_anyio._client import A2AClient
from a2a_anyio._deadline import held
from a2a_anyio._errors import A2ATimeoutError
from a2a_anyio._intercept import call_hook
from a2a_anyio._model import Message, StreamEvent, Task, TaskState
from a2a_anyio._no_context import NO_CONTEXT
from a2a_anyio._prepare import MessageInput
from a2a_anyio._stream import MessageStream

#: An agent to fan out to: a client, a URL, or a registry agent's or group's name (served
#: from a pool).
Target = A2AClient | str

#: How an agent cut at a deadline reads, the first words of its ``A2ATimeoutError``: in
#: ``fan_out`` and ``merge_streams``, and as its state in the command line's fan-out and demo.
CUT_AT_DEADLINE = "cancelled at the deadline"


class StreamItem(NamedTuple):
    """One item of a merged stream: the agent's name and its event, or the error that ended
    its stream (then ``error`` is that exception)."""

    agent: str
    event: StreamEvent | Exception

    @property
    def error(self) -> Exception | None:
        """The exception that ended this agent's stream, or None for an ordinary event."""
        return self.event if isinstance(self.event, Exception) else None


class MergedStreams:
    """Events of several streams as one, consumed concurrently in one task group.

    ``async with merge_streams({...}) as merged: async for agent, event in merged``. A stream
    that fails yields one item whose ``event`` is the exception and ends; the others go on,
    unless ``fail_fast``, where the first error is raised from the iteration and the other
    streams are cancelled. ``stream_timeout`` bounds each stream from its start, ``timeout``
    all of them from entering the block; a stream cut by either yields an
    ``A2ATimeoutError(timeout="deadline")`` item. Leaving the block cancels the streams still
    running and releases their connections.

    A stream that ``timeout``, ``stream_timeout`` or ``fail_fast`` cut has its task cancelled
    on its agent (``cancel_on_exit=False``: left running), as its ``cancel_outcome`` then says;
    one left running when the block is left follows its own ``cancel_on_exit``. The cancels
    keep the block's promise: the block's end waits for them to go out, and for their
    answers only until its ``timeout`` (cut by ``fail_fast`` or by the ``timeout`` itself:
    not at all; an answer not awaited leaves an ``A2ATimeoutError`` in the outcome).
    ``cancel_cut`` is the deprecated former name of ``cancel_on_exit``.
    """

    def __init__(
        self,
        streams: Mapping[str, MessageStream],
        *,
        timeout: float | None = None,
        stream_timeout: float | None = None,
        limit: int | None = None,
        fail_fast: bool = False,
        cancel_on_exit: bool = True,
        cancel_cut: bool | None = None,
    ) -> None:
        self.streams = dict(streams)
        self.timeout = timeout
        self.stream_timeout = stream_timeout
        self.fail_fast = fail_fast
        self.limit = limit
        #: Cancel the tasks of the streams the merge's own limits cut.
        self.cancel_on_exit = _renamed(cancel_on_exit, cancel_cut)
        self._failed_fast = False
        self._group: TaskGroup | None = None
        self._receive: MemoryObjectReceiveStream[StreamItem] | None = None
        self._deadline = math.inf

    async def __aenter__(self) -> MergedStreams:
        if self.timeout is not None:
            self._deadline = anyio.current_time() + self.timeout
        limiter = _limiter(self.limit)
        send, self._receive = anyio.create_memory_object_stream[StreamItem](
            max(1, len(self.streams))
        )
        self._group = anyio.create_task_group()
        await self._group.__aenter__()
        async with send:
            for name, stream in self.streams.items():
                self._group.start_soon(self._pump, name, stream, send.clone(), limiter)
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        group, self._group = self._group, None
        if self._receive is not None:
            self._receive.close()
        if group is None:
            return None
        group.cancel_scope.cancel()
        if exc is not None and not isinstance(exc, Exception):
            return await group.__aexit__(exc_type, exc, tb)  # cancellation: anyio's business
        # The workers catch their own errors, so the group ends cleanly; an error of the
        # block's body then propagates as itself, not wrapped in an exception group.
        await group.__aexit__(None, None, None)
        return None

    def __aiter__(self) -> MergedStreams:
        return self

    async def __anext__(self) -> StreamItem:
        if self._receive is None:
            raise RuntimeError("use merged streams inside 'async with'")
        try:
            item = await self._receive.receive()
        except (anyio.EndOfStream, anyio.ClosedResourceError):
            raise StopAsyncIteration from None
        if self.fail_fast and item.error is not None:
            if self._group is not None:
                self._failed_fast = True
                self._group.cancel_scope.cancel()
            raise item.error
        return item

    async def _pump(
        self,
        name: str,
        stream: MessageStream,
        send: MemoryObjectSendStream[StreamItem],
        limiter: AbstractAsyncContextManager[Any],
    ) -> None:
        async with send:
            error: Exception | None = None
            async with limiter:
                deadline = self._deadline
                if self.stream_timeout is not None:
                    deadline = min(deadline, anyio.current_time() + self.stream_timeout)
                with anyio.CancelScope(deadline=deadline) as scope, held(scope):
                    try:
                        async with stream:
                            async for event in stream:
                                await send.send(StreamItem(name, event))
                    except Exception as exc:  # one agent's failure is data for the others
                        error = exc
                    except BaseException:  # cancelled: cut by fail_fast, or the block left
                        if self._failed_fast:
                            # The block ends at the failure: the cancel goes out, its
                            # answer is not awaited.
                            await stream.cancel_guard.left(
                                answer_by=anyio.current_time(), cancel_on_exit=self.cancel_on_exit
                            )
                        raise
                if scope.cancelled_caught:
                    # Its answer awaited until the block's deadline at most: past it (cut
                    # by ``timeout``), not at all.
                    await stream.cancel_guard.left(
                        answer_by=self._deadline, cancel_on_exit=self.cancel_on_exit
                    )
                    error = A2ATimeoutError(
                        f"{CUT_AT_DEADLINE}: the stream of {name} did not end within its timeout",
                        timeout="deadline",
                        agent=name,
                        operation=stream.method,
                        events=stream.events,
                    )
            if error is not None:
                # The consumer may have left: an item nobody reads is not an error.
                with suppress(anyio.BrokenResourceError, anyio.ClosedResourceError):
                    await send.send(StreamItem(name, error))


def merge_streams(
    streams: Mapping[str, MessageStream],
    *,
    timeout: float | None = None,
    stream_timeout: float | None = None,
    limit: int | None = None,
    fail_fast: bool = False,
    cancel_on_exit: bool = True,
    cancel_cut: bool | None = None,
) -> MergedStreams:
    """Consume several streams concurrently as one stream of ``(agent, event)`` items.

    The tasks of the streams its ``timeout``, ``stream_timeout`` or ``fail_fast`` cut are
    cancelled on their agents (``cancel_on_exit=False``: left running), without waiting for
    the agents' answers past the block's ``timeout`` (``fail_fast``: past the failure); the
    streams left when the block is left follow their own ``cancel_on_exit``.
    ``cancel_cut`` is the former name of ``cancel_on_exit``, deprecated (a
    ``DeprecationWarning``).

    Raises:
        A2AClientError: with ``fail_fast=True``, the first error of any stream (the others are cancelled);
            otherwise each failure is a ``StreamItem`` whose event is the error.
        RuntimeError: iterated outside its ``async with`` block.
    """
    return MergedStreams(
        streams, timeout=timeout, stream_timeout=stream_timeout, limit=limit,
        fail_fast=fail_fast, cancel_on_exit=_renamed(cancel_on_exit, cancel_cut),
    )  # fmt: skip


def _renamed(cancel_on_exit: bool, cancel_cut: bool | None) -> bool:
    """``cancel_on_exit``, or the value given under its deprecated name ``cancel_cut``."""
    if cancel_cut is None:
        return cancel_on_exit
    warnings.warn(
        "merge_streams(cancel_cut=...) is deprecated: use cancel_on_exit=...",
        DeprecationWarning,
        stacklevel=3,  # the caller of merge_streams or MergedStreams
    )
    return cancel_cut


def _limiter(limit: int | None) -> AbstractAsyncContextManager[Any]:
    """What each of a fan-out's agents holds while it runs: a share of ``limit``, or (no
    limit) nothing, which costs no pass of the event loop."""
    return anyio.CapacityLimiter(limit) if limit else NO_CONTEXT


@dataclass(slots=True)
class AgentResult:
    """What one agent of a fan-out gave: a value or an error, and how long it took.

    ``cancelled`` is true when the fan-out stopped waiting for it (its deadline, or ``first``
    reached); a deadline also leaves an ``A2ATimeoutError`` in ``error``, whose message
    starts "cancelled at the deadline".

    ``task_id`` is the agent's task, once known: at once from an agent that streams, else
    from its answer. The task of a send the fan-out abandons (cut by its ``timeout``,
    ``first`` or the caller, or ended by a time limit) is cancelled on the agent:
    ``cancel_outcome`` then says so (``confirmed``: the agent answered that it is canceled;
    ``error``: the request failed, or, past the fan-out's timeout, its answer was not
    awaited). An agent that does not stream and has not answered yet has named no task:
    nothing can be cancelled there.
    """

    agent: str
    value: Task | Message | None = None
    error: Exception | None = None
    elapsed: float = 0.0
    cancelled: bool = False
    task_id: str | None = None
    cancel_outcome: CancelOutcome | None = None

    @property
    def ok(self) -> bool:
        """True when the agent answered with a Message or a task that did not fail, get
        rejected or get canceled."""
        if isinstance(self.value, Task):
            return self.value.status.state not in _UNSUCCESSFUL
        return self.value is not None


_UNSUCCESSFUL = frozenset({TaskState.FAILED, TaskState.REJECTED, TaskState.CANCELED})


class _Watch:
    """The ``on_event`` of one send of a fan-out: tells its guard and its result of each
    event, then the user's ``on_event`` (one object per agent, where a closure is five)."""

    __slots__ = ("guard", "result", "user")

    def __init__(self, guard: CancelGuard, result: AgentResult, user: Any) -> None:
        self.guard, self.result, self.user = guard, result, user

    async def __call__(self, event: StreamEvent) -> None:
        guard = self.guard
        guard(event)
        self.result.task_id = guard.seen.task_id
        if self.user is not None:
            await call_hook(self.user, event)


async def send_all(
    named: Sequence[tuple[str, A2AClient]],
    message: MessageInput,
    *,
    timeout: float | None,
    limit: int | None,
    first: int | None,
    send_options: Mapping[str, Any],
    cancel_on_exit: bool = True,
) -> list[AgentResult]:
    """Send ``message`` with each named client at once (the mechanism of ``fan_out``): one
    ``AgentResult`` per client, in order; ``first`` and ``timeout`` cancel the rest, and
    with ``cancel_on_exit`` their tasks on their agents. Each send is followed through its
    stream when the agent streams, so that its task is known at once."""
    results = [AgentResult(name) for name, _ in named]
    if not named:
        return results
    # The fan-out's deadline is the cancels' too: they go out, their answers are awaited
    # only until then (cut at it: not at all).
    until = math.inf if timeout is None else anyio.current_time() + timeout
    answered = 0
    limiter = _limiter(limit)
    user_on_event = send_options.get("on_event")

    async def run(result: AgentResult, client: A2AClient, group: TaskGroup) -> None:
        nonlocal answered
        guard = client.cancel_guard(
            cancel_on_exit=cancel_on_exit, headers=send_options.get("headers")
        )
        guard.answer_by = until
        on_event = _Watch(guard, result, user_on_event)
        options = {**send_options, "on_event": on_event, "cancel_on_exit": False}
        start = anyio.current_time()
        try:
            async with guard:  # abandoned (cut, a time limit): its task cancelled
                try:
                    async with limiter:
                        result.value = await client.send_message(message, **options)
                finally:
                    result.elapsed = anyio.current_time() - start
        except BaseException as exc:
            result.cancel_outcome = guard.outcome
            if not isinstance(exc, Exception):
                raise
            result.error = exc  # one agent's failure is data for the others
        if result.ok:
            answered += 1
            if first is not None and answered >= first:
                group.cancel_scope.cancel()

    with anyio.CancelScope(deadline=until) as deadline, held(deadline):
        async with anyio.create_task_group() as group:
            for result, (_, client) in zip(results, named, strict=True):
                group.start_soon(run, result, client, group)
    for result in results:
        if result.value is None and result.error is None:
            result.cancelled = True
            if deadline.cancelled_caught:
                result.error = A2ATimeoutError(
                    f"{CUT_AT_DEADLINE}: no answer within the fan-out's timeout of {timeout}s",
                    timeout="deadline",
                    agent=result.agent,
                    operation="send",
                )
    return results
