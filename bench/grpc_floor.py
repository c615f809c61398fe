"""The floor under a gRPC call: the server's bytes of real calls recorded once, then read
again without the server, so that the figures hold on a busy machine. Figures in
docs/performance.md ("gRPC").

    uv run --frozen python bench/grpc_floor.py [--backend asyncio|trio]

Against a2a-sdk 1.x's own server (``grpc_server.py``): ``--calls`` unary ``SendMessage``
calls through ``GrpcTransport.unary`` (the codec's request made once), then one stream of
``--events`` events; every piece of bytes the server sent is kept, in order. Then, CPU of
this process (``time.process_time()``), best of 7 rounds:

- ``socket``: the same calls' request bytes sent again over a real anyio socket to the
  server, each answer read up to its trailers by a walk over the frame headers (no h2, no
  HPACK, no codec): what the socket and the event loop cost a call, the floor of any
  client on anyio's streams;
- ``transport``: the calls made again through ``GrpcTransport`` over a stream that gives
  back the recorded bytes (each ``receive`` and ``send`` one pass of the event loop, no
  socket): the transport's own work, h2 included, with warm caches;
- ``h2``: the same calls into h2 alone, in the same order (sending, reading, windows).
"""

from __future__ import annotations

import argparse
import gc
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
from anyio.abc import ByteStream

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _serve import served  # noqa: E402
from grpc_loopback import grpc_python  # noqa: E402

ROUNDS = 7
H2_CALLS = ("initiate_connection", "update_settings", "increment_flow_control_window",
            "get_next_available_stream_id", "send_headers", "send_data", "receive_data",
            "acknowledge_received_data", "data_to_send", "reset_stream")  # fmt: skip


class Replayed(ByteStream):
    """Gives back recorded bytes, one piece a ``receive``; takes what is sent."""

    def __init__(self, pieces: list[bytes]) -> None:
        self._pieces = iter(pieces)

    async def send(self, item: bytes) -> None:
        await anyio.lowlevel.checkpoint()

    async def receive(self, max_bytes: int = 65536) -> bytes:
        await anyio.lowlevel.checkpoint()
        return next(self._pieces)

    async def send_eof(self) -> None:
        pass

    async def aclose(self) -> None:
        pass


async def grpc_url(url: str) -> str:
    from a2a_anyio import A2AClient

    async with A2AClient(url, bindings=("grpc",)) as client:
        card = await client.get_card()
    target = next(i.url for i in card.interfaces if i.binding == "GRPC")
    return target if "://" in target else f"http://{target}"


async def calls(
    url: str, n: int, events: int, connect: Any = None, mark: Any = None
) -> tuple[float, float]:
    """``n`` unary calls and a stream of ``events`` through the transport: CPU per call
    and per event (``connect``: the transport's connection, made by the caller; ``mark``
    called between the calls and the stream)."""
    from a2a_anyio import Message
    from a2a_anyio._auth import credentials
    from a2a_anyio._bindings import codec_for
    from a2a_anyio._dialects import Op, Send
    from a2a_anyio._grpc_transport import GrpcTransport
    from a2a_anyio._http import HttpTransport

    codec = codec_for("grpc", "1.0", url)
    request = codec.encode(Op.SEND, Send(Message.user("ping")))
    stream_request = codec.encode(Op.STREAM, Send(Message.user(f"stream {events}")))
    http = HttpTransport()
    grpc = GrpcTransport(http)
    if connect is not None:
        grpc._connect = connect  # the recorded bytes in place of a socket
    own = credentials(None, None, None, [url], "strip")
    await grpc.connection(url, request.context)
    gc.collect()
    start = time.process_time()
    for _ in range(n):
        await grpc.unary(request, own, request.context)
    unary = (time.process_time() - start) / n * 1e6
    if mark is not None:
        mark()
    call = grpc.stream(stream_request, own, idle_timeout=60, open_timeout=60)
    await call.open()
    got = 0
    start = time.process_time()
    while isinstance(await call.next_event(), bytes):
        got += 1
    event = (time.process_time() - start) / got * 1e6
    await call.aclose()
    await grpc.aclose()
    await http.aclose()
    return unary, event


