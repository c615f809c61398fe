"""The local agents the documentation's Python blocks run against.

Three FakeAgents (v1.0 over JSON-RPC, v0.3 over HTTP+JSON, the legacy tasks/send dialect) are
served on 127.0.0.1 by hypercorn in a thread of their own (an anyio blocking portal), so a
block may start its own event loop (``anyio.run(main)``, ``SyncA2AClient``) or be awaited on
either backend. In a runnable block, ``https://agent.example.com`` is the v1.0 agent.

What every agent does, by the text it gets: ``slow...`` works until it is canceled; anything
else streams a three-chunk ``report`` artifact and completes (``long...`` a chunk every 0.3 s). The skill ``image.resize``
completes at once with ``resized``. The v1.0 agent also answers the JSON-RPC extension method
``cstp.queryDecisions`` (a decision log, as in ``examples/extension_client.py``).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, ExitStack, contextmanager
from typing import Any

import anyio
from anyio.from_thread import start_blocking_portal

from a2a_anyio import A2AClient
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, serve_app, status
from a2a_anyio.testing._asgi import Receive, Scope, Send

SPECS = (("1.0", "jsonrpc"), ("0.3", "rest"), ("legacy", "jsonrpc"))


async def _work(ctx: SkillContext) -> AsyncIterator[Emit]:
    yield status("working", "writing")
    if ctx.text.startswith("slow"):
        await ctx.wait_cancelled()
        return
    # A long job takes long enough for a push config to be created before its first event.
    gap = 0.3 if ctx.text.startswith("long") else 0.01
    for i, words in enumerate(("part 1", " part 2", " part 3")):
        await anyio.sleep(gap)
        yield artifact(words, name="report", append=i > 0, last_chunk=i == 2)


async def _resize(ctx: SkillContext) -> AsyncIterator[Emit]:
    yield status("working")
    yield artifact(f"resized: {ctx.text}", name="image")


def make_agent(dialect: str, binding: str) -> FakeAgent:
    return FakeAgent(
        dialect=dialect,  # type: ignore[arg-type]
        binding=binding,  # type: ignore[arg-type]
        name=f"Docs agent ({dialect})",
        skills={"work": _work, "image.resize": _resize},
        default_skill="work",
    )


class WithExtension:
    """An agent's ASGI app that also answers ``cstp.queryDecisions`` on its JSON-RPC path."""

    def __init__(self, agent: FakeAgent) -> None:
        self.agent = agent

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self.agent.rpc_path:
            await self.agent(scope, receive, send)
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            request = json.loads(body)
        except ValueError:
            request = None
        if isinstance(request, dict) and request.get("method") == "cstp.queryDecisions":
            query = (request.get("params") or {}).get("query", "")
            result = {"decisions": [{"id": "d-1", "title": f"{query}: use PostgreSQL"}]}
            data = json.dumps({"jsonrpc": "2.0", "id": request.get("id"), "result": result})
            await send(
                {
                    "type": "http.response.start",
                    "status": 200,
                    "headers": [(b"content-type", b"application/json")],
                }
            )
            await send({"type": "http.response.body", "body": data.encode()})
            return
        replayed = False

        async def again() -> Any:
            nonlocal replayed
            if not replayed:
                replayed = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.agent(scope, again, send)


class World:
    """The docs' agents, served until ``close()``; ``url`` and ``urls`` are their addresses."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        portal = self._stack.enter_context(start_blocking_portal("asyncio"))
        self.agents: list[FakeAgent] = []
        self.urls: list[str] = []
        for dialect, binding in SPECS:
            agent = make_agent(dialect, binding)
            self._stack.enter_context(portal.wrap_async_context_manager(agent.running()))
            app = WithExtension(agent)
            url = self._stack.enter_context(portal.wrap_async_context_manager(serve_app(app)))
            self.agents.append(agent)
            self.urls.append(url)
        self.url = self.urls[0]

    def close(self) -> None:
        self._stack.close()

    def given(self, name: str) -> Callable[[], Any]:
        """What a block's ``given`` name stands for: a value, or (called in the block's event
        loop) an async context manager whose value it is."""
        values: dict[str, Callable[[], Any]] = {
            "url": lambda: self.url,
            "urls": lambda: list(self.urls),
            "client": lambda: A2AClient(self.url),
            "agent": lambda: make_agent("1.0", "jsonrpc"),
        }
        if name not in values:
            raise LookupError(f"the docs' world has no value for the given name {name!r}")
        return values[name]


async def enter_given(
    stack: Any, world: World, names: list[str]
) -> dict[str, Any]:  # stack: an AsyncExitStack of the block's event loop
    """The given names' values, context managers entered on ``stack``."""
    out: dict[str, Any] = {}
    for name in names:
        value = world.given(name)()
        if isinstance(value, AbstractAsyncContextManager):
            value = await stack.enter_async_context(value)
        out[name] = value
    return out


@contextmanager
def world() -> Iterator[World]:
    w = World()
    try:
        yield w
    finally:
        w.close()
