"""One loopback contender, alone in a fresh interpreter: N unary sends and one stream.

    python bench/loopback_child.py --contender a2a-anyio --backend trio \\
        --url http://127.0.0.1:PORT --calls 1000 --events 10000

Run by ``loopback.py``, one process per (contender, backend, round), against
``loopback_server.py``. Each contender is built as a user builds it, on its defaults, and set
up before the clock starts (imports, the client, card discovery where the client discovers,
a warm-up of ``max(10, calls // 20)`` sends and one short stream). Then, after a
``gc.collect()``, ``--calls`` sends one after the other, and after another ``gc.collect()``
one stream of ``--events`` events read to its end. Each is timed with ``time.process_time()``
(this process's CPU time: the server's is not in it) and ``time.perf_counter()`` (wall).

Prints one JSON line. This file runs in the fasta2a virtualenv too: at module level it
imports the standard library only.

- floor: ``httpx.AsyncClient()`` POST + ``json.loads``; ``httpx_sse.aconnect_sse`` +
  ``json.loads`` per event;
- a2a-anyio: ``A2AClient(url)``, the card discovered once, then ``send_message("hello")`` and
  ``stream_message("hello")`` read to the end, with every default on (deadline, idle limit,
  retries, size limits);
- a2a-sdk: ``await ClientFactory(ClientConfig(streaming=...)).create_from_url(url)`` (its own
  httpx client), ``send_message``;
- fasta2a: ``fasta2a.client.A2AClient(base)`` (its own httpx client, no card: it posts to the
  URL it is given), ``send_message`` and ``stream_message``.
"""

from __future__ import annotations

import argparse
import gc
import json
import sys
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import Any

CONTENDERS = ("floor", "a2a-anyio", "a2a-sdk", "fasta2a")
WARM_TEXT = "bench-warm-up"

Send = Callable[[], Awaitable[None]]
Stream = Callable[[str], Awaitable[int]]


def _rpc_body(method: str, text: str) -> bytes:
    """The floor's request: the v1.0 message a2a-anyio builds for ``text``."""
    return json.dumps(
        {
            "jsonrpc": "2.0",
            "id": str(uuid.uuid4()),
            "method": method,
            "params": {
                "message": {
                    "messageId": str(uuid.uuid4()),
                    "role": "ROLE_USER",
                    "parts": [{"text": text}],
                }
            },
        }
    ).encode()


async def _floor(stack: AsyncExitStack, url: str) -> tuple[Send, Stream]:
    import httpx
    from httpx_sse import aconnect_sse

    http = await stack.enter_async_context(httpx.AsyncClient())
    endpoint = f"{url}/a2a/jsonrpc"
    headers = {"Content-Type": "application/json", "A2A-Version": "1.0"}
    sse_headers = {**headers, "Accept": "text/event-stream", "Cache-Control": "no-store"}

    async def send() -> None:
        resp = await http.post(endpoint, content=_rpc_body("SendMessage", "hello"), headers=headers)
        resp.raise_for_status()
        value = json.loads(resp.content)
        assert value["result"]["task"]["status"]["state"] == "TASK_STATE_COMPLETED"

    async def stream(text: str) -> int:
        n = 0
        body = _rpc_body("SendStreamingMessage", text)
        async with aconnect_sse(http, "POST", endpoint, content=body, headers=sse_headers) as src:
            async for sse in src.aiter_sse():
                value = json.loads(sse.data)
                assert "result" in value
                n += 1
        return n

    return send, stream


async def _anyio(stack: AsyncExitStack, url: str) -> tuple[Send, Stream]:
    from a2a_anyio import A2AClient, Task, TaskState

    client = await stack.enter_async_context(A2AClient(url))
    await client.get_card()

    async def send() -> None:
        task = await client.send_message("hello")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        assert len(task.artifacts) == 2

    async def stream(text: str) -> int:
        n = 0
        async with client.stream_message(text) as s:
            async for _ in s:
                n += 1
        task = s.task
        assert task is not None and task.status.state is TaskState.COMPLETED
        assert len(task.artifacts) == 1
        return n

    return send, stream


