"""The stream follower, driven without any I/O: what happens on the wire -> what to do next."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest

from a2a_anyio import (
    A2AClientError,
    A2AConnectionError,
    A2AHTTPError,
    A2AProtocolError,
    A2AServerError,
    A2ATimeoutError,
    Artifact,
    Message,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotFoundError,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
    UnsupportedOperationError,
)
from a2a_anyio._follower import Action, ActionKind, StreamFollower

# -- events, each with its own wire dict (equal dicts make a repeat) -----------------------------


def task(state: str = "submitted", text: str | None = None) -> Task:
    artifacts = [] if text is None else [Artifact("a", [TextPart(text)])]
    raw = {"task": {"id": "t-1", "state": state, "text": text}}
    return Task("t-1", "c-1", TaskStatus(TaskState(state)), artifacts, raw=raw)


def status(state: str, *, final: bool | None = None) -> TaskStatusUpdateEvent:
    final = TaskState(state).is_final if final is None else final
    raw = {"statusUpdate": {"taskId": "t-1", "state": state, "final": final}}
    return TaskStatusUpdateEvent("t-1", "c-1", TaskStatus(TaskState(state)), final, raw=raw)


def chunk(text: str, *, append: bool = False) -> TaskArtifactUpdateEvent:
    raw = {"artifactUpdate": {"taskId": "t-1", "text": text, "append": append}}
    art = Artifact("a", [TextPart(text)])
    return TaskArtifactUpdateEvent("t-1", "c-1", art, append=append, raw=raw)


def message(text: str) -> Message:
    return Message(Role.AGENT, [TextPart(text)], "m-1", raw={"message": {"text": text}})


def ends_v1(event: StreamEvent) -> bool:
    """v1.0's rule: a final status, a Message, or a Task in a terminal or interrupted state."""
    if isinstance(event, TaskArtifactUpdateEvent):
        return False
    if isinstance(event, TaskStatusUpdateEvent):
        return event.final
    if isinstance(event, Message):
        return True
    return event.status.state.is_final


def ends_v03(event: StreamEvent) -> bool:
    """v0.3's rule: like v1.0, but only a terminal Task ends (interruptions send final)."""
    if isinstance(event, Task):
        return event.status.state.is_terminal
    return ends_v1(event)


def reset(text: str = "connection reset") -> A2AConnectionError:
    return A2AConnectionError(text)


def refusal() -> UnsupportedOperationError:
    return UnsupportedOperationError("task is terminal")


# -- inputs, and the table ------------------------------------------------------------------------


@dataclass(frozen=True)
class In:
    """One input to the follower (``label`` names it in failure reports)."""

    label: str
    call: Callable[[StreamFollower], Action | None]

    def __repr__(self) -> str:
        return self.label


def event(e: StreamEvent) -> In:
    return In(f"event({type(e).__name__})", lambda f: f.event(e))


def sized(e: StreamEvent, size: int) -> In:
    """An event of ``size`` bytes as received."""
    return In(f"event({type(e).__name__}, {size} bytes)", lambda f: f.event(e, size))


def body_ended() -> In:
    return In("body_ended()", lambda f: f.body_ended())


def read_failed(error: A2AClientError) -> In:
    return In(f"read_failed({error.message!r})", lambda f: f.read_failed(error))


def reattached() -> In:
    return In("reattached()", lambda f: f.reattached())


def reattach_failed(error: A2AClientError) -> In:
    return In(f"reattach_failed({error.message!r})", lambda f: f.reattach_failed(error))


def polled(t: Task) -> In:
    return In(f"polled({t.status.state.value})", lambda f: f.polled(t))


def poll_failed(error: A2AClientError) -> In:
    return In(f"poll_failed({error.message!r})", lambda f: f.poll_failed(error))


def code(action: Action | None) -> str:
    """``DELIVER``, ``RESUBSCRIBE 2``, ``POLL 1``...; ``-`` for an input with no answer."""
    if action is None:
        return "-"
    return f"{action.kind.name} {action.attempt}" if action.attempt else action.kind.name


@dataclass
class Case:
    id: str
    steps: list[tuple[In, str]]  # each input, with the action expected for it
    state: TaskState | None  # the final task's state (None: no task)
    finished: bool = False
    text: str = ""  # the final task's text
    kept: list[str] | None = None  # the kept events, by type (None: not checked)
    error: tuple[type[A2AClientError], str] | None = None  # FAIL's error: type, full message
    resumes: int = 0
    ends: Callable[[StreamEvent], bool] = ends_v1
    options: dict[str, Any] = field(default_factory=dict)


