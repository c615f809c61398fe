"""A dialect: the payloads of one protocol version, one table indexed by operation.

Each operation's ``Payload`` holds the four ways its values cross the wire: the client writes
the arguments and decodes the result, a server (the testing kit's fake agent) reads the
arguments back and encodes the result. Nothing here knows a binding: how a transport carries
the payloads (a JSON-RPC method, an HTTP+JSON route) is the bindings' affair.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from types import MappingProxyType
from typing import Any, NamedTuple

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects._shapes import decode_page, encode_page
from a2a_anyio._dialects.ops import Cancel, ListTasks, Op, OpArgs, PushRef, TaskRef
from a2a_anyio._errors import A2ARPCError, shown
from a2a_anyio._model import JSONDict, Message, StreamEvent, Task, TaskState

Coder = Callable[[Any], Any]


class Payload(NamedTuple):
    """How a dialect carries one operation: ``write`` (args -> params) and ``decode``
    (result), the client's; ``read`` (params -> args) and ``encode`` (result), a server's.
    ``alternative`` writes the other shape of the params some peers take instead."""

    write: Coder
    read: Coder
    decode: Coder
    encode: Coder
    alternative: Coder | None = None


def _metadata(code: int, metadata: Mapping[str, Any]) -> Any:
    return dict(metadata) or None


_NONE: Mapping[Any, Any] = MappingProxyType({})


class Dialect(NamedTuple):
    """The payloads of one protocol version (v1.0, v0.3 and its v0.2, ``tasks/send``...):
    every difference between versions is decided here and nowhere else.

    An operation missing from ``payloads`` is not part of the version. (A named tuple, as
    every internal record: a dataclass costs each import of the package its definition.)
    """

    #: "1.0", "0.3", "0.2", "legacy", "python-a2a": what the bindings key their tables by.
    version: str
    payloads: Mapping[Op, Payload]
    encode_message: Callable[[Message], JSONDict]
    decode_message: Callable[[Any], Message]
    #: A stream event (``task``: the task it belongs to, if known).
    encode_event: Callable[[StreamEvent, Task | None], JSONDict]
    #: The body of a push notification about an event of a task.
    encode_notification: Callable[[StreamEvent, Task], JSONDict]
    #: Headers every request carries.
    headers: Mapping[str, str] = _NONE
    #: Operations the version has that its agents may not serve: one answered as a method
    #: that does not exist is UnsupportedOperationError, not a sign of another dialect.
    optional: frozenset[Op] = frozenset()
    #: The error codes the version defines beyond those of every version (-32005 and up
    #: changed meaning across versions).
    errors: Mapping[int, type[A2ARPCError]] = _NONE
    #: The ``data`` of an error with a code, carrying metadata (None: none).
    error_data: Callable[[int, Mapping[str, Any]], Any] = _metadata
    #: The request member that names the tenant (None: the version has no tenants).
    tenant: str | None = None
    #: The headers that name the extensions a request opts in to.
    extension_headers: tuple[str, ...] = ("A2A-Extensions", "X-A2A-Extensions")

    def has(self, op: Op) -> bool:
        """True when ``op`` is part of the version."""
        return op in self.payloads

    def write(self, op: Op, args: OpArgs) -> Any:
        """The params of ``op`` with ``args``; ValueError for args the version cannot send."""
        return self._payload(op).write(args)

    def read(self, op: Op, params: Any) -> Any:
        """``write``'s params read back (A2AProtocolError for params that do not fit)."""
        return self._payload(op).read({} if params is None else params)

    def decode(self, op: Op, value: Any) -> Any:
        """The result of ``op`` (A2AProtocolError for a value that does not fit)."""
        return self._payload(op).decode(value)

    def encode(self, op: Op, value: Any) -> Any:
        """What ``decode`` reads."""
        return self._payload(op).encode(value)

    def _payload(self, op: Op) -> Payload:
        try:
            return self.payloads[op]
        except KeyError:
            raise ValueError(f"{op.value} is not part of A2A v{self.version}") from None


def same(value: Any) -> Any:
    """A value carried as it is."""
    return value


def nothing(value: Any) -> None:
    """No value: an operation without params or result."""
    return


# -- payloads alike in the JSON-RPC versions: a task by id, cancel, the task list ------------


def task_payload(decode: Coder, encode: Coder, *, zero_is_all: bool = False) -> Payload:
    """GET: ``{"id", "historyLength"}``; ``zero_is_all``: a length of 0 means the whole
    history, not none (v0.3), so it is not sent and reads back as None."""

    def write(args: TaskRef) -> JSONDict:
        params: JSONDict = {"id": args.task_id}
        if args.history_length is not None and (args.history_length or not zero_is_all):
            params["historyLength"] = args.history_length
        return params

    def read(params: Any) -> TaskRef:
        d = v.obj(params, "params")
        length = v.integer(d, "historyLength")
        return TaskRef(
            v.required_id(d, "id", None, "params"), length or None if zero_is_all else length
        )

    return Payload(write, read, decode, encode)


