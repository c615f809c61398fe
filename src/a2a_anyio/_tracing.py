"""OpenTelemetry spans and metrics of a client made with ``tracing=True`` (the ``otel`` extra).

Every operation is a CLIENT span named ``a2a <operation>``; retries and stream resumes are
events on it; each request made within it carries the W3C ``traceparent`` (the propagator
OpenTelemetry is configured with). Each operation's duration goes to a histogram, and the
events of streams, retries, resumes, polls and cancels of abandoned tasks to counters, of the
global meter provider (``_metrics``). This is the only module that imports OpenTelemetry,
and it is imported only when a client traces.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import contextmanager
from typing import TypeVar

import anyio
from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from a2a_anyio._errors import A2AClientError, ErrorContext, clipped, context_of
from a2a_anyio._metrics import OPERATION, AgentLabels, instruments
from a2a_anyio._model import Message, PushNotificationConfig, Task
from a2a_anyio._observe import NO_SPAN, Attribute, Span, Tracing, redacted

T = TypeVar("T")
#: The most characters of an exception's stack trace a span's exception event gets.
_MAX_TRACE = 16 * 1024


class OtelSpan(Span):
    """One operation's OpenTelemetry span."""

    __slots__ = ("_agent", "_ended", "_operation", "_start", "span")

    def __init__(self, span: trace.Span, operation: str, agent: AgentLabels) -> None:
        self.span = span
        self._ended = False
        self._operation = operation
        self._agent = agent  # who its metrics are about
        self._start = anyio.current_time()

    def returned(self, value: T, context: ErrorContext) -> T:
        self._note(context)
        self._note_result(value)
        return value

    @contextmanager
    def current(self) -> Iterator[object]:
        token = OPERATION.set(self._operation)
        try:
            with trace.use_span(
                self.span, end_on_exit=False, record_exception=False, set_status_on_exception=False
            ):
                yield self.span
        finally:
            OPERATION.reset(token)

    def delivered(self, event: object) -> None:
        labels = self._agent.of(self._operation)
        instruments().events.add(1, {**labels, "a2a.event.type": _event_type(event)})

    def end(self, result: object, context: ErrorContext, error: BaseException | None) -> None:
        if self._ended:
            return
        self._ended = True
        self._note(context)
        if isinstance(error, Exception):
            self.failed(error)
        else:
            self._note_result(result)
        self.span.end()
        self.measured(error)

    def measured(self, error: BaseException | None) -> None:
        """Record the operation's duration, with the class of the ``error`` that ended it."""
        labels = self._agent.of(self._operation)
        if error is not None:
            labels = {**labels, "error.type": _error_type(error)}
        instruments().duration.record(anyio.current_time() - self._start, labels)

    def failed(self, error: Exception) -> None:
        """Record ``error``: status ERROR, ``error.type``, the exception event (its text
        without secrets, as in the logs), the task it is about."""
        span = self.span
        if isinstance(error, A2AClientError):
            self._note(context_of(error))
        task_id = getattr(error, "task_id", None)
        if isinstance(task_id, str):
            span.set_attribute("a2a.task.id", clipped(task_id))
        message = redacted(str(error))
        span.set_attribute("error.type", type(error).__name__)
        trace_text = redacted("".join(traceback.format_exception(error)), _MAX_TRACE)
        span.record_exception(
            error, {"exception.message": message, "exception.stacktrace": trace_text}
        )
        span.set_status(Status(StatusCode.ERROR, message))

    def _note(self, context: ErrorContext) -> None:
        """Where the last request went: its method as on the wire, URL and JSON-RPC id."""
        span = self.span
        if context.get("method"):
            span.set_attribute("a2a.method", str(context["method"]))
        if context.get("agent"):
            span.set_attribute("url.full", redacted(str(context["agent"])))
        if context.get("request_id") is not None:
            span.set_attribute("rpc.jsonrpc.request_id", str(context["request_id"]))

    def _note_result(self, value: object) -> None:
        span = self.span
        if isinstance(value, Task):
            span.set_attribute("a2a.task.id", clipped(value.id))
            span.set_attribute("a2a.task.state", value.status.state.value)
            if value.context_id:
                span.set_attribute("a2a.context.id", clipped(value.context_id))
        elif isinstance(value, (Message, PushNotificationConfig)) and value.task_id:
            span.set_attribute("a2a.task.id", clipped(value.task_id))


def _event_type(event: object) -> str:
    """A stream event's kind, named as A2A v0.3's ``kind`` names it."""
    return _EVENT_TYPES.get(type(event).__name__, "other")


_EVENT_TYPES = {
    "Task": "task",
    "Message": "message",
    "TaskStatusUpdateEvent": "status-update",
    "TaskArtifactUpdateEvent": "artifact-update",
}


def _error_type(error: BaseException) -> str:
    """``error.type``: the error's class, or ``cancelled`` for a cancellation (whose class
    depends on the event loop)."""
    if isinstance(error, anyio.get_cancelled_exc_class()):
        return "cancelled"
    return type(error).__name__


class OtelTracing(Tracing):
    """Spans from the global tracer provider (``opentelemetry.trace.set_tracer_provider``),
    metrics from the global meter provider (``opentelemetry.metrics.set_meter_provider``)."""

    __slots__ = ("_agent", "_tracer")

    def __init__(self) -> None:
        self._tracer = trace.get_tracer("a2a_anyio")
        self._agent = AgentLabels()

    def _start(self, operation: str, agent: str | None) -> OtelSpan:
        attributes: dict[str, Attribute] = {"a2a.operation": operation}
        if agent is not None:
            attributes["a2a.agent.url"] = redacted(agent)
        span = self._tracer.start_span(
            f"a2a {operation}", kind=SpanKind.CLIENT, attributes=attributes
        )
        self._agent.at(agent)
        return OtelSpan(span, operation, self._agent)

    def named(self, name: str | None, version: str | None) -> None:
        self._agent.named(name, version)

    @contextmanager
    def operation(
        self, operation: str, agent: str | None, *, nested: bool = False
    ) -> Iterator[Span]:
        if nested:
            yield NO_SPAN
            return
        span = self._start(operation, agent)
        error: BaseException | None = None
        try:
            with span.current():
                yield span
        except Exception as exc:
            error = exc
            span.failed(exc)
            raise
        except BaseException as exc:  # a cancellation, Ctrl-C: no error of the span's
            error = exc
            raise
        finally:
            span.span.end()
            span.measured(error)

    def stream(self, operation: str, agent: str | None) -> Span:
        return self._start(operation, agent)

    def event(self, name: str, attributes: Mapping[str, Attribute]) -> None:
        trace.get_current_span().add_event(name, attributes)
        counter = instruments().counters.get(name)
        if counter is not None:
            counter.add(1, self._agent.event_labels(attributes))

    def inject(self, headers: MutableMapping[str, str]) -> None:
        propagate.inject(headers)

    def capture(self) -> object:
        return otel_context.get_current()

    @contextmanager
    def restored(self, captured: object) -> Iterator[object]:
        assert isinstance(captured, otel_context.Context)
        token = otel_context.attach(captured)
        try:
            yield captured
        finally:
            otel_context.detach(token)
