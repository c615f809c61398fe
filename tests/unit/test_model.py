"""The typed model and the lenient wire-value readers."""

from __future__ import annotations

import uuid
from dataclasses import is_dataclass, replace
from typing import Any

import pytest

from a2a_anyio import (
    A2AProtocolError,
    AgentCard,
    Artifact,
    DataPart,
    FilePart,
    Message,
    Role,
    Task,
    TaskState,
    TaskStatus,
    TextPart,
)
from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects import v03, v1
from a2a_anyio._model import new_id


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ("submitted", TaskState.SUBMITTED),
        ("working", TaskState.WORKING),
        ("input-required", TaskState.INPUT_REQUIRED),
        ("auth-required", TaskState.AUTH_REQUIRED),
        ("completed", TaskState.COMPLETED),
        ("canceled", TaskState.CANCELED),
        ("cancelled", TaskState.CANCELED),
        ("failed", TaskState.FAILED),
        ("rejected", TaskState.REJECTED),
        ("unknown", TaskState.UNKNOWN),
        ("TASK_STATE_SUBMITTED", TaskState.SUBMITTED),
        ("TASK_STATE_WORKING", TaskState.WORKING),
        ("TASK_STATE_INPUT_REQUIRED", TaskState.INPUT_REQUIRED),
        ("TASK_STATE_AUTH_REQUIRED", TaskState.AUTH_REQUIRED),
        ("TASK_STATE_COMPLETED", TaskState.COMPLETED),
        ("TASK_STATE_CANCELED", TaskState.CANCELED),
        ("TASK_STATE_CANCELLED", TaskState.CANCELED),
        ("TASK_STATE_FAILED", TaskState.FAILED),
        ("TASK_STATE_REJECTED", TaskState.REJECTED),
        ("TASK_STATE_UNSPECIFIED", TaskState.UNKNOWN),
        (0, TaskState.UNKNOWN),
        (1, TaskState.SUBMITTED),
        (2, TaskState.WORKING),
        (3, TaskState.COMPLETED),
        (4, TaskState.FAILED),
        (5, TaskState.CANCELED),
        (6, TaskState.INPUT_REQUIRED),
        (7, TaskState.REJECTED),
        (8, TaskState.AUTH_REQUIRED),
        ("TASK_STATE_PAUSED", TaskState.UNKNOWN),
        ("paused", TaskState.UNKNOWN),
        (42, TaskState.UNKNOWN),
        (None, TaskState.UNKNOWN),
        (["working"], TaskState.UNKNOWN),
        ({"state": "working"}, TaskState.UNKNOWN),
    ],
)
def test_state_spellings(wire: Any, expected: TaskState) -> None:
    assert v.state(wire) is expected


@pytest.mark.parametrize("decode_status", [v1.decode_status, v03.decode_status])
def test_unknown_state_keeps_its_wire_value(decode_status: Any) -> None:
    status = decode_status({"state": "TASK_STATE_PAUSED"})
    assert status.state is TaskState.UNKNOWN
    assert status.wire_state == "TASK_STATE_PAUSED"
    known = decode_status(
        {"state": "TASK_STATE_WORKING" if decode_status is v1.decode_status else "working"}
    )
    assert known.state is TaskState.WORKING


@pytest.mark.parametrize(
    ("state", "terminal", "interrupted"),
    [
        (TaskState.SUBMITTED, False, False),
        (TaskState.WORKING, False, False),
        (TaskState.INPUT_REQUIRED, False, True),
        (TaskState.AUTH_REQUIRED, False, True),
        (TaskState.COMPLETED, True, False),
        (TaskState.CANCELED, True, False),
        (TaskState.FAILED, True, False),
        (TaskState.REJECTED, True, False),
        (TaskState.UNKNOWN, False, False),
    ],
)
def test_state_predicates(state: TaskState, terminal: bool, interrupted: bool) -> None:
    assert state.is_terminal is terminal
    assert state.is_interrupted is interrupted
    assert state.is_final is (terminal or interrupted)


@pytest.mark.parametrize(
    ("wire", "expected"),
    [
        ("user", Role.USER),
        ("agent", Role.AGENT),
        ("ROLE_USER", Role.USER),
        ("ROLE_AGENT", Role.AGENT),
        ("ROLE_UNSPECIFIED", Role.UNSPECIFIED),
        (1, Role.USER),
        (2, Role.AGENT),
        ("robot", Role.UNSPECIFIED),
        (None, Role.UNSPECIFIED),
        ([1], Role.UNSPECIFIED),
    ],
)
def test_role_spellings(wire: Any, expected: Role) -> None:
    assert v.role(wire) is expected


