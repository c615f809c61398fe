"""The interop matrix: every peer x binding x operation of ``matrix.py``, on asyncio and trio.

Each cell points ``A2AClient(url, bindings=(binding,))`` at one real server and runs one
operation with the same calls for every peer (the client is told the version only for the
peers ``matrix.py`` marks so). Every outcome is recorded into ``tests/interop/.results.json``;
``python tests/interop/matrix.py --render`` turns it into ``docs/interop.md``.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator

import anyio
import pytest

from a2a_anyio import (
    A2AClient,
    A2ADiscoveryError,
    A2AServerError,
    Message,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
    TaskStatusUpdateEvent,
)

from . import matrix
from .matrix import Cell, Peer

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

CELL_DEADLINE = 20.0  # seconds one cell may take once its server is up
HOOK_URL = "http://127.0.0.1:9/hook"  # stored by the servers, never called
SUBSCRIBE_SETTLE = 0.3


def _param(cell: Cell) -> object:
    marks = []
    if cell.peer.provisioned:  # the first cell may build the peer's environment
        marks.append(pytest.mark.timeout(matrix.PROVISION_TIMEOUT + 60))
    return pytest.param(cell, id=cell.id, marks=marks)


@pytest.fixture(scope="session")
def matrix_results() -> Iterator[matrix.Results]:
    """Collects every cell's outcome; written to ``.results.json`` when the session ends."""
    results = matrix.Results()
    yield results
    results.save()


@pytest.fixture(params=[_param(cell) for cell in matrix.cells()])
def cell(
    request: pytest.FixtureRequest, anyio_backend: str, matrix_results: matrix.Results
) -> tuple[Cell, str]:
    """The cell and the URL its client is given (a server that does not start fails the cell)."""
    cell: Cell = request.param
    try:
        url = request.getfixturevalue(cell.peer.fixture)
    except BaseException as exc:
        matrix_results.record(cell, anyio_backend, "fail", f"server: {exc}")
        raise
    return cell, str(url) + cell.peer.path


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def client_for(peer: Peer, binding: str, url: str) -> A2AClient:
    return A2AClient(
        url, bindings=(binding,), protocol=peer.protocol, cookies=peer.cookies, timeout=15.0
    )


async def wait_for_state(client: A2AClient, task_id: str, *states: TaskState) -> Task:
    """Poll until the task is in one of ``states`` (bounded: 5 s)."""
    with anyio.fail_after(5):
        while True:
            task = await client.get_task(task_id)
            if task.status.state in states:
                return task
            await anyio.sleep(0.02)


@contextlib.asynccontextmanager
async def slow_task(client: A2AClient, peer: Peer) -> AsyncIterator[Task]:
    """A task that stays working (up to 30 s) until canceled; canceled on the way out."""
    async with contextlib.AsyncExitStack() as stack:
        started: object
        if peer.returns_early:
            # Not followed up: the answer as the agent gives it (dialect L's agents answer a
            # slow task as soon as it works; tasks/send has no blocking flag).
            started = await client.send_message("slow", blocking=False)
        else:  # its send would wait for the end: the task's stream, open meanwhile, tells it
            stream = await stack.enter_async_context(client.stream_message("slow"))
            started = await anext(aiter(stream))
        assert isinstance(started, Task)
        try:
            yield await wait_for_state(client, started.id, TaskState.WORKING)
        finally:
            with anyio.move_on_after(5, shield=True), contextlib.suppress(Exception):
                await client.cancel_task(started.id)


def reply_of(peer: Peer, task: Task) -> str:
    """The text a task carries as the agent's reply, where ``peer`` puts it."""
    if peer.reply == "artifact":
        return task.artifacts[-1].text
    assert task.status.message is not None
    return task.status.message.text


# --------------------------------------------------------------------------------------------
# Operations: the same calls for every peer
# --------------------------------------------------------------------------------------------