def _sdk_request(text: str) -> Any:
    from a2a.types.a2a_pb2 import Message, Part, Role, SendMessageRequest

    return SendMessageRequest(
        message=Message(role=Role.ROLE_USER, parts=[Part(text=text)], message_id=str(uuid.uuid4()))
    )


async def _sdk(stack: AsyncExitStack, url: str) -> tuple[Send, Stream]:
    from a2a.client import ClientConfig, ClientFactory

    unary = await ClientFactory(ClientConfig(streaming=False)).create_from_url(url)
    stack.push_async_callback(unary.close)
    streaming = await ClientFactory(ClientConfig(streaming=True)).create_from_url(url)
    stack.push_async_callback(streaming.close)
    completed = 3  # TASK_STATE_COMPLETED

    async def send() -> None:
        last: Any = None
        async for event in unary.send_message(_sdk_request("hello")):
            last = event
        assert last is not None and last.task.status.state == completed
        assert len(last.task.artifacts) == 2

    async def stream(text: str) -> int:
        n = 0
        last: Any = None
        async for event in streaming.send_message(_sdk_request(text)):
            last = event
            n += 1
        assert last is not None and last.status_update.status.state == completed
        return n

    return send, stream


async def _fasta2a(stack: AsyncExitStack, url: str) -> tuple[Send, Stream]:
    from fasta2a.client import A2AClient  # type: ignore[import-not-found,unused-ignore]

    client = A2AClient(f"{url}/fasta2a")
    stack.push_async_callback(client.http_client.aclose)

    def message(text: str) -> Any:
        return {"role": "user", "parts": [{"text": text}], "message_id": str(uuid.uuid4())}

    async def send() -> None:
        resp: Any = await client.send_message(message("hello"))
        task = resp["result"]["task"]
        assert task["status"]["state"] == "completed"
        assert len(task["artifacts"]) == 2

    async def stream(text: str) -> int:
        n = 0
        last: Any = None
        events: AsyncIterator[Any] = client.stream_message(message(text))
        async for event in events:
            last = event["result"]
            n += 1
        assert last is not None and last["status_update"]["status"]["state"] == "completed"
        return n

    return send, stream


MAKERS: dict[str, Callable[[AsyncExitStack, str], Awaitable[tuple[Send, Stream]]]] = {
    "floor": _floor,
    "a2a-anyio": _anyio,
    "a2a-sdk": _sdk,
    "fasta2a": _fasta2a,
}


async def main(args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"contender": args.contender, "backend": args.backend}
    async with AsyncExitStack() as stack:
        send, stream = await MAKERS[args.contender](stack, args.url)
        for _ in range(max(10, args.calls // 20)):
            await send()
        warm = await stream(WARM_TEXT)
        assert warm > 0, warm

        gc.collect()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for _ in range(args.calls):
            await send()
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        out["unary"] = {
            "calls": args.calls,
            "cpu_us": cpu / args.calls * 1e6,
            "wall_us": wall / args.calls * 1e6,
        }

        gc.collect()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        got = await stream("hello")
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        if got != args.events:
            raise RuntimeError(f"{args.contender}: {got} events of {args.events}")
        out["stream"] = {
            "events": got,
            "cpu_us": cpu / got * 1e6,
            "wall_us": wall / got * 1e6,
        }
    if args.contender == "a2a-anyio":
        import a2a_anyio

        out["a2a_anyio_path"] = a2a_anyio.__file__
    return out


if __name__ == "__main__":
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--contender", choices=CONTENDERS, required=True)
    p.add_argument("--backend", choices=("asyncio", "trio"), default="asyncio")
    p.add_argument("--url", required=True, help="the server's base URL")
    p.add_argument("--calls", type=int, default=1000)
    p.add_argument("--events", type=int, default=10_000)
    a = p.parse_args()
    if a.backend == "trio":
        import trio

        result = trio.run(main, a)
    else:
        import asyncio

        result = asyncio.run(main(a))
    json.dump(result, sys.stdout)
    sys.stdout.write("\n")