ENDED = "the stream ended before the task reached a final state"
TOO_LARGE = (
    "the task this stream folds is larger than max_response_bytes (1000 bytes of events); "
    "A2AClient(max_response_bytes=...) raises the limit"
)
TWO_DELIVERED = [(event(task()), "DELIVER"), (event(status("working")), "DELIVER")]

CASES = [
    Case(
        "plain stream to a final event",
        [
            (event(task()), "DELIVER"),
            (event(status("working")), "DELIVER"),
            (event(chunk("one")), "DELIVER"),
            (event(chunk(" two", append=True)), "DELIVER"),
            (event(status("completed")), "DELIVER_LAST"),
        ],
        TaskState.COMPLETED,
        finished=True,
        text="one two",
        kept=["Task", "Status", "Artifact", "Artifact", "Status"],
    ),
    Case(
        "an interrupted Task ends a stream under v1.0's rule",
        [(event(task("input-required")), "DELIVER_LAST")],
        TaskState.INPUT_REQUIRED,
        finished=True,
    ),
    Case(
        "but not under v0.3's, whose final flag ends it",
        [
            (event(task("input-required")), "DELIVER"),
            (event(status("input-required", final=True)), "DELIVER_LAST"),
        ],
        TaskState.INPUT_REQUIRED,
        finished=True,
        ends=ends_v03,
    ),
    Case(
        "a Message answer ends the stream",
        [(event(message("hi")), "DELIVER_LAST")],
        None,
        finished=True,
        kept=["Message"],
    ),
    Case(
        "body end after a final state without a final flag",
        [
            (event(task("working")), "DELIVER"),
            (event(status("input-required", final=False)), "DELIVER"),
            (body_ended(), "END"),
        ],
        TaskState.INPUT_REQUIRED,
        finished=True,
    ),
    Case(
        "body end while working: re-attached, snapshot and repeats dropped",
        [
            *TWO_DELIVERED,
            (body_ended(), "RESUBSCRIBE 1"),
            (reattached(), "-"),
            (event(task("working")), "DROP"),
            (event(status("working")), "DROP"),
            (event(chunk("one two")), "DELIVER"),
            (event(status("completed")), "DELIVER_LAST"),
        ],
        TaskState.COMPLETED,
        finished=True,
        text="one two",
        kept=["Task", "Status", "Artifact", "Status"],
        resumes=1,
    ),
    Case(
        "a cut with no task yet fails with the cut as it is",
        [(read_failed(reset()), "FAIL")],
        None,
        error=(A2AConnectionError, "connection reset"),
    ),
    Case(
        "a body that ends with no task yet fails",
        [(body_ended(), "FAIL")],
        None,
        error=(A2AConnectionError, ENDED),
    ),
    Case(
        "cut, re-attach: snapshot and repeated chunks dropped, new events delivered",
        [
            (event(task()), "DELIVER"),
            (event(chunk("one")), "DELIVER"),
            (read_failed(reset()), "RESUBSCRIBE 1"),
            (reattached(), "-"),
            (event(task("working", "one")), "DROP"),
            (event(chunk("one")), "DROP"),
            (event(chunk(" two", append=True)), "DELIVER"),
            (event(status("completed")), "DELIVER_LAST"),
        ],
        TaskState.COMPLETED,
        finished=True,
        text="one two",  # "oneone two" had the repeat been folded again
        kept=["Task", "Artifact", "Artifact", "Status"],
        resumes=1,
    ),
    Case(
        "repeats are dropped only before the first new event",
        [
            *TWO_DELIVERED,
            (read_failed(reset()), "RESUBSCRIBE 1"),
            (reattached(), "-"),
            (event(chunk("new")), "DELIVER"),
            (event(status("working")), "DELIVER"),
        ],
        TaskState.WORKING,
        text="new",
        kept=["Task", "Status", "Artifact", "Status"],
        resumes=1,
    ),
    Case(
        "a final snapshot after a re-attach is delivered last",
        [
            *TWO_DELIVERED,
            (body_ended(), "RESUBSCRIBE 1"),
            (reattached(), "-"),
            (event(task("completed", "done")), "DELIVER_LAST"),
        ],
        TaskState.COMPLETED,
        finished=True,
        text="done",
        kept=["Task", "Status", "Task"],
        resumes=1,
    ),
    Case(
        "without kept events, repeats cannot be recognised",
        [
            *TWO_DELIVERED,
            (body_ended(), "RESUBSCRIBE 1"),
            (reattached(), "-"),
            (event(task("working")), "DROP"),
            (event(status("working")), "DELIVER"),
        ],
        TaskState.WORKING,
        kept=[],
        resumes=1,
        options={"keep_events": 0},
    ),
    Case(
        "a refused re-attach is polled; the final task is delivered last",
        [
            *TWO_DELIVERED,
            (body_ended(), "RESUBSCRIBE 1"),
            (reattach_failed(refusal()), "POLL 1"),
            (polled(task("completed", "one two")), "DELIVER_LAST"),
        ],
        TaskState.COMPLETED,
        finished=True,
        text="one two",
        kept=["Task", "Status", "Task"],
        resumes=1,
    ),
    Case(
        "a refusal inside the re-attached stream is polled until a final state",
        [
            *TWO_DELIVERED,
            (read_failed(reset()), "RESUBSCRIBE 1"),
            (reattached(), "-"),
            (read_failed(refusal()), "POLL 1"),
            (polled(task("working", "one")), "POLL 2"),
            (polled(task("completed", "one two")), "DELIVER_LAST"),
        ],
        TaskState.COMPLETED,
        finished=True,
        text="one two",
        kept=["Task", "Status", "Task"],  # the working poll was folded, not delivered
        resumes=1,
    ),
    Case(
        "a task polled while it works updates the task, undelivered",
        [
            *TWO_DELIVERED,
            (body_ended(), "RESUBSCRIBE 1"),
            (reattach_failed(refusal()), "POLL 1"),
            (polled(task("working", "half")), "POLL 2"),
        ],
        TaskState.WORKING,
        text="half",
        kept=["Task", "Status"],
        resumes=1,
    ),
    Case(
        "an HTTP error instead of the re-attached stream is polled too",
        [
            *TWO_DELIVERED,
            (body_ended(), "RESUBSCRIBE 1"),
            (reattach_failed(A2AHTTPError(status_code=404)), "POLL 1"),
        ],
        TaskState.WORKING,
        resumes=1,
    ),
    Case(
        "a re-attach that times out is polled, not tried again",
        [
            *TWO_DELIVERED,
            (body_ended(), "RESUBSCRIBE 1"),
            (reattach_failed(A2ATimeoutError("slow", timeout="connect")), "POLL 1"),
        ],
        TaskState.WORKING,
        resumes=1,
    ),
    Case(
        "a failed poll fails with the latest cut, saying why",
        [
            *TWO_DELIVERED,
            (read_failed(reset()), "RESUBSCRIBE 1"),
            (reattached(), "-"),
            (event(task("working")), "DROP"),
            (body_ended(), "RESUBSCRIBE 2"),
            (reattach_failed(refusal()), "POLL 1"),
            (poll_failed(TaskNotFoundError(task_id="t-1")), "FAIL"),
        ],
        TaskState.WORKING,
        error=(
            A2AConnectionError,
            f"{ENDED} (and the task could not be followed up: task not found: t-1)",
        ),
        resumes=2,
    ),
    Case(
        "a refusal with polling off fails with the cut, saying why",
        [
            *TWO_DELIVERED,
            (read_failed(reset()), "RESUBSCRIBE 1"),
            (reattached(), "-"),
            (read_failed(refusal()), "FAIL"),
        ],
        TaskState.WORKING,
        error=(
            A2AConnectionError,
            "connection reset (and the task could not be followed up: task is terminal)",
        ),
        resumes=1,
        options={"poll": False},
    ),
    Case(
        "polls are bounded when asked",
        [
            *TWO_DELIVERED,
            (body_ended(), "RESUBSCRIBE 1"),
            (reattach_failed(refusal()), "POLL 1"),
            (polled(task("working")), "POLL 2"),
            (polled(task("working")), "FAIL"),
        ],
        TaskState.WORKING,
        error=(
            A2AConnectionError,
            f"{ENDED} (and the task could not be followed up: it was still working after 2 polls)",
        ),
        resumes=1,
        options={"max_polls": 2},
    ),
    Case(
        "re-attaches cut before they open: attempts exhausted",
        [
            *TWO_DELIVERED,
            (read_failed(reset("reset 1")), "RESUBSCRIBE 1"),
            (reattach_failed(reset("reset 2")), "RESUBSCRIBE 2"),
            (reattach_failed(reset("reset 3")), "RESUBSCRIBE 3"),
            (reattach_failed(reset("reset 4")), "FAIL"),
        ],
        TaskState.WORKING,
        error=(A2AConnectionError, "reset 1 (re-attaching failed 3 times)"),
        resumes=3,
    ),
    Case(
        "re-attached streams cut again: attempts exhausted, the last cut says so",
        [
            *TWO_DELIVERED,
            (read_failed(reset("reset 1")), "RESUBSCRIBE 1"),
            (reattached(), "-"),
            (event(task("working")), "DROP"),
            (body_ended(), "RESUBSCRIBE 2"),
            (reattached(), "-"),
            (event(task("working")), "DROP"),
            (read_failed(reset()), "RESUBSCRIBE 3"),
            (reattached(), "-"),
            (body_ended(), "FAIL"),
        ],
        TaskState.WORKING,
        kept=["Task", "Status"],
        error=(A2AConnectionError, f"{ENDED} (re-attaching failed 3 times)"),
        resumes=3,
    ),
    Case(
        "attempts are counted as asked",
        [
            *TWO_DELIVERED,
            (body_ended(), "RESUBSCRIBE 1"),
            (reattach_failed(reset()), "FAIL"),
        ],
        TaskState.WORKING,
        error=(A2AConnectionError, f"{ENDED} (re-attaching failed 1 times)"),
        resumes=1,
        options={"resume_attempts": 1},
    ),
    Case(
        "resume off: a body that ends while working fails",
        [*TWO_DELIVERED, (body_ended(), "FAIL")],
        TaskState.WORKING,
        kept=["Task", "Status"],
        error=(A2AConnectionError, ENDED),
        options={"resume": False},
    ),
    Case(
        "resume off: a cut fails as it is",
        [*TWO_DELIVERED, (read_failed(reset()), "FAIL")],
        TaskState.WORKING,
        error=(A2AConnectionError, "connection reset"),
        options={"resume": False},
    ),
    Case(
        "an idle timeout is not a cut",
        [*TWO_DELIVERED, (read_failed(A2ATimeoutError("idle", timeout="stream-idle")), "FAIL")],
        TaskState.WORKING,
        error=(A2ATimeoutError, "idle"),
    ),
    Case(
        "an error event in the first stream fails with it",
        [*TWO_DELIVERED, (read_failed(A2AServerError("crashed", code=-32603)), "FAIL")],
        TaskState.WORKING,
        error=(A2AServerError, "crashed"),
    ),
    Case(
        "a bad frame in a re-attached stream fails with it",
        [
            *TWO_DELIVERED,
            (body_ended(), "RESUBSCRIBE 1"),
            (reattached(), "-"),
            (read_failed(A2AProtocolError("bad frame")), "FAIL"),
        ],
        TaskState.WORKING,
        error=(A2AProtocolError, "bad frame"),
        resumes=1,
    ),
]

