"""One contender of ``grpc_loopback.py`` in a process of its own; prints one JSON line.

    python bench/grpc_child.py CONTENDER BACKEND URL bench CALLS EVENTS
    python bench/grpc_child.py CONTENDER BACKEND URL cancel

URL is ``grpc_server.py``'s HTTP base (its card lists its JSON-RPC and gRPC interfaces).
Contenders, each built as a user builds it, on its defaults:

- ``a2a-anyio`` (asyncio or trio; the project's environment): ``A2AClient(url,
  bindings=("grpc",))``, the card discovered before the clock starts; ``send_message`` and
  ``stream_message`` (every event typed and folded into the task);
- ``a2a-anyio-jsonrpc``: the same with ``bindings=("jsonrpc",)``, over the server's
  JSON-RPC interface;
- in ``bench/.venv-grpc`` (asyncio only): ``grpcio``, the raw stub of a2a-sdk's
  ``a2a_pb2_grpc`` on ``grpc.aio.insecure_channel`` (the target read from the card), the
  answers left as protobuf messages; ``a2a-sdk``, its ``Client`` from
  ``ClientFactory.create_from_url`` with the GRPC binding.

``bench``: a warm-up (20 sends and a 50-event stream), then CALLS unary sends of ``ping``
(answered with a Message) one after the other, then one stream of EVENTS artifact chunks
(EVENTS + 3 events: the task, working, the chunks, completed), each after a
``gc.collect()``; CPU is the process's ``time.process_time()`` (every thread: grpcio's too).
``cancel``: a ``slow`` stream left by cancelling the caller's scope after 3 events, then
one cut by a 0.3 s deadline; says when each scope ended, for the server's log to be
compared with. At module level this file imports what both environments have.
"""

from __future__ import annotations

import gc
import json
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

import anyio

METADATA = (("a2a-version", "1.0"),)
WARM_CALLS, WARM_EVENTS = 20, 50

Send = Callable[[], Awaitable[None]]
Stream = Callable[[str], AbstractAsyncContextManager[AsyncIterator[Any]]]


async def _anyio(stack: AsyncExitStack, url: str, binding: str) -> tuple[Send, Stream]:
    from a2a_anyio import A2AClient, Message

    client = await stack.enter_async_context(A2AClient(url, bindings=(binding,)))
    await client.get_card()

    async def send() -> None:
        answer = await client.send_message("ping")
        assert isinstance(answer, Message) and answer.text == "pong", answer

    @asynccontextmanager
    async def stream(text: str) -> AsyncIterator[AsyncIterator[Any]]:
        async with client.stream_message(text) as events:
            yield events.__aiter__()

    return send, stream


async def _grpc(stack: AsyncExitStack, url: str) -> tuple[Send, Stream]:
    return await _anyio(stack, url, "grpc")


async def _jsonrpc(stack: AsyncExitStack, url: str) -> tuple[Send, Stream]:
    return await _anyio(stack, url, "jsonrpc")


def _request(pb: Any, text: str) -> Any:
    return pb.SendMessageRequest(
        message=pb.Message(
            role=pb.ROLE_USER, parts=[pb.Part(text=text)], message_id=str(uuid.uuid4())
        )
    )


async def _grpcio(stack: AsyncExitStack, url: str) -> tuple[Send, Stream]:
    import grpc.aio
    import httpx
    from a2a.types import a2a_pb2 as pb
    from a2a.types import a2a_pb2_grpc

    async with httpx.AsyncClient() as http:
        card = (await http.get(f"{url}/.well-known/agent-card.json")).json()
    (target,) = (i["url"] for i in card["supportedInterfaces"] if i["protocolBinding"] == "GRPC")
    channel = await stack.enter_async_context(grpc.aio.insecure_channel(target))
    stub = a2a_pb2_grpc.A2AServiceStub(channel)

    async def send() -> None:
        answer = await stub.SendMessage(_request(pb, "ping"), metadata=METADATA)
        assert answer.message.parts[0].text == "pong"

    @asynccontextmanager
    async def stream(text: str) -> AsyncIterator[AsyncIterator[Any]]:
        call = stub.SendStreamingMessage(_request(pb, text), metadata=METADATA)
        try:
            yield call.__aiter__()
        finally:
            call.cancel()

    return send, stream


