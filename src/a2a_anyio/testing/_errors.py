"""A2A errors as the fake agent answers them, per dialect and binding."""

from __future__ import annotations

from typing import Any

from a2a_anyio._model import JSONDict

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
TASK_NOT_FOUND = -32001
TASK_NOT_CANCELABLE = -32002
PUSH_NOT_SUPPORTED = -32003
UNSUPPORTED_OPERATION = -32004
CONTENT_TYPE_NOT_SUPPORTED = -32005
INVALID_AGENT_RESPONSE = -32006
EXTENDED_CARD_NOT_CONFIGURED = -32007
EXTENSION_SUPPORT_REQUIRED = -32008
VERSION_NOT_SUPPORTED = -32009

# code -> (v1.0 ErrorInfo reason, v1.0.1 HTTP status, google.rpc code name)
_V1: dict[int, tuple[str, int, str]] = {
    PARSE_ERROR: ("PARSE_ERROR", 400, "INVALID_ARGUMENT"),
    INVALID_REQUEST: ("INVALID_REQUEST", 400, "INVALID_ARGUMENT"),
    METHOD_NOT_FOUND: ("METHOD_NOT_FOUND", 404, "NOT_FOUND"),
    INVALID_PARAMS: ("INVALID_PARAMS", 400, "INVALID_ARGUMENT"),
    INTERNAL_ERROR: ("INTERNAL_ERROR", 500, "INTERNAL"),
    TASK_NOT_FOUND: ("TASK_NOT_FOUND", 404, "NOT_FOUND"),
    TASK_NOT_CANCELABLE: ("TASK_NOT_CANCELABLE", 400, "FAILED_PRECONDITION"),
    PUSH_NOT_SUPPORTED: ("PUSH_NOTIFICATION_NOT_SUPPORTED", 400, "FAILED_PRECONDITION"),
    UNSUPPORTED_OPERATION: ("UNSUPPORTED_OPERATION", 400, "FAILED_PRECONDITION"),
    CONTENT_TYPE_NOT_SUPPORTED: ("CONTENT_TYPE_NOT_SUPPORTED", 400, "INVALID_ARGUMENT"),
    INVALID_AGENT_RESPONSE: ("INVALID_AGENT_RESPONSE", 500, "INTERNAL"),
    EXTENDED_CARD_NOT_CONFIGURED: (
        "EXTENDED_AGENT_CARD_NOT_CONFIGURED",
        400,
        "FAILED_PRECONDITION",
    ),
    EXTENSION_SUPPORT_REQUIRED: ("EXTENSION_SUPPORT_REQUIRED", 400, "FAILED_PRECONDITION"),
    VERSION_NOT_SUPPORTED: ("VERSION_NOT_SUPPORTED", 400, "FAILED_PRECONDITION"),
}

# The 0.3.x Python SDK's HTTP statuses for its REST binding (a2a-protocol §5.5).
_V03_REST_STATUS = {
    PARSE_ERROR: 400,
    INVALID_REQUEST: 400,
    METHOD_NOT_FOUND: 404,
    INVALID_PARAMS: 422,
    INTERNAL_ERROR: 500,
    TASK_NOT_FOUND: 404,
    TASK_NOT_CANCELABLE: 409,
    PUSH_NOT_SUPPORTED: 501,
    UNSUPPORTED_OPERATION: 501,
    CONTENT_TYPE_NOT_SUPPORTED: 415,
    INVALID_AGENT_RESPONSE: 502,
    EXTENDED_CARD_NOT_CONFIGURED: 404,
}

_MESSAGES = {
    PARSE_ERROR: "Invalid JSON payload",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid parameters",
    INTERNAL_ERROR: "Internal error",
    TASK_NOT_FOUND: "Task not found",
    TASK_NOT_CANCELABLE: "Task cannot be canceled",
    PUSH_NOT_SUPPORTED: "Push Notification is not supported",
    UNSUPPORTED_OPERATION: "This operation is not supported",
    CONTENT_TYPE_NOT_SUPPORTED: "Incompatible content types",
    INVALID_AGENT_RESPONSE: "Invalid agent response",
    EXTENDED_CARD_NOT_CONFIGURED: "Authenticated Extended Card is not configured",
    EXTENSION_SUPPORT_REQUIRED: "Extension support is required",
    VERSION_NOT_SUPPORTED: "A2A version is not supported",
}


class AgentError(Exception):
    """An A2A error the agent answers with (its JSON-RPC ``code``)."""

    def __init__(self, code: int, message: str | None = None, **metadata: Any) -> None:
        self.code = code
        self.message = message or _MESSAGES.get(code, "Error")
        self.metadata = metadata
        super().__init__(f"[{code}] {self.message}")


def jsonrpc_error(version: str, err: AgentError) -> JSONDict:
    """The JSON-RPC ``error`` object: v1.0 carries an ErrorInfo detail in ``data``."""
    out: JSONDict = {"code": err.code, "message": err.message}
    if version == "1.0":
        reason = _V1.get(err.code, ("INTERNAL_ERROR", 500, "INTERNAL"))[0]
        out["data"] = [_error_info(reason, err.metadata)]
    elif err.metadata:
        out["data"] = dict(err.metadata)
    return out


def rest_error(version: str, err: AgentError) -> tuple[int, JSONDict]:
    """HTTP status and body of an HTTP+JSON error: ``google.rpc.Status`` (v1.0) or the
    0.3 SDK's ``{"message": ...}``."""
    if version == "1.0":
        reason, status, name = _V1.get(err.code, ("INTERNAL_ERROR", 500, "INTERNAL"))
        body: JSONDict = {
            "code": status,
            "status": name,
            "message": err.message,
            "details": [_error_info(reason, err.metadata)],
        }
        return status, {"error": body}
    return _V03_REST_STATUS.get(err.code, 500), {"message": err.message}


def _error_info(reason: str, metadata: dict[str, Any]) -> JSONDict:
    return {
        "@type": "type.googleapis.com/google.rpc.ErrorInfo",
        "reason": reason,
        "domain": "a2a-protocol.org",
        "metadata": {k: str(x) for k, x in metadata.items()},
    }
