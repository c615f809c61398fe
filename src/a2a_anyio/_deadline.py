"""One deadline per call: one cancel scope around the whole operation.

Discovery, token fetches, redirects, every retry and every wait between tries, follow-up
polling: all of it runs inside the scope, so ``timeout=2`` means two seconds, whatever the
server does.
"""

from __future__ import annotations

import enum
import functools
import math
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from types import TracebackType
from typing import TYPE_CHECKING, ParamSpec, TypeVar

import anyio

from a2a_anyio._errors import A2ATimeoutError, ErrorContext

if TYPE_CHECKING:
    from a2a_anyio._model import StreamEvent

P = ParamSpec("P")
R = TypeVar("R")


class _Default(enum.Enum):
    """The default of a per-call ``timeout``: the client's."""

    CLIENT = "the client's timeout"


CLIENT_TIMEOUT = _Default.CLIENT
"""The default of every operation's ``timeout=``: the client's ``timeout`` applies (pass it
on in a wrapper that forwards ``timeout``)."""

#: A per-call ``timeout``: seconds, None for no limit, or ``CLIENT_TIMEOUT``.
Timeout = float | _Default | None


def check_timeout(value: object, name: str = "timeout", *, no_limit: bool = True) -> float | None:
    """A time limit as a caller gives it: the one rule of every ``timeout``, ``idle_timeout``,
    ``total_timeout``... of the library. None is no limit (unless ``no_limit`` is false);
    otherwise a positive, finite number of seconds (an ``int`` or a ``float``). The command
    line's ``--timeout 0`` is its spelling of None.

    Raises:
        TypeError: neither None nor a number (a str, a bool...).
        ValueError: 0, a negative number, NaN or infinity.
    """
    accepted = "a positive, finite number of seconds" + (" or None (no limit)" if no_limit else "")
    if value is None and no_limit:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"{name} must be {accepted}, not {type(value).__name__}")
    if not 0 < value < math.inf:  # NaN is neither
        raise ValueError(f"{name} must be {accepted}, not {value!r}")
    return value


def stream_limits_named(func: Callable[P, R]) -> Callable[P, R]:
    """``func`` (a stream's opener) refusing ``timeout=`` with a ``TypeError`` that names
    the stream's limits, ``total_timeout`` and ``idle_timeout``."""

    @functools.wraps(func)
    def opens(*args: P.args, **kwargs: P.kwargs) -> R:
        if "timeout" in kwargs:
            raise TypeError(
                f"{func.__name__}() takes no timeout=: did you mean total_timeout= (the whole "
                "stream) or idle_timeout= (the gap between events)?"
            )
        return func(*args, **kwargs)

    return opens


def resolve_timeout(timeout: Timeout, default: float | None) -> float | None:
    """The limit a call's ``timeout`` sets: ``default`` (the client's) for ``CLIENT_TIMEOUT``."""
    return default if timeout is CLIENT_TIMEOUT else timeout


class Call:
    """One call in progress: its absolute deadline (``anyio.current_time()`` clock, ``inf``
    without one), and where it goes, ``context`` updated as it is learned (the error that ends
    the call names it). ``task``: the task the call waits for, once it has one (the error
    carries it in its ``events``). ``parent``: the call this one is part of (a blocking send
    and its follow-up, a wait), told where this one goes too."""

    __slots__ = ("context", "parent", "task", "until")

    def __init__(self, until: float, context: ErrorContext, parent: Call | None = None) -> None:
        self.until = until
        self.context = context
        self.task: StreamEvent | None = None
        self.parent = parent

    def goes_to(self, context: ErrorContext) -> None:
        """Where the call goes now (its parent's too, under the parent's operation): what
        its error will say."""
        self.context = context
        if self.parent is not None:
            self.parent.goes_to({**context, "operation": self.parent.context.get("operation")})

    @property
    def agent(self) -> str | None:
        """The URL the call goes to, as far as it is known."""
        return self.context.get("agent")


#: The deadline of a scope of the library's own around the running task, which nothing
#: moves (a fan-out's; ``held``).
_HELD: ContextVar[float] = ContextVar("a2a_anyio_held_deadline", default=math.inf)


@contextmanager
def held(scope: anyio.CancelScope) -> Iterator[None]:
    """Tell the calls made inside the block (in tasks started in it too) that ``scope``,
    the library's own and never moved, bounds them (``sooner``)."""
    token = _HELD.set(scope.deadline)
    try:
        yield
    finally:
        _HELD.reset(token)


def sooner(when: float) -> bool:
    """True when a scope ``held`` keeps around the running task ends it at or before
    ``when`` and is the nearest around it: a scope with that deadline would never fire. A
    caller's own scope never counts, since the caller may move its deadline later."""
    kept = _HELD.get()
    return kept <= when and anyio.current_effective_deadline() == kept


class deadline:  # named as a function: ``with deadline(...) as call``
    """Run the block within ``seconds`` (None: no limit of its own). At the deadline the
    block is cancelled and ``A2ATimeoutError(timeout="deadline")`` raised. ``parent``: the
    call this one is part of, whose deadline (kept by the parent's scope) bounds it too:
    ``until`` is the nearer of the two, for the waits that must not outlast it.

    A class rather than a generator: it runs around every call. A deadline that a fan-out's
    own scope keeps sooner (``sooner``) makes no scope of its own: it could never fire, and
    each scope costs objects that live as long as the call."""

    __slots__ = ("_call", "_own", "_scope", "_seconds")

    def __init__(
        self,
        seconds: float | None,
        *,
        agent: str | None,
        operation: str,
        method: str | None = None,
        parent: Call | None = None,
    ) -> None:
        context: ErrorContext = {"agent": agent, "method": method, "operation": operation}
        outer = parent.until if parent is not None else math.inf
        self._seconds = seconds
        self._scope: anyio.CancelScope | None = None
        if seconds is None:
            self._own = math.inf
            self._call = Call(outer, context, parent)
            return
        self._own = own = anyio.current_time() + seconds
        self._call = Call(min(own, outer), context, parent)

    def __enter__(self) -> Call:
        own = self._own
        if own != math.inf and not sooner(own):
            self._scope = scope = anyio.CancelScope(deadline=own)
            scope.__enter__()
        return self._call

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        scope = self._scope
        if scope is None:
            return None
        swallowed = scope.__exit__(exc_type, exc, tb)
        del exc, tb  # (the traceback of the error raised here keeps this frame: no cycle)
        if not scope.cancelled_caught:
            return swallowed
        call = self._call
        if call.task is None:
            raise A2ATimeoutError(
                f"deadline timeout: no answer within {self._seconds}s",
                timeout="deadline",
                **call.context,
            )
        raise A2ATimeoutError(
            f"deadline timeout: the task was not finished within {self._seconds}s",
            timeout="deadline",
            events=[call.task],
            **call.context,
        )
