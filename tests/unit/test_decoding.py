"""The bounded Content-Encoding decoder, without I/O: what comes out, in what steps, and when
it refuses."""

from __future__ import annotations

import gzip
import itertools
import zlib
from collections.abc import Iterable

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from a2a_anyio._decoding import (
    MAX_IDLE_BYTES,
    STEP,
    BodyDecoder,
    UndecodableBody,
    codings,
)
from tests._bombs import MIB, bomb, stacked_bomb

TEXT = b'{"jsonrpc": "2.0", "id": 1, "result": {"text": "' + b"hello " * 3000 + b'"}}'


def deflate(data: bytes) -> bytes:
    return zlib.compress(data, 9)


def raw_deflate(data: bytes) -> bytes:
    c = zlib.compressobj(9, zlib.DEFLATED, -zlib.MAX_WBITS)
    return c.compress(data) + c.flush()


def decode(header: str, chunks: Iterable[bytes], step: int = STEP) -> list[bytes]:
    decoder = BodyDecoder(header, step)
    out = [piece for chunk in chunks for piece in decoder.feed(chunk)]
    decoder.end()
    return out


def pieces(data: bytes, size: int) -> list[bytes]:
    return [data[i : i + size] for i in range(0, len(data), size)]


ENCODED = {
    "gzip": gzip.compress(TEXT),
    "x-gzip": gzip.compress(TEXT),
    "deflate": deflate(TEXT),
    "gzip, gzip": gzip.compress(gzip.compress(TEXT)),
    "deflate, gzip, identity": gzip.compress(deflate(TEXT)),
    "GZIP , Deflate": deflate(gzip.compress(TEXT)),
    "identity": TEXT,
    "": TEXT,
}


@pytest.mark.parametrize("header", ENCODED)
@pytest.mark.parametrize("chunk", [1, 7, 4096, 1 << 20], ids=lambda n: f"reads-of-{n}")
def test_every_coding_is_undone_in_steps_of_at_most_step(header: str, chunk: int) -> None:
    out = decode(header, pieces(ENCODED[header], chunk), step=1000)
    assert b"".join(out) == TEXT
    assert all(0 < len(piece) <= max(1000, chunk) for piece in out)
    if header not in ("", "identity"):
        assert all(len(piece) <= 1000 for piece in out)


@settings(max_examples=60, deadline=None)
@given(
    data=st.binary(max_size=3000),
    cuts=st.lists(st.integers(min_value=0, max_value=3000), max_size=8),
    step=st.integers(min_value=1, max_value=300),
    header=st.sampled_from(["gzip", "deflate", "gzip, deflate"]),
)
def test_any_body_read_in_any_pieces_comes_out_whole(
    data: bytes, cuts: list[int], step: int, header: str
) -> None:
    encoded = data
    for coding in [c.strip() for c in header.split(",")]:
        encoded = gzip.compress(encoded) if coding == "gzip" else deflate(encoded)
    bounds = sorted({0, len(encoded), *(min(c, len(encoded)) for c in cuts)})
    chunks = [encoded[a:b] for a, b in itertools.pairwise(bounds)]
    out = decode(header, chunks, step)
    assert b"".join(out) == data
    assert all(0 < len(piece) <= step for piece in out)


@pytest.mark.parametrize("coding", ["gzip", "deflate"])
def test_a_bomb_is_expanded_only_as_far_as_it_is_read(coding: str) -> None:
    decoder = BodyDecoder(coding)
    made = 0
    for piece in decoder.feed(bomb(coding, 1024)):  # one read: 1 GiB in about 1 MiB
        assert len(piece) <= STEP
        made += len(piece)
        if made > MIB:
            break  # what a reader does past its limit: nothing more is decoded
    assert made == MIB + STEP


def test_stacked_bombs_hold_a_step_per_layer() -> None:
    stacked = stacked_bomb()
    assert len(stacked) < 16 * 1024
    decoder = BodyDecoder("gzip, gzip")
    made = 0
    for piece in decoder.feed(stacked):
        assert len(piece) <= STEP
        made += len(piece)
        if made >= 4 * MIB:
            break
    assert made == 4 * MIB


def test_a_coding_under_another_that_makes_nothing_is_refused() -> None:
    # A gzip stream of empty stored blocks makes nothing of any length; gzipped again, a few
    # KiB of it would keep the inner decoder busy without ever yielding a byte.
    header = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
    empty_blocks = header + b"\x00\x00\x00\xff\xff" * (MAX_IDLE_BYTES // 5 + 1000)
    decoder = BodyDecoder("gzip, gzip")
    with pytest.raises(UndecodableBody, match="makes nothing"):
        list(decoder.feed(gzip.compress(empty_blocks)))
    # alone, the same stream is harmless: every byte of it came from the network
    alone = BodyDecoder("gzip")
    assert list(alone.feed(empty_blocks)) == []


@pytest.mark.parametrize(
    ("header", "body", "message"),
    [
        ("gzip", gzip.compress(TEXT)[:-9], "the gzip body is cut short"),
        ("gzip", gzip.compress(TEXT)[:5], "the gzip body is cut short"),
        ("deflate", deflate(TEXT)[:-4], "the deflate body is cut short"),
        ("gzip, gzip", gzip.compress(gzip.compress(TEXT)[:-9]), "the gzip body is cut short"),
        ("gzip", gzip.compress(TEXT) + b"trailing", "data after the end of the gzip body"),
        ("gzip", gzip.compress(TEXT) * 2, "data after the end of the gzip body"),
        ("gzip", b"\x1f\x8b not gzip at all", "the gzip body cannot be decoded"),
        ("gzip", TEXT, "the gzip body cannot be decoded"),
        ("deflate", TEXT, "the deflate body cannot be decoded"),
        ("deflate", raw_deflate(TEXT), "the deflate body cannot be decoded"),
    ],
    ids=[
        "gzip-cut",
        "gzip-header-only",
        "deflate-cut",
        "inner-cut",
        "trailing",
        "two-members",
        "not-gzip",
        "plain-as-gzip",
        "plain-as-deflate",
        "raw-deflate",
    ],
)
def test_broken_streams_are_refused(header: str, body: bytes, message: str) -> None:
    with pytest.raises(UndecodableBody, match=message) as info:
        decode(header, pieces(body, 100))
    assert not info.value.unsupported


@pytest.mark.parametrize(
    ("header", "message"),
    [
        ("br", "unsupported Content-Encoding 'br'"),
        ("zstd", "unsupported Content-Encoding 'zstd'"),
        ("gzip, compress", "unsupported Content-Encoding 'compress'"),
        ("x-garbage\x00", "unsupported Content-Encoding 'x-garbage\\\\x00'"),
        (", ".join(["gzip"] * 6), "more than 5 content codings"),
    ],
)
def test_unknown_codings_are_refused_before_anything_is_read(header: str, message: str) -> None:
    with pytest.raises(UndecodableBody, match=message) as info:
        BodyDecoder(header)
    assert info.value.unsupported


def test_an_empty_body_is_empty_whatever_its_coding() -> None:
    assert decode("gzip", []) == []
    assert decode("gzip, deflate", [b""]) == []
    assert decode("gzip", [gzip.compress(b"")]) == []


def test_codings_are_listed_in_the_order_applied() -> None:
    assert codings(" Deflate , identity,GZIP ") == ["deflate", "gzip"]
    assert codings("") == []
    assert BodyDecoder("identity").identity
    assert not BodyDecoder("gzip").identity
