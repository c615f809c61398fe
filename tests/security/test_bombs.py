"""Compressed answers are decoded in bounded steps, and the limits count decoded bytes.

A hostile server of the suite's own (``_raw_server``) answers with gzip and deflate bombs that
expand to gigabytes, stacked codings, broken and truncated streams and codings the client does
not speak, on a unary call, inside an event stream and as the agent card. Each is refused with
a typed error after decoding about the limit, the memory peak staying near it, and the
connection is let go: the server sees it closed, or the next call on a pool of one connection
goes through.
"""

from __future__ import annotations

import gzip
import itertools
import json
import tracemalloc
import zlib
from collections.abc import Callable, Iterable
from typing import Any

import httpx
import pytest

from a2a_anyio import A2AClient, A2ADiscoveryError, A2AProtocolError, Task, TaskState
from a2a_anyio._card import MAX_CARD_BYTES
from tests._bombs import MIB, bomb, segments
from tests.unit._support import v1_card

from ._raw_server import Answer, RawServer, Request, jsonrpc, sse

pytestmark = pytest.mark.anyio

JSON = {"Content-Type": "application/json"}
EVENTS = {"Content-Type": "text/event-stream"}
TASK = {"id": "t-1", "contextId": "c-1", "status": {"state": "TASK_STATE_COMPLETED"}}
WORKING = {"task": {**TASK, "status": {"state": "TASK_STATE_WORKING"}}}
COMPLETED = {"statusUpdate": {"taskId": "t-1", "contextId": "c-1", "status": TASK["status"]}}
#: What a bomb expands to, in MiB: 2 GiB, far beyond any limit the tests set.
BOMB_MIB = 2048
#: The most a refused bomb may cost: the limit, a step, and the rest of the client.
PEAK = 4 * MIB

Body = Callable[[bytes], Iterable[bytes]]


def encoded(coding: str) -> Body:
    """A body of ``coding`` (stacked ones too) carrying ``data``, in one piece."""

    def body(data: bytes) -> list[bytes]:
        for name in [c.strip() for c in coding.split(",")]:
            if name == "gzip":
                data = gzip.compress(data)
            elif name == "deflate":
                data = zlib.compress(data)
        return [data]

    return body


def bomb_body(coding: str, head: bytes = b"") -> Iterable[bytes]:
    """``head``, then 2 GiB of zeros (of ``a`` after a head), sent a MiB of it at a time
    (stacked: all at once, a few KiB)."""
    if coding == "gzip, gzip":
        c = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
        return [c.compress(bomb("gzip", BOMB_MIB, fill=b"a", head=head)) + c.flush()]
    return segments(coding, BOMB_MIB, fill=b"a" if head else b"\0", head=head)


def agent(url: str, **options: Any) -> A2AClient:
    return A2AClient(endpoint=url + "/rpc", protocol="1.0", **options)


def peak_of() -> int:
    return tracemalloc.get_traced_memory()[1]


# -- bombs --------------------------------------------------------------------------------------

CODINGS = ["gzip", "deflate", "gzip, gzip"]


@pytest.mark.parametrize("coding", CODINGS)
async def test_a_unary_bomb_is_refused_after_about_the_limit(coding: str) -> None:
    server = RawServer(lambda r: Answer(bomb_body(coding), {**JSON, "Content-Encoding": coding}))
    async with server.serve() as url, agent(url, max_response_bytes=MIB) as client:
        tracemalloc.start()
        try:
            with pytest.raises(A2AProtocolError, match=f"exceeds {MIB} bytes"):
                await client.send_message("hi")
            peak = peak_of()
        finally:
            tracemalloc.stop()
        assert peak < PEAK
        if coding != "gzip, gzip":  # an endless body: the connection cannot go back to the pool
            await server.until_no_connection()
    assert server.requests[0].headers["accept-encoding"] == "gzip, deflate"


@pytest.mark.parametrize("coding", CODINGS)
async def test_a_bomb_in_a_stream_event_is_refused_after_about_the_limit(coding: str) -> None:
    def answer(request: Request) -> Answer:
        head = sse(request, WORKING) + b"data: "  # an event, then one that never ends
        return Answer(bomb_body(coding, head), {**EVENTS, "Content-Encoding": coding})

    server = RawServer(answer)
    async with server.serve() as url, agent(url, max_event_bytes=MIB) as client:
        seen: list[Any] = []
        tracemalloc.start()
        try:
            with pytest.raises(A2AProtocolError, match=f"larger than {MIB} bytes") as info:
                async with client.stream_message("hi") as stream:
                    async for event in stream:
                        seen.append(event)
            peak = peak_of()
        finally:
            tracemalloc.stop()
        assert peak < PEAK
        assert [type(e) for e in seen] == [Task] == [type(e) for e in info.value.events]
        if coding != "gzip, gzip":
            await server.until_no_connection()


@pytest.mark.parametrize("coding", CODINGS)
async def test_a_bomb_as_the_card_is_refused_after_about_the_limit(coding: str) -> None:
    server = RawServer(lambda r: Answer(bomb_body(coding), {**JSON, "Content-Encoding": coding}))
    async with server.serve() as url, A2AClient(url) as client:
        tracemalloc.start()
        try:
            with pytest.raises(A2ADiscoveryError, match=f"larger than {MAX_CARD_BYTES} bytes"):
                await client.get_card()
            peak = peak_of()
        finally:
            tracemalloc.stop()
        assert peak < MAX_CARD_BYTES + PEAK
        if coding != "gzip, gzip":
            await server.until_no_connection()
    assert [r.path for r in server.requests] == ["/.well-known/agent-card.json"]


