"""``call(method, on_event=fn)`` against a hostile server of the suite's own (``_raw_server``):
an event stream that lies (another request's id, no JSON, JSON nested past any limit, an
event larger than ``max_event_bytes``, a gzip bomb) ends the call with a typed error after
the events that were good, and the connection is let go; so it is when ``on_event`` itself
raises in the middle of a stream without end."""

from __future__ import annotations

import gzip
import itertools
import json
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

import pytest

from a2a_anyio import A2AClient, A2AProtocolError

from ._raw_server import Answer, RawServer, Request, jsonrpc

pytestmark = pytest.mark.anyio

EVENTS = {"Content-Type": "text/event-stream"}
EVENT_LIMIT = 64 * 1024


@dataclass(frozen=True)
class Progress:
    done: int


def event(data: bytes) -> bytes:
    return b"data: " + data + b"\n\n"


def good(request: Request, done: int = 1) -> bytes:
    return event(jsonrpc(request, {"done": done}))


def other_id(request: Request) -> bytes:
    return event(json.dumps({"jsonrpc": "2.0", "id": "not-mine", "result": {}}).encode())


def deep(request: Request) -> bytes:
    return event(b'{"jsonrpc": "2.0", "id": 1, "result": ' + b"[" * 20_000 + b"]" * 20_000 + b"}")


def endless_event(request: Request) -> Iterable[bytes]:
    return itertools.chain([b"data: "], itertools.repeat(b"x" * 8192))


def gzip_bomb(request: Request) -> Iterable[bytes]:
    # 64 MiB of one event that never ends, sent as a few KiB of gzip.
    return [gzip.compress(b"data: " + b"x" * (64 * 1024 * 1024))]


#: After one good event, what the server sends: (the body's pieces after it, its headers,
#: what the error says).
LIES: dict[str, tuple[Callable[[Request], Iterable[bytes]], dict[str, str], str]] = {
    "another-id": (lambda r: [other_id(r)], EVENTS, "!= request id"),
    "not-json": (lambda r: [event(b"{not json")], EVENTS, "not JSON"),
    "nested-too-deep": (lambda r: [deep(r)], EVENTS, "not JSON"),
    "endless-event": (endless_event, EVENTS, f"larger than {EVENT_LIMIT} bytes"),
}


@pytest.mark.parametrize("lie", LIES)
async def test_a_lying_event_stream_is_a_typed_error_after_the_good_events(lie: str) -> None:
    rest, headers, says = LIES[lie]

    def answer(request: Request) -> Answer:
        return Answer(itertools.chain([good(request)], rest(request)), headers)

    server = RawServer(answer)
    seen: list[Any] = []
    async with server.serve() as url, client_of(url) as client:
        with pytest.raises(A2AProtocolError, match=says):
            await client.call("ext/count", on_event=seen.append, result_type=Progress)
        await server.until_no_connection()
    assert seen == [{"done": 1}]


async def test_a_gzip_bomb_as_the_event_stream_is_refused_at_the_event_limit() -> None:
    server = RawServer(lambda r: Answer(gzip_bomb(r), {**EVENTS, "Content-Encoding": "gzip"}))
    async with server.serve() as url, client_of(url) as client:
        with pytest.raises(A2AProtocolError, match=f"larger than {EVENT_LIMIT} bytes"):
            await client.call("ext/count", on_event=lambda _: None)
        await server.until_no_connection()


async def test_an_on_event_that_raises_lets_the_connection_go() -> None:
    server = RawServer(lambda r: Answer(itertools.repeat(good(r)), EVENTS))  # without end

    class Stop(Exception):
        pass

    def stop(result: Any) -> None:
        raise Stop

    async with server.serve() as url, client_of(url) as client:
        with pytest.raises(Stop):
            await client.call("ext/count", on_event=stop)
        await server.until_no_connection()


def client_of(url: str) -> A2AClient:
    return A2AClient(endpoint=url + "/rpc", protocol="1.0", max_event_bytes=EVENT_LIMIT)
