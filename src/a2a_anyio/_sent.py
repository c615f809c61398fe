"""A request that went out whole, told to whoever waits for that rather than for its answer
(a merge's cancel of a stream it cut: the agent has the cancel once it is sent, and the
merge's end may not wait for the answer). The transports call ``request_sent()``."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar

#: Called when the request being made in this context has gone out whole.
ON_SENT: ContextVar[Callable[[], None] | None] = ContextVar("a2a_anyio_on_sent", default=None)


def request_sent() -> None:
    """Tell whoever waits in this context that its request went out whole."""
    notify = ON_SENT.get()
    if notify is not None:
        notify()