CASES += [
    Case(
        "a task folded from more than max_bytes fails the stream",
        [
            (sized(task(), 100), "DELIVER"),
            (sized(chunk("one"), 400), "DELIVER"),
            (sized(chunk(" two", append=True), 400), "DELIVER"),
            (sized(chunk(" three", append=True), 101), "FAIL"),
        ],
        TaskState.SUBMITTED,
        text="one two three",
        error=(A2AProtocolError, TOO_LARGE),
        options={"max_bytes": 1000},
    ),
    Case(
        "a task of exactly max_bytes does not",
        [
            (sized(task(), 100), "DELIVER"),
            (sized(chunk("one"), 899), "DELIVER"),
            (sized(status("completed"), 1), "DELIVER_LAST"),
        ],
        TaskState.COMPLETED,
        finished=True,
        text="one",
        options={"max_bytes": 1000},
    ),
    Case(
        "new artifacts add up",
        [
            (sized(task(), 100), "DELIVER"),
            *[
                (
                    sized(TaskArtifactUpdateEvent("t-1", "c-1", Artifact(f"a{i}", [])), 300),
                    "DELIVER",
                )
                for i in range(3)
            ],
            (sized(TaskArtifactUpdateEvent("t-1", "c-1", Artifact("a3", [])), 300), "FAIL"),
        ],
        TaskState.SUBMITTED,
        error=(A2AProtocolError, TOO_LARGE),
        options={"max_bytes": 1000},
    ),
    Case(
        "statuses, and artifacts sent whole again, replace what they update: no growth",
        [
            (sized(task(), 100), "DELIVER"),
            *[(sized(status("working"), 400), "DELIVER") for _ in range(20)],
            *[(sized(chunk(f"v{i}"), 400), "DELIVER") for i in range(20)],
            (sized(status("completed"), 400), "DELIVER_LAST"),
        ],
        TaskState.COMPLETED,
        finished=True,
        text="v19",
        kept=["Artifact", "Status"],  # the latest that fit in max_bytes
        options={"max_bytes": 1000},
    ),
    Case(
        "a snapshot starts the count again",
        [
            (sized(task(), 100), "DELIVER"),
            (sized(chunk("one"), 800), "DELIVER"),
            (sized(task("working"), 100), "DELIVER"),
            (sized(chunk("two"), 800), "DELIVER"),
        ],
        TaskState.WORKING,
        text="two",
        options={"max_bytes": 1000},
    ),
    Case(
        "the snapshot that opens a re-attached stream counts too",
        [
            *TWO_DELIVERED,
            (body_ended(), "RESUBSCRIBE 1"),
            (reattached(), "-"),
            (sized(task("working", "huge"), 1001), "FAIL"),
        ],
        TaskState.WORKING,
        text="huge",
        error=(A2AProtocolError, TOO_LARGE),
        resumes=1,
        options={"max_bytes": 1000},
    ),
]

