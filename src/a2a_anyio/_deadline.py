"""One deadline per call: one cancel scope around the whole operation.

Discovery, token fetches, redirects, every retry and every wait between tries, follow-up
polling: all of it runs inside the scope, so ``timeout=2`` means two seconds, whatever the
server does.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import anyio

from a2a_anyio._errors import A2ATimeoutError


@dataclass(slots=True)
class Call:
    """One call in progress: its absolute deadline (``anyio.current_time()`` clock, ``inf``
    without one), and where it goes, filled in as it is learned (the error that ends the call
    names them)."""

    until: float
    agent: str | None
    method: str


@contextmanager
def deadline(seconds: float | None, *, agent: str | None, method: str) -> Iterator[Call]:
    """Run the block within ``seconds`` (None: no limit). At the deadline the block is
    cancelled and ``A2ATimeoutError(timeout="deadline")`` raised."""
    if seconds is None:
        yield Call(math.inf, agent, method)
        return
    call = Call(anyio.current_time() + seconds, agent, method)
    with anyio.CancelScope(deadline=call.until) as scope:
        yield call
    if scope.cancelled_caught:
        raise A2ATimeoutError(
            f"no answer within the {seconds}s deadline",
            timeout="deadline",
            agent=call.agent,
            method=call.method,
        )
