"""Retries: which failures are worth another try, and how long to wait before it."""

from __future__ import annotations

import contextlib
import inspect
import math
import random
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

import anyio

from a2a_anyio._errors import A2AClientError, A2AConnectionError, A2ATimeoutError, context_of
from a2a_anyio._observe import Observer, redacted

T = TypeVar("T")

_delays = True


@contextlib.contextmanager
def no_retry_delays() -> Iterator[None]:
    """Within this block retries happen at once: backoff and ``Retry-After`` waits are skipped.

    Meant for tests of code that uses the client (``with no_retry_delays(): ...``).
    """
    global _delays
    previous, _delays = _delays, False
    try:
        yield
    finally:
        _delays = previous


def delays_enabled() -> bool:
    """False inside ``no_retry_delays()``."""
    return _delays


@dataclass(frozen=True, slots=True)
class RetryAttempt:
    """What ``on_retry`` is told: the attempt that failed, its error, the wait before the next."""

    attempt: int
    error: A2AClientError
    delay: float
    operation: str


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """How a client retries.

    ``attempts`` counts every try (1 means no retry); ``deadline`` bounds all tries together,
    waits included. The wait before try n+1 is a full-jitter exponential backoff,
    ``uniform(0, min(max_backoff, backoff * 2**(n-1)))``, unless the server sent
    ``Retry-After`` (seconds or an HTTP date, capped at ``max_retry_after``; a date in the
    past means now, and a value that cannot be read is ignored).

    What may be retried is chosen first: every operation whose request the agent did not
    take (a failed connect, HTTP 429, a 503 with a readable ``Retry-After``); any other
    failure only for idempotent operations (card, get, list, cancel, subscribe, push config
    get/list/delete, ``call(..., idempotent=True)``); a stream only before its first event.
    Among those, ``retry_if`` decides when given, else connection failures and
    ``retry_statuses`` are retried. ``on_retry`` (sync or async) is called before each wait.
    """

    attempts: int = 3
    deadline: float | None = None
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_retry_after: float = 120.0
    retry_statuses: frozenset[int] = frozenset({429, 502, 503, 504})
    retry_if: Callable[[A2AClientError], bool] | None = None
    on_retry: Callable[[RetryAttempt], Any] | None = None

    def __post_init__(self) -> None:
        if self.attempts < 1:
            raise ValueError("attempts must be at least 1")
        if self.backoff < 0 or self.max_backoff < 0:
            raise ValueError("backoff times cannot be negative")

    def should_retry(self, error: A2AClientError, *, idempotent: bool) -> bool:
        """Whether ``error`` deserves another try of an operation of that kind: first whether
        another try is safe, then ``retry_if`` (or the default choice)."""
        if getattr(error, "timeout", None) == "deadline":
            return False  # the caller's own deadline ran out: no try can make it in time
        if not idempotent and not _not_taken(error):
            return False
        if self.retry_if is not None:
            return self.retry_if(error)
        if isinstance(error, A2AConnectionError):
            return True
        return getattr(error, "status_code", None) in self.retry_statuses

    def delay(self, attempt: int, error: A2AClientError) -> float:
        """Seconds to wait after failed try number ``attempt``."""
        asked = getattr(error, "retry_after", None)
        if isinstance(asked, (int, float)):
            return min(float(asked), self.max_retry_after)
        cap = min(self.max_backoff, self.backoff * 2 ** (attempt - 1))
        return random.uniform(0.0, cap)

    async def run(
        self,
        call: Callable[[], Awaitable[T]],
        *,
        operation: str,
        idempotent: bool,
        until: float = math.inf,
        observer: Observer | None = None,
    ) -> T:
        """Await ``call()`` until it succeeds or the policy gives up (then its last error, or
        after more than one try a new one saying how many, caused by it).

        ``until`` is the call's deadline (``anyio.current_time()`` clock): a wait that would
        end past it ends the call at once with ``A2ATimeoutError`` instead. Each retry is
        told to ``observer`` (an INFO record, an ``a2a.retry`` span event).

        Raises:
            A2AClientError: the last error when the policy gives up, saying so (``.attempts``);
                ``A2ATimeoutError(timeout="deadline")`` when a wait would end past ``until``.
            Exception: an error the policy does not retry, as ``call`` raised it.
        """
        start = anyio.current_time() if self.deadline is not None else 0.0
        attempt = 1
        while True:
            try:
                return await call()
            except A2AClientError as exc:
                if attempt >= self.attempts or not self.should_retry(exc, idempotent=idempotent):
                    if attempt == 1:
                        raise  # one try: its error says it all
                    raise _gave_up(exc, attempt, f"{attempt} attempts") from exc
                wait = self.delay(attempt, exc) if _delays else 0.0
                if self.deadline is not None and (
                    anyio.current_time() - start + wait > self.deadline
                ):
                    raise _gave_up(exc, attempt, f"the {self.deadline}s retry deadline") from exc
                if anyio.current_time() + wait > until:
                    raise _past_deadline(exc, attempt, wait) from exc
                if observer is not None:
                    _report(observer, RetryAttempt(attempt, exc, wait, operation), self.attempts)
                if self.on_retry is not None:
                    outcome = self.on_retry(RetryAttempt(attempt, exc, wait, operation))
                    if inspect.isawaitable(outcome):
                        await outcome
                await anyio.sleep(wait)
                attempt += 1


def _report(observer: Observer, retry: RetryAttempt, attempts: int) -> None:
    error = retry.error
    observer.happened(
        "a2a.retry",
        {"attempt": retry.attempt, "delay": retry.delay, "error.type": type(error).__name__},
        "retrying %s in %.2fs: try %d of %d failed (%s: %s)",
        retry.operation, retry.delay, retry.attempt, attempts, type(error).__name__,
        redacted(error.message),
    )  # fmt: skip


def _not_taken(error: A2AClientError) -> bool:
    """True when the agent did not take the request, so that sending it again cannot repeat
    its effect: it never left (a failed connect), or the server refused it (429, or 503 with
    a ``Retry-After`` saying when to come back)."""
    if not getattr(error, "request_sent", True):
        return True
    status = getattr(error, "status_code", None)
    return status == 429 or (status == 503 and getattr(error, "retry_after", None) is not None)


def _gave_up(error: A2AClientError, attempts: int, why: str) -> A2AClientError:
    """``error`` as the policy's last word: a new error of its class saying why the policy
    stopped and how many tries it made."""
    return error.with_context(message=f"{error.message} (gave up after {why})", attempts=attempts)


def _past_deadline(error: A2AClientError, attempts: int, wait: float) -> A2ATimeoutError:
    """The call's deadline comes before the next try could start."""
    asked = "a retry in"
    if getattr(error, "retry_after", None) is not None:
        asked = "the server asked to retry after"
    return A2ATimeoutError(
        f"deadline timeout: {error.message}; {asked} {wait:g}s, past the call's deadline",
        timeout="deadline",
        attempts=attempts,
        events=error.events,
        **context_of(error),
    )


NO_RETRY = RetryPolicy(attempts=1)
"""A policy that never retries: ``A2AClient(url, retry=NO_RETRY)``."""
