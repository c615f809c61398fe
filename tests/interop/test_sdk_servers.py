"""Every operation against real a2a-sdk 1.x servers: strict v1.0, and v0.3 through its
compatibility layer, on asyncio and trio."""

from __future__ import annotations

import uuid

import anyio
import pytest

from a2a_anyio import (
    A2AClient,
    Message,
    MethodNotFoundError,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
    TaskStatusUpdateEvent,
    UnsupportedOperationError,
    VersionNotSupportedError,
    cancel_task,
    discover,
    get_task,
    send_text,
)

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

# (server fixture, protocol asked for, protocol expected on the wire, bindings)
TARGETS = [
    pytest.param(("strict_server", "auto", "1.0", ("jsonrpc",)), id="strict-v1.0"),
    pytest.param(("compat_server", "auto", "1.0", ("jsonrpc",)), id="compat-v1.0"),
    pytest.param(("compat_server", "0.3", "0.3", ("jsonrpc",)), id="compat-v0.3"),
    pytest.param(("strict_server", "auto", "1.0", ("rest",)), id="strict-v1.0-rest"),
    pytest.param(("compat_server", "0.3", "0.3", ("rest",)), id="compat-v0.3-rest"),
]
Target = tuple[str, str, str, tuple[str, ...]]


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest) -> Target:
    server, protocol, expected, bindings = request.param
    return request.getfixturevalue(server), protocol, expected, bindings


async def wait_for_state(client: A2AClient, task_id: str, state: TaskState) -> Task:
    """Poll until the task reaches ``state`` (bounded: 5 s)."""
    with anyio.fail_after(5):
        while True:
            task = await client.get_task(task_id)
            if task.status.state is state:
                return task
            await anyio.sleep(0.02)


async def test_card(target: Target) -> None:
    url, protocol, expected, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        card = await client.get_card()
        assert card.name == "SDK Test Agent"
        assert card.version == "1.2.3"
        assert card.capabilities.streaming
        assert card.capabilities.push_notifications
        assert card.capabilities.extended_agent_card
        assert any(s.id == "echo" for s in card.skills)
        assert card.provider is not None
        assert card.provider.organization
        assert card.security_schemes["bearer"].type == "http"
        assert card is await client.agent_card  # cached
        assert (await client.capabilities).streaming
        await client.send_message("hi")
        assert client._discovery.wires.codec is not None
        assert client._discovery.wires.codec.version == expected


async def test_send_message_task_with_artifacts(target: Target) -> None:
    url, protocol, _, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        result = await client.send_message(
            Message.user("hello", data={"n": 1, "tags": ["a"]}), metadata={"trace": "t1"}
        )
        assert isinstance(result, Task)
        assert result.status.state is TaskState.COMPLETED
        by_name = {a.name: a for a in result.artifacts}
        assert by_name["echo"].text == "echo: hello"
        assert by_name["data"].data == {"n": 1, "tags": ["a"]}
        assert result.raw is not None
        assert result.raw["id"] == result.id


async def test_send_message_reply_message(target: Target) -> None:
    url, protocol, _, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        result = await client.send_message("message please")
        assert isinstance(result, Message)
        assert result.text == "pong: message please"


async def test_send_dict_of_either_shape(target: Target) -> None:
    url, protocol, _, bindings = target
    v03 = {"kind": "message", "role": "user", "parts": [{"kind": "text", "text": "a"}]}
    v10 = {"role": "ROLE_USER", "parts": [{"text": "b"}], "messageId": str(uuid.uuid4())}
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        for shape, text in ((v03, "a"), (v10, "b")):
            result = await client.send_message(shape)
            assert isinstance(result, Task)
            assert result.artifacts[0].text == f"echo: {text}"


async def test_input_required_then_continue(target: Target) -> None:
    url, protocol, _, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        first = await client.send_message("input")
        assert isinstance(first, Task)
        assert first.status.state is TaskState.INPUT_REQUIRED
        assert first.status.message is not None
        assert first.status.message.text == "need more input"
        second = await client.send_message("more", task_id=first.id, context_id=first.context_id)
        assert isinstance(second, Task)
        assert second.id == first.id
        assert second.status.state is TaskState.COMPLETED
        assert second.artifacts[-1].text == "echo: more"


