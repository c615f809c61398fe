"""Where a gRPC call's CPU goes, layer by layer, in one process (so that the shares hold
on a busy machine): a2a-anyio's client over its gRPC binding to a2a-sdk 1.x's own server
(``grpc_server.py``), beside the same calls made a layer lower each. Figures in
docs/performance.md ("gRPC").

    uv run --frozen python bench/grpc_layers.py [--backend asyncio|trio] [--calls N]

Per unary ``SendMessage`` (answered with a Message) and per streamed event (artifact
chunks), CPU of this process (``time.process_time()``), medians of 5 rounds, the layers
interleaved in each round:

- ``client``: ``A2AClient.send_message`` / ``stream_message``, all of it;
- ``transport``: ``GrpcTransport.unary`` with the codec's request made once / a stream's
  ``next_event`` loop: HTTP/2 and the socket, without the codec or the client's layers;
- ``codec``: the codec's ``encode`` and ``decode`` of the same call / one event's decode;
- ``h2``: h2's own work for the call (the request's HEADERS and DATA, the answer's frames
  read, the window acknowledged) against an in-memory h2 server, whose side is not timed;
- ``socket``: the I/O floor of one exchange on the backend: an anyio TCP stream sends
  the request's bytes and reads an answer of the same size as the gRPC one, from an echo
  server in a process of its own (``--echo``).

The rest is named by difference: the client's layers (client - transport - codec), and the
transport's own bookkeeping (transport - h2 - socket).
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _serve import served, started  # noqa: E402
from grpc_loopback import grpc_python  # noqa: E402

ROUNDS = 5


def _cpu(fn: Callable[[], object], n: int) -> float:
    gc.collect()
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1e6


async def _acpu(fn: Callable[[], Awaitable[object]], n: int) -> float:
    gc.collect()
    start = time.process_time()
    for _ in range(n):
        await fn()
    return (time.process_time() - start) / n * 1e6


def _h2_pair(path: bytes, headers: list[tuple[bytes, bytes]]) -> Callable[[int], float]:
    """The CPU of one unary exchange's h2 work on the client's side, against an in-memory
    server (the server's side not timed), over N exchanges."""
    import h2.config
    import h2.connection
    import h2.settings

    from a2a_anyio._grpc_transport import CONNECTION_WINDOW, WINDOW

    client = h2.connection.H2Connection(
        h2.config.H2Configuration(
            client_side=True, header_encoding=None, validate_outbound_headers=False
        )
    )
    server = h2.connection.H2Connection(
        h2.config.H2Configuration(client_side=False, header_encoding=None)
    )
    client.initiate_connection()
    client.update_settings({h2.settings.SettingCodes.INITIAL_WINDOW_SIZE: WINDOW})
    client.increment_flow_control_window(CONNECTION_WINDOW - 65535)
    server.initiate_connection()
    for _ in range(2):
        server.receive_data(client.data_to_send())
        client.receive_data(server.data_to_send())
    request = [(b":method", b"POST"), (b":scheme", b"http"), (b":path", path),
               (b":authority", b"127.0.0.1"), *headers]  # fmt: skip
    message = b"\0\0\0\0\x5a" + b"m" * 90
    timed = [0.0]

    def one() -> None:
        stream_id = client.get_next_available_stream_id()
        start = time.process_time()
        client.send_headers(stream_id, request)
        client.send_data(stream_id, b"\0\0\0\0\x32" + b"r" * 50, end_stream=True)
        out = client.data_to_send()
        timed[0] += time.process_time() - start
        server.receive_data(out)
        server.send_headers(
            stream_id, [(b":status", b"200"), (b"content-type", b"application/grpc")]
        )
        server.send_data(stream_id, message)
        server.send_headers(
            stream_id, [(b"grpc-status", b"0"), (b"grpc-message", b"")], end_stream=True
        )
        answer = server.data_to_send()
        start = time.process_time()
        client.receive_data(answer)
        client.acknowledge_received_data(len(message), stream_id)
        server.receive_data(client.data_to_send())
        timed[0] += time.process_time() - start

    def per_call(n: int) -> float:
        timed[0] = 0.0
        for _ in range(n):
            one()
        return timed[0] / n * 1e6

    return per_call


ANSWER = 152  # the bytes of a2a-sdk's server's answer to a ``ping`` (headers, message, trailers)


def echo() -> None:
    """The echo server: an answer of ``ANSWER`` bytes to each read, one thread a client."""
    import socket
    import threading

    def serve(conn: socket.socket) -> None:
        with conn:
            conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            while conn.recv(65536):
                conn.sendall(b"a" * ANSWER)

    listener = socket.create_server(("127.0.0.1", 0))
    print(listener.getsockname()[1], flush=True)

    def accept() -> None:
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()  # until the bench closes it


async def main(
    backend: str, calls: int, events: int, url: str, echo_port: int
) -> dict[str, list[float]]:
    from a2a_anyio import A2AClient, Message
    from a2a_anyio._auth import credentials
    from a2a_anyio._bindings import codec_for
    from a2a_anyio._dialects import Op, Send
    from a2a_anyio._grpc_transport import GrpcTransport
    from a2a_anyio._http import HttpTransport

    figures: dict[str, list[float]] = {}
    async with A2AClient(url, bindings=("grpc",)) as client:
        card = await client.get_card()
        target = next(i.url for i in card.interfaces if i.binding == "GRPC")
        grpc_url = target if "://" in target else f"http://{target}"
        codec = codec_for("grpc", "1.0", grpc_url)
        send = Send(Message.user("ping"))
        request = codec.encode(Op.SEND, send)
        stream_request = codec.encode(Op.STREAM, Send(Message.user(f"stream {events}")))
        http = HttpTransport()  # the client's defaults
        grpc = GrpcTransport(http)
        own = credentials(None, None, None, [grpc_url], "strip")
        reply = await grpc.unary(request, own, request.context)
        decoder = codec.event_decoder(stream_request)
        call = grpc.stream(stream_request, own, idle_timeout=None, open_timeout=None)
        await call.open()
        chunk = None
        while isinstance(data := await call.next_event(), bytes):
            chunk = data
        await call.aclose()
        assert chunk is not None
        path = ("/" + request.url.split("//", 1)[1].partition("/")[2]).encode()
        h2_call = _h2_pair(path, [(b"content-type", b"application/grpc"), (b"te", b"trailers"),
                                  (b"user-agent", b"a2a-anyio"), (b"grpc-timeout", b"30S"),
                                  (b"a2a-version", b"1.0")])  # fmt: skip

        async def full() -> None:
            await client.send_message("ping")

        async def transport() -> None:
            with anyio.fail_after(30):
                await grpc.unary(request, own, request.context)

        def both() -> None:
            codec.encode(Op.SEND, send)
            codec.decode(request, reply.status, reply.headers, reply.content)

        async def stream_full() -> float:
            async with client.stream_message(f"stream {events}") as events_:
                gc.collect()
                start, n = time.process_time(), 0
                async for _ in events_:
                    n += 1
            return (time.process_time() - start) / n * 1e6

        async def stream_transport() -> float:
            call = grpc.stream(stream_request, own, idle_timeout=60, open_timeout=60)
            await call.open()
            gc.collect()
            start, n = time.process_time(), 0
            while isinstance(await call.next_event(), bytes):
                n += 1
            took = (time.process_time() - start) / n * 1e6
            await call.aclose()
            return took

        sock = await anyio.connect_tcp("127.0.0.1", echo_port)
        sent = b"q" * 120  # about the request's HEADERS and DATA frames

        async def socket_exchange() -> None:
            await sock.send(sent)
            got = 0
            while got < ANSWER:
                got += len(await sock.receive())

        for _ in range(20):
            await full()
            await transport()
            await socket_exchange()
        for _ in range(ROUNDS):
            figures.setdefault("unary: client", []).append(await _acpu(full, calls))
            figures.setdefault("unary: transport", []).append(await _acpu(transport, calls))
            figures.setdefault("unary: codec", []).append(_cpu(both, calls))
            figures.setdefault("unary: h2", []).append(h2_call(calls))
            figures.setdefault("unary: socket", []).append(await _acpu(socket_exchange, calls))
            figures.setdefault("stream: client", []).append(await stream_full())
            figures.setdefault("stream: transport", []).append(await stream_transport())
            figures.setdefault("stream: codec", []).append(
                _cpu(lambda: decoder.decode(chunk), calls)
            )
        await grpc.aclose()
        await http.aclose()
        await sock.aclose()
    return figures


def report(backend: str, figures: dict[str, list[float]]) -> list[str]:
    med = {k: statistics.median(v) for k, v in figures.items()}
    lines = [f"gRPC layers ({backend}; CPU us, medians of {ROUNDS} rounds in one process)"]
    for kind in ("unary", "stream"):
        full = med[f"{kind}: client"]
        rest = full - med[f"{kind}: transport"] - med[f"{kind}: codec"]
        rows = [(k.split(": ")[1], v) for k, v in med.items() if k.startswith(kind)]
        rows.append(("client's layers (client - transport - codec)", rest))
        if f"{kind}: h2" in med:
            own = med[f"{kind}: transport"] - med[f"{kind}: h2"] - med[f"{kind}: socket"]
            rows.append(("transport's own (transport - h2 - socket)", own))
        unit = "a call" if kind == "unary" else "an event"
        lines.append(f"  {kind}, per {unit}:")
        lines += [f"    {name:<48} {value:8.1f} us  {value / full:6.1%}" for name, value in rows]
    return lines


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--events", type=int, default=3000)
    parser.add_argument("--echo", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.echo:
        return echo()
    with (
        tempfile.TemporaryDirectory() as tmp,
        served("grpc_server.py", "--log", f"{tmp}/server.log", python=grpc_python()) as url,
        started("grpc_layers.py", "--echo") as port,
    ):
        figures = anyio.run(
            main, args.backend, args.calls, args.events, url, int(port), backend=args.backend
        )
    print("\n".join(report(args.backend, figures)))


if __name__ == "__main__":
    cli()
