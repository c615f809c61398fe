"""Mistakes in options passed on that mypy must refuse (it runs on this file; pytest does not
collect it). Each ``type: ignore`` names the error mypy gives: with ``warn_unused_ignores``, a
check that no longer happens fails mypy."""

from __future__ import annotations

from a2a_anyio import (
    AgentPool,
    AgentRegistry,
    SyncA2AClient,
    SyncAgentPool,
    fan_out,
    fan_out_stream,
    send_text,
)


async def mistakes() -> None:
    SyncA2AClient("http://agent.test", timeuot=3)  # type: ignore[call-arg]
    SyncA2AClient("http://agent.test", timeout="3")  # type: ignore[arg-type]
    AgentPool(retries=2)  # type: ignore[call-arg]
    SyncAgentPool(max_connections="many")  # type: ignore[arg-type]
    await send_text("http://agent.test", "hi", idle_timeout="5")  # type: ignore[arg-type]


async def fan_out_mistakes(pool: AgentPool, sync_pool: SyncAgentPool) -> None:
    urls = ["http://a.test", "http://b.test"]
    await fan_out(urls, "hi", metdata={})  # type: ignore[call-arg]
    await fan_out(urls, "hi", history_length="3")  # type: ignore[arg-type]
    await pool.fan_out(urls, "hi", on_evnt=print)  # type: ignore[call-arg]
    await pool.fan_out(urls, "hi", blocking="yes")  # type: ignore[arg-type]
    sync_pool.fan_out(urls, "hi", header={})  # type: ignore[call-arg]
    fan_out_stream(urls, "hi", idle_timout=5)  # type: ignore[call-arg]
    fan_out_stream(urls, "hi", total_timeout="5")  # type: ignore[arg-type]
    pool.fan_out_stream(urls, "hi", resum=False)  # type: ignore[call-arg]
    pool.fan_out_stream(urls, "hi", on_event=print)  # type: ignore[call-arg]


def registry_mistakes(registry: AgentRegistry) -> None:
    registry.client("alpha", retries=2)  # type: ignore[call-arg]
    registry.client("alpha", timeout="3")  # type: ignore[arg-type]
    registry.entry("alpha").client(verify=1.5)  # type: ignore[arg-type]
    registry.entry("alpha").client_options()["timeuot"]  # type: ignore[typeddict-item]
