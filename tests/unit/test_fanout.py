"""fan_out, merge_streams and fan_out_stream over in-process agents; deadlines on virtual clocks."""

from __future__ import annotations

import json
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    A2ATimeoutError,
    MessageStream,
    Task,
    TaskNotFoundError,
    TaskStatusUpdateEvent,
    fan_out,
    fan_out_stream,
    merge_streams,
)

from ._support import (
    ScriptedBody,
    on_mock_clock,
    rpc_error_obj,
    rpc_result,
    sse_response,
    sse_text,
    v1_card,
)

pytestmark = pytest.mark.anyio


def task_json(task_id: str, state: str = "TASK_STATE_COMPLETED", text: str = "") -> dict[str, Any]:
    task: dict[str, Any] = {"id": task_id, "contextId": "ctx", "status": {"state": state}}
    if text:
        task["artifacts"] = [{"artifactId": "a", "parts": [{"text": text}]}]
    return task


class Agents:
    """In-process agents told apart by host: each answers SendMessage after ``delay`` seconds
    (virtual, on the mock clocks) with a completed task naming it, or with ``error``; streams
    send ``events`` status updates ``gap`` seconds apart."""

    def __init__(self) -> None:
        self.delay: dict[str, float] = {}
        self.error: dict[str, int] = {}
        self.gap: dict[str, float] = {}
        self.running = 0
        self.most_running = 0
        self.bodies: dict[str, ScriptedBody] = {}
        self.requests = 0

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests += 1
        host = request.url.host
        body = json.loads(request.content)
        req_id = body["id"]
        if body["method"] == "SendStreamingMessage":
            events = [
                rpc_result(req_id, {"task": task_json(host, "TASK_STATE_SUBMITTED")}),
                rpc_result(req_id, {"statusUpdate": {"taskId": host, "status": {"state": "TASK_STATE_WORKING"}}}),
                rpc_result(req_id, {"statusUpdate": {"taskId": host, "status": {"state": "TASK_STATE_COMPLETED"}}}),
            ]  # fmt: skip
            scripted = ScriptedBody(
                [sse_text([e]).encode() for e in events], gap=self.gap.get(host, 0)
            )
            self.bodies[host] = scripted
            return sse_response(scripted)
        self.running += 1
        self.most_running = max(self.most_running, self.running)
        try:
            await anyio.sleep(self.delay.get(host, 0))
        finally:
            self.running -= 1
        if host in self.error:
            return httpx.Response(200, json=rpc_error_obj(req_id, self.error[host], "nope"))
        return httpx.Response(200, json=rpc_result(req_id, {"task": task_json(host, text=host)}))

    def clients(self, *hosts: str) -> list[A2AClient]:
        """Clients of agents whose cards say they do not stream: a fan-out sends to them."""
        http = httpx.AsyncClient(transport=httpx.MockTransport(self.handle))
        return [
            A2AClient(endpoint=f"http://{h}/a2a", http_client=http, card=PLAIN_CARD) for h in hosts
        ]


PLAIN_CARD = v1_card(capabilities={"streaming": False})


async def test_results_in_target_order_with_errors_kept_apart() -> None:
    agents = Agents()
    agents.error["b"] = -32001
    agents.delay["a"] = 0.01
    results = await fan_out(agents.clients("a", "b", "c"), "hi")
    assert [r.agent for r in results] == ["http://a/a2a", "http://b/a2a", "http://c/a2a"]
    assert [r.ok for r in results] == [True, False, True]
    assert isinstance(results[0].value, Task) and results[0].value.text == "a"
    assert isinstance(results[1].error, TaskNotFoundError)
    assert not any(r.cancelled for r in results)


@on_mock_clock()
async def test_deadline_cancels_the_straggler() -> None:
    agents = Agents()
    agents.delay.update({"fast": 1, "slow": 1000})
    start = anyio.current_time()
    results = await fan_out(agents.clients("fast", "slow"), "hi", timeout=5)
    assert anyio.current_time() - start == pytest.approx(5)
    fast, slow = results
    assert fast.ok and fast.elapsed == pytest.approx(1)
    assert slow.cancelled and slow.value is None
    assert isinstance(slow.error, A2ATimeoutError) and slow.error.timeout == "deadline"
    assert str(slow.error) == (
        "cancelled at the deadline: no answer within the fan-out's timeout of 5s "
        "(send at http://slow/a2a)"
    )
    assert slow.elapsed == pytest.approx(5)


@on_mock_clock()
async def test_the_calls_of_a_fan_out_know_its_scope_bounds_them() -> None:
    from a2a_anyio._deadline import sooner

    agents = Agents()
    bounded: list[bool] = []

    def on_event(event: Any) -> None:
        bounded.append(sooner(anyio.current_time() + 10))

    await fan_out(agents.clients("a", "b"), "hi", timeout=5, on_event=on_event)
    assert bounded == [True, True]  # their own 10 s limits would need no scope
    await fan_out(agents.clients("a"), "hi", timeout=20, on_event=on_event)
    with anyio.move_on_after(5):  # a caller's scope, which the caller may move: never
        await agents.clients("a")[0].send_message("hi", on_event=on_event)
    assert bounded == [True, True, False, False]


@on_mock_clock()
async def test_first_k_returns_as_soon_as_k_answered() -> None:
    agents = Agents()
    agents.delay.update({"a": 4, "b": 1, "c": 3, "d": 2})
    agents.error["d"] = -32603  # a failure does not count towards first
    start = anyio.current_time()
    results = await fan_out(agents.clients("a", "b", "c", "d"), "hi", first=2)
    assert anyio.current_time() - start == pytest.approx(3)
    assert [r.ok for r in results] == [False, True, True, False]
    assert results[0].cancelled and results[0].error is None
    assert results[3].error is not None and not results[3].cancelled


