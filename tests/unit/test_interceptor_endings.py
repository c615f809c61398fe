"""Every ending of every operation reaches the interceptors' ``ended`` hook: a result, an
error, the call's deadline, the caller's cancel scope, Ctrl-C (``KeyboardInterrupt``), a
stream left before its end. The hook is synchronous: it runs as the ending goes by, never
delays it, and never replaces the cancellation. On the virtual clock, against the testing
kit's FakeAgent (Ctrl-C through a real signal: ``test_sync_interrupt.py``)."""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from a2a_anyio import (
    A2AClient,
    A2ATimeoutError,
    Interceptor,
    Operation,
    StreamEvent,
    Task,
    TaskNotFoundError,
)
from a2a_anyio.testing import FakeAgent

from ._support import on_mock_clock
from .test_interceptors import client_of
from .test_request_headers import SLOW, slow_agent

pytestmark = pytest.mark.anyio


class Audit(Interceptor):
    """An audit log: one line per operation the caller made (look-ups left out), with how it
    ended, what the caller got and when (on the virtual clock)."""

    def __init__(self) -> None:
        self.lines: list[tuple[Any, ...]] = []
        self.afters: list[str] = []

    def before(self, op: Operation) -> None:
        op.state["start"] = anyio.current_time()

    def after(self, op: Operation) -> None:
        self.afters.append(op.name)

    def ended(self, op: Operation) -> None:
        if op.part_of is None:
            took = anyio.current_time() - op.state["start"]
            error = type(op.error).__name__ if op.error is not None else None
            self.lines.append((op.name, op.streamed, op.ending, error, took))


async def read(client: A2AClient, metadata: dict[str, Any] | None = SLOW, **options: Any) -> None:
    async with client.stream_message("hi", metadata=metadata, **options) as stream:
        async for _ in stream:
            pass


# Each given a client and a working task.
CUT: dict[str, Callable[[A2AClient, Task], Awaitable[Any]]] = {
    "send_message": lambda c, t: c.send_message("hi", metadata=SLOW, timeout=0.5),
    "send_message_on_event": lambda c, t: c.send_message(
        "hi", metadata=SLOW, on_event=lambda _: None, timeout=0.5
    ),
    "wait": lambda c, t: c.wait(t.id, timeout=0.5),
    "stream_message": lambda c, t: read(c, total_timeout=0.5),
}
#: What the audit log says of each: the operation, whether it streams underneath, the error
#: the interceptors see (a stream's deadline is its own error; a unary call's is raised
#: outside the operation, as its cancel scope ends).
CUT_SEEN = {
    "send_message": ("send", False, "deadline", None, 0.5),
    "send_message_on_event": ("send", True, "deadline", None, 0.5),
    "wait": ("wait", False, "deadline", None, 0.5),
    "stream_message": ("stream", True, "deadline", "A2ATimeoutError", 0.5),
}


@on_mock_clock()
@pytest.mark.parametrize("operation", list(CUT))
async def test_a_call_cut_by_its_deadline_is_seen_ending_so_at_the_deadline(
    operation: str,
) -> None:
    audit = Audit()
    agent = slow_agent()
    async with client_of(agent, interceptors=[audit]) as client:
        task = await client.send_message("hi", metadata=SLOW, blocking=False)
        assert isinstance(task, Task)
        audit.lines.clear()
        start = anyio.current_time()
        with pytest.raises(A2ATimeoutError, match="deadline timeout"):
            await CUT[operation](client, task)
        assert anyio.current_time() - start == pytest.approx(0.5)  # not a moment later
    assert audit.lines == [CUT_SEEN[operation]]


@on_mock_clock()
async def test_a_call_cut_by_the_callers_cancel_scope_is_seen_cancelled_with_no_after() -> None:
    audit = Audit()
    async with client_of(slow_agent(), interceptors=[audit]) as client:
        await client.get_card()
        audit.afters.clear()
        with anyio.move_on_after(0.5):
            await client.send_message("hi", metadata=SLOW)
        with anyio.move_on_after(0.5):
            await client.send_message("hi", metadata=SLOW, on_event=lambda _: None)
        with anyio.move_on_after(0.5):
            await read(client)
    assert audit.lines[1:] == [
        ("send", False, "cancelled", None, 0.5),
        ("send", True, "cancelled", None, 0.5),
        ("stream", True, "cancelled", None, 0.5),
    ]
    assert audit.afters == []  # a cancellation is no outcome to replace


