"""The portal a sync facade runs its async client on, and the calls it makes there."""

from __future__ import annotations

import inspect
import threading
from collections.abc import Awaitable, Callable, Mapping
from contextlib import ExitStack
from types import TracebackType
from typing import Any, TypeVar

import anyio
import anyio.to_thread
from anyio.from_thread import BlockingPortal, start_blocking_portal

from a2a_anyio._auth import REQUEST_HEADERS
from a2a_anyio._intercept import INTERRUPTED
from a2a_anyio._observe import NO_TRACING, Tracing

T = TypeVar("T")
E = TypeVar("E")
F = TypeVar("F", bound="Facade")


class Facade:
    """What the sync facades share: their ``Calls``, ``closed``, and ``with`` that closes
    them once (``_close_once``), whatever thread gets there first."""

    _calls: Calls
    _stack: ExitStack | None  # the portal, when the facade owns it
    _close_lock: threading.Lock

    def __enter__(self: F) -> F:
        if self._calls.closed:
            raise RuntimeError(f"this {self._calls.owner} is closed")
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        """Close the facade; idempotent."""
        self._close_once()

    def _close_once(self) -> None:
        """Run ``_shutdown`` in the portal unless closed already, then stop the portal if
        the facade owns it."""
        with self._close_lock:
            if self._calls.closed:
                return
            try:
                self._calls.portal.call(self._shutdown)
            finally:
                if self._stack is not None:
                    self._stack.close()

    async def _shutdown(self) -> None:
        raise NotImplementedError

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called."""
        return self._calls.closed


class Calls:
    """The calls one facade makes on a portal: refused once shut, cancelled when shut.

    The portal is thread-safe; this adds the facade's own lifecycle, kept in the event loop's
    thread: ``shut()`` runs there, cancels the calls still running and waits until they have
    ended, so that nothing is closed under a call that still uses it. A call interrupted in
    the waiting thread (``KeyboardInterrupt``, say) cancels its task in the portal and waits
    until that task has ended before the interrupt goes on: the connection it held is
    released, and what the caller does next (close a stream, call again) never meets the
    call still running. Interrupted while the portal is still starting it, the call is
    cancelled and waited for likewise if it has begun there, or else never begins.

    With ``tracing``, the caller's current span is the parent of the spans of the call. The
    ``request_headers`` blocks the calling thread is in apply to the call (the portal's
    task starts from the loop's context, not the caller's).
    """

    def __init__(self, portal: BlockingPortal, owner: str, tracing: Tracing = NO_TRACING) -> None:
        self.portal = portal
        self.owner = owner
        self._tracing = tracing
        self.closed = False  # written in the loop's thread only
        self._scopes: set[anyio.CancelScope] = set()  # the loop's thread only
        self._idle: anyio.Event | None = None

    def run(self, func: Callable[[], Awaitable[T]]) -> T:
        """Await ``func()`` in the portal's event loop and return (or raise) its outcome."""
        if self.closed:
            raise RuntimeError(f"this {self.owner} is closed")
        call = _Call()
        try:
            try:
                future = self.portal.start_task_soon(
                    self._guarded, func, call, self._tracing.capture(), REQUEST_HEADERS.get()
                )
            except RuntimeError:
                if self.closed:  # closed (and the portal stopped) since the check above
                    raise RuntimeError(f"this {self.owner} is closed") from None
                raise
            return future.result()
        except BaseException as exc:
            if not call.ended.is_set():  # interrupted here, not failed there
                self._stop(call, isinstance(exc, KeyboardInterrupt))
            raise

    def _stop(self, call: _Call, interrupted: bool = False) -> None:
        """Cancel ``call`` in the loop (``interrupted``: by Ctrl-C, as its interceptors are
        told), or keep it from starting there if it has not yet, and wait until it has
        unwound. Another interrupt here ends the wait."""
        try:
            started = self.portal.call(call.stop, interrupted)
        except RuntimeError:  # the portal has stopped: nothing runs there any more
            return
        if started:
            call.ended.wait()

    async def _guarded(
        self,
        func: Callable[[], Awaitable[T]],
        call: _Call,
        tracing_context: object,
        headers: Mapping[object, Mapping[str, str]],
    ) -> T:
        REQUEST_HEADERS.set(headers)  # this task's own context: nothing to reset
        INTERRUPTED.set(call.was_interrupted)
        try:
            if self.closed:
                raise RuntimeError(f"this {self.owner} is closed")
            if call.stopped:  # interrupted before it began; nobody waits for it
                raise RuntimeError(f"this call to the {self.owner} was interrupted")
            with anyio.CancelScope() as scope, self._tracing.restored(tracing_context):
                call.scope = scope
                self._scopes.add(scope)
                try:
                    return await func()
                finally:
                    self._scopes.discard(scope)
                    if not self._scopes and self._idle is not None:
                        self._idle.set()
            raise RuntimeError(f"this {self.owner} was closed during the call")
        finally:
            call.ended.set()

    async def shut(self) -> bool:
        """In the loop: refuse new calls, cancel those running and wait until they ended.

        False when already shut.
        """
        if self.closed:
            return False
        self.closed = True
        if self._scopes:
            self._idle = anyio.Event()
            for scope in list(self._scopes):
                scope.cancel()
            await self._idle.wait()
        return True


class _Call:
    """One call in the loop, as the thread waiting for it stops it."""

    def __init__(self) -> None:
        self.ended = threading.Event()  # set in the loop once the call has unwound
        self.scope: anyio.CancelScope | None = None  # once begun; the loop's thread only
        self.stopped = False  # the loop's thread only
        self.interrupted = False  # stopped by Ctrl-C; the loop's thread only

    def stop(self, interrupted: bool = False) -> bool:
        """In the loop: cancel the call, or keep it from starting; True if it has started."""
        self.stopped = True
        self.interrupted = interrupted
        if self.scope is None:
            return False
        self.scope.cancel()
        return True

    def was_interrupted(self) -> bool:
        """True once Ctrl-C in the waiting thread stopped the call."""
        return self.interrupted


def start_portal(
    stack: ExitStack, backend: str, backend_options: Mapping[str, Any] | None
) -> BlockingPortal:
    options = dict(backend_options) if backend_options is not None else None
    return stack.enter_context(start_blocking_portal(backend, options))


def off_loop(callback: Callable[[E], Any] | None) -> Callable[[E], Any] | None:
    """``callback`` (an ``on_event``, a tool's ``on_progress``) made safe to call from the
    portal's event loop.

    A sync callback runs in a worker thread, one event at a time (also when a fan-out calls it
    for many agents at once): it may block, and it may call the sync client again, which it
    could not do on the event loop's own thread. An async callback is awaited in the loop.
    """
    if callback is None or inspect.iscoroutinefunction(callback):
        return callback
    lock = threading.Lock()

    def locked(event: E) -> Any:
        with lock:
            return callback(event)

    async def notify(event: E) -> None:
        # Abandoned when cancelled: the callback may be what is closing the client.
        outcome = await anyio.to_thread.run_sync(locked, event, abandon_on_cancel=True)
        if inspect.isawaitable(outcome):
            await outcome

    return notify
