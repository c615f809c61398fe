"""What every JSON-RPC dialect provides: method names, params encoders, result decoders, and
the server's side of each (params read back, results encoded)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects._shapes import decode_page, encode_page
from a2a_anyio._dialects.ops import Cancel, ListTasks, PushRef, Send, SendConfig, TaskRef
from a2a_anyio._errors import shown
from a2a_anyio._model import (
    AgentCard,
    JSONDict,
    Message,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskPage,
    TaskState,
)


class Dialect(ABC):
    """A JSON-RPC wire dialect: one per protocol family (v1.0, v0.2/v0.3, legacy).

    Each ``*_params`` encoder has a ``read_*_params`` beside it, and each ``decode_*`` an
    ``encode_*``: what a server reads and writes. Readers raise A2AProtocolError for params
    that do not fit.
    """

    #: "1.0", "0.3", ... used for the A2A-Version header and to read error codes.
    version: ClassVar[str]
    #: operation -> JSON-RPC method name; an operation missing here is not in the dialect.
    methods: ClassVar[dict[str, str]]
    #: Operations of the dialect its agents may not serve: one answered as a method that
    #: does not exist there is UnsupportedOperationError (not a sign of another dialect).
    optional: ClassVar[frozenset[str]] = frozenset()

    def method(self, op: str) -> str:
        """The JSON-RPC method of ``op``, or ValueError if the dialect has none."""
        try:
            return self.methods[op]
        except KeyError:
            raise ValueError(f"{op} is not part of A2A v{self.version}") from None

    @abstractmethod
    def headers(self) -> dict[str, str]:
        """Headers every request of this dialect carries."""

    @abstractmethod
    def encode_message(self, message: Message) -> JSONDict:
        """A message in this dialect's shape."""

    @abstractmethod
    def decode_message(self, value: Any) -> Message:
        """A message from this dialect's shape."""

    @abstractmethod
    def send_params(self, message: Message, config: SendConfig) -> JSONDict:
        """Params of send and stream."""

    @abstractmethod
    def decode_send_result(self, value: Any) -> Task | Message:
        """The result of send."""

    @abstractmethod
    def decode_event(self, value: Any) -> StreamEvent:
        """One streamed result, with ``final`` set on the event that ends the stream."""

    @abstractmethod
    def decode_task(self, value: Any) -> Task:
        """A task (get, cancel)."""

    @abstractmethod
    def read_send_params(self, params: Any) -> Send:
        """``send_params`` read back."""

    @abstractmethod
    def encode_send_result(self, result: Task | Message) -> JSONDict:
        """What ``decode_send_result`` reads."""

    @abstractmethod
    def encode_event(self, event: StreamEvent, task: Task | None = None) -> JSONDict:
        """What ``decode_event`` reads (``task``: the task the event belongs to, if known)."""

    @abstractmethod
    def encode_task(self, task: Task) -> JSONDict:
        """What ``decode_task`` reads."""

    def encode_notification(self, event: StreamEvent, task: Task) -> JSONDict:
        """The body of a push notification about ``event``: the whole task before v1.0."""
        return self.encode_task(task)

    def task_params(self, task_id: str, history_length: int | None = None) -> JSONDict:
        """Params of get."""
        params: JSONDict = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        return params

    def read_task_params(self, params: Any) -> TaskRef:
        """``task_params`` (and ``subscribe_params``) read back."""
        d = v.obj(params, "params")
        return TaskRef(v.required_id(d, "id", None, "params"), v.integer(d, "historyLength"))

    def cancel_params(self, task_id: str, metadata: JSONDict | None = None) -> JSONDict:
        """Params of cancel."""
        params: JSONDict = {"id": task_id}
        if metadata:
            params["metadata"] = metadata
        return params

    def read_cancel_params(self, params: Any) -> Cancel:
        """``cancel_params`` read back."""
        d = v.obj(params, "params")
        return Cancel(v.required_id(d, "id", None, "params"), v.optional_dict(d, "metadata"))

    def subscribe_params(self, task_id: str) -> JSONDict:
        """Params of subscribe / resubscribe."""
        return {"id": task_id}

    # -- list: one shape for v1.0 ``ListTasks`` and the v0.3-era ``tasks/list`` ------------
    # (the A2A spec's "0.4.0" draft, and the v0.3 proto's GET /v1/tasks); the dialects differ
    # in how they spell a state and the "updated after" filter.

    def list_state(self, state: TaskState) -> str:
        """How list params name a task state."""
        return str(state.value)

    def since_params(self, updated_after: str) -> JSONDict:
        """The list params filtering on tasks updated at or after an ISO-8601 time."""
        raise ValueError(f"A2A v{self.version} lists tasks without a time filter")

    def read_since(self, params: JSONDict) -> str | None:
        """``since_params`` read back, as an ISO-8601 time."""
        return None

    def list_tasks_params(
        self, context_id: str | None, limit: int | None, cursor: str | None, **filters: Any
    ) -> JSONDict:
        """Params of list."""
        self.method("list")  # ValueError for a dialect that has no listing
        params: JSONDict = {}
        if context_id:
            params["contextId"] = context_id
        if limit is not None:
            params["pageSize"] = limit
        if cursor:
            params["pageToken"] = cursor
        if filters.get("status") is not None:
            params["status"] = self.list_state(filters["status"])
        if filters.get("history_length") is not None:
            params["historyLength"] = filters["history_length"]
        if filters.get("include_artifacts"):
            params["includeArtifacts"] = True
        if filters.get("updated_after"):
            params.update(self.since_params(filters["updated_after"]))
        return params

    def read_list_tasks_params(self, params: Any) -> ListTasks:
        """``list_tasks_params`` read back."""
        self.method("list")
        d = v.obj(params, "params")
        wire = d.get("status")
        state = v.state(wire) if wire else None
        if state is TaskState.UNKNOWN and wire not in ("TASK_STATE_UNSPECIFIED", "unknown"):
            v.bad(f"unknown task state {shown(wire)}")
        include = d.get("includeArtifacts")
        return ListTasks(
            v.text(d, "contextId") or None,
            v.integer(d, "pageSize"),
            v.text(d, "pageToken") or None,
            state,
            v.integer(d, "historyLength"),
            include is True or str(include).lower() == "true",  # "true" in a query
            self.read_since(d),
        )

    def decode_task_page(self, value: Any) -> TaskPage:
        """The result of list: ``tasks``, ``nextPageToken`` ("" on the last page),
        ``pageSize`` and ``totalSize``."""
        self.method("list")
        return decode_page(value, self.decode_task)

    def encode_task_page(self, page: TaskPage) -> JSONDict:
        """What ``decode_task_page`` reads."""
        self.method("list")
        return encode_page(page, self.encode_task)

    @abstractmethod
    def push_create_params(self, config: PushNotificationConfig) -> JSONDict:
        """Params of push-config create."""

    @abstractmethod
    def read_push_create_params(self, params: Any) -> PushNotificationConfig:
        """``push_create_params`` read back."""

    @abstractmethod
    def push_get_params(self, task_id: str, config_id: str | None) -> JSONDict:
        """Params of push-config get."""

    @abstractmethod
    def push_list_params(self, task_id: str) -> JSONDict:
        """Params of push-config list."""

    @abstractmethod
    def push_delete_params(self, task_id: str, config_id: str) -> JSONDict:
        """Params of push-config delete."""

    @abstractmethod
    def read_push_params(self, params: Any) -> PushRef:
        """The params of push-config get, list or delete read back."""

    @abstractmethod
    def decode_push_config(self, value: Any) -> PushNotificationConfig:
        """One push config."""

    @abstractmethod
    def encode_push_config(self, config: PushNotificationConfig) -> JSONDict:
        """What ``decode_push_config`` reads."""

    @abstractmethod
    def decode_push_configs(self, value: Any) -> list[PushNotificationConfig]:
        """The result of push-config list."""

    def encode_push_configs(self, configs: list[PushNotificationConfig]) -> Any:
        """What ``decode_push_configs`` reads."""
        return [self.encode_push_config(c) for c in configs]

    def error_data(self, code: int, metadata: Mapping[str, Any]) -> Any:
        """The ``data`` of a JSON-RPC error (None: none) carrying ``metadata``."""
        return dict(metadata) or None

    def decode_card(self, value: Any) -> AgentCard:
        """An agent card (the extended card)."""
        from a2a_anyio._dialects.card import parse_card

        return parse_card(value)
