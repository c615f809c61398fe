"""Abandoned tasks end ``canceled`` on a real a2a-sdk server in another process: a fan-out's
stragglers by default, a call's task with ``cancel_on_exit``. The agent's ``slow`` task works
for up to 30 s unless cancelled."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest

from a2a_anyio import A2AClient, A2ATimeoutError, Task, TaskState, fan_out

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

CANCELED = TaskState.CANCELED


async def test_a_fan_out_cancels_its_stragglers_on_their_agents(
    strict_server: str, compat_server: str
) -> None:
    async with A2AClient(strict_server) as strict, A2AClient(compat_server) as compat:
        start = anyio.current_time()
        results = await fan_out([strict, compat], "slow fan-out", timeout=1)
        assert anyio.current_time() - start < 5
        for client, result in zip([strict, compat], results, strict=True):
            assert result.cancelled and isinstance(result.error, A2ATimeoutError)
            assert result.task_id is not None
            # The cancel went out at the timeout; its answer was not awaited past it (an
            # answer already there may have been read).
            outcome = result.cancel_outcome
            assert outcome is not None and outcome.task_id == result.task_id
            assert outcome.confirmed or isinstance(outcome.error, A2ATimeoutError), outcome
            with anyio.fail_after(5):
                while (await client.get_task(result.task_id)).status.state is not CANCELED:
                    await anyio.sleep(0.05)


async def _started(client: A2AClient) -> str:
    task = await client.send_message("slow, then wait", blocking=False)
    assert isinstance(task, Task)
    return task.id


async def _send(client: A2AClient, seen: list[str]) -> None:
    await client.send_message("slow send", timeout=1, cancel_on_exit=True, on_event=_id(seen))


async def _stream(client: A2AClient, seen: list[str]) -> None:
    async with client.stream_message("slow stream", total_timeout=1, cancel_on_exit=True) as s:
        async for event in s:
            _id(seen)(event)


async def _subscribe(client: A2AClient, seen: list[str]) -> None:
    seen.append(await _started(client))
    async with client.subscribe(seen[0], total_timeout=1, cancel_on_exit=True) as s:
        await s.result()


async def _wait(client: A2AClient, seen: list[str]) -> None:
    seen.append(await _started(client))
    await client.wait(seen[0], timeout=1, cancel_on_exit=True)


def _id(seen: list[str]) -> Callable[[Any], None]:
    def note(event: Any) -> None:
        if isinstance(event, Task) and not seen:
            seen.append(event.id)

    return note


CALLS: dict[str, Callable[[A2AClient, list[str]], Awaitable[None]]] = {
    "send": _send, "stream": _stream, "subscribe": _subscribe, "wait": _wait,
}  # fmt: skip


@pytest.mark.parametrize("call", list(CALLS))
async def test_cancel_on_exit_cancels_the_task_of_a_call_past_its_deadline(
    strict_server: str, call: str
) -> None:
    seen: list[str] = []
    async with A2AClient(strict_server) as client:
        with pytest.raises(A2ATimeoutError):
            await CALLS[call](client, seen)
        [task_id] = seen
        # The cancel went out at the deadline; its answer was not awaited past it.
        with anyio.fail_after(5):
            while (await client.get_task(task_id)).status.state is not CANCELED:
                await anyio.sleep(0.05)
