"""Ctrl-C in a script that uses the sync facade, as its user meets it: a real SIGINT.

The agent is a ``FakeAgent`` served on 127.0.0.1 in the test's event loop; the script
(``interrupted_script.py``) runs in a subprocess, its client on the test's backend.
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
from anyio.streams.text import TextReceiveStream

from a2a_anyio.testing import Emit, FakeAgent, SkillContext, reply, status

SCRIPT = Path(__file__).with_name("interrupted_script.py")
#: Where the script waits when interrupted, and how many never-ending tasks it starts there.
HANGING = {"stream": 1, "send": 1, "wait": 1, "fan-out": 2}

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
async def test_ctrl_c_reaches_the_script_and_releases_the_connection(
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
        process.send_signal(signal.SIGINT)
        stage = "the script's own except KeyboardInterrupt"
        await until(lambda: "caught" in "".join(out) or process.returncode is not None)
        if "caught" not in "".join(out):
            return
        stage = "the interrupted call's connection released before the script goes on"
        await until(lambda: followed() == [0] * HANGING[what])
        stage = "the next call, and the end of the script"
        assert process.stdin is not None
        await process.stdin.send(b"\n")
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
    assert output.splitlines()[-1] == "after again"
