"""Interceptors: each sees every operation a client sends (a call's look-ups marked as parts of
it), before it is sent (arguments and headers it may change, or an answer instead of sending)
and after (the result or the error, which it may replace), in order and in reverse order
after; on streams, per stream and per event. Against the testing kit's FakeAgent in every
dialect and binding, on the virtual clock where a skill takes time."""

from __future__ import annotations

import ast
import threading
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import httpx
import pytest
from anyio.from_thread import start_blocking_portal
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

import a2a_anyio
from a2a_anyio import (
    A2AClient,
    A2ATimeoutError,
    AgentPool,
    Interceptor,
    Message,
    Operation,
    Role,
    StreamEvent,
    SyncA2AClient,
    Task,
    TaskNotFoundError,
    TaskState,
    TextPart,
    UnsupportedOperationError,
)
from a2a_anyio.testing import FakeAgent

from ._support import on_mock_clock
from .test_request_headers import OPERATIONS, SLOW, slow_agent

pytestmark = pytest.mark.anyio


class Recorder(Interceptor):
    """Notes each hook it sees in ``log`` (shared), tagged with its name."""

    def __init__(self, tag: str, log: list[tuple[Any, ...]]) -> None:
        self.tag, self.log = tag, log

    def before(self, op: Operation) -> None:
        self.log.append((self.tag, "before", op.name, op.part_of))

    async def after(self, op: Operation) -> None:  # an async hook beside a sync one
        await anyio.lowlevel.checkpoint()
        outcome = type(op.error).__name__ if op.error else type(op.result).__name__
        self.log.append((self.tag, "after", op.name, outcome))

    def event(self, op: Operation, event: StreamEvent) -> None:
        self.log.append((self.tag, "event", op.name, type(event).__name__))

    def ended(self, op: Operation) -> None:
        self.log.append((self.tag, "ended", op.name, op.ending))


@asynccontextmanager
async def client_of(agent: FakeAgent, **options: Any) -> AsyncIterator[A2AClient]:
    async with (
        agent,
        httpx.AsyncClient(transport=agent.transport()) as http,
        A2AClient(agent.url, http_client=http, **options) as client,
    ):
        yield client


# What the interceptors see of each operation: the operation called, and the call a look-up
# is part of. A blocking send's follow-up re-attaches to the task: a part of the send that is
# no operation of its own; a send that streams underneath is a send all the same.
SEEN: dict[str, list[tuple[str, str | None]]] = {
    "get_card": [("card", None)],
    "get_extended_card": [("extended_card", None)],
    "send_message": [("send", None)],
    "send_message_on_event": [("send", None)],
    "stream_message": [("stream", None)],
    "subscribe": [("subscribe", None)],
    "wait": [("wait", None), ("get", "wait")],
    "get_task": [("get", None)],
    "list_tasks": [("list", None)],
    "cancel_task": [("cancel", None)],
    "create_push_config": [("push_create", None)],
    "get_push_config": [("push_get", None)],
    "list_push_configs": [("push_list", None)],
    "delete_push_config": [("push_delete", None)],
    "call": [("call", None)],
    "call_on_event": [("call", None)],
    "ping": [("ping", None)],
}


@on_mock_clock()
@pytest.mark.parametrize("operation", list(SEEN))
async def test_every_operation_runs_through_the_interceptors_in_order(operation: str) -> None:
    log: list[tuple[Any, ...]] = []
    agent = slow_agent(answers_at_once=True)
    interceptors = [Recorder("a", log), Recorder("b", log)]
    async with client_of(agent, interceptors=interceptors) as client:
        task = await client.send_message("work", metadata=SLOW, blocking=False)
        assert isinstance(task, Task)
        await client.create_push_config(task.id, "https://hooks.example.com/a2a", config_id="p1")
        log.clear()
        await OPERATIONS[operation](client, task)
    befores = [(name, part_of) for tag, hook, name, part_of in log if hook == "before"]
    assert befores[::2] == SEEN[operation]
    called = SEEN[operation][0][0]
    hooks = [(tag, hook) for tag, hook, name, _ in log if hook != "event" and name == called]
    assert hooks == [
        ("a", "before"),
        ("b", "before"),
        ("b", "after"),
        ("a", "after"),
        ("b", "ended"),  # once the outcome is what the caller gets
        ("a", "ended"),
    ]
    streams = operation in ("send_message_on_event", "stream_message", "subscribe")
    assert any(hook == "event" for _, hook, *_ in log) == streams