def subscribe_payload(events: Payload) -> Payload:
    """SUBSCRIBE: ``{"id"}``, answered with the stream's events."""

    def write(args: TaskRef) -> JSONDict:
        if args.history_length is not None:
            raise ValueError("subscribe takes no history_length")
        return {"id": args.task_id}

    def read(params: Any) -> TaskRef:
        d = v.obj(params, "params")
        return TaskRef(v.required_id(d, "id", None, "params"))

    return Payload(write, read, events.decode, events.encode)


def cancel_payload(decode: Coder, encode: Coder) -> Payload:
    """CANCEL: ``{"id", "metadata"}``, answered with the task, or with nothing (None) by
    some servers (the client then looks at the task)."""

    def write(args: Cancel) -> JSONDict:
        params: JSONDict = {"id": args.task_id}
        if args.metadata:
            params["metadata"] = args.metadata
        return params

    def read(params: Any) -> Cancel:
        d = v.obj(params, "params")
        return Cancel(v.required_id(d, "id", None, "params"), v.optional_dict(d, "metadata"))

    return Payload(write, read, or_none(decode), encode)


def or_none(decode: Coder) -> Coder:
    """``decode``, reading a null as None."""

    def read(value: Any) -> Any:
        return None if value is None else decode(value)

    return read


def list_payload(
    decode_task: Callable[[Any], Task],
    encode_task: Callable[[Task], JSONDict],
    state: Callable[[TaskState], str],
    since: tuple[Callable[[str], JSONDict], Callable[[JSONDict], str | None]],
) -> Payload:
    """LIST: v1.0's ``ListTasks`` and the v0.3-era ``tasks/list`` (the spec's "0.4.0" draft,
    the v0.3 proto's GET /v1/tasks) alike, but for how ``state`` spells a task state and how
    ``since`` writes and reads the "updated after" filter."""
    write_since, read_since = since

    def write(args: ListTasks) -> JSONDict:
        params: JSONDict = {}
        if args.context_id:
            params["contextId"] = args.context_id
        if args.limit is not None:
            params["pageSize"] = args.limit
        if args.cursor:
            params["pageToken"] = args.cursor
        if args.status is not None:
            params["status"] = state(v.state(args.status))
        if args.history_length is not None:
            params["historyLength"] = args.history_length
        if args.include_artifacts:
            params["includeArtifacts"] = True
        if args.updated_after:
            params.update(write_since(args.updated_after))
        return params

    def read(params: Any) -> ListTasks:
        d = v.obj(params, "params")
        wire = d.get("status")
        status = v.state(wire) if wire else None
        if status is TaskState.UNKNOWN and wire not in ("TASK_STATE_UNSPECIFIED", "unknown"):
            v.bad(f"unknown task state {shown(wire)}")
        include = d.get("includeArtifacts")
        return ListTasks(
            v.text(d, "contextId") or None,
            v.integer(d, "pageSize"),
            v.text(d, "pageToken") or None,
            status,
            v.integer(d, "historyLength"),
            include is True or str(include).lower() == "true",  # "true" in a query
            read_since(d),
        )

    def decode(value: Any) -> Any:
        return decode_page(value, decode_task)

    def encode(page: Any) -> JSONDict:
        return encode_page(page, encode_task)

    return Payload(write, read, decode, encode)


def push_ref_payload(task: str, config: str | None, decode: Coder, encode: Coder) -> Payload:
    """PUSH_GET, PUSH_LIST and PUSH_DELETE: the task as member ``task``, and its config as
    ``config`` (None: the version names no config)."""

    def write(args: PushRef) -> JSONDict:
        params: JSONDict = {task: args.task_id}
        if config is not None and args.config_id:
            params[config] = args.config_id
        return params

    def read(params: Any) -> PushRef:
        d = v.obj(params, "params")
        found = v.text(d, config) if config is not None else None
        return PushRef(v.required_id(d, task, _SNAKE.get(task), "params"), found)

    return Payload(write, read, decode, encode)


def needs_config(payload: Payload) -> Payload:
    """PUSH_DELETE: ``payload`` refusing args without a config id."""

    def write(args: PushRef) -> Any:
        if args.config_id is None:
            raise ValueError("push_delete needs a config_id")
        return payload.write(args)

    return payload._replace(write=write)


_SNAKE = {"taskId": "task_id"}