SHORT = {"TaskStatusUpdateEvent": "Status", "TaskArtifactUpdateEvent": "Artifact"}


def short_kinds(events: list[StreamEvent]) -> list[str]:
    return [SHORT.get(type(e).__name__, type(e).__name__) for e in events]


@pytest.mark.parametrize("case", [pytest.param(c, id=c.id) for c in CASES])
def test_follower(case: Case) -> None:
    # Every event kept, unless the case says otherwise: which ones a stream keeps across cuts
    # and replays.
    follower = StreamFollower(case.ends, **{"keep_events": None, **case.options})
    actions = [step.call(follower) for step, _ in case.steps]
    assert [(step, code(a)) for (step, _), a in zip(case.steps, actions, strict=True)] == [
        (step, expected) for step, expected in case.steps
    ]
    last = actions[-1]
    assert last is not None
    stopped = last.kind in (ActionKind.DELIVER_LAST, ActionKind.END, ActionKind.FAIL)
    assert follower.done is stopped
    assert follower.finished is case.finished
    assert follower.resumes == case.resumes
    if case.state is None:
        assert follower.task is None
        assert follower.task_id is None
    else:
        assert follower.task is not None
        assert follower.task.status.state is case.state
        assert follower.task.text == case.text
        assert follower.task_id == "t-1"
    if case.kept is not None:
        assert short_kinds(follower.events) == case.kept
    if case.error is None:
        assert last.error is None or last.kind is ActionKind.RESUBSCRIBE
    else:
        cls, text = case.error
        assert last.kind is ActionKind.FAIL
        assert type(last.error) is cls
        assert last.error.message == text