class Tenant(Interceptor):
    """A per-tenant header and a metadata entry on every operation."""

    def before(self, op: Operation) -> None:
        op.headers["X-Tenant"] = "acme"
        if "metadata" in op.arguments and op.name in ("send", "stream"):
            op.arguments["metadata"] = {**(op.arguments["metadata"] or {}), "tenant": "acme"}


@on_mock_clock()
async def test_headers_and_arguments_an_interceptor_sets_reach_the_agent() -> None:
    agent = slow_agent()
    async with client_of(agent, interceptors=[Tenant()]) as client:
        task = await client.send_message("hi", metadata=SLOW, headers={"X-User": "u1"})
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        agent.fault("stream", cut_after=1, times=1)  # cut,
        agent.fault("subscribe", error=-32004, times=1)  # and the re-attach refused: polled
        async with client.stream_message("hi", metadata=SLOW) as stream:
            assert (await stream.result()).status.state is TaskState.COMPLETED  # type: ignore[union-attr]
        await client.get_card(refresh=True)  # an operation too: it carries credentials
    sent = [(r.op, r.headers.get("x-tenant")) for r in agent.requests]
    assert [op for op, _ in sent].count("card") == 2  # the first send's discovery, and this
    assert {tenant for op, tenant in sent} == {"acme"}
    assert [op for op, _ in sent].count("get") >= 1  # the stream's polls carry it too
    sends = [r for r in agent.requests if r.op in ("send", "stream")]
    assert [r.params["metadata"] for r in sends] == [{**SLOW, "tenant": "acme"}] * 2
    assert sends[0].headers["x-user"] == "u1"  # the call's own headers stay


class FinishedTasks(Interceptor):
    """A cache of ``get`` for tasks that are final: they no longer change."""

    def __init__(self) -> None:
        self.tasks: dict[str, Task] = {}

    def before(self, op: Operation) -> None:
        if op.name == "get" and op.arguments["task_id"] in self.tasks:
            op.respond(self.tasks[op.arguments["task_id"]])

    def after(self, op: Operation) -> None:
        if isinstance(op.result, Task) and op.result.status.state.is_final:
            self.tasks[op.result.id] = op.result


async def test_an_interceptor_answers_instead_of_sending_and_outer_ones_see_it() -> None:
    log: list[tuple[Any, ...]] = []
    agent = FakeAgent()
    cache = FinishedTasks()
    async with client_of(agent, interceptors=[Recorder("a", log), cache, Recorder("c", log)]) as c:
        task = await c.send_message("hi")
        assert isinstance(task, Task)
        log.clear()
        agent.clear_requests()
        assert await c.get_task(task.id) is task
    assert agent.requests == []
    assert log == [
        ("a", "before", "get", None),
        ("a", "after", "get", "Task"),
        ("a", "ended", "get", "result"),
    ]


class Refuse(Interceptor):
    """A policy: no operation on agents outside a list."""

    def __init__(self, allowed: set[str]) -> None:
        self.allowed = allowed

    def before(self, op: Operation) -> None:
        if op.agent not in self.allowed:
            raise PermissionError(f"{op.agent} is not an allowed agent")


