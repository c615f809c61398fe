"""One gRPC contender in a process of its own, for ``grpc_spike.py``; prints one JSON line.

    python bench/grpc_child.py CONTENDER BACKEND PORT bench CALLS EVENTS
    python bench/grpc_child.py CONTENDER BACKEND PORT cancel

Contenders: ``h2`` (``grpc_h2.py``, route (b), asyncio or trio; the project's environment,
the messages of ``a2a_anyio._bindings.grpc_pb``), and in ``bench/.venv-grpc`` (asyncio
only): ``grpcio`` (the raw stub of a2a-sdk's ``a2a_pb2_grpc``) and ``a2a-sdk`` (its
``Client`` from ``ClientFactory``, the gRPC binding).

``bench``: CALLS unary ``SendMessage`` calls one after the other (each request built and
its answer parsed), then one ``SendStreamingMessage`` of EVENTS artifact chunks, each event
parsed; CPU is the process's ``time.process_time()`` (every thread: grpcio's too).
``cancel``: a slow stream cancelled by the caller's scope after 3 events, then one cut by
a 0.3 s deadline; says when each scope ended, for the server's log to be compared with.
"""

from __future__ import annotations

import json
import statistics
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from typing import Any

import anyio

V1 = "/lf.a2a.v1.A2AService/"
METADATA = (("a2a-version", "1.0"),)

Send = Callable[[], Awaitable[None]]
Stream = Callable[[str], AbstractAsyncContextManager[AsyncIterator[Any]]]


def _request(pb: Any, text: str) -> Any:
    return pb.SendMessageRequest(
        message=pb.Message(
            role=pb.ROLE_USER, parts=[pb.Part(text=text)], message_id=str(uuid.uuid4())
        )
    )


async def _h2(stack: AsyncExitStack, port: int) -> tuple[Send, Stream]:
    from grpc_h2 import Channel

    from a2a_anyio._bindings.grpc_pb import a2a_v1_pb2 as pb

    channel = await stack.enter_async_context(Channel("127.0.0.1", port))

    async def send() -> None:
        body = _request(pb, "ping").SerializeToString()
        answer = pb.SendMessageResponse.FromString(
            await channel.unary(V1 + "SendMessage", body, METADATA)
        )
        assert answer.message.parts[0].text == "pong"

    @asynccontextmanager
    async def stream(text: str) -> AsyncIterator[AsyncIterator[Any]]:
        body = _request(pb, text).SerializeToString()
        async with channel.stream(V1 + "SendStreamingMessage", body, METADATA) as messages:

            async def events() -> AsyncIterator[Any]:
                async for message in messages:
                    yield pb.StreamResponse.FromString(message)

            yield events()

    return send, stream


async def _grpcio(stack: AsyncExitStack, port: int) -> tuple[Send, Stream]:
    import grpc.aio
    from a2a.types import a2a_pb2 as pb
    from a2a.types import a2a_pb2_grpc

    channel = await stack.enter_async_context(grpc.aio.insecure_channel(f"127.0.0.1:{port}"))
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


async def _sdk(stack: AsyncExitStack, port: int) -> tuple[Send, Stream]:
    import grpc.aio
    from a2a.client import ClientConfig, ClientFactory
    from a2a.types import a2a_pb2 as pb

    target = f"127.0.0.1:{port}"
    card = pb.AgentCard(
        name="bench",
        description="bench agent",
        version="1.0.0",
        supported_interfaces=[
            pb.AgentInterface(protocol_binding="GRPC", url=target, protocol_version="1.0")
        ],
        capabilities=pb.AgentCapabilities(streaming=True),
        default_input_modes=["text/plain"],
        default_output_modes=["text/plain"],
    )

    def make(streaming: bool) -> Any:
        config = ClientConfig(
            streaming=streaming,
            grpc_channel_factory=grpc.aio.insecure_channel,
            supported_protocol_bindings=["GRPC"],
        )
        return ClientFactory(config).create(card)

    unary, streaming = make(False), make(True)
    stack.push_async_callback(unary.close)
    stack.push_async_callback(streaming.close)

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


CONTENDERS = {"h2": _h2, "grpcio": _grpcio, "a2a-sdk": _sdk}


async def bench(contender: str, port: int, calls: int, events: int) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        send, stream = await CONTENDERS[contender](stack, port)
        for _ in range(20):  # warm-up: connection, caches
            await send()
        latencies = []
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for _ in range(calls):
            t = time.perf_counter()
            await send()
            latencies.append(time.perf_counter() - t)
        cpu1, wall1 = time.process_time(), time.perf_counter()
        n = 0
        async with stream(f"stream {events}") as messages:
            async for _ in messages:
                n += 1
        cpu2, wall2 = time.process_time(), time.perf_counter()
    assert n == events + 3, n  # the task, working, the chunks, completed
    return {
        "unary_cpu_us": (cpu1 - cpu0) / calls * 1e6,
        "unary_wall_us": (wall1 - wall0) / calls * 1e6,
        "unary_p50_us": statistics.median(latencies) * 1e6,
        "stream_cpu_us": (cpu2 - cpu1) / n * 1e6,
        "stream_events_s": n / (wall2 - wall1),
    }


async def cancel(contender: str, port: int) -> dict[str, Any]:
    async with AsyncExitStack() as stack:
        _, stream = await CONTENDERS[contender](stack, port)
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
            async with stream("slow") as messages:
                async for _ in messages:
                    pass
        expired_at = time.monotonic()
        await anyio.sleep(0.5)
    return {
        "cancelled_at": cancelled_at,
        "left_at": left_at,
        "deadline_started": started,
        "deadline_hit": deadline.cancelled_caught,
        "deadline_expired_at": expired_at,
    }


def main() -> None:
    contender, backend, port, mode, *rest = sys.argv[1:]
    if mode == "bench":
        result = anyio.run(bench, contender, int(port), int(rest[0]), int(rest[1]), backend=backend)
    else:
        result = anyio.run(cancel, contender, int(port), backend=backend)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
