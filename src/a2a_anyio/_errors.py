"""The exception tree. Every runtime failure of the client is an ``A2AClientError``.

Misuse (a bad argument, a closed client reused) raises ``ValueError`` / ``RuntimeError`` instead.
"""

from __future__ import annotations

import reprlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypedDict, TypeVar

if TYPE_CHECKING:
    from a2a_anyio._model import StreamEvent, Task, TaskState

_BODY_PREVIEW = 500
#: The most characters of one text (a message, a URL, an id) a record, a span attribute or
#: an error message gets: what a server sends can be as long as its answer.
MAX_SHOWN = 1024
_E = TypeVar("_E", bound="A2AClientError")


class ErrorContext(TypedDict, total=False):
    """Where a failure happened: the keyword arguments every ``A2AClientError`` takes."""

    agent: str | None
    method: str | None
    operation: str | None
    request_id: int | str | None


class A2AClientError(Exception):
    """Root of every error the client raises at run time.

    ``retryable`` says whether trying again may help. Where the failure happened, when known:
    ``agent`` (the URL called), ``method`` (how the wire names the call: the JSON-RPC method,
    or the HTTP verb and path), ``operation`` (the client's name for it: ``send``, ``get``,
    ``card``...) and ``request_id`` (the JSON-RPC request it answered). ``events`` holds the
    stream events received before it; ``attempts`` how many tries the retry policy made.

    An error is built once, with all of that, and not changed after it is raised: a layer
    that knows more raises a new error made by ``with_context``.
    """

    retryable: bool = False

    def __init__(
        self,
        message: str,
        *,
        agent: str | None = None,
        method: str | None = None,
        operation: str | None = None,
        request_id: int | str | None = None,
        events: Sequence[StreamEvent] = (),
        attempts: int = 1,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.agent = agent
        self.method = method
        self.operation = operation
        self.request_id = request_id
        self.events: list[StreamEvent] = list(events)
        self.attempts = attempts

    def with_context(self: _E, **changes: Any) -> _E:
        """A new error of the same class with every field of this one, ``changes`` replacing
        some of them (``message``, ``events``, ``attempts``, ``schemes``...).

        This error is left as it is. The new one takes its place: its cause, its context and
        its traceback; raise it with ``instead`` so that a traceback shows it once.
        """
        fields = vars(self)
        unknown = sorted(name for name in changes if name not in fields)
        if unknown:
            raise TypeError(f"{type(self).__name__} has no field {', '.join(unknown)}")
        state = {**fields, **changes}
        new = type(self).__new__(type(self))
        # Lists (events, schemes, notes) are copied: the two errors share no mutable value.
        new.__dict__.update({k: list(v) if isinstance(v, list) else v for k, v in state.items()})
        new.__dict__["events"] = list(state["events"])
        new.args = (new.message,) if self.args == (self.message,) else self.args
        new.__cause__, new.__context__ = self.__cause__, self.__context__
        new.__suppress_context__ = self.__suppress_context__
        return new.with_traceback(self.__traceback__)

    def __str__(self) -> str:
        name = self.method or self.operation
        # The agent's URL may be a card's interface: as long as the card.
        agent = f"at {clipped(self.agent, MAX_SHOWN)}" if self.agent else None
        where = " ".join(x for x in (name, agent) if x)
        return f"{self.message} ({where})" if where else self.message


def context_of(error: A2AClientError) -> ErrorContext:
    """Where ``error`` says it happened, as keyword arguments for another error."""
    return {
        "agent": error.agent,
        "method": error.method,
        "operation": error.operation,
        "request_id": error.request_id,
    }


def located(error: _E, context: ErrorContext) -> _E:
    """``error`` when it already says everything ``context`` says, else a new error
    (``with_context``) that fills in what it left out."""
    missing = {
        name: value
        for name, value in context.items()
        if value is not None and getattr(error, name) is None
    }
    return error.with_context(**missing) if missing else error


def instead(error: A2AClientError) -> NoReturn:
    """Raise ``error`` in place of the error being handled, which it copies (``located``,
    ``with_context``): with that error's cause, so that a traceback shows it once."""
    try:
        raise error from error.__cause__
    finally:
        del error  # (the traceback keeps this frame: no cycle through it)


class A2AConnectionError(A2AClientError):
    """The server could not be reached, or the connection broke (DNS, refused, reset, TLS).

    ``request_sent`` is False when the request provably never reached the server (the
    connection was never made), which makes even a non-idempotent call safe to retry.
    """

    retryable = True

    def __init__(self, message: str, *, request_sent: bool = True, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.request_sent = request_sent


class A2ATimeoutError(A2AConnectionError):
    """A time limit expired; ``timeout`` names which: connect, stream-open, stream-idle or
    deadline."""

    def __init__(self, message: str, *, timeout: str, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.timeout = timeout


_RETRYABLE_STATUSES = (429, 502, 503, 504)


class A2AHTTPError(A2AClientError):
    """The server answered with an HTTP error status; ``body`` is truncated; ``retry_after``
    holds the seconds a ``Retry-After`` header asked for. ``speaks`` names the wire the answer
    shows the server speaks at that URL when it is not the one the request was in (the
    client then moves to it): "python-a2a"."""

    def __init__(
        self,
        message: str | None = None,
        *,
        status_code: int,
        body: str = "",
        retry_after: float | None = None,
        speaks: str | None = None,
        **kwargs: Any,
    ) -> None:
        self.status_code = int(status_code)  # a plain int, whatever the transport's type
        self.retry_after = retry_after
        self.speaks = speaks
        self.body = body[:_BODY_PREVIEW]
        preview = " ".join(self.body.split())[:200]
        default = f"HTTP {status_code}" + (f": {preview}" if preview else "")
        super().__init__(message or default, **kwargs)
        self.retryable = status_code in _RETRYABLE_STATUSES


class A2AAuthError(A2AHTTPError):
    """HTTP 401 or 403: credentials missing, wrong, or not enough; ``schemes`` lists what the
    agent's card asks for, when the card is known."""

    def __init__(
        self,
        message: str | None = None,
        *,
        status_code: int,
        schemes: Sequence[str] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(message, status_code=status_code, **kwargs)
        self.schemes = list(schemes)


class A2ADiscoveryError(A2AClientError):
    """No usable agent card: missing, not JSON, not a card, or no interface this client speaks.

    ``not_found`` is true when no card was found where cards are looked for. When the card
    request got an HTTP error, ``status_code`` and ``retry_after`` say which. ``retryable``
    follows the status unless given.
    """

    def __init__(
        self,
        message: str,
        *,
        status_code: int | None = None,
        retry_after: float | None = None,
        not_found: bool = False,
        retryable: bool | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        self.status_code = None if status_code is None else int(status_code)
        self.retry_after = retry_after
        self.not_found = not_found
        self.retryable = status_code in _RETRYABLE_STATUSES if retryable is None else retryable


class A2AProtocolError(A2AClientError):
    """The server broke the protocol: bad JSON, wrong JSON-RPC id, bad SSE frame, bad shape.

    ``limit`` is set when an answer was refused for its size: the byte limit it went over.
    """

    def __init__(self, message: str, *, limit: int | None = None, **kwargs: Any) -> None:
        super().__init__(message, **kwargs)
        self.limit = limit


class ContextMismatchError(A2AProtocolError):
    """An agent answered a conversation's turn in another context than the conversation's:
    ``expected_context_id`` is the conversation's, ``received_context_id`` the one the
    answer names; ``events`` holds the answer (its event, for a stream). The conversation
    takes nothing from it (see ``Conversation``)."""

    def __init__(
        self,
        message: str | None = None,
        *,
        expected_context_id: str,
        received_context_id: str,
        **kwargs: Any,
    ) -> None:
        self.expected_context_id = expected_context_id
        self.received_context_id = received_context_id
        text = (
            f"the agent answered in context {clipped(received_context_id, 64)}, not in the "
            f"conversation's {clipped(expected_context_id, 64)}"
        )
        super().__init__(message or text, **kwargs)


class A2ARPCError(A2AClientError):
    """A JSON-RPC error object from the server, with ``code``, ``data`` and v1.0 ``reason``."""

    code: int = 0

    def __init__(
        self,
        message: str,
        *,
        code: int | None = None,
        data: Any = None,
        reason: str | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(message, **kwargs)
        if code is not None:
            self.code = code
        self.data = data
        self.reason = reason

    def __str__(self) -> str:
        return f"[{self.code}] {super().__str__()}"


class TaskNotFoundError(A2ARPCError):
    """-32001: the task does not exist, expired, or is not visible to the caller."""

    code = -32001

    def __init__(
        self, message: str | None = None, *, task_id: str | None = None, **kwargs: Any
    ) -> None:
        self.task_id = task_id
        super().__init__(message or f"task not found: {task_id}", **kwargs)


class TaskNotCancelableError(A2ARPCError):
    """-32002: the task is in a state that cannot be canceled."""

    code = -32002

    def __init__(
        self, message: str | None = None, *, state: TaskState | str | None = None, **kwargs: Any
    ) -> None:
        self.state = state
        text = getattr(state, "value", state)
        super().__init__(message or f"task cannot be canceled in state {text}", **kwargs)


class PushNotificationNotSupportedError(A2ARPCError):
    """-32003: the agent does not support push notifications."""

    code = -32003


class UnsupportedOperationError(A2ARPCError):
    """-32004: the operation or option is not supported (also: a message to a terminal task)."""

    code = -32004


class ContentTypeNotSupportedError(A2ARPCError):
    """-32005: a part's media type is not accepted."""

    code = -32005


class InvalidAgentResponseError(A2ARPCError):
    """-32006: the agent produced something that does not fit the method's contract."""

    code = -32006


class ExtendedCardNotConfiguredError(A2ARPCError):
    """-32007: the agent has no extended card configured (or its card announces none)."""

    code = -32007


class ExtensionSupportRequiredError(A2ARPCError):
    """-32008: the agent requires an extension the request did not opt in to."""

    code = -32008


class VersionNotSupportedError(A2ARPCError):
    """-32009: the interface does not serve the requested A2A version."""

    code = -32009


class ParseError(A2ARPCError):
    """-32700: the server could not parse the request."""

    code = -32700


class InvalidRequestError(A2ARPCError):
    """-32600: the request was not a valid JSON-RPC request."""

    code = -32600


class MethodNotFoundError(A2ARPCError):
    """-32601: the method does not exist on this endpoint (often: a different dialect)."""

    code = -32601


class InvalidParamsError(A2ARPCError):
    """-32602: the parameters failed validation."""

    code = -32602


class A2AServerError(A2ARPCError):
    """-32603 (internal error) and any code this client does not know."""

    code = -32603


class TaskFailedError(A2AClientError):
    """A helper that promises a result got a failed, rejected or canceled task."""

    def __init__(self, message: str | None = None, *, task: Task, **kwargs: Any) -> None:
        self.task = task
        status_text = task.status.message.text if task.status.message else ""
        state = task.status.state.value
        # The agent's words, quoted in full up to MAX_SHOWN characters.
        text = f"task {clipped(task.id, 64)} {state}: {clipped(status_text, MAX_SHOWN)}"
        super().__init__(message or text.rstrip(": "), **kwargs)


class AuthRequiredError(A2AClientError):
    """A task of a conversation is ``auth-required``: the agent needs credentials before it
    goes on. ``task`` is that task, ``text`` the agent's words (its status message),
    ``schemes`` what its card asks for (as ``A2AAuthError.schemes``; empty when the card
    says nothing). Fix the client's credentials and send again: the task goes on."""

    def __init__(
        self,
        message: str | None = None,
        *,
        task: Task,
        schemes: Sequence[str] = (),
        **kwargs: Any,
    ) -> None:
        self.task = task
        self.text = task.status.message.text if task.status.message else ""
        self.schemes = list(schemes)
        said = f": {clipped(self.text, MAX_SHOWN)}" if self.text else ""
        asks = f" (the agent asks for: {'; or '.join(self.schemes)})" if self.schemes else ""
        text = f"task {clipped(task.id, 64)} needs authentication{said}{asks}"
        super().__init__(message or text, **kwargs)


def install_extra(extra: str) -> str:
    """How to install an optional extra, for the errors that need one: a2a-anyio is not on a
    package index, and a package of its name there would be someone else's."""
    return f"pip install '.[{extra}]' in a2a-anyio's checkout"


#: The characters of an agent's text that are never passed on as they are (a regular
#: expression's character class): C0 controls but tab and newline, DEL, C1 controls, the
#: bidirectional embeddings, overrides and isolates, and lone surrogates. The command line
#: escapes them; an agent's tool description and answers leave them out.
UNSAFE_CHARACTERS = "\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff"


def clipped(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` cut to at most ``limit`` characters, ``...`` ending what was cut (a server's
    text, an id say, as an error, a record or a span attribute holds it)."""
    return text if len(text) <= limit else text[: limit - 3] + "..."


def shown(value: object, limit: int = 64) -> str:
    """A value a server (or a file) sent, for an error message: its repr, cut short. Only
    the first levels and members of a container are written (a YAML alias bomb holds 10**9
    leaves), and an int past Python's digit limit is named, not written."""
    if isinstance(value, str):
        as_repr = repr(value[:limit])
    else:
        brief = reprlib.Repr()
        brief.maxlevel, brief.maxstring, brief.maxother = 3, limit, limit
        try:
            as_repr = brief.repr(value)
        except ValueError:  # int digits past sys.get_int_max_str_digits()
            as_repr = f"<{type(value).__name__} with a number too long to write>"
    return clipped(as_repr, limit)
