"""Wire requests and the base every codec extends.

A codec is a binding (how a transport carries an operation) speaking one dialect (the
payloads of one protocol version) at one interface URL. The client runs one line through it:
``codec.encode(op, args)`` -> send the ``WireRequest`` -> ``codec.decode(...)``; streams read
each event's data through ``codec.event_decoder(request)``. Nothing here does I/O. The
operations and their arguments are in ``_dialects.ops``, the payloads in the dialects, the
concrete bindings in ``jsonrpc``, ``rest`` and ``paths``; ``codec_for`` (in the package)
chooses one.

A server (the testing kit's fake agent) runs the same codec the other way round (the
bindings it serves: gRPC's server side is the test suite's own):
``decode_params`` reads what ``encode`` wrote, ``encode_result`` / ``encode_event`` /
``encode_error`` write what ``decode`` and the event decoders read; the JSON-RPC codecs name
the operation of a method (``op_for``), the REST codecs that of a verb and path (``route``).
"""

from __future__ import annotations

import enum
import itertools
import json
from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, ClassVar, Generic, Literal, NamedTuple, NoReturn, TypeVar, cast, overload

from a2a_anyio._dialects.dialect import Dialect
from a2a_anyio._dialects.ops import (
    ARGS,
    Call,
    Cancel,
    ListTasks,
    Op,
    OpArgs,
    PushCreate,
    PushRef,
    Send,
    TaskRef,
)
from a2a_anyio._errors import (
    A2AAuthError,
    A2AClientError,
    A2AHTTPError,
    A2AProtocolError,
    A2ARPCError,
    ErrorContext,
    MethodNotFoundError,
    TaskNotFoundError,
    UnsupportedOperationError,
    instead,
    located,
)
from a2a_anyio._model import (
    AgentCard,
    Message,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskPage,
    TaskStatusUpdateEvent,
)

R = TypeVar("R")
RequestId = int | str


# -- requests --------------------------------------------------------------------------------


class Fallback(enum.Enum):
    """When a request's ``alternative`` is to be sent (see ``WireRequest.alternative_for``)."""

    #: The answer was HTTP 405 (REST subscribe: POST per the spec, GET per the proto).
    METHOD_NOT_ALLOWED = "405"
    #: Any A2ARPCError or A2AHTTPError except A2AAuthError and TaskNotFoundError (v0.3 REST
    #: push-config create: peers disagree on the body's shape).
    REJECTED = "rejected"


@dataclass(slots=True)  # not frozen (never changed after it is made): quicker to define and make
class WireRequest(Generic[R]):
    """One request, ready for the transport its codec names to send; ``R`` is what
    ``decode`` makes of its answer.

    ``method``, ``url``, ``headers`` and ``body`` are what the transport sends (gRPC: a
    POST to the RPC's path, the one message unframed). ``headers`` are shared between
    requests (read-only); credentials are not among them. ``name`` is how errors name the
    call: the JSON-RPC method, the HTTP verb and path relative to the interface URL, or the
    RPC's method. ``request_id`` is None when the body is no JSON-RPC
    request (REST, and the plain GET of the v0.2 extended card). ``interface`` is the URL of
    the interface the request goes to (``url`` when None): errors name it as the agent.

    ``alternative`` is the one other form of the same call. Send it once, instead of
    failing, when ``alternative_for(error)`` returns it for the error that decoding this
    request's answer raised (after the retry policy gave up): ``when`` says which errors
    those are. Its answer is decoded with the same codec, and it has no alternative itself.
    """

    op: Op
    method: str
    url: str
    headers: Mapping[str, str]
    body: bytes | None
    idempotent: bool
    request_id: RequestId | None
    name: str
    #: The task the call is about, for TaskNotFoundError.task_id.
    task_id: str | None = None
    alternative: WireRequest[R] | None = None
    when: Fallback | None = None
    interface: str | None = None

    @property
    def context(self) -> ErrorContext:
        """Where an error of this call happened: the keyword arguments of its error."""
        return {
            "agent": self.interface or self.url,
            "method": self.name,
            "operation": self.op.value,
            "request_id": self.request_id,
        }

    @property
    def streams(self) -> bool:
        """True when the answer is expected as an event stream."""
        return self.op.streams

    @property
    def resend(self) -> tuple[str, str, bytes | None]:
        """Method, URL and body: what a transport needs to send this request again."""
        return self.method, self.url, self.body

    def alternative_for(self, error: A2AClientError) -> WireRequest[R] | None:
        """The request to send once after ``error``, or None to raise ``error``."""
        if self.alternative is None:
            return None
        if self.when is Fallback.METHOD_NOT_ALLOWED:
            wanted = isinstance(error, A2AHTTPError) and error.status_code == 405
        else:
            wanted = isinstance(error, (A2ARPCError, A2AHTTPError)) and not isinstance(
                error, (A2AAuthError, TaskNotFoundError)
            )
        return self.alternative if wanted else None


