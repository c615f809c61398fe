"""AgentPool: many agents, one httpx client, one client per URL; and the fan-outs that take
agents by URL or registry name, which a pool serves (``_fanout`` holds their mechanism)."""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping, Sequence
from contextlib import AsyncExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any, cast

from a2a_anyio._auth import check_options
from a2a_anyio._client import A2AClient
from a2a_anyio._deadline import CLIENT_TIMEOUT, Timeout, check_timeout
from a2a_anyio._errors import A2AProtocolError, TaskFailedError
from a2a_anyio._fanout import AgentResult, MergedStreams, Target, send_all
from a2a_anyio._http import (
    DEFAULT_TIMEOUT,
    AsyncClient,
    HttpTransport,
    VerifyTypes,
    warn_unverified,
)
from a2a_anyio._intercept import Interceptors
from a2a_anyio._model import DataPart, Message, Task, TaskState, TextPart
from a2a_anyio._options import (
    AgentOptions,
    ClientArguments,
    ClientOptions,
    FanOutOptions,
    FanOutStreamOptions,
)
from a2a_anyio._payloads import Decoder, PayloadTypes
from a2a_anyio._prepare import MessageInput, check_send
from a2a_anyio._registry import AgentRegistry, AgentRegistryError, is_url
from a2a_anyio._reporting import tracing_for
from a2a_anyio._wires import LearnedWires

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from a2a_anyio._tool import AgentTool, AgentToolProgress


class PoolOptions(AgentOptions, total=False):
    """The options of ``AgentPool``: its own, and those it passes on to each client."""

    max_connections: int | None
    timeout: float | None
    verify: VerifyTypes
    http_client: AsyncClient | None
    registry: AgentRegistry | None
    logger: logging.Logger | None
    tracing: bool


