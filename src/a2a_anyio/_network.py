"""The deadline of a call, kept by httpcore's own socket timeouts.

httpcore puts a timeout around every connect, TLS handshake, read and write it makes. The
network backend here clips each of those timeouts to the time left before the deadline of the
call in progress (a context variable the client sets for the call), so the deadline is exact
over the network, a slow drip of bytes included, without a cancel scope of the client's own
(which costs more than the rest of the call's client-side work).
"""

from __future__ import annotations

import math
import ssl
from contextvars import ContextVar
from typing import Any

import anyio
import httpcore

#: The absolute deadline (``anyio.current_time()`` clock) of the call in progress, if any.
DEADLINE: ContextVar[float] = ContextVar("a2a_anyio_deadline", default=math.inf)


def clip(timeout: float | None) -> float | None:
    """``timeout``, or the time left before the current call's deadline if that is shorter."""
    deadline = DEADLINE.get()
    if deadline == math.inf:
        return timeout
    left = max(deadline - anyio.current_time(), 0.0)
    return left if timeout is None or left < timeout else timeout


class DeadlineStream(httpcore.AsyncNetworkStream):
    """A connection whose every operation ends by the current call's deadline."""

    __slots__ = ("_inner",)

    def __init__(self, inner: httpcore.AsyncNetworkStream) -> None:
        self._inner = inner

    async def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return await self._inner.read(max_bytes, clip(timeout))

    async def write(self, buffer: bytes, timeout: float | None = None) -> None:
        await self._inner.write(buffer, clip(timeout))

    async def aclose(self) -> None:
        await self._inner.aclose()

    async def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.AsyncNetworkStream:
        inner = await self._inner.start_tls(ssl_context, server_hostname, clip(timeout))
        return DeadlineStream(inner)

    def get_extra_info(self, info: str) -> Any:
        return self._inner.get_extra_info(info)


class DeadlineBackend(httpcore.AsyncNetworkBackend):
    """httpcore's network backend, with its connections' timeouts clipped by ``DEADLINE``."""

    def __init__(self, inner: httpcore.AsyncNetworkBackend) -> None:
        self._inner = inner

    async def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Any = None,
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._inner.connect_tcp(
            host, port, clip(timeout), local_address, socket_options
        )
        return DeadlineStream(stream)

    async def connect_unix_socket(
        self, path: str, timeout: float | None = None, socket_options: Any = None
    ) -> httpcore.AsyncNetworkStream:
        stream = await self._inner.connect_unix_socket(path, clip(timeout), socket_options)
        return DeadlineStream(stream)

    async def sleep(self, seconds: float) -> None:
        await self._inner.sleep(seconds)


def install(pools: list[Any]) -> bool:
    """Put the deadline backend under each httpcore pool; False if one is not as expected.

    The pools are httpx transports' ``_pool`` (httpx offers no way to choose the backend).
    """
    for pool in pools:
        backend = getattr(pool, "_network_backend", None)
        if not isinstance(backend, httpcore.AsyncNetworkBackend):
            return False
    for pool in pools:
        if not isinstance(pool._network_backend, DeadlineBackend):
            pool._network_backend = DeadlineBackend(pool._network_backend)
    return True
