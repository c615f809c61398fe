"""A conversation whose agent answers a turn in another context is refused with
``ContextMismatchError`` and takes nothing from that answer; before the conversation has a
context, the first answer gives it one."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from a2a_anyio import (
    ContextMismatchError,
    Interceptor,
    Message,
    Operation,
    StreamEvent,
    SyncA2AClient,
    Task,
    TaskState,
)

from ._support import MOCK_CLOCK_BACKENDS, RPC_URL, mock_clock_options
from .test_stream import StreamingAgent, connect

pytestmark = pytest.mark.anyio


def task_in(context: str, state: str = "COMPLETED", task_id: str = "t-1") -> dict[str, Any]:
    return {"id": task_id, "contextId": context, "status": {"state": f"TASK_STATE_{state}"}}


def agent_answering_in(context: str, state: str = "COMPLETED") -> StreamingAgent:
    """An agent that answers every send, and every stream, in ``context``."""
    agent = StreamingAgent()
    agent.results["SendMessage"] = {"task": task_in(context, state, "t-2")}
    agent.stream("SendStreamingMessage", [{"task": task_in(context, state, "t-2")}])
    return agent


async def test_a_send_answered_in_another_context_is_refused() -> None:
    agent = agent_answering_in("c-other", "INPUT_REQUIRED")
    async with connect(agent) as client:
        conv = client.conversation("c-1")
        with pytest.raises(ContextMismatchError) as info:
            await conv.send("hi")
    error = info.value
    assert (error.expected_context_id, error.received_context_id) == ("c-1", "c-other")
    assert str(error).startswith(
        "the agent answered in context c-other, not in the conversation's c-1"
    )
    [answer] = error.events
    assert isinstance(answer, Task) and answer.id == "t-2"
    assert (error.operation, error.agent) == ("send", RPC_URL)
    # nothing taken from it: the context, no open task, no turn
    assert (conv.context_id, conv.task, conv.history) == ("c-1", None, [])
    assert agent.calls[-1]["params"]["message"]["contextId"] == "c-1"


async def test_a_stream_answered_in_another_context_ends_with_the_error() -> None:
    agent = agent_answering_in("c-other", "INPUT_REQUIRED")
    async with connect(agent) as client:
        conv = client.conversation("c-1")
        seen: list[Any] = []
        with pytest.raises(ContextMismatchError) as info:
            async with conv.stream("hi") as stream:
                async for event in stream:
                    seen.append(event)
    assert seen == []
    error = info.value
    assert (error.expected_context_id, error.received_context_id) == ("c-1", "c-other")
    assert (error.operation, error.method) == ("stream", "SendStreamingMessage")
    assert [type(e) for e in error.events] == [Task]
    assert (conv.context_id, conv.task) == ("c-1", None)
    assert [turn.received for turn in conv.history] == [None]


class Audit(Interceptor):
    def __init__(self) -> None:
        self.seen: list[tuple[str, Any]] = []

    def event(self, op: Operation, event: StreamEvent) -> None:
        self.seen.append(("event", event.context_id))

    def after(self, op: Operation) -> None:
        self.seen.append(("after", type(op.error).__name__ if op.error else op.name))


async def test_a_stream_s_interceptors_see_what_they_saw_before() -> None:
    audit = Audit()
    agent = agent_answering_in("c-1")
    async with connect(agent, interceptors=[audit]) as client:
        conv = client.conversation("c-1")
        async with conv.stream("hi") as stream:
            await stream.result()
        agent.stream("SendStreamingMessage", [{"task": task_in("c-other")}])
        with pytest.raises(ContextMismatchError):
            async with conv.stream("hi") as stream:
                await stream.result()
    assert audit.seen == [
        ("event", "c-1"),
        ("after", "stream"),
        ("after", "ContextMismatchError"),
    ]


async def test_the_first_answer_gives_a_new_conversation_its_context() -> None:
    agent = agent_answering_in("c-9", "INPUT_REQUIRED")
    async with connect(agent) as client:
        conv = client.conversation()
        first = await conv.send("hi")
        assert conv.context_id == "c-9" and conv.task is not None and conv.task.id == "t-2"
        agent.results["SendMessage"] = {"task": task_in("c-elsewhere", "COMPLETED", "t-2")}
        with pytest.raises(ContextMismatchError):
            await conv.send("more")
        assert conv.context_id == "c-9" and conv.task == first  # still open, still here
        streamed = client.conversation()
        async with streamed.stream("hi") as stream:
            assert isinstance(await stream.result(), Task)
        assert streamed.context_id == "c-9"


async def test_an_answer_that_names_no_context_is_taken() -> None:
    agent = StreamingAgent()
    reply = {"messageId": "r", "role": "ROLE_AGENT", "parts": [{"text": "hello"}]}
    agent.results["SendMessage"] = {"message": reply}
    async with connect(agent) as client:
        conv = client.conversation("c-1")
        answer = await conv.send("hi")
    assert isinstance(answer, Message) and answer.text == "hello"
    assert conv.context_id == "c-1" and [t.received for t in conv.history] == [answer]


async def test_going_on_where_the_agent_went_is_a_new_conversation() -> None:
    agent = agent_answering_in("c-other")
    async with connect(agent) as client:
        with pytest.raises(ContextMismatchError) as info:
            await client.conversation("c-1").send("hi")
        moved = client.conversation(info.value.received_context_id)
        done = await moved.send("hi")
    assert isinstance(done, Task) and done.state is TaskState.COMPLETED
    assert moved.context_id == "c-other"


@pytest.mark.parametrize("backend", MOCK_CLOCK_BACKENDS)
def test_a_sync_conversation_refuses_it_too(backend: str) -> None:
    agent = agent_answering_in("c-other")
    http = httpx.AsyncClient(transport=agent.transport())
    with SyncA2AClient(
        endpoint=RPC_URL,
        protocol="1.0",
        http_client=http,
        backend=backend,
        backend_options=mock_clock_options(backend),
    ) as client:
        conv = client.conversation("c-1")
        with pytest.raises(ContextMismatchError):
            conv.send("hi")
        with pytest.raises(ContextMismatchError), conv.stream("hi") as stream:
            stream.result()
        assert conv.context_id == "c-1"