async def test_results_errors_and_a_stream_left_early_are_seen_too() -> None:
    audit = Audit()
    async with client_of(FakeAgent(), interceptors=[audit]) as client:
        task = await client.send_message("hi")
        assert isinstance(task, Task)
        with pytest.raises(TaskNotFoundError):
            await client.get_task("gone")
        async with client.stream_message("hi") as stream:
            async for _ in stream:
                break
        stream = client.stream_message("hi")
        await stream.__aenter__()
        await stream.aclose()
        with pytest.raises(ValueError, match="mine"):
            async with client.stream_message("hi") as stream:
                raise ValueError("mine")
    assert [line[:4] for line in audit.lines] == [
        ("send", False, "result", None),  # the card fetched first is a part of it
        ("get", False, "error", "TaskNotFoundError"),
        ("stream", True, "closed", None),
        ("stream", True, "closed", None),
        ("stream", True, "closed", None),
    ]


class Interrupt(Interceptor):
    """Ctrl-C arriving while the call waits for its agent (a ``KeyboardInterrupt`` raised
    inside the call, where an event loop that lets it through delivers it)."""

    def event(self, op: Operation, event: StreamEvent) -> None:
        raise KeyboardInterrupt

    def after(self, op: Operation) -> None:
        if op.name == "get":
            raise KeyboardInterrupt


async def test_ctrl_c_inside_a_call_is_seen_interrupted_and_goes_on() -> None:
    audit = Audit()
    async with client_of(FakeAgent(), interceptors=[audit, Interrupt()]) as client:
        with pytest.raises(KeyboardInterrupt):
            await client.send_message("hi", on_event=lambda _: None)
        with pytest.raises(KeyboardInterrupt):
            await read(client, metadata=None)
        with pytest.raises(KeyboardInterrupt):
            await client.get_task("t1")
    assert [line[:4] for line in audit.lines] == [
        ("send", True, "interrupted", None),
        ("stream", True, "interrupted", None),
        ("get", False, "interrupted", None),
    ]


class Broken(Interceptor):
    def ended(self, op: Operation) -> None:
        if op.part_of is None:
            raise LookupError(f"audit log unavailable ({op.ending})")


@on_mock_clock()
async def test_what_an_ended_hook_raises_never_replaces_a_cancellation() -> None:
    async with client_of(slow_agent(), interceptors=[Broken()]) as client:
        with pytest.raises(LookupError, match=r"audit log unavailable \(result\)"):
            await client.get_card()  # it ended on its own: raised in its place
        with pytest.raises(A2ATimeoutError) as timed_out:
            await client.send_message("hi", metadata=SLOW, timeout=0.5)
        with anyio.move_on_after(0.5) as scope:
            await client.send_message("hi", metadata=SLOW)
        assert scope.cancelled_caught
        with pytest.raises(LookupError, match=r"unavailable \(closed\)"):
            async with client.stream_message("hi") as stream:
                async for _ in stream:
                    break
    if sys.version_info >= (3, 11):  # noted on what went on instead
        assert "LookupError('audit log unavailable (deadline)')" in str(
            timed_out.value.__context__.__notes__  # type: ignore[union-attr]
        )


class AsyncEnded:
    async def ended(self, op: Operation) -> None: ...


class AwaitableEnded:
    def ended(self, op: Operation) -> Any:
        return anyio.lowlevel.checkpoint()


async def test_an_ended_hook_is_synchronous() -> None:
    with pytest.raises(TypeError, match=r"ended hook is synchronous.*AsyncEnded\.ended is async"):
        A2AClient("https://agent.example.com", interceptors=[AsyncEnded()])
    async with client_of(FakeAgent(), interceptors=[AwaitableEnded()]) as client:
        with pytest.raises(TypeError, match=r"AwaitableEnded\.ended is synchronous"):
            await client.get_task("t1")


class Slow(Interceptor):
    """A hook that takes 100 (virtual) seconds: ``before`` or ``after``."""

    def __init__(self, hook: str) -> None:
        self.hook = hook

    async def before(self, op: Operation) -> None:
        if self.hook == "before":
            await anyio.sleep(100)

    async def after(self, op: Operation) -> None:
        if self.hook == "after":
            await anyio.sleep(100)


@on_mock_clock()
@pytest.mark.parametrize("hook", ["before", "after"])
async def test_a_hook_that_outlasts_the_deadline_is_cut_and_the_ending_seen(hook: str) -> None:
    audit = Audit()
    async with client_of(FakeAgent(), interceptors=[audit, Slow(hook)]) as client:
        await client.get_card()
        audit.lines.clear()
        with pytest.raises(A2ATimeoutError, match="deadline timeout"):
            await client.list_tasks(timeout=5)
    assert audit.lines == [("list", False, "deadline", None, 5)]
