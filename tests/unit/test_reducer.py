"""The task reducer: stream events folded into the current Task."""

from __future__ import annotations

import copy
from typing import Any

from a2a_anyio import (
    Artifact,
    Message,
    Role,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskReducer,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)

from ._support import fold


def _task(task_id: str = "t", *artifacts: Artifact) -> Task:
    return Task(task_id, "c", TaskStatus(TaskState.SUBMITTED), artifacts=list(artifacts))


def _art(text: str, artifact_id: str = "a", name: str | None = None) -> Artifact:
    return Artifact(artifact_id, [TextPart(text)], name=name)


def _chunk(
    text: str,
    *,
    append: bool = False,
    last: bool = False,
    artifact_id: str = "a",
    task_id: str = "t",
) -> TaskArtifactUpdateEvent:
    return TaskArtifactUpdateEvent(
        task_id, "c", _art(text, artifact_id), append=append, last_chunk=last
    )


def _status(state: TaskState, task_id: str = "t") -> TaskStatusUpdateEvent:
    return TaskStatusUpdateEvent(task_id, "c", TaskStatus(state), final=state.is_final)


def test_status_replaces_status() -> None:
    reducer = TaskReducer(_task())
    task = reducer.apply(_status(TaskState.WORKING))
    assert task is not None
    assert task.state is TaskState.WORKING
    reducer.apply(_status(TaskState.COMPLETED))
    assert reducer.task is not None
    assert reducer.task.state is TaskState.COMPLETED


def test_append_chunks() -> None:
    task = fold(
        [
            _task(),
            _chunk("one"),
            _chunk(" two", append=True),
            _chunk(" three", append=True, last=True),
        ]
    )
    assert task is not None
    [art] = task.artifacts
    assert [p.text for p in art.parts if isinstance(p, TextPart)] == ["one", " two", " three"]
    assert task.text == "one two three"


def test_replace_without_append() -> None:
    task = fold([_task(), _chunk("draft"), _chunk("final", last=True)])
    assert task is not None
    assert [a.text for a in task.artifacts] == ["final"]


def test_several_artifacts_keep_their_order() -> None:
    task = fold(
        [
            _task(),
            _chunk("A1", artifact_id="a"),
            _chunk("B1", artifact_id="b"),
            _chunk("A2", artifact_id="a", append=True),
            _chunk("B!", artifact_id="b"),
        ]
    )
    assert task is not None
    assert [(a.artifact_id, a.text) for a in task.artifacts] == [("a", "A1A2"), ("b", "B!")]


def test_last_chunk_then_new_artifact() -> None:
    task = fold([_task(), _chunk("x", last=True), _chunk("y", artifact_id="z", last=True)])
    assert task is not None
    assert [a.text for a in task.artifacts] == ["x", "y"]


def test_snapshot_replaces_everything() -> None:
    reducer = TaskReducer()
    reducer.apply(_task())
    reducer.apply(_chunk("old"))
    reducer.apply(_status(TaskState.WORKING))
    snapshot = Task("t", "c", TaskStatus(TaskState.INPUT_REQUIRED), artifacts=[_art("fresh", "n")])
    task = reducer.apply(snapshot)
    assert task is not None
    assert task.state is TaskState.INPUT_REQUIRED
    assert [(a.artifact_id, a.text) for a in task.artifacts] == [("n", "fresh")]
    # The index follows the snapshot: appending to its artifact extends it.
    reducer.apply(_chunk("!", artifact_id="n", append=True))
    assert reducer.task is not None
    assert reducer.task.text == "fresh!"


def test_events_for_another_task_are_ignored() -> None:
    reducer = TaskReducer(_task("t"))
    reducer.apply(_status(TaskState.FAILED, task_id="other"))
    reducer.apply(_chunk("intruder", task_id="other"))
    assert reducer.task is not None
    assert reducer.task.id == "t"
    assert reducer.task.state is TaskState.SUBMITTED
    assert reducer.task.artifacts == []