async def test_an_interceptor_refuses_and_nothing_is_sent() -> None:
    log: list[tuple[Any, ...]] = []
    agent = FakeAgent()
    async with client_of(agent, interceptors=[Recorder("a", log), Refuse(set())]) as client:
        with pytest.raises(PermissionError, match="is not an allowed agent"):
            await client.get_task("t1")
        stream = client.stream_message("hi")
        with pytest.raises(PermissionError, match="is not an allowed agent"):
            await stream.__aenter__()
    assert [r.op for r in agent.requests] == []
    assert log == [
        ("a", "before", "get", None),
        ("a", "after", "get", "PermissionError"),
        ("a", "ended", "get", "error"),
        ("a", "before", "stream", None),
        ("a", "after", "stream", "PermissionError"),
        ("a", "ended", "stream", "error"),
    ]


class Replace(Interceptor):
    """After: a missing task as None, and every other error as another."""

    def after(self, op: Operation) -> None:
        if isinstance(op.error, TaskNotFoundError):
            op.respond(None)
        elif op.error is not None:
            op.error = LookupError(f"{op.name} failed: {op.error.message}")  # type: ignore[attr-defined]


async def test_after_replaces_the_result_or_the_error() -> None:
    agent = FakeAgent()
    async with client_of(agent, interceptors=[Replace()]) as client:
        assert await client.get_task("gone") is None
        agent.fault("cancel", error=-32002, times=1)
        with pytest.raises(LookupError, match="cancel failed"):
            await client.cancel_task("t1")


@on_mock_clock()
async def test_a_stream_is_seen_once_with_each_event_and_its_end() -> None:
    log: list[tuple[Any, ...]] = []
    agent = slow_agent()
    async with client_of(agent, interceptors=[Recorder("a", log)]) as client:
        agent.fault("stream", cut_after=1, times=1)  # cut and re-attached: still one stream
        async with client.stream_message("hi", metadata=SLOW) as stream:
            events = [event async for event in stream]
    assert [r.op for r in agent.requests] == ["card", "stream", "subscribe"]
    assert log[:2] == [("a", "before", "stream", None), ("a", "before", "card", "stream")]
    assert log[2:4] == [("a", "after", "card", "AgentCard"), ("a", "ended", "card", "result")]
    assert [entry[3] for entry in log[4:-2]] == [type(e).__name__ for e in events]
    assert log[-2:] == [("a", "after", "stream", "Task"), ("a", "ended", "stream", "result")]


async def test_a_streams_error_is_replaced_and_a_stream_left_early_ends_with_no_after() -> None:
    log: list[tuple[Any, ...]] = []
    agent = FakeAgent()
    async with client_of(agent, interceptors=[Recorder("a", log), Replace()]) as client:
        agent.fault("stream", error=-32603, times=1)
        with pytest.raises(LookupError, match="stream failed"):
            async with client.stream_message("hi") as stream:
                async for _ in stream:
                    pass
        assert log[-2:] == [
            ("a", "after", "stream", "LookupError"),
            ("a", "ended", "stream", "error"),
        ]
        # An error cannot be answered in its place: a stream never ends silently unfinished.
        with pytest.raises(TaskNotFoundError):
            async with client.subscribe("gone") as stream:
                async for _ in stream:
                    pass
        log.clear()
        async with client.stream_message("hi") as stream:
            async for _ in stream:
                break
    assert [(hook, outcome) for _, hook, _, outcome in log if hook != "event"] == [
        ("before", None),
        ("ended", "closed"),
    ]


CACHED = Message(Role.AGENT, [TextPart("cached")])


class Answer(Interceptor):
    def before(self, op: Operation) -> None:
        op.respond(CACHED)


async def test_a_stream_cannot_be_answered_by_an_interceptor() -> None:
    async with client_of(FakeAgent(), interceptors=[Answer()]) as client:
        with pytest.raises(TypeError, match="cannot answer a stream: its result is its events"):
            async with client.stream_message("hi"):
                pass
        answered: object = await client.get_task("t")
        assert answered is CACHED


class BadHeader(Interceptor):
    def before(self, op: Operation) -> None:
        op.headers["Content-Type"] = "text/plain"


