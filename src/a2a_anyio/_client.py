"""A2AClient: every A2A operation against one agent, on asyncio and trio."""

from __future__ import annotations

import inspect
import itertools
import json
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import replace
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import urljoin, urlsplit

import anyio

from a2a_anyio._card import AgentCardFetcher, card_urls
from a2a_anyio._dialects import Dialect, SendConfig, V03Dialect, V1Dialect, dialect_for
from a2a_anyio._dialects._jsonrpc import RequestId, decode_http, request
from a2a_anyio._dialects.card import parse_card, select_interface
from a2a_anyio._errors import (
    A2AClientError,
    A2ATimeoutError,
    MethodNotFoundError,
    UnsupportedOperationError,
)
from a2a_anyio._http import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT,
    AsyncClient,
    HttpTransport,
    SSEConnection,
    VerifyTypes,
)
from a2a_anyio._model import (
    AgentCapabilities,
    AgentCard,
    JSONDict,
    Message,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskPage,
    TaskState,
)
from a2a_anyio._retry import IDEMPOTENT_OPS, RetryPolicy
from a2a_anyio._stream import MessageStream, Opener

MessageInput = str | Mapping[str, Any] | Message
EventCallback = Callable[[StreamEvent], Any]
T = TypeVar("T")


async def _notify(callback: EventCallback, event: StreamEvent) -> None:
    outcome = callback(event)
    if inspect.isawaitable(outcome):
        await outcome


DEFAULT_IDLE_TIMEOUT = 300.0


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urlsplit(url)
    port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), port


def check_url(url: str, what: str = "url") -> str:
    """``url`` if it is an absolute http(s) URL, else ValueError."""
    if not isinstance(url, str):
        raise ValueError(f"{what} must be a string, not {type(url).__name__}")
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{what} must be an absolute http(s) URL, not {url!r}")
    try:
        _ = parts.port
    except ValueError as exc:
        raise ValueError(f"{what} has an invalid port: {url!r}") from exc
    return url


def coerce_message(message: MessageInput) -> Message:
    """A Message from a str, a dict in any dialect's shape, or a Message."""
    if isinstance(message, Message):
        return message
    if isinstance(message, str):
        return Message.user(message)
    if isinstance(message, Mapping):
        d = dict(message)
        d.setdefault("role", "user")
        parts = d.get("parts") or []
        pre_v1 = d.get("kind") == "message" or d.get("role") in ("user", "agent")
        pre_v1 = pre_v1 or any(isinstance(p, dict) and ("kind" in p or "type" in p) for p in parts)
        decoded = (V03Dialect() if pre_v1 else V1Dialect()).decode_message(d)
        if not decoded.message_id:
            decoded = replace(decoded, message_id=Message.user("x").message_id)
        if not decoded.parts:
            raise ValueError("a message needs at least one part")
        return decoded
    raise ValueError(f"message must be a str, a dict or a Message, not {type(message).__name__}")