def test_a_message_answer_is_kept_as_the_message() -> None:
    follower = StreamFollower(ends_v1)
    reply = message("hi")
    assert follower.event(reply).kind is ActionKind.DELIVER_LAST
    assert follower.message is reply
    assert follower.task is None


def test_the_cut_keeps_its_cause() -> None:
    follower = StreamFollower(ends_v1)
    follower.event(task("working"))
    cut = reset()
    cut.__cause__ = OSError("reset by peer")
    assert follower.read_failed(cut) == Action(ActionKind.RESUBSCRIBE, 1, cut)
    assert follower.reattach_failed(refusal()) == Action(ActionKind.POLL, 1)
    fail = follower.poll_failed(TaskNotFoundError(task_id="t-1"))
    # A new error says why the cut was not repaired, in the cut's place (its cause); the cut
    # itself is left as it was.
    assert fail.error is not None and fail.error.__cause__ is cut.__cause__
    assert type(fail.error) is A2AConnectionError
    assert (
        fail.error.message
        == "connection reset (and the task could not be followed up: task not found: t-1)"
    )
    assert cut.message == "connection reset"
    assert isinstance(cut.__cause__, OSError)


# -- how many events are kept ---------------------------------------------------------------------


@pytest.mark.parametrize(("keep", "kept"), [(None, 252), (100, 100), (3, 3), (0, 0)])
def test_keep_events_bounds_what_is_held(keep: int | None, kept: int) -> None:
    follower = StreamFollower(ends_v1, keep_events=keep)
    stream: list[StreamEvent] = [
        task(),
        *(chunk(f" {i}", append=i > 0) for i in range(250)),
        status("completed"),
    ]
    delivered: list[StreamEvent] = []
    for e in stream:
        follower.event(e)
        delivered.append(e)
        assert len(follower.events) == (
            len(delivered) if keep is None else min(keep, len(delivered))
        )
    assert follower.events == delivered[len(delivered) - kept :]
    assert all(
        a is b for a, b in zip(follower.events, delivered[len(delivered) - kept :], strict=True)
    )
    assert follower.task is not None
    assert follower.task.text == "".join(f" {i}" for i in range(250))
    assert follower.finished


