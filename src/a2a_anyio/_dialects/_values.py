"""Lenient readers for wire values shared by every dialect: enums, ids, base64, field lookup."""

from __future__ import annotations

import base64
import binascii
import datetime
import email.utils
import time
from typing import Any, NoReturn

from a2a_anyio._errors import A2AProtocolError
from a2a_anyio._model import JSONDict, Role, TaskState


def proto_state(state: TaskState, canceled: str = "TASK_STATE_CANCELED") -> str:
    """The ProtoJSON name of ``state`` (the v0.3 proto spells ``canceled`` otherwise)."""
    if state is TaskState.UNKNOWN:
        return "TASK_STATE_UNSPECIFIED"
    if state is TaskState.CANCELED:
        return canceled
    return "TASK_STATE_" + str(state.value).upper().replace("-", "_")


# ProtoJSON enum numbers (v1.0 proto) and every spelling seen on the wire.
_STATES: dict[Any, TaskState] = {}
for _state, _num in (
    (TaskState.UNKNOWN, 0),
    (TaskState.SUBMITTED, 1),
    (TaskState.WORKING, 2),
    (TaskState.COMPLETED, 3),
    (TaskState.FAILED, 4),
    (TaskState.CANCELED, 5),
    (TaskState.INPUT_REQUIRED, 6),
    (TaskState.REJECTED, 7),
    (TaskState.AUTH_REQUIRED, 8),
):
    _STATES[_num] = _state
    _STATES[_state.value] = _state
    _STATES[proto_state(_state)] = _state
_STATES["TASK_STATE_CANCELLED"] = TaskState.CANCELED
_STATES["cancelled"] = TaskState.CANCELED

_ROLES: dict[Any, Role] = {
    "user": Role.USER,
    "agent": Role.AGENT,
    "ROLE_USER": Role.USER,
    "ROLE_AGENT": Role.AGENT,
    "ROLE_UNSPECIFIED": Role.UNSPECIFIED,
    1: Role.USER,
    2: Role.AGENT,
    0: Role.UNSPECIFIED,
}


#: What starts the message of a protocol error for a value of the wrong shape.
UNEXPECTED_SHAPE = "unexpected response shape: "


def bad(what: str) -> NoReturn:
    """Raise the protocol error for a payload that does not have the expected shape."""
    raise A2AProtocolError(UNEXPECTED_SHAPE + what)


def obj(value: Any, what: str) -> JSONDict:
    """``value`` when it is a JSON object, else a protocol error naming ``what``."""
    if not isinstance(value, dict):
        bad(f"{what} is not an object")
    return value


def field(d: JSONDict, camel: str, snake: str | None = None) -> Any:
    """A field by its camelCase name, or its snake_case proto name (ProtoJSON accepts both)."""
    v = d.get(camel)
    if v is None and snake is not None:
        v = d.get(snake)
    return v


def text(d: JSONDict, camel: str, snake: str | None = None) -> str | None:
    """An optional string field; a non-string value is a protocol error."""
    # field() inlined: this runs for every id and name of every decoded object.
    v = d.get(camel)
    if v is None and snake is not None:
        v = d.get(snake)
    if v is None or isinstance(v, str):
        return v
    bad(f"{camel} is not a string")


def required_id(d: JSONDict, camel: str, snake: str | None, what: str) -> str:
    """A required identifier (ints are tolerated and turned into strings)."""
    v = d.get(camel)
    if v is None and snake is not None:
        v = d.get(snake)
    if isinstance(v, str) and v:
        return v
    if isinstance(v, int) and not isinstance(v, bool):
        try:
            return str(v)
        except ValueError:  # more digits than Python writes (a dict's, not JSON's)
            bad(f"{what} has an {camel} too long to write")
    bad(f"{what} has no {camel}")


def optional_dict(d: JSONDict, name: str) -> JSONDict | None:
    """An optional object field (metadata and the like)."""
    v = d.get(name)
    if v is None or isinstance(v, dict):
        return v
    bad(f"{name} is not an object")


def str_list(d: JSONDict, camel: str, snake: str | None = None) -> list[str] | None:
    """An optional list of strings."""
    v = d.get(camel)
    if v is None and snake is not None:
        v = d.get(snake)
    if v is None:
        return None
    if isinstance(v, list) and all(isinstance(x, str) for x in v):
        return v
    bad(f"{camel} is not a list of strings")


def items(d: JSONDict, name: str) -> list[Any]:
    """An optional list field, [] when absent."""
    v = d.get(name)
    if v is None:
        return []
    if isinstance(v, list):
        return v
    bad(f"{name} is not a list")


def state(value: Any) -> TaskState:
    """Any wire spelling of a task state; unknown spellings become ``TaskState.UNKNOWN``."""
    try:
        return _STATES.get(value, TaskState.UNKNOWN)
    except TypeError:  # unhashable
        return TaskState.UNKNOWN


def role(value: Any) -> Role:
    """Any wire spelling of a role."""
    try:
        return _ROLES.get(value, Role.UNSPECIFIED)
    except TypeError:
        return Role.UNSPECIFIED


def b64decode(value: Any) -> bytes:
    """Standard or URL-safe base64, padded or not (ProtoJSON accepts both alphabets)."""
    if not isinstance(value, str):
        bad("file bytes are not a base64 string")
    padded = value + "=" * (-len(value) % 4)
    try:
        if "-" in value or "_" in value:
            return base64.urlsafe_b64decode(padded)
        return base64.b64decode(padded, validate=True)
    except (binascii.Error, ValueError):
        bad("file bytes are not valid base64")


def b64encode(data: bytes) -> str:
    """Standard base64, as ProtoJSON and the v0.3 schema expect."""
    return base64.b64encode(data).decode("ascii")


def boolean(d: JSONDict, name: str, snake: str | None = None) -> bool:
    """An optional boolean field, False when absent."""
    v = d.get(name)
    if v is None and snake is not None:
        v = d.get(snake)
    if v is None:
        return False
    if isinstance(v, bool):
        return v
    bad(f"{name} is not a boolean")


def integer(d: JSONDict, camel: str, snake: str | None = None) -> int | None:
    """An optional integer field; a decimal string (a query parameter, a ProtoJSON int64)
    counts too."""
    v = d.get(camel)
    if v is None and snake is not None:
        v = d.get(snake)
    if v is None or v == "":
        return None
    if isinstance(v, int) and not isinstance(v, bool):
        return v
    if isinstance(v, str) and v.lstrip("-").isdigit():
        return int(v)
    bad(f"{camel} is not an integer")


def epoch_ms(stamp: str) -> int:
    """Milliseconds since the epoch of an ISO-8601 time (UTC when it names no zone);
    ValueError for text that is none."""
    when = datetime.datetime.fromisoformat(stamp.strip().replace("Z", "+00:00"))
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.timezone.utc)
    return round(when.timestamp() * 1000)


def iso_time(ms: int) -> str:
    """``epoch_ms`` read back: ISO-8601 in UTC, with milliseconds unless they are 0."""
    try:
        when = datetime.datetime.fromtimestamp(ms / 1000, tz=datetime.timezone.utc)
    except (OverflowError, OSError, ValueError):
        bad(f"{ms} is no time in milliseconds since the epoch")
    spec = "milliseconds" if ms % 1000 else "seconds"
    return when.isoformat(timespec=spec).replace("+00:00", "Z")


def retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks to wait: delta-seconds (ASCII digits, read
    without ``int()``: thousands of them are ``inf``) or an HTTP date (0 when it is past).
    None when it cannot be read (superscripts, signs, fractions, garbage): it is ignored."""
    if not value:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))