def test_events_before_any_snapshot_start_a_task() -> None:
    task = fold([_chunk("early"), _status(TaskState.COMPLETED)])
    assert task is not None
    assert (task.id, task.context_id, task.state, task.text) == (
        "t",
        "c",
        TaskState.COMPLETED,
        "early",
    )
    assert fold([_status(TaskState.WORKING)]) is not None
    assert fold([]) is None


def test_message_is_kept_apart() -> None:
    reducer = TaskReducer()
    msg = Message(Role.AGENT, [TextPart("hi")])
    assert reducer.apply(msg) is None
    assert reducer.message is msg
    assert reducer.task is None


def test_never_mutates_the_callers_objects() -> None:
    original = _task("t", _art("keep", "a"))
    before = copy.deepcopy(original)
    chunk = _chunk(" more", append=True)
    chunk_before = copy.deepcopy(chunk)
    reducer = TaskReducer(original)
    reducer.apply(chunk)
    reducer.apply(_chunk("new", artifact_id="b"))
    reducer.apply(_status(TaskState.COMPLETED))
    assert original == before
    assert original.artifacts[0].parts == [TextPart("keep")]
    assert chunk == chunk_before
    assert reducer.task is not None
    assert reducer.task is not original
    assert reducer.task.text == "keep morenew"


def test_snapshot_event_is_not_mutated() -> None:
    snapshot = _task("t", _art("one", "a"))
    before = copy.deepcopy(snapshot)
    reducer = TaskReducer()
    reducer.apply(snapshot)
    reducer.apply(_chunk(" two", append=True))
    reducer.apply(_chunk("b", artifact_id="b"))
    reducer.apply(_status(TaskState.WORKING))
    assert snapshot == before
    first_added = _chunk("x", artifact_id="c")
    reducer.apply(first_added)
    reducer.apply(_chunk("y", artifact_id="c", append=True))
    assert first_added.artifact.parts == [TextPart("x")]


def test_size_adds_up_what_the_task_is_folded_from() -> None:
    reducer = TaskReducer()
    steps: list[tuple[StreamEvent, int, int]] = [
        (_task(), 100, 100),  # a snapshot: its size
        (_status(TaskState.WORKING), 30, 130),
        (_status(TaskState.WORKING), 50, 150),  # a status replaces the last one
        (_chunk("a"), 10, 160),
        (_chunk("b", append=True), 20, 180),  # a chunk grows its artifact
        (_chunk("c"), 5, 155),  # a replaced artifact counts as the new one
        (_chunk("d", artifact_id="b"), 7, 162),  # another artifact adds up
        (_chunk("e", task_id="other"), 1000, 162),  # another task's events are not folded
        (Message(Role.AGENT, [TextPart("m")], "m"), 1000, 162),
        (_task(), 40, 40),  # a snapshot starts again
    ]
    for event, size, total in steps:
        reducer.apply(event, size)
        assert reducer.size == total, event


def test_size_never_counts_less_than_what_a_snapshot_held() -> None:
    reducer = TaskReducer()
    reducer.apply(_task("t", _art("x" * 100)), 120)
    reducer.apply(_chunk("y" * 100), 110)  # replaces the snapshot's artifact: counted again
    assert reducer.size == 230
    reducer.apply(_chunk("z" * 100), 110)  # and replaced once more: not again
    assert reducer.size == 230


def test_chunks_decoded_from_the_wire_keep_their_text_not_a_copy_of_their_json() -> None:
    # A task keeps every chunk of a streamed artifact: 1,000 chunks of 20 characters.
    import json
    import tracemalloc

    from a2a_anyio._dialects import v1

    def wire(i: int) -> str:
        artifact = {"artifactId": "a", "parts": [{"text": f"chunk {i:014d}"}]}
        return json.dumps(
            {"artifactUpdate": {"taskId": "t", "artifact": artifact, "append": i > 0}}
        )

    events = [wire(i) for i in range(1000)]
    reducer = TaskReducer(_task())
    tracemalloc.start()
    try:
        for data in events:
            reducer.apply(v1.decode_stream_response(json.loads(data)))
        held = tracemalloc.get_traced_memory()[0]
    finally:
        tracemalloc.stop()
    task = reducer.task
    assert task is not None and len(task.artifacts[0].parts) == 1000
    part = task.artifacts[0].parts[7]
    assert part.raw == {"text": "chunk 00000000000007"} and part.raw is part.raw
    # Each chunk's text and part (about 140 bytes), not its JSON too (about 330 with it).
    assert held < 220 * 1000


