"""``SyncAgentPool``: a blocking ``AgentPool``, its clients on one portal."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import ExitStack
from typing import TYPE_CHECKING, Any

from a2a_anyio._client import A2AClient
from a2a_anyio._deadline import CLIENT_TIMEOUT, Timeout
from a2a_anyio._fanout import AgentResult
from a2a_anyio._options import FanOutOptions
from a2a_anyio._payloads import Decoder
from a2a_anyio._pool import AgentPool, PoolOptions
from a2a_anyio._prepare import MessageInput
from a2a_anyio._sync import SyncA2AClient
from a2a_anyio._sync_portal import Calls, Facade, off_loop, start_portal

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from a2a_anyio._sync_tool import SyncAgentTool
    from a2a_anyio._tool import AgentToolProgress


class SyncAgentPool(Facade):
    """A blocking ``AgentPool``: clients for many agents over one connection pool, one portal.

    ``options`` are those of ``AgentPool`` (``max_connections``, ``timeout``, ``auth``, ...);
    ``backend`` and ``backend_options`` choose the event loop, as for ``SyncA2AClient``.
    ``client(url)`` returns the same ``SyncA2AClient`` for the same URL, running the pool's
    own ``A2AClient`` for it on the pool's portal. ``close()`` (or leaving ``with``) closes
    every client, the pool and the portal; it is idempotent.
    """

    def __init__(
        self,
        *,
        backend: str = "asyncio",
        backend_options: Mapping[str, Any] | None = None,
        **options: Unpack[PoolOptions],
    ) -> None:
        with ExitStack() as stack:
            portal = start_portal(stack, backend, backend_options)
            self._pool = portal.call(functools.partial(AgentPool, **options))
            self._stack = stack.pop_all()
        self.backend = backend
        self._calls = Calls(portal, type(self).__name__, self._pool._tracing)
        self._clients: dict[str, SyncA2AClient] = {}  # changed in the loop's thread only
        self._close_lock = threading.Lock()

    @property
    def async_pool(self) -> AgentPool:
        """The ``AgentPool`` this facade runs (it belongs to the portal's event loop)."""
        return self._pool

    def register_type(self, key: str, decoder: Decoder) -> None:
        """``AgentPool.register_type``: a payload type for every client of the pool.

        Raises:
            ValueError: ``key`` is not a non-empty string.
            TypeError: ``decoder`` is not callable.
            RuntimeError: the pool is closed.
        """

        async def register() -> None:  # in the loop, like every change of the clients
            self._pool.register_type(key, decoder)

        self._calls.run(register)

    def client(self, url: str) -> SyncA2AClient:
        """The client for ``url``, made on first use (and again if the last one was closed).

        Raises:
            ValueError: a malformed URL.
            RuntimeError: the pool is closed.
        """
        found = self._clients.get(url)
        if found is not None and not found.closed and not self._calls.closed:
            return found

        async def made() -> SyncA2AClient:  # in the loop, like every change of the clients
            found = self._clients.get(url)
            if found is None or found.closed:
                client = self._pool.client(url)
                found = SyncA2AClient._attach(self._calls.portal, client, self.backend)
                self._clients[url] = found
            return found

        return self._calls.run(made)

    def as_tool(
        self,
        url: str,
        *,
        name: str | None = None,
        timeout: Timeout = CLIENT_TIMEOUT,
        on_progress: Callable[[AgentToolProgress], Any] | None = None,
    ) -> SyncAgentTool:
        """``SyncA2AClient.as_tool`` of the pool's client for ``url`` (or registry name).

        Raises:
            AgentRegistryError: as ``AgentPool.as_tool``.
            ValueError: as ``AgentPool.as_tool``.
            A2AClientError: as ``AgentPool.as_tool``.
            RuntimeError: the pool is closed.
        """
        client = self.client(url)
        return client.as_tool(name=name, timeout=timeout, on_progress=on_progress)

    def send(
        self,
        url: str,
        *,
        text: str | None = None,
        data: Any = None,
        timeout: Timeout = CLIENT_TIMEOUT,
        metadata: Mapping[str, Any] | None = None,
        context_id: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> dict[str, Any]:
        """Send a user message (a text and/or a data part) and return the result as a dict:
        the data part of the completed task's artifacts, else ``{"text": ...}``.

        A task still running when the agent answers is waited for (``timeout``: by default
        the pool's; None: no limit); a failed,
        rejected, canceled or interrupted task raises ``TaskFailedError``.

        Raises:
            TaskFailedError: the task failed, was rejected or canceled, or waits for input.
            A2AClientError: any other failure, as ``AgentPool.send``.
        """
        return self._calls.run(
            functools.partial(
                self._pool.send,
                url,
                text=text,
                data=data,
                timeout=timeout,
                metadata=metadata,
                context_id=context_id,
                headers=headers,
            )
        )

    def fan_out(
        self,
        targets: Sequence[str | SyncA2AClient],
        message: MessageInput,
        *,
        timeout: float | None = None,
        limit: int | None = None,
        first: int | None = None,
        cancel_on_exit: bool = True,
        **send_options: Unpack[FanOutOptions],
    ) -> list[AgentResult]:
        """Send ``message`` to every target at once; one ``AgentResult`` per target, in order.

        Targets are URLs or clients of this pool. At most ``limit`` sends run at a time;
        ``first=k`` returns once k agents answered; ``timeout`` cancels the stragglers. A
        failing agent never stops the others: each outcome is in its result. The tasks of the
        sends it abandons are cancelled on their agents, as ``fan_out``'s
        (``cancel_on_exit=False``: left running).

        Raises:
            ValueError: a client of another pool among the targets, or a message that cannot be
                made into a ``Message``. Failures of the agents are in the results.
            TypeError: an option of the send of the wrong type (as ``A2AClient.send_message``).
        """
        clients: list[A2AClient | str] = []
        for target in targets:
            if isinstance(target, SyncA2AClient):
                if target._calls.portal is not self._calls.portal:
                    raise ValueError("fan_out takes URLs or clients of this pool")
                clients.append(target._client)
            else:
                clients.append(target)
        if "on_event" in send_options:
            send_options["on_event"] = off_loop(send_options["on_event"])
        return self._calls.run(
            functools.partial(
                self._pool.fan_out,
                clients,
                message,
                timeout=timeout,
                limit=limit,
                first=first,
                cancel_on_exit=cancel_on_exit,
                **send_options,
            )
        )

    def close(self) -> None:
        """Close every client and the pool, then stop the portal; idempotent."""
        self._close_once()

    async def _shutdown(self) -> None:
        if not await self._calls.shut():
            return
        clients, self._clients = list(self._clients.values()), {}
        for client in clients:
            await client._shutdown()
        await self._pool.aclose()

    def __repr__(self) -> str:
        closed = " closed" if self.closed else ""
        return f"<SyncAgentPool backend={self.backend!r} clients={len(self._clients)}{closed}>"
