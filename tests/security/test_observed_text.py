"""What a server writes that reaches a client's log records, span attributes and error
messages: a URL, an error message, a task id. A hostile server of the suite's own
(``_raw_server``) makes them as long as an answer can be (a Location of 60 KB, ids of a MiB)
and shaped to stall a backtracking pattern (``?token?token...`` without ``=``); the client
still ends each call at once with its typed error, each record and attribute holds at most
``MAX_SHOWN`` characters with secret-looking query values hidden, and a message quotes a
server's value short."""

from __future__ import annotations

import json
import logging
import socket
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import pytest
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from a2a_anyio import (
    A2AClient,
    A2AClientError,
    A2AConnectionError,
    A2AServerError,
    AgentPool,
    RetryPolicy,
    Task,
    TaskFailedError,
    TaskState,
)
from a2a_anyio._errors import MAX_SHOWN
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, status
from tests.unit._support import v1_card

from ._raw_server import Answer, RawServer, Request, jsonrpc, sse

pytestmark = pytest.mark.anyio
NO_RETRY = RetryPolicy(attempts=1)

NAME = "tests.hostile"
JSON = {"Content-Type": "application/json"}
EVENTS = {"Content-Type": "text/event-stream"}
#: Thousands of query parameter names with a secret's word and no value, after a real secret.
STALLING_QUERY = "api_key=SECRET&q=" + "token?" * 10_000  # a URL httpx takes (64 KiB)
BIG = 1024 * 1024
BIG_ID = "t" * BIG


def method_of(request: Request) -> str:
    return str(json.loads(request.body)["method"])


def rpc_error(request: Request, message: str) -> bytes:
    error = {"code": -32603, "message": message}
    return json.dumps({"jsonrpc": "2.0", "id": request.rpc_id, "error": error}).encode()


def task(state: str, task_id: str = BIG_ID) -> dict[str, Any]:
    return {"id": task_id, "contextId": "c" * len(task_id), "status": {"state": state}}


def client_of(url: str, **options: Any) -> A2AClient:
    return A2AClient(
        endpoint=url + "/rpc", protocol="1.0", logger=logging.getLogger(NAME), **options
    )


def records(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == NAME]


async def test_a_stalling_redirect_and_error_message_are_logged_short_and_at_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    # Before, each of these records took longer to make than any test may: the pattern that
    # hides secret query values backtracked over every "?token".
    caplog.set_level(logging.DEBUG, logger=NAME)

    def answer(request: Request) -> Answer:
        if "?" not in request.path:
            return Answer([], {"Location": f"/rpc?{STALLING_QUERY}"}, status=307)
        return Answer([rpc_error(request, f"see {request.path}")], JSON)

    retry = RetryPolicy(attempts=2, backoff=0, retry_if=lambda e: isinstance(e, A2AServerError))
    async with RawServer(answer).serve() as url, client_of(url, retry=retry) as client:
        with pytest.raises(A2AServerError, match="gave up after 2 attempts"):
            await client.get_task("t-1")
    logged = records(caplog)
    assert len(logged) == 9  # two requests and two answers each try, and the retry
    assert logged[2].startswith(f"request POST {url}/rpc?api_key=***&q=token?token?")
    assert logged[4].startswith("retrying GetTask in 0.00s: try 1 of 2 failed (A2AServerError")
    for line in logged:
        assert len(line) < MAX_SHOWN + 200 and "SECRET" not in line


async def test_spans_hold_a_server_s_long_message_and_ids_short(
    spans: InMemorySpanExporter,
) -> None:
    def answer(request: Request) -> Answer:
        if json.loads(request.body)["params"]["id"] == "t-fails":
            return Answer([rpc_error(request, "?api_key=SECRET&" + "token?" * 15_000)], JSON)
        return Answer([jsonrpc(request, task("TASK_STATE_COMPLETED"))], JSON)

    async with RawServer(answer).serve() as url, client_of(url, tracing=True) as client:
        with pytest.raises(A2AServerError):
            await client.get_task("t-fails")
        assert (await client.get_task("t-big")).id == BIG_ID
    failed, big = spans.get_finished_spans()
    description = failed.status.description or ""
    assert description.startswith("[-32603] ?api_key=***&token?") and "SECRET" not in description
    [exception] = failed.events
    for text in (description, *map(str, (exception.attributes or {}).values())):
        assert len(text) <= 16 * 1024 and "SECRET" not in text
    assert len(str((exception.attributes or {})["exception.message"])) <= MAX_SHOWN
    attributes = big.attributes or {}
    for name in ("a2a.task.id", "a2a.context.id"):
        assert str(attributes[name]).startswith("ttt" if name == "a2a.task.id" else "ccc")
        assert len(str(attributes[name])) == MAX_SHOWN