async def _sdk(stack: AsyncExitStack, url: str) -> tuple[Send, Stream]:
    import grpc.aio
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import a2a_pb2 as pb

    async def make(streaming: bool) -> Any:
        config = ClientConfig(
            streaming=streaming,
            grpc_channel_factory=grpc.aio.insecure_channel,
            supported_protocol_bindings=["GRPC"],
        )
        client = await ClientFactory(config).create_from_url(url)
        stack.push_async_callback(client.close)
        return client

    unary, streaming = await make(False), await make(True)

    async def send() -> None:
        last: Any = None
        async for event in unary.send_message(_request(pb, "ping")):
            last = event
        assert last is not None and last.message.parts[0].text == "pong"

    @asynccontextmanager
    async def stream(text: str) -> AsyncIterator[AsyncIterator[Any]]:
        events = streaming.send_message(_request(pb, text))
        try:
            yield events
        finally:
            await events.aclose()

    return send, stream


CONTENDERS = {"a2a-anyio": _grpc, "a2a-anyio-jsonrpc": _jsonrpc, "grpcio": _grpcio, "a2a-sdk": _sdk}


def _check_binding(contender: str) -> None:
    """The a2a-anyio rows went over the binding they name (``_grpc`` loads at the first
    gRPC call only)."""
    if contender.startswith("a2a-anyio"):
        over_grpc = "a2a_anyio._grpc_transport" in sys.modules
        assert over_grpc == (contender == "a2a-anyio"), (contender, over_grpc)


async def _read(stream: Stream, text: str) -> int:
    n = 0
    async with stream(text) as events:
        async for _ in events:
            n += 1
    return n


async def bench(contender: str, url: str, calls: int, events: int) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        send, stream = await CONTENDERS[contender](stack, url)
        for _ in range(WARM_CALLS):
            await send()
        warm = await _read(stream, f"stream {WARM_EVENTS}")
        assert warm == WARM_EVENTS + 3, warm
        latencies = []
        gc.collect()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for _ in range(calls):
            t = time.perf_counter()
            await send()
            latencies.append(time.perf_counter() - t)
        cpu1, wall1 = time.process_time(), time.perf_counter()
        gc.collect()
        cpu2, wall2 = time.process_time(), time.perf_counter()
        n = await _read(stream, f"stream {events}")
        cpu3, wall3 = time.process_time(), time.perf_counter()
    assert n == events + 3, n  # the task, working, the chunks, completed
    _check_binding(contender)
    return {
        "unary_cpu_us": (cpu1 - cpu0) / calls * 1e6,
        "unary_wall_us": (wall1 - wall0) / calls * 1e6,
        "unary_p50_us": statistics.median(latencies) * 1e6,
        "stream_cpu_us": (cpu3 - cpu2) / n * 1e6,
        "stream_events_s": n / (wall3 - wall2),
    }


async def cancel(contender: str, url: str) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        _, stream = await CONTENDERS[contender](stack, url)
        seen = 0
        with anyio.CancelScope() as scope:
            async with stream("slow") as messages:
                async for _ in messages:
                    seen += 1
                    if seen == 3:
                        cancelled_at = time.monotonic()
                        scope.cancel()
        left_at = time.monotonic()
        await anyio.sleep(0.5)  # the server's log line, before this process goes
        started = time.monotonic()
        with anyio.move_on_after(0.3) as deadline:
            await _read(stream, "slow")
        expired_at = time.monotonic()
        await anyio.sleep(0.5)
    _check_binding(contender)
    return {
        "cancelled_at": cancelled_at,
        "left_at": left_at,
        "deadline_started": started,
        "deadline_hit": deadline.cancelled_caught,
        "deadline_expired_at": expired_at,
    }


def main() -> None:
    contender, backend, url, mode, *rest = sys.argv[1:]
    if mode == "bench":
        result = anyio.run(bench, contender, url, int(rest[0]), int(rest[1]), backend=backend)
    else:
        result = anyio.run(cancel, contender, url, backend=backend)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
