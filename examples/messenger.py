"""A messenger: send a text and/or a JSON payload to a contact (an agent) and get a dict back,
built on ``AgentPool.send``; a task the agent fails or rejects is a ``TaskFailedError``.

uv run python examples/messenger.py                  # starts two local FakeAgents
uv run python examples/messenger.py --backend trio
uv run python examples/messenger.py --url URL        # also message any A2A agent ("remote")
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack
from typing import Any

import anyio

from a2a_anyio import A2AClientError, AgentPool, TaskFailedError
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, status


class Messenger:
    """Messages to named contacts over one pool; every answer is a dict."""

    def __init__(self, pool: AgentPool, contacts: dict[str, str]) -> None:
        self.pool = pool
        self.contacts = contacts  # name -> agent URL

    async def send(self, to: str, text: str | None = None, data: Any = None) -> dict[str, Any]:
        """The answer of ``to``: the data part of its result, else ``{"text": ...}``."""
        return await self.pool.send(self.contacts[to], text=text, data=data, timeout=10)

    async def chat(self, to: str, text: str | None = None, data: Any = None) -> None:
        """Send and print the answer, or why there is none."""
        said = text if data is None else f"{text or ''} {data}".strip()
        try:
            answer = await self.send(to, text, data)
        except TaskFailedError as exc:  # the agent answered: the task failed or was rejected
            why = exc.task.status.message.text if exc.task.status.message else ""
            print(f"{to} <- {said}: task {exc.task.status.state.value}: {why}")
        except A2AClientError as exc:  # no answer at all (unreachable, protocol error, ...)
            print(f"{to} <- {said}: error {type(exc).__name__}: {exc}")
        else:
            print(f"{to} <- {said}: {answer}")


def greeter() -> FakeAgent:
    """Answers text with text; declines to talk about the weather."""

    async def greet(ctx: SkillContext) -> AsyncIterator[Emit]:
        if "weather" in ctx.text:
            yield status("rejected", "I only do greetings")
            return
        yield artifact(f"Hello, {ctx.text}!")

    return FakeAgent(name="Greeter", skills={"greet": greet})


def calculator() -> FakeAgent:
    """Answers {"op", "args"} with {"result"} (a v0.3 agent, to show the dialect does not matter)."""

    async def calculate(ctx: SkillContext) -> AsyncIterator[Emit]:
        request = ctx.data or {}
        yield status("working")
        await anyio.sleep(0.05)
        args = [float(x) for x in request.get("args", [])]
        if request.get("op") == "sum":
            yield artifact(data={"result": sum(args)})
        elif request.get("op") == "div":
            yield artifact(data={"result": args[0] / args[1]})  # ZeroDivisionError fails the task
        else:
            yield status("failed", f"unknown op {request.get('op')!r}")

    return FakeAgent(dialect="0.3", name="Calculator", skills={"calculate": calculate})


async def main(url: str | None) -> None:
    async with AsyncExitStack() as stack:
        contacts = {}
        for name, agent in (("greeter", greeter()), ("calculator", calculator())):
            contacts[name] = (await stack.enter_async_context(agent.serve())).url
        if url is not None:
            contacts["remote"] = url
        messenger = Messenger(await stack.enter_async_context(AgentPool()), contacts)

        await messenger.chat("greeter", "Ada")
        await messenger.chat("calculator", data={"op": "sum", "args": [1, 2, 3.5]})
        await messenger.chat("calculator", "please", data={"op": "div", "args": [1, 4]})
        await messenger.chat("greeter", "how is the weather?")
        await messenger.chat("calculator", data={"op": "div", "args": [1, 0]})
        await messenger.chat("calculator", data={"op": "pow", "args": [2, 8]})
        if url is not None:
            await messenger.chat("remote", "hello from the messenger example")


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0].replace("``", ""))
    parser.add_argument("--url", help="an extra contact: any A2A agent's base URL")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args()
    print(f"== {args.backend} ==")
    anyio.run(main, args.url, backend=args.backend)


if __name__ == "__main__":
    cli()
