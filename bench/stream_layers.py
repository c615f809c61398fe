"""Where a streamed event's CPU goes: the stream's layers one above the other, in one process.

    uv run --frozen python bench/stream_layers.py                  # both backends, ~1 min
    uv run --frozen python bench/stream_layers.py --backends trio --rounds 9 --events 5000

One ``loopback_server.py`` serves every stream (the recorded v1.0 stream, one event a chunk).
Each round reads one stream per layer, in turn, after a ``gc.collect()``; a layer's figure
is its client CPU (``time.process_time()``) per event, and its ratio the median over rounds
of its CPU against the same round's floor: the ratios hold when the machine is busy, the
microseconds do not. The layers, each doing what the one before does and more:

- ``httpx-sse``: httpx-sse framing alone (``aconnect_sse``, ``aiter_sse``), no JSON;
- ``floor``: the same + ``json.loads`` of each event (the loopback targets' floor);
- ``sse``: a2a-anyio's SSE layer (``open_sse``, ``next_event``: the decoded bytes counted
  for ``max_event_bytes``, httpx-sse framing them), no JSON;
- ``sse+json``: the same + ``loads_event``;
- ``typed``: the same + the JSON-RPC event decoder (envelope, typed event), nothing kept;
- ``reducer``: the typed events folded into the task (``TaskReducer``);
- ``follower``: through ``StreamFollower`` instead (the reducer, the 3 events kept, the
  end rule, the byte bounds);
- ``stream``: the whole ``client.stream_message(...)`` read to its end, as users read it;
- ``json-fold``: not a layer: a bound on any design that types no event, the JSON of each
  event folded as JSON (parts appended to a list per artifact, the status replaced) and
  the latest 3 kept, on the SSE layer, with no stream shell around it.
"""

from __future__ import annotations

import argparse
import gc
import json
import statistics
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
from _serve import served
from httpx_sse import aconnect_sse

from a2a_anyio import A2AClient, Message
from a2a_anyio._bindings import codec_for
from a2a_anyio._bindings.base import loads_event
from a2a_anyio._dialects.ops import Op, Send
from a2a_anyio._follower import StreamFollower
from a2a_anyio._http_sse import open_sse
from a2a_anyio._options import DEFAULT_IDLE_TIMEOUT
from a2a_anyio._reducer import TaskReducer

LAYERS = (
    "httpx-sse", "floor", "sse", "sse+json", "typed", "reducer", "follower", "stream", "json-fold",
)  # fmt: skip
HEADERS = {"Content-Type": "application/json", "A2A-Version": "1.0"}
SSE_HEADERS = {**HEADERS, "Accept": "text/event-stream", "Cache-Control": "no-store"}


async def _layers(url: str) -> tuple[dict[str, Callable[[], Awaitable[int]]], list[Any]]:
    http = httpx.AsyncClient()
    client = A2AClient(url)
    await client.get_card()
    endpoint = f"{url}/a2a/jsonrpc"
    codec = codec_for("jsonrpc", "1.0", endpoint)
    transport = client._http  # the client's own transport: what its streams go through

    def request() -> Any:
        return codec.encode(Op.STREAM, Send(Message.user("hello")))

    async def framed(decode: Callable[[str], Any] | None) -> int:
        body = request().body
        n = 0
        async with aconnect_sse(http, "POST", endpoint, content=body, headers=SSE_HEADERS) as src:
            async for sse in src.aiter_sse():
                if decode is not None:
                    decode(sse.data)
                n += 1
        return n

    async def ours(per_event: Callable[[Any], Callable[[str], object]]) -> int:
        req = request()
        step = per_event(req)
        n = 0
        async with open_sse(
            transport, "POST", endpoint, content=req.body, headers=SSE_HEADERS,
            idle_timeout=DEFAULT_IDLE_TIMEOUT,  # the client's, on its defaults
        ) as conn:  # fmt: skip
            while (data := await conn.next_event()) is not None:
                step(data)
                n += 1
        return n

    def nothing(req: Any) -> Callable[[str], object]:
        return len

    def typed(req: Any) -> Callable[[str], object]:
        return codec.event_decoder(req).decode

    def reduced(req: Any) -> Callable[[str], object]:
        decode, reducer = codec.event_decoder(req).decode, TaskReducer()
        return lambda data: reducer.apply(decode(data), len(data))

    def followed(req: Any) -> Callable[[str], object]:
        events = codec.event_decoder(req)
        decode, follower = events.decode, StreamFollower(events.ends)
        return lambda data: follower.event(decode(data), len(data), data, decode)

    def json_fold(req: Any) -> Callable[[str], object]:
        rid, state = req.request_id, JsonFold()
        return lambda data: state.fold(loads_event(data), rid, data)

    async def stream() -> int:
        n = 0
        async with client.stream_message("hello") as s:
            async for _ in s:
                n += 1
        assert s.task is not None and s.task.status.state.is_terminal
        return n

    layers: dict[str, Callable[[], Awaitable[int]]] = {
        "httpx-sse": lambda: framed(None),
        "floor": lambda: framed(json.loads),
        "sse": lambda: ours(nothing),
        "sse+json": lambda: ours(lambda req: loads_event),
        "typed": lambda: ours(typed),
        "reducer": lambda: ours(reduced),
        "follower": lambda: ours(followed),
        "stream": stream,
        "json-fold": lambda: ours(json_fold),
    }
    return layers, [http, client]