async def test_a_conversation_answers_the_question_then_starts_a_new_task(target: Target) -> None:
    url, protocol, _, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        conv = client.conversation()
        asked = await conv.send("input")
        assert isinstance(asked, Task) and asked.status.state is TaskState.INPUT_REQUIRED
        assert conv.context_id == asked.context_id and conv.task is not None
        resumed = client.conversation(state=conv.state())  # as a restarted process would
        done = await resumed.send("more")
        assert isinstance(done, Task)
        assert (done.id, done.status.state) == (asked.id, TaskState.COMPLETED)
        assert done.artifacts[-1].text == "echo: more"
        async with resumed.stream("hello") as stream:
            again = await stream.result()
    assert isinstance(again, Task) and again.status.state is TaskState.COMPLETED
    assert again.id != asked.id and again.context_id == asked.context_id
    assert [turn.sent.text for turn in resumed.history] == ["input", "more", "hello"]


async def test_failed_task(target: Target) -> None:
    url, protocol, _, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        result = await client.send_message("fail")
        assert isinstance(result, Task)
        assert result.status.state is TaskState.FAILED
        assert result.status.message is not None
        assert result.status.message.text == "it failed"


async def test_stream_message(target: Target) -> None:
    url, protocol, _, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        async with client.stream_message("stream it") as stream:
            events = [event async for event in stream]
        assert isinstance(events[0], Task)
        chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
        assert [c.artifact.text for c in chunks] == ["part 1", " part 2", " part 3"]
        assert [c.append for c in chunks] == [False, True, True]
        assert chunks[-1].last_chunk
        last = events[-1]
        assert isinstance(last, TaskStatusUpdateEvent)
        assert last.final
        assert last.status.state is TaskState.COMPLETED
        assert stream.task is not None
        assert stream.task.status.state is TaskState.COMPLETED
        assert stream.task.artifacts[0].text == "part 1 part 2 part 3"
        # the folded task matches what the server stored
        stored = await client.get_task(stream.task.id)
        assert stored.artifacts[0].text == "part 1 part 2 part 3"


async def test_stream_as_plain_async_for_and_result(target: Target) -> None:
    url, protocol, _, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        states = [
            e.status.state
            async for e in client.stream_message("stream again")
            if isinstance(e, TaskStatusUpdateEvent)
        ]
        assert states[-1] is TaskState.COMPLETED
        async with client.stream_message("message in a stream") as stream:
            reply = await stream.result()
        assert isinstance(reply, Message)
        assert reply.text == "pong: message in a stream"


async def test_stream_input_required_ends(target: Target) -> None:
    url, protocol, _, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        async with client.stream_message("input") as stream:
            result = await stream.result()
        assert isinstance(result, Task)
        assert result.status.state is TaskState.INPUT_REQUIRED


async def test_get_list_cancel_subscribe(target: Target) -> None:
    url, protocol, expected, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        started = await client.send_message("slow", blocking=False)
        assert isinstance(started, Task)
        task = await wait_for_state(client, started.id, TaskState.WORKING)
        assert task.context_id == started.context_id

        if expected == "1.0":
            page = await client.list_tasks(context_id=started.context_id, limit=10)
            assert [t.id for t in page.tasks] == [started.id]
            assert page.next_cursor is None
        elif bindings == ("jsonrpc",):  # tasks/list answered -32601
            with pytest.raises(UnsupportedOperationError, match="does not serve tasks/list"):
                await client.list_tasks()
        else:  # its v1.0 route takes GET /v1/tasks, "v1" as the tenant, and refuses v0.3
            with pytest.raises(VersionNotSupportedError):
                await client.list_tasks()

        async with client.subscribe(started.id) as stream:
            first = await stream.__anext__()
            assert isinstance(first, (Task, TaskStatusUpdateEvent))
            canceled = await client.cancel_task(started.id)
            assert canceled.id == started.id
            final = await stream.result()
        assert isinstance(final, Task)
        assert final.status.state is TaskState.CANCELED
        done = await client.get_task(started.id)
        assert done.status.state is TaskState.CANCELED
        with pytest.raises(TaskNotCancelableError):
            await client.cancel_task(started.id)


