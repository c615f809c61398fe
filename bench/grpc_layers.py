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
- within the transport's calls, timed where they run (so with the caches as a call finds
  them after a wait): ``h2``, the calls into h2 (headers and data sent, what is read
  handed to it, windows acknowledged); ``socket``, the socket stream's ``send`` and
  ``receive``, the event loop's passes and the wake-ups they wait for included;
- ``codec``: the codec's ``encode`` and ``decode`` of the same call / one event's decode.

The rest is named by difference: the client's layers (client - transport - codec), and the
transport's own bookkeeping (transport - h2 - socket).
"""

from __future__ import annotations

import argparse
import functools
import gc
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import anyio

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _serve import served  # noqa: E402
from grpc_loopback import grpc_python  # noqa: E402

ROUNDS = 5
H2_CALLS = ("send_headers", "send_data", "receive_data", "acknowledge_received_data",
            "data_to_send", "reset_stream")  # fmt: skip


def _cpu(fn: Callable[[], object], n: int) -> float:
    gc.collect()
    start = time.process_time()
    for _ in range(n):
        fn()
    return (time.process_time() - start) / n * 1e6


@contextmanager
def timed(spent: dict[str, float], sock_type: type) -> Iterator[None]:
    """The CPU spent in h2's calls and in the socket stream's, added up in ``spent``."""
    import h2.connection

    def wrap(cls: type, name: str, key: str, coroutine: bool) -> Callable[[], None]:
        original = getattr(cls, name)

        if coroutine:

            @functools.wraps(original)
            async def wrapper(*args: Any, **kwargs: Any) -> Any:
                start = time.process_time()
                try:
                    return await original(*args, **kwargs)
                finally:
                    spent[key] += time.process_time() - start

        else:

            @functools.wraps(original)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                start = time.process_time()
                try:
                    return original(*args, **kwargs)
                finally:
                    spent[key] += time.process_time() - start

        setattr(cls, name, wrapper)
        return lambda: setattr(cls, name, original)

    undo = [wrap(h2.connection.H2Connection, n, "h2", False) for n in H2_CALLS]
    undo += [wrap(sock_type, n, "socket", True) for n in ("send", "receive")]
    try:
        yield
    finally:
        for restore in undo:
            restore()


async def main(backend: str, calls: int, events: int, url: str) -> dict[str, list[float]]:
    from a2a_anyio import A2AClient, Message
    from a2a_anyio._auth import credentials
    from a2a_anyio._bindings import codec_for
    from a2a_anyio._dialects import Op, Send
    from a2a_anyio._grpc_transport import GrpcTransport
    from a2a_anyio._http import HttpTransport

    figures: dict[str, list[float]] = {}

    def add(name: str, value: float) -> None:
        figures.setdefault(name, []).append(value)

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
        host, _, port = grpc_url.split("//")[1].partition(":")
        probe = await anyio.connect_tcp(host, int(port))  # the backend's socket stream
        sock_type = type(probe)
        await probe.aclose()
        decoder = codec.event_decoder(stream_request)
        chunk: Any = None

        async def full() -> None:
            await client.send_message("ping")

        async def transport() -> None:
            with anyio.fail_after(30):
                await grpc.unary(request, own, request.context)

        def both() -> None:
            codec.encode(Op.SEND, send)
            codec.decode(request, reply.status, reply.headers, reply.content)

        async def unary_rows() -> None:
            gc.collect()
            start = time.process_time()
            for _ in range(calls):
                await full()
            add("unary: client", (time.process_time() - start) / calls * 1e6)
            spent = {"h2": 0.0, "socket": 0.0}
            gc.collect()
            start = time.process_time()
            with timed(spent, sock_type):
                for _ in range(calls):
                    await transport()
            add("unary: transport", (time.process_time() - start) / calls * 1e6)
            for key, value in spent.items():
                add(f"unary: {key}", value / calls * 1e6)
            add("unary: codec", _cpu(both, calls))

        async def stream_rows() -> None:
            nonlocal chunk
            async with client.stream_message(f"stream {events}") as events_:
                gc.collect()
                start, n = time.process_time(), 0
                async for _ in events_:
                    n += 1
            add("stream: client", (time.process_time() - start) / n * 1e6)
            call = grpc.stream(stream_request, own, idle_timeout=60, open_timeout=60)
            await call.open()
            spent = {"h2": 0.0, "socket": 0.0}
            gc.collect()
            start, n = time.process_time(), 0
            with timed(spent, sock_type):
                while isinstance(data := await call.next_event(), bytes):
                    chunk, n = data, n + 1
            add("stream: transport", (time.process_time() - start) / n * 1e6)
            for key, value in spent.items():
                add(f"stream: {key}", value / n * 1e6)
            await call.aclose()
            add("stream: codec", _cpu(lambda: decoder.decode(chunk), calls))

        for _ in range(20):
            await full()
            await transport()
        for _ in range(ROUNDS):
            await unary_rows()
            await stream_rows()
        await grpc.aclose()
        await http.aclose()
    return figures


def report(backend: str, figures: dict[str, list[float]]) -> list[str]:
    med = {k: statistics.median(v) for k, v in figures.items()}
    lines = [f"gRPC layers ({backend}; CPU us, medians of {ROUNDS} rounds in one process)"]
    for kind, unit in (("unary", "a call"), ("stream", "an event")):
        full, transport = med[f"{kind}: client"], med[f"{kind}: transport"]
        h2, sock = med[f"{kind}: h2"], med[f"{kind}: socket"]
        rows = [
            ("client", full),
            ("  client's layers (client - transport - codec)", full - transport - med[f"{kind}: codec"]),
            ("  codec", med[f"{kind}: codec"]),
            ("  transport", transport),
            ("    h2", h2),
            ("    socket: send, receive, the loop's passes", sock),
            ("    transport's own (transport - h2 - socket)", transport - h2 - sock),
        ]  # fmt: skip
        lines.append(f"  {kind}, per {unit}:")
        lines += [f"    {name:<50} {value:8.1f} us  {value / full:6.1%}" for name, value in rows]
    return lines


def cli() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    parser.add_argument("--calls", type=int, default=500)
    parser.add_argument("--events", type=int, default=3000)
    args = parser.parse_args()
    with (
        tempfile.TemporaryDirectory() as tmp,
        served("grpc_server.py", "--log", f"{tmp}/server.log", python=grpc_python()) as url,
    ):
        figures = anyio.run(main, args.backend, args.calls, args.events, url, backend=args.backend)
    print("\n".join(report(args.backend, figures)))


if __name__ == "__main__":
    cli()
