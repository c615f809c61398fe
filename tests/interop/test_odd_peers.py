"""Servers nobody here wrote, as they are: fasta2a and python-a2a, on asyncio and trio.

The matrix (``test_matrix.py``) runs the same operations on them as on every peer; these tests
show the ways in which they differ and what the client does about each.
"""

from __future__ import annotations

import anyio
import pytest

from a2a_anyio import (
    A2AClient,
    A2ATimeoutError,
    AgentPool,
    Task,
    TaskState,
)

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


# -- fasta2a: every send answered at once ---------------------------------------------------


async def test_fasta2a_answers_a_blocking_send_at_once(fasta2a_server: str) -> None:
    async with A2AClient(fasta2a_server) as client:
        params = {
            "message": {"messageId": "m-1", "role": "ROLE_USER", "parts": [{"text": "hello"}]},
            "configuration": {"returnImmediately": False},
        }
        raw = await client.call("SendMessage", params)
        assert raw["task"]["status"]["state"] == "TASK_STATE_SUBMITTED"  # blocking or not
        done = await client.send_message("hello")  # the same send, followed up
    assert isinstance(done, Task)
    assert done.status.state is TaskState.COMPLETED
    assert done.artifacts[0].text == "echo: hello"


async def test_fasta2a_tasks_are_polled_when_the_card_says_no_streaming(
    fasta2a_server: str,
) -> None:
    async with A2AClient(fasta2a_server) as probe:
        card = dict((await probe.get_card()).raw)
    card["capabilities"] = {"streaming": False}
    async with A2AClient(fasta2a_server, card=card) as client:
        done = await client.send_message("hello")
    assert isinstance(done, Task) and done.status.state is TaskState.COMPLETED


async def test_fasta2a_a_follow_up_past_the_timeout_says_which_task(fasta2a_server: str) -> None:
    async with A2AClient(fasta2a_server) as client:
        with pytest.raises(A2ATimeoutError) as info:
            await client.send_message("slow", timeout=1)
        err = info.value
        assert err.timeout == "deadline"
        assert err.agent == fasta2a_server + "/"  # the endpoint the card names
        [task] = err.events
        assert isinstance(task, Task) and task.status.state is TaskState.WORKING

        async with anyio.create_task_group() as tg:

            async def cancel_soon() -> None:
                await anyio.sleep(0.3)
                await client.cancel_task(task.id)

            tg.start_soon(cancel_soon)
            canceled = await client.wait(task.id, timeout=10)
    assert canceled.status.state is TaskState.CANCELED


async def test_fasta2a_through_the_pool(fasta2a_server: str) -> None:
    async with AgentPool() as pool:
        assert await pool.send(fasta2a_server, text="hello", timeout=10) == {"text": "echo: hello"}