def test_a_folded_status_and_history_keep_no_copy_of_their_json_nor_of_the_tasks_ids() -> None:
    import json

    from a2a_anyio._dialects import v1

    tid, ctx = "5225aa5f-6f98-479d-afcd-64a8c8000001", "ba195de2-255e-4cb4-ab8c-96db8c000002"

    def message(role: str, text: str) -> dict[str, object]:
        return {
            "messageId": f"m-{text}",
            "contextId": ctx,
            "taskId": tid,
            "role": role,
            "parts": [{"text": text}],
        }

    status = {"state": "TASK_STATE_WORKING", "message": message("ROLE_AGENT", "step 1")}
    snapshot: dict[str, Any] = {
        "id": tid,
        "contextId": ctx,
        "history": [message("ROLE_USER", "hi")],
    }
    snapshot["status"] = {"state": "TASK_STATE_SUBMITTED"}
    update = {
        "taskId": tid,
        "contextId": ctx,
        "status": {**status, "timestamp": "2026-01-01T00:00:00Z"},
    }
    reducer = TaskReducer()
    for event in ({"task": snapshot}, {"statusUpdate": update}):
        reducer.apply(v1.decode_stream_response(json.loads(json.dumps(event))))
    task = reducer.task
    assert task is not None and task.status.message is not None
    # No raw kept: made again, equal to the JSON, when first read.
    for obj in (task.status, task.status.message, task.history[0]):
        assert not _is_set(obj, "raw")
    assert task.status.raw == update["status"] and task.status.raw is task.status.raw
    assert task.history[0].raw == snapshot["history"][0]
    for m in (task.status.message, task.history[0]):
        # the ids decoded anew from each event's JSON: one string object each all the same
        assert m.task_id is task.id and m.context_id is task.context_id


def _is_set(obj: object, name: str) -> bool:
    try:
        object.__getattribute__(obj, name)
    except AttributeError:
        return False
    return True


def test_json_that_to_dict_would_not_write_again_is_kept_as_received() -> None:
    import json

    from a2a_anyio._dialects import v1

    base = {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "x"}]}
    for spelled in (
        {**base, "kind": "message"},  # a member to_dict does not write
        {**base, "contextId": None},  # null for unset
        {**base, "role": "agent"},  # another spelling
        {**base, "parts": [{"text": "x", "mediaType": "text/plain"}]},  # a part keeping its own
        {**base, "messageId": ""},
    ):
        message = v1.decode_message(json.loads(json.dumps(spelled)))
        assert _is_set(message, "raw") and message.raw == spelled
        status = v1.decode_status({"state": "TASK_STATE_WORKING", "message": spelled})
        assert _is_set(status, "raw")
    for status_json in (
        {"state": "working"},  # v1.0 spells it TASK_STATE_WORKING
        {"state": "TASK_STATE_WORKING", "timestamp": None},
        {"state": "TASK_STATE_WORKING", "message": None},
        {"state": "TASK_STATE_WORKING", "timestamp": ""},
        {"state": "TASK_STATE_WORKING", "extra": 1},
    ):
        status = v1.decode_status(json.loads(json.dumps(status_json)))
        assert _is_set(status, "raw") and status.raw == status_json
    lean = v1.decode_status({"state": "TASK_STATE_WORKING", "message": base})
    assert not _is_set(lean, "raw") and lean.raw == {"state": "TASK_STATE_WORKING", "message": base}