class HttpStatus(int):
    """An HTTP status code: how an answer carried over HTTP/1.1 went."""

    __slots__ = ()


class GrpcStatus(int):
    """A gRPC status code (0 is OK): how a gRPC call went, from its trailers."""

    __slots__ = ()


#: How a call went, in the terms of the transport that carried it: a codec reads the one
#: its binding's transport gives (``WireCodec.transport``).
Status = HttpStatus | GrpcStatus


class StreamStatus(NamedTuple):
    """How a stream ended when that is no success and the codec reads it: gRPC's status
    and the metadata with it (the trailers). A transport gives it as a stream's last
    message; the stream's event decoder raises the error it carries."""

    status: GrpcStatus
    headers: Mapping[str, str]


#: One message of a stream: an SSE event's data, a gRPC message, or how the stream ended.
EventData = str | bytes | StreamStatus


def raise_in(context: ErrorContext, exc: A2AClientError) -> NoReturn:
    """Raise ``exc`` saying ``context``: itself when it does, else a new error that does.

    For the errors of the payload decoders, which are pure and know no call.
    """
    try:
        instead(located(exc, context))
    finally:
        del exc  # (the traceback keeps this frame: no cycle through it)


def header(headers: Mapping[str, str], name: str) -> str | None:
    """A response header by its lower-case name, in any mapping (httpx's is case-blind)."""
    value = headers.get(name)
    if value is None:
        value = next((v for k, v in headers.items() if k.lower() == name), None)
    return value


def ends_stream(event: StreamEvent, *, opening: bool = False) -> bool:
    """True when ``event`` is the last of its stream; ``opening``: it is the stream's first
    event, and a snapshot in an interrupted state there may be the one the task had before
    the stream's message (a continued task) rather than where the task is now."""
    if isinstance(event, TaskArtifactUpdateEvent):  # the most frequent, tested first
        return False
    if isinstance(event, TaskStatusUpdateEvent):
        return event.final  # the v1.0 decoders set it for terminal and interrupted states
    if isinstance(event, Message):
        return True
    # A task snapshot says where the task is: a stream of whole tasks (no status events, no
    # final flag) ends on the first terminal or interrupted one.
    state = event.status.state
    return state.is_terminal or (state.is_interrupted and not opening)


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
    return A2AProtocolError(f"response is not JSON: {preview(content)[:120]!r}", **(context or {}))


def preview(content: bytes) -> str:
    """The start of a body, as text for an error."""
    return content[:2000].decode("utf-8", "replace")


# -- codecs ----------------------------------------------------------------------------------


