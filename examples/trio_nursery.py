"""A trio application: several A2A calls and streams at once in one nursery, one of them cut by
``trio.move_on_after`` and then canceled on the agent.

uv run python examples/trio_nursery.py              # starts a local FakeAgent on 127.0.0.1
uv run python examples/trio_nursery.py --url URL    # any A2A agent (skill names are hints)
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator

import trio

from a2a_anyio import A2AClient, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, status

DEADLINE = 1.0  # seconds the slow request may take before the application moves on


def local_agent() -> FakeAgent:
    """An agent with a "write" skill (one word every 0.1 s) and a "slow" one (30 s)."""
    agent = FakeAgent(name="Trio Agent", description="Writes slowly, or very slowly")

    @agent.skill("write")
    async def write(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        words = ctx.text.split()
        for i, word in enumerate(words):
            await trio.sleep(0.1)
            chunk = f" {word}" if i else word
            yield artifact(chunk, append=i > 0, last_chunk=i == len(words) - 1)

    @agent.skill("slow")
    async def slow(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working", "thinking very hard")
        await trio.sleep(30)
        yield artifact("too late")

    return agent


async def run(client: A2AClient) -> None:
    start = trio.current_time()

    def log(who: str, what: str) -> None:
        print(f"[{trio.current_time() - start:4.2f}s] {who}: {what}")

    async def card() -> None:
        found = await client.get_card()
        log("card", f"{found.name}, streaming={found.capabilities.streaming}")

    async def ask(name: str, text: str) -> None:
        result = await client.send_message(text, metadata={"skillId": "write"})
        state = f" ({result.status.state.value})" if isinstance(result, Task) else ""
        log(name, f"answer {result.text!r}{state}")

    async def stream(name: str, text: str) -> None:
        async with client.stream_message(text, metadata={"skillId": "write"}) as events:
            async for event in events:
                if isinstance(event, TaskArtifactUpdateEvent):
                    log(name, f"chunk {event.artifact.text!r}")
        log(name, f"done: {events.task.text if events.task else ''!r}")

    async def slow(name: str) -> None:
        events = client.stream_message("the meaning of life", metadata={"skillId": "slow"})
        with trio.move_on_after(DEADLINE) as scope:
            async with events:
                async for event in events:
                    if isinstance(event, TaskStatusUpdateEvent):
                        log(name, f"status {event.status.state.value}")
        if scope.cancelled_caught:
            log(name, f"no answer within {DEADLINE}s: moved on")
            if events.task is not None:  # the agent still works on it: tell it to stop
                canceled = await client.cancel_task(events.task.id)
                log(name, f"task {canceled.status.state.value} on the agent")

    async with trio.open_nursery() as nursery:  # every child runs at once; all end here
        nursery.start_soon(card)
        nursery.start_soon(ask, "ask", "hello from trio")
        nursery.start_soon(stream, "stream-a", "one two three")
        nursery.start_soon(stream, "stream-b", "four five six seven")
        nursery.start_soon(slow, "slow")
    log("nursery", "every child finished")


async def main(url: str | None) -> None:
    if url is not None:
        async with A2AClient(url) as client:
            await run(client)
        return
    async with local_agent().serve() as agent, A2AClient(agent.url) as client:
        print(f"local agent at {agent.url}")
        await run(client)


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0].replace("``", ""))
    parser.add_argument("--url", help="an A2A agent's base URL (default: start a local one)")
    args = parser.parse_args()
    trio.run(main, args.url)


if __name__ == "__main__":
    cli()