@pytest.mark.parametrize(
    ("keep", "max_bytes", "kept"),
    [(None, 1000, 3), (100, 1000, 3), (2, 1000, 2), (None, 500, 1), (0, 1000, 0), (None, None, 50)],
)
def test_the_events_kept_are_bounded_in_bytes_too(
    keep: int | None, max_bytes: int | None, kept: int
) -> None:
    follower = StreamFollower(ends_v1, keep_events=keep, max_bytes=max_bytes)
    delivered = [status("working") for _ in range(50)]
    for e in delivered:
        assert follower.event(e, 300).kind is ActionKind.DELIVER  # statuses do not grow the task
        assert max_bytes is None or 300 * len(follower.events) <= max_bytes
    assert len(follower.events) == kept
    assert all(a is b for a, b in zip(follower.events, delivered[50 - kept :], strict=True))


def test_events_is_a_copy() -> None:
    follower = StreamFollower(ends_v1)
    follower.event(task())
    follower.events.clear()
    assert len(follower.events) == 1


@pytest.mark.parametrize(
    "options",
    [{"keep_events": -1}, {"resume_attempts": -1}, {"max_polls": 0}, {"max_bytes": 0}],
    ids=["keep_events", "resume_attempts", "max_polls", "max_bytes"],
)
def test_bad_options(options: dict[str, Any]) -> None:
    name = next(iter(options))
    with pytest.raises(ValueError, match=name):
        StreamFollower(ends_v1, **options)


# -- inputs out of place -------------------------------------------------------------------------


def _polling() -> StreamFollower:
    follower = StreamFollower(ends_v1)
    follower.event(task("working"))
    follower.body_ended()
    follower.reattach_failed(refusal())
    return follower


def _finished() -> StreamFollower:
    follower = StreamFollower(ends_v1)
    follower.event(task("completed"))
    return follower


OUT_OF_PLACE = [
    ("streaming", lambda: StreamFollower(ends_v1), reattached()),
    ("streaming", lambda: StreamFollower(ends_v1), polled(task("completed"))),
    ("streaming", lambda: StreamFollower(ends_v1), reattach_failed(reset())),
    ("polling", _polling, event(status("working"))),
    ("polling", _polling, body_ended()),
    ("polling", _polling, read_failed(reset())),
    ("polling", _polling, reattached()),
    ("finished", _finished, event(status("working"))),
    ("finished", _finished, body_ended()),
    ("finished", _finished, polled(task("completed"))),
    ("finished", _finished, poll_failed(reset())),
]


@pytest.mark.parametrize(
    ("make", "step"), [pytest.param(m, s, id=f"{p}-{s!r}") for p, m, s in OUT_OF_PLACE]
)
def test_inputs_out_of_place_are_refused(make: Callable[[], StreamFollower], step: In) -> None:
    follower = make()
    with pytest.raises(RuntimeError, match="makes no sense"):
        step.call(follower)


# -- a shell that runs the follower: it always stops ---------------------------------------------

Item = StreamEvent | A2AClientError | None  # None: the body ends


@dataclass
class Agent:
    """What the shell's I/O would find: each re-attach and each poll, by attempt number."""

    reattach: Callable[[int], Iterable[Item] | A2AClientError]
    poll: Callable[[int], Task | A2AClientError]
    calls: list[str] = field(default_factory=list)