@on_mock_clock()
async def test_limit_bounds_concurrency() -> None:
    agents = Agents()
    agents.delay.update(dict.fromkeys("abcdef", 1))
    results = await fan_out(agents.clients(*"abcdef"), "hi", limit=2)
    assert all(r.ok for r in results)
    assert agents.most_running == 2
    agents.most_running = 0
    await fan_out(agents.clients(*"abcdef"), "hi")
    assert agents.most_running == 6


async def test_bad_first_and_no_targets() -> None:
    with pytest.raises(ValueError, match="first"):
        await fan_out([], "hi", first=0)
    assert await fan_out([], "hi") == []


SHAPE = r"^message does not have a message's shape \(part is not an object\): a message is a str"


async def test_the_caller_s_mistakes_are_raised_once_before_any_agent_is_sent_them() -> None:
    agents = Agents()
    clients = agents.clients("a", "b")
    with pytest.raises(ValueError, match=SHAPE):
        await fan_out(clients, {"role": "user", "parts": ["hi"]})
    with pytest.raises(TypeError, match=r"^metadata must be a mapping \(dict\) of names"):
        await fan_out(clients, "hi", metadata="skill", on_event=print)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match=SHAPE):
        fan_out_stream(clients, {"role": "user", "parts": ["hi"]})
    with pytest.raises(
        TypeError, match=r"^push_config must be a PushNotificationConfig, not dict$"
    ):
        fan_out_stream(
            clients,
            "hi",
            push_config={"url": "https://hook.example/cb"},  # type: ignore[arg-type]
            idle_timeout=5,
        )
    assert agents.requests == 0


@on_mock_clock()
async def test_outer_cancel_scope_stops_everything() -> None:
    agents = Agents()
    agents.delay.update({"a": 100, "b": 100})
    before = len(anyio.get_running_tasks())
    with anyio.move_on_after(2) as scope:
        await fan_out(agents.clients("a", "b"), "hi")
    assert scope.cancelled_caught
    assert agents.running == 0
    assert len(anyio.get_running_tasks()) == before


@on_mock_clock()
async def test_merge_streams_per_stream_and_total_deadlines() -> None:
    agents = Agents()
    agents.gap.update({"quick": 1, "drip": 10, "late": 30})
    clients = dict(
        zip(["quick", "drip", "late"], agents.clients("quick", "drip", "late"), strict=True)
    )
    streams = {name: c.stream_message("go") for name, c in clients.items()}
    items = []
    async with merge_streams(streams, stream_timeout=25, timeout=40) as merged:
        async for item in merged:
            items.append((anyio.current_time(), item))
    by_agent: dict[str, list[Any]] = {}
    for _, item in items:
        by_agent.setdefault(item.agent, []).append(item.event)
    assert isinstance(by_agent["quick"][-1], TaskStatusUpdateEvent)
    # drip: events at 10 and 20, cut at 25 by its own timeout
    assert len(by_agent["drip"]) == 3
    assert isinstance(by_agent["drip"][-1], A2ATimeoutError)
    # late: first event at 30, cut at 25 too (its own timeout is nearer than the total)
    assert len(by_agent["late"]) == 1
    assert isinstance(by_agent["late"][0], A2ATimeoutError)
    assert by_agent["late"][0].message == (
        "cancelled at the deadline: the stream of late did not end within its timeout"
    )
    assert all(b.closed for b in agents.bodies.values())


@on_mock_clock()
async def test_merge_streams_leaving_early_closes_every_stream() -> None:
    agents = Agents()
    agents.gap.update({"a": 5, "b": 5})
    streams = dict(
        zip("ab", (c.stream_message("go") for c in agents.clients("a", "b")), strict=True)
    )
    async with merge_streams(streams) as merged:
        first = await merged.__anext__()
        assert first.agent in ("a", "b")
    assert all(b.closed for b in agents.bodies.values())
    assert all(s.finished is False for s in streams.values())


async def test_merge_streams_fail_fast_and_error_items() -> None:
    async def handler(request: httpx.Request) -> httpx.Response:
        req_id = json.loads(request.content)["id"]
        if request.url.host == "bad":
            return httpx.Response(200, json=rpc_error_obj(req_id, -32001, "gone"))
        body = ScriptedBody(
            [
                sse_text(
                    [rpc_result(req_id, {"task": task_json("t", "TASK_STATE_WORKING")})]
                ).encode()
            ],
            hang=True,
        )
        return sse_response(body)

    http = httpx.AsyncClient(transport=httpx.MockTransport(handler))

    def streams() -> dict[str, MessageStream]:
        return {
            h: A2AClient(endpoint=f"http://{h}/a2a", http_client=http).stream_message("go")
            for h in ("bad", "good")
        }

    with pytest.raises(TaskNotFoundError):  # the error itself, no exception group
        async with merge_streams(streams(), fail_fast=True) as merged:
            async for _ in merged:
                pass

    seen = []
    with anyio.move_on_after(1):
        async with merge_streams(streams()) as merged:
            async for item in merged:
                seen.append(item)
                if len(seen) == 2:
                    break
    assert {i.agent for i in seen} == {"bad", "good"}
    assert isinstance(next(i for i in seen if i.agent == "bad").error, TaskNotFoundError)


async def test_fan_out_stream_names_streams_after_their_agents() -> None:
    agents = Agents()
    clients = agents.clients("a", "b")
    finals = []
    async with fan_out_stream([*clients, clients[0]], "go") as merged:
        async for item in merged:
            if isinstance(item.event, TaskStatusUpdateEvent) and item.event.final:
                finals.append(item.agent)
    assert sorted(finals) == ["http://a/a2a", "http://a/a2a#2", "http://b/a2a"]
