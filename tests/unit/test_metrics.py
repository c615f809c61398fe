"""``tracing=True`` measures too: each operation's duration (``gen_ai.client.operation.duration``),
and counts stream events, retries, resumes, polls and the cancels sent for abandoned tasks,
with OpenTelemetry's GenAI and A2A attribute names. The SDK's in-memory reader collects them."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

import anyio
import pytest
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from a2a_anyio import A2ATimeoutError, Task, TaskNotCancelableError
from a2a_anyio._metrics import DURATION_BUCKETS, instruments
from a2a_anyio.testing import FakeAgent

from ._support import on_mock_clock
from .test_generation import script
from .test_logging import client_of, slow_agent
from .test_stream import StreamingAgent, connect

DURATION = "gen_ai.client.operation.duration"
Points = dict[str, list[tuple[dict[str, Any], Any]]]


def measured(reader: InMemoryMetricReader) -> Points:
    """What was measured since the last collection: each metric's points, with their
    attributes."""
    out: Points = {}
    data = reader.get_metrics_data()
    for resource in data.resource_metrics if data is not None else []:
        for scope in resource.scope_metrics:
            for metric in scope.metrics:
                points = out.setdefault(metric.name, [])
                points += [(dict(p.attributes or {}), p) for p in metric.data.data_points]
    return out


def counts(points: Points, name: str) -> list[tuple[dict[str, Any], int]]:
    """A counter's points with a value (a delta collection keeps the others, at 0)."""
    return [(attributes, p.value) for attributes, p in points.get(name, []) if p.value]


def about(agent: FakeAgent) -> dict[str, Any]:
    """The attributes that say which agent was measured."""
    url = urlsplit(agent.url)
    return {
        "server.address": url.hostname,
        "server.port": url.port or 80,
        "gen_ai.agent.name": agent.name,
        "gen_ai.agent.version": "1.0.0",
    }


@pytest.mark.anyio
async def test_each_operation_s_duration(metrics: InMemoryMetricReader) -> None:
    agent = FakeAgent(name="Echo")
    async with client_of(agent, tracing=True) as client, client_of(agent, tracing=True) as other:
        task = await client.send_message("hi")
        assert isinstance(task, Task)
        await other.get_task(task.id)
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(task.id)
    durations = {a["a2a.operation"]: (a, p) for a, p in measured(metrics)[DURATION]}
    assert set(durations) == {"send", "get", "cancel"}
    send, get, cancel = (durations[op][0] for op in ("send", "get", "cancel"))
    assert send == {
        **about(agent),
        "gen_ai.operation.name": "invoke_agent",
        "a2a.operation": "send",
        "a2a.method.name": "SendMessage",
    }
    assert (get["gen_ai.operation.name"], get["a2a.method.name"]) == ("GetTask", "GetTask")
    assert cancel["error.type"] == "TaskNotCancelableError"
    assert "error.type" not in send and "error.type" not in get
    for _, point in durations.values():
        assert point.count == 1 and point.sum >= 0
        assert tuple(point.explicit_bounds) == DURATION_BUCKETS
    # both clients measure with the same instruments, made once
    assert instruments.cache_info().currsize == 1


@on_mock_clock()
@pytest.mark.anyio
async def test_a_timeout_is_an_error_of_its_type(metrics: InMemoryMetricReader) -> None:
    agent = FakeAgent(delay=5)
    async with client_of(agent, tracing=True, timeout=1) as client:
        with pytest.raises(A2ATimeoutError):
            await client.get_task("t-1")
        with anyio.move_on_after(0.5):  # the caller's own scope ends the next one
            await client.get_task("t-1")
    [timeout, cancelled] = [(a, p) for a, p in measured(metrics)[DURATION]]
    assert timeout[0]["error.type"] == "A2ATimeoutError"
    assert timeout[1].sum >= 1  # the virtual clock's second
    assert cancelled[0]["error.type"] == "cancelled"


@on_mock_clock()
@pytest.mark.anyio
async def test_retries_resumes_polls_and_events_are_counted(
    metrics: InMemoryMetricReader,
) -> None:
    agent = slow_agent()
    agent.rate_limit(1, retry_after=0, op="send")
    async with client_of(agent, tracing=True) as client:
        await client.send_message("hi", blocking=False)
        agent.fault("stream", cut_after=1, times=2)
        seen = [type(e).__name__ async for e in client.stream_message("hi")]
        agent.fault("subscribe", error=-32004, times=1)
        seen += [type(e).__name__ async for e in client.stream_message("hi")]
    points = measured(metrics)
    agent_is = about(agent)
    assert counts(points, "a2a.client.retries") == [
        ({**agent_is, "a2a.operation": "send", "error.type": "A2AHTTPError"}, 1)
    ]
    assert counts(points, "a2a.client.stream.resumes") == [
        ({**agent_is, "a2a.operation": "stream", "error.type": "A2AConnectionError"}, 2)
    ]
    assert counts(points, "a2a.client.stream.polls") == [
        ({**agent_is, "a2a.operation": "stream"}, 1)
    ]
    delivered = {a["a2a.event.type"]: n for a, n in counts(points, "a2a.client.stream.events")}
    kinds = {"Task": "task", "TaskStatusUpdateEvent": "status-update"}
    kinds["TaskArtifactUpdateEvent"] = "artifact-update"
    assert delivered == {kinds[name]: seen.count(name) for name in set(seen)}
    for attributes, _ in counts(points, "a2a.client.stream.events"):
        assert attributes["a2a.operation"] == "stream"
        assert attributes["a2a.method.name"] == "SendStreamingMessage"
    streams = [a for a, _ in points[DURATION] if a["a2a.operation"] == "stream"]
    assert streams and all("error.type" not in a for a in streams)


@on_mock_clock()
@pytest.mark.anyio
async def test_a_cancel_sent_for_an_abandoned_task_is_counted(
    metrics: InMemoryMetricReader,
) -> None:
    agent = slow_agent()
    async with (
        client_of(agent, tracing=True) as client,
        client.stream_message("go", cancel_on_exit=True) as stream,
    ):
        async for _ in stream:
            break
    assert stream.cancel_outcome is not None and stream.cancel_outcome.confirmed
    points = measured(metrics)
    assert counts(points, "a2a.client.cancels") == [
        ({**about(agent), "a2a.task.state": "canceled"}, 1)
    ]
    operations = sorted(a["a2a.operation"] for a, _ in points[DURATION])
    assert operations == ["cancel", "stream"]


@pytest.mark.anyio
async def test_without_tracing_nothing_is_measured(metrics: InMemoryMetricReader) -> None:
    agent = FakeAgent()
    async with client_of(agent) as client:
        await client.send_message("hi")
        async with client.stream_message("hi") as stream:
            await stream.result()
    assert not any(counts(measured(metrics), name) for name in ("a2a.client.stream.events",))
    assert DURATION not in measured(metrics)


@pytest.mark.anyio
async def test_a_task_read_again_after_a_gap_is_counted(metrics: InMemoryMetricReader) -> None:
    agent = StreamingAgent()
    script(agent, generations=True)
    async with connect(agent, tracing=True) as client:
        await client.stream_message("x").result()
    points = measured(metrics)
    [(attributes, refreshes)] = counts(points, "a2a.client.stream.refreshes")
    assert (attributes["a2a.operation"], refreshes) == ("stream", 1)
    assert counts(points, "a2a.client.stream.resumes")[0][1] == 1
