"""``check_agent`` against the testing kit's agent, well-behaved and misbehaving: a wrong
shape fails its check with the reason, a hang hits the check's time limit, a task that cannot
be cancelled is reported, and nothing raises."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from a2a_anyio import A2AConnectionError
from a2a_anyio._answer_shapes import answer_problems
from a2a_anyio._conformance import CHECKS, ConformanceReport, check_agent
from a2a_anyio.testing import FakeAgent, SkillContext, status
from tests.unit._support import on_mock_clock

pytestmark = pytest.mark.anyio


async def _slow(ctx: SkillContext) -> AsyncIterator[Any]:
    yield status("working", "on it")
    if ctx.text.startswith("slow"):
        await ctx.wait_cancelled()


class _Rewriting(httpx.AsyncBaseTransport):
    """The agent's transport, with ``old`` replaced by ``new`` in every answer's body: an
    agent that answers in a shape its version does not have."""

    def __init__(self, inner: httpx.AsyncBaseTransport, old: bytes, new: bytes) -> None:
        self.inner, self.old, self.new = inner, old, new

    async def __aenter__(self) -> _Rewriting:
        await self.inner.__aenter__()
        return self

    async def __aexit__(self, *exc: Any) -> None:
        await self.inner.__aexit__(*exc)

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        response = await self.inner.handle_async_request(request)
        stream = response.stream
        assert isinstance(stream, httpx.AsyncByteStream)
        body: httpx.AsyncByteStream = stream
        old, new = self.old, self.new

        class Rewritten(httpx.AsyncByteStream):
            async def __aiter__(self) -> AsyncIterator[bytes]:
                async for chunk in body:
                    yield chunk.replace(old, new)

            async def aclose(self) -> None:
                await body.aclose()

        headers = [(k, v) for k, v in response.headers.raw if k.lower() != b"content-length"]
        return httpx.Response(response.status_code, headers=headers, stream=Rewritten())


@asynccontextmanager
async def checked(
    agent: FakeAgent, rewrite: tuple[bytes, bytes] | None = None, **options: Any
) -> AsyncIterator[ConformanceReport]:
    transport: httpx.AsyncBaseTransport = agent.transport()
    if rewrite is not None:
        transport = _Rewriting(transport, *rewrite)
    async with httpx.AsyncClient(transport=transport) as http:
        options.setdefault("long_text", "slow")
        yield await check_agent(agent.url, http_client=http, **options)


def outcomes(report: ConformanceReport) -> dict[str, str]:
    return {c.name: c.outcome for c in report.checks if c.interface is not None}


def detail(report: ConformanceReport, name: str) -> str:
    [check] = [c for c in report.checks if c.name == name and c.interface is not None]
    return check.detail


async def test_a_well_behaved_agent_passes_everything_it_announces() -> None:
    agent = FakeAgent(dialect="1.0", skills={"work": _slow}, extended_card={"name": "More"})
    async with checked(agent) as report:
        assert report.passed, report.checks
    assert report.version == "1.0"
    assert set(outcomes(report).values()) == {"pass"}
    assert [c.name for c in report.checks] == ["card", *CHECKS]
    assert report.left_running == []
    assert all(t.state.is_final for t in agent.tasks.values())
    doc = report.to_dict()
    assert doc["passed"] is True
    assert doc["counts"] == {"pass": 12, "fail": 0, "skip": 0}
    assert doc["checks"][1]["interface"] == "JSON-RPC 1.0"


async def test_what_the_card_does_not_announce_is_skipped_with_why() -> None:
    agent = FakeAgent(dialect="0.3", binding="rest", streaming=False, push_notifications=False)
    async with checked(agent, long_text="hello") as report:
        pass
    # The echo's task may be over before the cancel, or not: either way no failure.
    assert outcomes(report)["cancel"] in ("pass", "skip")
    skipped = {
        c.name: c.detail for c in report.checks if c.outcome == "skip" and c.name != "cancel"
    }
    assert skipped == {
        "stream": "the card announces no streaming",
        "list": "A2A 0.3 has no task listing",
        "subscribe": "the card announces no streaming",
        "push-create": "the card announces no push notifications",
        "push-get": "the card announces no push notifications",
        "push-list": "the card announces no push notifications",
        "push-delete": "the card announces no push notifications",
        "extended-card": "the card announces no extended card",
    }
    assert report.passed


async def test_an_interface_of_a_version_the_client_does_not_speak_is_skipped() -> None:
    agent = FakeAgent(dialect="1.0", skills={"work": _slow})
    agent.card_overrides["supportedInterfaces"] = [
        {"url": f"{agent.url}/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        {"url": f"{agent.url}/v2", "protocolBinding": "JSONRPC", "protocolVersion": "2.0"},
    ]
    async with checked(agent) as report:
        assert report.passed
    later = [c for c in report.checks if c.interface == "JSON-RPC 2.0"]
    assert [c.name for c in later] == list(CHECKS)
    assert {(c.outcome, c.detail) for c in later} == {("skip", "the client does not speak 2.0")}


async def test_a_state_spelled_as_another_version_spells_it_fails() -> None:
    # The client reads "completed" from a v1.0 agent; the check does not accept it.
    agent = FakeAgent(dialect="1.0", skills={"work": _slow})
    async with checked(agent, (b'"TASK_STATE_COMPLETED"', b'"completed"')) as report:
        assert not report.passed
    assert outcomes(report)["send"] == "fail"
    assert detail(report, "send") == 'task: status.state: "completed" is not a value of A2A 1.0'
    assert outcomes(report)["cancel"] == "pass"  # its task never completes


async def test_a_missing_member_fails_and_names_it() -> None:
    agent = FakeAgent(dialect="0.3", binding="jsonrpc")
    async with checked(agent, (b'"messageId"', b'"messageID"')) as report:
        pass
    assert outcomes(report)["send"] == "fail"
    assert detail(report, "send").startswith("task: history[0].messageId: missing")


async def test_a_kind_in_a_v1_answer_fails() -> None:
    agent = FakeAgent(dialect="1.0", skills={"work": _slow})
    async with checked(agent, (b'"contextId"', b'"kind":"task","contextId"')) as report:
        pass
    assert detail(report, "get").startswith(
        "task: kind: A2A 1.0 has no kind (v0.3 JSON-RPC's discriminator)"
    )


async def test_an_agent_error_fails_with_its_name() -> None:
    agent = FakeAgent(dialect="1.0", skills={"work": _slow})
    agent.fault("push_get", error=-32001, message="no such config")
    async with checked(agent) as report:
        pass
    assert detail(report, "push-get").startswith("TaskNotFoundError: [-32001] no such config")
    assert outcomes(report)["push-list"] == "pass"


@on_mock_clock()
async def test_a_hang_hits_the_check_limit_and_the_rest_go_on() -> None:
    agent = FakeAgent(dialect="1.0", skills={"work": _slow})
    agent.fault("get", delay=3600)
    async with checked(agent, check_timeout=5.0) as report:
        pass
    assert detail(report, "get") == "no answer within the limit of 5 s"
    assert outcomes(report)["list"] == "pass"
    assert report.left_running == []


@on_mock_clock()
async def test_the_overall_limit_skips_what_it_leaves() -> None:
    agent = FakeAgent(dialect="1.0", skills={"work": _slow})
    agent.fault("stream", delay=3600)
    async with checked(agent, check_timeout=5.0, total_timeout=7.0) as report:
        pass
    assert detail(report, "stream") == "no answer within the limit of 5 s"
    assert outcomes(report)["get"] == "pass"
    # The cancel check starts its task by a stream, which hangs too: cut at 7 s in all.
    assert detail(report, "cancel") == "not done when the overall limit of 7 s ran out"
    limit = "not run: the overall limit of 7 s was reached"
    assert [c.detail for c in report.checks[-6:]] == [limit] * 6


@on_mock_clock()
async def test_a_check_cut_by_its_limit_leaves_no_task_running() -> None:
    agent = FakeAgent(dialect="1.0", skills={"work": _slow})
    agent.fault("subscribe", delay=3600)
    async with checked(agent, check_timeout=5.0) as report:
        assert all(t.state.is_final for t in agent.tasks.values())
    assert detail(report, "subscribe") == "no answer within the limit of 5 s"
    assert report.left_running == []


@on_mock_clock()
async def test_a_cancel_that_hangs_leaves_a_task_reported_within_the_sweep_limit() -> None:
    agent = FakeAgent(dialect="1.0", skills={"work": _slow})
    agent.fault("cancel", delay=3600)
    async with checked(agent, check_timeout=5.0) as report:
        pass
    assert detail(report, "cancel") == "no answer within the limit of 5 s"
    reasons = {t.reason for t in report.left_running}
    assert reasons == {"not cancelled within 5 s"}
    assert len(report.left_running) == 2  # the cancel check's task and the subscribe check's


async def _asks(ctx: SkillContext) -> AsyncIterator[Any]:
    yield status("input-required", "which one?")


async def test_a_task_left_waiting_for_input_is_cancelled() -> None:
    agent = FakeAgent(dialect="0.3", skills={"ask": _asks}, streaming=False)
    async with checked(agent) as report:
        states = {t.state.value for t in agent.tasks.values()}
    assert detail(report, "send") == "task input-required"
    assert states == {"canceled"}
    assert report.left_running == []


async def test_a_task_that_cannot_be_cancelled_is_reported() -> None:
    agent = FakeAgent(dialect="1.0", skills={"work": _slow}, cancelable=False)
    async with checked(agent) as report:
        pass
    assert outcomes(report)["cancel"] == "fail"
    assert detail(report, "cancel").startswith("TaskNotCancelableError")
    left = {t.interface for t in report.left_running}
    assert left == {"JSON-RPC 1.0"}
    assert all("refused to cancel" in t.reason for t in report.left_running)
    assert report.to_dict()["leftRunning"][0]["interface"] == "JSON-RPC 1.0"


async def test_an_unreachable_agent_raises_a_connection_error() -> None:
    with pytest.raises(A2AConnectionError):
        await check_agent("http://127.0.0.1:9", check_timeout=5.0)


async def test_time_limits_are_checked() -> None:
    with pytest.raises(ValueError, match="check_timeout must be a positive number"):
        await check_agent("http://127.0.0.1:9", check_timeout=0)


@pytest.mark.parametrize(
    ("raw", "what", "shape", "problems"),
    [
        ({"id": "t", "status": {"state": "TASK_STATE_COMPLETED"}}, "task", "1.0", []),
        ({"id": "t", "status": {"state": "TASK_STATE_CANCELLED"}}, "task", "0.3-proto", []),
        (
            {"id": "t", "status": {"state": "TASK_STATE_CANCELED"}},
            "task",
            "0.3-proto",
            ['status.state: "TASK_STATE_CANCELED" is not a value of v0.3\'s ProtoJSON'],
        ),
        (
            {"kind": "task", "id": "t", "status": {"state": "completed"}},
            "task",
            "0.3",
            ["contextId: missing"],
        ),
        (
            {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "a", "url": "b"}]},
            "message",
            "1.0",
            ["parts[0]: must hold exactly one of text, raw, url, data (it holds 2)"],
        ),
        (
            {"messageId": "m", "role": "ROLE_AGENT", "content": [{"file": {}}]},
            "message",
            "0.3-proto",
            ["content[0].file: must hold exactly one of fileWithUri, fileWithBytes (it holds 0)"],
        ),
        (
            {"kind": "status-update", "taskId": "t", "contextId": "c", "status": {}},
            "status-update",
            "0.3",
            ["status.state: missing", "final: missing"],
        ),
        (
            {"id": "t", "status": {"state": "working"}, "final": 1},
            "status-update",
            "legacy",
            ["final: must be a boolean, not a number"],
        ),
        (
            {"tasks": "none", "totalSize": "3"},
            "page",
            "1.0",
            [
                "tasks: must be an array, not a string",
                "totalSize: must be a number, not a string",
            ],
        ),
        (
            {"taskId": "t", "pushNotificationConfig": {}},
            "push-config",
            "0.3",
            ["pushNotificationConfig.url: missing"],
        ),
        ([1], "task", "1.0", ["the task is an array, not a JSON object"]),
    ],
)
def test_answer_shapes(raw: Any, what: str, shape: str, problems: list[str]) -> None:
    assert answer_problems(raw, what, shape) == problems


def test_answer_shapes_refuse_unknown_names() -> None:
    with pytest.raises(ValueError, match="no shape of answer"):
        answer_problems({}, "card", "1.0")
    with pytest.raises(ValueError, match="shape must be one of"):
        answer_problems({}, "task", "2.0")
