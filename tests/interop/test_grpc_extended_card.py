"""a2a-sdk 0.3.x's gRPC service has ``GetAgentCard`` alone, which answers the public card:
from an agent whose card announces no extended card, ``get_extended_card()`` raises what a
v0.3 agent answers over JSON-RPC (-32007), and asks nothing."""

from __future__ import annotations

import pytest

from a2a_anyio import A2AClient, ExtendedCardNotConfiguredError

pytestmark = [pytest.mark.anyio, pytest.mark.interop]


async def test_no_extended_card_where_the_card_announces_none(sdk03_grpc_server: str) -> None:
    async with A2AClient(sdk03_grpc_server) as client:
        card = await client.get_card()
        assert not card.capabilities.extended_agent_card
        with pytest.raises(ExtendedCardNotConfiguredError):
            await client.get_extended_card()
        assert (await client.send_message("message ping")).text == "pong: message ping"
