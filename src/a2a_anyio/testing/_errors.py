"""A2A errors as the fake agent raises them: a JSON-RPC code and the text it answers with.
The codecs write them in each dialect's and binding's shape (``WireCodec.encode_error``)."""

from __future__ import annotations

from typing import Any

from a2a_anyio._errors import (
    A2AServerError,
    ContentTypeNotSupportedError,
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

PARSE_ERROR = ParseError.code
INVALID_REQUEST = InvalidRequestError.code
METHOD_NOT_FOUND = MethodNotFoundError.code
INVALID_PARAMS = InvalidParamsError.code
INTERNAL_ERROR = A2AServerError.code
TASK_NOT_FOUND = TaskNotFoundError.code
TASK_NOT_CANCELABLE = TaskNotCancelableError.code
PUSH_NOT_SUPPORTED = PushNotificationNotSupportedError.code
UNSUPPORTED_OPERATION = UnsupportedOperationError.code
CONTENT_TYPE_NOT_SUPPORTED = ContentTypeNotSupportedError.code
INVALID_AGENT_RESPONSE = InvalidAgentResponseError.code
EXTENDED_CARD_NOT_CONFIGURED = ExtendedCardNotConfiguredError.code
EXTENSION_SUPPORT_REQUIRED = ExtensionSupportRequiredError.code
VERSION_NOT_SUPPORTED = VersionNotSupportedError.code

# The texts the a2a-sdk answers with.
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