class EventDecoder(ABC):
    """Reads the events of one stream: ``decode`` each message (an SSE event's data, a
    gRPC message), ``ends`` says whether an event is the last."""

    def __init__(self, dialect: Dialect, request: WireRequest[Any]) -> None:
        self.dialect = dialect
        self.request = request
        #: What the errors of this stream's events say about where they happened.
        self.context = request.context
        self._opened = False  # an event was judged already

    @abstractmethod
    def decode(self, data: Any) -> StreamEvent:
        """One event from its data (``EventData``: what the binding's transport gives),
        or the error it carries raised (A2AProtocolError for data that is not an event)."""

    def ends(self, event: StreamEvent) -> bool:
        """True when ``event`` ends the stream: a Message, ``final``, a task snapshot in a
        terminal state, or in an interrupted one unless it opens the stream (a follow-up's
        stream may open with the state the task had before its message, in every version:
        the JS SDK's v1.0 server does so; a stream that then ends is a normal end too)."""
        opening, self._opened = not self._opened, True
        return ends_stream(event, opening=opening)


#: The read-only header tables of the codecs, by their unary headers: codecs alike share
#: them (a pool's clients make two codecs each, and each table is two objects).
_TABLES: dict[tuple[tuple[str, str], ...], tuple[Mapping[str, str], ...]] = {}


def header_tables(
    unary: dict[str, str],
) -> tuple[Mapping[str, str], Mapping[str, str], Mapping[str, str]]:
    """The headers of a unary request, of a stream's and of a call that may be answered
    with JSON or with an event stream, read-only and shared."""
    key = tuple(unary.items())
    tables = _TABLES.get(key)
    if tables is None:
        if len(_TABLES) >= 256:  # extensions vary per client: bounded all the same
            _TABLES.clear()
        tables = _TABLES[key] = (
            MappingProxyType(unary),
            MappingProxyType({**unary, "Accept": "text/event-stream"}),
            MappingProxyType({**unary, "Accept": "application/json, text/event-stream"}),
        )
    return tables[0], tables[1], tables[2]


