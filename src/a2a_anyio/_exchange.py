"""The I/O line of an operation: an encoded request sent through the transport and its
answer decoded by the same codec (and its payloads by the client's types); unary under the
retry policy, opened as a stream, or a call answered either way."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, NoReturn

from a2a_anyio._auth import Credentials
from a2a_anyio._bindings import WireCodec, WireRequest
from a2a_anyio._deadline import Call
from a2a_anyio._errors import A2AAuthError, A2AClientError, A2AProtocolError, instead
from a2a_anyio._payloads import PayloadTypes
from a2a_anyio._retry import RetryPolicy
from a2a_anyio._stream import StreamWire
from a2a_anyio._transport import Carriers

#: What a 401 to an ``Authorization`` value without a scheme adds to its error.
_NO_SCHEME = (
    "; the Authorization value sent has no scheme: auth= is the whole header value, so a "
    "token goes as auth=Bearer(token) or auth='Bearer <token>'"
)


class Exchange:
    """How one client sends: its transports, and the types its answers' data parts are
    decoded into. ``schemes()`` says what the agent's card asks for, to complete an auth
    error. Each request goes with the ``credentials`` of its call (the client's, with the
    call's own headers, see ``Credentials.for_call``)."""

    def __init__(
        self, carriers: Carriers, schemes: Callable[[], list[str]], types: PayloadTypes
    ) -> None:
        self.carriers = carriers
        self._schemes = schemes
        self.types = types

    async def unary(
        self,
        codec: WireCodec,
        request: WireRequest[Any],
        call: Call,
        retry: RetryPolicy,
        credentials: Credentials,
    ) -> Any:
        """Send ``request`` with ``credentials`` under ``retry`` and decode its answer; its
        alternative form once, when the codec says the first was rejected for its form.

        Errors are built where they happen with the request's context; a 401/403 is raised
        again as a new error that also says what the card asks for.
        """
        call.goes_to(request.context)
        transport = self.carriers.of(codec)

        async def attempt() -> Any:
            resp = await transport.unary(request, credentials, call.context)
            value = codec.decode(request, resp.status, resp.headers, resp.content)
            if self.types:
                self.types.parts(value, request.context)
            return value

        observer = self.carriers.observer
        try:
            try:
                return await retry.run(
                    attempt, operation=request.name, idempotent=request.idempotent,
                    until=call.until, observer=observer,
                )  # fmt: skip
            except A2AClientError as exc:
                alternative = request.alternative_for(exc)
                if alternative is None:
                    raise
                request = alternative  # (what ``attempt`` sends from now on)
                call.goes_to(request.context)
                return await retry.run(
                    attempt, operation=request.name, idempotent=request.idempotent,
                    until=call.until, observer=observer,
                )  # fmt: skip
        except A2AAuthError as exc:
            self.raise_asking(exc, credentials)

    def raise_asking(self, exc: A2AAuthError, credentials: Credentials) -> NoReturn:
        """Raise ``exc``, or a new error that also says what the card asks for and, after a
        401 to an ``Authorization`` value without a scheme (``auth="secret-token"``), how to
        give one: ``auth`` is the whole header value."""
        schemes = [] if exc.schemes else self._schemes()
        said = exc.message
        if schemes:
            said += f" (the agent asks for: {'; or '.join(schemes)})"
        if exc.status_code == 401 and credentials.unschemed and _NO_SCHEME not in said:
            said += _NO_SCHEME
        try:
            if said == exc.message:
                raise exc
            instead(exc.with_context(message=said, schemes=schemes or exc.schemes))
        finally:
            del exc  # (the traceback keeps this frame: no cycle through it)

    def stream(
        self,
        codec: WireCodec,
        request: WireRequest[Any],
        credentials: Credentials,
        fall_back: Callable[[A2AClientError], bool] | None = None,
        *,
        idle_timeout: float | None,
        open_timeout: float | None,
    ) -> StreamWire:
        """``request`` with ``credentials`` as a stream to be opened, within those limits."""
        conn = self.carriers.of(codec).stream(
            request, credentials, idle_timeout=idle_timeout, open_timeout=open_timeout
        )
        failed = _Asking(self, credentials)
        return StreamWire(conn, codec, request, fall_back, self.types, failed)

    async def events(
        self,
        codec: WireCodec,
        request: WireRequest[Any],
        call: Call,
        retry: RetryPolicy,
        credentials: Credentials,
        on_event: Callable[[Any], Awaitable[None]],
        idle_timeout: float | None,
        open_timeout: float | None,
    ) -> Any:
        """Send ``request``, which accepts an event stream as its answer, under ``retry``
        (until its answer is known); give ``on_event`` each result it streams, or its one
        plain result; return the last. The call's deadline bounds it all, ``open_timeout``
        the answer's head, and the idle limit the wait for the answer and each gap between
        events; a stream without an event is an
        A2AProtocolError."""
        call.goes_to(request.context)

        async def attempt() -> tuple[StreamWire, Any]:
            wire = self.stream(
                codec, request, credentials, idle_timeout=idle_timeout, open_timeout=open_timeout
            )
            await wire.conn.open()
            try:
                resp = wire.conn.error_response
                return wire, None if resp is None else wire.answer(resp)
            except BaseException:
                await wire.conn.aclose()
                raise

        try:
            wire, result = await retry.run(
                attempt,
                operation=request.name,
                idempotent=request.idempotent,
                until=call.until,
                observer=self.carriers.observer,
            )
        except A2AAuthError as exc:
            self.raise_asking(exc, credentials)
        conn = wire.conn
        try:
            if conn.error_response is not None:
                await on_event(result)
                return result
            streamed = False
            while (data := await conn.next_event()) is not None:
                result, streamed = wire.decode(data), True
                await on_event(result)
            if not streamed:
                raise A2AProtocolError("the event stream carried no result", **request.context)
            return result
        finally:
            await conn.aclose()


class _Asking:
    """``Exchange.raise_asking`` with a stream's credentials: what its wire holds (one
    object, where a ``functools.partial`` of a bound method with a keyword is three)."""

    __slots__ = ("credentials", "exchange")

    def __init__(self, exchange: Exchange, credentials: Credentials) -> None:
        self.exchange, self.credentials = exchange, credentials

    def __call__(self, exc: A2AAuthError) -> NoReturn:
        self.exchange.raise_asking(exc, self.credentials)