class BadArgument(Interceptor):
    def before(self, op: Operation) -> None:
        op.arguments["colour"] = "blue"


async def test_what_an_interceptor_cannot_do_is_refused() -> None:
    agent = FakeAgent()
    async with client_of(agent, interceptors=[BadHeader()]) as client:
        with pytest.raises(ValueError, match="an interceptor's headers cannot set 'Content-Type'"):
            await client.get_task("t")
    async with client_of(agent, interceptors=[BadArgument()]) as client:
        with pytest.raises(TypeError, match="colour"):
            await client.get_task("t")
    assert [r.op for r in agent.requests] == []
    with pytest.raises(TypeError, match="has a before, after, event or ended method; int has none"):
        A2AClient(agent.url, interceptors=[1])
    with pytest.raises(TypeError, match="interceptors must be a sequence, not Recorder"):
        A2AClient(agent.url, interceptors=Recorder("a", []))  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("dialect", "binding"),
    [("1.0", "jsonrpc"), ("1.0", "rest"), ("0.3", "jsonrpc"), ("0.3", "rest"), ("0.2", "jsonrpc"),
     ("legacy", "jsonrpc")],
)  # fmt: skip
async def test_every_dialect_and_binding(dialect: str, binding: str) -> None:
    log: list[tuple[Any, ...]] = []
    agent = FakeAgent(dialect=dialect, binding=binding)  # type: ignore[arg-type]
    interceptors = [Recorder("a", log), Tenant()]
    async with client_of(agent, interceptors=interceptors, bindings=(binding,)) as client:
        task = await client.send_message("hi", metadata={"k": 1})
        assert isinstance(task, Task)
        await client.get_task(task.id)
        async with client.stream_message("hi") as stream:
            await stream.result()
    ops = [r for r in agent.requests if r.op not in (None, "card")]  # not the card probes
    assert {r.headers.get("x-tenant") for r in ops} == {"acme"}
    assert ops[0].params["metadata"] == {"k": 1, "tenant": "acme"}
    assert [entry[:3] for entry in log if entry[1] == "before" and entry[2] != "card"][:2] == [
        ("a", "before", "send"),
        ("a", "before", "get"),
    ]


async def test_a_pool_gives_its_interceptors_to_every_agent() -> None:
    log: list[tuple[Any, ...]] = []
    agent = FakeAgent()
    async with (
        agent,
        httpx.AsyncClient(transport=agent.transport()) as http,
        AgentPool(http_client=http, interceptors=[Recorder("a", log), Tenant()]) as pool,
    ):
        await pool.send(agent.url, text="hi")
        [result] = await pool.fan_out([agent.url], "hi")
        assert result.ok
    # The card is read first (a call's discovery precedes it); a fan-out streams to an agent
    # that streams: a send all the same.
    assert [entry[2] for entry in log if entry[1] == "before"] == ["card", "send", "send"]
    sent = [r for r in agent.requests if r.op in ("send", "stream")]
    assert [r.op for r in sent] == ["send", "stream"]
    assert {r.headers.get("x-tenant") for r in sent} == {"acme"}


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_the_sync_facade_runs_interceptors(backend: str) -> None:
    log: list[tuple[Any, ...]] = []
    threads: set[str] = set()

    class Where(Interceptor):
        def before(self, op: Operation) -> None:
            threads.add(threading.current_thread().name)

    agent = FakeAgent()
    interceptors = [Recorder("a", log), Where()]
    with (
        start_blocking_portal(backend) as server,  # the agent on 127.0.0.1, in a thread
        server.wrap_async_context_manager(agent.serve()),
        SyncA2AClient(agent.url, backend=backend, interceptors=interceptors) as client,
    ):
        task = client.send_message("hi")
        assert isinstance(task, Task)
        with client.stream_message("hi") as stream:
            assert isinstance(stream.result(), Task)
    assert [entry[:3] for entry in log if entry[1] != "event" and entry[2] != "card"] == [
        ("a", "before", "send"),
        ("a", "after", "send"),
        ("a", "ended", "send"),
        ("a", "before", "stream"),
        ("a", "after", "stream"),
        ("a", "ended", "stream"),
    ]
    assert threading.current_thread().name not in threads  # they run in the client's loop


