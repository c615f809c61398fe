"""PushReceiver: token checks, the three ways of routing, mounting, and end to end with a
FakeAgent that posts notifications (v0.3 and v1.0 forms) and an A2AClient, on 127.0.0.1."""

from __future__ import annotations

import functools
import gzip
import json
import tracemalloc
import zlib
from collections.abc import AsyncIterator, Callable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import anyio
import anyio.lowlevel
import httpx
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from starlette.applications import Starlette
from starlette.routing import Mount

from a2a_anyio import (
    A2AClient,
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatusUpdateEvent,
)
from a2a_anyio._limits import MAX_JSON_DEPTH
from a2a_anyio.push import PushReceiver, decode_notification
from a2a_anyio.testing import FakeAgent, SkillContext, artifact, status
from a2a_anyio.testing._skills import Emit

from ._helpers import Gate, wait_until

pytestmark = pytest.mark.anyio

V03_TASK = {"kind": "task", "id": "t-1", "contextId": "c-1", "status": {"state": "working"}}
V1_STATUS = {
    "statusUpdate": {
        "taskId": "t-1",
        "contextId": "c-1",
        "status": {"state": "TASK_STATE_COMPLETED"},
    }
}


def http_to(receiver: PushReceiver) -> httpx.AsyncClient:
    return httpx.AsyncClient(transport=receiver.transport(), base_url="http://hooks.test")


async def test_token_checks() -> None:
    receiver = PushReceiver(url="http://hooks.test")
    token = receiver.expect("t-1")
    other = receiver.expect("t-2")
    anywhere = receiver.expect()
    async with http_to(receiver) as http:
        missing = await http.post("/", json=V03_TASK)
        wrong = await http.post("/", json=V03_TASK, headers={"X-A2A-Notification-Token": "nope"})
        other_task = await http.post(
            "/", json=V03_TASK, headers={"X-A2A-Notification-Token": other}
        )
        by_header = await http.post("/", json=V03_TASK, headers={"X-A2A-Notification-Token": token})
        by_auth = await http.post("/", json=V1_STATUS, headers={"Authorization": f"Bearer {token}"})
        unbound = await http.post(
            "/", json=V1_STATUS, headers={"Authorization": f"Bearer {anywhere}"}
        )
        receiver.forget(token)
        forgotten = await http.post("/", json=V03_TASK, headers={"X-A2A-Notification-Token": token})
        not_json = await http.post("/", content=b"{", headers={"X-A2A-Notification-Token": other})
        not_event = await http.post(
            "/", json={"hello": 1}, headers={"X-A2A-Notification-Token": anywhere}
        )
        get = await http.get("/")
    assert [r.status_code for r in (missing, wrong, other_task, forgotten)] == [401] * 4
    assert missing.headers["www-authenticate"] == "Bearer"
    assert [r.status_code for r in (by_header, by_auth, unbound)] == [200] * 3
    assert [n.form for n in receiver.received] == ["0.3", "1.0", "1.0"]
    assert [n.token for n in receiver.received] == [token, token, anywhere]
    assert (not_json.status_code, not_event.status_code, get.status_code) == (400, 400, 405)
    assert receiver.rejected == 6


async def test_receiver_wide_token_and_optional_tokens() -> None:
    strict = PushReceiver(token="shared")
    lax = PushReceiver(require_token=False)
    async with http_to(strict) as a, http_to(lax) as b:
        shared = await a.post("/", json=V03_TASK, headers={"X-A2A-Notification-Token": "shared"})
        none = await b.post("/", json=V03_TASK)
        bad = await b.post("/", json=V03_TASK, headers={"X-A2A-Notification-Token": "x"})
    assert (shared.status_code, none.status_code, bad.status_code) == (200, 200, 401)