async def test_what_is_sent_counts_too() -> None:
    # A deflate stream of empty stored blocks: 5 bytes each, decoded to nothing, endlessly.
    empty = b"\x00\x00\x00\xff\xff" * 8192

    def answer(request: Request) -> Answer:
        body = itertools.chain([b"\x78\x9c"], itertools.repeat(empty))
        return Answer(body, {**JSON, "Content-Encoding": "deflate"})

    server = RawServer(answer)
    async with server.serve() as url, agent(url, max_response_bytes=MIB) as client:
        with pytest.raises(A2AProtocolError, match=f"exceeds {MIB} bytes"):
            await client.send_message("hi")
        await server.until_no_connection()


# -- broken and unknown codings ------------------------------------------------------------------

GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
#: A gzip stream of empty stored blocks: it decodes to nothing, whatever its length.
NOTHING_INSIDE = GZIP_HEADER + b"\x00\x00\x00\xff\xff" * 300_000


def answer_of(coding: str, body: Body) -> Callable[[bytes], Answer]:
    def make(data: bytes) -> Answer:
        return Answer(body(data), {"Content-Encoding": coding})

    return make


def cut(coding: str, drop: int) -> Body:
    return lambda data: [b"".join(encoded(coding)(data))[:-drop]]


BAD = {
    "gzip-cut-short": ("gzip", cut("gzip", 9), "the gzip body is cut short"),
    "deflate-cut-short": ("deflate", cut("deflate", 4), "the deflate body is cut short"),
    "gzip-corrupt": ("gzip", lambda d: [GZIP_HEADER + b"\xff" * 20], "invalid block type"),
    "deflate-corrupt": ("deflate", lambda d: [d], "the deflate body cannot be decoded"),
    "trailing-data": ("gzip", lambda d: [gzip.compress(d) + b"x"], "data after the end"),
    "inner-makes-nothing": ("gzip, gzip", lambda d: [gzip.compress(NOTHING_INSIDE)], "nothing"),
    "br": ("br", lambda d: [d], "unsupported Content-Encoding 'br'"),
    "zstd": ("zstd", lambda d: [d], "unsupported Content-Encoding 'zstd'"),
    "compress": ("compress", lambda d: [d], "unsupported Content-Encoding 'compress'"),
    "garbage": ("x-\u00e9t\u00e9", lambda d: [d], "unsupported Content-Encoding"),
    "six-codings": (", ".join(["gzip"] * 6), lambda d: [d], "more than 5 content codings"),
}


@pytest.mark.parametrize("how", ["unary", "stream"])
@pytest.mark.parametrize("case", BAD)
async def test_a_body_that_cannot_be_decoded_is_a_typed_error_and_frees_the_connection(
    case: str, how: str
) -> None:
    coding, body, message = BAD[case]

    def answer(request: Request) -> Answer:
        if len(server.requests) > 1:  # the next call: a plain, good answer
            return Answer([jsonrpc(request, TASK)], JSON)
        if how == "unary":
            return Answer(body(jsonrpc(request, WORKING)), {**JSON, "Content-Encoding": coding})
        return Answer(body(sse(request, WORKING)), {**EVENTS, "Content-Encoding": coding})

    server = RawServer(answer)
    one = httpx.AsyncClient(limits=httpx.Limits(max_connections=1), timeout=5)
    async with server.serve() as url, one, agent(url, http_client=one) as client:
        with pytest.raises(A2AProtocolError, match=message):
            if how == "unary":
                await client.send_message("hi")
            else:
                async with client.stream_message("hi") as stream:
                    async for _ in stream:
                        pass
        # the pool's one connection was let go: the next call gets it
        task = await client.get_task("t-1")
        assert task.status.state is TaskState.COMPLETED


# -- what decodes ------------------------------------------------------------------------------


@pytest.mark.parametrize("coding", ["gzip", "x-gzip", "deflate", "gzip, gzip", "identity"])
async def test_compressed_answers_are_read_everywhere(coding: str) -> None:
    body = encoded("gzip" if coding == "x-gzip" else coding)

    def answer(request: Request) -> Answer:
        headers = {"Content-Encoding": coding}
        if request.path.endswith("agent-card.json"):
            card = v1_card(f"http://{request.headers['host']}/rpc")
            return Answer(body(json.dumps(card).encode()), {**JSON, **headers})
        if b"SendStreamingMessage" in request.body:
            return Answer(body(sse(request, WORKING, COMPLETED)), {**EVENTS, **headers})
        return Answer(body(jsonrpc(request, {"task": TASK})), {**JSON, **headers})

    server = RawServer(answer)
    async with server.serve() as url, A2AClient(url) as client:
        card = await client.get_card()
        assert card.name == "Test Agent"
        task = await client.send_message("hi")
        assert isinstance(task, Task) and task.status.state is TaskState.COMPLETED
        async with client.stream_message("hi") as stream:
            states = [e.status.state async for e in stream]  # type: ignore[union-attr]
        assert states == [TaskState.WORKING, TaskState.COMPLETED]
    assert {r.headers["accept-encoding"] for r in server.requests} == {"gzip, deflate"}


async def test_the_limit_counts_decoded_bytes_not_sent_ones() -> None:
    # 300 KiB of JSON in about 1 KiB of gzip: over a 256 KiB limit once decoded
    padding = "x" * (300 * 1024)
    server = RawServer(
        lambda r: Answer(
            encoded("gzip")(jsonrpc(r, {"task": {**TASK, "metadata": {"p": padding}}})),
            {**JSON, "Content-Encoding": "gzip"},
        )
    )
    async with server.serve() as url, agent(url, max_response_bytes=256 * 1024) as client:
        with pytest.raises(A2AProtocolError, match=f"exceeds {256 * 1024} bytes"):
            await client.send_message("hi")
