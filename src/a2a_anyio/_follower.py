"""The stream follower: what to do after each thing that happens to a stream (no I/O).

A shell that does the I/O (``MessageStream``) tells the follower what happened on the wire,
and the follower answers with the next ``Action``: deliver the event, drop a replay, end,
re-attach to the task, poll it, or fail. It folds the events into the task, keeps the latest
of them, and decides when a cut stream is resumed and when it is given up.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple

from a2a_anyio._errors import (
    A2AClientError,
    A2AConnectionError,
    A2AHTTPError,
    A2AProtocolError,
    A2ARPCError,
    A2ATimeoutError,
    ErrorContext,
)
from a2a_anyio._model import Message, StreamEvent, Task, TaskArtifactUpdateEvent, TextPart
from a2a_anyio._reducer import TaskReducer

if TYPE_CHECKING:
    from a2a_anyio._bindings.base import EventData

DEFAULT_RESUME_ATTEMPTS = 3
#: How many of the latest events a stream keeps (None: all of them).
DEFAULT_KEEP_EVENTS = 3


#: A kept event: its data as received, its size, and the decoder that types it again when
#: asked (a received event's data takes a fraction of what the typed event and its JSON do:
#: a 500-byte status update, 0.6 against 2.6 KB; kept events are rarely asked for); or the
#: typed event itself, its size and None; or a chunk's data split around its text (``Split``),
#: its size and ``_joined``.
Kept = tuple[Any, int, "Callable[[Any], StreamEvent] | None"]


def _typed(kept: Kept) -> StreamEvent:
    value, _, decode = kept
    return value if decode is None else decode(value)


#: A chunk's data as kept: the text before its text, its text (the string the task holds),
#: the text after it, and the decoder that types the whole again.
Split = tuple[str, str, str, "Callable[[EventData], StreamEvent]"]


def _split(event: StreamEvent, data: Any, decode: Any, last: Split | None) -> Split | None:
    """``data``, a chunk's whose one text part appears as it is in it, split around that
    text, which the task holds: the rest only is kept, the very strings of the chunk split
    ``last`` when they are the same (the chunks of one artifact have the same ids and
    envelope). None for any other event."""
    if type(data) is not str or not isinstance(event, TaskArtifactUpdateEvent):
        return None
    parts = event.artifact.parts
    if len(parts) != 1 or type(part := parts[0]) is not TextPart:
        return None
    text = part.text
    if len(text) <= 64:  # a short one: not worth a tuple
        return None
    if last is not None:
        head, tail = last[0], last[2]
        at = len(head)
        if (
            len(data) == at + len(text) + len(tail)
            and data.startswith(head)
            and data.startswith(text, at)
            and data.endswith(tail)
        ):
            return head, text, tail, decode
    at = data.find(text[:16])  # (a long needle takes longer to set up than to find)
    if at < 0 or not data.startswith(text, at):
        return None
    return data[:at], text, data[at + len(text) :], decode


def _joined(split: Split) -> StreamEvent:
    head, text, tail, decode = split
    return decode(head + text + tail)


class ActionKind(enum.Enum):
    """What the shell does next."""

    #: Hand the event to the user; read on.
    DELIVER = "deliver"
    #: Hand the event (or the polled task) to the user; the stream is finished.
    DELIVER_LAST = "deliver-last"
    #: A replay after a re-attach (folded quietly, not delivered); read on.
    DROP = "drop"
    #: The body ended after a final state; the stream is finished.
    END = "end"
    #: Drop the connection, back off for ``attempt``, re-attach to ``task_id``.
    RESUBSCRIBE = "resubscribe"
    #: Drop the connection, poll ``get_task(task_id)`` once (poll number ``attempt``).
    POLL = "poll"
    #: Raise ``error``; the stream is finished.
    FAIL = "fail"
    #: Read the task once (``get_task``), keeping the connection; answered by ``refreshed``.
    REFRESH = "refresh"


class Action(NamedTuple):
    """The next step: ``kind``, with ``attempt`` (RESUBSCRIBE, POLL: 1 for the first) and
    ``error`` (FAIL: the error to raise; RESUBSCRIBE: the cut being repaired, for the backoff)."""

    kind: ActionKind
    attempt: int = 0
    error: A2AClientError | None = None


DELIVER = Action(ActionKind.DELIVER)
DELIVER_LAST = Action(ActionKind.DELIVER_LAST)
DROP = Action(ActionKind.DROP)
END = Action(ActionKind.END)
REFRESH = Action(ActionKind.REFRESH)


class _Phase(enum.Enum):
    STREAMING = "streaming"
    REPLAYING = "replaying"  # just re-attached: a snapshot and repeats may come first
    RESUBSCRIBING = "resubscribing"
    POLLING = "polling"
    DONE = "done"


def _is_cut(error: A2AClientError) -> bool:
    """A broken connection (not a time limit): what re-attaching can repair."""
    return isinstance(error, A2AConnectionError) and not isinstance(error, A2ATimeoutError)


def _unrecovered(why: str) -> str:
    return f"and the task could not be followed up: {why}"


def generation_of(value: StreamEvent) -> int | None:
    """The ordering counter a task or task event carries, None when it carries none.

    A2A 1.1 is to add ``generation`` (protobuf ``int64``: a number, or a decimal string in
    protobuf's JSON) to ``Task``, ``TaskStatusUpdateEvent`` and ``TaskArtifactUpdateEvent``:
    the task's generation after the change an event tells, raised by every change of state
    and every artifact added or updated, so that a jump in it says events were missed and
    the task is to be read again (a2aproject/A2A#1794, merged as a2aproject/A2A#1810). It
    is read from the event as received; any other value counts as none.
    """
    raw = value.raw
    if raw is None:
        return None
    found = raw.get("generation")
    if type(found) is int:
        return found if found >= 0 else None
    if type(found) is str and found.isdigit() and len(found) <= 20:
        return int(found)
    return None


class StreamFollower:
    """Follows one stream to its final event, across cuts; a pure state machine.

    ``ends(event)`` says whether an event is the last of its stream (a rule of the wire
    dialect). The shell reads the stream and reports each outcome: ``event``, ``body_ended``
    or ``read_failed``; it answers a RESUBSCRIBE with ``reattached`` (then reads the new
    stream) or ``reattach_failed``, and a POLL with ``polled`` or ``poll_failed``. Inputs that
    make no sense in the current phase (an event while polling, anything once finished) raise
    ``RuntimeError``.

    ``follow(task)`` starts it without a stream, from a task an answer left unfinished (a
    blocking send answered at once, ``wait``): the task is re-attached to, or polled, until
    it is final, as after a cut; its errors are then those of the re-attach or the polls.

    A stream cut before its final event (a broken connection, or a body that ends while the
    task still works) is re-attached, at most ``resume_attempts`` times over the stream's life;
    the Task snapshot that opens a re-attached stream is folded without being delivered, and
    repeats of kept events are dropped. When the agent refuses to re-attach, the task is polled
    until a poll answers a final state (``max_polls`` bounds the polls; None leaves the bound
    to the shell's clock). Without a way back (``resume=False``, no task yet, attempts spent)
    the cut fails the stream.

    ``events`` keeps the latest ``keep_events`` delivered events (None: all, 0: none): as
    received when ``event`` is told how (its data and decoder; a chunk's data without the
    text the task holds too, ``_split``), typed again when asked. The
    error of a FAIL carries them; when the failure adds to an error read off the wire (the
    events, why it was not repaired), it is a new error caused by that one. ``context`` says
    where the follower's own errors happened (the shell sets it for each connection). With
    ``max_bytes``, a stream's memory is bounded in bytes too: the events kept add up to at
    most that (the oldest go first), and a task folded from more than that fails the stream
    with ``A2AProtocolError``. An event's size is the one ``event`` is told: its data as
    received.
    """

    __slots__ = (
        "_after_refresh",
        "_cause",
        "_events",
        "_final_seen",
        "_first",
        "_following",
        "_generation",
        "_keep",
        "_kept_bytes",
        "_last_split",
        "_max_bytes",
        "_max_polls",
        "_phase",
        "_poll",
        "_polls",
        "_reducer",
        "_resume",
        "_resume_attempts",
        "_resumes",
        "_seen",
        "context",
        "ends",
    )

    def __init__(
        self,
        ends: Callable[[StreamEvent], bool],
        *,
        resume: bool = True,
        poll: bool = True,
        resume_attempts: int = DEFAULT_RESUME_ATTEMPTS,
        max_polls: int | None = None,
        keep_events: int | None = DEFAULT_KEEP_EVENTS,
        max_bytes: int | None = None,
    ) -> None:
        if keep_events is not None and keep_events < 0:
            raise ValueError(f"keep_events must be None or >= 0, not {keep_events}")
        if max_bytes is not None and max_bytes < 1:
            raise ValueError(f"max_bytes must be None or >= 1, not {max_bytes}")
        if resume_attempts < 0:
            raise ValueError(f"resume_attempts must be >= 0, not {resume_attempts}")
        if max_polls is not None and max_polls < 1:
            raise ValueError(f"max_polls must be None or >= 1, not {max_polls}")
        #: The end-of-stream rule of the stream's dialect.
        self.ends = ends
        #: Where the stream's own errors happened (the call it reads).
        self.context: ErrorContext = {}
        self._resume = resume
        self._poll = poll
        self._resume_attempts = resume_attempts
        self._max_polls = max_polls
        self._keep = keep_events
        self._max_bytes = max_bytes
        # A list and the index of its first kept event: a deque takes 760 bytes at least,
        # a few events' list a tenth of it.
        self._events: list[Kept | None] = []
        self._first = 0
        self._kept_bytes = 0
        self._last_split: Split | None = None  # the chunk kept last, split (``_split``)
        self._reducer = TaskReducer()
        self._phase = _Phase.STREAMING
        self._resumes = 0
        self._polls = 0
        self._cause: A2AClientError | None = None  # the cut being repaired
        self._final_seen = False
        self._seen: list[Any] | None = None  # the kept events' JSON, while replays may come
        self._following = False  # started by follow(): no stream of the caller's own
        self._generation: int | None = None  # the task's latest, when the agent says it
        self._after_refresh: Action | None = None  # the step a REFRESH holds back

    # -- what the shell reads -----------------------------------------------------------------

    @property
    def task(self) -> Task | None:
        """The current task, folded from the events so far (None before any task event)."""
        return self._reducer.task

    @property
    def message(self) -> Message | None:
        """The agent's Message, when it answered with one instead of a task."""
        return self._reducer.message

    @property
    def task_id(self) -> str | None:
        """The id of the task to re-attach to or poll."""
        task = self._reducer.task
        return None if task is None else task.id

    @property
    def events(self) -> list[StreamEvent]:
        """The latest events delivered, at most ``keep_events`` and ``max_bytes`` (a copy;
        those kept as received typed again)."""
        return [_typed(kept) for kept in self._events[self._first :] if kept is not None]

    @property
    def resumes(self) -> int:
        """How many times re-attaching was tried."""
        return self._resumes

    @property
    def finished(self) -> bool:
        """True once the final event was seen (or the body ended after a final state)."""
        return self._final_seen

    @property
    def done(self) -> bool:
        """True once an action ended the stream (DELIVER_LAST, END or FAIL)."""
        return self._phase is _Phase.DONE

    # -- what happened on the wire ------------------------------------------------------------

    def follow(self, task: Task) -> Action:
        """Start from ``task``, not final yet, with no stream: RESUBSCRIBE (attempt 0: at
        once) when re-attaching is allowed, else POLL (the answer that gave ``task`` counts as
        the first look: the first poll waits); FAIL when neither is."""
        if self._phase is not _Phase.STREAMING or self._reducer.task is not None:
            raise self._misuse("follow")
        if task.status.state.is_final:
            raise ValueError(f"task {task.id} is {task.status.state.value}: nothing to follow")
        self._reducer.apply(task)
        self._generation = generation_of(task)
        self._following = True
        if self._resume:
            self._phase = _Phase.RESUBSCRIBING
            return Action(ActionKind.RESUBSCRIBE)
        if self._poll:
            self._phase = _Phase.POLLING
            self._polls = 1
            return self._next_poll()
        self._phase = _Phase.DONE
        error = A2AConnectionError(
            f"task {task.id} is {task.status.state.value} and there is no way to follow it up",
            **self.context,
        )
        return Action(ActionKind.FAIL, error=error)

    def event(
        self,
        event: StreamEvent,
        size: int = 0,
        data: EventData | None = None,
        decode: Callable[[EventData], StreamEvent] | None = None,
    ) -> Action:
        """An event read off the stream, ``size`` bytes as received (``data`` and ``decode``:
        it as received and how to make it again, what is then kept of it): DELIVER,
        DELIVER_LAST or DROP; FAIL when the task grows past ``max_bytes``."""
        missed = False
        if self._phase is not _Phase.STREAMING:
            if self._phase is not _Phase.REPLAYING:
                raise self._misuse("event")
            if self._is_replay(event, size):
                return self._too_large() if self._over_size() else DROP
            self._phase = _Phase.STREAMING
            self._seen = None
            missed = self._missed(event)
        kept: Kept
        if decode is None:
            kept = (event, size, None)
        elif self._keep == 0:
            kept = (data, size, decode)  # (not kept)
        else:
            split = _split(event, data, decode, self._last_split)
            self._last_split = split
            kept = (data, size, decode) if split is None else (split, size, _joined)
        self._record(event, size, kept)
        limit = self._max_bytes
        if limit is not None and self._reducer.size > limit:
            return self._too_large()
        action = self._finish() if self.ends(event) and self._over() else DELIVER
        if missed:
            self._after_refresh = action
            return REFRESH
        return action

    def body_ended(self) -> Action:
        """The stream's body ended: END after a final state, else it is a cut."""
        if self._phase not in (_Phase.STREAMING, _Phase.REPLAYING):
            raise self._misuse("body_ended")
        task = self._reducer.task
        if task is not None and task.status.state.is_final:
            # Some servers close after an interrupted state without a final flag.
            self._final_seen = True
            self._phase = _Phase.DONE
            return END
        cut = A2AConnectionError(
            "the stream ended before the task reached a final state", **self.context
        )
        return self._resubscribe(cut) if self._can_resume() else self._fail(cut)

    def read_failed(self, error: A2AClientError) -> Action:
        """Reading the stream raised ``error``: RESUBSCRIBE after a cut, POLL when a
        re-attached stream refuses, else FAIL with ``error``. Following a task up, a silent
        stream (the idle limit) is re-attached to at once: a look at the task, not a repair
        (no attempt is spent), as a poll would be."""
        phase = self._phase
        if phase not in (_Phase.STREAMING, _Phase.REPLAYING):
            raise self._misuse("read_failed")
        if phase is _Phase.REPLAYING and isinstance(error, (A2ARPCError, A2AHTTPError)):
            return self._poll_or_fail(error)  # re-attached, then refused inside the stream
        if (
            self._following
            and isinstance(error, A2ATimeoutError)
            and error.timeout == "stream-idle"
        ):
            self._phase = _Phase.RESUBSCRIBING
            return Action(ActionKind.RESUBSCRIBE)
        if _is_cut(error) and self._can_resume():
            return self._resubscribe(error)
        return self._fail(error)

    def reattached(self) -> None:
        """The re-attached stream opened; read it next."""
        if self._phase is not _Phase.RESUBSCRIBING:
            raise self._misuse("reattached")
        self._phase = _Phase.REPLAYING

    def reattach_failed(self, error: A2AClientError) -> Action:
        """Re-attaching raised ``error``: try again after a cut, else POLL (or FAIL)."""
        if self._phase is not _Phase.RESUBSCRIBING:
            raise self._misuse("reattach_failed")
        if _is_cut(error):
            return self._resubscribe(self._cause or error)
        return self._poll_or_fail(error)

    def polled(self, task: Task) -> Action:
        """A poll answered ``task``: DELIVER_LAST when it is final, else POLL again."""
        if self._phase is not _Phase.POLLING:
            raise self._misuse("polled")
        if task.status.state.is_final:
            self._record(task)
            return self._finish()
        self._reducer.apply(task)  # the latest state, not an event of the stream
        self._noted(task)
        return self._next_poll()

    def poll_failed(self, error: A2AClientError) -> Action:
        """A poll raised ``error``: FAIL with the cut, saying why (a follow-up: with
        ``error``)."""
        if self._phase is not _Phase.POLLING:
            raise self._misuse("poll_failed")
        if self._cause is None:
            return self._fail(error)
        return self._fail(self._cause, _unrecovered(error.message))

    def refreshed(self, task: Task) -> Action:
        """A REFRESH read ``task``: it replaces the task folded from the stream, unless it is
        older than what the stream told; the step the REFRESH held back (deliver the event
        that showed the gap)."""
        action = self._take_refresh("refreshed")
        known = self._generation
        generation = generation_of(task)
        if generation is None or known is None or generation >= known:
            self._reducer.apply(task)
            if generation is not None:
                self._generation = generation
        return action

    def refresh_failed(self, error: A2AClientError) -> Action:
        """A REFRESH raised ``error``: the stream goes on with what it told (the step held
        back)."""
        return self._take_refresh("refresh_failed")

    # -- inside -------------------------------------------------------------------------------

    def _take_refresh(self, name: str) -> Action:
        action, self._after_refresh = self._after_refresh, None
        if action is None:
            raise self._misuse(name)
        return action

    def _missed(self, event: StreamEvent) -> bool:
        """True when ``event``, the first new one after a re-attach, shows that events were
        missed: its generation is past the next of the task's known one. Never without a
        generation on both sides, nor without a way to read the task."""
        known = self._generation
        if known is None or not self._poll:
            return False
        generation = generation_of(event)
        return generation is not None and generation > known + 1

    def _record(self, event: StreamEvent, size: int = 0, kept: Kept | None = None) -> None:
        """Keep a delivered event (as ``kept``, if given), within ``keep_events`` and
        ``max_bytes``, and fold it in."""
        keep = self._keep
        if keep != 0:
            events = self._events
            if len(events) - self._first == keep:
                self._drop_oldest()
            events.append((event, size, None) if kept is None else kept)
            self._kept_bytes += size
            limit = self._max_bytes
            if limit is not None:
                while self._kept_bytes > limit:
                    self._drop_oldest()
        self._reducer.apply(event, size)
        if event.raw is not None and "generation" in event.raw:
            self._noted(event)

    def _noted(self, value: StreamEvent) -> None:
        """Keep the latest generation the task is known at."""
        generation = generation_of(value)
        if generation is not None and (self._generation is None or generation > self._generation):
            self._generation = generation

    def _drop_oldest(self) -> None:
        events, first = self._events, self._first
        oldest = events[first]
        assert oldest is not None
        self._kept_bytes -= oldest[1]
        events[first] = None
        self._first = first = first + 1
        if first * 2 >= len(events):  # the dropped are half of it: amortised O(1)
            del events[:first]
            self._first = 0

    def _over_size(self) -> bool:
        """True when the task is folded from more than ``max_bytes`` of events."""
        limit = self._max_bytes
        return limit is not None and self._reducer.size > limit

    def _too_large(self) -> Action:
        """FAIL: the task is folded from more than ``max_bytes`` of events."""
        limit = self._max_bytes
        return self._fail(
            A2AProtocolError(
                f"the task this stream folds is larger than max_response_bytes ({limit} bytes "
                "of events); A2AClient(max_response_bytes=...) raises the limit",
                limit=limit,
                events=self.events,
                **self.context,
            )
        )

    def _over(self) -> bool:
        """Whether the stream is over, its last event saying it ends: with the agent's
        message when there is no task, else only in a final state. A message of a task's
        stream (some servers stream every token so), or an end the task's state belies, is
        one more event; the body's end then says whether the task was left unfinished (a
        cut), so that a stream never stops silently short of a final state."""
        task = self._reducer.task
        return task is None or task.status.state.is_final

    def _finish(self) -> Action:
        self._final_seen = True
        self._phase = _Phase.DONE
        return DELIVER_LAST

    def _is_replay(self, event: StreamEvent, size: int) -> bool:
        """After re-attaching: the leading snapshot (folded quietly) and repeats."""
        if isinstance(event, Task) and not self.ends(event):
            self._reducer.apply(event, size)
            generation = generation_of(event)
            if generation is not None:
                self._generation = generation  # the whole task as of then
            return True
        raw = event.raw
        if raw is None:
            return False
        generation = generation_of(event)
        if generation is not None and self._generation is not None and not isinstance(event, Task):
            return generation <= self._generation  # told already
        if self._seen is None:
            self._seen = [e.raw for e in self.events]
        return raw in self._seen

    def _can_resume(self) -> bool:
        return self._resume and self._reducer.task is not None and self._reducer.message is None

    def _resubscribe(self, cut: A2AClientError) -> Action:
        self._cause = cut
        if self._resumes >= self._resume_attempts:
            return self._fail(cut, f"re-attaching failed {self._resumes} times")
        self._resumes += 1
        self._phase = _Phase.RESUBSCRIBING
        return Action(ActionKind.RESUBSCRIBE, self._resumes, cut)

    def _poll_or_fail(self, refusal: A2AClientError) -> Action:
        """The agent refused to re-attach: ask it for the task instead, if allowed."""
        if not self._poll:
            if self._cause is None:
                return self._fail(refusal)
            return self._fail(self._cause, _unrecovered(refusal.message))
        self._phase = _Phase.POLLING
        return self._next_poll()

    def _next_poll(self) -> Action:
        if self._max_polls is not None and self._polls >= self._max_polls:
            assert self._reducer.task is not None
            task = self._reducer.task
            why = f"it was still {task.status.state.value} after {self._polls} polls"
            if self._cause is None:
                return self._fail(A2AConnectionError(f"task {task.id}: {why}", **self.context))
            return self._fail(self._cause, _unrecovered(why))
        self._polls += 1
        return Action(ActionKind.POLL, self._polls)

    def _fail(self, error: A2AClientError, why: str | None = None) -> Action:
        """FAIL with ``error``, or with a new error of its class that also says ``why`` and
        carries the events delivered before it."""
        self._phase = _Phase.DONE
        changes: dict[str, object] = {}
        if why is not None:
            changes["message"] = f"{error.message} ({why})"
        events = self.events
        if events != error.events:
            changes["events"] = events
        return Action(ActionKind.FAIL, error=error.with_context(**changes) if changes else error)

    def _misuse(self, name: str) -> RuntimeError:
        return RuntimeError(f"{name}() makes no sense while the stream is {self._phase.value}")
