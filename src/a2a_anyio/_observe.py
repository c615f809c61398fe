"""What a client tells of its work: records on its logger, spans and metrics when it traces.

The I/O boundary logs each request and its answer (DEBUG), the retry policy each retry and
a stream each resume (INFO); nothing is logged at WARNING or above. Nothing here imports
OpenTelemetry: ``_tracing`` does, and it is imported only for a client made with
``tracing=True``.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping, MutableMapping
from contextlib import AbstractContextManager
from typing import NamedTuple, TypeVar

from a2a_anyio._errors import MAX_SHOWN, ErrorContext, clipped
from a2a_anyio._no_context import NO_CONTEXT, NoContext

T = TypeVar("T")
#: What a span attribute or event attribute may hold.
Attribute = str | bool | int | float

#: The logger of every client that is given none.
LOGGER = logging.getLogger("a2a_anyio")

#: Words that mark a header or query parameter name as one holding a secret.
SENSITIVE_WORDS = ("token", "secret", "key", "auth", "pass", "session", "cookie", "signature")
# Patterns, compiled by ``re`` (and cached there) when first used: errors, retries and
# debug records need them, a call that goes well does not. Each is matched in time linear
# in the text (a server's): a query parameter's name ends at the next "?" or "&".
_USERINFO = r"(?<=://)[^/?#@\s]*@"
_QUERY_NAME = r"[?&]([^=&#?\s]*)="
_VALUE_END = r"[&#\s]"


def redacted(text: str, limit: int = MAX_SHOWN) -> str:
    """``text`` (a URL, or a message quoting URLs) without the userinfo of its URLs, with
    ``***`` for each query value whose parameter name suggests a secret, and cut to
    ``limit`` characters."""
    text = re.sub(_USERINFO, "", text)
    kept: list[str] = []
    done = 0  # where the text after the last hidden value starts
    for name in re.finditer(_QUERY_NAME, text):
        lowered = name.group(1).lower()
        if name.start() < done or not any(word in lowered for word in SENSITIVE_WORDS):
            continue
        end = re.compile(_VALUE_END).search(text, name.end())
        kept += (text[done : name.end()], "***")
        done = len(text) if end is None else end.start()
    kept.append(text[done:])
    return clipped("".join(kept), limit)


def about(context: ErrorContext) -> str:
    """The call a request belongs to, for a record: `` (SendMessage, id 3)``."""
    name = context.get("method") or context.get("operation")
    request_id = context.get("request_id")
    if request_id is None:
        return f" ({name})" if name else ""
    return f" ({name}, id {request_id})"


class Span:
    """The span of one operation. This one records nothing: tracing is off."""

    __slots__ = ()

    def returned(self, value: T, context: ErrorContext) -> T:
        """``value``, the operation's result, noted (task id and state) with where its
        last request went (``context``)."""
        return value

    def current(self) -> AbstractContextManager[object]:
        """Make this span the current one for a block (a step of a stream)."""
        return NO_CONTEXT

    def delivered(self, event: object) -> None:
        """A stream delivered ``event`` (counted)."""

    def end(self, result: object, context: ErrorContext, error: BaseException | None) -> None:
        """End a stream's span with what it came to: its result, or ``error``. Idempotent."""


NO_SPAN = Span()


class _NoOperation(NoContext):
    """The span of a call with tracing off: ``with`` it gives ``NO_SPAN``, and binds no
    method, as ``NO_CONTEXT`` (a ``with`` keeps its ``__exit__`` for the whole call)."""

    __slots__ = ()

    @staticmethod
    def __enter__() -> Span:  # type: ignore[override]
        return NO_SPAN


_NO_OPERATION = _NoOperation()


class Tracing:
    """The spans of a client. This one makes none (tracing off); ``_tracing.OtelTracing``
    makes OpenTelemetry spans."""

    __slots__ = ()

    def operation(
        self, operation: str, agent: str | None, *, nested: bool = False
    ) -> AbstractContextManager[Span]:
        """A CLIENT span around a call, current within the block; an error leaving the block
        is recorded on it. A ``nested`` call (a part of another, a follow-up's poll) has no
        span of its own: its requests and retries belong to the span of the call it is part of."""
        return _NO_OPERATION

    def stream(self, operation: str, agent: str | None) -> Span:
        """A CLIENT span for a stream, started now; made current for each step of the
        stream (``Span.current``) and ended by ``Span.end``."""
        return NO_SPAN

    def event(self, name: str, attributes: Mapping[str, Attribute]) -> None:
        """Add an event to the current span (and count it)."""

    def named(self, name: str | None, version: str | None) -> None:
        """The agent's card gives its ``name`` and ``version`` (attributes of the metrics)."""

    def inject(self, headers: MutableMapping[str, str]) -> None:
        """Add the current span's context to a request's headers (W3C ``traceparent``)."""

    def capture(self) -> object:
        """The caller's tracing context, to carry into the event loop of a sync facade."""
        return None

    def restored(self, captured: object) -> AbstractContextManager[object]:
        """Make a ``capture()``d context current for a block."""
        return NO_CONTEXT


NO_TRACING = Tracing()


class Observer(NamedTuple):
    """Where a client reports: its ``logger`` and its ``tracing``."""

    logger: logging.Logger = LOGGER
    tracing: Tracing = NO_TRACING

    def happened(
        self, event: str, attributes: Mapping[str, Attribute], message: str, *args: object
    ) -> None:
        """A retry or a resume: an INFO record (``message % args``) and ``event`` on the
        current span."""
        self.logger.info(message, *args)
        self.tracing.event(event, attributes)
