"""Shared helpers of the unit tests: recorded frames, mock clock, scripted SSE bodies, cards."""

from __future__ import annotations

import asyncio
import json
import selectors
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import Executor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

import anyio
import httpx
import pytest
import sniffio
import trio
import trio.testing

from a2a_anyio import A2AClient, MessageStream, StreamEvent, Task, TaskReducer
from a2a_anyio.testing import FakeAgent as KitAgent

FRAMES = Path(__file__).resolve().parents[1] / "frames"
BASE = "https://agent.example.com"
RPC_URL = BASE + "/a2a"
T = TypeVar("T")


def fold(events: list[StreamEvent]) -> Task | None:
    """The task that a sequence of events describes, as a stream folds it."""
    reducer = TaskReducer()
    for event in events:
        reducer.apply(event)
    return reducer.task


# -- recorded frames -------------------------------------------------------------------------


def frame_names(version: str) -> list[str]:
    """The frame names (file stems) recorded for ``version`` ("v1_0" or "v0_3")."""
    return sorted(p.stem for p in (FRAMES / version).glob("*.json"))


def load_frame(version: str, name: str) -> dict[str, Any]:
    """One recorded frame; skips the test when it has not been recorded."""
    path = FRAMES / version / f"{name}.json"
    if not path.exists():
        pytest.skip(f"frame {version}/{name} not recorded")
    value = json.loads(path.read_text())
    assert isinstance(value, dict)
    return value


def sse_payloads(text: str) -> list[Any]:
    """The decoded ``data:`` payloads of a recorded event stream (independent of the client)."""
    out: list[Any] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        lines = [ln[5:].removeprefix(" ") for ln in block.split("\n") if ln.startswith("data:")]
        if lines:
            out.append(json.loads("\n".join(lines)))
    return out


# -- time ------------------------------------------------------------------------------------
#
# Every time-based test runs twice, on a virtual clock of each backend that jumps to the next
# timer whenever every task waits: trio's ``MockClock(autojump_threshold=0)`` and asyncio's
# ``MockClockLoop``. A test takes no real time for its sleeps and timeouts, and what it measures
# with ``anyio.current_time()`` is exact virtual time (up to float sums: compare with
# ``pytest.approx`` where a result adds up several waits). Neither clock can see work done
# outside the event loop: a test on them uses in-process transports, or sockets between tasks
# of its own loop (loopback delivers at once, and asyncio's loop here waits in real time for its
# executor's name lookups), never a server in another thread or process.

MOCK_CLOCKS = ("asyncio-mockclock", "trio-mockclock")
# For a sync test that runs its own loop (``anyio.run`` in a hypothesis test, a
# ``SyncA2AClient``): ``@pytest.mark.parametrize("backend", MOCK_CLOCK_BACKENDS)``, then
# ``backend_options=mock_clock_options(backend)``.
MOCK_CLOCK_BACKENDS = [pytest.param(name.split("-")[0], id=name) for name in MOCK_CLOCKS]


class _JumpingSelector(selectors.DefaultSelector):
    """The selector of a ``MockClockLoop``; it keeps the loop's virtual ``now``.

    asyncio asks for ``select(timeout)`` with the time left to its next timer (``0`` when a
    callback is ready, ``None`` when no timer is scheduled). When nothing is ready at once, it
    moves ``now`` forward by ``timeout`` instead of waiting, so that the timer is due (trio's
    ``autojump_threshold=0``). ``select(None)`` still waits, in real time, for I/O or for a
    wakeup from another thread (``call_soon_threadsafe`` writes to the loop's self-pipe).
    ``now + timeout`` may land a float's hair before the timer: asyncio runs timers due within
    its clock resolution (1 ns), so a sleep may end that hair early, as it may on a real clock.
    """

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0
        #: Calls running in the loop's executor (a name lookup before a connect): while one
        #: runs, the loop is not idle, and the clock waits for it in real time.
        self.busy = 0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None or self.busy:
            return super().select(timeout)
        ready = super().select(0)
        if not ready and timeout > 0:
            self.now += timeout
        return ready


