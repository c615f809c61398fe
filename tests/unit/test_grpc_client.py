"""``A2AClient`` over gRPC, against an A2A agent of the suite's own (``_grpc_server``: h2 on
127.0.0.1 with the client's codec on the server's side), on both backends: discovery of a
card's gRPC interface, every operation, errors, deadlines and cancellation."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from a2a_anyio import (
    A2AClient,
    A2ADiscoveryError,
    A2ATimeoutError,
    Artifact,
    ExtendedCardNotConfiguredError,
    Message,
    PushNotificationConfig,
    Role,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotFoundError,
    TaskPage,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
    TextPart,
)
from a2a_anyio._dialects import Op, OpArgs, Send, TaskRef

from ._grpc_server import Call, GrpcServer, Script, a2a_agent
from ._grpc_serving import serving_codec
from ._support import on_mock_clock, v03_card, v1_card

pytestmark = pytest.mark.anyio

WORKING = TaskStatus(TaskState.WORKING)
DONE = TaskStatus(TaskState.COMPLETED)
HOOK = PushNotificationConfig("https://hook.example/h", "t-1", "h-1", token="tok")


def interface(url: str, binding: str = "GRPC", version: str = "1.0") -> dict[str, str]:
    return {"url": url, "protocolBinding": binding, "protocolVersion": version}


def grpc_card(url: str, *more: dict[str, str], **extra: Any) -> dict[str, Any]:
    """A v1.0 card whose first interface is gRPC at ``url`` named bare (``host:port``)."""
    bare = url.removeprefix("http://")
    return v1_card(supportedInterfaces=[*more, interface(bare)], **extra)


async def answers(op: Op, args: OpArgs) -> Any:
    """An agent that knows task t-1."""
    if isinstance(args, TaskRef) and args.task_id != "t-1":
        raise TaskNotFoundError("no such task", task_id=args.task_id)
    if op is Op.SEND:
        assert isinstance(args, Send)
        text = args.message.parts[0]
        assert isinstance(text, TextPart)
        return Message(Role.AGENT, [TextPart(f"pong: {text.text}")], context_id="c-1")
    if op in (Op.STREAM, Op.SUBSCRIBE):
        return [
            Task("t-1", "c-1", WORKING),
            TaskArtifactUpdateEvent("t-1", "c-1", Artifact("a-1", [TextPart("one")])),
            TaskStatusUpdateEvent("t-1", "c-1", DONE, final=True),
        ]
    if op in (Op.GET, Op.CANCEL):
        return Task("t-1", "c-1", DONE)
    if op is Op.LIST:
        return TaskPage([Task("t-1", "c-1", DONE)], None, 1, 1)
    if op in (Op.PUSH_CREATE, Op.PUSH_GET):
        return HOOK
    if op is Op.PUSH_LIST:
        return [HOOK]
    if op is Op.PUSH_DELETE:
        return None
    assert op is Op.EXTENDED_CARD
    return grpc_card("http://127.0.0.1:1", name="Extended")


@asynccontextmanager
async def served(
    version: str = "1.0", script: Script = answers, **server: Any
) -> AsyncIterator[tuple[str, GrpcServer]]:
    agent = GrpcServer(a2a_agent(version, script), **server)
    async with agent.serve() as url:
        yield url, agent
        await agent.until_no_connection()  # every client closed its connection


async def test_every_operation_over_v1() -> None:
    async with served() as (url, agent):
        card = grpc_card(url, tenant="acme")
        card["supportedInterfaces"][0]["tenant"] = "acme"
        card["capabilities"]["extendedAgentCard"] = True
        async with A2AClient(url, card=card, auth="Bearer t0k") as client:
            reply = await client.send_message("ping")
            assert isinstance(reply, Message) and reply.text == "pong: ping"
            async with client.stream_message("go") as stream:
                events = [event async for event in stream]
            assert stream.task is not None and stream.task.status.state is TaskState.COMPLETED
            assert len(events) == 3
            assert (await client.get_task("t-1")).status.state is TaskState.COMPLETED
            assert (await client.cancel_task("t-1")).id == "t-1"
            page = await client.list_tasks(context_id="c-1")
            assert [t.id for t in page.tasks] == ["t-1"]
            hook = await client.create_push_config("t-1", HOOK.url, token="tok", config_id="h-1")
            assert hook.url == HOOK.url
            assert (await client.get_push_config("t-1", "h-1")).token == "tok"
            assert [c.id for c in await client.list_push_configs("t-1")] == ["h-1"]
            await client.delete_push_config("t-1", "h-1")
            assert (await client.get_extended_card()).name == "Extended"
            async with client.subscribe("t-1") as again:
                assert [type(e) for e in [e async for e in again]][-1] is TaskStatusUpdateEvent
    methods = [call.path.rpartition("/")[2] for call in agent.calls]
    assert methods == [
        "SendMessage", "SendStreamingMessage", "GetTask", "CancelTask", "ListTasks",
        "CreateTaskPushNotificationConfig", "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs", "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard", "SubscribeToTask",
    ]  # fmt: skip
    assert agent.connections == 1
    first = agent.calls[0].headers
    assert (first["a2a-version"], first["authorization"]) == ("1.0", "Bearer t0k")
    assert all(call.path.startswith("/lf.a2a.v1.A2AService/") for call in agent.calls)


async def test_errors_are_the_same_classes_as_over_json() -> None:
    async with served() as (url, _), A2AClient(url, card=grpc_card(url)) as client:
        with pytest.raises(TaskNotFoundError) as info:
            await client.get_task("t-404")
    error = info.value
    assert (error.task_id, error.reason, error.method) == ("t-404", "TASK_NOT_FOUND", "GetTask")
    assert error.agent == url


async def test_v03_over_grpc_names_its_resources() -> None:
    async with served("0.3") as (url, agent):
        card = v03_card(url.removeprefix("http://"), preferredTransport="GRPC")
        card["capabilities"] = {"streaming": False}
        async with A2AClient(url, card=card) as client:
            reply = await client.send_message("ping")
            task = await client.get_task("t-1")
            with pytest.raises(TaskNotFoundError):
                await client.get_task("t-2")
    assert isinstance(reply, Message) and task.status.state is TaskState.COMPLETED
    assert [call.path for call in agent.calls] == [
        "/a2a.v1.A2AService/SendMessage",
        "/a2a.v1.A2AService/GetTask",
        "/a2a.v1.A2AService/GetTask",
    ]


@pytest.mark.parametrize("offered", [True, False])
async def test_v03_over_grpc_has_an_extended_card_only_where_its_card_says_so(
    offered: bool,
) -> None:
    # The v0.3 service's GetAgentCard answers a card even from an agent that has no extended
    # one: the card the client has decides, as -32007 does over JSON-RPC.
    async def extended(op: Op, args: OpArgs) -> Any:
        if op is Op.EXTENDED_CARD:
            return v03_card("127.0.0.1:1", name="Extended", preferredTransport="GRPC")
        return await answers(op, args)

    async with served("0.3", extended) as (url, agent):
        card = v03_card(url.removeprefix("http://"), preferredTransport="GRPC")
        card["supportsAuthenticatedExtendedCard"] = offered
        async with A2AClient(url, card=card) as client:
            if offered:
                assert (await client.get_extended_card()).name == "Extended"
            else:
                with pytest.raises(ExtendedCardNotConfiguredError, match="announces no") as info:
                    await client.get_extended_card()
                assert info.value.agent == url
    methods = [call.path.rpartition("/")[2] for call in agent.calls]
    assert methods == (["GetAgentCard"] if offered else [])


@pytest.mark.parametrize("streams", [True, False])
async def test_a_blocking_send_over_v03_is_streamed_when_the_agent_streams(streams: bool) -> None:
    # a2a-sdk 0.3's SendMessage handler, its call cut, still waits for its agent: a stream's
    # ends at once. A send that does not wait stays unary.
    async with served("0.3") as (url, agent):
        card = v03_card(url.removeprefix("http://"), preferredTransport="GRPC")
        card["capabilities"] = {"streaming": streams}
        async with A2AClient(url, card=card) as client:
            task = await client.send_message("go")
            reply = await client.send_message("ping", blocking=False)
            assert isinstance(reply, Message) and reply.text == "pong: ping"
    methods = [call.path.rpartition("/")[2] for call in agent.calls]
    if streams:
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert task.artifacts[0].text == "one"
        assert methods == ["SendStreamingMessage", "SendMessage"]
    else:
        assert methods == ["SendMessage", "SendMessage"]


async def test_grpc_is_used_when_preferred_or_the_only_binding_offered() -> None:
    async with served() as (url, agent):
        both = grpc_card(url, interface("http://127.0.0.1:9/rpc", "JSONRPC"))
        async with A2AClient(url, card=both) as client:  # JSON-RPC first by default
            assert (await client._discovery.codec(None, client._credentials)).binding == "jsonrpc"
        async with A2AClient(url, card=both, bindings=("grpc",)) as client:
            assert isinstance(await client.send_message("ping"), Message)
        async with A2AClient(url, card=grpc_card(url)) as client:
            assert isinstance(await client.send_message("ping"), Message)
    assert len(agent.calls) == 2


async def test_a_v1_service_missing_moves_to_the_v03_one() -> None:
    async def v03_only(op: Op, args: OpArgs) -> Any:
        return await answers(op, args)

    async with served("0.3", v03_only) as (url, agent):
        bare = url.removeprefix("http://")
        card = v1_card(supportedInterfaces=[interface(bare), interface(bare, version="0.3")])
        async with A2AClient(url, card=card) as client:
            assert isinstance(await client.send_message("ping"), Message)
    assert [call.path.split("/")[1] for call in agent.calls] == [
        "lf.a2a.v1.A2AService",  # UNIMPLEMENTED: the method is not there
        "a2a.v1.A2AService",
    ]


@pytest.mark.parametrize("module", ["h2", "google.protobuf"])
async def test_without_the_extra_a_grpc_only_card_says_what_to_install(
    module: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, module, None)
    url = "http://127.0.0.1:9"
    async with A2AClient(url, card=grpc_card(url)) as client:
        with pytest.raises(A2ADiscoveryError) as info:
            await client.send_message("ping")
    assert info.value.message == (
        "agent 'Test Agent' offers no interface URL this client can call: '127.0.0.1:9' "
        f"is gRPC, which needs the grpc extra ({module} is missing: pip install '.[grpc]' "
        "in a2a-anyio's checkout)"
    )
    both = grpc_card(url, interface("http://127.0.0.1:9/rpc", "JSONRPC"))
    async with A2AClient(url, card=both, bindings=("grpc", "jsonrpc")) as client:
        assert (await client._discovery.codec(None, client._credentials)).binding == "jsonrpc"


@on_mock_clock()
async def test_a_silent_agent_ends_at_the_calls_deadline_and_hears_of_it() -> None:
    async def silent(op: Op, args: OpArgs) -> Any:
        await anyio.sleep(3600)

    async with (
        served(script=silent) as (url, agent),
        A2AClient(url, card=grpc_card(url), timeout=5) as client,
    ):
        with pytest.raises(A2ATimeoutError) as info:
            await client.send_message("ping")
        assert anyio.current_time() == pytest.approx(5)
        assert await agent.calls[0].until_reset() == 8  # RST_STREAM(CANCEL)
    assert info.value.timeout == "deadline"
    assert agent.calls[0].headers["grpc-timeout"] == "5S"


async def test_a_stream_left_by_the_caller_is_reset() -> None:
    async def slow(op: Op, args: OpArgs) -> Any:
        if op is Op.STREAM:
            await anyio.sleep(3600)
        return await answers(op, args)

    async with served(script=slow) as (url, agent), A2AClient(url, card=grpc_card(url)) as client:
        with anyio.move_on_after(0.3):
            async with client.stream_message("go") as stream:
                async for _ in stream:
                    pass
        assert await agent.calls[0].until_reset() == 8
        assert isinstance(await client.send_message("ping"), Message)  # the same connection
    assert agent.connections == 1


@on_mock_clock()
async def test_a_cut_stream_is_resumed_with_subscribe_to_task() -> None:
    codec = serving_codec("1.0", "http://127.0.0.1")
    chunk = TaskArtifactUpdateEvent("t-1", "c-1", Artifact("a-1", [TextPart("one")]))

    async def handler(call: Call) -> None:
        await call.head()
        if call.path.endswith("/SendStreamingMessage"):
            await call.send(codec.encode_event(Task("t-1", "c-1", WORKING)))
            await call.send(codec.encode_event(chunk))
            await call.reset_stream(2)  # cut: INTERNAL_ERROR
            return
        assert call.path.endswith("/SubscribeToTask")
        await call.send(codec.encode_event(Task("t-1", "c-1", WORKING, [chunk.artifact])))
        await call.send(codec.encode_event(TaskStatusUpdateEvent("t-1", "c-1", DONE, final=True)))
        await call.end()

    agent = GrpcServer(handler)
    async with (
        agent.serve() as url,
        A2AClient(url, card=grpc_card(url)) as client,
        client.stream_message("go") as stream,
    ):
        events = [event async for event in stream]
    assert [type(e).__name__ for e in events] == [
        "Task",
        "TaskArtifactUpdateEvent",
        "TaskStatusUpdateEvent",
    ]
    assert stream.task is not None and stream.task.status.state is TaskState.COMPLETED
    assert [call.path.rpartition("/")[2] for call in agent.calls] == [
        "SendStreamingMessage",
        "SubscribeToTask",
    ]
