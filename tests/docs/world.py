"""The local agents the documentation's Python blocks run against.

Three FakeAgents (v1.0 over JSON-RPC, v0.3 over HTTP+JSON, the legacy tasks/send dialect) are
served on 127.0.0.1 by hypercorn in a thread of their own (an anyio blocking portal), so a
block may start its own event loop (``anyio.run(main)``, ``SyncA2AClient``) or be awaited on
either backend. In a runnable block, ``https://agent.example.com`` is the v1.0 agent.

What every agent does, by the text it gets: ``slow...`` works until it is canceled; anything
else streams a three-chunk ``report`` artifact and completes (``long...`` a chunk every 0.3 s). The skill ``image.resize``
completes at once with ``resized``; ``invoice`` with an invoice data part (media type
``application/vnd.acme.invoice+json``); ``booking`` asks "which date?" (input-required),
then completes with ``booked <first text> on <answer>``. The JSON-RPC agents also answer the extension methods
``cstp.queryDecisions`` (a decision log, as in ``examples/extension_client.py``) and
``cstp.watchDecisions``, which streams a decision's three steps. ``openai_chat`` and
``anthropic_messages`` stand for a model behind those APIs, for the tool loops of
``docs/tools.md``: it calls the first tool with the user's words, then says the answer.
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Iterator
from contextlib import AbstractAsyncContextManager, ExitStack, contextmanager
from typing import Any

import anyio
from anyio.from_thread import start_blocking_portal

from a2a_anyio import A2AClient, DataPart, Message
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, status

SPECS = (("1.0", "jsonrpc"), ("0.3", "rest"), ("legacy", "jsonrpc"))
INVOICE = "application/vnd.acme.invoice+json"


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


async def _invoice(ctx: SkillContext) -> AsyncIterator[Emit]:
    yield status("working")
    # Pre-1.0 data parts have no media type: their metadata names it.
    label = {"mediaType": INVOICE}
    part = DataPart({"number": "F-1", "total": 12.5}, INVOICE, label)
    yield artifact(parts=[part], name="invoice")


async def _booking(ctx: SkillContext) -> AsyncGenerator[Emit, Message | None]:
    answer = yield status("input-required", "which date?")
    assert answer is not None
    yield artifact(f"booked {ctx.text} on {answer.text}", name="booking")


def _query_decisions(params: Any) -> Any:
    query = (params or {}).get("query", "")
    return {"decisions": [{"id": "d-1", "title": f"{query}: use PostgreSQL"}]}


async def _watch_decisions(params: Any) -> AsyncIterator[Any]:
    for step in ("proposed", "reviewed", "accepted"):
        await anyio.sleep(0.01)
        yield {"id": "d-1", "status": step}


def make_agent(dialect: str, binding: str) -> FakeAgent:
    agent = FakeAgent(
        dialect=dialect,  # type: ignore[arg-type]
        binding=binding,  # type: ignore[arg-type]
        name=f"Docs agent ({dialect})",
        skills={
            "work": _work,
            "image.resize": _resize,
            "invoice": _invoice,
            "booking": _booking,
        },
        default_skill="work",
    )
    agent.add_method("cstp.queryDecisions", _query_decisions)
    agent.add_method("cstp.watchDecisions", _watch_decisions)
    return agent


async def openai_chat(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> dict[str, Any]:
    """A model behind the OpenAI Chat Completions API, as the docs' tool loops call it (the
    assistant's message, as a dict): asked by the user, it calls the first tool with the
    user's words; given the tool's answer, it says it."""
    last = messages[-1]
    if last["role"] == "tool":
        return {"role": "assistant", "content": f"The agent says: {last['content']}"}
    function = {
        "name": tools[0]["function"]["name"],
        "arguments": json.dumps({"text": last["content"]}),
    }
    call = {"id": "call_1", "type": "function", "function": function}
    return {"role": "assistant", "content": None, "tool_calls": [call]}


async def anthropic_messages(
    messages: list[dict[str, Any]], tools: list[dict[str, Any]]
) -> dict[str, Any]:
    """The same model behind the Anthropic Messages API (the response, as a dict)."""
    last = messages[-1]
    if isinstance(last["content"], list) and last["content"][0]["type"] == "tool_result":
        said = last["content"][0]["content"]
        return {
            "content": [{"type": "text", "text": f"The agent says: {said}"}],
            "stop_reason": "end_turn",
        }
    use = {
        "type": "tool_use",
        "id": "toolu_1",
        "name": tools[0]["name"],
        "input": {"text": last["content"]},
    }
    return {"content": [use], "stop_reason": "tool_use"}


class World:
    """The docs' agents, served until ``close()``; ``url`` and ``urls`` are their addresses."""

    def __init__(self) -> None:
        self._stack = ExitStack()
        portal = self._stack.enter_context(start_blocking_portal("asyncio"))
        self.agents: list[FakeAgent] = []
        self.urls: list[str] = []
        for dialect, binding in SPECS:
            agent = make_agent(dialect, binding)
            self._stack.enter_context(portal.wrap_async_context_manager(agent.serve()))
            self.agents.append(agent)
            self.urls.append(agent.url)
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
            "openai_chat": lambda: openai_chat,
            "anthropic_messages": lambda: anthropic_messages,
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