@on_mock_clock()
async def test_a_blocking_sends_and_a_waits_follow_up_carry_their_interceptors_headers() -> None:
    # The follow-up re-attaches to the task: no operation of its own, as a stream's re-attach.
    agent = slow_agent(answers_at_once=True)
    async with client_of(agent, interceptors=[Tenant()]) as client:
        done = await client.send_message("hi", metadata=SLOW)
        assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
        task = await client.send_message("hi", metadata=SLOW, blocking=False)
        assert isinstance(task, Task)
        assert (await client.wait(task.id)).status.state is TaskState.COMPLETED
    sent = [(r.op, r.headers.get("x-tenant")) for r in agent.requests if r.op != "card"]
    assert [op for op, _ in sent] == ["send", "subscribe", "send", "get", "subscribe"]
    assert {tenant for _, tenant in sent} == {"acme"}


class Rewrite(Interceptor):
    """Sets one argument of each send, and of every other operation but the card's, to
    ``value``."""

    def __init__(self, name: str, value: Any) -> None:
        self.name, self.value = name, value

    def before(self, op: Operation) -> None:
        if op.name == "card":
            return
        if self.value is None:
            del op.arguments[self.name]
        else:
            op.arguments[self.name] = self.value


async def test_arguments_an_interceptor_sets_are_checked_and_made_as_the_callers_are() -> None:
    agent = FakeAgent()
    async with client_of(agent, interceptors=[Rewrite("message", "instead")]) as client:
        sent = await client.send_message("hi")
        async with client.stream_message("hi") as stream:
            await stream.result()
    assert [r.params["message"]["parts"][0]["text"] for r in agent.requests if r.params] == [
        "instead",
        "instead",
    ]
    assert isinstance(sent, Task)
    refused = [
        (Rewrite("message", 42), ValueError, "message cannot be of type int: a message is a str"),
        (Rewrite("metadata", "x"), TypeError, "metadata must be a mapping"),
        (Rewrite("message", None), TypeError, "message"),
        (Rewrite("colour", "blue"), TypeError, "colour"),
    ]
    for interceptor, error, match in refused:
        agent.clear_requests()
        async with client_of(agent, interceptors=[interceptor]) as client:
            with pytest.raises(error, match=match):
                await client.send_message("hi")
            with pytest.raises(error, match=match):
                async with client.stream_message("hi"):
                    pass
            if interceptor.name == "colour":
                with pytest.raises(TypeError, match="colour"):
                    await client.get_extended_card()
        assert [r.op for r in agent.requests if r.op != "card"] == []


async def test_a_refused_call_sends_nothing_and_after_sees_what_ends_it() -> None:
    log: list[tuple[Any, ...]] = []
    agent = FakeAgent()
    agent.add_method("ext/echo", lambda params: params)
    async with client_of(agent, interceptors=[Refuse(set())]) as client:
        with pytest.raises(PermissionError, match="is not an allowed agent"):
            await client.call("ext/echo", {})
    assert agent.requests == []  # not even the card: the agent is not one to call
    rest = FakeAgent(binding="rest")
    async with client_of(rest, interceptors=[Recorder("a", log)], bindings=("rest",)) as client:
        with pytest.raises(UnsupportedOperationError, match="offers no JSON-RPC interface"):
            await client.call("ext/echo", {})
    assert [entry for entry in log if entry[2] != "card"] == [
        ("a", "before", "call", None),
        ("a", "after", "call", "UnsupportedOperationError"),
        ("a", "ended", "call", "error"),
    ]


