"""Cancelling on its agent a task nobody waits for any more: the one home of that decision.

What the library abandons (a fan-out's stragglers, the streams a merge cuts) it cancels by
default; what the user abandons (a call ended by the caller's cancel scope, a time limit or
Ctrl-C; a stream left before its end) only when asked, with ``cancel_on_exit``. Either way
through one ``CancelGuard``: the task seen last (``LastSeen``), the one test of "was this
abandoned" (``abandons``), and the one request that cancels it (``cancel_abandoned``).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import TracebackType

import anyio

from a2a_anyio._deadline import check_timeout
from a2a_anyio._errors import A2AClientError, A2ATimeoutError, clipped
from a2a_anyio._model import (
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_anyio._observe import Observer, redacted
from a2a_anyio._sent import ON_SENT

#: How long the request that cancels an abandoned task may take, by default (seconds).
DEFAULT_CANCEL_GRACE = 3.0


@dataclass(frozen=True, slots=True)
class CancelPolicy:
    """A client's or pool's ``cancel_on_exit`` and ``cancel_grace``, checked: whether a call
    abandoned by its caller cancels its task on the agent (a call's own ``cancel_on_exit``
    overrides it when given), and the time limit of that cancel.

    Raises:
        TypeError: ``on_exit`` is not a bool, or ``grace`` not a number.
        ValueError: ``grace`` is not a positive, finite number of seconds.
    """

    on_exit: bool = False
    grace: float = DEFAULT_CANCEL_GRACE

    def __post_init__(self) -> None:
        if not isinstance(self.on_exit, bool):
            raise TypeError(f"cancel_on_exit must be a bool, not {type(self.on_exit).__name__}")
        check_timeout(self.grace, "cancel_grace", no_limit=False)
        object.__setattr__(self, "grace", float(self.grace))

    def cancels(self, asked: bool | None) -> bool:
        """Whether a call cancels what it abandons: its own ``asked`` when given, else the
        policy's."""
        return self.on_exit if asked is None else asked


@dataclass(frozen=True, slots=True)
class CancelOutcome:
    """What came of telling an agent to cancel a task abandoned on it: the task as the agent
    then reported it (``task``), or the error of the request (``error``)."""

    task_id: str
    task: Task | None = None
    error: Exception | None = None

    @property
    def confirmed(self) -> bool:
        """True when the agent answered that the task is canceled."""
        return self.task is not None and self.task.status.state is TaskState.CANCELED


def abandons(exc: BaseException) -> bool:
    """True when ``exc`` ends a call that its caller stopped waiting for: a cancellation (the
    caller's scope, a deadline, a fan-out's ``first``), Ctrl-C, or a time limit."""
    return isinstance(exc, (anyio.get_cancelled_exc_class(), KeyboardInterrupt, A2ATimeoutError))


class LastSeen:
    """The id and state of the task a call showed last (an ``on_event`` of a send): what
    abandoning the call leaves running."""

    __slots__ = ("state", "task_id")

    def __init__(self, task_id: str | None = None) -> None:
        self.task_id = task_id
        self.state: TaskState | None = None

    def __call__(self, event: StreamEvent | None) -> None:
        if isinstance(event, Task):
            self.task_id, self.state = event.id, event.status.state
        elif isinstance(event, TaskStatusUpdateEvent) and event.task_id:
            self.task_id, self.state = event.task_id, event.status.state
        elif isinstance(event, TaskArtifactUpdateEvent) and event.task_id:
            self.task_id = event.task_id

    @property
    def running(self) -> bool:
        """True when a task is known and its last seen state is not final."""
        return self.task_id is not None and (self.state is None or not self.state.is_final)


async def cancel_abandoned(
    cancel: Callable[[str], Awaitable[Task]],
    seen: LastSeen,
    observer: Observer,
    agent: str | None,
    *,
    answer_by: float = math.inf,
) -> CancelOutcome | None:
    """Ask the agent to cancel the task ``seen`` names, when it is still running as far as
    seen (None otherwise). Best effort: shielded from the cancellation that ended the call,
    within the deadline of ``cancel`` itself (the client's ``cancel_grace``), and never
    raising: the outcome holds the agent's answer or the error, told at INFO to the
    observer's logger too. Once the request has gone out, its answer is awaited only until
    ``answer_by`` (a time of the event loop's clock; past: not at all): the agent has the
    cancel, the caller keeps a promise about when it ends."""
    task_id = seen.task_id
    if task_id is None or not seen.running:
        return None
    where = redacted(agent or "")
    ended = sys.exc_info()[1]  # what ended the call, when it is being handled
    with anyio.CancelScope(shield=True) as scope:

        def sent() -> None:
            scope.deadline = min(scope.deadline, answer_by)

        token = ON_SENT.set(sent if answer_by != math.inf else None)
        try:
            task = await cancel(task_id)
        except Exception as exc:  # best effort: the caller has its own outcome to meet
            observer.happened(
                "a2a.cancel_abandoned", {"error.type": type(exc).__name__},
                "could not cancel abandoned task %s at %s: %s: %s",
                clipped(task_id), where, type(exc).__name__, redacted(str(exc)),
            )  # fmt: skip
            _unchain(exc, ended)
            return CancelOutcome(task_id, error=exc)
        finally:
            ON_SENT.reset(token)
            del ended  # (the traceback of an error caught here keeps this frame)
    if scope.cancelled_caught:
        observer.happened(
            "a2a.cancel_abandoned", {"error.type": "A2ATimeoutError"},
            "asked %s to cancel abandoned task %s; its answer not awaited", where,
            clipped(task_id),
        )  # fmt: skip
        unanswered = A2ATimeoutError(
            "the cancel went out; its answer was not awaited past the caller's limit",
            timeout="deadline",
            agent=agent,
            operation="cancel",
        )
        return CancelOutcome(task_id, error=unanswered)
    state = task.status.state.value
    observer.happened(
        "a2a.cancel_abandoned", {"a2a.task.state": state},
        "cancelled abandoned task %s at %s: %s", clipped(task_id), where, state,
    )  # fmt: skip
    return CancelOutcome(task_id, task)


