"""JSON-RPC 2.0 envelopes: building requests, checking and unwrapping responses; and the
server's side: reading requests, building responses."""

from __future__ import annotations

import json
from typing import Any

from a2a_anyio._dialects._values import retry_after as parse_retry_after
from a2a_anyio._errors import (
    A2AAuthError,
    A2AHTTPError,
    A2AProtocolError,
    ErrorContext,
    InvalidRequestError,
    ParseError,
    rpc_error,
    shown,
)

RequestId = int | str


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
    version: str,
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
            version=version,
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
    version: str,
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
    where = context or {}
    if status in (401, 403):
        raise A2AAuthError(status_code=status, body=_preview(content), **where)
    if is_envelope(value):
        return unwrap(value, expected_id, version=version, task_id=task_id, context=where)
    if not 200 <= status < 300:
        wait = parse_retry_after(retry_after)
        speaks = foreign_wire(value)
        raise A2AHTTPError(
            status_code=status, body=_preview(content), retry_after=wait, speaks=speaks, **where
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


_DECODER = json.JSONDecoder()


def loads(content: bytes) -> Any:
    """JSON from an HTTP body: plain UTF-8 (what the JSON RFC requires of networked JSON) is
    read without ``json.loads``' encoding detection; a BOM, UTF-16 or UTF-32 still are."""
    if content[:3] == b"\xef\xbb\xbf" or b"\x00" in content[:4]:
        return json.loads(content)
    try:
        text = content.decode()
    except UnicodeDecodeError:
        return json.loads(content)  # raises, as before
    return _DECODER.decode(text)


#: What may come before an event's JSON: whitespace, and the record separator (U+001E) that
#: JSON text sequences (RFC 7464) put first and some servers send in their SSE data.
_EVENT_LEAD = " \t\r\n\x1e"


def loads_event(data: str, context: ErrorContext | None = None) -> Any:
    """One SSE event's JSON, or A2AProtocolError saying ``context`` (``raw_decode`` without
    ``json.loads``' per-call checks: this runs for every event). Leading whitespace and
    record separators are skipped."""
    try:
        value, end = _DECODER.raw_decode(data)
        if end == len(data) or data[end:].isspace():
            return value
        raise ValueError("extra data after the JSON value")
    except (ValueError, RecursionError) as exc:
        try:  # a leading record separator or whitespace, which raw_decode does not skip
            return json.loads(data.lstrip(_EVENT_LEAD))
        except (ValueError, RecursionError):
            raise A2AProtocolError(
                f"stream event is not JSON: {data[:120]!r}", **(context or {})
            ) from exc


def not_json(content: bytes, context: ErrorContext | None = None) -> A2AProtocolError:
    """The error for a body that should be JSON and is not (alike on both bindings)."""
    return A2AProtocolError(f"response is not JSON: {_preview(content)[:120]!r}", **(context or {}))


def _preview(content: bytes) -> str:
    return content[:2000].decode("utf-8", "replace")
