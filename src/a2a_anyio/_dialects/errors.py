"""A2A's error codes and ``ErrorInfo`` reasons, and the typed error of an error object.

The codes every version gives one meaning are here; those whose meaning changed across
versions (-32005 and up) are each dialect's own (``Dialect.errors``). The bindings read an
error object out of their answers and call ``rpc_error``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from a2a_anyio._errors import (
    A2ARPCError,
    A2AServerError,
    ContentTypeNotSupportedError,
    ErrorContext,
    ExtendedCardNotConfiguredError,
    ExtensionSupportRequiredError,
    InvalidAgentResponseError,
    InvalidParamsError,
    InvalidRequestError,
    MethodNotFoundError,
    ParseError,
    PushNotificationNotSupportedError,
    TaskNotCancelableError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)

Codes = Mapping[int, type[A2ARPCError]]

#: JSON-RPC's own codes, and A2A's that mean the same in every version.
STANDARD: Codes = {
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
#: v1.0's ``google.rpc.ErrorInfo`` reasons (both bindings carry them).
REASONS: Mapping[str, type[A2ARPCError]] = {
    "TASK_NOT_FOUND": TaskNotFoundError,
    "TASK_NOT_CANCELABLE": TaskNotCancelableError,
    "PUSH_NOTIFICATION_NOT_SUPPORTED": PushNotificationNotSupportedError,
    "UNSUPPORTED_OPERATION": UnsupportedOperationError,
    "CONTENT_TYPE_NOT_SUPPORTED": ContentTypeNotSupportedError,
    "INVALID_AGENT_RESPONSE": InvalidAgentResponseError,
    "EXTENDED_AGENT_CARD_NOT_CONFIGURED": ExtendedCardNotConfiguredError,
    "EXTENSION_SUPPORT_REQUIRED": ExtensionSupportRequiredError,
    "VERSION_NOT_SUPPORTED": VersionNotSupportedError,
    "INVALID_PARAMS": InvalidParamsError,
    "INVALID_REQUEST": InvalidRequestError,
    "METHOD_NOT_FOUND": MethodNotFoundError,
    "INTERNAL_ERROR": A2AServerError,
    "PARSE_ERROR": ParseError,
}
_REASON_OF = {cls.code: reason for reason, cls in REASONS.items()}
_ERROR_INFO = "type.googleapis.com/google.rpc.ErrorInfo"


def by_name(name: str) -> type[A2ARPCError] | None:
    """The error class named ``name`` (some v0.3 HTTP+JSON peers name the class)."""
    return next((cls for cls in REASONS.values() if cls.__name__ == name), None)


def error_details(code: int, metadata: Mapping[str, Any] | None = None) -> list[dict[str, Any]]:
    """The v1.0 details of an error with ``code``: one ErrorInfo (what ``error_reason`` reads)."""
    return [
        {
            "@type": _ERROR_INFO,
            "reason": _REASON_OF.get(code, "INTERNAL_ERROR"),
            "domain": "a2a-protocol.org",
            "metadata": {k: str(x) for k, x in (metadata or {}).items()},
        }
    ]


def error_reason(data: Any) -> str | None:
    """The ``reason`` of the first ``google.rpc.ErrorInfo`` in v1.0 error details, if any."""
    if isinstance(data, Sequence) and not isinstance(data, (str, bytes)):
        for item in data:
            if not isinstance(item, dict) or not isinstance(reason := item.get("reason"), str):
                continue
            if "@type" not in item or str(item["@type"]).endswith("ErrorInfo"):
                return reason
    return None


def typed_error(
    cls: type[A2ARPCError],
    message: str,
    *,
    task_id: str | None = None,
    context: ErrorContext | None = None,
    **fields: Any,
) -> A2ARPCError:
    """An error of class ``cls`` (``task_id``: the task the call was about)."""
    if cls is TaskNotFoundError:
        fields["task_id"] = task_id
    return cls(message, **fields, **(context or {}))


def rpc_error(
    code: Any,
    message: Any,
    data: Any = None,
    *,
    codes: Codes,
    task_id: str | None = None,
    context: ErrorContext | None = None,
) -> A2ARPCError:
    """The typed error for a JSON-RPC error object: its ``ErrorInfo.reason`` first, then
    ``codes`` (the dialect's own), then the codes of every version; ``context`` says which
    call it answers."""
    text = message if isinstance(message, str) and message else "JSON-RPC error"
    num = code if isinstance(code, int) and not isinstance(code, bool) else -32603
    reason = error_reason(data)
    cls = REASONS.get(reason or "") or codes.get(num) or STANDARD.get(num) or A2AServerError
    fields = {"data": data, "reason": reason, "code": num}
    return typed_error(cls, text, task_id=task_id, context=context, **fields)
