"""A gRPC call cut by its deadline ends on the server too: the server's handler of the call
stops, on a2a-sdk 1.x's gRPC server (its v1.0 and v0.3 services) and on a2a-sdk 0.3.x's, whose
unary ``SendMessage`` handler, once cancelled, still waits for its agent (so a blocking send
to it goes as a stream, whose handler ends at once). The servers count the handlers they run
(``GET /debug/grpc``, ``grpc_handlers.py``); the agent's ``slow`` task works for 30 s."""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable

import anyio
import httpx
import pytest

from a2a_anyio import A2AClient, A2ATimeoutError

pytestmark = [pytest.mark.anyio, pytest.mark.interop]

#: How long the server may take to end a handler once the client's deadline passed: far
#: below the 30 s of the agent's ``slow`` task.
HEARD_WITHIN = 5.0

SERVERS = [
    pytest.param(("sdk03_grpc_server", "auto"), id="sdk0.3"),
    pytest.param(("sdk1_grpc_server", "auto"), id="sdk1-v1.0"),
    pytest.param(("sdk1_grpc_server", "0.3"), id="sdk1-v0.3"),
]


async def _send(client: A2AClient, text: str) -> None:
    await client.send_message(text, timeout=1)


async def _stream(client: A2AClient, text: str) -> None:
    async with client.stream_message(text, total_timeout=1) as stream:
        async for _ in stream:
            pass


CALLS: dict[str, Callable[[A2AClient, str], Awaitable[None]]] = {
    "send": _send, "stream": _stream,
}  # fmt: skip


async def _running(http: httpx.AsyncClient, base: str, text: str) -> bool:
    """True while a handler of the server runs a request that carries ``text``."""
    reply = await http.get(f"{base}/debug/grpc")
    reply.raise_for_status()
    return any(text in request for request in reply.json()["calls"])


@pytest.mark.parametrize("call", list(CALLS))
@pytest.mark.parametrize("server", SERVERS)
async def test_the_server_ends_the_handler_of_a_call_cut_by_its_deadline(
    request: pytest.FixtureRequest, server: tuple[str, str], call: str
) -> None:
    fixture, protocol = server
    base: str = request.getfixturevalue(fixture)
    text = f"slow {uuid.uuid4()}"
    async with A2AClient(base, protocol=protocol) as client, httpx.AsyncClient() as http:
        with pytest.raises(A2ATimeoutError):
            await CALLS[call](client, text)
        with anyio.fail_after(HEARD_WITHIN):
            while await _running(http, base, text):
                await anyio.sleep(0.05)
