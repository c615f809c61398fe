"""Interceptors: the user's hooks around each operation a client sends to its agent."""

from __future__ import annotations

import inspect
import math
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import Any

import anyio

from a2a_anyio._auth import Credentials, check_headers
from a2a_anyio._dialects.ops import OpArgs, Send
from a2a_anyio._errors import A2ATimeoutError
from a2a_anyio._model import AgentCard, StreamEvent
from a2a_anyio._prepare import prepare_send

_HOOKS = ("before", "after", "event", "ended")

#: Operations an interceptor cannot answer in place of the agent, and why.
_UNANSWERABLE = {
    "stream": "its result is its events",
    "subscribe": "its result is its events",
    "ping": "its result is the time the agent took to answer",
}

#: In a sync facade's call: whether Ctrl-C in the thread that waits for it stopped it (its
#: cancellation in the loop is then an interrupt).
INTERRUPTED: ContextVar[Callable[[], bool] | None] = ContextVar("interrupted", default=None)


@dataclass(eq=False)
class Operation:
    """One operation as interceptors see it.

    ``name`` is the operation the caller asked for (``"send"``, ``"stream"``, ``"get"``,
    ``"list"``, ``"cancel"``, ``"subscribe"``, ``"wait"``, ``"push_create"``,
    ``"push_get"``, ``"push_list"``, ``"push_delete"``, ``"card"``, ``"extended_card"``,
    ``"call"``, ``"ping"``); ``streamed`` is True when it is carried by an event stream underneath
    (a ``stream``, a ``subscribe``, and a ``send_message`` that streams to an agent that
    can). ``part_of`` names the operation a look-up belongs to (a blocking send's or a
    stream's polls: ``"send"``, ``"stream"``...; a ``wait``'s ``"get"``: ``"wait"``; the
    card fetched to find the agent's interface: the call that needed it), None for one the
    user called. ``agent`` is the agent's URL, ``card`` its card when the client has it
    already (None before the first call that fetches it).

    ``before`` may change ``arguments`` (the operation's, by name: ``message``,
    ``metadata``, ``task_id``...; checked and made as the caller's are, so that a send's
    ``message`` may be a str) and ``headers`` (those of this call: its ``headers=`` over
    the ``request_headers`` blocks it runs in; the client's own credentials are not shown),
    or answer with ``respond(result)`` instead of sending (a ``card`` with an
    ``AgentCard``; a stream, a subscribe and a ping cannot be answered). ``after`` sees
    ``result`` or ``error`` and may replace either (``respond``, or ``error = ...``).
    ``ended`` sees ``ending``, how the operation ended (one of ``"result"``, ``"error"``,
    ``"deadline"``, ``"cancelled"``, ``"interrupted"``, ``"closed"``), and what the caller
    gets. ``state`` is the interceptors' own, from ``before`` to ``ended``.
    """

    name: str
    agent: str | None
    arguments: dict[str, Any]
    headers: dict[str, str]
    part_of: str | None = None
    card: AgentCard | None = None
    state: dict[str, Any] = field(default_factory=dict)
    result: Any = None
    error: Exception | None = None
    answered: bool = False
    streamed: bool = False
    ending: str | None = None

    @property
    def streams(self) -> bool:
        """True for a stream (``stream``, ``subscribe``): its result is its events."""
        return self.name in ("stream", "subscribe")

    def respond(self, result: Any) -> None:
        """Answer with ``result``: in ``before``, instead of sending; in ``after``, in place
        of the result or the error."""
        self.result, self.error, self.answered = result, None, True


class Interceptor:
    """An interceptor's hooks, each optional (any object with some of them will do):
    ``before(op)`` as the operation is about to be sent, ``after(op)`` once its result or
    error is known, ``event(op, event)`` for each event a stream delivers (these three sync
    or async), and ``ended(op)``, synchronous, once the operation has ended, however it
    ended (``op.ending``): its deadline and the caller's cancel scope or Ctrl-C included.
    Interceptors run in the order given, their ``after`` and ``ended`` in reverse."""

    def before(self, op: Operation) -> Awaitable[None] | None:
        """Called before the operation is sent."""
        return None

    def after(self, op: Operation) -> Awaitable[None] | None:
        """Called with the operation's result or error."""
        return None

    def event(self, op: Operation, event: StreamEvent) -> Awaitable[None] | None:
        """Called with each event a stream delivers."""
        return None

    def ended(self, op: Operation) -> None:
        """Called once the operation has ended (``op.ending`` says how); synchronous."""


#: Tells the interceptors of an operation of each event it delivers.
EventHook = Callable[[StreamEvent], Awaitable[None]]