def _unchain(error: BaseException, ended: BaseException | None) -> None:
    """Cut ``error``'s implicit context where it reaches ``ended``: what ended the call is not
    what its cancel's failure came from, and the call's frames, which the traceback of
    ``ended`` keeps, hold the outcome that holds ``error`` (a cycle)."""
    link = error
    while ended is not None and link.__context__ is not None:
        if link.__context__ is ended:
            link.__context__ = None
            return
        link = link.__context__


class CancelGuard:
    """Cancels on its agent the task a block of calls leaves running when the block is
    abandoned: ``async with client.cancel_guard() as guard:``, the calls inside telling it
    their events (``on_event=guard``; the events of an ``A2AClientError`` that ends the block
    are read as it leaves).

    The block is abandoned when a cancellation (the caller's cancel scope, a deadline), a
    time limit (``A2ATimeoutError``) or Ctrl-C ends it. ``task_id`` then names the task it
    left running, as last seen (None: none known, or its last seen state was final), and
    ``outcome`` says what came of its cancel (None: ``cancel_on_exit`` false, nothing was asked).
    The cancel is best effort, as ``cancel_on_exit``'s: shielded from what ended the block,
    within the client's ``cancel_grace``, never raising (a failure is in ``outcome.error``
    and an INFO record). Every call made with ``cancel_on_exit`` runs in one, and each
    stream keeps one (``MessageStream.cancel_guard``), which it asks when it is closed
    before its end.

    ``answer_by`` (an attribute: a time of the event loop's clock, ``anyio.current_time()``;
    none by default) keeps the block's own deadline: the cancel goes out, and its answer is awaited
    only until then (past it: not at all; ``outcome.error`` is then an ``A2ATimeoutError``).
    """

    __slots__ = (
        "_agent",
        "_cancel",
        "_done",
        "_observer",
        "answer_by",
        "cancel_on_exit",
        "outcome",
        "seen",
        "task_id",
    )

    def __init__(
        self,
        cancel: Callable[[str], Awaitable[Task]] | None,
        *,
        observer: Observer | None = None,
        agent: str | None = None,
        task_id: str | None = None,
        cancel_on_exit: bool = True,
    ) -> None:
        self._cancel = cancel
        self._observer = observer if observer is not None else Observer()
        self._agent = agent
        self._done = False  # the call reached its end, or its cancel was asked
        #: Cancel the task when the block is abandoned (false: only say which it left).
        self.cancel_on_exit = cancel_on_exit
        #: Await the cancel's answer only until this time of the event loop's clock.
        self.answer_by = math.inf
        #: The task the call showed last (from the start: ``task_id``).
        self.seen = LastSeen(task_id)
        #: The task the block left running, once it was abandoned.
        self.task_id: str | None = None
        #: What came of its cancel, once asked.
        self.outcome: CancelOutcome | None = None

    def __call__(self, event: StreamEvent | None) -> None:
        """Tell the guard an event of its calls (an ``on_event``; None is ignored)."""
        self.seen(event)

    async def __aenter__(self) -> CancelGuard:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if isinstance(exc, A2AClientError):  # the task as the failed call last saw it
            for event in exc.events:
                self.seen(event)
        if exc is not None and abandons(exc):
            await self.left()

    def finished(self) -> None:
        """The call reached its end: nothing is left to cancel."""
        self._done, self._cancel = True, None

    async def left(
        self, *, answer_by: float | None = None, cancel_on_exit: bool | None = None
    ) -> None:
        """The call was left before its end: its task, when it is running as last seen,
        is cancelled on the agent, once, when ``cancel_on_exit`` (the guard's own by default: a
        merge that cut a stream gives its own); its answer awaited only until ``answer_by``
        (the guard's own by default; see ``cancel_abandoned``)."""
        if self._done or not self.seen.running:
            return
        self.task_id = self.seen.task_id
        cancels = self.cancel_on_exit if cancel_on_exit is None else cancel_on_exit
        cancel = self._cancel
        if not cancels or cancel is None:
            return
        self._done, self._cancel = True, None
        by = self.answer_by if answer_by is None else answer_by
        self.outcome = await cancel_abandoned(
            cancel, self.seen, self._observer, self._agent, answer_by=by
        )
