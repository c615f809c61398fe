"""``a2a-anyio conformance``: a table (or one JSON document), exit 1 on a failed check, the
CLI's usual statuses for bad input and an agent out of reach, and never a traceback."""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

import pytest

from a2a_anyio.testing import FakeAgent, SkillContext, status

from .conftest import cli, closed_port, run

pytestmark = pytest.mark.anyio


async def _slow(ctx: SkillContext) -> AsyncIterator[Any]:
    yield status("working")
    if ctx.text.startswith("slow"):
        await ctx.wait_cancelled()


async def test_a_conforming_agent_gives_a_table_and_exit_0(anyio_backend: str) -> None:
    agent = FakeAgent(dialect="0.3", binding="rest", skills={"work": _slow})
    async with agent.serve():
        text = await run(anyio_backend, "conformance", agent.url, "--long", "slow")
        doc = await run(anyio_backend, "-o", "json", "conformance", agent.url, "--long", "slow")
    assert text.code == 0, text.err
    lines = text.out.splitlines()
    assert lines[0].split() == ["CHECK", "INTERFACE", "RESULT", "DETAIL"]
    assert lines[1].split() == ["card", "-", "pass", "a", "valid", "A2A", "0.3", "card"]
    assert lines[5].split()[:4] == ["list", "HTTP+JSON", "0.3", "skipped"]
    assert lines[-1] == "10 passed, 0 failed, 2 skipped"
    assert doc.code == 0
    report = doc.json()
    assert set(report) == {
        "agent",
        "cardUrl",
        "version",
        "passed",
        "counts",
        "checks",
        "leftRunning",
    }
    check = report["checks"][1]
    assert (check["check"], check["interface"], check["outcome"]) == (
        "send",
        "HTTP+JSON 0.3",
        "pass",
    )
    assert set(check) == {"check", "interface", "outcome", "detail", "seconds"}
    assert report["counts"] == {"pass": 10, "fail": 0, "skip": 2}
    assert all(t.state.is_final for t in agent.tasks.values())


async def test_a_failure_exits_1_and_a_task_left_running_is_said(anyio_backend: str) -> None:
    agent = FakeAgent(dialect="1.0", skills={"work": _slow}, cancelable=False)
    async with agent.serve():
        result = await run(
            anyio_backend, "conformance", agent.url, "--long", "slow", "--check-timeout", "5"
        )
        as_json = await run(
            anyio_backend, "-o", "json", "--debug", "conformance", agent.url, "--long", "slow"
        )
    assert result.code == 1
    assert "Traceback" not in result.err
    assert "FAIL" in result.out
    assert "is left running: the agent refused to cancel it" in result.err
    assert result.err.splitlines()[-1] == "error: 9 passed, 2 failed, 1 skipped"
    assert as_json.code == 1
    assert as_json.json()["passed"] is False
    assert as_json.json()["leftRunning"][0]["interface"] == "JSON-RPC 1.0"
    assert "-> POST http://127.0.0.1:" in as_json.err  # --debug shows the exchanges


def test_bad_input_exits_2_and_an_agent_out_of_reach_3() -> None:
    zero = cli("conformance", "http://127.0.0.1:9", "--check-timeout", "0")
    assert (zero.code, zero.err.splitlines()[-2]) == (
        2,
        "error: --check-timeout must be more than 0",
    )
    assert cli("conformance", "http://127.0.0.1:9", "--total-timeout", "soon").code == 2
    down = cli("conformance", f"http://127.0.0.1:{closed_port()}", "--check-timeout", "5")
    assert down.code == 3
    assert "Traceback" not in down.err