class A2AClient:
    """A client for one A2A agent.

    ``url`` is the agent's base URL (its card is looked up under ``/.well-known/``) or the URL
    of its card. ``endpoint`` instead names a JSON-RPC URL directly and skips discovery.
    ``auth`` is the whole ``Authorization`` value; it, ``cookies`` and the ``headers`` are sent
    only to the origin of ``url`` / ``endpoint``. ``timeout`` is the deadline of a unary call;
    ``idle_timeout`` the longest gap allowed between stream events.
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        auth: str | None = None,
        headers: Mapping[str, str] | None = None,
        cookies: Mapping[str, str] | None = None,
        verify: VerifyTypes = True,
        timeout: float | None = DEFAULT_TIMEOUT,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        card_ttl: float = 300.0,
        protocol: str = "auto",
        endpoint: str | None = None,
        card: AgentCard | Mapping[str, Any] | None = None,
        http_client: AsyncClient | None = None,
        retry: RetryPolicy | None = None,
        resume: bool = True,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
    ) -> None:
        if url is None and endpoint is None:
            raise ValueError("A2AClient needs a url or an endpoint")
        if protocol not in ("auto", "1.0", "0.3"):
            raise ValueError(f"protocol must be 'auto', '1.0' or '0.3', not {protocol!r}")
        self.url = check_url(url) if url is not None else None
        self.endpoint = check_url(endpoint, "endpoint") if endpoint is not None else None
        self.protocol = protocol
        self.timeout = timeout
        self.idle_timeout = idle_timeout
        self.retry = retry if retry is not None else RetryPolicy()
        self.resume = resume
        self._http = HttpTransport(
            http_client,
            verify=verify,
            timeout=timeout,
            connect_timeout=connect_timeout,
            max_response_bytes=max_response_bytes,
            max_event_bytes=max_event_bytes,
        )
        self._origins = {_origin(u) for u in (self.url, self.endpoint) if u}
        self._secret_headers: dict[str, str] = dict(headers or {})
        if auth is not None:
            self._secret_headers["Authorization"] = auth
        if cookies:
            self._secret_headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in cookies.items())
        # The card lives on the user's own origin, so it may need their credentials.
        self._fetcher = AgentCardFetcher(
            self._http,
            self.url or self.endpoint or "",
            ttl=card_ttl,
            timeout=timeout,
            headers=self._secret_headers,
            retry=self.retry,
        )
        self._card: AgentCard | None = (
            card if isinstance(card, AgentCard) else parse_card(dict(card)) if card else None
        )
        self._extended_card: AgentCard | None = None
        self._target: tuple[str, Dialect] | None = None
        self._resolve_lock = anyio.Lock()
        self._ids = itertools.count(1)
        self._closed = False

    # -- lifecycle ------------------------------------------------------------------------

    async def __aenter__(self) -> A2AClient:
        self._check_open()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.close()

    async def close(self) -> None:
        """Close the HTTP client this client owns; idempotent."""
        if self._closed:
            return
        self._closed = True
        await self._http.aclose()

    aclose = close

    @property
    def closed(self) -> bool:
        """True once ``close()`` was called."""
        return self._closed

    def _check_open(self) -> None:
        if self._closed:
            raise RuntimeError("this A2AClient is closed")

    def __repr__(self) -> str:
        target = self.url or self.endpoint
        return (
            f"<A2AClient {target!r} protocol={self.protocol!r}{' closed' if self._closed else ''}>"
        )

    # -- discovery ------------------------------------------------------------------------

    async def get_card(self, *, refresh: bool = False) -> AgentCard:
        """The agent's public card (cached for ``card_ttl`` seconds, single-flight)."""
        self._check_open()
        if self.url is None:
            if self._card is None:
                raise ValueError("this client was made with endpoint= and no url: it has no card")
            return self._card
        try:
            card = await self._fetcher.fetch(force=refresh)
        except A2AClientError as exc:
            exc.agent = exc.agent or self.url
            raise
        self._card = card
        return card

    discover = get_card

    @property
    def agent_card(self) -> Awaitable[AgentCard]:
        """``await client.agent_card``: the same as ``await client.get_card()``."""
        return self.get_card()

    @property
    def capabilities(self) -> Awaitable[AgentCapabilities]:
        """``await client.capabilities``: the card's capabilities."""

        async def caps() -> AgentCapabilities:
            return (await self.get_card()).capabilities

        return caps()

    async def _resolve(self) -> tuple[str, Dialect]:
        if self._target is not None:
            return self._target
        async with self._resolve_lock:
            if self._target is None:
                if self.endpoint is not None:
                    version = "0.3" if self.protocol == "0.3" else "1.0"
                    self._target = (self.endpoint, dialect_for(version))
                else:
                    card = self._card if self._card is not None else await self.get_card()
                    iface = select_interface(card, self.protocol)
                    base = self._fetcher.card_url or self.url or ""
                    url = check_url(urljoin(base, iface.url), "the card's interface url")
                    self._target = (url, dialect_for(iface.protocol_version, iface.tenant))
            return self._target

    async def get_extended_card(self) -> AgentCard:
        """The authenticated extended card (the credentials given to this client are sent)."""
        card = await self._op("extended_card", lambda d: None, lambda d, r: d.decode_card(r))
        self._extended_card = card
        return card

    # -- the wire -------------------------------------------------------------------------

    def _headers(self, url: str, dialect: Dialect | None) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        if dialect is not None:
            headers.update(dialect.headers())
        if _origin(url) in self._origins:
            headers.update(self._secret_headers)
        return headers

    def _body(self, method: str, params: Any) -> tuple[RequestId, bytes]:
        req_id = next(self._ids)
        return req_id, json.dumps(request(method, params, req_id)).encode()

    async def _post(
        self,
        url: str,
        dialect: Dialect | None,
        method: str,
        params: Any,
        task_id: str | None,
        *,
        idempotent: bool = False,
    ) -> Any:
        req_id, body = self._body(method, params)
        headers = self._headers(url, dialect)
        version = dialect.version if dialect is not None else "1.0"

        async def attempt() -> Any:
            resp = await self._http.request(
                "POST", url, content=body, headers=headers, deadline=self.timeout
            )
            return decode_http(
                resp.status,
                resp.content,
                req_id,
                version=version,
                task_id=task_id,
                retry_after=resp.headers.get("retry-after"),
            )

        try:
            return await self.retry.run(attempt, operation=method, idempotent=idempotent)
        except A2AClientError as exc:
            exc.agent = exc.agent or url
            exc.method = exc.method or method
            raise

    async def _op(
        self,
        op: str,
        build: Callable[[Dialect], Any],
        decode: Callable[[Dialect, Any], T],
        *,
        task_id: str | None = None,
    ) -> T:
        """Call operation ``op``: params built for, and the result decoded by, the dialect."""
        self._check_open()
        url, dialect = await self._resolve()
        if op not in dialect.methods:
            raise UnsupportedOperationError(f"{op} is not part of A2A v{dialect.version}")
        try:
            result = await self._post(
                url, dialect, dialect.method(op), build(dialect), task_id,
                idempotent=op in IDEMPOTENT_OPS,
            )  # fmt: skip
        except MethodNotFoundError:
            # A bare endpoint's version is a guess: -32601 on a v1.0 method means v0.3.
            if self.endpoint is None or self.protocol != "auto" or dialect.version != "1.0":
                raise
            self._target = (url, V03Dialect())
            return await self._op(op, build, decode, task_id=task_id)
        try:
            return decode(dialect, result)
        except A2AClientError as exc:
            exc.agent, exc.method = exc.agent or url, exc.method or dialect.method(op)
            raise

    async def call(self, method: str, params: Any = None) -> Any:
        """Call any JSON-RPC method (an extension's, for example) and return its raw result."""
        self._check_open()
        url, dialect = await self._resolve()
        return await self._post(url, dialect, method, params, None)

    async def ping(self) -> float:
        """Round-trip time to the agent in milliseconds (any HTTP answer counts)."""
        self._check_open()
        url = self._fetcher.card_url or (card_urls(self.url)[0] if self.url else self.endpoint)
        assert url is not None
        start = time.perf_counter()
        await self._http.request(
            "GET", url, headers=self._headers(url, None), deadline=self.timeout
        )
        return (time.perf_counter() - start) * 1000.0

    # -- operations -----------------------------------------------------------------------

    async def send_message(
        self,
        message: MessageInput,
        *,
        metadata: Mapping[str, Any] | None = None,
        context_id: str | None = None,
        task_id: str | None = None,
        blocking: bool = True,
        history_length: int | None = None,
        accepted_output_modes: list[str] | None = None,
        push_config: PushNotificationConfig | None = None,
        on_event: EventCallback | None = None,
    ) -> Task | Message:
        """Send a message; returns the Task it created or continued, or the agent's Message.

        ``blocking=True`` waits until the task is terminal or interrupted; ``False`` returns as
        soon as the agent accepted it (then ``wait()``, ``get_task`` or ``subscribe``).
        ``on_event`` (sync or async) is called with every event before the result is returned:
        the message is then streamed when the agent can stream (and ``blocking`` is true), else
        sent, and the result is the one event.
        """
        msg, config = self._prepare(
            message, metadata, context_id, task_id, blocking, history_length,
            accepted_output_modes, push_config,
        )  # fmt: skip
        if on_event is not None and blocking and await self._can_stream():
            async with self.stream_message(
                msg, metadata=metadata, history_length=history_length,
                accepted_output_modes=accepted_output_modes, push_config=push_config,
            ) as stream:  # fmt: skip
                async for event in stream:
                    await _notify(on_event, event)
                return await stream.result()
        result = await self._op(
            "send", lambda d: d.send_params(msg, config), lambda d, r: d.decode_send_result(r)
        )
        if on_event is not None:
            await _notify(on_event, result)
        return result

    async def _can_stream(self) -> bool:
        if self.url is None and self._card is None:
            return True  # a bare endpoint declares nothing: try
        card = self._card if self._card is not None else await self.get_card()
        return card.capabilities.streaming

    async def wait(
        self,
        task_id: str,
        *,
        timeout: float | None = None,
        poll_interval: float = 0.2,
        max_interval: float = 2.0,
    ) -> Task:
        """Poll ``get_task`` until the task is terminal or interrupted; return it.

        The interval grows by half each poll from ``poll_interval`` up to ``max_interval``;
        ``timeout`` raises ``A2ATimeoutError(timeout="deadline")``.
        """
        interval = poll_interval
        with anyio.move_on_after(timeout) as scope:
            while True:
                task = await self.get_task(task_id)
                if task.status.state.is_final:
                    return task
                await anyio.sleep(interval)
                interval = min(interval * 1.5, max_interval)
        assert scope.cancelled_caught
        raise A2ATimeoutError(
            f"task {task_id} did not finish within {timeout}s",
            timeout="deadline",
            agent=self.url or self.endpoint,
            method="wait",
        )

    def _prepare(
        self,
        message: MessageInput,
        metadata: Mapping[str, Any] | None,
        context_id: str | None,
        task_id: str | None,
        blocking: bool,
        history_length: int | None,
        accepted_output_modes: list[str] | None,
        push_config: PushNotificationConfig | None,
    ) -> tuple[Message, SendConfig]:
        msg = coerce_message(message)
        if context_id is not None or task_id is not None:
            msg = replace(
                msg,
                context_id=context_id if context_id is not None else msg.context_id,
                task_id=task_id if task_id is not None else msg.task_id,
            )
        config = SendConfig(
            blocking=blocking,
            history_length=history_length,
            accepted_output_modes=accepted_output_modes,
            push_config=push_config,
            metadata=dict(metadata) if metadata else None,
        )
        return msg, config

    def stream_message(
        self,
        message: MessageInput,
        *,
        metadata: Mapping[str, Any] | None = None,
        context_id: str | None = None,
        task_id: str | None = None,
        history_length: int | None = None,
        accepted_output_modes: list[str] | None = None,
        push_config: PushNotificationConfig | None = None,
        idle_timeout: float | None = None,
        total_timeout: float | None = None,
        resume: bool | None = None,
    ) -> MessageStream:
        """Send a message and stream the task's events (``async with ... as stream``).

        ``idle_timeout`` and ``resume`` default to the client's; ``total_timeout`` bounds the
        whole stream.
        """
        self._check_open()
        msg, config = self._prepare(
            message, metadata, context_id, task_id, True, history_length,
            accepted_output_modes, push_config,
        )  # fmt: skip

        async def params(dialect: Dialect) -> JSONDict:
            return dialect.send_params(msg, config)

        return self._stream("stream", params, idle_timeout, total_timeout, resume)

    def subscribe(
        self,
        task_id: str,
        *,
        idle_timeout: float | None = None,
        total_timeout: float | None = None,
        resume: bool | None = None,
    ) -> MessageStream:
        """Re-attach to a running task's event stream (SubscribeToTask / tasks/resubscribe)."""
        self._check_open()

        async def params(dialect: Dialect) -> JSONDict:
            return dialect.subscribe_params(task_id)

        return self._stream("subscribe", params, idle_timeout, total_timeout, resume)

    def _opener(self, op: str, params: Callable[[Dialect], Awaitable[JSONDict]]) -> Opener:
        async def opener() -> tuple[SSEConnection, Dialect, RequestId]:
            self._check_open()
            url, dialect = await self._resolve()
            if op not in dialect.methods:
                raise UnsupportedOperationError(f"{op} is not part of A2A v{dialect.version}")
            req_id, body = self._body(dialect.method(op), await params(dialect))
            conn = self._http.open_sse(
                "POST", url, content=body, headers=self._headers(url, dialect)
            )
            return conn, dialect, req_id

        return opener

    def _resubscriber(self, task_id: str) -> Opener:
        async def params(dialect: Dialect) -> JSONDict:
            return dialect.subscribe_params(task_id)

        return self._opener("subscribe", params)

    async def _poll_final(self, task_id: str) -> Task:
        return await self.wait(task_id)

    def _stream(
        self,
        op: str,
        params: Callable[[Dialect], Awaitable[JSONDict]],
        idle_timeout: float | None,
        total_timeout: float | None,
        resume: bool | None,
    ) -> MessageStream:
        resume = self.resume if resume is None else resume
        return MessageStream(
            self._opener(op, params),
            idle_timeout=idle_timeout if idle_timeout is not None else self.idle_timeout,
            total_timeout=total_timeout,
            agent=self.url or self.endpoint,
            method=op,
            retry=self.retry,
            idempotent=op in IDEMPOTENT_OPS,
            resubscribe=self._resubscriber if resume else None,
            poll=self._poll_final if resume else None,
        )

    async def get_task(self, task_id: str, *, history_length: int | None = None) -> Task:
        """The task's current state."""
        return await self._op(
            "get",
            lambda d: d.task_params(task_id, history_length),
            lambda d, r: d.decode_task(r),
            task_id=task_id,
        )

    async def list_tasks(
        self,
        context_id: str | None = None,
        limit: int | None = 50,
        cursor: str | None = None,
        *,
        status: TaskState | None = None,
        history_length: int | None = None,
        include_artifacts: bool = False,
    ) -> TaskPage:
        """One page of tasks, most recently updated first (v1.0 agents only)."""
        return await self._op(
            "list",
            lambda d: d.list_tasks_params(
                context_id,
                limit,
                cursor,
                status=status,
                history_length=history_length,
                include_artifacts=include_artifacts,
            ),
            lambda d, r: d.decode_task_page(r),
        )

    async def cancel_task(self, task_id: str, *, metadata: Mapping[str, Any] | None = None) -> Task:
        """Ask the agent to cancel the task; returns the task as the agent then reports it."""
        meta = dict(metadata) if metadata else None
        return await self._op(
            "cancel",
            lambda d: d.cancel_params(task_id, meta),
            lambda d, r: d.decode_task(r),
            task_id=task_id,
        )

    async def create_push_config(
        self,
        task_id: str,
        url: str,
        *,
        token: str | None = None,
        config_id: str | None = None,
        auth_scheme: str | None = None,
        auth_credentials: str | None = None,
    ) -> PushNotificationConfig:
        """Ask the agent to post the task's updates to ``url``."""
        config = PushNotificationConfig(
            url=check_url(url),
            task_id=task_id,
            id=config_id,
            token=token,
            auth_scheme=auth_scheme,
            auth_credentials=auth_credentials,
        )
        return await self._op(
            "push_create",
            lambda d: d.push_create_params(config),
            lambda d, r: d.decode_push_config(r),
            task_id=task_id,
        )

    async def get_push_config(
        self, task_id: str, config_id: str | None = None
    ) -> PushNotificationConfig:
        """One push config of the task."""
        return await self._op(
            "push_get",
            lambda d: d.push_get_params(task_id, config_id),
            lambda d, r: d.decode_push_config(r),
            task_id=task_id,
        )

    async def list_push_configs(self, task_id: str) -> list[PushNotificationConfig]:
        """Every push config of the task."""
        return await self._op(
            "push_list",
            lambda d: d.push_list_params(task_id),
            lambda d, r: d.decode_push_configs(r),
            task_id=task_id,
        )

    async def delete_push_config(self, task_id: str, config_id: str) -> None:
        """Remove one push config of the task."""
        await self._op(
            "push_delete",
            lambda d: d.push_delete_params(task_id, config_id),
            lambda d, r: None,
            task_id=task_id,
        )
