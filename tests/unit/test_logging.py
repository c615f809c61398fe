"""``logger=``: each request and its answer at DEBUG, retries and resumes at INFO, nothing
above; no credential in any record. Against the testing kit's FakeAgent through its
in-process transport (on the virtual clocks where a skill takes time) or on 127.0.0.1."""

from __future__ import annotations

import logging
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    A2AConnectionError,
    AgentPool,
    ApiKey,
    Basic,
    RetryPolicy,
    SyncA2AClient,
    SyncAgentPool,
    Task,
    TaskNotFoundError,
    TaskState,
)
from a2a_anyio._observe import redacted
from a2a_anyio.testing import FakeAgent, SkillContext, artifact, status
from a2a_anyio.testing._skills import Emit

from . import _support
from ._support import BASE, on_mock_clock, rpc_result, v1_card

NAME = "tests.a2a"
BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])


def slow_agent(**options: Any) -> FakeAgent:
    """An agent whose task works for a (virtual) second before it completes."""
    agent = FakeAgent(**options)

    @agent.skill("slow")
    async def slow(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        await anyio.sleep(1)
        yield artifact("done", last_chunk=True)
        yield status("completed")

    return agent


@asynccontextmanager
async def client_of(
    agent: FakeAgent, url: str | None = None, **options: Any
) -> AsyncIterator[A2AClient]:
    """A client of ``agent`` (at ``url``, by default the agent's) through its in-process
    transport."""
    async with (
        agent,
        httpx.AsyncClient(transport=agent.transport()) as http,
        A2AClient(url or agent.url, http_client=http, **options) as client,
    ):
        yield client


def script_agent() -> _support.FakeAgent:
    """A scripted v1.0 agent on an httpx mock transport (for the sync facade)."""
    agent = _support.FakeAgent(v1_card())
    task = {
        "id": "t-1",
        "contextId": "c-1",
        "status": {"state": "TASK_STATE_COMPLETED"},
        "artifacts": [{"artifactId": "a", "parts": [{"text": "done"}]}],
    }
    agent.results["SendMessage"] = {"task": task}
    agent.responders["GetTask"] = lambda req_id, params: httpx.Response(
        200, json=rpc_result(req_id, task)
    )
    return agent


@pytest.fixture
def log(caplog: pytest.LogCaptureFixture) -> pytest.LogCaptureFixture:
    """``caplog``, with the ``tests.a2a`` logger at DEBUG."""
    caplog.set_level(logging.DEBUG, logger=NAME)
    return caplog


def mine(log: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in log.records if r.name == NAME]


def lines(log: pytest.LogCaptureFixture, level: int = logging.DEBUG) -> list[str]:
    """The messages of ``tests.a2a`` at ``level``, durations shown as ``N``."""
    return [
        re.sub(r"in \d+\.\d ms", "in N ms", r.getMessage()) for r in mine(log) if r.levelno == level
    ]


def levels(log: pytest.LogCaptureFixture) -> set[int]:
    return {r.levelno for r in mine(log)}


@pytest.mark.anyio
async def test_each_request_and_its_answer_at_debug(log: pytest.LogCaptureFixture) -> None:
    agent = FakeAgent()
    async with client_of(agent, logger=logging.getLogger(NAME)) as client:
        assert isinstance(await client.send_message("hi"), Task)
        with pytest.raises(TaskNotFoundError):
            await client.get_task("nope")
    card, rpc = f"GET {agent.url}/.well-known/agent-card.json", f"POST {agent.rpc_url}"
    assert lines(log) == [
        f"request {card} (card)",
        f"answer 200 to {card} in N ms (card)",
        f"request {rpc} (SendMessage, id 1)",
        f"answer 200 to {rpc} in N ms (SendMessage, id 1)",
        f"request {rpc} (GetTask, id 2)",
        f"answer 200 to {rpc} in N ms (GetTask, id 2)",
    ]
    assert levels(log) == {logging.DEBUG}  # a call that fails is no warning


@pytest.mark.anyio
async def test_the_default_logger_is_a2a_anyio(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG, logger="a2a_anyio")
    async with client_of(FakeAgent()) as client:
        await client.get_card()
    assert [r.name for r in caplog.records] == ["a2a_anyio", "a2a_anyio"]


@on_mock_clock()
@pytest.mark.anyio
async def test_retries_and_resumes_at_info(log: pytest.LogCaptureFixture) -> None:
    agent = slow_agent()
    agent.rate_limit(1, retry_after=0, op="send")
    async with client_of(agent, logger=logging.getLogger(NAME)) as client:
        await client.send_message("hi", blocking=False)  # retried once after the 429
        agent.fault("stream", cut_after=1, times=2)  # the first two streams end too early
        cut = await client.stream_message("hi").result()  # re-attached
        agent.fault("subscribe", error=-32004, times=1)
        refused = await client.stream_message("hi").result()  # re-attach refused: polled
    assert isinstance(cut, Task) and cut.status.state is TaskState.COMPLETED
    assert isinstance(refused, Task) and refused.status.state is TaskState.COMPLETED
    ended = "A2AConnectionError: the stream ended before the task reached a final state"
    assert lines(log, logging.INFO) == [
        "retrying SendMessage in 0.00s: try 1 of 3 failed (A2AHTTPError: HTTP 429: Too Many Requests)",
        f"re-attaching to task {cut.id} (attempt 1): {ended}",
        f"re-attaching to task {refused.id} (attempt 1): {ended}",
        f"polling task {refused.id}: the agent refused to re-attach",
    ]
    assert levels(log) == {logging.DEBUG, logging.INFO}


@on_mock_clock()
@pytest.mark.anyio
async def test_a_follow_up_is_no_resume(log: pytest.LogCaptureFixture) -> None:
    agent = slow_agent(answers_at_once=True)
    async with client_of(agent, logger=logging.getLogger(NAME)) as client:
        task = await client.send_message("hi")  # answered at once, then followed up
    assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
    assert f"following task {task.id} up: re-attaching" in lines(log)
    assert lines(log, logging.INFO) == []


SECRETS = [f"{kind}-SECRET-{n}" for n, kind in enumerate(["tok", "pw", "key", "key"], 1)]
SECRETS += ["hdr-SECRET-5", "cookie-SECRET-6", "tok-SECRET-7", "tok-SECRET-8"]


@pytest.mark.anyio
async def test_no_credential_in_any_record(log: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger(NAME)
    agent = FakeAgent()
    endpoint = "http://agent.test/a2a?access_token=tok-SECRET-7&page=2"
    for options in (
        {"auth": "Bearer tok-SECRET-1"},
        {"auth": Basic("user", "pw-SECRET-2")},
        {"auth": ApiKey("key-SECRET-3")},
        {"auth": ApiKey("key-SECRET-4", name="k", location="query")},
        {"headers": {"X-Custom": "hdr-SECRET-5"}, "cookies": {"session": "cookie-SECRET-6"}},
        {"endpoint": endpoint},
    ):
        url = None if "endpoint" in options else agent.url
        async with client_of(agent, url, logger=logger, **options) as client:
            await client.send_message("hi")
    # an error that quotes its URL, in a retry's record
    unreachable = "http://127.0.0.1:1/a2a?token=tok-SECRET-8"
    retry = RetryPolicy(attempts=2)
    async with A2AClient(endpoint=unreachable, logger=logger, retry=retry) as client:
        with pytest.raises(A2AConnectionError, match="tok-SECRET-8"):  # the user's own URL
            await client.get_task("t-1")
    sent = [r.headers for r in agent.requests]
    assert any(h.get("x-api-key") == "key-SECRET-3" for h in sent)  # the secrets went out
    assert any("session=cookie-SECRET-6" in h.get("cookie", "") for h in sent)
    assert any(r.query.get("k") == "key-SECRET-4" for r in agent.requests)
    records = mine(log)
    assert len(records) >= 6 * 4 + 3
    for record in records:
        text = f"{record.getMessage()} {record.args}"
        assert not [s for s in SECRETS if s in text], text
    shown = "\n".join(r.getMessage() for r in records)
    assert "POST http://agent.test/a2a?access_token=***&page=2 (SendMessage, id 1)" in shown
    assert "cannot connect to http://127.0.0.1:1/a2a?token=***" in shown


def test_urls_are_shown_without_userinfo_and_secret_query_values() -> None:
    assert redacted("see https://u:pw@host:8/p?a=1&api_key=k&x=2#f, http://h/?sessionId=s") == (
        "see https://host:8/p?a=1&api_key=***&x=2#f, http://h/?sessionId=***"
    )


class CountingLogger(logging.Logger):
    """Counts the checks of DEBUG and the DEBUG records asked for."""

    def __init__(self) -> None:
        super().__init__("tests.counting", logging.INFO)
        self.checks = 0
        self.debugs = 0

    def isEnabledFor(self, level: int) -> bool:
        self.checks += level == logging.DEBUG
        return super().isEnabledFor(level)

    def debug(self, msg: object, *args: object, **kwargs: Any) -> None:
        self.debugs += 1


@pytest.mark.anyio
async def test_without_debug_a_request_costs_one_check() -> None:
    logger = CountingLogger()
    async with client_of(FakeAgent(), logger=logger) as client:
        await client.send_message("hi")  # the card, then the send
    assert (logger.checks, logger.debugs) == (2, 0)


@pytest.mark.anyio
async def test_a_pool_s_clients_log_to_the_pool_s_logger(
    log: pytest.LogCaptureFixture,
) -> None:
    agent = FakeAgent()
    async with (
        agent,
        httpx.AsyncClient(transport=agent.transport()) as http,
        AgentPool(http_client=http, logger=logging.getLogger(NAME)) as pool,
    ):
        assert await pool.send(agent.url, text="hi") == {"text": "hi"}
    assert f"request POST {agent.rpc_url} (SendMessage, id 1)" in lines(log)


@BACKENDS
def test_the_sync_facade_takes_a_logger(backend: str, log: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger(NAME)
    agent = script_agent()
    http = httpx.AsyncClient(transport=agent.transport())
    with SyncA2AClient(BASE, backend=backend, http_client=http, logger=logger) as client:
        client.get_task("t-1")
    http = httpx.AsyncClient(transport=agent.transport())
    with SyncAgentPool(backend=backend, http_client=http, logger=logger) as pool:
        pool.client(BASE).get_task("t-1")
    rpc = f"POST {BASE}/a2a"
    assert lines(log).count(f"request {rpc} (GetTask, id 1)") == 2


def test_verify_false_warns_and_is_not_logged(log: pytest.LogCaptureFixture) -> None:
    logger = logging.getLogger(NAME)
    with pytest.warns(UserWarning, match="not verified for https://agent.example.com"):
        A2AClient("https://agent.example.com", verify=False, logger=logger)
    with pytest.warns(UserWarning, match="not verified for the agents of this pool"):
        AgentPool(verify=False, logger=logger)
    assert lines(log) == []
