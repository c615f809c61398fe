"""``tracing=True``: every operation a CLIENT span, retries and resumes as its events, the W3C
``traceparent`` on every request it makes, so that a trace follows a request from agent to
agent. The SDK's in-memory exporter collects the spans; the testing kit's FakeAgent records
the headers it received."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from opentelemetry import context, propagate, trace
from opentelemetry.sdk.trace import ReadableSpan
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import SpanContext, SpanKind, StatusCode

from a2a_anyio import (
    A2AServerError,
    A2ATimeoutError,
    AgentPool,
    SyncA2AClient,
    SyncAgentPool,
    Task,
    TaskNotCancelableError,
    TaskNotFoundError,
)
from a2a_anyio.testing import FakeAgent, RecordedRequest, SkillContext, reply
from a2a_anyio.testing._skills import Emit

from ._support import BASE, on_mock_clock
from .test_logging import client_of, script_agent, slow_agent

BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])


def ids(span: ReadableSpan) -> SpanContext:
    context = span.get_span_context()
    assert context is not None
    return context


def parent_of(span: ReadableSpan) -> int:
    assert span.parent is not None
    return span.parent.span_id


def traceparent(span: ReadableSpan) -> str:
    """The ``traceparent`` a request made within ``span`` carries."""
    ctx = ids(span)
    return f"00-{ctx.trace_id:032x}-{ctx.span_id:016x}-{ctx.trace_flags:02x}"


def sent_within(requests: list[RecordedRequest]) -> list[str | None]:
    return [r.headers.get("traceparent") for r in requests]


def by_name(exporter: InMemorySpanExporter) -> dict[str, list[ReadableSpan]]:
    out: dict[str, list[ReadableSpan]] = {}
    for span in exporter.get_finished_spans():
        out.setdefault(span.name, []).append(span)
    return out


def events(span: ReadableSpan) -> list[tuple[str, dict[str, Any]]]:
    return [(e.name, dict(e.attributes or {})) for e in span.events]


@pytest.mark.anyio
async def test_every_operation_is_a_client_span(spans: InMemorySpanExporter) -> None:
    agent = FakeAgent()
    async with client_of(agent, tracing=True) as client:
        task = await client.send_message("hi")
        assert isinstance(task, Task)
        await client.get_task(task.id)
        await client.list_tasks()
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(task.id)
        async with client.stream_message("more") as stream:
            streamed = await stream.result()
    assert isinstance(streamed, Task)
    finished = spans.get_finished_spans()
    assert [s.name for s in finished] == ["a2a send", "a2a get", "a2a list", "a2a cancel", "a2a stream"]  # fmt: skip
    assert {s.kind for s in finished} == {SpanKind.CLIENT}
    send, get, _, cancel, stream_span = finished
    assert dict(send.attributes or {}) == {
        "a2a.operation": "send",
        "a2a.agent.url": agent.url,
        "a2a.method": "SendMessage",
        "url.full": agent.rpc_url,
        "rpc.jsonrpc.request_id": "1",
        "a2a.task.id": task.id,
        "a2a.task.state": "completed",
        "a2a.context.id": task.context_id,
    }
    assert (get.attributes or {})["a2a.method"] == "GetTask"
    assert send.status.status_code is StatusCode.UNSET
    assert cancel.status.status_code is StatusCode.ERROR
    assert (cancel.attributes or {})["error.type"] == "TaskNotCancelableError"
    assert [name for name, _ in events(cancel)] == ["exception"]
    assert (stream_span.attributes or {})["a2a.method"] == "SendStreamingMessage"
    assert (stream_span.attributes or {})["a2a.task.state"] == "completed"
    # each request carries the span of its operation (the card request, the first one's)
    assert sent_within(agent.requests) == [traceparent(s) for s in (send, *finished)]


@pytest.mark.anyio
async def test_the_method_as_on_the_wire(spans: InMemorySpanExporter) -> None:
    agent = FakeAgent(dialect="0.3")
    async with client_of(agent, tracing=True) as client:
        with pytest.raises(TaskNotFoundError):
            await client.get_task("t-gone")
    [span] = spans.get_finished_spans()
    attributes = dict(span.attributes or {})
    assert (attributes["a2a.method"], attributes["a2a.task.id"]) == ("tasks/get", "t-gone")
    assert attributes["error.type"] == "TaskNotFoundError"


@on_mock_clock()
@pytest.mark.anyio
async def test_retries_and_resumes_are_span_events(spans: InMemorySpanExporter) -> None:
    agent = slow_agent()
    agent.rate_limit(1, retry_after=0, op="send")
    async with client_of(agent, tracing=True) as client:
        await client.send_message("hi", blocking=False)
        agent.fault("stream", cut_after=1, times=2)
        await client.stream_message("hi").result()
        agent.clear_requests()
        agent.fault("subscribe", error=-32004, times=1)
        await client.stream_message("hi").result()
    named = by_name(spans)
    [send] = named["a2a send"]
    assert events(send) == [("a2a.retry", {"attempt": 1, "delay": 0.0, "error.type": "A2AHTTPError"})]  # fmt: skip
    cut, refused = named["a2a stream"]
    resume = ("a2a.resume", {"attempt": 1, "error.type": "A2AConnectionError"})
    assert events(cut) == [resume]
    assert events(refused) == [resume, ("a2a.poll", {})]
    # the polls are operations of their own, within the stream's span
    polls = named["a2a get"]
    assert polls and {parent_of(p) for p in polls} == {ids(refused).span_id}
    assert (
        sent_within(agent.requests_for("stream") + agent.requests_for("subscribe"))
        == [traceparent(refused)] * 2
    )
    assert sent_within(agent.requests_for("get")) == [traceparent(p) for p in polls]


@on_mock_clock()
@pytest.mark.anyio
async def test_the_deadline_is_the_span_s_error(spans: InMemorySpanExporter) -> None:
    async with client_of(FakeAgent(delay=5), tracing=True, timeout=1) as client:
        with pytest.raises(A2ATimeoutError):
            await client.get_task("t-1")
    [span] = spans.get_finished_spans()
    assert (span.attributes or {})["error.type"] == "A2ATimeoutError"
    assert span.status.status_code is StatusCode.ERROR


@pytest.mark.anyio
async def test_a_stream_s_error_is_its_span_s(spans: InMemorySpanExporter) -> None:
    agent = FakeAgent()
    agent.fault("stream", error=-32603, message="boom")
    async with client_of(agent, tracing=True) as client:
        with pytest.raises(A2AServerError, match="boom"):
            async with client.stream_message("hi") as stream:
                await stream.result()
    [span] = spans.get_finished_spans()
    assert span.name == "a2a stream"
    assert (span.status.status_code, span.status.description) == (
        StatusCode.ERROR,
        f"[-32603] boom (SendStreamingMessage at {agent.rpc_url})",
    )
    assert (span.attributes or {})["error.type"] == "A2AServerError"


@pytest.mark.anyio
async def test_the_caller_s_span_is_the_parent(spans: InMemorySpanExporter) -> None:
    agent = FakeAgent()
    tracer = trace.get_tracer("tests")
    async with client_of(agent, tracing=True) as client:
        with tracer.start_as_current_span("user") as user:
            await client.send_message("hi")
            async with client.stream_message("hi") as stream:
                await stream.result()
    send, stream_span, _ = spans.get_finished_spans()
    for span in (send, stream_span):
        assert parent_of(span) == user.get_span_context().span_id
        assert ids(span).trace_id == user.get_span_context().trace_id


@pytest.mark.anyio
async def test_a_trace_follows_a_request_across_two_agents(spans: InMemorySpanExporter) -> None:
    second = FakeAgent(name="B")
    first = FakeAgent(name="A")

    @first.skill("relay")
    async def relay(ctx: SkillContext) -> AsyncIterator[Emit]:
        # agent A's handler continues the caller's trace and calls agent B
        token = context.attach(propagate.extract(ctx.headers))
        try:
            with trace.get_tracer("agent-a").start_as_current_span("A handles"):
                async with client_of(second, tracing=True) as to_b:
                    answer = await to_b.send_message(f"relayed: {ctx.text}")
        finally:
            context.detach(token)
        assert isinstance(answer, Task)
        yield reply(answer.text)

    async with client_of(first, tracing=True) as client:
        result = await client.send_message("hi")
    assert result.text == "relayed: hi"
    named = by_name(spans)
    handler = named["A handles"][0]
    to_b, to_a = named["a2a send"]
    assert {ids(s).trace_id for s in (to_a, handler, to_b)} == {ids(to_a).trace_id}
    assert parent_of(handler) == ids(to_a).span_id
    assert parent_of(to_b) == ids(handler).span_id
    assert sent_within(second.requests)[-1] == traceparent(to_b)


@pytest.mark.anyio
async def test_without_tracing_no_span_and_no_traceparent(spans: InMemorySpanExporter) -> None:
    agent = FakeAgent()
    async with client_of(agent) as client:
        with trace.get_tracer("tests").start_as_current_span("user"):
            await client.send_message("hi")
    assert [s.name for s in spans.get_finished_spans()] == ["user"]
    assert sent_within(agent.requests) == [None, None]


@pytest.mark.anyio
async def test_a_pool_s_clients_trace(spans: InMemorySpanExporter) -> None:
    agent = FakeAgent()
    async with (
        agent,
        httpx.AsyncClient(transport=agent.transport()) as http,
        AgentPool(http_client=http, tracing=True) as pool,
    ):
        await pool.send(agent.url, text="hi")
    [span] = spans.get_finished_spans()
    assert sent_within(agent.requests_for("send")) == [traceparent(span)]


@BACKENDS
def test_the_sync_facade_keeps_the_caller_s_span(backend: str, spans: InMemorySpanExporter) -> None:
    agent = script_agent()
    tracer = trace.get_tracer("tests")
    http = httpx.AsyncClient(transport=agent.transport())
    with (
        SyncA2AClient(BASE, backend=backend, http_client=http, tracing=True) as client,
        tracer.start_as_current_span("user") as user,
    ):
        client.get_task("t-1")
    http = httpx.AsyncClient(transport=agent.transport())
    with (
        SyncAgentPool(backend=backend, http_client=http, tracing=True) as pool,
        tracer.start_as_current_span("user"),
    ):
        pool.send(BASE, text="hi")
    get, _, send, pool_user = spans.get_finished_spans()
    assert parent_of(get) == user.get_span_context().span_id
    assert parent_of(send) == ids(pool_user).span_id
    assert agent.requests[-1].headers["traceparent"] == traceparent(send)


NO_OPENTELEMETRY = """
import sys
from a2a_anyio import A2AClient, AgentPool, SyncA2AClient

A2AClient("http://agent.test")
print(sorted(name for name in sys.modules if name.startswith("opentelemetry")))
sys.modules["opentelemetry"] = None  # as if it were not installed
for make in (
    lambda: A2AClient("http://agent.test", tracing=True),
    lambda: AgentPool(tracing=True),
    lambda: SyncA2AClient("http://agent.test", tracing=True),
):
    try:
        make()
    except ImportError as exc:
        print(type(exc).__name__, exc)
"""


def test_no_opentelemetry_is_imported_unless_tracing() -> None:
    done = subprocess.run(
        [sys.executable, "-c", NO_OPENTELEMETRY],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    missing = "ImportError tracing=True needs OpenTelemetry: pip install '.[otel]' in a2a-anyio's checkout"
    assert done.stdout.splitlines() == ["[]", missing, missing, missing]
