"""Fan-out: one question to several agents at once; ``first=k`` keeps the k fastest answers and
cancels the rest, ``timeout`` cuts the stragglers (their tasks are cancelled on their agents
too). Each agent's outcome is its AgentResult.

uv run python examples/fan_out_first.py                     # starts four local FakeAgents
uv run python examples/fan_out_first.py --backend trio
uv run python examples/fan_out_first.py --url URL --url URL2 --first 1
"""

from __future__ import annotations

import argparse
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack
from typing import Any

import anyio

from a2a_anyio import AgentPool, AgentResult, Task
from a2a_anyio.testing import Emit, FakeAgent, SkillContext, artifact, status

QUESTION = "Which port does the staging database listen on?"
# name -> seconds the agent thinks before answering (None: it answers with a JSON-RPC error)
LOCAL_AGENTS: dict[str, float | None] = {"fast": 0.1, "steady": 0.4, "broken": None, "slow": 3.0}


def answers_after(seconds: float) -> Callable[[SkillContext], AsyncIterator[Emit]]:
    async def answer(ctx: SkillContext) -> AsyncIterator[Emit]:
        yield status("working")
        await anyio.sleep(seconds)
        yield artifact(f"5432 (after {seconds}s of thought)")

    return answer


def local_agent(name: str, seconds: float | None) -> FakeAgent:
    agent = FakeAgent(name=name, skills={"answer": answers_after(seconds or 0)})
    if seconds is None:  # a fan-out streams to an agent that can: the stream fails
        agent.fault("stream", error=-32603, message="the knowledge base is offline")
    return agent


def show(results: Sequence[AgentResult], names: dict[str, str]) -> None:
    for r in results:
        name = names.get(r.agent, r.agent)
        if r.ok:
            assert r.value is not None
            state = r.value.status.state.value if isinstance(r.value, Task) else "message"
            outcome = f"ok ({state}) {r.value.text!r}"
        elif r.cancelled:
            outcome = f"cancelled ({type(r.error).__name__ if r.error else 'first reached'})"
        else:
            outcome = f"error {r.error}"
        print(f"  {name:<7} {r.elapsed:5.2f}s  {outcome}")


async def ask(pool: AgentPool, names: dict[str, str], label: str, **options: Any) -> None:
    print(f"{label}: {QUESTION!r} to {len(names)} agents")
    start = anyio.current_time()
    results = await pool.fan_out(list(names), QUESTION, **options)
    print(f"returned after {anyio.current_time() - start:.2f}s")
    show(results, names)


async def main(urls: Sequence[str], first: int, timeout: float) -> None:
    async with AsyncExitStack() as stack:
        names = {url: url for url in urls}  # URL -> what to call it
        if not urls:  # start the local agents, each on its own free port
            for name, seconds in LOCAL_AGENTS.items():
                agent = await stack.enter_async_context(local_agent(name, seconds).serve())
                names[agent.url] = name
        pool = await stack.enter_async_context(AgentPool(timeout=10))
        await ask(pool, names, f"first={first}, timeout={timeout}s", first=first, timeout=timeout)
        await ask(pool, names, "no first, timeout=1.0s", timeout=1.0)


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n", 1)[0].replace("``", ""))
    parser.add_argument(
        "--url", action="append", default=[], help="an agent (repeat; default: local)"
    )
    parser.add_argument("--first", type=int, default=2, help="how many answers to wait for")
    parser.add_argument("--timeout", type=float, default=2.0, help="the fan-out's deadline")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args()
    print(f"== {args.backend} ==")
    anyio.run(main, args.url, args.first, args.timeout, backend=args.backend)


if __name__ == "__main__":
    cli()
