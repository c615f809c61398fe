"""Servers nobody here wrote, as they are: fasta2a and python-a2a, on asyncio and trio.

The matrix (``test_matrix.py``) runs the same operations on them as on every peer; these tests
show the ways in which they differ and what the client does about each.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    A2AHTTPError,
    A2ATimeoutError,
    AgentPool,
    ExtendedCardNotConfiguredError,
    MethodNotFoundError,
    Task,
    TaskNotFoundError,
    TaskState,
    UnsupportedOperationError,
)

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


# -- fasta2a: every send answered at once ---------------------------------------------------


async def test_fasta2a_answers_a_blocking_send_at_once(fasta2a_server: str) -> None:
    async with A2AClient(fasta2a_server) as client:
        params = {
            "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]},
            "configuration": {"returnImmediately": False},
        }
        raw = await client.call("SendMessage", params)
        assert raw["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"  # blocking or not
        done = await client.send_message("hello")  # the same send, followed up
    assert isinstance(done, Task)
    assert done.status.state is TaskState.COMPLETED
    assert done.artifacts[0].text == "echo: hello"


async def test_fasta2a_tasks_are_polled_when_the_card_says_no_streaming(
    fasta2a_server: str,
) -> None:
    async with A2AClient(fasta2a_server) as probe:
        card = dict((await probe.get_card()).raw)
    card["capabilities"] = {"streaming": False}
    async with A2AClient(fasta2a_server, card=card) as client:
        done = await client.send_message("hello")
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED


async def test_fasta2a_a_follow_up_past_the_timeout_says_which_task(fasta2a_server: str) -> None:
    async with A2AClient(fasta2a_server) as client:
        with pytest.raises(A2ATimeoutError) as info:
            await client.send_message("slow", timeout=1)
        err = info.value
        assert err.timeout == "deadline"
        assert err.agent == fasta2a_server + "/"  # the endpoint the card names
        [task] = err.events
        assert isinstance(task, Task) and task.status.state is TaskState.WORKING

        async with anyio.create_task_group() as tg:

            async def cancel_soon() -> None:
                await anyio.sleep(0.3)
                await client.cancel_task(task.id)

            tg.start_soon(cancel_soon)
            canceled = await client.wait(task.id, timeout=10)
    assert canceled.status.state is TaskState.CANCELED


async def test_fasta2a_through_the_pool(fasta2a_server: str) -> None:
    async with AgentPool() as pool:
        assert await pool.send(fasta2a_server, text="hello", timeout=10) == {"text": "echo: hello"}


# -- python-a2a: a card that says v0.3 JSON-RPC, a server that routes tasks/send by path -------


@contextlib.asynccontextmanager
async def recorded(url: str | None, **options: Any) -> AsyncIterator[tuple[A2AClient, list[str]]]:
    """A client of ``url`` and the "METHOD path" of every request it makes."""
    seen: list[str] = []

    async def record(request: httpx.Request) -> None:
        seen.append(f"{request.method} {request.url.path}")

    async with (
        httpx.AsyncClient(event_hooks={"request": [record]}) as http,
        A2AClient(url, http_client=http, **options) as client,
    ):
        yield client, seen


async def test_python_a2a_is_known_by_its_card(pya2a_server: str) -> None:
    async with recorded(pya2a_server) as (client, seen):
        card = await client.get_card()
        assert (
            card.raw["protocolVersion"] == "0.3.0" and card.raw["preferredTransport"] == "JSONRPC"
        )
        sent = await client.send_message("hello")
        assert isinstance(sent, Task) and sent.artifacts[0].text == "echo: hello"
        got = await client.get_task(sent.id)
        assert got.status.state is TaskState.COMPLETED
        async with client.stream_message("stream it") as stream:
            events = [e async for e in stream]
        assert [e.status.state for e in events if isinstance(e, Task)] == [
            TaskState.SUBMITTED,
            TaskState.COMPLETED,
        ]
        assert stream.task is not None and stream.task.text == "part 1 part 2 part 3"
    assert seen == [
        "GET /.well-known/agent-card.json",
        "POST /a2a/tasks/send",
        "POST /a2a/tasks/get",
        "POST /a2a/tasks/stream",
    ]


@pytest.mark.parametrize("first", ["send", "stream"])
@pytest.mark.parametrize("how", ["card without its mark", "endpoint"])
async def test_python_a2a_is_known_by_its_first_answer(
    pya2a_server: str, first: str, how: str
) -> None:
    """Told nothing, the client posts JSON-RPC to the URL; python-a2a answers with a message
    of its own (HTTP 500), which says who it is: the client moves to its paths and stays."""
    options: dict[str, Any] = {}
    if how == "endpoint":
        options = {"endpoint": pya2a_server}
    else:
        async with A2AClient(pya2a_server) as probe:
            card = dict((await probe.get_card()).raw)
        card["capabilities"] = {"streaming": True}  # without google_a2a_compatible
        options = {"card": card}
    async with recorded(None if how == "endpoint" else pya2a_server, **options) as (client, seen):
        if first == "send":
            result = await client.send_message("hello")
        else:
            result = await client.stream_message("hello").result()
        assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
        await client.get_task(result.id)
    assert seen[0] == "POST /"  # the card's or the given URL: no JSON-RPC there
    assert seen[1:] == [
        f"POST /a2a/tasks/{'send' if first == 'send' else 'stream'}",
        "POST /a2a/tasks/get",
    ]


async def test_python_a2a_says_what_it_does_not_serve(pya2a_server: str) -> None:
    async with A2AClient(pya2a_server) as client:
        task = await client.send_message("slow", blocking=False)
        assert isinstance(task, Task)
        assert task.status.state is TaskState.WORKING  # "waiting", python-a2a's word
        assert task.status.wire_state == "waiting"
        refusals: dict[str, Callable[[], Awaitable[Any]]] = {
            "re-attaching": lambda: client.subscribe(task.id).result(),
            "listing tasks": lambda: client.list_tasks(),
            "push notification configs": lambda: client.get_push_config(task.id),
            "other methods": lambda: client.call("tasks/pushNotification/get", {"id": task.id}),
        }
        for what, call in refusals.items():
            with pytest.raises(UnsupportedOperationError, match=f"do not serve {what}"):
                await call()
        # Its card announces no extended card: nothing is asked.
        with pytest.raises(ExtendedCardNotConfiguredError, match="announces no extended card"):
            await client.get_extended_card()
        # A blocking send of a task that works on is polled (no re-attaching there).
        with pytest.raises(A2ATimeoutError) as info:
            await client.send_message("slow", timeout=1)
        assert isinstance(info.value.events[0], Task)
        assert info.value.agent == pya2a_server + "/a2a/tasks/get"  # its last look, a poll
        canceled = await client.cancel_task(task.id)
        assert canceled.status.state is TaskState.CANCELED


async def test_python_a2a_errors_name_the_path_they_came_from(pya2a_server: str) -> None:
    async with A2AClient(pya2a_server) as client:
        with pytest.raises(TaskNotFoundError) as info:  # JSON-RPC -32000 with HTTP 404
            await client.get_task("no-such-task")
    err = info.value
    assert (err.agent, err.method, err.task_id) == (
        pya2a_server + "/a2a/tasks/get",
        "tasks/get",
        "no-such-task",
    )


# -- a card whose HTTP+JSON URL already ends in /v1 -------------------------------------------


async def test_a_rest_url_ending_in_v1_reaches_the_sdk03_server(sdk03_server: str) -> None:
    async with A2AClient(sdk03_server) as probe:
        card = dict((await probe.get_card()).raw)
    [rest] = [i for i in card["additionalInterfaces"] if i["transport"] == "HTTP+JSON"]
    card["additionalInterfaces"] = [{**rest, "url": rest["url"] + "/v1"}]
    async with recorded(sdk03_server, card=card, bindings=("rest",)) as (client, seen):
        sent = await client.send_message("hello")
        assert isinstance(sent, Task) and sent.status.state is TaskState.COMPLETED
        got = await client.get_task(sent.id)
        assert got.artifacts[0].text == "echo: hello"
    assert seen == [
        "POST /a2a/rest/v1/v1/message:send",  # as the card says: 404
        "POST /a2a/rest/v1/message:send",
        f"GET /a2a/rest/v1/tasks/{sent.id}",
    ]


# -- listing tasks: asked of a v0.3 server that does not list them -----------------------------


@pytest.mark.parametrize("binding", ["jsonrpc", "rest"])
async def test_the_sdk03_server_does_not_list_tasks(sdk03_server: str, binding: str) -> None:
    """a2a-sdk 0.3.x has no ``tasks/list`` (-32601: UnsupportedOperationError). Its
    HTTP+JSON adapter routes GET /v1/tasks to a handler that raises NotImplementedError: an
    HTTP 500, which the client cannot tell from any other failure (A2AHTTPError)."""
    async with A2AClient(sdk03_server, bindings=(binding,)) as client:
        if binding == "jsonrpc":
            with pytest.raises(UnsupportedOperationError, match="does not serve") as info:
                await client.list_tasks()
            assert isinstance(info.value.__cause__, MethodNotFoundError)
        else:
            with pytest.raises(A2AHTTPError) as failed:
                await client.list_tasks(context_id="c-1")
            assert (failed.value.status_code, failed.value.method) == (500, "GET /v1/tasks")
        sent = await client.send_message("hello")  # still on the same wire
    assert isinstance(sent, Task) and sent.status.state is TaskState.COMPLETED
