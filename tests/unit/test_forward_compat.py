"""Fields the client does not know never break a read: what a newer agent adds at any level of
a task, message, part, artifact, event, page, push config, error or card is passed over, in
every dialect and binding, and the rest reads as it did."""

from __future__ import annotations

import json
from typing import Any

import pytest
from google.protobuf.message import Message

from a2a_anyio._bindings import WireCodec
from a2a_anyio._bindings.base import GrpcStatus, HttpStatus
from a2a_anyio._dialects import Op
from a2a_anyio._dialects.card import parse_card

from ._support import frame_names, load_frame, sse_payloads
from .test_codec_round_trips import ARGS, CARD, EVENTS, RESULTS, TASK, _cases, _codec
from .test_codec_round_trips import CODECS as ROUND_TRIP_CODECS
from .test_grpc_codec import VERSIONS as GRPC_VERSIONS
from .test_grpc_codec import _codec as _grpc_codec
from .test_wire_codecs import ALL_FRAMES, _answer, _frame_codec, _frame_request

#: Values the agent's user owns, read as they are: nothing is added inside them.
OWNED = frozenset({"metadata", "data", "params", "parameters", "schema"})
#: Maps, whose keys are names (a scheme's, a scope's) and not fields: their values are widened.
MAPS = frozenset({"securitySchemes", "scopes", "schemes"})
#: Lists of such maps (a card's security requirements, v0.3).
MAP_LISTS = frozenset({"security"})
#: What a newer version might add: a scalar, an object, a list, and the ordering counter
#: proposed for A2A 1.1 (an int64: a string in protobuf's JSON).
NEW_FIELDS = {
    "futureField": {"nested": [1, "two", {"deeper": None}], "flag": True},
    "futureList": [{"a": 1}, "b"],
    "futureScalar": 3.5,
    "generation": "7",
}


def widened(value: Any, fields: bool = True) -> Any:
    """``value`` with ``NEW_FIELDS`` added to every object in it, owned values aside (and
    maps, ``fields`` False, given none)."""
    if isinstance(value, dict):
        out = {k: _member(k, v) for k, v in value.items()}
        if fields:
            out.update({k: v for k, v in NEW_FIELDS.items() if k not in out})
        return out
    if isinstance(value, list):
        return [widened(item, fields) for item in value]
    return value


def _member(key: str, value: Any) -> Any:
    if key in OWNED:
        return value
    if key in MAPS and isinstance(value, dict):
        return {k: widened(v) for k, v in value.items()}
    if key in MAP_LISTS and isinstance(value, list):
        return [widened(item, fields=False) for item in value]
    return widened(value)


def test_widened_reaches_every_level() -> None:
    wide = widened({"a": [{"b": {}}], "metadata": {"m": 1}})
    assert wide["a"][0]["b"]["futureScalar"] == 3.5
    assert wide["metadata"] == {"m": 1}


# -- what the codecs write, widened: every dialect and binding --------------------------------


def _read(codec: WireCodec, op: Op, value: Any, widen: bool) -> Any:
    req = codec.encode(op, ARGS[op])
    answer = codec.encode_result(op, value, req.request_id)
    body = json.dumps(widened(answer) if widen else answer).encode()
    return codec.decode(req, HttpStatus(200), {"content-type": codec.content_type}, body)


@pytest.mark.parametrize(("binding", "version", "op"), _cases(RESULTS))
def test_answers_with_unknown_fields_read_the_same(binding: str, version: str, op: Op) -> None:
    codec = _codec(binding, version)
    for value in RESULTS[op]:
        try:
            plain = _read(codec, op, value, widen=False)
        except Exception:  # what the dialect cannot say (a legacy agent's message)
            continue
        assert _read(codec, op, value, widen=True) == plain


@pytest.mark.parametrize(("binding", "version"), ROUND_TRIP_CODECS)
def test_events_with_unknown_fields_read_the_same(binding: str, version: str) -> None:
    codec = _codec(binding, version)
    req = codec.encode(Op.STREAM, ARGS[Op.STREAM])
    for event in EVENTS:
        try:
            data = codec.encode_event(event, req.request_id, TASK)
            plain = codec.event_decoder(req).decode(json.dumps(data))
        except Exception:  # an event the dialect cannot carry
            continue
        decoder = codec.event_decoder(req)
        got = decoder.decode(json.dumps(widened(data)))
        assert (type(got), got) == (type(plain), plain)
        assert decoder.ends(got) == codec.event_decoder(req).ends(plain)


