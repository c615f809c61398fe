"""What every JSON-RPC dialect provides: method names, params encoders, result decoders, and
the server's side of each (params read back, results encoded)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar

from a2a_anyio._dialects import _values as v
from a2a_anyio._dialects.ops import Cancel, ListTasks, PushRef, Send, SendConfig, TaskRef
from a2a_anyio._model import (
    AgentCard,
    JSONDict,
    Message,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskPage,
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

    def list_tasks_params(
        self, context_id: str | None, limit: int | None, cursor: str | None, **filters: Any
    ) -> JSONDict:
        """Params of list."""
        raise ValueError(f"listing tasks is not part of A2A v{self.version}")

    def read_list_tasks_params(self, params: Any) -> ListTasks:
        """``list_tasks_params`` read back."""
        raise ValueError(f"listing tasks is not part of A2A v{self.version}")

    def decode_task_page(self, value: Any) -> TaskPage:
        """The result of list."""
        raise ValueError(f"listing tasks is not part of A2A v{self.version}")

    def encode_task_page(self, page: TaskPage) -> JSONDict:
        """What ``decode_task_page`` reads."""
        raise ValueError(f"listing tasks is not part of A2A v{self.version}")

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
