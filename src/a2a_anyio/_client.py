"""A2AClient: every A2A operation against one agent, on asyncio and trio."""

from __future__ import annotations

import inspect
import itertools
import json
import time
import warnings
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, TypeVar
from urllib.parse import urlencode, urljoin, urlsplit

import anyio

from a2a_anyio._auth import AuthInput, MutualTLS, credentials
from a2a_anyio._card import AgentCardFetcher, card_urls
from a2a_anyio._deadline import Call, deadline
from a2a_anyio._dialects import Dialect, SendConfig, V03Dialect, V1Dialect, dialect_for
from a2a_anyio._dialects._jsonrpc import RequestId, decode_http, request
from a2a_anyio._dialects._values import retry_after as parse_retry_after
from a2a_anyio._dialects.card import PROTOCOLS, candidates, describe_security, parse_card
from a2a_anyio._dialects.rest import (
    RestMapping,
    decode_rest_http,
    rest_dialect,
    unwrap_rest_event,
)
from a2a_anyio._errors import (
    A2AAuthError,
    A2AClientError,
    A2AHTTPError,
    A2ARPCError,
    A2ATimeoutError,
    MethodNotFoundError,
    TaskNotFoundError,
    UnsupportedOperationError,
    VersionNotSupportedError,
)
from a2a_anyio._http import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT,
    AsyncClient,
    HttpTransport,
    VerifyTypes,
)
from a2a_anyio._http_sse import open_sse
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
from a2a_anyio._signing import CardVerifier
from a2a_anyio._stream import (
    DEFAULT_KEEP_EVENTS,
    MessageStream,
    Opener,
    StreamWire,
    jsonrpc_wire,
)

MessageInput = str | Mapping[str, Any] | Message
EventCallback = Callable[[StreamEvent], Any]
T = TypeVar("T")


class LearnedWires:
    """What worked for each URL after a fallback, as (binding, version): owned by a client,
    or shared by the clients of one pool."""

    def __init__(self) -> None:
        self._by_key: dict[str, tuple[str, str]] = {}

    def get(self, key: str) -> tuple[str, str] | None:
        """What worked for ``key``, if anything was learned."""
        return self._by_key.get(key)

    def learn(self, key: str, binding: str, version: str) -> None:
        """Remember that ``binding`` in ``version`` worked for ``key``."""
        self._by_key[key] = (binding, version)


@dataclass(slots=True)
class Target:
    """Where and how operations go: a URL, the payload dialect, and for HTTP+JSON the map
    from operations to paths."""

    url: str
    dialect: Dialect
    rest: RestMapping | None = None

    @property
    def binding(self) -> str:
        """ "jsonrpc" or "rest"."""
        return "jsonrpc" if self.rest is None else "rest"


async def _notify(callback: EventCallback, event: StreamEvent) -> None:
    outcome = callback(event)
    if inspect.isawaitable(outcome):
        await outcome


