"""Shared helpers of the unit tests: recorded frames, mock clock, scripted SSE bodies, cards."""

from __future__ import annotations

import asyncio
import json
import selectors
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
import trio
import trio.testing

from a2a_anyio import MessageStream

FRAMES = Path(__file__).resolve().parents[1] / "frames"
BASE = "https://agent.example.com"
RPC_URL = BASE + "/a2a"


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


def on_mock_clock() -> pytest.MarkDecorator:
    """Run the test only on trio, with a fresh ``MockClock`` that jumps whenever all tasks block."""
    clock = trio.testing.MockClock(autojump_threshold=0)
    return pytest.mark.parametrize(
        "anyio_backend", [pytest.param(("trio", {"clock": clock}), id="trio-mockclock")]
    )


class _JumpingSelector(selectors.DefaultSelector):
    """A selector that does not wait for a timer: with nothing ready, it moves ``now`` to
    the next one (trio's ``autojump_threshold=0``). A wait without a timer still blocks."""

    def __init__(self) -> None:
        super().__init__()
        self.now = 0.0

    def select(self, timeout: float | None = None) -> list[tuple[selectors.SelectorKey, int]]:
        if timeout is None:
            return super().select(None)
        ready = super().select(0)
        if not ready:
            self.now += timeout
        return ready


class MockClockLoop(asyncio.SelectorEventLoop):
    """An asyncio loop on virtual time that jumps whenever every task waits (no socket and
    no thread may be involved: in-process transports only)."""

    def __init__(self) -> None:
        self._selector_clock = _JumpingSelector()
        super().__init__(self._selector_clock)

    def time(self) -> float:
        return self._selector_clock.now


def on_mock_clocks() -> pytest.MarkDecorator:
    """Run the test on trio's ``MockClock`` and on a ``MockClockLoop`` of asyncio, both
    jumping whenever all tasks block."""
    clock = trio.testing.MockClock(autojump_threshold=0)
    return pytest.mark.parametrize(
        "anyio_backend",
        [
            pytest.param(("trio", {"clock": clock}), id="trio-mockclock"),
            pytest.param(("asyncio", {"loop_factory": MockClockLoop}), id="asyncio-mockclock"),
        ],
    )


def jump(seconds: float) -> None:
    """Move the MockClock forward (no waiting)."""
    clock = trio.lowlevel.current_clock()
    assert isinstance(clock, trio.testing.MockClock)
    clock.jump(seconds)


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
