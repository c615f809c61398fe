"""Event streams through httpx-sse: the WHATWG rules, chunked any way, with a size cap."""

from __future__ import annotations

import gzip
import itertools

import anyio
import httpx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_anyio import A2AProtocolError
from a2a_anyio._http import HttpTransport
from a2a_anyio._http_sse import open_sse

from ._support import ScriptedBody

pytestmark = pytest.mark.anyio
URL = "http://agent.test/"


async def decode(
    *chunks: bytes, limit: int = 1 << 20, headers: dict[str, str] | None = None
) -> list[str]:
    """The data of every event the body ``chunks`` carry, as the client reads them."""

    def answer(request: httpx.Request) -> httpx.Response:
        sent = {"content-type": "text/event-stream", **(headers or {})}
        return httpx.Response(200, headers=sent, stream=ScriptedBody(chunks))

    mock = httpx.AsyncClient(transport=httpx.MockTransport(answer))
    http = HttpTransport(mock, owns_client=True, max_event_bytes=limit)
    out = []
    try:
        async with open_sse(http, "GET", URL, content=None, headers={}) as conn:
            while (data := await conn.next_event()) is not None:
                out.append(data)
    finally:
        await http.aclose()
    return out


async def test_one_event_per_chunk() -> None:
    assert await decode(b'data: {"a":1}\n\n', b'data: {"b":2}\n\n') == ['{"a":1}', '{"b":2}']


async def test_several_events_in_one_chunk_and_one_event_over_many() -> None:
    body = b"data: one\n\ndata: two\n\ndata: three\n\n"
    assert await decode(body) == ["one", "two", "three"]
    assert await decode(*(body[i : i + 1] for i in range(len(body)))) == ["one", "two", "three"]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
async def test_every_line_ending(eol: bytes) -> None:
    body = b"event: update" + eol + b"data: a" + eol + b"data: b" + eol + eol
    assert await decode(body) == ["a\nb"]


async def test_crlf_split_between_chunks_is_one_line_end() -> None:
    assert await decode(b"data: x\r", b"\n\r", b"\ndata: y\r\n\r\n") == ["x", "y"]
    # a CR at a chunk's end followed by something else is a line end by itself
    assert await decode(b"data: x\r", b"\r") == ["x"]


async def test_comments_unknown_fields_and_field_spellings() -> None:
    body = (
        b": keep-alive\n\n"  # a comment alone is no event
        b"data:no space\n"
        b"data:  two spaces\n"
        b"bogus: field\n"
        b"data\n"  # a field name alone: empty data, a line of its own
        b"\n"
    )
    assert await decode(body) == ["no space\n two spaces\n"]


async def test_events_without_data_are_dropped() -> None:
    body = b"event: ping\n\ndata:\n\nevent: named\ndata: x\n\ndata: y\n\n"
    assert await decode(body) == ["x", "y"]


async def test_named_event_split_from_its_data() -> None:
    assert await decode(b"event: status\n", b"data: z\n\n") == ["z"]


async def test_comment_lines_count_toward_the_bytes_held_for_an_event() -> None:
    comment = b": " + b"x" * 60 + b"\n"
    assert await decode(comment, b"data: " + b"y" * 30 + b"\n\n", limit=100) == ["y" * 30]
    with pytest.raises(A2AProtocolError):
        await decode(b"data: a\n\n", comment, comment, b"data: y\n\n", limit=100)


async def test_a_bom_and_any_id_or_retry_value() -> None:
    assert await decode(b"\xef\xbb\xbfid: 7\nretry: 1500\ndata: x\n\n") == ["x"]
    hostile = b"id: a\x00b\nretry: " + b"9" * 5000 + b"\nretry: \xc2\xb9\nid: " + b"1" * 5000
    assert await decode(hostile + b"\ndata: y\n\n") == ["y"]


BOM = b"\xef\xbb\xbf"
FIRST = BOM + b"data: first\n\ndata: second\n\n"


def split(body: bytes, cuts: tuple[int, ...]) -> list[bytes]:
    return [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)], strict=True)]


