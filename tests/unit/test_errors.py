"""The exception tree, the JSON-RPC error mapping, envelopes and HTTP decoding."""

from __future__ import annotations

import inspect
import json
from typing import Any

import pytest

import a2a_anyio
from a2a_anyio import (
    A2AAuthError,
    A2AClientError,
    A2AConnectionError,
    A2AHTTPError,
    A2AProtocolError,
    A2ARPCError,
    A2AServerError,
    A2ATimeoutError,
    ContentTypeNotSupportedError,
    ExtendedCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    PushNotificationNotSupportedError,
    Task,
    TaskFailedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    TaskState,
    TaskStatus,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_anyio._bindings.jsonrpc import decode_http, request, unwrap
from a2a_anyio._dialects.errors import error_reason, rpc_error
from a2a_anyio._dialects.legacy import LEGACY
from a2a_anyio._dialects.v03 import V02, V03
from a2a_anyio._dialects.v1 import V1

STANDARD = {
    -32700: ParseError,
    -32600: InvalidRequestError,
    -32601: MethodNotFoundError,
    -32602: InvalidParamsError,
    -32603: A2AServerError,
    -32001: TaskNotFoundError,
    -32002: TaskNotCancelableError,
    -32003: PushNotificationNotSupportedError,
    -32004: UnsupportedOperationError,
}
VERSIONED = {
    -32005: ContentTypeNotSupportedError,
    -32006: InvalidAgentResponseError,
    -32007: ExtendedCardNotConfiguredError,
    -32008: ExtensionSupportRequiredError,
    -32009: VersionNotSupportedError,
}
# The highest A2A code each version defines (a2a-protocol §5.2).
DEFINED_UP_TO = {"1.0": -32009, "0.3": -32007, "0.2": -32006, "legacy": -32004}

CODES = {d.version: d.errors for d in (V1, V03, V02, LEGACY)}


def _all_error_classes() -> list[type[BaseException]]:
    return [
        obj
        for name in a2a_anyio.__all__
        if inspect.isclass(obj := getattr(a2a_anyio, name)) and issubclass(obj, BaseException)
    ]


def test_every_public_exception_is_an_a2a_client_error() -> None:
    classes = _all_error_classes()
    assert len(classes) >= 20
    for cls in classes:
        assert issubclass(cls, A2AClientError), cls


def test_tree_shape() -> None:
    assert issubclass(A2ATimeoutError, A2AConnectionError)
    assert issubclass(A2AAuthError, A2AHTTPError)
    for cls in [*STANDARD.values(), *VERSIONED.values()]:
        assert issubclass(cls, A2ARPCError)
    assert A2AConnectionError("x").retryable
    assert not A2AProtocolError("x").retryable


@pytest.mark.parametrize("version", ["1.0", "0.3", "0.2", "legacy"])
@pytest.mark.parametrize("code", sorted(STANDARD))
def test_standard_codes_in_every_version(version: str, code: int) -> None:
    err = rpc_error(code, "boom", {"x": 1}, codes=CODES[version])
    assert type(err) is STANDARD[code]
    assert err.code == code
    assert err.message == "boom"
    assert err.data == {"x": 1}


@pytest.mark.parametrize("version", ["1.0", "0.3", "0.2", "legacy"])
@pytest.mark.parametrize("code", sorted(VERSIONED))
def test_versioned_codes(version: str, code: int) -> None:
    err = rpc_error(code, "boom", codes=CODES[version])
    if code >= DEFINED_UP_TO[version]:
        assert type(err) is VERSIONED[code]
    else:
        assert type(err) is A2AServerError
    assert err.code == code


def test_32009_per_version() -> None:
    assert isinstance(rpc_error(-32009, "v", codes=CODES["1.0"]), VersionNotSupportedError)
    old = rpc_error(-32009, "v", codes=CODES["0.3"])
    assert type(old) is A2AServerError
    assert old.code == -32009
    assert "[-32009]" in str(old)


@pytest.mark.parametrize("code", [-32000, -32099, -1, 0, 404])
def test_unknown_codes_are_server_errors_keeping_the_code(code: int) -> None:
    err = rpc_error(code, "odd", codes=CODES["1.0"])
    assert type(err) is A2AServerError
    assert err.code == code


@pytest.mark.parametrize("code", [None, "x", 1.5, True])
def test_non_integer_code(code: Any) -> None:
    err = rpc_error(code, None, codes=CODES["1.0"])
    assert type(err) is A2AServerError
    assert err.code == -32603
    assert err.message == "JSON-RPC error"


def _info(reason: str) -> list[dict[str, Any]]:
    return [
        {"@type": "type.googleapis.com/google.rpc.BadRequest", "fieldViolations": []},
        {
            "@type": "type.googleapis.com/google.rpc.ErrorInfo",
            "reason": reason,
            "domain": "a2a-protocol.org",
        },
    ]


def test_error_info_reason_wins_over_code() -> None:
    err = rpc_error(-32603, "wrapped", _info("TASK_NOT_FOUND"), task_id="t-9", codes=CODES["1.0"])
    assert isinstance(err, TaskNotFoundError)
    assert err.reason == "TASK_NOT_FOUND"
    assert err.task_id == "t-9"
    err2 = rpc_error(-32001, "x", _info("VERSION_NOT_SUPPORTED"), codes=CODES["0.3"])
    assert isinstance(err2, VersionNotSupportedError)
    err3 = rpc_error(-32001, "x", _info("SOMETHING_NEW"), codes=CODES["1.0"])
    assert isinstance(err3, TaskNotFoundError)
    assert err3.reason == "SOMETHING_NEW"


def test_error_reason_reader() -> None:
    assert error_reason(_info("X")) == "X"
    assert error_reason([{"reason": "NO_TYPE"}]) == "NO_TYPE"
    assert error_reason([{"@type": "google.rpc.Other", "reason": "NOPE"}]) is None
    assert error_reason({"reason": "not a list"}) is None
    assert error_reason("TASK_NOT_FOUND") is None
    assert error_reason(None) is None


def test_constructor_shapes() -> None:
    nf = TaskNotFoundError(task_id="t-1")
    assert nf.task_id == "t-1"
    assert nf.code == -32001
    assert nf.message == "task not found: t-1"
    nc = TaskNotCancelableError(state=TaskState.COMPLETED)
    assert nc.state is TaskState.COMPLETED
    assert nc.code == -32002
    assert nc.message == "task cannot be canceled in state completed"
    assert TaskNotCancelableError(state="failed").state == "failed"
    se = A2AServerError("kaput")
    assert (se.code, se.message) == (-32603, "kaput")
    assert A2AServerError("odd", code=-32042).code == -32042
    http = A2AHTTPError(status_code=503, body="x" * 5000)
    assert http.status_code == 503
    assert len(http.body) == 500
    assert http.message == "HTTP 503: " + "x" * 200
    assert http.retryable
    assert not A2AHTTPError(status_code=400).retryable
    assert A2AHTTPError(status_code=400).message == "HTTP 400"
    auth = A2AAuthError("who are you?", status_code=401, body="no", schemes=["bearer"])
    assert (auth.message, auth.status_code, auth.body, auth.schemes) == (
        "who are you?",
        401,
        "no",
        ["bearer"],
    )
    timeout = A2ATimeoutError("slow", timeout="deadline")
    assert timeout.timeout == "deadline"
    assert timeout.retryable
    failed = TaskFailedError(task=Task("t", None, TaskStatus(TaskState.FAILED)))
    assert str(failed) == "task t failed"


# The fields a class requires, by name: a class with a new required field adds it here.
REQUIRED: dict[str, Any] = {
    "status_code": 500,
    "timeout": "deadline",
    "task": Task("t", None, TaskStatus(TaskState.FAILED)),
    "expected_context_id": "c-1",
    "received_context_id": "c-2",
    "url": "http://10.0.0.1/",
    "address": "10.0.0.1",
    "rule": "private",
}


def _public_errors() -> list[type[A2AClientError]]:
    return [
        obj
        for name in a2a_anyio.__all__
        if inspect.isclass(obj := getattr(a2a_anyio, name)) and issubclass(obj, A2AClientError)
    ]


@pytest.mark.parametrize("cls", _public_errors(), ids=lambda c: c.__name__)
def test_every_error_takes_the_message_then_keywords(cls: type[A2AClientError]) -> None:
    params = list(inspect.signature(cls).parameters.values())
    assert (params[0].name, params[0].kind) == ("message", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    kinds = {inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.VAR_KEYWORD}
    assert all(p.kind in kinds for p in params[1:]), params
    required: dict[str, Any] = {
        p.name: REQUIRED[p.name]
        for p in params[1:]
        if p.kind is inspect.Parameter.KEYWORD_ONLY and p.default is inspect.Parameter.empty
    }
    err = cls("text", **required)
    assert err.message == "text"
    assert err.args == ("text",)
    with pytest.raises(TypeError):
        cls("text", "more", **required)  # type: ignore[call-arg]


def test_where_appears_in_str() -> None:
    err = A2AConnectionError("down", agent="https://a.example", method="SendMessage")
    assert str(err) == "down (SendMessage at https://a.example)"
    assert err.events == []


# -- envelopes ---------------------------------------------------------------------------------


def test_request_envelope() -> None:
    assert request("GetTask", {"id": "t"}, 7) == {
        "jsonrpc": "2.0",
        "id": 7,
        "method": "GetTask",
        "params": {"id": "t"},
    }
    assert "params" not in request("GetExtendedAgentCard", None, 1)


def test_unwrap_result() -> None:
    assert unwrap({"jsonrpc": "2.0", "id": 3, "result": {"ok": 1}}, 3, codes=CODES["1.0"]) == {
        "ok": 1
    }
    assert unwrap({"jsonrpc": "2.0", "id": 3, "result": None}, 3, codes=CODES["1.0"]) is None


def test_unwrap_left_out_null_result() -> None:
    # The a2a-sdk v0.3 layer answers a push-config delete with no "result" member at all.
    assert unwrap({"jsonrpc": "2.0", "id": 5}, 5, codes=CODES["0.3"]) is None
    with pytest.raises(A2AProtocolError, match="id"):
        unwrap({"jsonrpc": "2.0", "id": 6}, 5, codes=CODES["0.3"])


@pytest.mark.parametrize(("got", "expected"), [("3", 3), (3, "3"), ("abc", "abc")])
def test_unwrap_string_and_int_ids_are_equivalent(got: Any, expected: Any) -> None:
    assert unwrap({"jsonrpc": "2.0", "id": got, "result": 1}, expected, codes=CODES["1.0"]) == 1


@pytest.mark.parametrize("got", [4, "4", None, "x"])
def test_unwrap_wrong_id_on_result(got: Any) -> None:
    with pytest.raises(A2AProtocolError, match="id"):
        unwrap({"jsonrpc": "2.0", "id": got, "result": 1}, 3, codes=CODES["1.0"])


def test_unwrap_wrong_id_on_error() -> None:
    with pytest.raises(A2AProtocolError, match="id"):
        unwrap(
            {"jsonrpc": "2.0", "id": 9, "error": {"code": -32001, "message": "x"}},
            3,
            codes=CODES["1.0"],
        )


def test_unwrap_null_id_accepted_on_error() -> None:
    with pytest.raises(ParseError) as info:
        unwrap(
            {"jsonrpc": "2.0", "id": None, "error": {"code": -32700, "message": "bad"}},
            3,
            codes=CODES["1.0"],
        )
    assert info.value.code == -32700


def test_unwrap_typed_error_with_task_id() -> None:
    with pytest.raises(TaskNotFoundError) as info:
        unwrap(
            {"jsonrpc": "2.0", "id": "3", "error": {"code": -32001, "message": "gone"}},
            3,
            codes=CODES["0.3"],
            task_id="t-404",
        )
    assert info.value.task_id == "t-404"


@pytest.mark.parametrize(
    "value",
    [
        [1, 2],
        "result",
        {"id": 1},
        {"jsonrpc": "2.0", "id": 1, "error": "boom"},
    ],
)
def test_unwrap_bad_shapes(value: Any) -> None:
    with pytest.raises(A2AProtocolError):
        unwrap(value, 1, codes=CODES["1.0"])


# -- decode_http -------------------------------------------------------------------------------


def _body(value: Any) -> bytes:
    return json.dumps(value).encode()


def test_decode_http_result() -> None:
    assert decode_http(
        200, _body({"jsonrpc": "2.0", "id": 1, "result": [1]}), 1, codes=CODES["1.0"]
    ) == [1]


def test_decode_http_html_200_is_protocol_error() -> None:
    with pytest.raises(A2AProtocolError, match="not JSON"):
        decode_http(200, b"<html><body>Welcome</body></html>", 1, codes=CODES["1.0"])


def test_decode_http_html_502_is_http_error() -> None:
    page = b"<html><body>" + b"Bad gateway " * 400 + b"</body></html>"
    with pytest.raises(A2AHTTPError) as info:
        decode_http(502, page, 1, codes=CODES["1.0"])
    err = info.value
    assert type(err) is A2AHTTPError
    assert err.status_code == 502
    assert err.body.startswith("<html><body>Bad gateway")
    assert len(err.body) == 500
    assert err.retryable
    assert "HTTP 502" in str(err)


@pytest.mark.parametrize("status", [401, 403])
def test_decode_http_auth(status: int) -> None:
    with pytest.raises(A2AAuthError) as info:
        decode_http(status, b'{"detail": "no token"}', 1, codes=CODES["1.0"])
    assert info.value.status_code == status
    assert "no token" in info.value.body


def test_decode_http_auth_even_with_a_jsonrpc_body() -> None:
    body = _body({"jsonrpc": "2.0", "id": 1, "error": {"code": -32603, "message": "auth"}})
    with pytest.raises(A2AAuthError):
        decode_http(401, body, 1, codes=CODES["1.0"])


def test_decode_http_jsonrpc_error_in_a_500() -> None:
    body = _body({"jsonrpc": "2.0", "id": 1, "error": {"code": -32001, "message": "gone"}})
    with pytest.raises(TaskNotFoundError):
        decode_http(500, body, 1, codes=CODES["1.0"])


def test_decode_http_truncated_json() -> None:
    body = _body({"jsonrpc": "2.0", "id": 1, "result": {"id": "t"}})[:-7]
    with pytest.raises(A2AProtocolError):
        decode_http(200, body, 1, codes=CODES["1.0"])


@pytest.mark.parametrize("content", [b"", b'{"hello": "world"}', b"[1, 2]", b"null"])
def test_decode_http_2xx_non_envelope(content: bytes) -> None:
    with pytest.raises(A2AProtocolError):
        decode_http(200, content, 1, codes=CODES["1.0"])


def test_decode_http_plain_404() -> None:
    with pytest.raises(A2AHTTPError) as info:
        decode_http(404, b"Not Found", 1, codes=CODES["1.0"])
    assert info.value.status_code == 404
    assert not isinstance(info.value, A2AAuthError)


@pytest.mark.parametrize(
    "encoding", ["utf-8", "utf-8-sig", "utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"]
)
def test_a_response_body_in_any_json_encoding(encoding: str) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 7, "result": {"é": "ünïcode"}}).encode(encoding)
    assert decode_http(200, body, 7, codes=CODES["1.0"]) == {"é": "ünïcode"}


def test_a_body_that_is_not_utf8_is_a_protocol_error() -> None:
    with pytest.raises(A2AProtocolError, match="not JSON"):
        decode_http(200, b'{"jsonrpc": "2.0", "id": 7, "result": "\xff"}', 7, codes=CODES["1.0"])
