"""The I/O line of an operation: an encoded request sent through the HTTP layer and its
answer decoded by the same codec; unary under the retry policy, or opened as a stream."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from a2a_anyio._auth import Credentials
from a2a_anyio._deadline import Call
from a2a_anyio._dialects import Fallback, WireCodec, WireRequest
from a2a_anyio._errors import A2AAuthError, A2AClientError
from a2a_anyio._http import HttpTransport
from a2a_anyio._http_sse import open_sse
from a2a_anyio._retry import RetryPolicy
from a2a_anyio._stream import StreamWire


class Exchange:
    """How one client sends: its HTTP transport and credentials. ``schemes()`` says what the
    agent's card asks for, to complete an auth error."""

    def __init__(
        self,
        http: HttpTransport,
        credentials: Credentials,
        schemes: Callable[[], list[str]],
    ) -> None:
        self.http = http
        self.credentials = credentials
        self._schemes = schemes

    async def unary(
        self, codec: WireCodec, request: WireRequest[Any], call: Call, retry: RetryPolicy
    ) -> Any:
        """Send ``request`` under ``retry`` and decode its answer; its alternative
        form once, when the codec says the first was rejected for its form.

        Errors are built where they happen with the request's context; a 401/403 is raised
        again as a new error that also says what the card asks for.
        """
        call.goes_to(request.context)

        async def attempt() -> Any:
            resp = await self.http.request(
                request.method,
                request.url,
                content=request.body,
                headers=request.headers,
                credentials=self.credentials,
                context=call.context,
            )
            return codec.decode(request, resp.status, resp.headers, resp.content)

        def tried() -> Awaitable[Any]:  # the request as it is now
            return retry.run(
                attempt,
                operation=request.name,
                idempotent=request.idempotent,
                until=call.until,
                observer=self.http.observer,
            )

        try:
            try:
                return await tried()
            except A2AClientError as exc:
                alternative = request.alternative_for(exc)
                if alternative is None:
                    raise
                request = alternative
                call.goes_to(request.context)
                return await tried()
        except A2AAuthError as exc:
            schemes = [] if exc.schemes else self._schemes()
            if not schemes:
                raise
            asks = f"{exc.message} (the agent asks for: {'; or '.join(schemes)})"
            raise exc.with_context(message=asks, schemes=schemes) from exc

    def stream(
        self,
        codec: WireCodec,
        request: WireRequest[Any],
        fall_back: Callable[[A2AClientError], bool],
    ) -> StreamWire:
        """``request`` as a stream to be opened; a 405 answer to it resends its alternative
        form when the codec has one for that."""
        alternative = request.alternative
        if request.when is not Fallback.METHOD_NOT_ALLOWED:
            alternative = None
        conn = open_sse(
            self.http,
            request.method,
            request.url,
            content=request.body,
            headers=request.headers,
            credentials=self.credentials,
            on_405=None if alternative is None else alternative.resend,
            context=request.context,
        )
        return StreamWire(conn, codec, request, fall_back)