class MockClockLoop(asyncio.SelectorEventLoop):
    """An asyncio loop on virtual time, starting at 0, that jumps to its next timer whenever
    every task waits. Only public API: ``time()`` is overridden and the selector is given to
    ``SelectorEventLoop``."""

    def __init__(self) -> None:
        self._jumping_selector = _JumpingSelector()
        super().__init__(self._jumping_selector)

    def time(self) -> float:
        return self._jumping_selector.now

    def run_in_executor(  # type: ignore[override]
        self, executor: Executor | None, func: Callable[..., T], *args: Any
    ) -> asyncio.Future[T]:
        """The executor's call, counted while it runs (the clock waits for it)."""
        selector = self._jumping_selector
        selector.busy += 1
        future = super().run_in_executor(executor, func, *args)

        def done(_: asyncio.Future[T]) -> None:
            selector.busy -= 1

        future.add_done_callback(done)
        return future

    def jump(self, seconds: float) -> None:
        """Move the clock forward by ``seconds`` (like ``MockClock.jump``)."""
        if seconds < 0:
            raise ValueError("time can't go backwards")
        self._jumping_selector.now += seconds

    async def shutdown_default_executor(self, timeout: float | None = None) -> None:
        # asyncio.Runner gives the default executor's threads 300 s to end, timed since 3.13
        # on this loop's clock, which would jump them at once (a RuntimeWarning): no limit here.
        await super().shutdown_default_executor()


def mock_clock_options(backend: str) -> dict[str, Any]:
    """The ``backend_options`` that put ``backend`` ("asyncio" or "trio") on a fresh virtual
    clock (for ``anyio.run``)."""
    if backend == "trio":
        return {"clock": trio.testing.MockClock(autojump_threshold=0)}
    if backend == "asyncio":
        return {"loop_factory": MockClockLoop}
    raise ValueError(f"no mock clock for {backend!r}")


def anyio_backend_for(param: str) -> str | tuple[str, dict[str, Any]]:
    """The ``anyio_backend`` value of a test id: "asyncio" or "trio" as they are,
    "asyncio-mockclock" or "trio-mockclock" with a fresh virtual clock for this test."""
    backend, _, clock = param.partition("-")
    if not clock:
        return backend
    assert clock == "mockclock", param
    return backend, mock_clock_options(backend)


def on_mock_clock() -> pytest.MarkDecorator:
    """Run the test on both backends, each on a fresh virtual clock (ids ``asyncio-mockclock``
    and ``trio-mockclock``; ``tests/conftest.py`` builds the clocks)."""
    return pytest.mark.parametrize("anyio_backend", MOCK_CLOCKS, indirect=True)


def jump(seconds: float) -> None:
    """Move the virtual clock of the running test forward by ``seconds`` (no waiting): timers
    now due fire at the next checkpoint."""
    if sniffio.current_async_library() == "trio":
        clock = trio.lowlevel.current_clock()
        assert isinstance(clock, trio.testing.MockClock), "jump() needs @on_mock_clock()"
        clock.jump(seconds)
    else:
        loop = asyncio.get_running_loop()
        assert isinstance(loop, MockClockLoop), "jump() needs @on_mock_clock()"
        loop.jump(seconds)


# -- SSE ------------------------------------------------------------------------------------