class Slow(Interceptor):
    """A hook that takes 100 (virtual) seconds: the stream's ``before``, or its ``event``."""

    def __init__(self, hook: str) -> None:
        self.hook = hook

    async def before(self, op: Operation) -> None:
        if self.hook == "before":
            await anyio.sleep(100)

    async def event(self, op: Operation, event: StreamEvent) -> None:
        if self.hook == "event":
            await anyio.sleep(100)


@on_mock_clock()
@pytest.mark.parametrize("hook", ["before", "event"])
async def test_a_streams_total_timeout_bounds_its_hooks(hook: str) -> None:
    async with client_of(FakeAgent(), interceptors=[Slow(hook)]) as client:
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError, match="stream deadline timeout: nothing within 5"):
            async with client.stream_message("hi", total_timeout=5) as stream:
                await stream.result()
        assert anyio.current_time() - start == pytest.approx(5)


class FailStreams(Interceptor):
    """A stream that ended well fails all the same; a failed one, with another error."""

    def after(self, op: Operation) -> None:
        if op.streams:
            op.error = LookupError(f"refused: {type(op.error).__name__}")


async def test_a_streams_span_ends_with_what_its_after_made_of_it(
    spans: InMemorySpanExporter,
) -> None:
    agent = FakeAgent()
    async with client_of(agent, interceptors=[FailStreams()], tracing=True) as client:
        with pytest.raises(LookupError, match="refused: NoneType"):
            async with client.stream_message("hi") as stream:
                await stream.result()
        agent.fault("stream", error=-32603, times=1)
        with pytest.raises(LookupError, match="refused: A2AServerError"):
            async with client.stream_message("hi") as stream:
                await stream.result()
    # As a unary operation's span does: the outcome the caller gets.
    ended = [(s.name, (s.attributes or {}).get("error.type")) for s in spans.get_finished_spans()]
    assert ended == [("a2a stream", "LookupError")] * 2


def test_a_pool_refuses_what_is_no_interceptor_at_once() -> None:
    with pytest.raises(TypeError, match="has a before, after, event or ended method; int has none"):
        AgentPool(interceptors=[1])


class Cards(Interceptor):
    def __init__(self) -> None:
        self.cards: list[str | None] = []

    def before(self, op: Operation) -> None:
        self.cards.append(op.card.name if op.card is not None else None)


async def test_an_operation_shows_the_card_once_the_client_has_it() -> None:
    seen = Cards()
    async with client_of(FakeAgent(name="Shown"), interceptors=[seen]) as client:
        task = await client.send_message("hi", blocking=False)  # the first call fetches the card
        assert isinstance(task, Task)
        await client.get_task(task.id)
    assert seen.cards == [None, None, "Shown"]  # the send, the card it fetches, the get


class NotAnError(Interceptor):
    def after(self, op: Operation) -> None:
        op.error = "it failed"  # type: ignore[assignment]


async def test_an_error_that_is_no_exception_is_refused_clearly() -> None:
    async with client_of(FakeAgent(), interceptors=[NotAnError()]) as client:
        with pytest.raises(TypeError, match=r"op\.error must be an Exception or None, not str"):
            await client.get_task("t")


class SendPolicy(Interceptor):
    """A policy written for ``send_message``: a canned answer for one kind of message, a
    refusal for another; it notes what it saw of each send."""

    def __init__(self) -> None:
        self.sends: list[tuple[bool, str]] = []

    def before(self, op: Operation) -> None:
        if op.name != "send":
            return
        kind = (op.arguments["metadata"] or {}).get("kind")
        if kind == "canned":
            op.respond(CACHED)
        elif kind == "refused":
            raise PermissionError("no sends of that kind")

    def after(self, op: Operation) -> None:
        if op.name == "send" and not op.answered and op.error is None:
            self.sends.append((op.streamed, type(op.result).__name__))