class AgentPool:
    """Clients for many agents over one shared httpx client.

    ``pool.client(url)`` returns the same ``A2AClient`` for the same URL; ``client_options``
    (``auth``, ``headers``, ``protocol``, ...) apply to every client it makes. ``aclose()``
    closes them all and the connections; it is idempotent and safe on a pool never used, and
    the pool stays usable: the next call makes new clients over fresh connections.

    Wherever a URL is accepted, the name of an agent of ``registry`` works too (what its
    entry's file says wins over the pool's options; what it leaves unsaid, a timeout say, is
    the pool's), and in fan-outs the name of a group. Without
    ``registry``, ``AgentRegistry.load()`` is read the first time a name is used.
    ``register_type`` registers a payload type with every client, those made later too.

    Its clients log to ``logger`` and trace when ``tracing`` (see ``A2AClient``).

    Its httpx client (unless one is given) keeps small connection pools per agent's origin
    (at most 4 connections each; an origin with more requests at once has more pools), so
    that starting or ending a request costs the same with thousands of agents and streams,
    on as many origins or behind one; ``max_connections`` caps the connections to each
    origin, over all its pools (None: no cap; the requests past the cap wait for one).

    A pool keeps what it learned: each agent's card, and the connections of streams that
    ended (their bodies read to the end). The first fan-out to an agent reads its card
    within the fan-out's deadline, twice the requests of a later one; with thousands of
    agents and a short deadline, keep the pool, or read the cards beforehand
    (``pool.client(url).get_card()`` for each).
    """

    def __init__(
        self,
        *,
        max_connections: int | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        verify: VerifyTypes = True,
        http_client: AsyncClient | None = None,
        registry: AgentRegistry | None = None,
        logger: logging.Logger | None = None,
        tracing: bool = False,
        **client_options: Unpack[AgentOptions],
    ) -> None:
        # Bad credentials and interceptors fail here, not at the first use of an agent.
        opts = client_options
        check_timeout(timeout)
        check_options(opts.get("auth"), opts.get("headers"), opts.get("cookies"))
        Interceptors(opts.get("interceptors", ()))
        if opts.get("network_policy") is not None:  # checked now, as a client would
            from a2a_anyio._network import guarded

            guarded(opts["network_policy"], http_client, ())
        self._tracing = tracing_for(tracing)  # without OpenTelemetry: ImportError now
        if verify is False:
            warn_unverified("the agents of this pool")
        self._given_client = http_client
        self._max_connections = max_connections
        self._verify = verify
        self._http: HttpTransport | None = None
        self._registry = registry
        # An agent's options and the pool's: every key is ClientOptions' (mypy cannot merge two
        # TypedDicts into a third).
        shared = {**client_options, "timeout": timeout, "logger": logger, "tracing": tracing}
        self._options = cast(ClientOptions, shared)
        self._clients: dict[str, A2AClient] = {}
        self._learned = LearnedWires()

    def _transport(self) -> HttpTransport:
        """The shared transport, made again after ``aclose()``."""
        if self._http is None:
            policy = self._options.get("network_policy")
            self._http = HttpTransport(
                self._given_client,
                verify=self._verify,
                max_connections=self._max_connections,
                network=policy.guard(()) if policy is not None else None,
            )
        return self._http

    @property
    def http_client(self) -> AsyncClient:
        """The shared httpx client (a new one after ``aclose()``, unless one was given)."""
        return self._transport().client

    @property
    def registry(self) -> AgentRegistry:
        """The registry names are looked up in (``AgentRegistry.load()`` unless one was given).

        Raises:
            AgentRegistryError: the registry file that ``AgentRegistry.load()`` reads is unusable.
        """
        if self._registry is None:
            self._registry = AgentRegistry.load()
        return self._registry

    def expand(self, targets: Sequence[Target]) -> list[Target]:
        """``targets`` with every registry group replaced by its agents' names.

        Raises:
            AgentRegistryError: a name that is neither a URL nor an agent or group of the registry.
        """
        out: list[Target] = []
        for target in targets:
            if isinstance(target, str) and not is_url(target):
                out.extend(entry.name for entry in self.registry.resolve(target))
            else:
                out.append(target)
        return out

    def register_type(self, key: str, decoder: Decoder) -> None:
        """``A2AClient.register_type`` on every client of the pool, now and later (each
        client keeps its own registry; ``types=`` among the pool's options fills them).

        Raises:
            ValueError: ``key`` is not a non-empty string.
            TypeError: ``decoder`` is not callable.
        """
        PayloadTypes().register(key, decoder)  # refused here, before any client has it
        self._options["types"] = {**(self._options.get("types") or {}), key: decoder}
        for client in self._clients.values():
            client.register_type(key, decoder)

    def client(self, url: str) -> A2AClient:
        """The client for ``url`` (or for the registry agent of that name), made on first use.

        Raises:
            AgentRegistryError: ``url`` is not a URL and names no agent of the registry, or names a group.
            ValueError: a malformed URL.
        """
        found = self._clients.get(url)
        if found is None or found.closed:  # a client its user closed is replaced
            found = self._clients[url] = self._make(url)
        return found

    def _make(self, url: str) -> A2AClient:
        client = self._new_client(url)
        client._discovery.wires.learned = (
            self._learned
        )  # what one client learns of a URL, all of them know
        return client

    def _new_client(self, url: str) -> A2AClient:
        if is_url(url):
            shared = self._options.copy()
            shared["http_client"] = self.http_client
            return A2AClient(url, **shared)
        registry = self.registry
        if url not in registry.names() and url in registry:
            raise AgentRegistryError(f"{url!r} is a group of agents: fan out to it instead")
        options: ClientArguments = {**self._options, **registry.entry(url).client_options()}
        # The shared pool was made with the pool's TLS settings; other ones need their own.
        if options.get("verify", self._verify) == self._verify:
            options["http_client"] = self.http_client
        return A2AClient(**options)

    async def send(
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
        """Send a user message (a text and/or a data part, a fresh message id) and return the
        result as a dict: the data part of the completed task's artifacts, else
        ``{"text": ...}``. ``headers`` go with its requests, as ``send_message``'s.

        A task that is still running when the agent answers is followed up as
        ``send_message`` does; ``timeout`` bounds the whole call (by default the pool's
        ``timeout``; None: no limit, each look at the task within the pool's timeout). A
        failed, rejected, canceled or interrupted task raises
        ``TaskFailedError`` carrying the status message; a completed task without artifacts
        raises ``A2AProtocolError``.

        Raises:
            TaskFailedError: the task failed, was rejected or canceled, or waits for input; it carries the
                agent's status message.
            A2AProtocolError: a completed task without artifacts.
            A2AClientError: any other failure, as ``A2AClient.send_message`` and ``wait``.
        """
        client = self.client(url)
        message = Message.user(text, data=data, context_id=context_id)
        result = await client.send_message(
            message, metadata=metadata, timeout=timeout, headers=headers
        )
        return _as_dict(result, url)

    async def as_tool(
        self,
        url: str,
        *,
        name: str | None = None,
        timeout: Timeout = CLIENT_TIMEOUT,
        on_progress: Callable[[AgentToolProgress], Any] | None = None,
    ) -> AgentTool:
        """``A2AClient.as_tool`` of the pool's client for ``url`` (or registry name).

        Raises:
            AgentRegistryError: as ``client``: ``url`` names no agent of the registry.
            ValueError: as ``A2AClient.as_tool``, or a malformed URL.
            A2AClientError: the card cannot be read, as ``A2AClient.get_card``.
        """
        client = self.client(url)
        return await client.as_tool(name=name, timeout=timeout, on_progress=on_progress)

    async def fan_out(
        self,
        targets: Sequence[Target],
        message: MessageInput,
        *,
        timeout: float | None = None,
        limit: int | None = None,
        first: int | None = None,
        cancel_on_exit: bool = True,
        **send_options: Unpack[FanOutOptions],
    ) -> list[AgentResult]:
        """``fan_out`` over this pool's clients.

        Raises:
            AgentRegistryError: a target names no URL, agent or group of the registry. Failures of the agents are in
                the results.
            ValueError: as ``fan_out``: a message that cannot be made into a ``Message``.
            TypeError: as ``fan_out``: an option of the send of the wrong type.
        """
        return await fan_out(
            targets, message, timeout=timeout, limit=limit, first=first, pool=self,
            cancel_on_exit=cancel_on_exit, **send_options,
        )  # fmt: skip

    def fan_out_stream(
        self,
        targets: Sequence[Target],
        message: MessageInput,
        *,
        timeout: float | None = None,
        stream_timeout: float | None = None,
        limit: int | None = None,
        fail_fast: bool = False,
        cancel_on_exit: bool = True,
        **stream_options: Unpack[FanOutStreamOptions],
    ) -> FanOutStream:
        """``fan_out_stream`` over this pool's clients.

        Raises:
            AgentRegistryError: (on entering it) a target names no URL, agent or group of the
                registry.
            ValueError: as ``fan_out_stream``: a message that cannot be made into a ``Message``.
            TypeError: as ``fan_out_stream``: an option of the stream of the wrong type.
        """
        return fan_out_stream(
            targets, message, timeout=timeout, stream_timeout=stream_timeout, limit=limit,
            fail_fast=fail_fast, pool=self, cancel_on_exit=cancel_on_exit, **stream_options,
        )  # fmt: skip

    async def aclose(self) -> None:
        """Close every client and the shared connections; clears the cache. Idempotent; the
        pool can be used again (new clients, fresh connections)."""
        clients, self._clients = list(self._clients.values()), {}
        http, self._http = self._http, None
        for client in clients:
            await client.close()
        if http is not None:
            await http.aclose()

    close = aclose

    async def __aenter__(self) -> AgentPool:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()


def _as_dict(result: Task | Message, url: str) -> dict[str, Any]:
    """The messenger's view of a result: its data part, else its text."""
    if isinstance(result, Message):
        parts = result.parts
    else:
        if result.status.state is not TaskState.COMPLETED:
            raise TaskFailedError(task=result, agent=url, operation="send")
        if not result.artifacts:
            raise A2AProtocolError(
                f"task {result.id} completed without artifacts", agent=url, operation="send"
            )
        parts = [p for a in result.artifacts for p in a.parts]
    for part in parts:
        if isinstance(part, DataPart):
            return part.data if isinstance(part.data, dict) else {"data": part.data}
    return {"text": "".join(p.text for p in parts if isinstance(p, TextPart))}


def _name(target: Target) -> str:
    if isinstance(target, A2AClient):
        return target.url or target.endpoint or repr(target)
    return target


async def _clients(
    targets: Sequence[Target] | str, pool: AgentPool | None, stack: AsyncExitStack
) -> list[tuple[str, A2AClient]]:
    """Each target's name and client; registry names are looked up, groups expanded."""
    if isinstance(targets, str):
        targets = [targets]
    if pool is None and any(isinstance(t, str) for t in targets):
        pool = await stack.enter_async_context(AgentPool())
    if pool is not None:
        targets = pool.expand(targets)
    out = []
    for target in targets:
        if isinstance(target, A2AClient):
            out.append((_name(target), target))
        else:
            assert pool is not None
            out.append((target, pool.client(target)))
    return out


async def fan_out(
    targets: Sequence[Target] | str,
    message: MessageInput,
    *,
    timeout: float | None = None,
    limit: int | None = None,
    first: int | None = None,
    pool: AgentPool | None = None,
    cancel_on_exit: bool = True,
    **send_options: Unpack[FanOutOptions],
) -> list[AgentResult]:
    """Send ``message`` to every target at once; one ``AgentResult`` per target, in order
    (a registry group counts as its agents; a single name or URL may be given alone).

    At most ``limit`` sends run at a time. ``first=k`` returns as soon as k agents answered
    and cancels the rest; ``timeout`` cancels the stragglers, and is each send's deadline
    too (the clients' ``timeout`` without it). A failing agent never stops the
    others, and no exception group escapes: each outcome is in its result.

    The tasks of the sends it abandons (cut by ``timeout``, ``first`` or the caller's own
    scope, or ended by a time limit) are cancelled on their agents, all at once, each within
    its client's ``cancel_grace`` (``cancel_on_exit=False``: left running); each result
    says what came of it (``task_id``, ``cancel_outcome``). The ``timeout`` holds for them
    too: the cancels go out, and their answers are awaited only until the ``timeout`` (cut
    at it: not at all). To know the tasks at once, each send is followed through its stream
    when the agent streams (an ``on_event`` of yours is called with every event too).

    Raises:
        AgentRegistryError: a target names no URL, agent or group of the registry.
        ValueError: ``first`` is below 1, a ``timeout`` that is not positive and finite, or a
            message that cannot be made into a ``Message``.
            Failures of the agents are not raised: each is the ``error`` of its ``AgentResult``.
        TypeError: an option of the send of the wrong type (as ``A2AClient.send_message``).
    """
    if first is not None and first < 1:
        raise ValueError("first must be at least 1")
    check_timeout(timeout)
    check_send(message, send_options)
    options: dict[str, Any] = dict(send_options)
    if timeout is not None:  # each send may take the fan-out's time, not the client's
        options["timeout"] = timeout
    async with AsyncExitStack() as stack:
        named = await _clients(targets, pool, stack)
        return await send_all(
            named, message, timeout=timeout, limit=limit, first=first,
            send_options=options, cancel_on_exit=cancel_on_exit,
        )  # fmt: skip


class FanOutStream(MergedStreams):
    """``fan_out_stream``: merged streams that also close the pool they made, if any."""

    def __init__(
        self,
        targets: Sequence[Target] | str,
        pool: AgentPool | None,
        message: MessageInput,
        stream_options: FanOutStreamOptions,
        *,
        timeout: float | None = None,
        stream_timeout: float | None = None,
        limit: int | None = None,
        fail_fast: bool = False,
        cancel_on_exit: bool = True,
    ) -> None:
        self._targets = [targets] if isinstance(targets, str) else list(targets)
        self._pool = pool
        self._message = message
        self._stream_options = stream_options
        self._stack = AsyncExitStack()
        super().__init__(
            {}, timeout=timeout, stream_timeout=stream_timeout, limit=limit,
            fail_fast=fail_fast, cancel_on_exit=cancel_on_exit,
        )  # fmt: skip

    async def __aenter__(self) -> FanOutStream:
        try:
            named = await _clients(self._targets, self._pool, self._stack)
        except BaseException:
            await self._stack.aclose()
            raise
        for name, client in named:
            if name in self.streams:  # the same agent twice: keep both streams apart
                name = f"{name}#{len(self.streams)}"
            self.streams[name] = client.stream_message(
                self._message, **self._stream_options, cancel_on_exit=self.cancel_on_exit
            )
        try:
            await super().__aenter__()
        except BaseException:
            await self._stack.aclose()
            raise
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> bool | None:
        try:
            return await super().__aexit__(exc_type, exc, tb)
        finally:
            await self._stack.aclose()


def fan_out_stream(
    targets: Sequence[Target] | str,
    message: MessageInput,
    *,
    timeout: float | None = None,
    stream_timeout: float | None = None,
    limit: int | None = None,
    fail_fast: bool = False,
    pool: AgentPool | None = None,
    cancel_on_exit: bool = True,
    **stream_options: Unpack[FanOutStreamOptions],
) -> FanOutStream:
    """Stream ``message`` to every target at once, merged: ``async with ... as merged``.

    The streams it cuts (``timeout``, ``stream_timeout``, ``fail_fast``) and those still
    running when the block is left have their tasks cancelled on their agents
    (``cancel_on_exit=False``: left running); each stream's ``cancel_outcome`` says what
    came of it.

    Raises:
        AgentRegistryError: (on entering it) a target names no URL, agent or group of the
            registry. With ``fail_fast=True`` the first stream's error is raised while reading;
            otherwise each failure is a ``StreamItem`` whose event is the error.
        ValueError: a message that cannot be made into a ``Message``, or a ``timeout`` or
            ``stream_timeout`` that is not positive and finite.
        TypeError: an option of the stream of the wrong type (as ``A2AClient.stream_message``).
    """
    check_timeout(timeout)
    check_timeout(stream_timeout, "stream_timeout")
    check_send(message, stream_options)
    return FanOutStream(
        targets, pool, message, stream_options, timeout=timeout, stream_timeout=stream_timeout,
        limit=limit, fail_fast=fail_fast, cancel_on_exit=cancel_on_exit,
    )  # fmt: skip
