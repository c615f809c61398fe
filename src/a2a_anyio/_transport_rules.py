"""What every transport keeps alike, written once: a stream's open and idle limits, and the
credentials renewed once after an answer that refused them.

The HTTP/1.1 streams (``_http_sse``) and the gRPC calls (``_grpc_transport``) apply them
where their own I/O waits; what a refusal is stays each transport's own (HTTP 401, gRPC
``UNAUTHENTICATED``).
"""

from __future__ import annotations

import math
from contextlib import AbstractContextManager

import anyio

from a2a_anyio._auth import Credentials
from a2a_anyio._deadline import sooner
from a2a_anyio._errors import A2ATimeoutError, ErrorContext
from a2a_anyio._no_context import NO_CONTEXT
from a2a_anyio._observe import redacted

#: No scope: a limit the stream has not, one kept elsewhere (httpx's read timeout), or one
#: a fan-out's own scope keeps sooner.
UNSCOPED: AbstractContextManager[None] = NO_CONTEXT


async def renew(credentials: Credentials | None, url: str) -> bool:
    """After an answer that refused a request's credentials (HTTP 401, gRPC
    ``UNAUTHENTICATED``): True when the request is to go once more, because they may go to
    ``url``'s origin and their scheme renewed them (``Auth.refresh``). A transport asks at
    most once per request."""
    return (
        credentials is not None
        and credentials.auth is not None
        and credentials.allows(url)
        and await credentials.auth.refresh()
    )


class StreamTimeouts:
    """A stream's two limits (None: no limit). ``open`` bounds the answer's head (and a
    plain answer, whole); ``idle`` each wait for the next bytes, and any bytes that arrive
    start it over (``touch``). Errors name the stream's ``url`` and say ``context``."""

    __slots__ = ("_scope", "context", "idle", "open", "url")

    def __init__(
        self, url: str, context: ErrorContext, *, idle: float | None, open: float | None
    ) -> None:
        self.url = url
        self.context = context
        self.idle = idle
        self.open = open
        self._scope: anyio.CancelScope | None = None  # the idle limit of the wait now

    def opening(self) -> AbstractContextManager[object]:
        """A scope that ends the opening at the open limit (without one, or one a fan-out's
        own scope keeps sooner: none)."""
        limit = self.open
        if limit is None:
            return UNSCOPED
        until = anyio.current_time() + limit
        return UNSCOPED if sooner(until) else anyio.CancelScope(deadline=until)

    def open_expired(self) -> A2ATimeoutError:
        return A2ATimeoutError(
            f"stream open timeout: no whole answer from {redacted(self.url)} within {self.open}s",
            timeout="stream-open",
            **self.context,
        )

    def waiting(self) -> anyio.CancelScope:
        """A scope that ends a wait at the idle limit (there must be one), until ``done``;
        ``touch`` pushes it back."""
        idle = self.idle
        scope = self._scope = anyio.CancelScope(
            deadline=anyio.current_time() + (math.inf if idle is None else idle)
        )
        return scope

    def touch(self) -> None:
        """Bytes arrived: the idle limit of the wait now counts from now."""
        scope, idle = self._scope, self.idle
        if scope is not None and idle is not None:
            scope.deadline = anyio.current_time() + idle

    def done(self) -> None:
        """The wait ended: bytes that arrive now push no limit back."""
        self._scope = None

    def idle_expired(self) -> A2ATimeoutError:
        return A2ATimeoutError(
            f"stream idle timeout: nothing from {redacted(self.url)} within {self.idle}s",
            timeout="stream-idle",
            **self.context,
        )