async def op_send(client: A2AClient, peer: Peer, binding: str) -> None:
    hello = Message.user("hello", data={"n": 1, "tags": ["a"]})
    if peer.refuses_data:
        with pytest.raises(A2AServerError, match="Data parts are not supported"):
            await client.send_message(hello)
        hello = Message.user("hello")
    result = await client.send_message(hello)
    assert isinstance(result, Task), result
    assert result.status.state is TaskState.COMPLETED
    if peer.artifact_names:
        by_name = {a.name: a for a in result.artifacts}
    else:  # in the order the agent made them
        by_name = dict(zip(("echo", "data"), result.artifacts, strict=False))
    assert by_name["echo"].text == "echo: hello"
    if peer.data_parts:
        assert by_name["data"].data == {"n": 1, "tags": ["a"]}

    reply = await client.send_message("message ping")
    if peer.reply == "message":
        assert isinstance(reply, Message), reply
        assert reply.text == "pong: message ping"
    else:  # a task carrying the reply: its status message (dialect L) or its artifact
        assert isinstance(reply, Task), reply
        assert reply_of(peer, reply) == "pong: message ping"

    first = await client.send_message("input")
    assert isinstance(first, Task)
    assert first.status.state is TaskState.INPUT_REQUIRED
    if peer.prompt_in_artifact:
        assert first.artifacts[-1].data["value"] == "need more input"
    else:
        assert first.status.message is not None
        assert first.status.message.text == "need more input"
    second = await client.send_message("more", task_id=first.id, context_id=first.context_id)
    assert isinstance(second, Task)
    if peer.continues_tasks:
        assert second.id == first.id
    else:  # a new task in the same context
        assert second.context_id == first.context_id
    assert second.status.state is TaskState.COMPLETED
    assert second.artifacts[-1].text == "echo: more"

    if not peer.failed_tasks:  # the agent's error comes back as the call's
        with pytest.raises(A2AServerError, match="it failed"):
            await client.send_message("fail")
        return
    failed = await client.send_message("fail")
    assert isinstance(failed, Task)
    assert failed.status.state is TaskState.FAILED
    assert failed.status.message is not None
    assert failed.status.message.text == peer.failure_text


async def op_stream(client: A2AClient, peer: Peer, binding: str) -> None:
    async with client.stream_message("stream it") as stream:
        events = [event async for event in stream]
    statuses = [e for e in events if isinstance(e, TaskStatusUpdateEvent)]
    if peer.stream == "chunks":
        chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        assert [c.artifact.text for c in chunks] == ["part 1", " part 2", " part 3"]
        assert statuses[-1].status.state is TaskState.COMPLETED
    elif peer.stream == "statuses":  # the agent's messages while working, then the answer
        said = [s.status.message.text for s in statuses if s.status.message is not None]
        assert said[:3] == ["part 1", " part 2", " part 3"]
        assert statuses[-1].status.state is TaskState.COMPLETED
    else:  # whole tasks, the last one done
        assert all(isinstance(e, Task) for e in events) and len(events) >= 2
    assert stream.task is not None
    assert stream.task.status.state is TaskState.COMPLETED
    assert stream.task.artifacts[0].text == "part 1 part 2 part 3"


async def op_get(client: A2AClient, peer: Peer, binding: str) -> None:
    sent = await client.send_message("hello get")
    assert isinstance(sent, Task)
    got = await client.get_task(sent.id)
    assert got.id == sent.id
    assert got.status.state is TaskState.COMPLETED
    if peer.artifacts_on_get:
        assert got.artifacts[0].text == "echo: hello get"
    else:  # the reply is in its history
        assert got.history[-1].text == "echo: hello get"
    with pytest.raises(TaskNotFoundError):
        await client.get_task(str(uuid.uuid4()))


async def op_list(client: A2AClient, peer: Peer, binding: str) -> None:
    sent = await client.send_message("hello list")
    assert isinstance(sent, Task)
    page = await client.list_tasks(context_id=sent.context_id, limit=10)
    assert [t.id for t in page.tasks] == [sent.id]


