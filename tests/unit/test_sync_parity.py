"""The sync facade mirrors the async API: every public method of the async class exists on its
blocking twin with the same parameters (names, kinds, defaults), so the README's "the same
operations, with the same arguments" cannot drift."""

from __future__ import annotations

import inspect
from typing import Any

import pytest

from a2a_anyio import (
    A2AClient,
    AgentPool,
    AgentTool,
    MessageStream,
    SyncA2AClient,
    SyncAgentPool,
    SyncAgentTool,
    SyncMessageStream,
)

# Async-only members and their blocking spellings.
RENAMED = {"aclose": "close"}
# Members the facade leaves out on purpose: asyncio/trio plumbing with no blocking meaning.
ASYNC_ONLY = {
    A2AClient: {"cancel_guard"},
    AgentPool: {"fan_out_stream", "expand", "http_client", "registry"},
    MessageStream: {"resumes", "cancel_guard"},
}
PAIRS = [
    (A2AClient, SyncA2AClient),
    (AgentPool, SyncAgentPool),
    (MessageStream, SyncMessageStream),
    (AgentTool, SyncAgentTool),
]


def _public(cls: type) -> dict[str, Any]:
    return {
        name: member
        for name, member in inspect.getmembers(cls)
        if not name.startswith("_") and (callable(member) or isinstance(member, property))
    }


def _params(member: Any) -> list[tuple[str, Any, Any]]:
    if isinstance(member, property):
        return []
    sig = inspect.signature(member)
    return [(p.name, p.kind, p.default) for p in list(sig.parameters.values())[1:]]


@pytest.mark.parametrize(("async_cls", "sync_cls"), PAIRS, ids=lambda c: c.__name__)
def test_the_facade_has_every_public_member_with_the_same_parameters(
    async_cls: type, sync_cls: type
) -> None:
    sync_members = _public(sync_cls)
    skipped = ASYNC_ONLY.get(async_cls, set())
    for name, member in _public(async_cls).items():
        if name in skipped:
            continue
        twin = sync_members.get(RENAMED.get(name, name))
        assert twin is not None, f"{sync_cls.__name__} has no {name}"
        assert isinstance(twin, property) == isinstance(member, property), name
        assert _params(twin) == _params(member), f"{sync_cls.__name__}.{name}"


def test_the_constructors_take_the_async_options() -> None:
    client = inspect.signature(A2AClient).parameters
    sync = inspect.signature(SyncA2AClient).parameters
    missing = set(client) - set(sync)
    # The facade passes **options through: it has no parameter of its own that hides one.
    assert missing == set() or any(p.kind is p.VAR_KEYWORD for p in sync.values()), missing


def test_the_facade_passes_the_new_arguments_through() -> None:
    seen: dict[str, Any] = {}

    async def call(method: str, params: Any = None, **options: Any) -> Any:
        seen.update(method=method, params=params, **options)
        return "ok"

    with SyncA2AClient("http://agent.test") as client:
        client.async_client.call = call  # type: ignore[method-assign]
        answer = client.call(
            "ext/read", {"q": 1}, idempotent=True, timeout=2, result_type=str, headers={"X-T": "t"}
        )
        assert answer == "ok"
    assert seen == {
        "method": "ext/read",
        "params": {"q": 1},
        "idempotent": True,
        "timeout": 2,
        "result_type": str,
        "on_event": None,
        "headers": {"X-T": "t"},
    }
