"""The OpenTelemetry metrics of a client made with ``tracing=True``: their instruments, made
once, and the attributes of what they measure.

Names follow OpenTelemetry's semantic conventions where one exists (all of them still in
development there): ``gen_ai.client.operation.duration`` and ``gen_ai.operation.name`` from
the GenAI conventions, ``a2a.method.name`` from their A2A page, ``gen_ai.agent.name`` and
``gen_ai.agent.version`` (from the agent's card), ``server.address``, ``server.port`` and
``error.type``. The counters and ``a2a.operation``, ``a2a.event.type`` are this library's own.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from contextvars import ContextVar
from typing import NamedTuple
from urllib.parse import urlsplit

from opentelemetry import metrics

from a2a_anyio._errors import clipped
from a2a_anyio._observe import Attribute

#: The operation whose step runs now (its retries, resumes and polls are counted under it).
OPERATION: ContextVar[str | None] = ContextVar("a2a_anyio_operation", default=None)

#: ``gen_ai.client.operation.duration``'s bucket boundaries, as the GenAI conventions advise.
DURATION_BUCKETS = (
    0.01, 0.02, 0.04, 0.08, 0.16, 0.32, 0.64, 1.28, 2.56, 5.12, 10.24, 20.48, 40.96, 81.92,
)  # fmt: skip

#: The A2A method each operation is (``a2a.method.name``, as the A2A conventions name it).
A2A_METHODS = {
    "send": "SendMessage",
    "stream": "SendStreamingMessage",
    "subscribe": "SubscribeToTask",
    "get": "GetTask",
    "list": "ListTasks",
    "cancel": "CancelTask",
    "push_create": "CreateTaskPushNotificationConfig",
    "push_get": "GetTaskPushNotificationConfig",
    "push_list": "ListTaskPushNotificationConfigs",
    "push_delete": "DeleteTaskPushNotificationConfig",
    "extended_card": "GetExtendedAgentCard",
}
#: The operations that invoke the agent (``gen_ai.operation.name`` ``invoke_agent``).
_INVOKING = frozenset({"send", "stream"})
#: The most characters of an agent's name or version (the card's: the agent chooses them).
_MAX_NAME = 128

#: The counter each event a client reports (``Observer.happened``) adds to: its name, unit
#: and description.
_COUNTERS = {
    "a2a.retry": ("a2a.client.retries", "{retry}", "Tries of an operation repeated after a failure."),
    "a2a.resume": ("a2a.client.stream.resumes", "{resume}", "Streams re-attached after a cut."),
    "a2a.poll": ("a2a.client.stream.polls", "{poll}", "Tasks polled because the agent refused to re-attach."),
    "a2a.refresh": ("a2a.client.stream.refreshes", "{refresh}", "Tasks read again: a re-attached stream had missed events."),
    "a2a.cancel_abandoned": ("a2a.client.cancels", "{cancel}", "Cancels sent to agents for tasks abandoned on them."),
}  # fmt: skip


class Instruments(NamedTuple):
    """The instruments of every client that traces."""

    duration: metrics.Histogram
    events: metrics.Counter
    #: By the name of the event that adds to it.
    counters: Mapping[str, metrics.Counter]


@functools.cache
def instruments() -> Instruments:
    """The instruments, made once from the global meter provider's meter (one that is set
    later is used by them from then on: OpenTelemetry's proxy meter)."""
    meter = metrics.get_meter("a2a_anyio")
    return Instruments(
        duration=meter.create_histogram(
            "gen_ai.client.operation.duration",
            unit="s",
            description="Duration of A2A operations, retries, resumes and polls included.",
            explicit_bucket_boundaries_advisory=DURATION_BUCKETS,
        ),
        events=meter.create_counter(
            "a2a.client.stream.events", unit="{event}", description="Events streams delivered."
        ),
        counters={
            event: meter.create_counter(name, unit=unit, description=description)
            for event, (name, unit, description) in _COUNTERS.items()
        },
    )


class AgentLabels:
    """The attributes that say which agent a client's measures are about (its URL's host and
    port, the name and version its card gives) and, with them, what each operation is; worked
    out once, again when the card names the agent otherwise."""

    __slots__ = ("_labels", "_named", "_operations", "_url")

    def __init__(self) -> None:
        self._url: str | None = None
        self._named: dict[str, Attribute] = {}
        self._labels: dict[str, Attribute] = {}
        self._operations: dict[str, dict[str, Attribute]] = {}

    def at(self, url: str | None) -> None:
        """The agent is at ``url`` (the client's own, in practice)."""
        if url != self._url:
            self._url = url
            self._changed()

    def named(self, name: str | None, version: str | None) -> None:
        """The agent's card names it ``name`` (and ``version``)."""
        named: dict[str, Attribute] = {}
        if name:
            named["gen_ai.agent.name"] = clipped(name, _MAX_NAME)
        if version:
            named["gen_ai.agent.version"] = clipped(version, _MAX_NAME)
        if named != self._named:
            self._named = named
            self._changed()

    def _changed(self) -> None:
        self._labels = {**_address(self._url), **self._named}
        self._operations = {}

    def of(self, operation: str) -> dict[str, Attribute]:
        """The attributes of ``operation``'s measures: what it is, and the agent's."""
        labels = self._operations.get(operation)
        if labels is None:
            method = A2A_METHODS.get(operation)
            name = "invoke_agent" if operation in _INVOKING else method or operation
            labels = {"gen_ai.operation.name": name, "a2a.operation": operation}
            if method is not None:
                labels["a2a.method.name"] = method
            labels.update(self._labels)
            self._operations[operation] = labels
        return labels

    def event_labels(self, attributes: Mapping[str, Attribute]) -> dict[str, Attribute]:
        """The attributes of a counted event: the agent's, the operation it happened in, and
        its ``error.type`` or ``a2a.task.state`` (a cancel's outcome)."""
        labels = dict(self._labels)
        operation = OPERATION.get()
        if operation is not None:
            labels["a2a.operation"] = operation
        for name in ("error.type", "a2a.task.state"):
            if name in attributes:
                labels[name] = attributes[name]
        return labels


def _address(url: str | None) -> dict[str, Attribute]:
    """``server.address`` and ``server.port`` of ``url`` (none when it has no host)."""
    if not url:
        return {}
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return {}
    if not parts.hostname:
        return {}
    if port is None:
        port = 443 if parts.scheme in ("https", "grpcs") else 80
    return {"server.address": parts.hostname, "server.port": port}