@pytest.mark.parametrize(
    "cuts",
    [cuts for n in range(1, 4) for cuts in itertools.combinations(range(1, 5), n)],
    ids=str,
)
async def test_a_bom_split_over_reads_is_dropped(cuts: tuple[int, ...]) -> None:
    assert await decode(*split(FIRST, cuts)) == ["first", "second"]


async def test_a_bom_among_reads_that_decode_to_nothing_is_dropped() -> None:
    # One byte a read, gzipped: the header's reads decode to empty pieces.
    packed = gzip.compress(FIRST)
    pieces = [packed[i : i + 1] for i in range(len(packed))]
    assert await decode(*pieces, headers={"content-encoding": "gzip"}) == ["first", "second"]


@pytest.mark.parametrize("start", [BOM[:1], BOM[:2], BOM[1:]], ids=["ef", "efbb", "bbbf"])
async def test_part_of_a_bom_is_not_one(start: bytes) -> None:
    body = start + b"data: kept\n\ndata: second\n\n"
    # The bytes pass on unchanged: the first line's field is not "data", however they came.
    assert await decode(start, body[len(start) :]) == ["second"]
    assert await decode(*(body[i : i + 1] for i in range(len(body)))) == ["second"]
    assert await decode(start, b"\ndata: x\n\n") == ["x"]


async def test_an_unfinished_event_is_not_delivered() -> None:
    assert await decode(b"data: complete\n\n", b"data: cut short\n") == ["complete"]


async def test_invalid_utf8_is_replaced() -> None:
    assert await decode(b"data: \xff\xfe\n\n") == ["\ufffd\ufffd"]


async def test_events_are_utf8_whatever_the_clients_default_encoding() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        body = ScriptedBody(["data: é\n\n".encode()])
        return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)

    mock = httpx.AsyncClient(transport=httpx.MockTransport(answer), default_encoding="latin-1")
    http = HttpTransport(mock, owns_client=True)
    try:
        async with open_sse(http, "GET", URL, content=None, headers={}) as conn:
            assert await conn.next_event() == "é"
    finally:
        await http.aclose()


@pytest.mark.parametrize(
    "chunks",
    [
        [b"data: " + b"x" * 200 + b"\n\n"],  # one whole event in a chunk
        [b"data: " + b"x" * 100, b"x" * 100],  # a line without its end yet
        [b"data: a\n", b": " + b"x" * 200 + b"\n"],  # comments count too
    ],
    ids=["whole", "partial-line", "comment"],
)
async def test_an_event_over_the_limit_is_refused(chunks: list[bytes]) -> None:
    with pytest.raises(A2AProtocolError, match=r"agent\.test/ is larger than 100 bytes"):
        await decode(*chunks, limit=100)


async def test_the_limit_is_per_event() -> None:
    event = b"data: " + b"x" * 80 + b"\n\n"
    assert len(await decode(event * 50, limit=100)) == 50
    assert len(await decode(*[event] * 50, limit=100)) == 50


_LINES = st.lists(
    st.one_of(
        st.builds(
            lambda s: b"data: " + s,
            st.binary(max_size=12).filter(lambda b: b"\r" not in b and b"\n" not in b),
        ),
        st.sampled_from([b"", b": ping", b"event: x", b"id: 3", b"data", b"retry: 10"]),
    ),
    max_size=30,
)


@settings(deadline=None)
@given(
    lines=_LINES,
    eol=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20),
    start=st.sampled_from([b"", BOM, BOM[:1], BOM[:2]]),
    backend=st.sampled_from(["asyncio", "trio"]),
)
def test_chunking_never_changes_the_events(
    lines: list[bytes], eol: bytes, cuts: list[int], start: bytes, backend: str
) -> None:
    body = start + eol.join(lines) + eol + eol
    whole = anyio.run(decode, body, backend=backend)
    points = sorted({c for c in cuts if c < len(body)})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert anyio.run(decode, *pieces, backend=backend) == whole
