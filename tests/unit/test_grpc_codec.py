"""The gRPC codec (``_bindings.grpc``), sans-IO, both ways: what a client encodes a server
decodes and the other way round, for every operation of v1.0 and v0.3 (the values of
``test_codec_round_trips``); the RPC of each operation; errors from a gRPC status and its
``google.rpc.Status`` details."""

from __future__ import annotations

import base64
import contextlib
from typing import Any

import pytest
from google.protobuf.any_pb2 import Any as AnyMessage
from google.rpc import error_details_pb2, status_pb2
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from a2a_anyio import (
    A2AAuthError,
    A2AClientError,
    A2AHTTPError,
    A2AProtocolError,
    A2ARPCError,
    A2ATimeoutError,
    ExtendedCardNotConfiguredError,
    InvalidParamsError,
    Message,
    MethodNotFoundError,
    Task,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_anyio._bindings.base import GrpcStatus, StreamStatus
from a2a_anyio._bindings.grpc_pb import a2a_v0_3_pb2, a2a_v1_pb2
from a2a_anyio._dialects import Cancel, Op, Send, TaskRef

from ._grpc_serving import ServingGrpcCodec, serving_codec
from .test_codec_round_trips import ARGS, EVENTS, RESULTS, TASK

URL = "http://127.0.0.1:50051"
VERSIONS = ("1.0", "0.3")
CARDS: dict[str, list[dict[str, Any]]] = {
    "1.0": [
        {
            "name": "Agent",
            "description": "d",
            "version": "1",
            "supportedInterfaces": [
                {"url": "127.0.0.1:50051", "protocolBinding": "GRPC", "protocolVersion": "1.0"}
            ],
        }
    ],
    "0.3": [{"name": "Agent", "description": "d", "url": URL, "preferredTransport": "GRPC"}],
}


def _codec(version: str, **options: Any) -> ServingGrpcCodec:
    return serving_codec(version, URL, **options)


def _cases(table: dict[Op, Any]) -> list[tuple[str, Op]]:
    return [(v, op) for v in VERSIONS for op in table if _codec(v).supports(op)]


def test_the_rpcs_of_each_version() -> None:
    v1, v03 = _codec("1.0"), _codec("0.3")
    assert {op: v1.path(op) for op in Op if v1.supports(op)} == {
        Op.SEND: "/lf.a2a.v1.A2AService/SendMessage",
        Op.STREAM: "/lf.a2a.v1.A2AService/SendStreamingMessage",
        Op.GET: "/lf.a2a.v1.A2AService/GetTask",
        Op.LIST: "/lf.a2a.v1.A2AService/ListTasks",
        Op.CANCEL: "/lf.a2a.v1.A2AService/CancelTask",
        Op.SUBSCRIBE: "/lf.a2a.v1.A2AService/SubscribeToTask",
        Op.PUSH_CREATE: "/lf.a2a.v1.A2AService/CreateTaskPushNotificationConfig",
        Op.PUSH_GET: "/lf.a2a.v1.A2AService/GetTaskPushNotificationConfig",
        Op.PUSH_LIST: "/lf.a2a.v1.A2AService/ListTaskPushNotificationConfigs",
        Op.PUSH_DELETE: "/lf.a2a.v1.A2AService/DeleteTaskPushNotificationConfig",
        Op.EXTENDED_CARD: "/lf.a2a.v1.A2AService/GetExtendedAgentCard",
    }
    assert {op: v03.path(op).rpartition("/")[2] for op in Op if v03.supports(op)} == {
        Op.SEND: "SendMessage",
        Op.STREAM: "SendStreamingMessage",
        Op.GET: "GetTask",
        Op.CANCEL: "CancelTask",
        Op.SUBSCRIBE: "TaskSubscription",
        Op.PUSH_CREATE: "CreateTaskPushNotificationConfig",
        Op.PUSH_GET: "GetTaskPushNotificationConfig",
        Op.PUSH_LIST: "ListTaskPushNotificationConfig",
        Op.PUSH_DELETE: "DeleteTaskPushNotificationConfig",
        Op.EXTENDED_CARD: "GetAgentCard",
    }
    assert v03.path(Op.SEND) == "/a2a.v1.A2AService/SendMessage"
    assert not v03.supports(Op.LIST) and not v1.supports(Op.CALL)
    for op in Op:  # every operation's RPC is the service's, as the proto has it
        if v1.supports(op):
            method = v1.path(op).rpartition("/")[2]
            assert method in a2a_v1_pb2.DESCRIPTOR.services_by_name["A2AService"].methods_by_name
        if v03.supports(op):
            method = v03.path(op).rpartition("/")[2]
            service = a2a_v0_3_pb2.DESCRIPTOR.services_by_name["A2AService"]
            assert method in service.methods_by_name


def test_a_request_goes_to_the_interfaces_origin_with_its_metadata() -> None:
    codec = _codec("1.0", tenant="acme", extensions=["https://ext.example/x"])
    req = codec.encode(Op.GET, TaskRef("t-1", 2))
    assert (req.method, req.url) == ("POST", URL + "/lf.a2a.v1.A2AService/GetTask")
    assert req.name == "GetTask" and req.interface == URL
    assert dict(req.headers) == {
        "Content-Type": "application/grpc",
        "A2A-Version": "1.0",
        "A2A-Extensions": "https://ext.example/x",
    }
    sent = a2a_v1_pb2.GetTaskRequest.FromString(req.body or b"")
    assert (sent.tenant, sent.id, sent.history_length) == ("acme", "t-1", 2)
    v03 = _codec("0.3").encode(Op.GET, TaskRef("t-1", 2))
    assert a2a_v0_3_pb2.GetTaskRequest.FromString(v03.body or b"").name == "tasks/t-1"
    assert v03.headers["A2A-Version"] == "0.3"


@pytest.mark.parametrize(("version", "op"), _cases(ARGS))
def test_the_server_reads_what_the_client_wrote(version: str, op: Op) -> None:
    codec = _codec(version)
    args = ARGS[op]
    req = codec.encode(op, args)
    assert codec.op_for(req.url.removeprefix(URL)) is op
    got = codec.decode_request(op, req.body or b"")
    if not (version == "0.3" and op is Op.SEND):
        # (v0.3: ``blocking: false`` is the proto's default, so not in the ProtoJSON the
        # dialect reads, which takes a missing one as true, as the HTTP+JSON server's does)
        assert codec.encode(op, got).body == req.body  # nothing the client wrote was lost
    if isinstance(got, Send):
        assert isinstance(args, Send)
        assert got.message == args.message
        assert got.config.metadata == args.config.metadata
    elif version == "0.3" and op is Op.CANCEL:
        assert got == Cancel("t-1")  # the v0.3 proto's CancelTaskRequest has no metadata
    else:
        assert (type(got), got) == (type(args), args)


@pytest.mark.parametrize(("version", "op"), _cases(RESULTS))
def test_the_client_reads_what_the_server_wrote(version: str, op: Op) -> None:
    codec = _codec(version)
    for value in CARDS[version] if op is Op.EXTENDED_CARD else RESULTS[op]:
        req = codec.encode(op, ARGS[op])
        body = codec.encode_result(op, value)
        got = codec.decode(req, GrpcStatus(0), {}, body)
        if op is Op.EXTENDED_CARD:
            assert got.name == value["name"]
            continue
        assert codec.encode_result(op, got) == body  # nothing the server wrote was lost
        if isinstance(value, (Task, Message)):
            assert type(got) is type(value)
            assert got.context_id == value.context_id


@pytest.mark.parametrize("version", VERSIONS)
def test_stream_events_both_ways(version: str) -> None:
    codec = _codec(version)
    req = codec.encode(Op.STREAM, ARGS[Op.STREAM])
    decoder = codec.event_decoder(req)
    for event in EVENTS:
        data = codec.encode_event(event, None, TASK)
        got = decoder.decode(data)
        assert type(got) is type(event)
        assert codec.encode_event(got, None, TASK) == data
        assert decoder.ends(got) == (event is EVENTS[3] or isinstance(event, Message))
    with pytest.raises(TaskNotFoundError) as info:
        status, trailers = codec.encode_error(-32001, "gone")
        decoder.decode(StreamStatus(GrpcStatus(status), trailers))
    assert info.value.method == "SendStreamingMessage"


@pytest.mark.parametrize("version", VERSIONS)
@pytest.mark.parametrize(
    ("code", "cls", "status"),
    [
        (-32001, TaskNotFoundError, 5),
        (-32002, TaskNotCancelableError, 9),
        (-32004, UnsupportedOperationError, 9),
        (-32602, InvalidParamsError, 3),
        (-32007, ExtendedCardNotConfiguredError, 9),
    ],
)
def test_errors_both_ways(version: str, code: int, cls: type[A2ARPCError], status: int) -> None:
    codec = _codec(version)
    req = codec.encode(Op.GET, TaskRef("t-1"))
    sent, trailers = codec.encode_error(code, "no such thing", {"taskId": "t-1"})
    assert sent == status
    with pytest.raises(cls) as caught:
        codec.decode(req, GrpcStatus(sent), trailers, b"")
    error = caught.value
    assert error.message == "no such thing"
    assert (error.method, error.operation, error.agent) == ("GetTask", "get", URL)
    if version == "1.0":  # the reason read from the google.rpc.Status details
        assert error.reason is not None
        assert error.data[0]["domain"] == "a2a-protocol.org"
    if cls is TaskNotFoundError:
        assert isinstance(error, TaskNotFoundError) and error.task_id == "t-1"


def _details(*items: Any) -> str:
    status = status_pb2.Status(code=9, message="m")
    for item in items:
        status.details.add().Pack(item)
    return base64.b64encode(status.SerializeToString()).decode().rstrip("=")


def _error(status: int, **trailers: str) -> A2AClientError:
    codec = _codec("1.0")
    req = codec.encode(Op.GET, TaskRef("t-1"))
    with pytest.raises(A2AClientError) as info:
        codec.decode(req, GrpcStatus(status), trailers, b"")
    return info.value


def test_the_error_info_reason_names_the_error() -> None:
    info = error_details_pb2.ErrorInfo(reason="VERSION_NOT_SUPPORTED", domain="a2a-protocol.org")
    error = _error(9, **{"grpc-message": "1.0%20only", "grpc-status-details-bin": _details(info)})
    assert isinstance(error, VersionNotSupportedError)
    assert (error.message, error.reason) == ("1.0 only", "VERSION_NOT_SUPPORTED")
    # Another domain's reason is no A2A error; nor is a detail of a type unknown here.
    other = error_details_pb2.ErrorInfo(reason="TASK_NOT_FOUND", domain="example.com")
    status = status_pb2.Status(code=9)
    status.details.add().Pack(other)
    status.details.append(AnyMessage(type_url="type.googleapis.com/x.Unknown", value=b"\x08\x01"))
    raw = base64.b64encode(status.SerializeToString()).decode()
    error = _error(9, **{"grpc-status-details-bin": raw})
    assert type(error) is A2AHTTPError
    assert error.status_code == 400


def test_a_v03_error_class_named_before_the_message() -> None:
    error = _error(12, **{"grpc-message": "TaskNotCancelableError: it%20is%20done"})
    assert isinstance(error, TaskNotCancelableError)
    assert error.message == "it is done"
    error = _error(13, **{"grpc-message": "InternalError: boom"})
    assert type(error).__name__ == "A2AServerError"


@pytest.mark.parametrize(
    ("status", "cls", "http"),
    [
        (16, A2AAuthError, 401),
        (7, A2AAuthError, 403),
        (14, A2AHTTPError, 503),
        (8, A2AHTTPError, 429),
        (13, A2AHTTPError, 500),
        (2, A2AHTTPError, 500),
        (99, A2AHTTPError, 500),
    ],
)
def test_a_status_that_names_no_a2a_error(status: int, cls: type[A2AHTTPError], http: int) -> None:
    error = _error(status, **{"grpc-message": "why"})
    assert type(error) is cls
    assert isinstance(error, A2AHTTPError)
    assert error.status_code == http
    assert error.body == "why"


def test_unimplemented_deadline_and_retry_info() -> None:
    assert isinstance(_error(12), MethodNotFoundError)
    late = _error(4)
    assert isinstance(late, A2ATimeoutError) and late.timeout == "deadline"
    wait = error_details_pb2.RetryInfo()
    wait.retry_delay.FromSeconds(3)
    busy = _error(14, **{"grpc-status-details-bin": _details(wait)})
    assert isinstance(busy, A2AHTTPError)
    assert (busy.retryable, busy.retry_after) == (True, 3.0)
    assert isinstance(_error(14, **{"grpc-status-details-bin": "%%%"}), A2AHTTPError)


def test_an_answer_that_is_no_message_of_its_rpc() -> None:
    codec = _codec("1.0")
    req = codec.encode(Op.GET, TaskRef("t-1"))
    with pytest.raises(A2AProtocolError) as info:
        codec.decode(req, GrpcStatus(0), {}, b"\xff\xff\xff")
    assert "the answer is no Task message" in info.value.message
    assert info.value.method == "GetTask"
    with pytest.raises(A2AProtocolError):  # a message, but no task in it
        codec.decode(codec.encode(Op.SEND, ARGS[Op.SEND]), GrpcStatus(0), {}, b"")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.binary(max_size=300), status=st.integers(0, 20), details=st.binary(max_size=80))
def test_what_a_server_sends_is_a_result_or_a_typed_error(
    data: bytes, status: int, details: bytes
) -> None:
    """No exception of protobuf's reaches the caller: any bytes as an answer, an event or a
    status's details."""
    for version in VERSIONS:
        codec = _codec(version)
        for op, args in ((Op.GET, TaskRef("t-1")), (Op.SEND, ARGS[Op.SEND])):
            req = codec.encode(op, args)
            trailers = {"grpc-status-details-bin": base64.b64encode(details).decode()}
            for code, headers in ((0, {}), (status, trailers)):
                with contextlib.suppress(A2AClientError):
                    codec.decode(req, GrpcStatus(code), headers, data)
        decoder = codec.event_decoder(codec.encode(Op.STREAM, ARGS[Op.STREAM]))
        with contextlib.suppress(A2AClientError):
            decoder.decode(data)
