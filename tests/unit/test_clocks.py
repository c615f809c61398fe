"""The virtual clocks of the suite (``_support.py``): when asyncio's ``MockClockLoop`` jumps and
when it waits, and ``jump()`` on both backends."""

from __future__ import annotations

import asyncio
import selectors
import socket
import threading

import anyio
import pytest

from ._support import MockClockLoop, _JumpingSelector, jump, mock_clock_options, on_mock_clock

pytestmark = pytest.mark.anyio


def test_the_selector_jumps_only_when_nothing_is_ready() -> None:
    a, b = socket.socketpair()
    with a, b, _JumpingSelector() as selector:
        selector.register(a, selectors.EVENT_READ)
        assert selector.select(5) == [] and selector.now == 5  # nothing ready: the timer is due
        assert selector.select(0) == [] and selector.now == 5  # a poll takes no time
        b.send(b"x")
        [(key, _)] = selector.select(5)  # ready I/O first, no jump
        assert key.fileobj is a and selector.now == 5
        assert len(selector.select(None)) == 1 and selector.now == 5  # no timer: a real wait


def test_another_thread_wakes_a_loop_that_has_no_timer() -> None:
    async def woken_by_a_thread() -> float:
        loop = asyncio.get_running_loop()
        woken = loop.create_future()
        thread = threading.Thread(target=loop.call_soon_threadsafe, args=(woken.set_result, 1))
        thread.start()  # before or during the loop's select(None): the self-pipe wakes it
        await woken
        thread.join()
        return loop.time()

    loop = MockClockLoop()
    try:
        assert loop.run_until_complete(woken_by_a_thread()) == 0
    finally:
        loop.close()


def test_the_default_executor_is_joined_on_close_without_a_virtual_limit() -> None:
    async def use_the_default_executor() -> None:
        await asyncio.get_running_loop().run_in_executor(None, threading.current_thread)

    # asyncio.Runner's 300 s for the executor's threads would be virtual (3.13): a RuntimeWarning
    anyio.run(
        use_the_default_executor, backend="asyncio", backend_options=mock_clock_options("asyncio")
    )


@on_mock_clock()
async def test_jump_and_autojump_on_either_backend() -> None:
    assert anyio.current_time() == 0  # a fresh clock for every test
    jump(5)
    assert anyio.current_time() == 5
    with anyio.move_on_after(3600) as scope:
        await anyio.sleep_forever()  # an hour, at once
    assert scope.cancelled_caught and anyio.current_time() == 3605
    with pytest.raises(ValueError, match="backwards"):
        jump(-1)
