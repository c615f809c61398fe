"""Interceptors: the user's hooks around each operation a client sends to its agent."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from a2a_anyio._auth import Credentials
from a2a_anyio._dialects.ops import OpArgs, Send
from a2a_anyio._model import AgentCard, Message, StreamEvent, Task

_HOOKS = ("before", "after", "event")


@dataclass(eq=False)
class Operation:
    """One operation as interceptors see it.

    ``name`` is the operation (``"send"``, ``"stream"``, ``"get"``, ``"list"``, ``"cancel"``,
    ``"subscribe"``, ``"push_create"``, ``"push_get"``, ``"push_list"``, ``"push_delete"``,
    ``"extended_card"``, ``"call"``); ``part_of`` names the operation a look-up belongs to (a
    blocking send's or a stream's polls: ``"send"``, ``"stream"``...; a ``wait``'s ``"get"``:
    ``"wait"``), None for one the user called. ``agent`` is the agent's URL, ``card`` its
    card when the client has it already (None before the first call that fetches it).

    ``before`` may change ``arguments`` (the operation's, by name: ``message``,
    ``metadata``, ``task_id``...; checked and made as the caller's are, so that a send's
    ``message`` may be a str) and ``headers`` (those of this call: its ``headers=`` over
    the ``request_headers`` blocks it runs in; the client's own credentials are not shown),
    or answer with ``respond(result)`` instead of sending. ``after`` sees ``result`` or
    ``error`` and may replace either (``respond``, or ``error = ...``). ``state`` is the
    interceptors' own, from ``before`` to ``after``.
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

    @property
    def streams(self) -> bool:
        """True for a stream (``stream``, ``subscribe``): its result is its events."""
        return self.name in ("stream", "subscribe")

    def respond(self, result: Any) -> None:
        """Answer with ``result``: in ``before``, instead of sending; in ``after``, in place
        of the result or the error."""
        self.result, self.error, self.answered = result, None, True


class Interceptor:
    """An interceptor's hooks, each sync or async, each optional (any object with some of
    them will do): ``before(op)`` as the operation is about to be sent, ``after(op)`` once
    its result or error is known, ``event(op, event)`` for each event a stream delivers.
    Interceptors run in the order given, their ``after`` in reverse."""

    def before(self, op: Operation) -> Awaitable[None] | None:
        """Called before the operation is sent."""
        return None

    def after(self, op: Operation) -> Awaitable[None] | None:
        """Called with the operation's result or error."""
        return None

    def event(self, op: Operation, event: StreamEvent) -> Awaitable[None] | None:
        """Called with each event a stream delivers."""
        return None


async def _call(hook: Callable[..., Any], *args: Any) -> None:
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
    """A client's interceptors, and how they run around an operation."""

    __slots__ = ("_events", "_items")

    def __init__(self, items: Sequence[object]) -> None:
        if isinstance(items, (str, bytes)) or not isinstance(items, Sequence):
            raise TypeError(f"interceptors must be a sequence, not {type(items).__name__}")
        for item in items:
            if not any(callable(getattr(item, name, None)) for name in _HOOKS):
                raise TypeError(
                    f"an interceptor has a before, after or event method;"
                    f" {type(item).__name__} has none"
                )
        self._items = tuple(items)
        hooks = (getattr(item, "event", None) for item in self._items)
        self._events: tuple[Callable[..., Any], ...] = tuple(h for h in hooks if callable(h))

    def __bool__(self) -> bool:
        return bool(self._items)

    def seen(
        self,
        name: str,
        agent: str | None,
        args: OpArgs,
        credentials: Credentials,
        part_of: str | None = None,
        card: AgentCard | None = None,
    ) -> Operation:
        """The operation the interceptors are shown."""
        headers = dict(credentials.call_headers)
        return Operation(name, agent, arguments(args), headers, part_of, card)

    async def around(self, op: Operation, send: Callable[[], Awaitable[Any]]) -> Any:
        """Run the ``before`` hooks, then ``send()`` unless one answered, then the ``after``
        hooks of those that ran, innermost first; return the result or raise the error."""
        entered = await self._before(op, answers=True)
        if not op.answered and op.error is None:
            try:
                op.result = await send()
            except Exception as exc:
                op.error = exc
        await self._after(op, entered)
        if op.error is not None:
            raise op.error
        return op.result

    async def _before(self, op: Operation, *, answers: bool) -> int:
        """Run ``before`` hooks until one answers or fails (its error in ``op.error``); how
        many ran."""
        entered = 0
        for item in self._items:
            entered += 1
            try:
                hook = getattr(item, "before", None)
                if callable(hook):
                    await _call(hook, op)
                if op.answered and not answers:
                    raise TypeError(
                        f"an interceptor cannot answer a {op.name}: its result is its events"
                    )
            except Exception as exc:
                op.error = exc
                return entered
            if op.answered:
                return entered
        return entered

    async def _after(self, op: Operation, entered: int) -> None:
        for item in reversed(self._items[:entered]):
            hook = getattr(item, "after", None)
            if callable(hook):
                try:
                    await _call(hook, op)
                except Exception as exc:
                    op.error = exc
                error: object = op.error  # what a hook set, whatever its type
                if error is not None and not isinstance(error, Exception):
                    op.error = TypeError(
                        f"an interceptor's op.error must be an Exception or None,"
                        f" not {type(error).__name__}"
                    )

    def stream(self, op: Operation) -> StreamInterception:
        """The hooks of one stream."""
        return StreamInterception(self, op)


class StreamInterception:
    """The interceptors of one stream: ``before`` as it opens (it cannot answer: a stream's
    result is its events), ``event`` for each event it delivers, ``after`` when it ends,
    with its task or message, or the error that ended it (which ``after`` may replace with
    another, never with a result). A stream left early (closed, cancelled) runs no ``after``."""

    __slots__ = ("_entered", "_interceptors", "op")

    def __init__(self, interceptors: Interceptors, op: Operation) -> None:
        self._interceptors = interceptors
        self._entered = 0
        self.op = op

    async def begin(self) -> None:
        """Run the ``before`` hooks; raise what one raised (after the ``after`` hooks of
        those that ran)."""
        op = self.op
        entered = await self._interceptors._before(op, answers=False)
        error = op.error
        if error is not None:
            await self._interceptors._after(op, entered)
            raise op.error or error
        self._entered = entered

    async def event(self, event: StreamEvent) -> None:
        for hook in self._interceptors._events:
            await _call(hook, self.op, event)

    async def end(self, result: Task | Message | None, error: Exception | None) -> Exception | None:
        """Run the ``after`` hooks (once); the error the stream is to raise."""
        entered, self._entered = self._entered, 0
        if not entered:
            return error
        op = self.op
        op.result, op.error = result, error
        await self._interceptors._after(op, entered)
        return op.error if op.error is not None else error
