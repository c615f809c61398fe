"""The gRPC codec's ProtoJSON writer (``_bindings.grpc_json``) writes what
``json_format.MessageToDict`` writes, whole numbers as ints: for every message the codec
encodes (v1.0 and v0.3: requests, results, stream events, error details), for any bytes
that parse as an answer, and at the edges (maps, bytes, enums it does not know, a
``Value`` ProtoJSON cannot say)."""

from __future__ import annotations

import math
from typing import Any

import pytest
from google.protobuf import json_format, struct_pb2, timestamp_pb2
from google.protobuf.message import DecodeError, Message
from google.rpc import error_details_pb2, status_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_anyio._bindings.grpc_json import from_json, to_json, whole
from a2a_anyio._bindings.grpc_pb import a2a_v0_3_pb2, a2a_v1_pb2
from a2a_anyio._dialects import Op

from ._grpc_serving import ServingGrpcCodec, serving_codec
from .test_codec_round_trips import ARGS, EVENTS, RESULTS, TASK
from .test_grpc_codec import CARDS

MODULES = (a2a_v1_pb2, a2a_v0_3_pb2)


def _expected(message: Message) -> Any:
    return whole(json_format.MessageToDict(message))


def _codec(version: str) -> ServingGrpcCodec:
    return serving_codec(version, "http://127.0.0.1:50051")


def _messages() -> list[Message]:
    out: list[Message] = []
    for version in ("1.0", "0.3"):
        codec = _codec(version)
        service = codec.service
        for op, rpc in service.rpcs.items():
            if op in ARGS and codec.supports(op):
                body = codec.encode(op, ARGS[op]).body or b""
                out.append(service.message(rpc.request).FromString(body))
            results = CARDS[version] if op is Op.EXTENDED_CARD else RESULTS.get(op, [])
            for value in results if codec.supports(op) else []:
                body = codec.encode_result(op, value)
                out.append(service.message(rpc.response).FromString(body))
        stream = service.message(service.rpcs[Op.STREAM].response)
        out += [stream.FromString(codec.encode_event(e, None, TASK)) for e in EVENTS]
    return out


@pytest.mark.parametrize("message", _messages(), ids=lambda m: m.DESCRIPTOR.full_name)
def test_what_the_codec_sends_reads_as_json_format_writes_it(message: Message) -> None:
    assert to_json(message) == _expected(message)


def test_the_edges() -> None:
    data = struct_pb2.Struct()
    data.update({"n": 3, "x": 2.5, "big": 2.0**60, "list": [1, "a", None, True, {"k": 4}]})
    part = a2a_v1_pb2.Part(data=struct_pb2.Value(struct_value=data), metadata=data)
    written = to_json(part)
    assert written == _expected(part)
    assert written["data"]["n"] == 3 and isinstance(written["data"]["n"], int)
    assert isinstance(written["metadata"]["big"], float)
    raw = a2a_v1_pb2.Part(raw=b"\x00\xff")
    assert to_json(raw) == _expected(raw) == {"raw": "AP8="}
    task = a2a_v1_pb2.Task(id="t")
    state: Any = task.status
    state.state = 77  # a state this client's proto does not know: its number
    task.status.timestamp.CopyFrom(timestamp_pb2.Timestamp(seconds=1, nanos=5000))
    assert to_json(task) == _expected(task)
    info = error_details_pb2.ErrorInfo(reason="R", domain="d", metadata={"a": "b"})
    status = status_pb2.Status(code=5, message="m")
    status.details.add().Pack(info)
    status.details.add().Pack(error_details_pb2.RetryInfo())
    assert to_json(status) == _expected(status)
    assert to_json(struct_pb2.Value()) is None
    for bad in (math.nan, math.inf):
        with pytest.raises(ValueError, match="has no JSON form"):
            to_json(struct_pb2.Value(number_value=bad))


RESPONSES = [
    getattr(module, name)
    for module in MODULES
    for name in ("SendMessageResponse", "StreamResponse", "Task", "AgentCard")
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=300), which=st.integers(0, len(RESPONSES) - 1))
def test_any_answer_reads_as_json_format_writes_it(data: bytes, which: int) -> None:
    try:
        message = RESPONSES[which].FromString(data)
    except DecodeError:
        return
    try:
        expected = _expected(message)
    except ValueError:
        with pytest.raises(ValueError, match="has no JSON form"):
            to_json(message)
        return
    assert to_json(message) == expected


@pytest.mark.parametrize("message", _messages(), ids=lambda m: m.DESCRIPTOR.full_name)
def test_what_the_codec_writes_reads_back_as_parse_dict_reads_it(message: Message) -> None:
    value = json_format.MessageToDict(message)
    ours = from_json(type(message), value).SerializeToString(deterministic=True)
    theirs = json_format.ParseDict(value, type(message)()).SerializeToString(deterministic=True)
    assert ours == theirs


JSON = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 5) | st.text(max_size=4),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=8,
)
FIELDS = st.sampled_from(
    ["message", "messageId", "message_id", "role", "parts", "text", "raw", "data", "metadata",
     "configuration", "historyLength", "acceptedOutputModes", "contextId", "url", "bogus"]
)  # fmt: skip


def _tree(depth: int) -> st.SearchStrategy[Any]:
    leaf = JSON | st.sampled_from(["ROLE_USER", "AP8=", 3, 2.0, 2.5, "1", True])
    if depth == 0:
        return leaf
    return (
        leaf
        | st.dictionaries(FIELDS, _tree(depth - 1), max_size=4)
        | st.lists(st.dictionaries(FIELDS, _tree(depth - 1), max_size=3), max_size=2)
    )


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(value=st.dictionaries(FIELDS, _tree(3), max_size=4))
def test_any_json_reads_as_parse_dict_reads_it(value: dict[str, Any]) -> None:
    cls = a2a_v1_pb2.SendMessageRequest
    try:
        theirs = json_format.ParseDict(value, cls()).SerializeToString(deterministic=True)
    except (json_format.ParseError, ValueError, TypeError):
        with pytest.raises((ValueError, TypeError)):
            from_json(cls, value)
        return
    assert from_json(cls, value).SerializeToString(deterministic=True) == theirs
