"""What every JSON-RPC dialect provides: method names, params encoders, result decoders."""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import Any, ClassVar

from a2a_anyio._model import (
    AgentCard,
    JSONDict,
    Message,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskPage,
)


@dataclass(slots=True)
class SendConfig:
    """Options of a send, in version-neutral terms."""

    blocking: bool = True
    history_length: int | None = None
    accepted_output_modes: list[str] | None = None
    push_config: PushNotificationConfig | None = None
    metadata: JSONDict | None = None


class Dialect(ABC):
    """A JSON-RPC wire dialect: one per protocol family (v1.0, v0.2/v0.3, legacy)."""

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

    def task_params(self, task_id: str, history_length: int | None = None) -> JSONDict:
        """Params of get."""
        params: JSONDict = {"id": task_id}
        if history_length is not None:
            params["historyLength"] = history_length
        return params

    def cancel_params(self, task_id: str, metadata: JSONDict | None = None) -> JSONDict:
        """Params of cancel."""
        params: JSONDict = {"id": task_id}
        if metadata:
            params["metadata"] = metadata
        return params

    def subscribe_params(self, task_id: str) -> JSONDict:
        """Params of subscribe / resubscribe."""
        return {"id": task_id}

    def list_tasks_params(
        self, context_id: str | None, limit: int | None, cursor: str | None, **filters: Any
    ) -> JSONDict:
        """Params of list."""
        raise ValueError(f"listing tasks is not part of A2A v{self.version}")

    def decode_task_page(self, value: Any) -> TaskPage:
        """The result of list."""
        raise ValueError(f"listing tasks is not part of A2A v{self.version}")

    @abstractmethod
    def push_create_params(self, config: PushNotificationConfig) -> JSONDict:
        """Params of push-config create."""

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
    def decode_push_config(self, value: Any) -> PushNotificationConfig:
        """One push config."""

    @abstractmethod
    def decode_push_configs(self, value: Any) -> list[PushNotificationConfig]:
        """The result of push-config list."""

    def decode_card(self, value: Any) -> AgentCard:
        """An agent card (the extended card)."""
        from a2a_anyio._dialects.card import parse_card

        return parse_card(value)
