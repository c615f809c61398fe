"""What leaving ``merge_streams`` promises: ``fail_fast`` and ``timeout`` say when the block
ends, and the remote cancels of the streams it cuts fit inside that; nothing of the merge is
open at the agents after the block. Virtual clocks, in-process agents, both backends."""

from __future__ import annotations

from contextlib import nullcontext
from typing import Any

import anyio
import pytest

from a2a_anyio import A2AServerError, A2ATimeoutError, merge_streams
from a2a_anyio.testing import FakeAgent

from ._support import on_mock_clock
from .test_cancel_abandoned import agent_of, quick, running, slow

pytestmark = pytest.mark.anyio


def open_at(agent: FakeAgent) -> int:
    """The requests the agent has open on its tasks (streams, subscriptions, sends)."""
    return sum(agent.streams(task_id) for task_id in agent.tasks)


@on_mock_clock()
@pytest.mark.parametrize("limit", ["fail_fast", "timeout"])
async def test_leaving_a_merge_waits_for_no_agent_that_hangs(limit: str) -> None:
    hanging, failing_agent = agent_of(slow, "hangs"), agent_of(quick, "fails")
    failing_agent.fault("stream", error=-32603, delay=1)
    hanging.fault("cancel", delay=1000)  # its cancel never answers in time
    options: dict[str, Any] = {"fail_fast": True} if limit == "fail_fast" else {"timeout": 2}
    async with running(hanging, failing_agent) as clients:
        streams = {n: c.stream_message("go") for n, c in zip("hf", clients, strict=True)}
        start = anyio.current_time()
        with pytest.raises(A2AServerError) if limit == "fail_fast" else nullcontext():
            async with merge_streams(streams, **options) as merged:
                async for _ in merged:
                    pass
        took = anyio.current_time() - start
        assert took == (1 if limit == "fail_fast" else 2)  # the failure; the timeout
        assert open_at(hanging) == 0 and open_at(failing_agent) == 0
        assert len(hanging.requests_for("cancel")) == 1  # the cancel went out
        outcome = streams["h"].cancel_outcome  # its answer was not awaited
        assert outcome is not None and isinstance(outcome.error, A2ATimeoutError)
