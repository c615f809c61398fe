"""No context manager of the library wraps the caller's own exception: what the block raises
comes out as itself, not in an exception group, however many agents are served around it."""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio
import pytest

from a2a_anyio import A2AClient, AgentPool, fan_out_stream, merge_streams
from a2a_anyio._groups import beside
from a2a_anyio.push import PushReceiver
from a2a_anyio.testing import FakeAgent

if sys.version_info < (3, 11):
    from exceptiongroup import ExceptionGroup

pytestmark = pytest.mark.anyio


class Mine(Exception):
    """The caller's own error."""


@asynccontextmanager
async def two_agents_served() -> AsyncIterator[None]:
    async with FakeAgent().serve(), FakeAgent().serve():
        yield


@asynccontextmanager
async def fan_out_stream_to_an_agent() -> AsyncIterator[None]:
    agent = FakeAgent()
    async with agent.serve(), fan_out_stream([agent.url], "hi"):
        yield


BLOCKS: dict[str, Callable[[], AbstractAsyncContextManager[Any]]] = {
    "FakeAgent.running": lambda: FakeAgent().running(),
    "async with FakeAgent": FakeAgent,
    "FakeAgent.serve": lambda: FakeAgent().serve(),
    "two FakeAgents served": two_agents_served,
    "PushReceiver.serve": lambda: PushReceiver().serve(),
    "merge_streams": lambda: merge_streams({}),
    "fan_out_stream": fan_out_stream_to_an_agent,
    "AgentPool": AgentPool,
    "A2AClient": lambda: A2AClient("http://127.0.0.1:9"),
}


@pytest.mark.parametrize("block", BLOCKS)
async def test_the_blocks_own_exception_comes_out_as_itself(block: str) -> None:
    with pytest.raises(Mine) as info:
        async with BLOCKS[block]():
            raise Mine("the caller's")
    assert type(info.value) is Mine and str(info.value) == "the caller's"


async def test_one_failed_task_beside_the_block_comes_out_as_itself() -> None:
    async def fails() -> None:
        raise Mine("a worker's")

    with pytest.raises(Mine, match="a worker's"):
        async with beside() as group:
            group.start_soon(fails)
            await anyio.sleep_forever()


async def test_several_failures_stay_a_group() -> None:
    async def fails() -> None:
        raise Mine("a worker's")

    with pytest.raises(ExceptionGroup) as info:
        async with beside() as group:
            group.start_soon(fails)
            group.start_soon(fails)
            await anyio.sleep_forever()
    assert [type(e) for e in info.value.exceptions] == [Mine, Mine]