def run(follower: StreamFollower, first: Iterable[Item], agent: Agent) -> tuple[list[Any], Action]:
    """Drive ``follower`` as MessageStream would; the delivered events and the last action."""
    delivered: list[Any] = []
    items: Iterator[Item] = iter(first)
    for _ in range(10_000):
        item = next(items, None)
        if isinstance(item, A2AClientError):
            action = follower.read_failed(item)
        elif item is None:
            action = follower.body_ended()
        else:
            action = follower.event(item)
        while action.kind in (ActionKind.RESUBSCRIBE, ActionKind.POLL):
            if action.kind is ActionKind.RESUBSCRIBE:
                agent.calls.append(f"resubscribe {follower.task_id}")
                opened = agent.reattach(action.attempt)
                if isinstance(opened, A2AClientError):
                    action = follower.reattach_failed(opened)
                    continue
                follower.reattached()
                items = iter(opened)
                break
            agent.calls.append(f"poll {follower.task_id}")
            answer = agent.poll(action.attempt)
            if isinstance(answer, A2AClientError):
                action = follower.poll_failed(answer)
            else:
                item, action = answer, follower.polled(answer)
        if action.kind in (ActionKind.DELIVER, ActionKind.DELIVER_LAST):
            delivered.append(item)
        if action.kind in (ActionKind.DELIVER_LAST, ActionKind.END, ActionKind.FAIL):
            return delivered, action
    raise AssertionError("the follower never let the stream stop")


def never_polled(attempt: int) -> Task:
    raise AssertionError("no poll expected")


def test_a_resumed_stream_reads_as_one() -> None:
    agent = Agent(
        lambda n: [task("working"), status("working"), chunk("one two"), status("completed")],
        never_polled,
    )
    follower = StreamFollower(ends_v1, keep_events=None)
    delivered, last = run(follower, [task(), status("working")], agent)
    assert short_kinds(delivered) == ["Task", "Status", "Artifact", "Status"]
    assert last.kind is ActionKind.DELIVER_LAST
    assert agent.calls == ["resubscribe t-1"]
    assert follower.events == delivered


def test_a_task_that_never_finishes_is_not_followed_forever() -> None:
    # every re-attach opens on a working snapshot and is cut again
    agent = Agent(lambda n: [task("working"), reset()], never_polled)
    follower = StreamFollower(ends_v1)
    delivered, last = run(follower, [task(), status("working")], agent)
    assert last.kind is ActionKind.FAIL
    assert last.error is not None
    assert "re-attaching failed 3 times" in last.error.message
    assert agent.calls == ["resubscribe t-1"] * 3
    assert short_kinds(delivered) == ["Task", "Status"]


def test_polling_a_task_that_never_finishes_stops_at_max_polls() -> None:
    agent = Agent(lambda n: refusal(), lambda n: task("working"))
    follower = StreamFollower(ends_v1, max_polls=5)
    _, last = run(follower, [task(), status("working")], agent)
    assert last.kind is ActionKind.FAIL
    assert agent.calls == ["resubscribe t-1"] + ["poll t-1"] * 5


def test_polling_stops_at_the_first_final_answer() -> None:
    answers = ["working", "working", "input-required", "completed"]
    agent = Agent(lambda n: refusal(), lambda n: task(answers[n - 1]))
    follower = StreamFollower(ends_v1)
    delivered, last = run(follower, [task(), status("working")], agent)
    assert last.kind is ActionKind.DELIVER_LAST
    assert agent.calls == ["resubscribe t-1"] + ["poll t-1"] * 3
    assert follower.task is not None
    assert follower.task.status.state is TaskState.INPUT_REQUIRED
    assert delivered[-1] is not follower.task  # the reducer holds its own copy
    assert short_kinds(delivered) == ["Task", "Status", "Task"]


# -- following a task up from an answer, with no stream of its own ------------------------------


def test_follow_re_attaches_at_once_and_polls_when_refused() -> None:
    f = StreamFollower(ends_v1)
    first = f.follow(task("working"))
    assert (first.kind, first.attempt, first.error) == (ActionKind.RESUBSCRIBE, 0, None)
    assert f.task_id == "t-1"
    poll = f.reattach_failed(refusal())
    assert (poll.kind, poll.attempt) == (ActionKind.POLL, 1)
    assert f.polled(task("working")).kind is ActionKind.POLL
    assert f.polled(task("completed", "done")).kind is ActionKind.DELIVER_LAST
    assert f.task is not None and f.task.status.state is TaskState.COMPLETED


