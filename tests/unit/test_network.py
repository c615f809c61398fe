"""Deadlines kept by the sockets' own timeouts: the clipping, and which clients use it."""

from __future__ import annotations

import anyio
import httpx
import pytest

from a2a_anyio import A2AClient
from a2a_anyio._http import keeps_deadlines, make_client
from a2a_anyio._network import DEADLINE, clip

from ._support import RPC_URL, on_mock_clock

pytestmark = pytest.mark.anyio


@on_mock_clock()
async def test_clip_to_the_time_left() -> None:
    assert clip(5.0) == 5.0
    assert clip(None) is None
    token = DEADLINE.set(anyio.current_time() + 2.0)
    try:
        assert clip(5.0) == pytest.approx(2.0)
        assert clip(None) == pytest.approx(2.0)
        assert clip(1.0) == 1.0
        await anyio.sleep(3)
        assert clip(5.0) == 0.0  # passed: the next socket operation times out at once
    finally:
        DEADLINE.reset(token)
    assert clip(5.0) == 5.0


async def test_the_clients_the_library_makes_keep_deadlines_in_their_sockets() -> None:
    async with make_client() as made, make_client(max_connections=3) as capped:
        assert keeps_deadlines(made)
        assert keeps_deadlines(capped)
    async with A2AClient(endpoint=RPC_URL) as client:
        assert client._http.deadline_by_transport


async def test_other_clients_get_a_cancel_scope() -> None:
    mock = httpx.MockTransport(lambda request: httpx.Response(200))
    async with httpx.AsyncClient() as plain, httpx.AsyncClient(transport=mock) as mocked:
        assert not keeps_deadlines(plain)  # the user's own client is left as it is
        assert not keeps_deadlines(mocked)
        async with A2AClient(endpoint=RPC_URL, http_client=plain) as client:
            assert not client._http.deadline_by_transport


async def test_a_capped_pool_is_seen_through_a_shared_client() -> None:
    async with make_client(max_connections=2) as capped, make_client() as free:
        async with A2AClient(endpoint=RPC_URL, http_client=capped) as client:
            assert client._http._capped_pool
        async with A2AClient(endpoint=RPC_URL, http_client=free) as client:
            assert not client._http._capped_pool