async def test_routing_three_ways() -> None:
    receiver = PushReceiver(token="tok")
    tasks: list[Task] = []
    updates: list[TaskStatusUpdateEvent] = []
    every: list[StreamEvent] = []
    per_task: list[StreamEvent] = []

    async def on_update(event: TaskStatusUpdateEvent) -> None:
        await anyio.lowlevel.checkpoint()
        updates.append(event)

    receiver.register_push_handler(Task, tasks.append)
    receiver.register_push_handler(TaskStatusUpdateEvent, on_update)
    receiver.register_push_handler("*", every.append)
    receiver.add_task_handler("t-1", per_task.append)
    headers = {"X-A2A-Notification-Token": "tok"}
    artifact_event = {
        "artifactUpdate": {
            "taskId": "t-2",
            "artifact": {"artifactId": "a", "parts": [{"text": "x"}]},
        }
    }
    async with http_to(receiver) as http, receiver.subscribe() as all_events:
        async with receiver.subscribe("t-1", until_terminal=True) as t1:
            for body in (V03_TASK, artifact_event, V1_STATUS):
                assert (await http.post("/hook", json=body, headers=headers)).status_code == 200
            seen = [event async for event in t1]
        receiver.unregister_push_handler("*", every.append)
        receiver.remove_task_handler("t-1", per_task.append)
        await http.post("/", json=V03_TASK, headers=headers)
        with anyio.fail_after(5):
            firehose = [await all_events.__anext__() for _ in range(4)]
    assert [t.id for t in tasks] == ["t-1", "t-1"]
    assert [u.status.state for u in updates] == [TaskState.COMPLETED]
    assert [type(e) for e in every] == [Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent]
    assert [type(e) for e in per_task] == [Task, TaskStatusUpdateEvent]
    assert [type(e) for e in seen] == [Task, TaskStatusUpdateEvent]
    assert [type(e) for e in firehose] == [
        Task,
        TaskArtifactUpdateEvent,
        TaskStatusUpdateEvent,
        Task,
    ]
    with pytest.raises(ValueError, match="not an A2A event type"):
        receiver.register_push_handler(cast(Any, dict), every.append)


async def test_failing_handler_answers_500() -> None:
    receiver = PushReceiver(token="tok")

    def broken(task: Task) -> None:
        raise RuntimeError("handler bug")

    receiver.register_push_handler(Task, broken)
    async with http_to(receiver) as http:
        response = await http.post("/", json=V03_TASK, headers={"X-A2A-Notification-Token": "tok"})
    assert response.status_code == 500
    assert [str(e) for e in receiver.errors] == ["handler bug"]


def test_decode_notification_forms() -> None:
    legacy = {
        "id": "t",
        "sessionId": "s",
        "status": {"state": "completed"},
        "artifacts": [{"parts": [{"type": "text", "text": "x"}], "index": 0}],
    }
    event, form = decode_notification(legacy)
    assert isinstance(event, Task)
    assert (form, event.context_id, event.state) == ("0.3", "s", TaskState.COMPLETED)
    event, form = decode_notification(
        {"message": {"messageId": "m", "role": "ROLE_AGENT", "parts": [{"text": "hi"}]}}
    )
    assert isinstance(event, Message)
    assert form == "1.0"


async def test_mounted_in_starlette() -> None:
    receiver = PushReceiver(token="tok")
    got: list[StreamEvent] = []
    receiver.register_push_handler("*", got.append)
    app = Starlette(routes=[Mount("/hooks", app=receiver)])
    transport = httpx.ASGITransport(app=app)
    async with httpx.AsyncClient(transport=transport, base_url="http://app.test") as http:
        ok = await http.post("/hooks/a2a", json=V1_STATUS, headers={"Authorization": "Bearer tok"})
        outside = await http.post("/elsewhere", json=V1_STATUS)
    assert (ok.status_code, outside.status_code) == (200, 404)
    assert len(got) == 1


# -- end to end -----------------------------------------------------------------------------


