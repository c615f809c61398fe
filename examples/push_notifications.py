"""Push notifications: start a long task, let the agent post its progress to a ``PushReceiver``
served on 127.0.0.1, and print each notification as it arrives; a v1.0 agent posts stream events
(``StreamResponse`` bodies), a v0.3 agent posts whole Task snapshots.

uv run python examples/push_notifications.py                  # starts a v1.0 and a v0.3 FakeAgent
uv run python examples/push_notifications.py --backend trio
uv run python examples/push_notifications.py --url URL        # an agent on this machine
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack

import anyio

from a2a_anyio import A2AClient, StreamEvent, Task, TaskArtifactUpdateEvent, TaskStatusUpdateEvent
from a2a_anyio.push import PushReceiver
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, status


async def migrate(ctx: SkillContext) -> AsyncIterator[Emit]:
    """A long job: three batches, 0.2 s each, then a report."""
    yield status("working", "starting")
    for batch in range(1, 4):
        await anyio.sleep(0.2)
        yield status("working", f"batch {batch}/3 copied")
    yield artifact(f"3 batches of {ctx.text!r} copied", name="report")
    yield status("completed", "done")


def describe(event: StreamEvent) -> str:
    if isinstance(event, Task):  # the v0.3 form: a snapshot of the whole task
        said = event.status.message.text if event.status.message else ""
        return f"Task snapshot: {event.status.state.value} {said!r}, {len(event.artifacts)} artifact(s)"
    if isinstance(event, TaskStatusUpdateEvent):
        said = event.status.message.text if event.status.message else ""
        return f"status update: {event.status.state.value} {said!r}"
    if isinstance(event, TaskArtifactUpdateEvent):
        return f"artifact update: {event.artifact.text!r}"
    return f"message: {event.text!r}"


async def follow(receiver: PushReceiver, url: str, label: str) -> None:
    """Start a task on the agent at ``url`` and print its notifications until it ends."""
    async with A2AClient(url) as client:
        task = await client.send_message("orders", blocking=False)  # returns once accepted
        assert isinstance(task, Task), "the agent answered with a message, not a task"
        print(f"{label}: task {task.id[:8]} started, {task.status.state.value}")
        start = anyio.current_time()
        # watch() sets a push config on the task pointing at the receiver, with a fresh token,
        # and iterates the notifications the agent posts, until a terminal state.
        async with receiver.watch(client, task.id) as notifications:
            async for event in notifications:
                print(f"  [{anyio.current_time() - start:4.2f}s] {label}: {describe(event)}")
        final = await client.get_task(task.id)
        print(f"{label}: task {final.status.state.value}: {final.text!r}")


async def main(url: str | None) -> None:
    receiver = PushReceiver()
    async with AsyncExitStack() as stack:
        hooks = await stack.enter_async_context(receiver.serve())
        print(f"push receiver at {hooks}")
        if url is not None:
            await follow(receiver, url, "agent")
        else:
            for dialect in ("1.0", "0.3"):
                agent = FakeAgent(dialect=dialect, skills={"migrate": migrate})
                served = await stack.enter_async_context(agent.serve())
                await follow(receiver, served.url, f"v{dialect}")
    forms = [n.form for n in receiver.received]  # every accepted notification, in order
    v1, v03 = forms.count("1.0"), forms.count("0.3")
    print(f"received {len(forms)}: {v1} in the v1.0 form, {v03} in the v0.3 form")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0].replace("``", ""))
    parser.add_argument("--url", help="an A2A agent's base URL that can reach 127.0.0.1")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args()
    print(f"== {args.backend} ==")
    anyio.run(main, args.url, backend=args.backend)


if __name__ == "__main__":
    cli()
