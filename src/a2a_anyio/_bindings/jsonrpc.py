"""The JSON-RPC binding: one POST per call to the interface URL, results and errors in
JSON-RPC 2.0 envelopes (every streamed event too); the method of each operation by version.

The envelopes are built and checked here (and read and written for the server's side); the
payloads inside are the dialect's."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin

from a2a_anyio._bindings.base import (
    EventDecoder,
    R,
    RequestId,
    Status,
    WireCodec,
    WireRequest,
    header,
    header_tables,
    loads,
    loads_event,
    not_json,
    preview,
    raise_in,
)
from a2a_anyio._dialects import Call, Dialect, Op, OpArgs, task_of
from a2a_anyio._dialects._values import retry_after as parse_retry_after
from a2a_anyio._dialects.errors import Codes, rpc_error
from a2a_anyio._errors import (
    A2AAuthError,
    A2AClientError,
    A2AHTTPError,
    A2AProtocolError,
    ErrorContext,
    InvalidRequestError,
    ParseError,
    shown,
)
from a2a_anyio._model import StreamEvent


def request(method: str, params: Any, req_id: RequestId) -> dict[str, Any]:
    """A JSON-RPC request object (A2A always sends an id and never batches)."""
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": req_id, "method": method}
    if params is not None:
        body["params"] = params
    return body


def read_request(content: bytes) -> tuple[Any, str, Any]:
    """The id, method and params of a request body. ParseError for a body that is not JSON;
    InvalidRequestError, with the id when it has one, for JSON that is no request."""
    try:
        value = loads(content)
    except (ValueError, RecursionError):
        raise ParseError("Invalid JSON payload") from None
    if not isinstance(value, dict):
        raise InvalidRequestError("Invalid Request")
    req_id, method = value.get("id"), value.get("method")
    if value.get("jsonrpc") != "2.0" or not isinstance(method, str):
        known = req_id if isinstance(req_id, (int, str)) else None
        raise InvalidRequestError("Invalid Request", request_id=known)
    return req_id, method, value.get("params")


def response(req_id: Any, result: Any) -> dict[str, Any]:
    """A response object carrying ``result``."""
    return {"jsonrpc": "2.0", "id": req_id, "result": result}


def error_response(req_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    """A response object carrying an error (``data`` left out when None)."""
    error: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        error["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": error}


def is_rpc_code(code: Any) -> bool:
    """True for an integer in the codes JSON-RPC reserves (A2A's errors among them)."""
    return isinstance(code, int) and not isinstance(code, bool) and -32799 <= code <= -32000


def is_envelope(value: Any) -> bool:
    """True when ``value`` looks like a JSON-RPC response object: one with an ``id``, or an
    error without one (some servers leave the id out of their errors)."""
    if not isinstance(value, dict):
        return False
    if "id" in value:
        return "result" in value or "error" in value or value.get("jsonrpc") == "2.0"
    error = value.get("error")
    return isinstance(error, dict) and (
        value.get("jsonrpc") == "2.0" or is_rpc_code(error.get("code"))
    )


def unwrap(
    value: Any,
    expected_id: RequestId,
    *,
    codes: Codes,
    task_id: str | None = None,
    context: ErrorContext | None = None,
) -> Any:
    """The ``result`` of a response to request ``expected_id``, or its typed error raised
    (built with ``context``: which call it answers).

    A response for another id is a protocol error; ``id: null`` is accepted only on errors
    (a server that could not read the request cannot know its id).
    """
    where = context or {}
    if not isinstance(value, dict):
        raise A2AProtocolError("JSON-RPC response is not an object", **where)
    if "error" in value and value["error"] is not None:
        resp_id = value.get("id")
        if resp_id is not None and not _same_id(resp_id, expected_id):
            raise A2AProtocolError(
                f"JSON-RPC response id {shown(resp_id)} != request id {expected_id!r}", **where
            )
        err = value["error"]
        if not isinstance(err, dict):
            raise A2AProtocolError("JSON-RPC error is not an object", **where)
        raise rpc_error(
            err.get("code"),
            err.get("message"),
            err.get("data"),
            codes=codes,
            task_id=task_id,
            context=where,
        )
    if "result" not in value and value.get("jsonrpc") != "2.0":
        raise A2AProtocolError("JSON-RPC response has neither result nor error", **where)
    if not _same_id(value.get("id"), expected_id):
        raise A2AProtocolError(
            f"JSON-RPC response id {shown(value.get('id'))} != request id {expected_id!r}",
            **where,
        )
    # A null result may be left out entirely (the a2a-sdk v0.3 layer does so on delete).
    return value.get("result")


def _same_id(got: Any, expected: RequestId) -> bool:
    # Some servers echo numeric ids as strings; the value is what identifies the call.
    return got == expected or (isinstance(got, (str, int)) and str(got) == str(expected))


def decode_http(
    status: int,
    content: bytes,
    expected_id: RequestId,
    *,
    codes: Codes,
    task_id: str | None = None,
    retry_after: str | None = None,
    context: ErrorContext | None = None,
) -> Any:
    """The result of a JSON-RPC call from its HTTP status and body, or the typed error
    (built with ``context``: which call it answers).

    JSON-RPC errors are honoured whatever the status (some servers send them with 4xx/5xx);
    401/403 are auth errors; any other non-2xx is an HTTP error; a 2xx that is not a JSON-RPC
    response (an HTML page, truncated JSON) is a protocol error.
    """
    try:
        value = loads(content) if content else None
        parsed = True
    except (ValueError, RecursionError):  # RecursionError: absurdly deep nesting
        value, parsed = None, False
    if (
        200 <= status < 300
        and type(value) is dict
        and "error" not in value
        and (result := value.get("result")) is not None
        and value.get("id") == expected_id
    ):
        return result  # the usual answer, read in place; any other is unwrap's to judge
    where = context or {}
    if status in (401, 403):
        raise A2AAuthError(status_code=status, body=preview(content), **where)
    if is_envelope(value):
        return unwrap(value, expected_id, codes=codes, task_id=task_id, context=where)
    if not 200 <= status < 300:
        wait = parse_retry_after(retry_after)
        speaks = foreign_wire(value)
        raise A2AHTTPError(
            status_code=status, body=preview(content), retry_after=wait, speaks=speaks, **where
        )
    if not parsed:
        raise not_json(content, where)
    raise A2AProtocolError("response is not a JSON-RPC response object", **where)


def foreign_wire(value: Any) -> str | None:
    """The wire an error answer that is no JSON-RPC response shows the server speaks, when it
    tells: python-a2a's server answers a JSON-RPC request at a URL that takes none (its card
    names one) with a message whose parts carry ``type``, the error in a data part."""
    if not isinstance(value, dict) or value.keys() != {"role", "parts"}:
        return None
    parts = value["parts"]
    if (
        isinstance(parts, list)
        and parts
        and all(isinstance(p, dict) and "type" in p for p in parts)
    ):
        return "python-a2a"
    return None


def decode_plain(
    status: int,
    content: bytes,
    retry_after: str | None,
    *,
    codes: Codes,
    context: ErrorContext | None = None,
) -> Any:
    """The JSON of an answer to a plain GET, or its typed error: 401/403 are auth errors, a
    JSON-RPC error in the body is that error, any other non-2xx an HTTP error."""
    where = context or {}
    if status in (401, 403):
        raise A2AAuthError(status_code=status, body=preview(content), **where)
    try:
        value = loads(content) if content.strip() else None
        parsed = True
    except (ValueError, RecursionError):
        value, parsed = None, False
    if isinstance(value, dict) and is_envelope(value) and isinstance(err := value["error"], dict):
        raise rpc_error(
            err.get("code"), err.get("message"), err.get("data"), codes=codes, context=where
        )
    if not 200 <= status < 300:
        wait = parse_retry_after(retry_after)
        raise A2AHTTPError(status_code=status, body=preview(content), retry_after=wait, **where)
    if not parsed:
        raise not_json(content, where)
    return value


# -- the binding -----------------------------------------------------------------------------

_V03 = {
    Op.SEND: "message/send",
    Op.STREAM: "message/stream",
    Op.GET: "tasks/get",
    Op.CANCEL: "tasks/cancel",
    Op.LIST: "tasks/list",  # the spec's "0.4.0" draft; few v0.3 agents serve it
    Op.SUBSCRIBE: "tasks/resubscribe",
    Op.PUSH_CREATE: "tasks/pushNotificationConfig/set",
    Op.PUSH_GET: "tasks/pushNotificationConfig/get",
    Op.PUSH_LIST: "tasks/pushNotificationConfig/list",
    Op.PUSH_DELETE: "tasks/pushNotificationConfig/delete",
    Op.EXTENDED_CARD: "agent/getAuthenticatedExtendedCard",
}
_LEGACY = {
    Op.SEND: "tasks/send",
    Op.STREAM: "tasks/sendSubscribe",
    Op.GET: "tasks/get",
    Op.CANCEL: "tasks/cancel",
    Op.SUBSCRIBE: "tasks/resubscribe",
    Op.PUSH_CREATE: "tasks/pushNotification/set",
    Op.PUSH_GET: "tasks/pushNotification/get",
}
#: The method of each operation, by dialect version: an operation missing here is not
#: carried by JSON-RPC in that version.
METHODS: Mapping[str, Mapping[Op, str]] = {
    "1.0": {
        Op.SEND: "SendMessage",
        Op.STREAM: "SendStreamingMessage",
        Op.GET: "GetTask",
        Op.LIST: "ListTasks",
        Op.CANCEL: "CancelTask",
        Op.SUBSCRIBE: "SubscribeToTask",
        Op.PUSH_CREATE: "CreateTaskPushNotificationConfig",
        Op.PUSH_GET: "GetTaskPushNotificationConfig",
        Op.PUSH_LIST: "ListTaskPushNotificationConfigs",
        Op.PUSH_DELETE: "DeleteTaskPushNotificationConfig",
        Op.EXTENDED_CARD: "GetExtendedAgentCard",
    },
    "0.3": _V03,
    "0.2": {op: m for op, m in _V03.items() if op not in (Op.EXTENDED_CARD, Op.LIST)},
    "legacy": _LEGACY,
    "python-a2a": _LEGACY,
}
#: Operations a version carries as a plain GET of a path on the endpoint's host instead:
#: v0.2's extended card.
PLAIN_GETS: Mapping[str, Mapping[Op, str]] = {
    "0.2": {Op.EXTENDED_CARD: "/agent/authenticatedExtendedCard"},
}


class JsonRpcEvents(EventDecoder):
    """Events of a JSON-RPC stream: each a response envelope carrying the request's id."""

    def __init__(self, dialect: Dialect, request: WireRequest[Any]) -> None:
        if request.request_id is None:
            raise ValueError(f"{request.name} is no JSON-RPC request")
        super().__init__(dialect, request)
        self._id = request.request_id
        self._task_id = request.task_id
        self._decode = dialect.payloads[Op.STREAM].decode

    def decode(self, data: str) -> StreamEvent:
        try:
            value = loads_event(data, self.context)
            # The usual envelope (a result, no error, this request's id) read in place;
            # any other is unwrap's to judge.
            if (
                type(value) is not dict
                or "error" in value
                or (result := value.get("result")) is None
                or value.get("id") != self._id
            ):
                result = self._unwrap(value)
            event: StreamEvent = self._decode(result)
        except A2AClientError as exc:
            raise_in(self.context, exc)
        return event

    def result(self, data: str) -> Any:
        """The result one event's envelope carries, or its error raised."""
        return self._unwrap(loads_event(data, self.context))

    def _unwrap(self, value: Any) -> Any:
        return unwrap(
            value,
            self._id,
            codes=self.dialect.errors,
            task_id=self._task_id,
            context=self.context,
        )


class CallEvents(JsonRpcEvents):
    """Events of a call answered with a stream: each result is the method's own, returned
    as it came (``ends`` is not asked: such a stream ends with its body)."""

    def decode(self, data: str) -> Any:
        return self.result(data)


class JsonRpcCodec(WireCodec):
    """A dialect over JSON-RPC at one endpoint. CALL sends any method with the dialect's
    headers."""

    binding = "jsonrpc"
    binding_name = "JSON-RPC"

    def _bind(self) -> None:
        self.methods = METHODS[self.version]
        self._gets = PLAIN_GETS.get(self.version, {})
        self._get_headers = header_tables(self._extension_headers())[0]

    def supports(self, op: Op) -> bool:
        if op is Op.CALL:
            return True
        return (op in self.methods or op in self._gets) and self.dialect.has(op)

    def params(self, op: Op, args: OpArgs) -> Any:
        params = super().params(op, args)
        member = self.dialect.tenant
        if self.tenant and member is not None:
            params = {**(params or {}), member: self.tenant}
        return params

    def _encode(self, op: Op, args: OpArgs) -> WireRequest[Any]:
        if op in self._gets:
            path = self._gets[op]
            url = urljoin(self.url, path)
            headers = self._get_headers
            name = f"GET {path}"
            return WireRequest(op, "GET", url, headers, None, True, None, name, interface=self.url)
        either = False
        if isinstance(args, Call):
            method, params = args.method, args.params
            idempotent, either = args.idempotent, args.stream
        else:
            method, params, idempotent = self.methods[op], self.params(op, args), op.idempotent
        req_id = self.next_id()
        body = json.dumps(request(method, params, req_id)).encode()
        headers = self.headers(op, either=either)
        task_id = task_of(args)
        return WireRequest(op, "POST", self.url, headers, body, idempotent, req_id, method, task_id)

    def decode(
        self, request: WireRequest[R], status: Status, headers: Mapping[str, str], body: bytes
    ) -> R:
        """JSON-RPC errors are honoured whatever the HTTP status; a body that is no JSON-RPC
        response, or one for another id, raises A2AProtocolError. See ``WireCodec.decode``."""
        wait = header(headers, "retry-after") if status >= 300 else None
        context = request.context
        try:
            if request.request_id is None:  # a plain GET
                value = decode_plain(status, body, wait, codes=self.dialect.errors, context=context)
            else:
                value = decode_http(
                    status,
                    body,
                    request.request_id,
                    codes=self.dialect.errors,
                    task_id=request.task_id,
                    retry_after=wait,
                    context=context,
                )
        except A2AClientError as exc:
            self._refused(request, exc)
        return self._result(request, value)

    def event_decoder(self, request: WireRequest[Any]) -> EventDecoder:
        if request.op is Op.CALL:
            return CallEvents(self.dialect, request)
        return JsonRpcEvents(self.dialect, request)

    def op_for(self, method: str) -> Op | None:
        """The operation ``method`` names in this dialect (None: none)."""
        return next((op for op, m in self.methods.items() if m == method), None)

    def encode_result(self, op: Op, value: Any, request_id: Any = None) -> Any:
        if op in self._gets:
            return value  # the answer to the plain GET: the value itself
        return super().encode_result(op, value, request_id)

    def _answer(self, value: Any, request_id: Any) -> Any:
        return response(request_id, value)

    def _error(self, code: int, message: str, data: Any, request_id: Any) -> tuple[int, Any]:
        return 200, error_response(request_id, code, message, data)