def slow_agent(dialect: str, gate: anyio.Event) -> FakeAgent:
    agent = FakeAgent(dialect=dialect)  # type: ignore[arg-type]

    @agent.skill("job")
    async def job(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working", "started")
        await gate.wait()
        yield artifact("result", name="out")

    return agent


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_watch_end_to_end(dialect: str) -> None:
    gate = anyio.Event()
    agent = slow_agent(dialect, gate)
    receiver = PushReceiver()
    by_type: list[Any] = []
    by_task: list[StreamEvent] = []
    receiver.register_push_handler(
        Task if dialect == "0.3" else TaskStatusUpdateEvent, by_type.append
    )
    async with agent.serve(), receiver.serve() as url, A2AClient(agent.url) as client:
        assert receiver.url == url
        task = await client.send_message("go", blocking=False)
        assert isinstance(task, Task)
        receiver.add_task_handler(task.id, by_task.append)
        async with receiver.watch(client, task.id) as notifications:
            assert len(await client.list_push_configs(task.id)) == 1
            gate.set()
            events = [event async for event in notifications]
        assert await client.list_push_configs(task.id) == []  # watch deleted its config
    deliveries = agent.push_deliveries
    assert [d.status_code for d in deliveries] == [200] * len(deliveries)
    assert all(d.url == url for d in deliveries)
    if dialect == "0.3":
        assert [type(e) for e in events] == [Task, Task]
        assert [e.state for e in events if isinstance(e, Task)] == [
            TaskState.WORKING,
            TaskState.COMPLETED,
        ]
        assert all(d.headers["X-A2A-Notification-Token"] for d in deliveries)
        assert len(by_type) == 2
    else:
        assert [type(e) for e in events] == [TaskArtifactUpdateEvent, TaskStatusUpdateEvent]
        assert all(d.headers["Authorization"].startswith("Bearer ") for d in deliveries)
        assert deliveries[0].headers["Content-Type"] == "application/a2a+json"
        assert [e.status.state for e in by_type] == [TaskState.COMPLETED]
    assert by_task == events
    assert {n.form for n in receiver.received} == {dialect}


@pytest.mark.parametrize("dialect", ["1.0", "0.3"])
async def test_push_config_in_the_send_request(dialect: str) -> None:
    agent = FakeAgent(dialect=dialect)  # type: ignore[arg-type]
    receiver = PushReceiver()
    async with (
        agent.serve(),
        receiver.serve(),
        A2AClient(agent.url) as client,
        receiver.subscribe() as notifications,
    ):
        task = await client.send_message("hi", push_config=receiver.new_config())
        assert isinstance(task, Task)
        await wait_until(lambda: len(receiver.received) >= 4)
        with anyio.fail_after(5):
            first = await notifications.__anext__()
    assert isinstance(first, Task)
    assert first.id == task.id
    states = [n.state for n in receiver.received if n.state is not None]
    assert states[0] is TaskState.SUBMITTED
    assert states[-1] is TaskState.COMPLETED


async def test_in_process_delivery_and_a_forged_token() -> None:
    gate = Gate()
    receiver = PushReceiver(url="http://hooks.test")
    async with httpx.AsyncClient(transport=receiver.transport()) as push_http:
        agent = FakeAgent(push_client=push_http, skills={"gate": gate.skill})
        async with (
            agent,
            httpx.AsyncClient(transport=agent.transport()) as http,
            A2AClient(agent.url, http_client=http) as client,
        ):
            task = await client.send_message(
                "hi", blocking=False, push_config=receiver.new_config()
            )
            assert isinstance(task, Task)
            await client.create_push_config(task.id, "http://hooks.test/", token="forged")
            await gate.started.wait()
            gate.open()
            await wait_until(lambda: agent.get_task(task.id).state is TaskState.COMPLETED)
            await wait_until(lambda: all(d.status_code for d in agent.push_deliveries))
    by_token: dict[str, set[int | None]] = {}
    for d in agent.push_deliveries:
        by_token.setdefault(d.headers["X-A2A-Notification-Token"], set()).add(d.status_code)
    assert by_token.pop("forged") == {401}
    assert list(by_token.values()) == [{200}]
    assert [n.state for n in receiver.received] == [
        TaskState.SUBMITTED,
        TaskState.WORKING,
        TaskState.COMPLETED,
    ]


# -- hostile posts: the token first, then a bounded body --------------------------------------

LIMIT = 64 * 1024
TOKEN = "tok"
NOTE = json.dumps(V1_STATUS).encode()


@dataclass
class Posted:
    """What the receiver answered to one post, how many body messages it read, and how
    many it had read when its answer went out whole."""

    status: int
    body: Any
    reads: int
    reads_before_answer: int


async def post(
    receiver: PushReceiver,
    chunks: Sequence[bytes],
    headers: Mapping[str, str | bytes] | None = None,
    token: str | bytes | None = TOKEN,
) -> Posted:
    """One POST run through the receiver as an ASGI server runs it: the body in ``chunks``."""
    raw: list[tuple[bytes, bytes]] = []
    if token is not None:
        raw.append(
            (b"x-a2a-notification-token", token if isinstance(token, bytes) else token.encode())
        )
    for name, value in (headers or {}).items():
        raw.append((name.lower().encode(), value if isinstance(value, bytes) else value.encode()))
    scope = {"type": "http", "method": "POST", "path": "/", "headers": raw}
    pending, sent, reads = list(chunks) or [b""], [], 0
    answered: int | None = None

    async def receive() -> dict[str, Any]:
        nonlocal reads
        reads += 1
        if not pending:
            return {"type": "http.disconnect"}
        chunk = pending.pop(0)
        return {"type": "http.request", "body": chunk, "more_body": bool(pending)}

    async def send(message: MutableMapping[str, Any]) -> None:
        nonlocal answered
        sent.append(message)
        if message["type"] == "http.response.body" and answered is None:
            answered = reads

    await receiver(scope, receive, send)  # an exception here would be a 500 with a traceback
    body = b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")
    assert answered is not None
    return Posted(sent[0]["status"], json.loads(body), reads, answered)


def strict_receiver(**kwargs: Any) -> PushReceiver:
    return PushReceiver(token=TOKEN, max_body_bytes=LIMIT, **kwargs)


@functools.cache
def zeros_gzip() -> bytes:
    """32 MiB of zeros, gzipped: about 32 KiB."""
    return gzip.compress(bytes(32 << 20), compresslevel=9)


@pytest.mark.parametrize(
    "token",
    [None, "nope", b"\xe9t\xe9", "tok\x00", "tok2"],
    ids=["none", "unknown", "latin-1", "nul", "prefix"],
)
@pytest.mark.parametrize(
    "body",
    [[b"[" * 100_000], [zeros_gzip()], [b"{", b"x" * LIMIT * 4]],
    ids=["deep-json", "gzip-bomb", "oversized"],
)
async def test_the_token_is_checked_before_a_byte_of_the_body_is_read(
    token: str | bytes | None, body: list[bytes]
) -> None:
    receiver = strict_receiver()
    receiver.expect("t-1", "tok-for-t1")
    headers = {"Content-Encoding": "gzip"} if body[0].startswith(b"\x1f\x8b") else {}
    refused = await post(receiver, body, headers, token=token)
    assert (refused.status, refused.body) == (401, {"error": "unknown token"})
    # Answered before a byte was read; the body is read after, only to be dropped.
    assert refused.reads_before_answer == 0 and refused.reads == len(body)
    assert receiver.received == [] and receiver.rejected == 1
    read = await post(receiver, body, headers, token=TOKEN)  # the same post with the token
    assert read.status in (400, 413) and read.reads > 0


async def test_a_known_token_of_another_task_is_refused_once_the_task_is_known() -> None:
    receiver = PushReceiver()
    other = receiver.expect("t-2")
    refused = await post(receiver, [NOTE], token=other)
    assert (refused.status, refused.body) == (401, {"error": "unknown token"})
    assert (await post(receiver, [NOTE], token=receiver.expect("t-1"))).status == 200


async def test_bodies_larger_than_the_limit_are_refused_with_413() -> None:
    receiver = strict_receiver()
    declared = await post(receiver, [b"{}"], {"Content-Length": str(LIMIT + 1)})
    # The header says it: answered before a byte is read (the body then only dropped).
    assert (declared.status, declared.reads_before_answer) == (413, 0)
    chunk = b" " * 4096
    streamed = await post(receiver, [chunk] * (2 * LIMIT // len(chunk)))  # no Content-Length
    assert streamed.status == 413
    # Read up to the limit, not beyond, before the answer: the rest is dropped after it.
    assert streamed.reads_before_answer == LIMIT // len(chunk) + 1
    bad_length = await post(receiver, [NOTE], {"Content-Length": "²"})
    assert bad_length.status == 400
    at_limit = await post(receiver, [NOTE + b" " * (LIMIT - len(NOTE))])
    assert at_limit.status == 200
    assert receiver.rejected == 3


def deflate(data: bytes) -> bytes:
    return zlib.compress(data, 9)


def case(encoding: str, body: Callable[[], bytes], status: int, id: str) -> Any:
    return pytest.param(encoding, body, status, id=id)


@pytest.mark.parametrize(
    ("encoding", "body", "status"),
    [
        case("gzip", lambda: gzip.compress(NOTE), 200, "gzip"),
        case("x-gzip", lambda: gzip.compress(NOTE), 200, "x-gzip"),
        case("deflate", lambda: deflate(NOTE), 200, "deflate"),
        case("gzip, gzip", lambda: gzip.compress(gzip.compress(NOTE)), 200, "gzip-gzip"),
        case("deflate, gzip, identity", lambda: gzip.compress(deflate(NOTE)), 200, "mixed"),
        case("gzip", zeros_gzip, 413, "gzip-bomb"),
        case("deflate", lambda: deflate(bytes(32 << 20)), 413, "deflate-bomb"),
        case("gzip, gzip", lambda: gzip.compress(zeros_gzip()), 413, "stacked-bomb"),
        case("gzip", lambda: gzip.compress(NOTE)[:-9], 400, "cut-short"),
        case("gzip", lambda: gzip.compress(NOTE) + b"trailing", 400, "trailing-data"),
        case("gzip", lambda: b"\x1f\x8b not gzip at all", 400, "not-gzip"),
        case("deflate", lambda: NOTE, 400, "not-deflate"),
        case("br", lambda: NOTE, 415, "brotli"),
        case("gzip, compress", lambda: NOTE, 415, "compress"),
        case(", ".join(["gzip"] * 6), lambda: NOTE, 415, "six-codings"),
    ],
)
async def test_compressed_bodies_are_decoded_within_the_limit(
    encoding: str, body: Callable[[], bytes], status: int
) -> None:
    data = body()
    receiver = strict_receiver()
    chunks = [data[i : i + 1024] for i in range(0, len(data), 1024)]
    tracemalloc.start()
    try:
        posted = await post(receiver, chunks, {"Content-Encoding": encoding})
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert posted.status == status, posted.body
    assert peak < 8 * LIMIT + (1 << 20)  # a bomb is never expanded past about the limit
    if status == 200:
        [notification] = receiver.received
        assert notification.state is TaskState.COMPLETED


async def test_json_nested_deeper_than_the_limit_is_refused_with_400() -> None:
    receiver = PushReceiver(token=TOKEN)

    def nested(depth: int) -> bytes:  # a status update whose metadata holds ``depth`` levels
        doc: dict[str, Any] = json.loads(NOTE)
        metadata: dict[str, Any] = {}
        for _ in range(depth - 3):
            metadata = {"a": metadata}
        doc["statusUpdate"]["metadata"] = metadata
        return json.dumps(doc).encode()

    assert (await post(receiver, [nested(MAX_JSON_DEPTH)])).status == 200
    too_deep = await post(receiver, [nested(MAX_JSON_DEPTH + 1)])
    assert too_deep.status == 400 and "nested deeper" in too_deep.body["error"]
    bomb = await post(receiver, [b"[" * 1_000_000])  # json.loads alone would recurse out
    assert bomb.status == 400 and "nested deeper" in bomb.body["error"]
    shallow = PushReceiver(token=TOKEN, max_depth=3)
    assert (await post(shallow, [NOTE])).status == 200
    assert (await post(shallow, [nested(4)])).status == 400


async def test_a_served_receiver_answers_bad_posts_with_client_errors() -> None:
    receiver = PushReceiver(token=TOKEN, max_body_bytes=LIMIT)
    ok = {"X-A2A-Notification-Token": TOKEN}
    async with receiver.serve() as url, httpx.AsyncClient(base_url=url) as http:
        answers = [
            await http.post("/", content=b"[" * 200_000, headers={}),
            await http.post("/", content=b"[" * 60_000, headers=ok),
            await http.post("/", content=b"x" * (LIMIT + 1), headers=ok),
            await http.post("/", content=zeros_gzip(), headers={**ok, "Content-Encoding": "gzip"}),
            await http.post("/", content=NOTE, headers={**ok, "Content-Encoding": "br"}),
            await http.post("/", content=NOTE, headers={b"X-A2A-Notification-Token": "é".encode()}),
            await http.post("/", content=NOTE, headers=ok),
        ]
    assert [a.status_code for a in answers] == [401, 400, 413, 413, 415, 401, 200]
    assert all(a.headers["content-type"] == "application/json" for a in answers)
    assert receiver.rejected == 6


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
@settings(max_examples=150, deadline=None)
@given(
    body=st.one_of(
        st.binary(max_size=200),
        st.recursive(
            st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
            lambda inner: (
                st.lists(inner, max_size=4)
                | st.dictionaries(
                    st.sampled_from(
                        [
                            "task",
                            "statusUpdate",
                            "artifactUpdate",
                            "message",
                            "id",
                            "status",
                            "state",
                            "taskId",
                            "artifact",
                            "parts",
                            "text",
                            "kind",
                            "history",
                        ]
                    )
                    | st.text(max_size=8),
                    inner,
                    max_size=5,
                )
            ),
            max_leaves=30,
        ).map(lambda value: json.dumps(value).encode()),
    )
)
@example(body=b"[" * 5000)
@example(body=json.dumps({"statusUpdate": {"taskId": "t", "status": {}, "metadata": {}}}).encode())
def test_no_post_makes_the_receiver_fail(backend: str, body: bytes) -> None:
    async def one() -> int:
        return (await post(PushReceiver(token=TOKEN), [body])).status

    assert anyio.run(one, backend=backend) in (200, 400)


MIB = 1 << 20
HOSTILE = {
    "20-mib": lambda: b'{"statusUpdate": "' + b"x" * (20 * MIB) + b'"}',
    "nested-100000-deep": lambda: b"[" * 100_000 + b"]" * 100_000,
    "a-100000-digit-number": lambda: b'{"statusUpdate": {"taskId": ' + b"9" * 100_000 + b"}}",
}


async def raw_post(url: str, body: bytes, token: str | None) -> tuple[int, int]:
    """POST ``body`` over a socket of our own, sending at most its first 64 KiB before the
    answer is read; the answer's status and how many of the body's bytes went."""
    host, port = url.removeprefix("http://").rstrip("/").split(":")
    head = f"POST / HTTP/1.1\r\nHost: {host}\r\nContent-Length: {len(body)}\r\n"
    if token is not None:
        head += f"X-A2A-Notification-Token: {token}\r\n"
    first = body[: 64 * 1024]
    async with await anyio.connect_tcp(host, int(port)) as sock:
        await sock.send(head.encode() + b"\r\n" + first)
        sent = len(first)
        answer = b""
        with anyio.fail_after(10):
            while b"\r\n" not in answer:
                with anyio.move_on_after(0.25):
                    answer += await sock.receive()
                    continue
                if sent < len(body):  # no answer yet: the server reads on
                    chunk = body[sent : sent + (1 << 20)]
                    await sock.send(chunk)
                    sent += len(chunk)
    return int(answer.split(b" ", 2)[1]), sent


@pytest.mark.parametrize("body", HOSTILE)
async def test_a_served_receiver_refuses_a_hostile_body_without_the_token_before_reading_it(
    body: str,
) -> None:
    data = HOSTILE[body]()
    receiver = PushReceiver(token=TOKEN)
    async with receiver.serve() as url:
        status, sent = await raw_post(url, data, token=None)
        assert (status, sent) == (401, min(len(data), 64 * 1024))  # not a byte more was asked
        status, _ = await raw_post(url, data, token=TOKEN)
        assert status in (400, 413)
        async with httpx.AsyncClient() as http:  # and it serves on
            ok = await http.post(url, content=NOTE, headers={"X-A2A-Notification-Token": TOKEN})
    assert ok.status_code == 200
    assert len(receiver.received) == 1 and receiver.rejected == 2


@pytest.mark.parametrize("body", HOSTILE)
async def test_a_sender_that_sends_its_body_whole_still_reads_the_answer(body: str) -> None:
    # An agent's push sender (httpx here) sends the whole body before it reads the answer:
    # the receiver answers at once and drops the rest unread, rather than closing the
    # connection on it (which resets it, the answer lost).
    data = HOSTILE[body]()
    receiver = PushReceiver(token=TOKEN)
    receiver.expect("t-1", "tok-for-t1")
    posts = [
        ({}, 401),
        ({"X-A2A-Notification-Token": "nope"}, 401),
        ({"Authorization": "Bearer nope"}, 401),
        ({"X-A2A-Notification-Token": TOKEN}, 413 if len(data) > (8 << 20) else 400),
    ]
    async with receiver.serve() as url, httpx.AsyncClient(timeout=30) as http:
        for headers, status in posts:
            answer = await http.post(url, content=data, headers=headers)
            assert (answer.status_code, answer.headers["content-type"]) == (
                status,
                "application/json",
            )
        ok = await http.post(url, content=NOTE, headers={"X-A2A-Notification-Token": TOKEN})
    assert ok.status_code == 200
    assert len(receiver.received) == 1 and receiver.rejected == len(posts)


async def test_a_number_of_100000_digits_from_a_known_sender_is_a_400() -> None:
    receiver = PushReceiver(token=TOKEN)
    ok = {"X-A2A-Notification-Token": TOKEN}
    async with receiver.serve() as url, httpx.AsyncClient() as http:
        for data in (b"9" * 100_000, b'{"task": {"id": ' + b"9" * 100_000 + b"}}"):
            answer = await http.post(url, content=data, headers=ok)
            assert answer.status_code == 400
            assert "not a push notification" in answer.json()["error"]