#: How an operation is sent: ``send(args, credentials, event)``, with the arguments and
#: credentials as the interceptors left them, ``event`` for the events of a send that streams.
Sending = Callable[[OpArgs, Credentials, EventHook], Awaitable[Any]]


async def no_event(event: StreamEvent) -> None:
    """The ``event`` of an operation that has no interceptors."""


async def call_hook(hook: Callable[..., Any], *args: Any) -> None:
    """Call ``hook`` (sync or async) with ``args``, awaiting what it returns if it must."""
    outcome = hook(*args)
    if inspect.isawaitable(outcome):
        await outcome


def arguments(args: OpArgs) -> dict[str, Any]:
    """An operation's arguments by name (a send's options beside its message)."""
    if args is None:
        return {}
    named = args._asdict()
    if isinstance(args, Send):
        named.update(named.pop("config")._asdict())
    return named


class Interceptors:
    """A client's interceptors; ``intercept`` runs them around one operation."""

    __slots__ = ("_events", "_items")

    def __init__(self, items: Sequence[object]) -> None:
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
            raise TypeError(f"interceptors must be a sequence, not {type(items).__name__}")
        for item in items:
            if not any(callable(getattr(item, name, None)) for name in _HOOKS):
                raise TypeError(
                    f"an interceptor has a before, after, event or ended method;"
                    f" {type(item).__name__} has none"
                )
            if inspect.iscoroutinefunction(getattr(item, "ended", None)):
                raise TypeError(
                    f"an interceptor's ended hook is synchronous (it runs as the operation"
                    f" ends, a cancelled one too); {type(item).__name__}.ended is async"
                )
        self._items = tuple(items)
        hooks = (getattr(item, "event", None) for item in self._items)
        self._events: tuple[Callable[..., Any], ...] = tuple(h for h in hooks if callable(h))

    def __bool__(self) -> bool:
        return bool(self._items)

    def intercept(
        self,
        name: str,
        agent: str | None,
        args: OpArgs,
        credentials: Credentials,
        *,
        until: float = math.inf,
        part_of: str | None = None,
        card: AgentCard | None = None,
        streamed: bool = False,
    ) -> Interception:
        """The interceptors of the operation ``name`` (``Operation``), whose deadline is
        ``until`` (``anyio.current_time()`` clock; ``inf``: none): the one way they are run."""
        headers = dict(credentials.call_headers)
        streamed = streamed or name in ("stream", "subscribe")
        op = Operation(name, agent, arguments(args), headers, part_of, card, streamed=streamed)
        return Interception(self._items, self._events, op, until)


