"""Mistakes in options passed on that mypy must refuse (it runs on this file; pytest does not
collect it). Each ``type: ignore`` names the error mypy gives: with ``warn_unused_ignores``, a
check that no longer happens fails mypy."""

from __future__ import annotations

from a2a_anyio import AgentPool, AgentRegistry, SyncA2AClient, SyncAgentPool, send_text


async def mistakes() -> None:
    SyncA2AClient("http://agent.test", timeuot=3)  # type: ignore[call-arg]
    SyncA2AClient("http://agent.test", timeout="3")  # type: ignore[arg-type]
    AgentPool(retries=2)  # type: ignore[call-arg]
    SyncAgentPool(max_connections="many")  # type: ignore[arg-type]
    await send_text("http://agent.test", "hi", idle_timeout="5")  # type: ignore[arg-type]


def registry_mistakes(registry: AgentRegistry) -> None:
    registry.client("alpha", retries=2)  # type: ignore[call-arg]
    registry.client("alpha", timeout="3")  # type: ignore[arg-type]
    registry.entry("alpha").client(verify=1.5)  # type: ignore[arg-type]
    registry.entry("alpha").client_options()["timeuot"]  # type: ignore[typeddict-item]
