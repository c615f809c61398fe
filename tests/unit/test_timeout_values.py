"""One meaning for every time limit: None is no limit, otherwise a positive, finite number of
seconds. Anything else is refused before a request is sent, with an error that says what is
accepted; a stream, whose limits have other names, says them when given ``timeout=``."""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from typing import Any

import httpx
import pytest

from a2a_anyio import (
    A2AClient,
    AgentPool,
    SyncA2AClient,
    fan_out,
    fan_out_stream,
)

from ._support import BASE, FakeAgent, v1_card

pytestmark = pytest.mark.anyio

ACCEPTED = r"must be a positive, finite number of seconds or None \(no limit\), not "
REFUSED_VALUES = [
    pytest.param(0, ValueError, "0", id="zero"),
    pytest.param(-1, ValueError, "-1", id="negative"),
    pytest.param(math.nan, ValueError, "nan", id="nan"),
    pytest.param(math.inf, ValueError, "inf", id="inf"),
    pytest.param("5", TypeError, "str", id="str"),
    pytest.param(True, TypeError, "bool", id="bool"),
]


def client_of(agent: FakeAgent, **options: Any) -> A2AClient:
    return A2AClient(BASE, http_client=httpx.AsyncClient(transport=agent.transport()), **options)


@pytest.mark.parametrize(("value", "error", "shown"), REFUSED_VALUES)
@pytest.mark.parametrize("name", ["timeout", "idle_timeout", "connect_timeout"])
def test_a_client_s_limits_are_checked(name: str, value: Any, error: type, shown: str) -> None:
    with pytest.raises(error, match=rf"^{name} {ACCEPTED}{shown}$"):
        A2AClient(BASE, **{name: value})
    with pytest.raises(error, match=rf"^{name} {ACCEPTED}{shown}$"):
        SyncA2AClient(BASE, **{name: value})
    if name == "timeout":
        with pytest.raises(error, match=rf"^timeout {ACCEPTED}{shown}$"):
            AgentPool(timeout=value)


def calls(client: A2AClient) -> dict[str, Callable[[Any], Awaitable[Any]]]:
    """Every operation that takes a call's ``timeout=``."""
    return {
        "send_message": lambda t: client.send_message("hi", timeout=t),
        "get_task": lambda t: client.get_task("t-1", timeout=t),
        "list_tasks": lambda t: client.list_tasks(timeout=t),
        "cancel_task": lambda t: client.cancel_task("t-1", timeout=t),
        "get_card": lambda t: client.get_card(timeout=t),
        "get_extended_card": lambda t: client.get_extended_card(timeout=t),
        "call": lambda t: client.call("x.y", timeout=t),
        "ping": lambda t: client.ping(timeout=t),
        "wait": lambda t: client.wait("t-1", timeout=t),
        "create_push_config": lambda t: client.create_push_config(
            "t-1", "https://hook.example/cb", timeout=t
        ),
        "get_push_config": lambda t: client.get_push_config("t-1", "c", timeout=t),
        "list_push_configs": lambda t: client.list_push_configs("t-1", timeout=t),
        "delete_push_config": lambda t: client.delete_push_config("t-1", "c", timeout=t),
        "as_tool": lambda t: client.as_tool(timeout=t),
    }


@pytest.mark.parametrize(("value", "error", "shown"), REFUSED_VALUES)
async def test_a_call_s_timeout_is_checked_before_anything_is_sent(
    value: Any, error: type, shown: str
) -> None:
    agent = FakeAgent(v1_card())
    async with client_of(agent) as client:
        for operation, call in calls(client).items():
            with pytest.raises(error, match=rf"^timeout {ACCEPTED}{shown}$"):
                await call(value)
            if operation != "as_tool":  # the card first: the tool is made from it
                assert agent.requests == [], operation


@pytest.mark.parametrize(("value", "error", "shown"), REFUSED_VALUES)
async def test_the_limits_of_streams_pools_and_fan_outs_are_checked(
    value: Any, error: type, shown: str
) -> None:
    agent = FakeAgent(v1_card())
    http = httpx.AsyncClient(transport=agent.transport())
    async with client_of(agent) as client, AgentPool(http_client=http) as pool:
        for name in ("idle_timeout", "total_timeout"):
            with pytest.raises(error, match=rf"^{name} {ACCEPTED}{shown}$"):
                client.stream_message("hi", **{name: value})
            with pytest.raises(error, match=rf"^{name} {ACCEPTED}{shown}$"):
                client.subscribe("t-1", **{name: value})
        with pytest.raises(error, match=rf"^timeout {ACCEPTED}{shown}$"):
            await pool.send(BASE, text="hi", timeout=value)
        with pytest.raises(error, match=rf"^timeout {ACCEPTED}{shown}$"):
            await fan_out([client], "hi", timeout=value)
        with pytest.raises(error, match=rf"^timeout {ACCEPTED}{shown}$"):
            await pool.fan_out([BASE], "hi", timeout=value)
        for name in ("timeout", "stream_timeout"):
            with pytest.raises(error, match=rf"^{name} {ACCEPTED}{shown}$"):
                fan_out_stream([client], "hi", **{name: value})
    assert agent.requests == []


async def test_none_is_no_limit_and_numbers_are_seconds() -> None:
    agent = FakeAgent(v1_card())
    agent.results["GetTask"] = {"id": "t-1", "status": {"state": "TASK_STATE_COMPLETED"}}
    async with client_of(agent, timeout=None, idle_timeout=None) as client:
        for limit in (None, 1, 2.5):
            assert (await client.get_task("t-1", timeout=limit)).id == "t-1"


async def test_a_stream_given_timeout_names_its_limits() -> None:
    said = (
        r"^stream_message\(\) takes no timeout=: did you mean total_timeout= \(the whole stream\)"
    )
    async with client_of(FakeAgent(v1_card())) as client:
        with pytest.raises(TypeError, match=said):
            client.stream_message("hi", timeout=5)  # type: ignore[call-arg]
        with pytest.raises(TypeError, match=r"^subscribe\(\) takes no timeout=: did you mean"):
            client.subscribe("t-1", timeout=5)  # type: ignore[call-arg]
        with pytest.raises(TypeError, match=said):
            client.conversation().stream("hi", timeout=5)  # type: ignore[call-arg]


def test_a_sync_stream_given_timeout_names_its_limits() -> None:
    with SyncA2AClient(BASE) as client, pytest.raises(TypeError, match="did you mean total_t"):
        client.stream_message("hi", timeout=5)  # type: ignore[call-arg]