def test_message_user_text() -> None:
    msg = Message.user("hi", context_id="c-1", task_id="t-1", metadata={"k": 1})
    assert msg.role is Role.USER
    assert msg.parts == [TextPart("hi")]
    assert msg.text == "hi"
    assert (msg.context_id, msg.task_id, msg.metadata) == ("c-1", "t-1", {"k": 1})
    assert msg.message_id


def test_message_user_data_and_text() -> None:
    msg = Message.user("look", data={"x": 1})
    assert msg.parts == [TextPart("look"), DataPart({"x": 1})]
    only_data = Message.user(data=[1, 2])
    assert only_data.parts == [DataPart([1, 2])]
    assert only_data.text == ""


def test_message_user_fresh_ids_and_copied_metadata() -> None:
    meta = {"k": 1}
    a, b = Message.user("x", metadata=meta), Message.user("x")
    assert a.message_id != b.message_id
    meta["k"] = 2
    assert a.metadata == {"k": 1}


def test_message_user_needs_content() -> None:
    with pytest.raises(ValueError, match="text="):
        Message.user()


def test_file_part_holds_exactly_one_source() -> None:
    assert FilePart(data=b"x").data == b"x"
    assert FilePart(url="https://x.example/f").url == "https://x.example/f"
    with pytest.raises(ValueError, match="exactly one"):
        FilePart()
    with pytest.raises(ValueError, match="exactly one"):
        FilePart(data=b"x", url="https://x.example/f")


def test_text_helpers() -> None:
    art = Artifact("a", [TextPart("one "), DataPart({"d": 1}), TextPart("two")])
    assert art.text == "one two"
    assert art.data == {"d": 1}
    assert Artifact("b", [TextPart("x")]).data is None
    task = Task(
        "t", None, TaskStatus(TaskState.COMPLETED), artifacts=[art, Artifact("c", [TextPart("!")])]
    )
    assert task.text == "one two!"
    assert task.state is TaskState.COMPLETED


def test_raw_is_not_compared() -> None:
    assert TextPart("x", raw={"text": "x"}) == TextPart("x")


def test_message_ids_are_random_uuids() -> None:
    ids = {Message.user("x").message_id for _ in range(200)} | {new_id() for _ in range(200)}
    assert len(ids) == 400
    for text in ids:
        parsed = uuid.UUID(text)
        assert str(parsed) == text
        assert (parsed.version, parsed.variant) == (4, uuid.RFC_4122)


def test_repr_and_eq_are_those_dataclasses_write() -> None:
    status = TaskStatus(TaskState.WORKING, wire_state="busy", raw={"state": "busy"})
    assert repr(status) == (
        "TaskStatus(state=<TaskState.WORKING: 'working'>, message=None, timestamp=None, "
        "wire_state='busy')"  # raw is repr=False
    )
    assert status == TaskStatus(TaskState.WORKING)  # wire_state and raw: compare=False
    assert status != TaskStatus(TaskState.FAILED)
    assert TextPart("x") != DataPart("x")
    assert TextPart("x").__eq__("x") is NotImplemented
    with pytest.raises(TypeError, match="unhashable"):
        hash(TextPart("x"))
    looped = DataPart(None)
    looped.data = [looped]
    assert repr(looped) == "DataPart(data=[...], media_type=None, metadata=None)"
    for cls in (TextPart, Task, AgentCard):
        assert is_dataclass(cls)
        assert "__repr__" not in vars(cls) and "__eq__" not in vars(cls)  # the base's
    assert replace(TextPart("x"), text="y") == TextPart("y")


@pytest.mark.parametrize("value", ["aGVsbG8=", "aGVsbG8", "aGVs-G8_", "aGVs+G8/"])
def test_b64decode_both_alphabets_padded_or_not(value: str) -> None:
    def canonical(text: str) -> str:
        return text.rstrip("=").replace("+", "-").replace("/", "_")

    assert canonical(v.b64encode(v.b64decode(value))) == canonical(value)


@pytest.mark.parametrize("value", ["not base64!", 12, None, "a"])
def test_b64decode_rejects_garbage(value: Any) -> None:
    with pytest.raises(A2AProtocolError):
        v.b64decode(value)
