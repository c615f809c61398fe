"""A2A operations and their version-neutral arguments: what a codec is asked to encode."""

from __future__ import annotations

import enum
from typing import Any, NamedTuple

from a2a_anyio._model import JSONDict, Message, PushNotificationConfig, TaskState


class Op(enum.Enum):
    """An A2A operation; the value is the name retries and errors use."""

    SEND = "send"
    STREAM = "stream"
    GET = "get"
    LIST = "list"
    CANCEL = "cancel"
    SUBSCRIBE = "subscribe"
    PUSH_CREATE = "push_create"
    PUSH_GET = "push_get"
    PUSH_LIST = "push_list"
    PUSH_DELETE = "push_delete"
    EXTENDED_CARD = "extended_card"
    #: Any JSON-RPC method (an extension's); ``Call.idempotent`` says whether it may repeat.
    CALL = "call"

    # Members are singletons compared by identity: hashed so too, in C (Enum's own hash is
    # Python code, run by every table lookup of a call's operation).
    __hash__ = object.__hash__

    @property
    def idempotent(self) -> bool:
        """True when sending it twice does not change what the agent does."""
        return self in _IDEMPOTENT

    @property
    def streams(self) -> bool:
        """True when the answer is an event stream."""
        return self is Op.STREAM or self is Op.SUBSCRIBE


_IDEMPOTENT = frozenset(
    {
        Op.GET,
        Op.LIST,
        Op.CANCEL,
        Op.SUBSCRIBE,
        Op.PUSH_GET,
        Op.PUSH_LIST,
        Op.PUSH_DELETE,
        Op.EXTENDED_CARD,
    }
)


# -- arguments, one shape per operation ------------------------------------------------------
# Immutable values: named tuples, which take a fraction of a frozen dataclass's time to define
# (at every import of the package). Code tells them apart by type, never by ``==`` (which
# compares them as tuples).


class SendConfig(NamedTuple):
    """Options of a send, in version-neutral terms."""

    blocking: bool = True
    history_length: int | None = None
    accepted_output_modes: list[str] | None = None
    push_config: PushNotificationConfig | None = None
    metadata: JSONDict | None = None


class Send(NamedTuple):
    """SEND and STREAM: the message and its options (``blocking`` is ignored by STREAM)."""

    message: Message
    config: SendConfig = SendConfig()

    @property
    def task_id(self) -> str | None:
        """The task the message continues, if any."""
        return self.message.task_id


class TaskRef(NamedTuple):
    """GET and SUBSCRIBE: one task (``history_length`` is for GET only)."""

    task_id: str
    history_length: int | None = None


class ListTasks(NamedTuple):
    """LIST: the filters and the page (``updated_after`` is an ISO-8601 timestamp)."""

    context_id: str | None = None
    limit: int | None = 50
    cursor: str | None = None
    status: TaskState | None = None
    history_length: int | None = None
    include_artifacts: bool = False
    updated_after: str | None = None


class Cancel(NamedTuple):
    """CANCEL: the task and optional request metadata."""

    task_id: str
    metadata: JSONDict | None = None


class PushCreate(NamedTuple):
    """PUSH_CREATE: the config to register (its ``task_id`` is required)."""

    config: PushNotificationConfig

    @property
    def task_id(self) -> str | None:
        """The task the config is for."""
        return self.config.task_id


class PushRef(NamedTuple):
    """PUSH_GET, PUSH_LIST and PUSH_DELETE: the task and, except for LIST, the config."""

    task_id: str
    config_id: str | None = None


class Call(NamedTuple):
    """CALL: a JSON-RPC method and its params, sent as given; ``stream``: an event stream of
    results is accepted as its answer too."""

    method: str
    params: Any = None
    idempotent: bool = False
    stream: bool = False


OpArgs = Send | TaskRef | ListTasks | Cancel | PushCreate | PushRef | Call | None


def task_of(args: OpArgs) -> str | None:
    """The task a call with ``args`` is about, if any (for TaskNotFoundError.task_id)."""
    return getattr(args, "task_id", None)


#: The argument type of each operation.
ARGS: dict[Op, type[Any]] = {
    Op.SEND: Send,
    Op.STREAM: Send,
    Op.GET: TaskRef,
    Op.SUBSCRIBE: TaskRef,
    Op.LIST: ListTasks,
    Op.CANCEL: Cancel,
    Op.PUSH_CREATE: PushCreate,
    Op.PUSH_GET: PushRef,
    Op.PUSH_LIST: PushRef,
    Op.PUSH_DELETE: PushRef,
    Op.EXTENDED_CARD: type(None),
    Op.CALL: Call,
}