class WireCodec(ABC):
    """One binding speaking one dialect at one interface URL: sans-IO ``encode`` /
    ``decode``.

    ``tenant`` is the interface's tenant (v1.0), ``extensions`` the extension URIs every
    request opts in to. Request ids come from a counter of this object.
    """

    #: "jsonrpc", "rest" or "grpc".
    binding: ClassVar[str]
    #: The transport that carries its requests, by its name in ``_transport.TRANSPORTS``:
    #: "http" (HTTP/1.1, JSON, SSE) or "grpc".
    transport: ClassVar[str] = "http"
    #: How messages name the binding.
    binding_name: ClassVar[str]
    #: The media type of JSON bodies, both ways.
    content_type: str = "application/json"
    #: HTTP statuses that say a request names no operation served there (besides JSON-RPC
    #: -32601): REST's missing route, verb or implementation.
    missing_statuses: ClassVar[frozenset[int]] = frozenset()
    #: True where a blocking send cut by its caller keeps the server's handler running
    #: until the agent ends (a2a-sdk 0.3's gRPC ``SendMessage`` waits for its agent even once
    #: its call is cancelled): a blocking send then goes as a stream when the agent streams,
    #: a stream's cut ending its handler at once.
    sends_by_stream: bool = False

    def __init__(
        self,
        dialect: Dialect,
        url: str,
        *,
        tenant: str | None = None,
        extensions: Sequence[str] = (),
    ) -> None:
        self.dialect = dialect
        self.url = url
        self.tenant = tenant
        self.extensions = tuple(extensions)
        self._ids = itertools.count(1)
        self._bind()
        self._unary_headers, self._stream_headers, self._either_headers = header_tables(
            self._base_headers()
        )

    def _bind(self) -> None:  # noqa: B027 (most bindings need nothing more)
        """What a binding reads of its dialect and URL once, before the headers are made."""

    @property
    def version(self) -> str:
        """The dialect's version: "1.0", "0.3", "0.2" or "legacy"."""
        return self.dialect.version

    def __repr__(self) -> str:
        return f"<{type(self).__name__} v{self.version} {self.url!r}>"

    def again(self, url: str) -> WireCodec:
        """This codec at another URL."""
        return type(self)(self.dialect, url, tenant=self.tenant, extensions=self.extensions)

    def _base_headers(self) -> dict[str, str]:
        headers = {"Content-Type": self.content_type, **self.dialect.headers}
        headers.update(self._extension_headers())
        return headers

    def _extension_headers(self) -> dict[str, str]:
        uris = ",".join(self.extensions)
        return dict.fromkeys(self.dialect.extension_headers, uris) if uris else {}

    def headers(self, op: Op, *, either: bool = False) -> Mapping[str, str]:
        """The headers of a request for ``op`` (read-only, shared); ``either``: its answer
        may be JSON or an event stream."""
        if either:
            return self._either_headers
        return self._stream_headers if op.streams else self._unary_headers

    @abstractmethod
    def supports(self, op: Op) -> bool:
        """True when this binding and dialect have ``op``."""

    def variants(self) -> list[WireCodec]:
        """The same wire at the other URLs this codec's may stand for, to try after it when
        it is answered as if the paths did not exist (none by default)."""
        return []

    def unsupported(self, op: Op) -> str:
        """Why this codec cannot encode ``op`` (the message of its UnsupportedOperationError)."""
        what = "tasks/send (legacy A2A)" if self.version == "legacy" else f"A2A v{self.version}"
        return f"{op.value} is not part of {what} over {self.binding_name}"

    def next_id(self) -> int:
        """A new JSON-RPC request id."""
        return next(self._ids)

    @overload
    def encode(self, op: Literal[Op.SEND], args: Send) -> WireRequest[Task | Message]: ...
    @overload
    def encode(
        self, op: Literal[Op.STREAM, Op.SUBSCRIBE], args: Send | TaskRef
    ) -> WireRequest[StreamEvent]: ...
    @overload
    def encode(self, op: Literal[Op.GET], args: TaskRef) -> WireRequest[Task]: ...
    @overload
    def encode(self, op: Literal[Op.CANCEL], args: Cancel) -> WireRequest[Task | None]: ...
    @overload
    def encode(self, op: Literal[Op.LIST], args: ListTasks) -> WireRequest[TaskPage]: ...
    @overload
    def encode(
        self, op: Literal[Op.PUSH_CREATE], args: PushCreate
    ) -> WireRequest[PushNotificationConfig]: ...
    @overload
    def encode(
        self, op: Literal[Op.PUSH_GET], args: PushRef
    ) -> WireRequest[PushNotificationConfig]: ...
    @overload
    def encode(
        self, op: Literal[Op.PUSH_LIST], args: PushRef
    ) -> WireRequest[list[PushNotificationConfig]]: ...
    @overload
    def encode(self, op: Literal[Op.PUSH_DELETE], args: PushRef) -> WireRequest[None]: ...
    @overload
    def encode(self, op: Literal[Op.EXTENDED_CARD], args: None) -> WireRequest[AgentCard]: ...
    @overload
    def encode(self, op: Literal[Op.CALL], args: Call) -> WireRequest[Any]: ...
    @overload
    def encode(self, op: Op, args: OpArgs) -> WireRequest[Any]: ...

    def encode(self, op: Op, args: OpArgs) -> WireRequest[Any]:
        """The request of ``op`` with ``args``.

        UnsupportedOperationError when the binding or dialect lacks ``op``, A2AProtocolError
        for a value a request cannot carry; ValueError for arguments that do not fit it.
        """
        expected = ARGS[op]
        if not isinstance(args, expected):
            raise ValueError(f"{op.value} takes {expected.__name__}, not {type(args).__name__}")
        if not self.supports(op):
            raise UnsupportedOperationError(
                self.unsupported(op), agent=self.url, operation=op.value
            )
        try:
            return self._encode(op, args)
        except A2AClientError as exc:  # a value no request can carry (a lone surrogate)
            raise_in({"agent": self.url, "operation": op.value}, exc)

    @abstractmethod
    def _encode(self, op: Op, args: OpArgs) -> WireRequest[Any]:
        """``encode`` for a supported op with fitting args."""

    def params(self, op: Op, args: OpArgs) -> Any:
        """The dialect's params of ``op`` with ``args`` (None for CALL's: its own)."""
        return None if op is Op.CALL else self.dialect.write(op, args)

    @abstractmethod
    def decode(
        self, request: WireRequest[R], status: Status, headers: Mapping[str, str], body: bytes
    ) -> R:
        """The typed result of ``request`` from its answer, or the typed error raised:
        ``status`` is the one the binding's transport gives (``HttpStatus``, ``GrpcStatus``).

        A streaming op answered with a plain body gives the one StreamEvent it carries.
        401/403 raise A2AAuthError, other error statuses A2AHTTPError (``retry_after`` from
        ``Retry-After``) unless the body names a finer error; a body that is not what the
        binding promises raises A2AProtocolError; an operation the dialect makes optional,
        answered as missing, UnsupportedOperationError. Errors are built with ``request.context``:
        the interface URL, ``request.name`` as their ``method``, the operation and
        ``request.request_id``.
        """

    def _refused(self, request: WireRequest[Any], exc: A2AClientError) -> NoReturn:
        """Raise ``exc``, the error an answer to ``request`` carried; for an operation the
        dialect makes optional (``Dialect.optional``) that the agent answered as a method it
        does not have, UnsupportedOperationError instead, caused by it."""
        missing = isinstance(exc, MethodNotFoundError) or (
            isinstance(exc, A2AHTTPError) and exc.status_code in self.missing_statuses
        )
        if missing and request.op in self.dialect.optional:
            raise UnsupportedOperationError(
                f"the agent does not serve {request.name} (it answered: {exc.message})",
                **request.context,
            ) from exc
        try:
            raise exc
        finally:
            del exc  # (the traceback keeps this frame: no cycle through it)

    def _result(self, request: WireRequest[R], value: Any) -> R:
        if request.op is Op.CALL:
            return cast(R, value)  # the method's own result
        try:
            return cast(R, self.dialect.decode(request.op, value))
        except A2AClientError as exc:
            raise_in(request.context, exc)

    @abstractmethod
    def event_decoder(self, request: WireRequest[Any]) -> EventDecoder:
        """The reader of the events of the stream ``request`` opened."""

    # -- the server's side: requests read, answers written ----------------------------------

    def decode_params(self, op: Op, params: Any) -> OpArgs:
        """The args of ``op`` from the params ``params(op, args)`` builds (None: no params).

        A2AProtocolError for params that do not fit; ValueError for CALL.
        """
        if op is Op.CALL:
            raise ValueError("a call's params are its method's own")
        args: OpArgs = self.dialect.read(op, params)
        return args

    def encode_result(self, op: Op, value: Any, request_id: Any = None) -> Any:
        """The JSON body of a successful answer to ``op`` carrying ``value``."""
        result = value if op is Op.CALL else self.dialect.encode(op, value)
        return self._answer(result, request_id)

    def encode_event(
        self, event: StreamEvent, request_id: Any = None, task: Task | None = None
    ) -> Any:
        """The JSON data of one stream event (``task``: the task it belongs to, if known)."""
        return self._answer(self.dialect.encode_event(event, task), request_id)

    def encode_error(
        self,
        code: int,
        message: str,
        metadata: Mapping[str, Any] | None = None,
        request_id: Any = None,
    ) -> tuple[int, Any]:
        """HTTP status and JSON body of an error with JSON-RPC ``code`` carrying ``metadata``."""
        return self._error(code, message, self.dialect.error_data(code, metadata or {}), request_id)

    def _answer(self, value: Any, request_id: Any) -> Any:
        """``value`` as the body of an answer: in the binding's envelope, if it has one."""
        raise NotImplementedError(f"the {self.binding_name} binding writes no answers")

    def _error(self, code: int, message: str, data: Any, request_id: Any) -> tuple[int, Any]:
        """Status and body of an error (``data``: the dialect's details)."""
        raise NotImplementedError(f"the {self.binding_name} binding writes no errors")