# -- real servers' answers (tests/frames), widened --------------------------------------------


def _decode_frame(directory: str, name: str, widen: bool) -> Any:
    frame = load_frame(directory, name)
    codec = _frame_codec(directory, name)
    req = _frame_request(codec, name, frame)
    resp = frame["response"]
    if "sse" in resp:
        decoder = codec.event_decoder(req)
        out: list[Any] = []
        for payload in sse_payloads(resp["sse"]):
            try:
                out.append(decoder.decode(json.dumps(widened(payload) if widen else payload)))
            except Exception as exc:
                return (type(exc), getattr(exc, "code", None), out)
        return out
    body = resp["body"]
    if not isinstance(body, str):
        body = _answer(widened(body) if widen else body).decode()
    raw = body.encode()
    try:
        return codec.decode(req, resp["status"], {"content-type": resp["content_type"]}, raw)
    except Exception as exc:
        return (type(exc), getattr(exc, "code", None))


@pytest.mark.parametrize(("directory", "name"), ALL_FRAMES, ids=[f"{d}/{n}" for d, n in ALL_FRAMES])
def test_recorded_answers_with_unknown_fields_read_the_same(directory: str, name: str) -> None:
    assert _decode_frame(directory, name, widen=True) == _decode_frame(directory, name, widen=False)


CARDS = [(d, "card") for d in ("v1_0", "v0_3") if "card" in frame_names(d)]


@pytest.mark.parametrize(("directory", "name"), CARDS, ids=[d for d, _ in CARDS])
def test_cards_with_unknown_fields_read_the_same(directory: str, name: str) -> None:
    card = load_frame(directory, name)["response"]["body"]
    assert parse_card(widened(card)) == parse_card(card)
    assert parse_card(widened(CARD)) == parse_card(CARD)


# -- gRPC: fields of numbers the messages do not have ------------------------------------------

#: Unknown fields as protobuf writes them: a varint (field 1000), a string (1001) and a nested
#: message (1002) holding a varint.
UNKNOWN_PB = b"\xc0\x3e\x07" + b"\xca\x3e\x03new" + b"\xd2\x3e\x02\x08\x01"


def _widened_pb(message: Message) -> None:
    """Add ``UNKNOWN_PB`` to ``message`` and every message in it (protobuf's own types aside:
    a Struct's values are the user's)."""
    if message.DESCRIPTOR.full_name.startswith("google.protobuf."):
        return
    message.MergeFromString(UNKNOWN_PB)
    for field, value in message.ListFields():
        if field.message_type is None:
            continue
        if field.message_type.GetOptions().map_entry:
            values = (
                value.values() if field.message_type.fields_by_name["value"].message_type else []
            )
        elif field.is_repeated:
            values = value
        else:
            values = [value]
        for item in values:
            _widened_pb(item)


def _pb_widened(cls: type[Message], data: bytes) -> bytes:
    message = cls.FromString(data)
    _widened_pb(message)
    widened_data: bytes = message.SerializeToString()
    assert len(widened_data) > len(data)
    return widened_data


@pytest.mark.parametrize("version", GRPC_VERSIONS)
def test_grpc_answers_and_events_with_unknown_fields_read_the_same(version: str) -> None:
    codec = _grpc_codec(version)
    service = codec.service
    for op, values in RESULTS.items():
        if not codec.supports(op) or op is Op.EXTENDED_CARD:
            continue
        req = codec.encode(op, ARGS[op])
        cls = service.message(service.rpcs[op].response)
        for value in values:
            body = codec.encode_result(op, value)
            if not body:
                continue  # an empty answer (a delete)
            assert codec.decode(req, GrpcStatus(0), {}, _pb_widened(cls, body)) == codec.decode(
                req, GrpcStatus(0), {}, body
            )
    req = codec.encode(Op.STREAM, ARGS[Op.STREAM])
    cls = service.message(service.rpcs[Op.STREAM].response)
    for event in EVENTS:
        data = codec.encode_event(event, None, TASK)
        plain = codec.event_decoder(req).decode(data)
        got = codec.event_decoder(req).decode(_pb_widened(cls, data))
        assert (type(got), got) == (type(plain), plain)
