"""The sync facade over httpx.MockTransport: plain tests, no event loop in the test's thread.

Each test runs on both portal backends. The fake agent's handler runs in the portal's event
loop (the client sends through it there), so it may use anyio freely.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from typing import Any

import anyio
import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    A2AConnectionError,
    A2ADiscoveryError,
    A2AHTTPError,
    A2ATimeoutError,
    AgentCard,
    AgentResult,
    Message,
    MessageStream,
    MethodNotFoundError,
    PushNotificationConfig,
    StreamEvent,
    SyncA2AClient,
    SyncAgentPool,
    SyncMessageStream,
    Task,
    TaskArtifactUpdateEvent,
    TaskFailedError,
    TaskNotFoundError,
    TaskState,
    TaskStatusUpdateEvent,
)

from ._support import (
    BASE,
    MOCK_CLOCK_BACKENDS,
    RPC_URL,
    FakeAgent,
    ScriptedBody,
    mock_clock_options,
    rpc_result,
    sse_response,
    sse_text,
    v1_card,
)

BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])
OTHER = "https://other.example.com"


def v1_task(task_id: str = "t-1", state: str = "COMPLETED", text: str | None = None) -> Any:
    task: dict[str, Any] = {
        "id": task_id,
        "contextId": "c-1",
        "status": {"state": f"TASK_STATE_{state}"},
    }
    if text is not None:
        task["artifacts"] = [{"artifactId": "a", "parts": [{"text": text}]}]
    return task


def v1_status(state: str) -> Any:
    return {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": {"state": state}}}


def v1_chunk(text: str, *, append: bool = False) -> Any:
    artifact = {"artifactId": "a", "parts": [{"text": text}]}
    return {
        "artifactUpdate": {
            "taskId": "t-1",
            "contextId": "c-1",
            "artifact": artifact,
            "append": append,
        }
    }


HAPPY = [
    {"task": v1_task(state="SUBMITTED")},
    v1_status("TASK_STATE_WORKING"),
    v1_chunk("one"),
    v1_chunk(" two", append=True),
    v1_status("TASK_STATE_COMPLETED"),
]
HAPPY_KINDS = [
    "Task",
    "TaskStatusUpdateEvent",
    "TaskArtifactUpdateEvent",
    "TaskArtifactUpdateEvent",
    "TaskStatusUpdateEvent",
]
HOOK = {"taskId": "t-1", "id": "h-1", "url": "https://hook.example/cb", "token": "tok"}


class Agent(FakeAgent):
    """A FakeAgent that also streams scripted bodies and can make two calls meet.

    ``meet`` names a method whose first calls each wait (up to 5 s) until two of them are in
    the agent at the same time: proof that they run concurrently.
    """

    def __init__(self, card: dict[str, Any] | None = None) -> None:
        super().__init__(card if card is not None else v1_card())
        self.bodies: list[ScriptedBody] = []
        self.meet: str | None = None
        self.met = 0
        self._all_in: anyio.Event | None = None
        self.results["SendMessage"] = {"task": v1_task(text="done")}
        self.results["GetTask"] = lambda params: v1_task(params["id"])

    def stream(self, method: str, results: list[Any], **body_options: Any) -> None:
        def respond(req_id: Any, params: Any) -> httpx.Response:
            text = sse_text(rpc_result(req_id, r) for r in results)
            body = ScriptedBody([e.encode() + b"\n\n" for e in text.split("\n\n")[:-1]])
            for name, value in body_options.items():
                setattr(body, name, value)
            self.bodies.append(body)
            return sse_response(body)

        self.responders[method] = respond

    async def handle(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and json.loads(request.content)["method"] == self.meet:
            if self._all_in is None:
                self._all_in = anyio.Event()
            self.met += 1
            if self.met >= 2:
                self._all_in.set()
            with anyio.fail_after(5):
                await self._all_in.wait()
        return await super().handle(request)

    @property
    def body(self) -> ScriptedBody:
        [body] = self.bodies
        return body


def connect(
    agent: FakeAgent, backend: str, url: str | None = BASE, **options: Any
) -> SyncA2AClient:
    http = httpx.AsyncClient(transport=agent.transport())
    return SyncA2AClient(url, backend=backend, http_client=http, **options)


def portal_thread(client: SyncA2AClient) -> threading.Thread:
    return client._calls.portal.call(threading.current_thread)


def kinds(events: list[Any]) -> list[str]:
    return [type(e).__name__ for e in events]


def in_threads(*jobs: Callable[[], Any]) -> list[Any]:
    """Run each job in a thread of its own, all at once; their results (or exceptions)."""
    results: list[Any] = [None] * len(jobs)
    start = threading.Barrier(len(jobs))

    def run(i: int) -> None:
        start.wait()
        try:
            results[i] = jobs[i]()
        except BaseException as exc:
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(10)
        assert not thread.is_alive()
    return results


# -- discovery and operations ---------------------------------------------------------------------


@BACKENDS
def test_card_and_properties(backend: str) -> None:
    agent = Agent()
    with connect(agent, backend) as client:
        card = client.get_card()
        assert isinstance(card, AgentCard)
        assert card.name == "Test Agent"
        assert client.agent_card is card
        assert client.discover() is card
        assert client.capabilities.streaming
        assert client.get_card(refresh=True).name == "Test Agent"
        assert client.url == BASE
        assert client.endpoint is None
        assert client.backend == backend
        assert isinstance(client.async_client, A2AClient)
        assert repr(client) == f"<SyncA2AClient {BASE!r} backend={backend!r}>"
        thread = portal_thread(client)
        assert thread is not threading.current_thread()
    assert [r.method for r in agent.requests] == ["GET", "GET"]  # cached, then refreshed
    assert not thread.is_alive()
    assert repr(client).endswith(" closed>")


@BACKENDS
def test_every_unary_operation(backend: str) -> None:
    agent = Agent(v1_card(capabilities={"extendedAgentCard": True}))
    agent.results["ListTasks"] = {"tasks": [v1_task()], "nextPageToken": "", "pageSize": 1}
    agent.results["CancelTask"] = v1_task(state="CANCELED")
    agent.results["CreateTaskPushNotificationConfig"] = HOOK
    agent.results["GetTaskPushNotificationConfig"] = HOOK
    agent.results["ListTaskPushNotificationConfigs"] = {"configs": [HOOK]}
    agent.results["DeleteTaskPushNotificationConfig"] = None
    agent.results["GetExtendedAgentCard"] = v1_card(name="Extended")
    agent.results["cstp.ping"] = {"pong": 1}
    with connect(agent, backend, auth="Bearer t") as client:
        task = client.send_message("hello", metadata={"k": "v"}, context_id="c-9")
        assert isinstance(task, Task)
        assert (task.id, task.state, task.text) == ("t-1", TaskState.COMPLETED, "done")
        assert client.get_task("t-2", history_length=3).id == "t-2"
        page = client.list_tasks(context_id="c-1", limit=1)
        assert [t.id for t in page.tasks] == ["t-1"]
        assert client.cancel_task("t-1").state is TaskState.CANCELED
        assert client.wait("t-1", timeout=5).state is TaskState.COMPLETED
        hook = client.create_push_config("t-1", "https://hook.example/cb", token="tok")
        assert isinstance(hook, PushNotificationConfig)
        assert (hook.id, hook.url, hook.token) == ("h-1", "https://hook.example/cb", "tok")
        assert client.get_push_config("t-1", "h-1").id == "h-1"
        assert [c.id for c in client.list_push_configs("t-1")] == ["h-1"]
        client.delete_push_config("t-1", "h-1")
        assert client.get_extended_card().name == "Extended"
        assert client.call("cstp.ping", {"x": 1}, idempotent=True) == {"pong": 1}
        assert client.ping() >= 0.0
    calls = agent.calls
    assert [c["method"] for c in calls] == [
        "SendMessage",
        "GetTask",
        "ListTasks",
        "CancelTask",
        "GetTask",
        "CreateTaskPushNotificationConfig",
        "GetTaskPushNotificationConfig",
        "ListTaskPushNotificationConfigs",
        "DeleteTaskPushNotificationConfig",
        "GetExtendedAgentCard",
        "cstp.ping",
    ]
    assert calls[0]["params"]["message"]["contextId"] == "c-9"
    assert calls[0]["params"]["metadata"] == {"k": "v"}
    assert calls[1]["params"] == {"id": "t-2", "historyLength": 3}
    assert calls[-1]["params"] == {"x": 1}
    assert all(r.headers["authorization"] == "Bearer t" for r in agent.rpc_requests)


@BACKENDS
def test_endpoint_client_and_a_message_reply(backend: str) -> None:
    agent = Agent(card={})
    agent.results["SendMessage"] = {
        "message": {"messageId": "r-1", "role": "ROLE_AGENT", "parts": [{"text": "pong"}]}
    }
    with connect(agent, backend, None, endpoint=RPC_URL) as client:
        reply = client.send_message(Message.user("ping"))
    assert isinstance(reply, Message)
    assert reply.text == "pong"
    assert [r.method for r in agent.requests] == ["POST"]


# -- streams --------------------------------------------------------------------------------------


@BACKENDS
def test_stream_with_for(backend: str) -> None:
    agent = Agent()
    agent.stream("SendStreamingMessage", HAPPY)
    with connect(agent, backend) as client:
        with client.stream_message("write") as stream:
            assert isinstance(stream, SyncMessageStream)
            assert isinstance(stream.stream, MessageStream)
            events = []
            for event in stream:
                events.append(event)
            assert stream.finished
            assert agent.body.closed
        assert stream.events == events[-3:]  # the latest, by default
        assert kinds(events) == HAPPY_KINDS
        task = stream.task
        assert task is not None
        assert (task.id, task.state, task.text) == ("t-1", TaskState.COMPLETED, "one two")
        assert stream.message is None
        assert stream.result() is task  # consumed already: the folded task
        assert list(stream) == []  # a finished stream yields nothing more
        assert "finished" in repr(stream)
    assert agent.calls[0]["params"]["message"]["parts"] == [{"text": "write"}]


@BACKENDS
def test_stream_as_a_plain_for_and_result(backend: str) -> None:
    agent = Agent()
    agent.stream("SendStreamingMessage", HAPPY)
    agent.stream("SubscribeToTask", HAPPY[1:])
    with connect(agent, backend) as client:
        stream = client.stream_message("write")
        events = []
        for event in stream:  # no `with`
            events.append(event)
        assert kinds(events) == HAPPY_KINDS
        assert agent.bodies[0].closed  # released at the final event, without `with`
        result = client.subscribe("t-1").result()
        assert isinstance(result, Task)
        assert result.state is TaskState.COMPLETED
        assert agent.bodies[1].closed
    assert agent.calls[1]["method"] == "SubscribeToTask"


@BACKENDS
def test_leaving_with_early_releases_the_connection(backend: str) -> None:
    agent = Agent()
    agent.stream("SendStreamingMessage", HAPPY[:3], hang=True)  # never ends by itself
    with connect(agent, backend) as client:
        with client.stream_message("write") as stream:
            for event in stream:
                if isinstance(event, TaskArtifactUpdateEvent):
                    break
            assert agent.body.is_open()
        assert agent.body.closed
        assert not stream.finished
        with pytest.raises(RuntimeError) as info:
            stream.result()
        assert str(info.value) == (
            "the stream was closed before its end: call result() inside its block, "
            "before it is closed"
        )
        assert next(iter(stream), None) is None  # closed: iteration stops
        stream.close()  # idempotent
        assert client.get_task("t-1").id == "t-1"  # the client goes on


@BACKENDS
def test_close_releases_streams_left_open(backend: str) -> None:
    agent = Agent()
    agent.stream("SendStreamingMessage", HAPPY[:2], hang=True)
    client = connect(agent, backend)
    stream = client.stream_message("write")
    assert isinstance(next(stream), Task)
    assert agent.body.is_open()
    client.close()
    assert agent.body.closed
    stream.close()  # a no-op once the client is closed
    with pytest.raises(RuntimeError, match="closed"):
        next(stream)


@BACKENDS
def test_on_event_sync_callback_runs_off_the_loop(backend: str) -> None:
    agent = Agent()
    agent.stream("SendStreamingMessage", HAPPY)
    seen: list[tuple[StreamEvent, threading.Thread]] = []
    with connect(agent, backend) as client:
        loop_thread = portal_thread(client)

        def on_event(event: StreamEvent) -> None:
            seen.append((event, threading.current_thread()))
            if isinstance(event, TaskStatusUpdateEvent):
                client.get_task("t-1")  # a callback may call the client again

        result = client.send_message("write", on_event=on_event)
    assert isinstance(result, Task)
    assert result.state is TaskState.COMPLETED
    assert kinds([e for e, _ in seen]) == HAPPY_KINDS
    assert all(t not in (loop_thread, threading.current_thread()) for _, t in seen)
    assert [c["method"] for c in agent.calls] == ["SendStreamingMessage", "GetTask", "GetTask"]


@BACKENDS
def test_on_event_errors_and_async_callbacks(backend: str) -> None:
    agent = Agent()
    agent.stream("SendStreamingMessage", HAPPY)
    seen: list[StreamEvent] = []

    async def collect(event: StreamEvent) -> None:
        await anyio.lowlevel.checkpoint()
        seen.append(event)

    def explode(event: StreamEvent) -> None:
        raise KeyError("callback")

    with connect(agent, backend) as client:
        client.send_message("write", on_event=collect)
        assert len(seen) == 5
        with pytest.raises(KeyError, match="callback"):
            client.send_message("write", on_event=explode)
    assert all(body.closed for body in agent.bodies)


@BACKENDS
def test_a_callback_may_close_the_client(backend: str) -> None:
    agent = Agent()
    agent.stream("SendStreamingMessage", HAPPY)
    client = connect(agent, backend)
    seen: list[StreamEvent] = []

    def close_at_once(event: StreamEvent) -> None:
        seen.append(event)
        client.close()  # from the callback's worker thread: no deadlock

    with pytest.raises(RuntimeError, match="closed during the call"):
        client.send_message("write", on_event=close_at_once)
    assert client.closed
    assert len(seen) == 1
    assert agent.body.closed


# -- errors ---------------------------------------------------------------------------------------


@BACKENDS
def test_errors_arrive_typed(backend: str) -> None:
    agent = Agent()
    agent.errors["GetTask"] = {"code": -32001, "message": "no such task"}
    agent.responders["CancelTask"] = lambda req_id, params: httpx.Response(503, text="busy")
    agent.stream("SendStreamingMessage", HAPPY[:2])  # cut before the final event
    with connect(agent, backend) as client:
        with pytest.raises(TaskNotFoundError) as info:
            client.get_task("nope")
        assert info.value.code == -32001
        assert info.value.agent == RPC_URL
        with pytest.raises(A2AHTTPError) as http_info:
            client.cancel_task("t-1")
        assert http_info.value.status_code == 503
        with pytest.raises(MethodNotFoundError):
            client.call("nope/nope")
        with (
            pytest.raises(A2AConnectionError, match="before the task reached a final state"),
            client.stream_message("write") as stream,
        ):
            for _ in stream:
                pass
        assert len(stream.events) == 2
        with pytest.raises(ValueError, match="message"):
            client.send_message(42)  # type: ignore[arg-type]
        with pytest.raises(ValueError, match="message"):
            client.stream_message(42)  # type: ignore[arg-type]
        shape = r"^message does not have a message's shape \(part is not an object\): a message is a str"
        with pytest.raises(ValueError, match=shape):
            client.send_message({"role": "user", "parts": ["hi"]})
        with pytest.raises(ValueError, match=shape):
            client.stream_message({"role": "user", "parts": ["hi"]})
        with pytest.raises(TypeError, match=r"^metadata must be a mapping \(dict\) of names"):
            client.send_message("hi", metadata="skill")  # type: ignore[arg-type]
        assert client.get_card().name == "Test Agent"  # still usable after all that
    with connect(FakeAgent(None), backend) as client, pytest.raises(A2ADiscoveryError):
        client.get_card()


@BACKENDS
def test_bad_construction_stops_the_portal(backend: str) -> None:
    before = set(threading.enumerate())
    with pytest.raises(ValueError, match="url"):
        SyncA2AClient("not a url", backend=backend)
    with pytest.raises(ValueError, match="needs a url or an endpoint"):
        SyncA2AClient(backend=backend)
    assert set(threading.enumerate()) <= before


@pytest.mark.parametrize("backend", MOCK_CLOCK_BACKENDS)
def test_backend_options_reach_the_event_loop(backend: str) -> None:
    agent = Agent()
    agent.results["GetTask"] = v1_task(state="WORKING")
    with connect(agent, backend, backend_options=mock_clock_options(backend)) as client:
        with pytest.raises(A2ATimeoutError) as info:
            client.wait("t-1", timeout=3600, poll_interval=60, max_interval=600)  # virtual hour
        assert info.value.timeout == "deadline"
    assert 5 < len(agent.calls) < 20


# -- lifecycle ------------------------------------------------------------------------------------


@BACKENDS
def test_close_is_idempotent_and_closed_client_refuses_work(backend: str) -> None:
    agent = Agent()
    client = connect(agent, backend)
    thread = portal_thread(client)
    client.close()
    client.close()
    assert client.closed
    assert client.async_client.closed
    assert not thread.is_alive()
    for call in (
        client.get_card,
        lambda: client.agent_card,
        lambda: client.send_message("x"),
        lambda: client.stream_message("x"),
        lambda: client.subscribe("t-1"),
        lambda: client.get_task("t-1"),
        client.ping,
    ):
        with pytest.raises(RuntimeError, match="SyncA2AClient is closed"):
            call()
    with pytest.raises(RuntimeError, match="closed"), client:
        pass
    assert agent.requests == []


@BACKENDS
def test_close_cancels_a_call_in_flight_in_another_thread(backend: str) -> None:
    agent = Agent()
    agent.stream("SendStreamingMessage", HAPPY[:1], hang=True)
    client = connect(agent, backend)
    stream = client.stream_message("write")
    next(stream)
    outcome: list[BaseException] = []

    def read() -> None:
        try:
            next(stream)  # waits for an event that never comes
        except BaseException as exc:
            outcome.append(exc)

    reader = threading.Thread(target=read)
    reader.start()
    deadline = time.monotonic() + 5
    while not client._calls._scopes and time.monotonic() < deadline:
        time.sleep(0.005)  # until the reader's call runs in the portal
    assert client._calls._scopes
    client.close()
    reader.join(5)
    assert not reader.is_alive()
    [exc] = outcome
    assert isinstance(exc, RuntimeError)
    assert "closed during the call" in str(exc)
    assert agent.body.closed


# -- threads --------------------------------------------------------------------------------------


@BACKENDS
def test_from_a_plain_thread(backend: str) -> None:
    agent = Agent()
    agent.stream("SendStreamingMessage", HAPPY)
    with connect(agent, backend) as client:

        def job() -> tuple[str, str, list[str]]:
            sent = client.send_message("hi")
            assert isinstance(sent, Task)
            with client.stream_message("write") as stream:
                events = kinds(list(stream))
            return client.get_card().name, sent.id, events

        [result] = in_threads(job)
    assert result == ("Test Agent", "t-1", HAPPY_KINDS)


@BACKENDS
def test_two_threads_at_once(backend: str) -> None:
    agent = Agent()
    agent.meet = "GetTask"  # each GetTask waits until two are in the agent together
    with connect(agent, backend) as client:

        def job(name: str) -> list[str]:
            out = []
            for i in range(5):
                out.append(client.get_task(f"{name}-{i}").id)
                sent = client.send_message(f"{name} {i}")
                assert isinstance(sent, Task)
                out.append(sent.text)
            return out

        one, two = in_threads(lambda: job("a"), lambda: job("b"))
    assert one == [x for i in range(5) for x in (f"a-{i}", "done")]
    assert two == [x for i in range(5) for x in (f"b-{i}", "done")]
    assert agent.met == 10
    sends = [
        c["params"]["message"]["parts"][0]["text"] for c in agent.calls if "message" in c["params"]
    ]
    assert sorted(sends) == sorted(f"{n} {i}" for n in "ab" for i in range(5))


@BACKENDS
def test_two_threads_streaming_at_once(backend: str) -> None:
    agent = Agent()
    agent.stream("SendStreamingMessage", HAPPY)
    agent.meet = "SendStreamingMessage"
    with connect(agent, backend) as client:

        def job() -> str:
            with client.stream_message("write") as stream:
                for _ in stream:
                    pass
            assert stream.task is not None
            return stream.task.text

        assert in_threads(job, job) == ["one two", "one two"]
    assert len(agent.bodies) == 2
    assert all(body.closed for body in agent.bodies)


# -- the pool -------------------------------------------------------------------------------------


#: The pool's agents do not stream (a fan-out streams to those that do).
PLAIN = {"streaming": False}


class PoolAgents(Agent):
    """Two agents behind one transport that do not stream: BASE answers, OTHER fails its
    tasks."""

    def __init__(self) -> None:
        super().__init__(v1_card(capabilities=PLAIN))
        self.results["SendMessage"] = self._send

    def _send(self, params: Any) -> Any:
        text = params["message"]["parts"][0]["text"]
        return {"task": v1_task(text=f"echo: {text}")}

    async def handle(self, request: httpx.Request) -> httpx.Response:
        if request.url.host == "other.example.com" and request.method == "POST":
            body = json.loads(request.content)
            failed = v1_task(state="FAILED")
            return httpx.Response(200, json=rpc_result(body["id"], {"task": failed}))
        if request.url.host == "other.example.com":
            card = v1_card(url=OTHER + "/a2a", capabilities=PLAIN)
            return httpx.Response(200, json=card)
        return await super().handle(request)


@BACKENDS
def test_pool(backend: str) -> None:
    pool_agents = PoolAgents()
    http = httpx.AsyncClient(transport=pool_agents.transport())
    with SyncAgentPool(backend=backend, http_client=http, auth="Bearer p") as pool:
        assert pool.backend == backend
        client = pool.client(BASE)
        assert isinstance(client, SyncA2AClient)
        assert pool.client(BASE) is client
        assert client.async_client is pool.async_pool.client(BASE)
        assert client._calls.portal is pool._calls.portal
        assert pool.send(BASE, text="hi") == {"text": "echo: hi"}
        with pytest.raises(TaskFailedError):
            pool.send(OTHER, text="hi")
        results = pool.fan_out([BASE, pool.client(OTHER), BASE], "fan")
        assert all(isinstance(r, AgentResult) for r in results)
        assert [r.agent for r in results] == [BASE, OTHER, BASE]
        assert [r.ok for r in results] == [True, False, True]  # a failed task is no success
        assert [r.value.state for r in results if isinstance(r.value, Task)] == [
            TaskState.COMPLETED,
            TaskState.FAILED,
            TaskState.COMPLETED,
        ]
        assert "clients=2" in repr(pool)
        # a pool's client stops serving when closed; the pool makes a fresh one
        client.close()
        assert client.closed
        assert not client.async_client.closed
        again = pool.client(BASE)
        assert again is not client
        assert again.get_task("t-7").id == "t-7"
        thread = portal_thread(again)
    assert pool.closed
    assert again.closed
    assert again.async_client.closed
    assert not thread.is_alive()
    with pytest.raises(RuntimeError, match="SyncA2AClient is closed"):
        again.get_card()
    with pytest.raises(RuntimeError, match="SyncAgentPool is closed"):
        pool.client(BASE)
    with pytest.raises(RuntimeError, match="SyncAgentPool is closed"):
        pool.send(BASE, text="x")
    pool.close()  # idempotent
    assert all(r.headers["authorization"] == "Bearer p" for r in pool_agents.rpc_requests)


@BACKENDS
def test_pool_fan_out_from_two_threads_with_a_callback(backend: str) -> None:
    pool_agents = PoolAgents()
    http = httpx.AsyncClient(transport=pool_agents.transport())
    seen: list[StreamEvent] = []
    with SyncAgentPool(backend=backend, http_client=http) as pool:

        def job() -> list[bool]:
            results = pool.fan_out([BASE, BASE, BASE], "fan", limit=2, on_event=seen.append)
            return [r.ok for r in results]

        assert in_threads(job, job) == [[True] * 3, [True] * 3]
        with (
            SyncA2AClient(BASE, backend=backend) as foreign,
            pytest.raises(ValueError, match="this pool"),
        ):
            pool.fan_out([foreign], "x")
        calls = len(pool_agents.calls)
        with pytest.raises(ValueError, match=r"^message has no parts: a message is a str"):
            pool.fan_out([BASE, BASE], {"text": "hi"})
        with pytest.raises(TypeError, match=r"^accepted_output_modes must be a list of media"):
            pool.fan_out([BASE, BASE], "hi", accepted_output_modes="text/plain")  # type: ignore[arg-type]
        assert len(pool_agents.calls) == calls  # refused before any agent was sent anything
    assert len(seen) == 6
