"""Ctrl-C in a script that uses the sync facade, as its user meets it: a real SIGINT.

The agent is a ``FakeAgent`` served on 127.0.0.1 in the test's event loop; the script
(``interrupted_script.py``) runs in a subprocess, its client on the test's backend. The last
test covers, in process, the one outcome of an interrupt a script cannot bring about at will.
"""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import anyio
import pytest
from anyio.abc import ByteReceiveStream, Process
from anyio.from_thread import start_blocking_portal
from anyio.streams.text import TextReceiveStream

from a2a_anyio._auth import REQUEST_HEADERS
from a2a_anyio._observe import NO_TRACING
from a2a_anyio._sync_portal import Calls, _Call
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, reply, status

SCRIPT = Path(__file__).with_name("interrupted_script.py")
#: Where the script waits when interrupted, and how many never-ending tasks it follows there.
HANGING = {"stream": 1, "send": 1, "wait": 1, "fan-out": 2, "start": 0}

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="a POSIX signal")


def hanging_agent() -> FakeAgent:
    agent = FakeAgent()

    @agent.skill("hang")
    async def hang(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        await anyio.sleep_forever()

    @agent.skill("echo")
    async def echo(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield reply(ctx.text)

    return agent


async def until(condition: Callable[[], bool]) -> None:
    """Return once ``condition()`` holds (the caller's scope bounds the wait)."""
    while not condition():
        await anyio.sleep(0.01)


@pytest.mark.anyio
@pytest.mark.parametrize("what", list(HANGING))
async def test_ctrl_c_reaches_the_script_once_the_call_has_released_its_connection(
    what: str, anyio_backend_name: str
) -> None:
    agent = hanging_agent()
    out: list[str] = []
    err: list[str] = []
    stage = "start"

    async def drain(stream: ByteReceiveStream | None, into: list[str]) -> None:
        assert stream is not None
        async for text in TextReceiveStream(stream):
            into.append(text)

    def followed() -> list[int]:
        """How many requests follow each task of the agent."""
        return [agent.streams(task_id) for task_id in agent.tasks]

    async def run(process: Process) -> None:
        nonlocal stage
        stage = "in the call, every hanging task followed by a request"
        await until(lambda: "waiting" in "".join(out) and followed() == [1] * HANGING[what])
        await anyio.sleep(0.2)  # the script's main thread now waits in the call
        process.send_signal(signal.SIGINT)
        stage = "the end of the script"
        await process.wait()
        stage = "done"

    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    async with agent.serve():
        command = [sys.executable, "-W", "error", str(SCRIPT), agent.url, anyio_backend_name, what]
        with anyio.move_on_after(30):
            process = await anyio.open_process(command, env=env)
            async with process, anyio.create_task_group() as tg:
                tg.start_soon(drain, process.stdout, out)
                tg.start_soon(drain, process.stderr, err)
                await run(process)
    output, stderr = "".join(out), "".join(err)
    assert stage == "done", f"stuck at: {stage}\n{output}{stderr}"
    assert stderr == ""  # no traceback, no warning
    assert process.returncode == 0
    in_stream = ["interrupted in the stream; open requests: 0"] if what == "stream" else []
    # The interceptors saw the call end by Ctrl-C, before the script's own except ran.
    started = ["ended send result"] if what == "wait" else []
    interrupted = {"stream": "stream", "wait": "wait", "fan-out": None}.get(what, "send")
    ended = [f"ended {interrupted} interrupted"] if interrupted else []
    after = ["ended send result"] if interrupted else []
    assert [line for line in output.splitlines() if line != "waiting"] == [
        *started,
        *ended,
        *in_stream,
        "caught; open requests: 0",  # the interrupted call has ended before the except ran
        *after,
        "after again",
    ], output


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_a_call_stopped_before_the_loop_begins_it_never_runs(backend: str) -> None:
    # Interrupted while the portal starts it, a call may be stopped in the loop before its
    # task has begun there (trio begins new tasks in any order); then it must never begin.
    ran: list[str] = []

    async def call_the_agent() -> None:
        ran.append("called")

    with start_blocking_portal(backend) as portal:
        calls = Calls(portal, "SyncA2AClient")
        call = _Call()
        assert portal.call(call.stop) is False  # not begun: the waiting thread goes on
        with pytest.raises(RuntimeError, match="call to the SyncA2AClient was interrupted"):
            portal.call(
                calls._guarded, call_the_agent, call, NO_TRACING.capture(), REQUEST_HEADERS.get()
            )
    assert ran == []
    assert call.ended.is_set()
