"""OpenTelemetry spans of a client made with ``tracing=True`` (the ``otel`` extra).

Every operation is a CLIENT span named ``a2a <operation>``; retries and stream resumes are
events on it; each request made within it carries the W3C ``traceparent`` (the propagator
OpenTelemetry is configured with). This is the only module that imports OpenTelemetry, and
it is imported only when a client traces.
"""

from __future__ import annotations

import traceback
from collections.abc import Iterator, Mapping, MutableMapping
from contextlib import AbstractContextManager, contextmanager
from typing import TypeVar

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import SpanKind, Status, StatusCode

from a2a_anyio._errors import A2AClientError, ErrorContext, clipped, context_of
from a2a_anyio._model import Message, PushNotificationConfig, Task
from a2a_anyio._observe import NO_SPAN, Attribute, Span, Tracing, redacted

T = TypeVar("T")
#: The most characters of an exception's stack trace a span's exception event gets.
_MAX_TRACE = 16 * 1024


class OtelSpan(Span):
    """One operation's OpenTelemetry span."""

    __slots__ = ("_ended", "span")

    def __init__(self, span: trace.Span) -> None:
        self.span = span
        self._ended = False

    def returned(self, value: T, context: ErrorContext) -> T:
        self._note(context)
        self._note_result(value)
        return value

    def current(self) -> AbstractContextManager[object]:
        return trace.use_span(
            self.span, end_on_exit=False, record_exception=False, set_status_on_exception=False
        )

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


class OtelTracing(Tracing):
    """Spans from the global tracer provider (``opentelemetry.trace.set_tracer_provider``)."""

    __slots__ = ("_tracer",)

    def __init__(self) -> None:
        self._tracer = trace.get_tracer("a2a_anyio")

    def _start(self, operation: str, agent: str | None) -> OtelSpan:
        attributes: dict[str, Attribute] = {"a2a.operation": operation}
        if agent is not None:
            attributes["a2a.agent.url"] = redacted(agent)
        span = self._tracer.start_span(
            f"a2a {operation}", kind=SpanKind.CLIENT, attributes=attributes
        )
        return OtelSpan(span)

    @contextmanager
    def operation(
        self, operation: str, agent: str | None, *, nested: bool = False
    ) -> Iterator[Span]:
        if nested:
            yield NO_SPAN
            return
        span = self._start(operation, agent)
        try:
            with span.current():
                yield span
        except Exception as exc:
            span.failed(exc)
            raise
        finally:
            span.span.end()

    def stream(self, operation: str, agent: str | None) -> Span:
        return self._start(operation, agent)

    def event(self, name: str, attributes: Mapping[str, Attribute]) -> None:
        trace.get_current_span().add_event(name, attributes)

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