class Interception:
    """The interceptors of one operation as it runs: ``begin`` (the ``before`` hooks),
    ``event`` for each event, ``end`` with its outcome (the ``after`` hooks, then the
    ``ended`` ones), or ``left`` when it ends otherwise (a cancellation, Ctrl-C, a stream
    closed early: the ``ended`` hooks alone); ``around`` runs a whole unary operation.
    ``after`` and ``ended`` run for the interceptors whose ``before`` ran, innermost first;
    ``ended`` once, whatever the road."""

    __slots__ = ("_ending", "_entered", "_events", "_items", "op", "until")

    def __init__(
        self,
        items: tuple[object, ...],
        events: tuple[Callable[..., Any], ...],
        op: Operation,
        until: float,
    ) -> None:
        self._items = items
        self._events = events
        self._entered = 0  # how many of the interceptors saw ``before``, from the first
        self._ending: str | None = None  # how the operation ends, once the hooks know
        self.op = op
        self.until = until

    async def around(self, send: Callable[[], Awaitable[Any]]) -> Any:
        """Run the ``before`` hooks, then ``send()`` unless one answered, then the ``after``
        and ``ended`` hooks; return the result or raise the error."""
        op = self.op
        try:
            await self.begin()
            result, error = op.result, None
            if not op.answered:
                try:
                    result = await send()
                except Exception as exc:
                    error = exc
            error = await self.end(result, error)
        except BaseException as exc:
            self.left(exc)
            raise
        if error is not None:
            raise error
        return op.result

    async def begin(self) -> None:
        """Run the ``before`` hooks until one answers or fails; what one raised is raised
        (after the ``after`` and ``ended`` hooks of those that ran), unless an ``after``
        answered in its place."""
        op = self.op
        for item in self._items:
            self._entered += 1
            refused: Exception | None = None
            try:
                hook = getattr(item, "before", None)
                if callable(hook):
                    await call_hook(hook, op)
                if op.answered and op.name in _UNANSWERABLE:
                    op.result, op.answered = None, False
                    why = _UNANSWERABLE[op.name]
                    raise TypeError(f"an interceptor cannot answer a {op.name}: {why}")
            except Exception as exc:
                refused = exc
            if refused is not None:
                error = await self.end(None, refused)
                if error is not None:
                    raise error
                return
            if op.answered:
                return

    async def event(self, event: StreamEvent) -> None:
        for hook in self._events:
            await call_hook(hook, self.op, event)

    async def end(self, result: Any, error: Exception | None) -> Exception | None:
        """Run the ``after`` hooks, then the ``ended`` ones (once); the error the operation
        is to raise (None: it returns ``op.result``). A stream's, a subscribe's or a ping's
        ``after`` may replace its error with another, never with a result."""
        if self._ending is not None:
            return error
        op = self.op
        op.result, op.error = result, error
        deadline = isinstance(error, A2ATimeoutError) and error.timeout == "deadline"
        await self._after()
        if op.name in _UNANSWERABLE:
            op.result = result
            if op.error is None:
                op.error = error
        if deadline:
            self._end("deadline", op.error)
        else:
            failed = self._end("error" if op.error is not None else "result")
            if failed is not None:
                op.result, op.error = None, failed
        return op.error

    def left(self, exc: BaseException | None) -> None:
        """The operation ended without an outcome of its own: by ``exc`` (its deadline, a
        cancel scope, Ctrl-C), or its caller left it before its end (None, or an error of
        the caller's own: a stream closed early). Runs the ``ended`` hooks, if they have not
        run; what one raises is raised only when nothing else ends the operation (``exc``
        is None)."""
        if self._ending is not None:
            return
        self.op.result = self.op.error = None
        if isinstance(exc, anyio.get_cancelled_exc_class()):
            # Ctrl-C that stopped a sync facade's call, the call's own deadline, or a scope
            # around it (the caller's; Ctrl-C where the event loop turns it into one).
            interrupted = INTERRUPTED.get()
            if interrupted is not None and interrupted():
                ending = "interrupted"
            else:
                ending = "deadline" if anyio.current_time() >= self.until else "cancelled"
            failed = self._end(ending, exc)
        elif exc is None or isinstance(exc, Exception):
            failed = self._end("closed", exc)
        else:
            failed = self._end("interrupted", exc)
        if failed is not None and exc is None:
            raise failed

    async def _after(self) -> None:
        op = self.op
        for item in reversed(self._items[: self._entered]):
            hook = getattr(item, "after", None)
            if callable(hook):
                try:
                    await call_hook(hook, op)
                except Exception as exc:
                    op.error = exc
                error: object = op.error  # what a hook set, whatever its type
                if error is not None and not isinstance(error, Exception):
                    op.error = TypeError(
                        f"an interceptor's op.error must be an Exception or None,"
                        f" not {type(error).__name__}"
                    )

    def _end(self, ending: str, ends: BaseException | None = None) -> Exception | None:
        """Run the ``ended`` hooks; the first error one raised. It never replaces ``ends``,
        what ends the operation (a cancellation, Ctrl-C, a deadline's error): it is noted
        on it (Python 3.11 and later) instead."""
        self._ending = self.op.ending = ending
        failed: Exception | None = None
        for item in reversed(self._items[: self._entered]):
            hook = getattr(item, "ended", None)
            if callable(hook):
                try:
                    outcome = hook(self.op)
                    if inspect.isawaitable(outcome):
                        getattr(outcome, "close", lambda: None)()  # never awaited: not run
                        raise TypeError(f"{type(item).__name__}.ended is synchronous")
                except Exception as exc:
                    failed = failed or exc
        if failed is not None and ends is not None:
            note = getattr(ends, "add_note", None)
            if note is not None:
                note(f"an interceptor's ended hook raised {failed!r}")
        return failed


def applied(op: Operation, args: OpArgs, credentials: Credentials) -> tuple[OpArgs, Credentials]:
    """The arguments and credentials of an operation as its interceptors left them: a
    send's checked and made as ``send_message`` does (``prepare_send``), headers checked
    as ``headers=`` are.

    Raises:
        TypeError: an argument the operation has not, or a send's of the wrong type.
        ValueError: a message that cannot be made into a ``Message``; a header that cannot
            be sent.
    """
    if op.arguments != arguments(args):
        if isinstance(args, Send):
            args = Send(*prepare_send(**op.arguments))
        elif args is None:
            raise TypeError(f"{op.name} takes no arguments, not {', '.join(op.arguments)}")
        else:
            args = type(args)(**op.arguments)
    return args, with_headers(op, credentials)


def with_headers(op: Operation, credentials: Credentials) -> Credentials:
    """``credentials`` with the headers the interceptors left ``op`` with.

    Raises:
        ValueError: a header that cannot be sent, as for ``headers=``.
    """
    if op.headers == credentials.call_headers:
        return credentials
    check_headers("an interceptor's headers", op.headers)
    return credentials._replace(call_headers=dict(op.headers))