async def op_cancel(client: A2AClient, peer: Peer, binding: str) -> None:
    async with slow_task(client, peer) as task:
        canceled = await client.cancel_task(task.id)
        assert canceled.id == task.id
        done = await wait_for_state(client, task.id, TaskState.CANCELED)
        assert done.status.state is TaskState.CANCELED
        # Most servers refuse a second cancel; the JS SDK answers with the canceled task.
        try:
            again = await client.cancel_task(task.id)
        except TaskNotCancelableError:
            pass
        else:
            assert again.status.state is TaskState.CANCELED


async def op_subscribe(client: A2AClient, peer: Peer, binding: str) -> None:
    async with slow_task(client, peer) as task, anyio.create_task_group() as group:
        # The cancel comes a moment after the stream is asked for, since some servers (0.3.x
        # SDK) send nothing on re-attach until the next event: over gRPC not even the
        # answer's headers, so the stream opens only with that event.
        group.start_soon(_later, SUBSCRIBE_SETTLE, client.cancel_task, task.id)
        async with client.subscribe(task.id) as stream:
            final = await stream.result()
        assert isinstance(final, Task)
        assert final.id == task.id
        assert final.status.state is TaskState.CANCELED


async def _later(delay: float, then: Callable[[str], Awaitable[object]], arg: str) -> None:
    await anyio.sleep(delay)
    await then(arg)


async def op_push(client: A2AClient, peer: Peer, binding: str) -> None:
    served = peer.push.get(binding, frozenset())
    config_id = "cfg-1" if peer.push_config_ids else None
    async with slow_task(client, peer) as task:
        created = await client.create_push_config(
            task.id, HOOK_URL, token="tok-1", config_id=config_id
        )
        assert created.url == HOOK_URL
        if config_id is not None:
            assert created.id == config_id
        got = await client.get_push_config(task.id, config_id)
        assert got.url == HOOK_URL
        assert got.token == "tok-1"
        if "list" in served:
            listed = await client.list_push_configs(task.id)
            assert [c.id for c in listed] == [config_id]
        if "delete" in served:
            assert config_id is not None
            await client.delete_push_config(task.id, config_id)
            if "list" in served:
                assert await client.list_push_configs(task.id) == []


async def op_extended_card(client: A2AClient, peer: Peer, binding: str) -> None:
    card = await client.get_extended_card()
    assert any(s.id == "extended-skill" for s in card.skills)


OPERATIONS: dict[str, Callable[[A2AClient, Peer, str], Awaitable[None]]] = {
    "send": op_send,
    "stream": op_stream,
    "get": op_get,
    "list": op_list,
    "cancel": op_cancel,
    "subscribe": op_subscribe,
    "push": op_push,
    "extended_card": op_extended_card,
}


def test_every_operation_has_a_runner() -> None:
    assert set(OPERATIONS) == set(matrix.OPERATIONS)


# --------------------------------------------------------------------------------------------
# The matrix
# --------------------------------------------------------------------------------------------


async def test_cell(
    cell: tuple[Cell, str], anyio_backend: str, matrix_results: matrix.Results
) -> None:
    spec, url = cell
    try:
        with anyio.fail_after(CELL_DEADLINE):
            async with client_for(spec.peer, spec.binding, url) as client:
                await OPERATIONS[spec.op](client, spec.peer, spec.binding)
    except BaseException as exc:
        detail = f"{type(exc).__name__}: {exc}"
        matrix_results.record(spec, anyio_backend, "fail", detail)
        raise
    matrix_results.record(spec, anyio_backend, "pass")


async def test_legacy_cookie_is_required(legacy_cookie_server: str) -> None:
    """Without its ``user=`` cookie the legacy agent answers 401: an auth error, not a retry."""
    async with A2AClient(legacy_cookie_server, bindings=("jsonrpc",)) as client:
        # the card is behind the cookie too: discovery fails, saying it was a 401
        with pytest.raises(A2ADiscoveryError) as info:
            await client.send_message("hello")
    assert info.value.status_code == 401
