"""The command line over gRPC: ``--binding grpc`` prefers a card's gRPC interface, and a card
whose only interface is gRPC is called over it (an agent of the suite's own, on both
backends, the CLI in a subprocess)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ..unit._support import v1_card
from ..unit.test_grpc_client import interface, served
from .conftest import closed_port, run

pytestmark = pytest.mark.anyio


async def test_binding_grpc_prefers_the_cards_grpc_interface(
    anyio_backend: str, tmp_path: Path
) -> None:
    async with served() as (url, agent):
        nowhere = f"http://127.0.0.1:{closed_port()}/rpc"
        card = v1_card(supportedInterfaces=[interface(nowhere, "JSONRPC"), interface(url)])
        path = tmp_path / "card.json"
        path.write_text(json.dumps(card))
        reply = await run(
            anyio_backend, "-a", str(path), "--binding", "grpc", "-o", "json", "send", "ping"
        )
        assert reply.code == 0, reply.err
        assert reply.json()["task"]["status"]["state"] == "TASK_STATE_COMPLETED"
        stream = await run(
            anyio_backend, "-a", str(path), "--binding", "grpc", "send", "--stream", "go"
        )
        assert stream.code == 0, stream.err
        assert stream.out.rstrip().endswith("State: completed")
        called = len(agent.calls)
        json_rpc = await run(anyio_backend, "-a", str(path), "send", "ping")  # JSON-RPC first
        assert json_rpc.code != 0
        assert len(agent.calls) == called  # it went to the JSON-RPC URL, not here
    assert {call.path.rpartition("/")[0] for call in agent.calls} == {"/lf.a2a.v1.A2AService"}
    assert [call.path for call in agent.calls].count(
        "/lf.a2a.v1.A2AService/SendStreamingMessage"
    ) == 2  # (a send to an agent that streams streams too)
