"""An a2a-sdk agent in another process as a tool (``client.as_tool()``): strict v1.0, and
v0.3 through the SDK's compatibility layer, on asyncio and trio."""

from __future__ import annotations

import anyio
import pytest

from a2a_anyio import A2AClient, AgentToolProgress, TaskState, from_agent
from a2a_anyio._agent_text import AGENT_TEXT_OPEN
from a2a_anyio._tool import DESCRIPTION_LEAD

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

TARGETS = [
    pytest.param(("strict_server", "auto"), id="strict-v1.0"),
    pytest.param(("compat_server", "0.3"), id="compat-v0.3"),
]


@pytest.fixture(params=TARGETS)
def target(request: pytest.FixtureRequest) -> tuple[str, str]:
    server, protocol = request.param
    return request.getfixturevalue(server), protocol


async def test_schema_and_a_call(target: tuple[str, str]) -> None:
    url, protocol = target
    async with A2AClient(url, protocol=protocol) as client:
        tool = await client.as_tool()
        result = await tool(text="hello", data={"n": 1}, skill="echo")
    assert tool.name == "SDK_Test_Agent"
    assert tool.description.startswith(
        f"{DESCRIPTION_LEAD}{AGENT_TEXT_OPEN}SDK Test Agent: Scripted A2A agent built with"
    )
    assert tool.parameters["properties"]["skill"]["enum"] == ["echo"]
    assert (result.state, result.text, result.data) == (
        TaskState.COMPLETED,
        "echo: hello",
        [{"n": 1}],
    )
    assert result.task_id and result.context_id


async def test_progress_as_the_agent_streams(target: tuple[str, str]) -> None:
    url, protocol = target
    seen: list[AgentToolProgress] = []
    async with A2AClient(url, protocol=protocol) as client:
        tool = await client.as_tool(on_progress=seen.append)
        result = await tool(text="stream")
    assert result.text == "part 1 part 2 part 3"
    texts = [str(p) for p in seen]
    assert "working: working" in texts and "working: part 1" in texts
    assert seen[-1].state is TaskState.COMPLETED


async def test_a_cancelled_call_cancels_the_task_on_the_agent(target: tuple[str, str]) -> None:
    url, protocol = target
    told = anyio.Event()
    tasks: list[str] = []

    def progress(p: AgentToolProgress) -> None:
        assert p.task_id is not None
        tasks.append(p.task_id)
        told.set()

    async with A2AClient(url, protocol=protocol) as client:
        tool = await client.as_tool(on_progress=progress)
        with anyio.fail_after(10):
            async with anyio.create_task_group() as tg:

                async def call() -> None:
                    await tool(text="slow")

                tg.start_soon(call)
                await told.wait()
                tg.cancel_scope.cancel()
        task = await client.get_task(tasks[0])
    assert task.status.state is TaskState.CANCELED


async def test_failed_and_input_required_tasks_are_answers(target: tuple[str, str]) -> None:
    url, protocol = target
    async with A2AClient(url, protocol=protocol) as client:
        tool = await client.as_tool()
        failed = await tool(text="fail")
        asked = await tool(text="input please")
        done = await tool(text="more", context_id=asked.context_id)
    assert (failed.state, failed.message, failed.is_error) == (TaskState.FAILED, "it failed", True)
    assert (asked.state, asked.message) == (TaskState.INPUT_REQUIRED, "need more input")
    assert asked.context_id is not None
    shown = from_agent(asked.context_id)
    assert f"call the tool again with context_id {shown}" in asked.to_text()
    assert (done.state, done.task_id, done.text) == (
        TaskState.COMPLETED,
        asked.task_id,
        "echo: more",
    )