DEFAULT_IDLE_TIMEOUT = 300.0


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
    ``idle_timeout`` the longest gap allowed between stream events; ``keep_events`` how many
    of the latest events a stream keeps in ``stream.events`` (None: all).
    """

    def __init__(
        self,
        url: str | None = None,
        *,
        auth: AuthInput = None,
        headers: Mapping[str, str] | None = None,
        cookies: Mapping[str, str] | None = None,
        verify: VerifyTypes = True,
        timeout: float | None = DEFAULT_TIMEOUT,
        idle_timeout: float | None = DEFAULT_IDLE_TIMEOUT,
        card_ttl: float = 300.0,
        protocol: str = "auto",
        bindings: Sequence[str] = ("jsonrpc", "rest"),
        endpoint: str | None = None,
        tenant: str | None = None,
        extensions: Sequence[str] | None = None,
        card: AgentCard | Mapping[str, Any] | None = None,
        http_client: AsyncClient | None = None,
        retry: RetryPolicy | None = None,
        resume: bool = True,
        connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
        max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES,
        max_event_bytes: int = DEFAULT_MAX_EVENT_BYTES,
        trusted_origins: Sequence[str] = (),
        cross_origin: str = "strip",
        card_verifier: CardVerifier | None = None,
        keep_events: int | None = DEFAULT_KEEP_EVENTS,
    ) -> None:
        if url is None and endpoint is None:
            raise ValueError("A2AClient needs a url or an endpoint")
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
        self.bindings = tuple(bindings)
        unknown = [b for b in self.bindings if b.lower() not in ("jsonrpc", "rest")]
        if unknown or not self.bindings:
            raise ValueError(f"bindings are 'jsonrpc' and/or 'rest', not {unknown or '()'}")
        self.tenant = tenant
        self.extensions = tuple(extensions or ())
        self.url = check_url(url) if url is not None else None
        self.endpoint = check_url(endpoint, "endpoint") if endpoint is not None else None
        self.protocol = protocol
        self.timeout = timeout
        self.idle_timeout = idle_timeout
        self._header_cache: dict[tuple[str | None, bool], dict[str, str]] = {}
        if keep_events is not None and keep_events < 0:
            raise ValueError(f"keep_events must be None or >= 0, not {keep_events}")
        self.keep_events = keep_events
        self.retry = retry if retry is not None else RetryPolicy()
        self.resume = resume
        for origin in trusted_origins:
            check_url(origin, "a trusted origin")
        # Credentials are bound to the origins the user named: never to one a card or a
        # redirect names (a2a_anyio._auth; applied hop by hop in the I/O boundary).
        own = [u for u in (self.url, self.endpoint) if u]
        self._credentials = credentials(
            auth, headers, cookies, [*own, *trusted_origins], cross_origin
        )
        self._http = HttpTransport(
            http_client,
            verify=verify,
            timeout=timeout,
            connect_timeout=connect_timeout,
            max_response_bytes=max_response_bytes,
            max_event_bytes=max_event_bytes,
            client_cert=auth if isinstance(auth, MutualTLS) else None,
        )
        if verify is False:
            warnings.warn(
                f"TLS certificates are not verified for {self.url or self.endpoint}",
                UserWarning,
                stacklevel=2,
            )
        self._fetcher = AgentCardFetcher(
            self._http,
            self.url or self.endpoint or "",
            ttl=card_ttl,
            timeout=timeout,
            credentials=self._credentials,
            retry=self.retry,
            verifier=card_verifier,
        )
        self._card: AgentCard | None = (
            card if isinstance(card, AgentCard) else parse_card(dict(card)) if card else None
        )
        self._extended_card: AgentCard | None = None
        self._target: Target | None = None
        self._candidates: list[Target] = []
        self._resolve_lock = anyio.Lock()
        self._learned = LearnedWires()
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

    async def _resolve(self) -> Target:
        if self._target is not None:
            return self._target
        async with self._resolve_lock:
            if self._target is None:
                self._candidates = await self._find_candidates()
                learned = self._learned.get(self._key)
                self._target = next(
                    (t for t in self._candidates if (t.binding, t.dialect.version) == learned),
                    self._candidates[0],
                )
            return self._target

    async def _find_candidates(self) -> list[Target]:
        if self.endpoint is not None:
            # A bare JSON-RPC endpoint states no version: try them in order.
            # (0.2 speaks the methods of 0.3, so it is no separate guess.)
            versions = [v for v in ("1.0", "0.3", "legacy") if self.protocol in ("auto", v)]
            if self.protocol == "0.2":
                versions = ["0.2"]
            return [Target(self.endpoint, dialect_for(v, self.tenant)) for v in versions]
        card = self._card if self._card is not None else await self.get_card()
        base = self._fetcher.card_url or self.url or ""
        out = []
        for iface in candidates(card, self.protocol, self.bindings):
            url = check_url(urljoin(base, iface.url), "the card's interface url")
            tenant = self.tenant or iface.tenant
            version = iface.protocol_version or "0.3"
            if iface.binding == "HTTP+JSON":
                out.append(Target(url, rest_dialect(version), RestMapping(version, tenant)))
            else:
                out.append(Target(url, dialect_for(version, tenant)))
        return out

    @property
    def _key(self) -> str:
        return f"{self.url or self.endpoint}|{self.protocol}|{','.join(self.bindings)}"

    def _fall_back(self, target: Target, exc: A2AClientError) -> bool:
        """After an answer that says "wrong dialect", move to the next candidate (once each)."""
        wrong = isinstance(exc, (MethodNotFoundError, VersionNotSupportedError)) or (
            target.rest is not None
            and isinstance(exc, A2AHTTPError)
            and exc.status_code in (404, 405)
        )
        if not wrong or target not in self._candidates:
            return False
        index = self._candidates.index(target) + 1
        if index >= len(self._candidates):
            return False
        self._target = self._candidates[index]
        self._learned.learn(self._key, self._target.binding, self._target.dialect.version)
        return True

    async def get_extended_card(self) -> AgentCard:
        """The authenticated extended card (the credentials given to this client are sent)."""
        with deadline(self.timeout, agent=self.url or self.endpoint, method="extended_card"):
            target = await self._resolve()
        if target.dialect.version == "0.2" and target.rest is None:
            # v0.2 has no method for it: a plain GET beside the agent's endpoint.
            url = urljoin(self.url or target.url, "/agent/authenticatedExtendedCard")
            with deadline(self.timeout, agent=url, method="extended_card"):
                resp = await self._http.request("GET", url, credentials=self._credentials)
            card = target.dialect.decode_card(decode_rest_http(resp.status, resp.content))
        else:
            card = await self._op("extended_card", lambda d: None, lambda d, r: d.decode_card(r))
        self._extended_card = card
        return card

    # -- the wire -------------------------------------------------------------------------

    def _headers(
        self, url: str, dialect: Dialect | None, *, rest: bool = False
    ) -> Mapping[str, str]:
        """The headers of a call in ``dialect`` (shared between calls: read-only)."""
        key = (dialect.version if dialect is not None else None, rest)
        cached = self._header_cache.get(key)
        if cached is not None:
            return cached
        v1 = dialect is not None and dialect.version == "1.0"
        headers = {"Content-Type": "application/a2a+json" if rest and v1 else "application/json"}
        if dialect is not None:
            headers.update(dialect.headers())
        if self.extensions:
            uris = ",".join(self.extensions)
            headers["A2A-Extensions"] = uris
            if not v1:  # v0.3 servers read the older name
                headers["X-A2A-Extensions"] = uris
        self._header_cache[key] = headers
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
        call: Call,
    ) -> Any:
        call.agent, call.method = url, method
        req_id, body = self._body(method, params)
        headers = self._headers(url, dialect)
        version = dialect.version if dialect is not None else "1.0"

        async def attempt() -> Any:
            resp = await self._http.request(
                "POST",
                url,
                content=body,
                headers=headers,
                credentials=self._credentials,
            )
            return decode_http(
                resp.status,
                resp.content,
                req_id,
                version=version,
                task_id=task_id,
                retry_after=None if resp.status < 300 else resp.headers.get("retry-after"),
            )

        try:
            return await self.retry.run(
                attempt, operation=method, idempotent=idempotent, until=call.until
            )
        except A2AClientError as exc:
            self._annotate(exc, url, method)
            raise

    async def _op(
        self,
        op: str,
        build: Callable[[Dialect], Any],
        decode: Callable[[Dialect, Any], T],
        *,
        task_id: str | None = None,
    ) -> T:
        """Call operation ``op``: params built for, and the result decoded by, the dialect;
        all of it within the client's deadline."""
        self._check_open()
        with deadline(self.timeout, agent=self.url or self.endpoint, method=op) as call:
            return await self._run_op(op, build, decode, task_id, call)

    async def _run_op(
        self,
        op: str,
        build: Callable[[Dialect], Any],
        decode: Callable[[Dialect, Any], T],
        task_id: str | None,
        call: Call,
    ) -> T:
        target = self._target or await self._resolve()
        dialect = target.dialect
        if op not in dialect.methods:
            raise UnsupportedOperationError(f"{op} is not part of A2A v{dialect.version}")
        idempotent = op in IDEMPOTENT_OPS
        try:
            if target.rest is None:
                method = dialect.method(op)
                result = await self._post(
                    target.url,
                    dialect,
                    method,
                    build(dialect),
                    task_id,
                    idempotent=idempotent,
                    call=call,
                )
            else:
                result = await self._rest(target, op, build(dialect), idempotent, call)
        except A2AClientError as exc:
            if self._fall_back(target, exc):
                return await self._run_op(op, build, decode, task_id, call)
            raise
        try:
            return decode(dialect, result)
        except A2AClientError as exc:
            exc.agent, exc.method = exc.agent or target.url, exc.method or op
            raise

    async def _rest(
        self, target: Target, op: str, params: Any, idempotent: bool, call: Call
    ) -> Any:
        assert target.rest is not None
        req = target.rest.request(op, params)
        url = target.url.rstrip("/") + req.path + (f"?{urlencode(req.query)}" if req.query else "")
        call.agent, call.method = url, f"{req.method} {req.path}"
        body = json.dumps(req.body).encode() if req.body is not None else None
        headers = self._headers(url, target.dialect, rest=True)

        async def attempt() -> Any:
            resp = await self._http.request(
                req.method,
                url,
                content=body,
                headers=headers,
                credentials=self._credentials,
            )
            retry_after = parse_retry_after(resp.headers.get("retry-after"))
            return decode_rest_http(resp.status, resp.content, retry_after)

        try:
            return await self.retry.run(
                attempt, operation=op, idempotent=idempotent, until=call.until
            )
        except (A2ARPCError, A2AHTTPError) as exc:
            if req.alternative is None or isinstance(exc, (A2AAuthError, TaskNotFoundError)):
                self._annotate(exc, url, f"{req.method} {req.path}")
                raise
            body = json.dumps(req.alternative).encode()  # the other shape, once
            return await self.retry.run(
                attempt, operation=op, idempotent=idempotent, until=call.until
            )
        except A2AClientError as exc:
            self._annotate(exc, url, f"{req.method} {req.path}")
            raise

    def _annotate(self, exc: A2AClientError, url: str, method: str) -> None:
        """Say where an error happened; for 401/403, what the card asks for."""
        exc.agent = exc.agent or url
        exc.method = exc.method or method
        card = self._card
        if isinstance(exc, A2AAuthError) and card is not None and not exc.schemes:
            exc.schemes = describe_security(card)
            if exc.schemes:
                exc.message = f"{exc.message} (the agent asks for: {'; or '.join(exc.schemes)})"

    async def call(self, method: str, params: Any = None, *, idempotent: bool = False) -> Any:
        """Call any JSON-RPC method (an extension's, for example) and return its raw result.

        ``idempotent=True`` says the method may safely run twice, so the retry policy may
        repeat it after a server error as it does for reads.
        """
        self._check_open()
        with deadline(self.timeout, agent=self.url or self.endpoint, method=method) as call:
            target = await self._resolve()
            if target.rest is not None:  # any JSON-RPC interface the agent has will do
                rpc = [t for t in self._candidates if t.rest is None]
                if not rpc:
                    raise UnsupportedOperationError("call() needs a JSON-RPC interface")
                target = rpc[0]
            return await self._post(
                target.url, target.dialect, method, params, None, idempotent=idempotent, call=call
            )

    async def ping(self) -> float:
        """Round-trip time to the agent in milliseconds (any HTTP answer counts)."""
        self._check_open()
        url = self._fetcher.card_url or (card_urls(self.url)[0] if self.url else self.endpoint)
        assert url is not None
        start = time.perf_counter()
        with deadline(self.timeout, agent=url, method="ping"):
            await self._http.request(
                "GET", url, headers=self._headers(url, None), credentials=self._credentials
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
            blocking,
            history_length,
            accepted_output_modes,
            push_config,
            dict(metadata) if metadata else None,
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
        async def opener() -> StreamWire:
            self._check_open()
            target = await self._resolve()
            dialect = target.dialect
            if op not in dialect.methods:
                raise UnsupportedOperationError(f"{op} is not part of A2A v{dialect.version}")
            if target.rest is None:
                req_id, body = self._body(dialect.method(op), await params(dialect))
                headers = self._headers(target.url, dialect)
                conn = open_sse(
                    self._http,
                    "POST",
                    target.url,
                    content=body,
                    headers=headers,
                    credentials=self._credentials,
                )
                return jsonrpc_wire(conn, dialect, req_id)
            req = target.rest.request(op, await params(dialect))
            url = target.url.rstrip("/") + req.path
            content = json.dumps(req.body).encode() if req.body is not None else None
            headers = self._headers(url, dialect, rest=True)
            conn = open_sse(
                self._http,
                req.method,
                url,
                content=content,
                headers=headers,
                credentials=self._credentials,
                get_on_405=op == "subscribe",
            )
            return StreamWire(
                conn,
                dialect,
                unwrap_rest_event,
                lambda status, body, retry: decode_rest_http(
                    status, body, parse_retry_after(retry)
                ),
            )

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
            keep_events=self.keep_events,
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
