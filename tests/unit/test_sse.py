"""The incremental event-stream decoder: the WHATWG rules, chunked any way, with a size cap."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from a2a_anyio import A2AProtocolError
from a2a_anyio._sse import SSEDecoder


def decode(*chunks: bytes, limit: int = 1 << 20) -> list[str]:
    decoder = SSEDecoder(limit, "http://agent.test/")
    return [data for chunk in chunks for data in decoder.feed(chunk)]


def test_one_event_per_chunk() -> None:
    assert decode(b'data: {"a":1}\n\n', b'data: {"b":2}\n\n') == ['{"a":1}', '{"b":2}']


def test_several_events_in_one_chunk_and_one_event_over_many() -> None:
    body = b"data: one\n\ndata: two\n\ndata: three\n\n"
    assert decode(body) == ["one", "two", "three"]
    assert decode(*(body[i : i + 1] for i in range(len(body)))) == ["one", "two", "three"]


@pytest.mark.parametrize("eol", [b"\n", b"\r\n", b"\r"])
def test_every_line_ending(eol: bytes) -> None:
    body = b"event: update" + eol + b"data: a" + eol + b"data: b" + eol + eol
    assert decode(body) == ["a\nb"]


def test_crlf_split_between_chunks_is_one_line_end() -> None:
    assert decode(b"data: x\r", b"\n\r", b"\ndata: y\r\n\r\n") == ["x", "y"]
    # a CR at a chunk's end followed by something else is a line end by itself
    assert decode(b"data: x\r", b"\r") == ["x"]


def test_comments_unknown_fields_and_field_spellings() -> None:
    body = (
        b": keep-alive\n\n"  # a comment alone is no event
        b"data:no space\n"
        b"data:  two spaces\n"
        b"bogus: field\n"
        b"data\n"  # a field name alone: empty data, a line of its own
        b"\n"
    )
    assert decode(body) == ["no space\n two spaces\n"]


def test_events_without_data_are_dropped() -> None:
    body = b"event: ping\n\ndata:\n\nevent: named\ndata: x\n\ndata: y\n\n"
    assert decode(body) == ["x", "y"]


def test_named_event_split_from_its_data() -> None:
    assert decode(b"event: status\n", b"data: z\n\n") == ["z"]


def test_a_comment_line_before_an_event_counts_toward_its_size() -> None:
    assert decode(b": " + b"x" * 60 + b"\n", b"data: " + b"y" * 30 + b"\n\n", limit=200) == [
        "y" * 30
    ]
    with pytest.raises(A2AProtocolError):
        decode(
            b"data: a\n\n", b": " + b"x" * 60 + b"\n", b"data: " + b"y" * 50 + b"\n\n", limit=100
        )


def test_id_retry_and_bom() -> None:
    decoder = SSEDecoder(1 << 20)
    events = decoder.feed(b"\xef\xbb\xbfid: 7\nretry: 1500\ndata: x\n\n")
    assert events == ["x"]
    assert decoder.last_id == "7"
    assert decoder.retry == 1500
    decoder.feed(b"id: a\x00b\nretry: soon\n\n")  # ignored: NUL in an id, a non-number
    assert decoder.last_id == "7"
    assert decoder.retry == 1500


def test_an_unfinished_event_is_not_delivered() -> None:
    assert decode(b"data: complete\n\n", b"data: cut short\n") == ["complete"]


def test_invalid_utf8_is_replaced() -> None:
    assert decode(b"data: \xff\xfe\n\n") == ["\ufffd\ufffd"]


@pytest.mark.parametrize(
    "chunks",
    [
        [b"data: " + b"x" * 200 + b"\n\n"],  # one whole event in a chunk
        [b"data: " + b"x" * 100, b"x" * 100],  # a line without its end yet
        [b"data: a\n", b": " + b"x" * 200 + b"\n"],  # comments count too
    ],
    ids=["whole", "partial-line", "comment"],
)
def test_an_event_over_the_limit_is_refused(chunks: list[bytes]) -> None:
    with pytest.raises(A2AProtocolError, match=r"agent\.test/ is larger than 100 bytes"):
        decode(*chunks, limit=100)


def test_the_limit_is_per_event() -> None:
    event = b"data: " + b"x" * 80 + b"\n\n"
    assert len(decode(event * 50, limit=100)) == 50
    assert len(decode(*[event] * 50, limit=100)) == 50


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


@given(
    lines=_LINES,
    eol=st.sampled_from([b"\n", b"\r\n", b"\r"]),
    cuts=st.lists(st.integers(min_value=0, max_value=400), max_size=20),
)
def test_chunking_never_changes_the_events(lines: list[bytes], eol: bytes, cuts: list[int]) -> None:
    body = eol.join(lines) + eol + eol
    whole = decode(body)
    points = sorted({c for c in cuts if c < len(body)})
    pieces = [body[a:b] for a, b in zip([0, *points], [*points, len(body)], strict=True)]
    assert decode(*pieces) == whole