@pytest.mark.parametrize("streaming", [True, False], ids=["streams", "does-not-stream"])
async def test_a_policy_on_sends_applies_whether_the_agent_streams_or_not(streaming: bool) -> None:
    # A send with on_event (or cancel_on_exit) streams underneath when the agent can: it is a
    # send to the interceptors all the same, answered or refused as any send.
    policy = SendPolicy()
    agent = FakeAgent(streaming=streaming)
    events: list[StreamEvent] = []
    async with client_of(agent, interceptors=[policy]) as client:
        for options in ({}, {"on_event": events.append}, {"cancel_on_exit": True}):
            agent.clear_requests()
            events.clear()
            answered = await client.send_message("hi", metadata={"kind": "canned"}, **options)
            assert answered is CACHED
            with pytest.raises(PermissionError, match="no sends of that kind"):
                await client.send_message("hi", metadata={"kind": "refused"}, **options)
            assert [r.op for r in agent.requests if r.op != "card"] == []
            assert events == []  # nothing was sent: no event
            done = await client.send_message("hi", **options)
            assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED
    # What the policy saw of the sends that went out: the task the call returned, whether it
    # was streamed underneath (with on_event or cancel_on_exit, when the agent streams).
    assert policy.sends == [(False, "Task"), (streaming, "Task"), (streaming, "Task")]
    assert [r.op for r in agent.requests if r.op != "card"] == ["stream" if streaming else "send"]


class PinnedCard(Interceptor):
    """The agent's card from a store of the service's own: nothing fetched."""

    def __init__(self, card: Any) -> None:
        self.card = card

    def before(self, op: Operation) -> None:
        if op.name == "card":
            op.respond(self.card)


class Respond(Interceptor):
    def __init__(self, name: str) -> None:
        self.name = name

    def before(self, op: Operation) -> None:
        if op.name == self.name:
            op.respond(1.0)


async def test_a_card_fetch_and_a_ping_run_through_the_interceptors() -> None:
    log: list[tuple[Any, ...]] = []
    agent = FakeAgent(name="Pinned")
    async with client_of(agent) as plain:
        card = await plain.get_card()
    agent.clear_requests()
    async with client_of(agent, interceptors=[Recorder("a", log), PinnedCard(card)]) as client:
        assert await client.get_card(refresh=True) is card
        assert isinstance(await client.send_message("hi"), Task)  # on the card answered
        assert await client.ping() >= 0
    assert [r.op for r in agent.requests] == ["send", "card"]  # the ping: a GET of the card URL
    assert [entry[1:] for entry in log if entry[1] != "after"] == [
        ("before", "card", None),
        ("ended", "card", "result"),
        ("before", "send", None),
        ("ended", "send", "result"),
        ("before", "ping", None),
        ("ended", "ping", "result"),
    ]
    async with client_of(agent, interceptors=[PinnedCard(card.to_dict())]) as client:
        with pytest.raises(
            TypeError, match="an interceptor answers a card with an AgentCard, not dict"
        ):
            await client.get_card()
    async with client_of(agent, interceptors=[Respond("ping")]) as client:
        with pytest.raises(TypeError, match="cannot answer a ping: its result is the time"):
            await client.ping()


def test_one_place_makes_the_interceptors_of_an_operation() -> None:
    # Every operation (the unary line, call(), a send and a wait, a stream, the card, a ping)
    # runs its interceptors through the one Interception that A2AClient._interception makes
    # with Interceptors.intercept: no other code of the package calls it, and nothing but
    # _intercept.py makes an Operation or an Interception (the test above: each operation).
    source = Path(a2a_anyio.__file__).parent
    calls: dict[str, list[str]] = {}
    for path in source.rglob("*.py"):
        module = path.relative_to(source).as_posix()
        for node in ast.walk(ast.parse(path.read_text())):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name in ("intercept", "Interception", "Operation", "Interceptors"):
                calls.setdefault(name, []).append(module)
    assert {name: sorted(modules) for name, modules in calls.items()} == {
        "intercept": ["_client.py"],
        "Interception": ["_intercept.py"],
        "Operation": ["_intercept.py"],
        "Interceptors": ["_client.py", "_pool.py"],  # one per client; a pool checks its own
    }