async def test_errors_are_typed(target: Target) -> None:
    url, protocol, _, bindings = target
    missing = str(uuid.uuid4())
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        with pytest.raises(TaskNotFoundError) as info:
            await client.get_task(missing)
        assert info.value.code == -32001
        if "jsonrpc" in bindings:
            with pytest.raises(MethodNotFoundError):
                await client.call("no/such/method", {})
        else:  # call() is JSON-RPC; a client held to REST has no such interface
            with pytest.raises(UnsupportedOperationError, match="JSON-RPC"):
                await client.call("no/such/method", {})


async def test_push_configs(target: Target) -> None:
    url, protocol, _, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        task = await client.send_message("slow", blocking=False)
        assert isinstance(task, Task)
        created = await client.create_push_config(
            task.id, "http://127.0.0.1:9/hook", token="tok-1", config_id="cfg-1"
        )
        assert created.url == "http://127.0.0.1:9/hook"
        assert created.id == "cfg-1"
        got = await client.get_push_config(task.id, "cfg-1")
        assert got.token == "tok-1"
        listed = await client.list_push_configs(task.id)
        assert [c.id for c in listed] == ["cfg-1"]
        if bindings == ("rest",) and protocol == "0.3":
            # the SDK's v0.3 REST layer has no delete route: v1.0 answers for it
            with pytest.raises(VersionNotSupportedError):
                await client.delete_push_config(task.id, "cfg-1")
        else:
            await client.delete_push_config(task.id, "cfg-1")
            assert await client.list_push_configs(task.id) == []
        await client.cancel_task(task.id)


async def test_extended_card(target: Target) -> None:
    url, protocol, _, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        card = await client.get_extended_card()
        assert any(s.id == "extended-skill" for s in card.skills)


async def test_endpoint_without_discovery(target: Target) -> None:
    url, protocol, _, bindings = target
    if bindings != ("jsonrpc",):
        pytest.skip("endpoint= names a JSON-RPC endpoint")
    async with A2AClient(endpoint=url + "/a2a/jsonrpc", protocol=protocol) as client:
        result = await client.send_message("hello endpoint")
        assert isinstance(result, Task)
        assert result.artifacts[0].text == "echo: hello endpoint"
        assert client._discovery.fetcher.requests == 0


async def test_one_shot_helpers(strict_server: str) -> None:
    card = await discover(strict_server)
    assert card.name == "SDK Test Agent"
    task = await send_text(strict_server, "tool time", tool="search", arguments={"q": "x"})
    assert isinstance(task, Task)
    assert task.artifacts[1].data == {"tool": "search", "arguments": {"q": "x"}}
    again = await get_task(strict_server, task.id)
    assert again.id == task.id


async def test_one_shot_cancel(strict_server: str) -> None:
    async with A2AClient(strict_server) as client:
        task = await client.send_message("slow", blocking=False)
        assert isinstance(task, Task)
        await wait_for_state(client, task.id, TaskState.WORKING)
    canceled = await cancel_task(strict_server, task.id)
    assert canceled.status.state is TaskState.CANCELED


async def test_ping(strict_server: str) -> None:
    async with A2AClient(strict_server) as client:
        ms = await client.ping()
        assert 0 < ms < 5000


async def test_leaving_a_stream_early_releases_it(target: Target) -> None:
    url, protocol, _, bindings = target
    async with A2AClient(url, protocol=protocol, bindings=bindings) as client:
        started = await client.send_message("slow", blocking=False)
        assert isinstance(started, Task)
        for _ in range(3):
            async with client.subscribe(started.id) as stream:
                async for _event in stream:
                    break
            assert stream._conn is None
        # the client is still usable, and nothing was left half-read
        canceled = await client.cancel_task(started.id)
        assert canceled.id == started.id


@pytest.mark.parametrize("server", ["strict_server", "js_server"])
async def test_a_streamed_follow_up_goes_on_past_the_tasks_earlier_state(
    server: str, request: pytest.FixtureRequest
) -> None:
    # The JS SDK opens the follow-up's stream with the task as it was: input-required.
    url = request.getfixturevalue(server)
    async with A2AClient(url) as client:
        first = await client.send_message("input")
        assert isinstance(first, Task) and first.status.state is TaskState.INPUT_REQUIRED
        follow_up = client.stream_message("more", task_id=first.id, context_id=first.context_id)
        async with follow_up as stream:
            result = await stream.result()
    assert isinstance(result, Task) and result.status.state is TaskState.COMPLETED
    assert result.artifacts[-1].text == "echo: more"
