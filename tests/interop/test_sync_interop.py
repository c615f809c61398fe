"""The sync facade against real a2a-sdk 1.x servers (JSON-RPC, and gRPC), on both portal
backends, from plain threads.

The tests are plain functions: the facade runs its own event loop in a thread of its own.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from a2a_anyio import (
    Message,
    SyncA2AClient,
    SyncAgentPool,
    Task,
    TaskArtifactUpdateEvent,
    TaskNotFoundError,
    TaskState,
    TaskStatusUpdateEvent,
)

pytestmark = pytest.mark.interop

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# (server fixture, protocol asked for)
TARGETS = [
    pytest.param(("strict_server", "auto"), id="strict-v1.0"),
    pytest.param(("compat_server", "0.3"), id="compat-v0.3"),
    # Its card lists gRPC interfaces only: the client calls them by itself.
    pytest.param(("sdk1_grpc_server", "auto"), id="grpc-v1.0"),
    pytest.param(("sdk1_grpc_server", "0.3"), id="grpc-v0.3"),
]
BACKENDS = pytest.mark.parametrize("backend", ["asyncio", "trio"])


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest) -> tuple[str, str]:
    server, protocol = request.param
    return request.getfixturevalue(server), protocol


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
        thread.join(30)
        assert not thread.is_alive()
    return results


def stream_report(client: SyncA2AClient, text: str) -> Task:
    """Stream ``text`` with a plain ``for``; check the events; the folded task."""
    with client.stream_message(text) as stream:
        events = []
        for event in stream:
            events.append(event)
    assert isinstance(events[0], Task)
    chunks = [e for e in events if isinstance(e, TaskArtifactUpdateEvent)]
    assert [c.artifact.text for c in chunks] == ["part 1", " part 2", " part 3"]
    last = events[-1]
    assert isinstance(last, TaskStatusUpdateEvent)
    assert last.status.state is TaskState.COMPLETED
    assert stream.finished
    assert stream.task is not None
    return stream.task


@BACKENDS
def test_card_send_stream_get(target: tuple[str, str], backend: str) -> None:
    url, protocol = target
    with SyncA2AClient(url, backend=backend, protocol=protocol) as client:
        card = client.get_card()
        assert (card.name, card.version) == ("SDK Test Agent", "1.2.3")
        assert client.agent_card is card
        assert client.capabilities.streaming

        task = client.send_message("hello")
        assert isinstance(task, Task)
        assert (task.status.state, task.text) == (TaskState.COMPLETED, "echo: hello")

        reply = client.send_message("message ping")
        assert isinstance(reply, Message)
        assert reply.text == "pong: message ping"

        streamed = stream_report(client, "stream it")
        assert streamed.text == "part 1 part 2 part 3"
        assert client.get_task(streamed.id).artifacts[0].text == "part 1 part 2 part 3"

        with pytest.raises(TaskNotFoundError):
            client.get_task("no-such-task")
    assert client.closed


@BACKENDS
def test_leave_a_stream_early_then_cancel(target: tuple[str, str], backend: str) -> None:
    url, protocol = target
    with SyncA2AClient(url, backend=backend, protocol=protocol) as client:
        with client.stream_message("slow job") as stream:
            for event in stream:
                if isinstance(event, TaskStatusUpdateEvent):
                    break  # the job runs on; the connection is released here
        assert stream.task is not None
        assert not stream.finished
        task_id = stream.task.id
        canceled = client.cancel_task(task_id)
        assert canceled.status.state is TaskState.CANCELED
        assert client.wait(task_id, timeout=5).status.state is TaskState.CANCELED


@BACKENDS
def test_on_event_callback(target: tuple[str, str], backend: str) -> None:
    url, protocol = target
    seen: list[str] = []
    with SyncA2AClient(url, backend=backend, protocol=protocol) as client:
        result = client.send_message("stream it", on_event=lambda e: seen.append(type(e).__name__))
    assert isinstance(result, Task)
    assert result.status.state is TaskState.COMPLETED
    assert seen[0] == "Task"
    assert seen.count("TaskArtifactUpdateEvent") == 3


@BACKENDS
def test_two_threads_at_once(target: tuple[str, str], backend: str) -> None:
    url, protocol = target
    with SyncA2AClient(url, backend=backend, protocol=protocol) as client:

        def job(name: str) -> list[str]:
            out = []
            for i in range(3):
                sent = client.send_message(f"{name} {i}")
                assert isinstance(sent, Task)
                out.append(sent.text)
                out.append(client.get_task(sent.id).status.state.value)
            out.append(stream_report(client, f"stream {name}").text)
            return out

        one, two = in_threads(lambda: job("a"), lambda: job("b"))
    for name, result in (("a", one), ("b", two)):
        expected = [x for i in range(3) for x in (f"echo: {name} {i}", "completed")]
        assert result == [*expected, "part 1 part 2 part 3"]


@BACKENDS
def test_pool_send_and_fan_out(strict_server: str, compat_server: str, backend: str) -> None:
    with SyncAgentPool(backend=backend) as pool:
        assert pool.send(strict_server, text="hello") == {"text": "echo: hello"}
        assert pool.send(compat_server, text="hi", data={"n": 1}) == {"n": 1}
        results = pool.fan_out([strict_server, pool.client(compat_server)], "hello", timeout=10)
        assert [r.agent for r in results] == [strict_server, compat_server]
        for result in results:
            assert isinstance(result.value, Task)
            assert result.value.text == "echo: hello"
        assert pool.client(strict_server).get_card().name == "SDK Test Agent"
    assert pool.closed


@pytest.mark.timeout(120)
@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_sync_script_example(strict_server: str, backend: str) -> None:
    # asyncio starts its own local agent (no --url); trio talks to the session's server.
    args = ["--backend", backend] + (["--url", strict_server] if backend == "trio" else [])
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "sync_script.py"), *args],
        capture_output=True,
        text=True,
        timeout=100,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert f"== {backend} ==" in out
    assert "card: SDK Test Agent 1.2.3" in out
    assert "is completed: 'echo: hello from a sync script'" in out
    assert out.count("stream: artifact chunk") == 3
    assert "stream: task completed: 'part 1 part 2 part 3'" in out
    assert "get: task " in out
    assert out.rstrip().endswith("is completed")