def record(url: str, n: int, events: int) -> tuple[list[bytes], list[tuple[str, Any]], list[bytes]]:
    """The server's bytes, every call into h2 up to the stream, and what was sent, of one
    run of ``calls``."""
    import h2.connection

    received: list[bytes] = []
    log: list[tuple[str, Any]] = []
    sent: list[bytes] = []
    marks: list[int] = []
    originals = {name: getattr(h2.connection.H2Connection, name) for name in H2_CALLS}

    def wrap(name: str) -> Any:
        original = originals[name]

        def wrapper(self: Any, *args: Any, **kwargs: Any) -> Any:
            if name == "receive_data":
                received.append(bytes(args[0]))
            log.append((name, (args, kwargs)))
            out = original(self, *args, **kwargs)
            if name == "data_to_send" and out:
                sent.append(bytes(out))
            return out

        return wrapper

    for name in H2_CALLS:
        setattr(h2.connection.H2Connection, name, wrap(name))
    try:
        anyio.run(calls, url, n, events, None, lambda: marks.append(len(log)))
    finally:
        for name, original in originals.items():
            setattr(h2.connection.H2Connection, name, original)
    return received, log[: marks[0]], sent


def h2_alone(log: list[tuple[str, Any]]) -> float:
    """CPU of the recorded calls into h2, made again on a new connection (the transport's
    configuration)."""
    import h2.connection

    from a2a_anyio._grpc_transport import h2_config

    conn = h2.connection.H2Connection(h2_config())
    calls = [(getattr(conn, name), args, kwargs) for name, (args, kwargs) in log]
    gc.collect()
    start = time.process_time()
    for fn, args, kwargs in calls:
        fn(*args, **kwargs)
    return time.process_time() - start


async def socket_alone(url: str, sent: list[bytes], n: int) -> float:
    """CPU per call of the recorded unary calls' bytes over a real socket (see above)."""
    host, _, port = url.split("//")[1].partition(":")
    sock = await anyio.connect_tcp(host, int(port))
    heads = [piece for piece in sent if piece[3] == 1]  # a call's HEADERS, its DATA after
    buffer = bytearray()

    async def until_trailers() -> None:
        while True:
            while len(buffer) >= 9:
                length, kind, flags = int.from_bytes(buffer[:3], "big"), buffer[3], buffer[4]
                if len(buffer) < 9 + length:
                    break
                frame = bytes(buffer[: 9 + length])
                del buffer[: 9 + length]
                if kind == 4 and not flags & 1:  # SETTINGS: acknowledged
                    await sock.send(b"\x00\x00\x00\x04\x01\x00\x00\x00\x00")
                elif kind == 6 and not flags & 1:  # PING: answered
                    await sock.send(frame[:4] + b"\x01" + frame[5:])
                elif kind == 1 and flags & 1:  # the trailers
                    return
            buffer.extend(await sock.receive())

    await sock.send(sent[0])  # the preface and SETTINGS
    await sock.send(heads[0])
    await until_trailers()
    start = time.process_time()
    for head in heads[1:n]:
        await sock.send(head)
        await until_trailers()
    spent = (time.process_time() - start) / (n - 1) * 1e6
    await sock.aclose()
    return spent


async def replayed(url: str, pieces: list[bytes], n: int, events: int) -> tuple[float, float]:
    from urllib.parse import urlsplit

    from a2a_anyio._grpc_transport import _Connection

    async def connect(target: str, origin: Any, context: Any) -> _Connection:
        conn = _Connection(Replayed(pieces), urlsplit(target).netloc, origin[0])
        await conn.start()
        return conn

    return await calls(url, n, events, connect)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--events", type=int, default=3000)
    args = parser.parse_args()
    n, events, backend = args.calls, args.events, args.backend
    with (
        tempfile.TemporaryDirectory() as tmp,
        served("grpc_server.py", "--log", f"{tmp}/server.log", python=grpc_python()) as base,
    ):
        url = anyio.run(grpc_url, base)
        pieces, log, sent = record(url, n, events)
        sockets = [anyio.run(socket_alone, url, sent, n, backend=backend) for _ in range(ROUNDS)]
    h2s = [h2_alone(log) for _ in range(ROUNDS)]
    runs = [anyio.run(replayed, url, pieces, n, events, backend=backend) for _ in range(ROUNDS)]
    print(f"gRPC floor ({backend}; CPU us, best of {ROUNDS} rounds; {n} calls, {events} events)")
    print(f"  the socket and the event loop, per unary call (no h2)   {min(sockets):7.1f}")
    print(
        f"  the transport over recorded bytes, per unary call        {min(r[0] for r in runs):7.1f}"
    )
    print(
        f"  the transport over recorded bytes, per streamed event    {min(r[1] for r in runs):7.1f}"
    )
    print(f"  h2 alone, per unary call                                 {min(h2s) / n * 1e6:7.1f}")


if __name__ == "__main__":
    main()