class JsonFold:
    """The JSON of each event folded as JSON (v1.0 shapes only): the bound of an untyped
    design."""

    def __init__(self) -> None:
        self.task: dict[str, Any] = {}
        self.parts: dict[str, list[Any]] = {}
        self.kept: list[tuple[str, int]] = []

    def fold(self, value: Any, rid: Any, data: str) -> None:
        if type(value) is not dict or (r := value.get("result")) is None or value["id"] != rid:
            raise RuntimeError("not this stream's event")
        if (x := r.get("artifactUpdate")) is not None:
            art = x["artifact"]
            held = self.parts.get(art["artifactId"])
            if held is not None and x.get("append"):
                held.extend(art["parts"])
            else:
                self.parts[art["artifactId"]] = list(art["parts"])
        elif (x := r.get("statusUpdate")) is not None:
            self.task["status"] = x["status"]
        elif (x := r.get("task")) is not None:
            self.task = dict(x)
        self.kept.append((data, len(data)))
        if len(self.kept) > 3:
            del self.kept[0]


async def run(url: str, rounds: int) -> dict[str, Any]:
    layers, owned = await _layers(url)
    try:
        for layer in layers.values():  # a warm-up of each
            await layer()
        cpu: dict[str, list[float]] = {name: [] for name in layers}
        for _ in range(rounds):
            for name, layer in layers.items():
                gc.collect()
                start = time.process_time()
                n = await layer()
                cpu[name].append((time.process_time() - start) / n * 1e6)
    finally:
        await owned[0].aclose()
        await owned[1].aclose()
    return {
        name: {
            "us": statistics.median(values),
            "ratio": statistics.median(v / f for v, f in zip(values, cpu["floor"], strict=True)),
        }
        for name, values in cpu.items()
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--backends", default="asyncio,trio")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--events", type=int, default=5000)
    ap.add_argument("--json", action="store_true", help="print one JSON document")
    args = ap.parse_args()
    out: dict[str, Any] = {}
    with served("loopback_server.py", f"--events={args.events}") as url:
        for backend in args.backends.split(","):
            print(f"stream layers: {backend}", file=sys.stderr)
            out[backend] = anyio.run(run, url, args.rounds, backend=backend)
    if args.json:
        print(json.dumps(out, indent=2))
        return
    print(f"{'layer':<10}" + "".join(f"{b + ' us':>13}{'x floor':>9}" for b in out))
    for name in LAYERS:
        row = "".join(f"{out[b][name]['us']:13.1f}{out[b][name]['ratio']:8.2f}x" for b in out)
        print(f"{name:<10}{row}")
    print(
        f"({args.events} events a stream, {args.rounds} rounds, one process per backend; "
        "client CPU per event, medians; ratios: medians of per-round ratios to the floor)"
    )


if __name__ == "__main__":
    main()
