"""``ClientOptions``, ``ClientArguments``, ``AgentOptions`` and ``PoolOptions`` say exactly what ``A2AClient`` and
``AgentPool`` take, and ``SendOptions`` / ``StreamOptions`` what a conversation's turns take, so that every wrapper that passes options on is checked by type checkers
(``tests/unit/typing_client_options.py`` holds the mistakes mypy must refuse)."""

from __future__ import annotations

import inspect
from typing import Any

from a2a_anyio import (
    A2AClient,
    AgentPool,
    ClientOptions,
    FanOutOptions,
    FanOutStreamOptions,
    SendOptions,
    StreamOptions,
    SyncAgentPool,
    fan_out,
    fan_out_stream,
)
from a2a_anyio._options import AgentOptions, ClientArguments
from a2a_anyio._pool import PoolOptions


def _keywords(func: Any, *skip: str) -> dict[str, str]:
    """The keyword-only parameters of ``func`` and their annotations, as written."""
    params = inspect.signature(func).parameters.values()
    return {
        p.name: str(p.annotation) for p in params if p.kind is p.KEYWORD_ONLY and p.name not in skip
    }


def _written(typed_dict: Any) -> dict[str, str]:
    """A TypedDict's keys and their annotations, as written."""
    return {
        name: getattr(value, "__forward_arg__", value)
        for name, value in typed_dict.__annotations__.items()
    }


def test_client_options_are_the_clients_keyword_parameters() -> None:
    assert _written(ClientOptions) == _keywords(A2AClient.__init__)


def test_client_arguments_are_the_options_and_the_url() -> None:
    url = inspect.signature(A2AClient.__init__).parameters["url"]
    assert _written(ClientArguments) == {**_written(ClientOptions), "url": str(url.annotation)}


def test_pool_options_are_the_pools_own_and_an_agents() -> None:
    own = _keywords(AgentPool.__init__, "client_options")
    agent = _written(AgentOptions)
    assert _written(PoolOptions) == {**agent, **own}
    client = _written(ClientOptions)
    assert {k: v for k, v in client.items() if k not in agent} == {
        k: own[k] for k in ("verify", "timeout", "http_client", "logger", "tracing")
    }


def test_a_conversations_turn_options_are_the_calls_but_the_ids() -> None:
    ids = ("context_id", "task_id")
    assert _written(SendOptions) == _keywords(A2AClient.send_message, *ids)
    assert _written(StreamOptions) == _keywords(A2AClient.stream_message, *ids)


def test_a_fan_out_s_options_are_the_calls_but_its_own() -> None:
    """What a fan-out passes on to each send or stream: the call's options, but the ids and
    those the fan-out takes itself."""
    ids = ("context_id", "task_id")
    assert _written(FanOutOptions) == _keywords(
        A2AClient.send_message, *ids, "timeout", "cancel_on_exit"
    )
    assert _written(FanOutStreamOptions) == _keywords(
        A2AClient.stream_message, *ids, "cancel_on_exit"
    )
    sends: tuple[Any, ...] = (fan_out, AgentPool.fan_out, SyncAgentPool.fan_out)
    for func in sends:
        options = inspect.signature(func).parameters["send_options"]
        assert "Unpack[FanOutOptions]" in str(options.annotation)
    streams: tuple[Any, ...] = (fan_out_stream, AgentPool.fan_out_stream)
    for func in streams:
        options = inspect.signature(func).parameters["stream_options"]
        assert "Unpack[FanOutStreamOptions]" in str(options.annotation)
