"""``a2a-anyio demo``: three local agents of different dialects and speeds, one streaming
request fanned out to all of them, the laggard cancelled at a deadline, a summary table.

Everything runs on 127.0.0.1 with the testing kit's FakeAgent; nothing needs configuring.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, nullcontext
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import anyio
from rich.live import Live

from a2a_anyio import A2ATimeoutError, AgentPool, MessageStream, merge_streams
from a2a_anyio.cli import _render as r
from a2a_anyio.cli._errors import OK
from a2a_anyio.cli._live import AgentRow, FanOutView

if TYPE_CHECKING:
    from a2a_anyio.cli._context import Context
    from a2a_anyio.testing import Emit, FakeAgent, SkillContext

PROMPT = "Summarise today's A2A news"
DEADLINE = 3.0
CHUNKS = ("Agents ", "talk to ", "agents, ", "on asyncio ", "and trio.")


@dataclass(frozen=True, slots=True)
class DemoAgent:
    """One demo agent: who it is, which dialect and binding it speaks, how slow it writes."""

    name: str
    dialect: str
    binding: str
    gap: float

    @property
    def speaks(self) -> str:
        binding = "JSON-RPC" if self.binding == "jsonrpc" else "HTTP+JSON"
        version = "tasks/send (legacy)" if self.dialect == "legacy" else f"v{self.dialect}"
        return f"{version} over {binding}"


AGENTS = (
    DemoAgent("newsroom", "1.0", "jsonrpc", 0.15),
    DemoAgent("translator", "0.3", "rest", 0.3),
    # The laggard: five chunks a second and a half apart cannot beat the deadline.
    DemoAgent("archivist", "legacy", "jsonrpc", 1.5),
)


def _writer(gap: float) -> Any:
    async def summarise(ctx: SkillContext) -> AsyncIterator[Emit]:
        from a2a_anyio.testing import artifact, status

        yield status("working", f"reading about: {ctx.text}")
        for i, words in enumerate(CHUNKS):
            await anyio.sleep(gap)
            yield artifact(words, name="summary", append=i > 0, last_chunk=i == len(CHUNKS) - 1)
        yield status("completed", "summary written")

    return summarise


def _agent(spec: DemoAgent) -> FakeAgent:
    from a2a_anyio.testing import FakeAgent

    return FakeAgent(
        dialect=spec.dialect,  # type: ignore[arg-type]
        binding=spec.binding,  # type: ignore[arg-type]
        name=spec.name.capitalize(),
        description=f"A demo agent that speaks {spec.speaks}",
        skills={"summarise": _writer(spec.gap)},
    )


async def run_demo(ctx: Context) -> int:
    """Serve the demo agents, discover them, fan a stream out, cut the laggard, summarise."""
    p = ctx.p
    async with AsyncExitStack() as stack:
        served = [await stack.enter_async_context(_agent(a).serve()) for a in AGENTS]
        pool = await stack.enter_async_context(AgentPool(timeout=10))
        rows = [AgentRow(spec.name, agent.url) for spec, agent in zip(AGENTS, served, strict=True)]
        cards = []
        if not p.json_mode:
            p.line(f"Discovering {len(AGENTS)} demo agents on 127.0.0.1 ...")
        for spec, agent in zip(AGENTS, served, strict=True):
            card = await pool.client(agent.url).get_card()
            cards.append(card)
            if not p.json_mode:
                p.line(f"  {spec.name:<11} {card.name!r} at {agent.url}, speaks {spec.speaks}")
        streams: dict[str, MessageStream] = {
            spec.name: pool.client(agent.url).stream_message(
                PROMPT, metadata={"skillId": "summarise"}
            )
            for spec, agent in zip(AGENTS, served, strict=True)
        }
        if not p.json_mode:
            p.line(f"Streaming {PROMPT!r} to all of them, with a {DEADLINE:.0f}s deadline ...")
        by_name = {row.name: row for row in rows}
        shown: dict[str, str] = {}
        live = (
            Live(FanOutView(rows), console=p.console, refresh_per_second=12, transient=True)
            if p.rich
            else nullcontext()
        )
        with live:
            async with merge_streams(streams, timeout=DEADLINE) as merged:
                async for name, event in merged:
                    row = by_name[name]
                    stream = streams[name]
                    if isinstance(event, Exception):
                        row.fail(event, ctx.failure(event))
                    else:
                        row.apply(event)
                        if stream.finished and stream.task is not None:
                            row.finish(stream.task)
                    progress = f"  {name}: {row.state}" + (f": {row.latest}" if row.latest else "")
                    if not p.rich and not p.json_mode and progress != shown.get(name):
                        shown[name] = progress
                        p.line(progress)
    if p.json_mode:
        p.json({"agents": [_row_json(spec, row) for spec, row in zip(AGENTS, rows, strict=True)]})
        return OK
    summary = [
        [
            spec.name,
            spec.speaks,
            row.state_text() if p.rich else row.state,
            f"{row.elapsed:.2f}s",
            r.one_line(row.latest, 50),
        ]
        for spec, row in zip(AGENTS, rows, strict=True)
    ]
    p.table(["Agent", "Speaks", "State", "Time", "Result"], summary, title="Summary")
    return OK


def _row_json(spec: DemoAgent, row: AgentRow) -> dict[str, Any]:
    return {
        "agent": spec.name,
        "speaks": spec.speaks,
        "state": row.state,
        "elapsed": round(row.elapsed, 3),
        "result": row.latest,
        "cancelled": isinstance(row.error, A2ATimeoutError),
    }
