"""The task's ordering counter (``generation``, proposed for A2A 1.1: a2aproject/A2A#1810): a
stream re-attached after a cut whose next event jumps past the next generation missed events,
and reads the task again instead of trusting the gap; repeats of what the task already holds
are dropped by it. Without the counter nothing changes."""

from __future__ import annotations

from typing import Any

import pytest

from a2a_anyio import Task, TaskState
from a2a_anyio._follower import ActionKind, StreamFollower, generation_of

from .test_follower import ends_v1, reset, status, task
from .test_stream import StreamingAgent, connect, kinds, v1_chunk, v1_status, v1_task


def at(generation: int | str, frame: dict[str, Any]) -> dict[str, Any]:
    """``frame`` (a v1.0 stream result) with the object it wraps at ``generation``."""
    [(kind, value)] = frame.items()
    return {kind: {**value, "generation": generation}}


def full_task(generation: int | None) -> dict[str, Any]:
    """The task as GetTask tells it: every chunk the stream sent, those it missed too."""
    task: dict[str, Any] = {
        "id": "t-1",
        "contextId": "c-1",
        "status": {"state": "TASK_STATE_WORKING"},
        "artifacts": [{"artifactId": "a", "parts": [{"text": "one two three"}]}],
    }
    if generation is not None:
        task["generation"] = str(generation)  # int64: a string in protobuf's JSON
    return task


def script(agent: StreamingAgent, generations: bool) -> None:
    """A stream cut after its second event; the re-attached one opens on an old snapshot and
    goes on from a later chunk: two chunks were sent while the client was away."""

    def g(generation: int, frame: dict[str, Any]) -> dict[str, Any]:
        return at(generation, frame) if generations else frame

    agent.stream("SendStreamingMessage", [g(1, v1_task()), g(2, v1_chunk("one"))])
    agent.stream(
        "SubscribeToTask",
        [
            g(2, v1_task("WORKING")),
            g(5, v1_chunk(" three", append=True, last=True)),
            g(6, v1_status("COMPLETED")),
        ],
    )
    agent.results["GetTask"] = full_task(5 if generations else None)


@pytest.mark.anyio
async def test_a_gap_after_a_re_attach_reads_the_task_again() -> None:
    agent = StreamingAgent()
    script(agent, generations=True)
    async with connect(agent) as client, client.stream_message("x") as stream:
        events = [e async for e in stream]
    assert [c["method"] for c in agent.calls] == [
        "SendStreamingMessage",
        "SubscribeToTask",
        "GetTask",
    ]
    # each event the agent sent is delivered once; the task holds what the gap hid
    assert kinds(events) == [
        "Task",
        "TaskArtifactUpdateEvent",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    assert stream.task is not None and stream.task.status.state is TaskState.COMPLETED
    assert stream.task.text == "one two three"


@pytest.mark.anyio
async def test_without_generations_nothing_changes() -> None:
    agent = StreamingAgent()
    script(agent, generations=False)
    async with connect(agent) as client, client.stream_message("x") as stream:
        await stream.result()
    assert [c["method"] for c in agent.calls] == ["SendStreamingMessage", "SubscribeToTask"]
    assert stream.task is not None and stream.task.text == " three"  # the gap, unseen


@pytest.mark.anyio
async def test_a_v03_resubscribe_without_a_snapshot_is_checked_too() -> None:
    agent = StreamingAgent()
    working = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "working"}}
    agent.stream("message/stream", [{**working, "generation": 1}])

    def update(state: str, generation: int) -> dict[str, Any]:
        final = state == "completed"
        event = {"kind": "status-update", "taskId": "t-1", "contextId": "c-1", "final": final}
        return {**event, "status": {"state": state}, "generation": generation}

    agent.stream("tasks/resubscribe", [update("working", 4), update("completed", 5)])
    agent.results["tasks/get"] = {**working, "generation": 4, "artifacts": []}
    async with connect(agent, protocol="0.3") as client:
        result = await client.stream_message("x").result()
    assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
    assert [c["method"] for c in agent.calls] == [
        "message/stream",
        "tasks/resubscribe",
        "tasks/get",
    ]


@pytest.mark.anyio
async def test_a_failed_read_leaves_the_stream_as_it_was() -> None:
    agent = StreamingAgent()
    script(agent, generations=True)
    del agent.results["GetTask"]
    agent.errors["GetTask"] = {"code": -32603, "message": "busy"}
    async with connect(agent) as client, client.stream_message("x") as stream:
        await stream.result()
    assert [c["method"] for c in agent.calls][-1] == "GetTask"
    assert stream.task is not None and stream.task.status.state is TaskState.COMPLETED
    assert stream.task.text == " three"  # the read's error is told at INFO, not raised


@pytest.mark.anyio
async def test_what_the_snapshot_holds_already_is_not_delivered_again() -> None:
    agent = StreamingAgent()
    agent.stream("SendStreamingMessage", [at(1, v1_task()), at(2, v1_status("WORKING", "a"))])
    agent.stream(
        "SubscribeToTask",
        [
            at(3, v1_task("WORKING")),
            at(3, v1_status("WORKING", "b")),  # the change the snapshot holds
            at(4, v1_status("COMPLETED")),
        ],
    )
    async with connect(agent) as client, client.stream_message("x") as stream:
        events = [e async for e in stream]
    assert kinds(events) == ["Task", "TaskStatusUpdateEvent", "TaskStatusUpdateEvent"]
    assert [c["method"] for c in agent.calls] == ["SendStreamingMessage", "SubscribeToTask"]


# -- the follower alone ---------------------------------------------------------------------


def test_generations_are_read_as_protobuf_s_json_writes_them() -> None:
    for value, expected in [(7, 7), ("7", 7), (0, 0), ("-1", None), (-1, None), (True, None)]:
        event = status("working")
        event.raw = {"generation": value}
        assert generation_of(event) == expected, value
    for raw in [None, {}, {"generation": "7.0"}, {"generation": 7.0}, {"generation": "9" * 21}]:
        event = status("working")
        event.raw = raw
        assert generation_of(event) is None, raw


def test_a_refresh_is_asked_only_after_a_re_attach_and_with_a_way_to_read() -> None:
    def numbered(event: Any, generation: int) -> Any:
        event.raw = {"generation": generation}
        return event

    followers = {poll: StreamFollower(ends_v1, poll=poll) for poll in (True, False)}
    for poll, expected in [(True, ActionKind.REFRESH), (False, ActionKind.DELIVER)]:
        follower = followers[poll]
        assert follower.event(numbered(task(), 1)).kind is ActionKind.DELIVER
        # a live stream's jump is the agent's own numbering: trusted
        assert follower.event(numbered(status("working"), 5)).kind is ActionKind.DELIVER
        assert follower.read_failed(reset()).kind is ActionKind.RESUBSCRIBE
        follower.reattached()
        assert follower.event(numbered(status("working"), 9)).kind is expected
    # the refresh holds back the step of the event that showed the gap
    follower = followers[True]
    assert follower.refreshed(numbered(task("working"), 9)).kind is ActionKind.DELIVER
    with pytest.raises(RuntimeError):
        follower.refreshed(task("working"))