def rpc_result(req_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": req_id, "result": result}


def rpc_error_obj(req_id: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    err: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        err["data"] = data
    return {"jsonrpc": "2.0", "id": req_id, "error": err}


def sse_text(
    payloads: Iterable[Any], *, crlf: bool = False, multiline: bool = False, pings: bool = False
) -> str:
    """An event stream carrying ``payloads`` (one JSON value per event)."""
    nl = "\r\n" if crlf else "\n"
    out = []
    for payload in payloads:
        body = json.dumps(payload, indent=1 if multiline else None)
        event = "".join(f"data: {line}{nl}" for line in body.split("\n")) + nl
        if pings:
            event = f": ping{nl}{nl}" + event
        out.append(event)
    return "".join(out)


def split_chunks(text: str, size: int) -> list[bytes]:
    """``text`` cut into ``size``-byte chunks, boundaries falling anywhere (even inside CRLF)."""
    raw = text.encode()
    return [raw[i : i + size] for i in range(0, len(raw), size)]


class ScriptedBody(httpx.AsyncByteStream):
    """A streamed response body that records how far it was read and whether it was closed.

    ``gap`` seconds pass before each chunk (virtual time on the MockClock); with ``hang`` the
    body never ends after its chunks; ``fail`` is raised after the chunks instead of EOF.
    """

    def __init__(
        self,
        chunks: Sequence[bytes],
        *,
        gap: float = 0.0,
        hang: bool = False,
        fail: BaseException | None = None,
    ) -> None:
        self.chunks = list(chunks)
        self.gap = gap
        self.hang = hang
        self.fail = fail
        self.yielded = 0
        self.closed = False
        self.finally_ran = False
        self._gen: Any = None

    async def _generate(self) -> AsyncIterator[bytes]:
        try:
            for chunk in self.chunks:
                if self.gap:
                    await anyio.sleep(self.gap)
                self.yielded += 1
                yield chunk
            if self.fail is not None:
                raise self.fail
            if self.hang:
                await anyio.sleep_forever()
        finally:
            self.finally_ran = True

    def is_open(self) -> bool:
        """Not closed yet (a method, so that type checkers do not pin the flag)."""
        return not self.closed

    def __aiter__(self) -> AsyncIterator[bytes]:
        self._gen = self._generate()
        return self._gen  # type: ignore[no-any-return]

    async def aclose(self) -> None:
        self.closed = True
        if self._gen is not None:
            await self._gen.aclose()


def causes(error: BaseException) -> list[BaseException]:
    """``error`` and its ``__cause__`` chain, outermost first."""
    chain: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in chain:
        chain.append(current)
        current = current.__cause__
    return chain


async def drain(stream: MessageStream, into: list[Any] | None = None) -> None:
    """Read ``stream`` to its end inside ``async with``, keeping the events in ``into``."""
    async with stream:
        async for event in stream:
            if into is not None:
                into.append(event)


def sse_response(body: httpx.AsyncByteStream) -> httpx.Response:
    return httpx.Response(200, headers={"content-type": "text/event-stream"}, stream=body)


# -- a scripted agent ---------------------------------------------------------------------


def v1_card(url: str = RPC_URL, **extra: Any) -> dict[str, Any]:
    card: dict[str, Any] = {
        "name": "Test Agent",
        "description": "answers tests",
        "version": "1.0.0",
        "supportedInterfaces": [
            {"url": url, "protocolBinding": "JSONRPC", "protocolVersion": "1.0"},
        ],
        "capabilities": {"streaming": True, "pushNotifications": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }
    card.update(extra)
    return card


def v03_card(url: str = RPC_URL, **extra: Any) -> dict[str, Any]:
    card: dict[str, Any] = {
        "protocolVersion": "0.3.0",
        "name": "Old Agent",
        "description": "answers tests the old way",
        "url": url,
        "preferredTransport": "JSONRPC",
        "version": "1.0.0",
        "capabilities": {"streaming": True},
        "defaultInputModes": ["text/plain"],
        "defaultOutputModes": ["text/plain"],
        "skills": [],
    }
    card.update(extra)
    return card


Responder = Callable[[Any, Any], httpx.Response]


class FakeAgent:
    """A MockTransport handler: serves a card and answers JSON-RPC calls from a script.

    ``results[method]`` is the result (or a callable of the params giving it); ``errors[method]``
    is a JSON-RPC error object; ``responders[method](req_id, params)`` builds any response.
    Unknown methods get -32601. Every request is kept in ``requests``.
    """

    def __init__(self, card: dict[str, Any] | None = None) -> None:
        self.card = card
        self.requests: list[httpx.Request] = []
        self.results: dict[str, Any] = {}
        self.errors: dict[str, dict[str, Any]] = {}
        self.responders: dict[str, Responder] = {}

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(request)
        await anyio.lowlevel.checkpoint()
        if request.method == "GET":
            if request.url.path == "/.well-known/agent-card.json" and self.card is not None:
                return httpx.Response(200, json=self.card)
            return httpx.Response(404, text="not found")
        body = json.loads(request.content)
        req_id, method, params = body["id"], body["method"], body.get("params")
        if method in self.responders:
            return self.responders[method](req_id, params)
        if method in self.errors:
            return httpx.Response(
                200, json={"jsonrpc": "2.0", "id": req_id, "error": self.errors[method]}
            )
        if method in self.results:
            result = self.results[method]
            if callable(result):
                result = result(params)
            return httpx.Response(200, json=rpc_result(req_id, result))
        return httpx.Response(200, json=rpc_error_obj(req_id, -32601, "Method not found"))

    def transport(self) -> httpx.MockTransport:
        return httpx.MockTransport(self.handle)

    @property
    def calls(self) -> list[dict[str, Any]]:
        """The JSON-RPC request bodies received, in order."""
        return [json.loads(r.content) for r in self.requests if r.method == "POST"]

    @property
    def rpc_requests(self) -> list[httpx.Request]:
        return [r for r in self.requests if r.method == "POST"]


@asynccontextmanager
async def kit_client(agent: KitAgent, **options: Any) -> AsyncIterator[A2AClient]:
    """An A2AClient of the testing kit's ``agent``, through its in-process transport (which
    runs the agent while the httpx client is open)."""
    async with (
        httpx.AsyncClient(transport=agent.transport()) as http,
        A2AClient(agent.url, http_client=http, **options) as client,
    ):
        yield client