def test_follow_a_task_after_re_attaching_to_it() -> None:
    f = StreamFollower(ends_v1)
    f.follow(task("submitted"))
    f.reattached()
    assert f.event(task("working")).kind is ActionKind.DROP  # the snapshot that opens it
    assert f.event(chunk("x")).kind is ActionKind.DELIVER
    assert f.event(status("completed")).kind is ActionKind.DELIVER_LAST
    assert f.task is not None and f.task.artifacts[0].text == "x"


def test_follow_without_re_attach_polls_after_a_wait() -> None:
    f = StreamFollower(ends_v1, resume=False)
    poll = f.follow(task("working"))
    assert (poll.kind, poll.attempt) == (ActionKind.POLL, 2)  # the answer was the first look


def test_a_follow_up_fails_with_the_error_that_stopped_it() -> None:
    f = StreamFollower(ends_v1, resume=False)
    f.follow(task("working"))
    gone = TaskNotFoundError(task_id="t-1")
    failed = f.poll_failed(gone)
    assert failed.kind is ActionKind.FAIL and failed.error is gone
    refused = StreamFollower(ends_v1, poll=False)
    refused.follow(task("working"))
    no = refusal()
    assert refused.reattach_failed(no).error is no
    stuck = StreamFollower(ends_v1, resume=False, poll=False)
    assert stuck.follow(task("working")).kind is ActionKind.FAIL
    bounded = StreamFollower(ends_v1, resume=False, max_polls=2)
    bounded.follow(task("working"))
    last = bounded.polled(task("working"))
    assert last.kind is ActionKind.FAIL and "still working after 2 polls" in str(last.error)


def test_follow_is_for_a_task_not_final_and_a_follower_not_started() -> None:
    with pytest.raises(ValueError, match="nothing to follow"):
        StreamFollower(ends_v1).follow(task("completed"))
    f = StreamFollower(ends_v1)
    f.event(task("working"))
    with pytest.raises(RuntimeError):
        f.follow(task("working"))


def test_a_silent_follow_up_looks_again_without_spending_attempts() -> None:
    f = StreamFollower(ends_v1, resume_attempts=1)
    f.follow(task("working"))
    for _ in range(3):
        f.reattached()
        assert f.event(task("working")).kind is ActionKind.DROP
        idle = A2ATimeoutError("quiet", timeout="stream-idle")
        again = f.read_failed(idle)
        assert (again.kind, again.error) == (ActionKind.RESUBSCRIBE, None)
    assert f.resumes == 0
    f.reattached()
    assert f.event(task("completed")).kind is ActionKind.DELIVER_LAST
    # a stream of the caller's own ends at its idle limit, as before
    own = StreamFollower(ends_v1)
    own.event(task("working"))
    quiet = A2ATimeoutError("quiet", timeout="stream-idle")
    assert own.read_failed(quiet).kind is ActionKind.FAIL


def test_the_chunks_kept_hold_their_text_once_with_the_task() -> None:
    # A kept chunk's data repeats the text the task holds: only the rest of it is kept, and
    # the same rest as the chunk before's is that one's.
    import json
    import tracemalloc

    from a2a_anyio._dialects import v1

    def decode(data: Any) -> StreamEvent:
        return v1.decode_stream_response(json.loads(data))

    def wire(i: int) -> str:
        artifact = {"artifactId": "a", "parts": [{"text": f"{i:05d}" + "x" * 1000}]}
        update = {"taskId": "t-1", "contextId": "c-1", "artifact": artifact, "append": i > 0}
        return json.dumps({"artifactUpdate": update})

    first = v1.decode_stream_response(
        {"task": {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_WORKING"}}}
    )
    held = {}
    for keep in (None, 0):
        follower = StreamFollower(ends_v1, keep_events=keep)
        follower.event(first)
        tracemalloc.start()
        try:
            datas = [wire(i) for i in range(100)]  # as read off the wire: traced
            for data in datas:
                follower.event(decode(data), len(data), data, decode)
            del datas, data
            held[keep] = tracemalloc.get_traced_memory()[0]
        finally:
            tracemalloc.stop()
        assert follower.task is not None and len(follower.task.text) == 100 * 1005
        if keep is None:
            kept = follower.events[1:]  # (the task first)
            assert kept == [decode(wire(i)) for i in range(100)]  # typed again, equal
            assert [e.raw for e in kept] == [
                json.loads(wire(i))["artifactUpdate"] for i in range(100)
            ]
    # Each chunk kept: about 0.1 KB, not the 1 KB of its text again.
    assert held[None] - held[0] < 100 * 200