async def test_a_resume_record_holds_a_long_task_id_short(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.INFO, logger=NAME)

    def answer(request: Request) -> Answer:
        if method_of(request) == "SendStreamingMessage":  # a working task, then the body ends
            return Answer([sse(request, {"task": task("TASK_STATE_WORKING")})], EVENTS)
        return Answer([sse(request, {"task": task("TASK_STATE_COMPLETED")})], EVENTS)

    async with RawServer(answer).serve() as url, client_of(url) as client:
        done = await client.stream_message("hi").result()
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    [resumed] = records(caplog)
    assert resumed.startswith("re-attaching to task ttt")
    assert len(resumed) < 2 * MAX_SHOWN


@dataclass(frozen=True)
class Count:
    n: int


def answer_with(result: Any) -> Callable[[Request], Answer]:
    return lambda request: Answer([jsonrpc(request, result)], JSON)


def another_id(request: Request) -> Answer:
    return Answer([json.dumps({"jsonrpc": "2.0", "id": "i" * BIG, "result": {}}).encode()])


def coded(request: Request) -> Answer:
    return Answer([jsonrpc(request, {})], {**JSON, "Content-Encoding": "x" * 60_000})


def named_card(request: Request) -> Answer:  # a card of a long name, and no interface
    return Answer([json.dumps({"name": "n" * (BIG // 2)}).encode()], JSON)


Use = Callable[[A2AClient], Awaitable[Any]]
#: What the server answers, what the client does, what the error says.
QUOTED: dict[str, tuple[Callable[[Request], Answer], Use, str]] = {
    "unknown-kind": (
        answer_with({"kind": "x" * BIG}),
        lambda c: c.send_message("hi"),
        "result kind 'xxx",
    ),
    "another-id": (another_id, lambda c: c.call("ext/count"), "JSON-RPC response id 'iii"),
    "does-not-fit": (
        answer_with({"x" * BIG: 1}),
        lambda c: c.call("ext/count", result_type=Count),
        "does not fit Count: TypeError",
    ),
    "content-encoding": (coded, lambda c: c.call("ext/count"), "Content-Encoding 'xxx"),
    "card-name": (named_card, lambda c: c.get_card(), "agent card 'nnn"),
}


@pytest.mark.parametrize("case", QUOTED)
async def test_a_value_a_server_sent_is_quoted_short_in_the_error(case: str) -> None:
    answer, use, says = QUOTED[case]
    async with RawServer(answer).serve() as url:
        if case == "card-name":
            agent = A2AClient(url)
        else:
            agent = A2AClient(endpoint=url + "/rpc", protocol="0.3")
        async with agent as client:
            with pytest.raises(A2AClientError) as info:
                await use(client)
    assert says in info.value.message
    assert len(info.value.message) < 500


def closed_port() -> int:
    """A port of 127.0.0.1 that nothing listens on (bound, then let go)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


#: A path as long as a URL httpx takes can hold (64 KiB).
LONG_PATH = "/" + "p" * 60_000


async def test_a_redirect_to_a_closed_port_is_named_in_the_error_short_and_redacted() -> None:
    port = closed_port()
    hop = f"http://user:pw@127.0.0.1:{port}{LONG_PATH}?api_key=SECRET"

    def answer(request: Request) -> Answer:
        return Answer([], {"Location": hop}, status=302)

    async with RawServer(answer).serve() as url, client_of(url, retry=NO_RETRY) as client:
        with pytest.raises(A2AConnectionError) as info:
            await client.get_task("t-1")
    message = info.value.message
    assert message.startswith(f"cannot connect to http://127.0.0.1:{port}/ppp")
    assert url not in message and "SECRET" not in message and "pw@" not in message
    assert len(message) < MAX_SHOWN + 200


async def test_a_card_s_long_interface_url_is_quoted_short_when_it_cannot_be_reached() -> None:
    interface = f"http://127.0.0.1:{closed_port()}{LONG_PATH}"

    def answer(request: Request) -> Answer:
        return Answer([json.dumps(v1_card(interface)).encode()], JSON)

    async with RawServer(answer).serve() as url, A2AClient(url, retry=NO_RETRY) as client:
        with pytest.raises(A2AConnectionError) as info:
            await client.get_task("t-1")
    assert info.value.agent == interface
    assert info.value.message.startswith(f"cannot connect to {interface[:100]}")
    assert len(info.value.message) < MAX_SHOWN + 200
    assert len(str(info.value)) < 2 * MAX_SHOWN + 200


async def test_a_failed_task_s_long_status_text_is_quoted_short() -> None:
    async def fails(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status(TaskState.FAILED, "s" * BIG)

    fake = FakeAgent(skills={"fails": fails})
    async with fake.serve() as agent, AgentPool() as pool:
        with pytest.raises(TaskFailedError) as info:
            await pool.send(agent.url, text="hi")
    message = info.value.message
    assert message.startswith(f"task {info.value.task.id} failed: sss")
    assert len(message) < MAX_SHOWN + 100
    assert info.value.task.status.message is not None
    assert len(info.value.task.status.message.text) == BIG  # the task keeps it whole
