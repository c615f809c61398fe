"""Plain records of the fake agent: faults, recorded requests, push deliveries."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal

from a2a_anyio._model import JSONDict, Task

OPERATIONS = (
    "card",
    "send",
    "stream",
    "get",
    "list",
    "cancel",
    "subscribe",
    "push_create",
    "push_get",
    "push_list",
    "push_delete",
    "extended_card",
    "call",
)
"""The operations a ``Fault`` may name (``op``), one per kind of request an agent serves
(``"call"``: its extension methods)."""

Method = Callable[[Any], Any]
"""An extension method of the fake agent: a function of the call's params returning its
result (or an awaitable of it), or an async generator function, whose every value is
streamed as one event of the answer. ``AgentError`` raised in it is the call's error."""


@dataclass(eq=False)
class Fault:
    """A fault the agent injects into matching requests.

    ``op`` names the operation (``"send"``, ``"stream"``, ``"get"``, ``"card"``... see
    ``OPERATIONS``; None: every request); ``times`` how many matching requests it applies to
    (None: all). Effects: ``delay`` seconds before answering, ``event_delay`` seconds before
    each streamed event, ``cut_after`` events then the stream ends (``cut="close"``: a clean
    end of the body without a final event; ``"reset"``: the connection breaks), ``error`` an
    A2A / JSON-RPC error code to answer with (``message`` its text), ``http_status`` a plain
    HTTP error (``retry_after`` adds a ``Retry-After`` header). ``hits`` counts the requests
    it applied to.
    """

    op: str | None = None
    times: int | None = None
    delay: float = 0.0
    event_delay: float = 0.0
    cut_after: int | None = None
    cut: Literal["close", "reset"] = "close"
    error: int | None = None
    message: str | None = None
    http_status: int | None = None
    retry_after: float | str | None = None
    hits: int = 0

    def __post_init__(self) -> None:
        if self.op is not None and self.op not in OPERATIONS:
            raise ValueError(f"unknown operation {self.op!r}; one of {', '.join(OPERATIONS)}")

    @property
    def exhausted(self) -> bool:
        """True once it applied ``times`` times."""
        return self.times is not None and self.hits >= self.times


@dataclass(slots=True)
class RecordedRequest:
    """A request the agent received: HTTP method, path (relative to the agent), query,
    lower-cased headers, parsed JSON body (None if none or not JSON), and the operation and
    JSON-RPC method it was read as."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    raw_body: bytes = field(repr=False)
    op: str | None = None
    rpc_method: str | None = None

    @property
    def params(self) -> Any:
        """The JSON-RPC ``params`` (or the REST body)."""
        if self.rpc_method is not None and isinstance(self.body, dict):
            return self.body.get("params")
        return self.body


@dataclass(slots=True)
class PushDelivery:
    """A push notification the agent sent: where, what, and how it went."""

    url: str
    headers: dict[str, str]
    body: JSONDict
    status_code: int | None = None
    error: str | None = None


def trim_history(task: Task, history_length: int | None) -> Task:
    """``task`` with its history cut to the last ``history_length`` messages (None: all)."""
    if history_length is None or history_length < 0:
        return task
    return replace(task, history=task.history[-history_length:] if history_length else [])
