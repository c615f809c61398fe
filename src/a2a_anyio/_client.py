"""A2AClient: every A2A operation against one agent, on asyncio and trio.

Each operation runs one line: resolve the wire codec, ``codec.encode(op, args)``, send through
the HTTP layer, ``codec.decode(...)``; all of it inside the call's one deadline.
"""

from __future__ import annotations

import functools
import logging
import math
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from contextlib import AbstractContextManager as ContextManager
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, overload

from a2a_anyio._abandon import DEFAULT_CANCEL_GRACE, CancelGuard, CancelPolicy
from a2a_anyio._auth import (
    AuthInput,
    Credentials,
    MutualTLS,
    call_credentials,
    credentials,
    request_headers,
)
from a2a_anyio._bindings import WireCodec, WireRequest
from a2a_anyio._card import card_urls
from a2a_anyio._deadline import (
    CLIENT_TIMEOUT,
    Timeout,
    check_timeout,
    deadline,
    resolve_timeout,
    stream_limits_named,
)
from a2a_anyio._deadline import Call as CallInProgress
from a2a_anyio._dialects import (
    Call,
    Cancel,
    ListTasks,
    Op,
    OpArgs,
    PushCreate,
    PushRef,
    Send,
    TaskRef,
)
from a2a_anyio._dialects.card import BINDING_NAMES, PROTOCOLS, parse_card
from a2a_anyio._discovery import Discovery
from a2a_anyio._errors import (
    A2AAuthError,
    A2AClientError,
    A2AHTTPError,
    A2AProtocolError,
    UnsupportedOperationError,
)
from a2a_anyio._exchange import Exchange
from a2a_anyio._follower import DEFAULT_KEEP_EVENTS
from a2a_anyio._http import (
    DEFAULT_CONNECT_TIMEOUT,
    DEFAULT_MAX_EVENT_BYTES,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT,
    AsyncClient,
    HttpTransport,
    RawResponse,
    VerifyTypes,
    check_url,
    url_problem,
    warn_unverified,
)
from a2a_anyio._intercept import (
    EventHook,
    Interception,
    Interceptor,
    Interceptors,
    Sending,
    applied,
    call_hook,
    no_event,
    with_headers,
)
from a2a_anyio._model import (
    AgentCapabilities,
    AgentCard,
    Message,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskPage,
    TaskState,
)
from a2a_anyio._no_context import NO_CONTEXT
from a2a_anyio._observe import Span
from a2a_anyio._options import (
    DEFAULT_IDLE_TIMEOUT,
    EventCallback,
    stream_defaults,
)
from a2a_anyio._payloads import Decoder, PayloadTypes
from a2a_anyio._prepare import MessageInput, coerce_message, prepare_send
from a2a_anyio._reporting import observer
from a2a_anyio._retry import RetryPolicy
from a2a_anyio._stream import MessageStream, StreamLimits, StreamSource, StreamWire
from a2a_anyio._transport import Carriers, TransportOptions

if TYPE_CHECKING:
    from a2a_anyio._conversation import Conversation
    from a2a_anyio._network import NetworkPolicy
    from a2a_anyio._signing import CardVerifier
    from a2a_anyio._tool import AgentTool, AgentToolProgress
    from a2a_anyio._wires import Wires


T = TypeVar("T")

#: The guard of a call without ``cancel_on_exit``: none.
_UNGUARDED: AbstractAsyncContextManager[None] = NO_CONTEXT


class A2AClient:
    """A client for one A2A agent.

    ``url`` is the agent's base URL (its card is looked up under ``/.well-known/``) or the URL
    of its card. ``endpoint`` instead names a JSON-RPC URL directly and skips discovery.
    ``auth`` is the whole ``Authorization`` value; it, ``cookies`` and the ``headers`` are sent
    only to the origin of ``url`` / ``endpoint``. ``timeout`` is the deadline of a unary call;
    ``idle_timeout`` the longest gap allowed between stream events; ``keep_events`` how many
    of the latest events a stream keeps in ``stream.events`` (None: all).
    ``max_response_bytes`` bounds a response and a stream's folded task and kept events;
    ``max_event_bytes`` one event. Both count decoded bytes.
    ``logger`` (default ``logging.getLogger("a2a_anyio")``) gets each request and its answer
    at DEBUG (secrets left out), retries and stream resumes at INFO. ``tracing=True`` makes
    every operation an OpenTelemetry span and sends its ``traceparent`` to the agent, and
    measures durations, stream events, retries, resumes and cancels (OpenTelemetry metrics;
    the ``otel`` extra; an ``ImportError`` without it). ``types`` maps media types and method
    names to the user's types for extension payloads (see ``register_type``).
    ``cancel_on_exit`` is the default of the per-call option of ``send_message``,
    ``stream_message``, ``subscribe`` and ``wait``: a call its caller abandons (its cancel
    scope, a time limit, Ctrl-C; a stream left before its end) cancels its task on the agent,
    best effort, within ``cancel_grace`` seconds (the time limit of that cancel).

    Every unary operation takes ``timeout=``: its deadline, replacing the client's for that
    call (None: no limit); a stream's is ``total_timeout``. Every operation takes
    ``headers=``: headers for that call's requests (a stream's re-attaches and polls too),
    set over the client's own (``headers``, ``cookies``, ``auth`` and what its scheme adds)
    and bound to the same origins; ``request_headers`` sets them for every call begun in a
    block. Both refuse, with ``ValueError``, a header a request cannot carry and those the
    protocol sets (``Content-Type``, ``Accept``, ``A2A-Version``...).

    Every operation raises an ``A2AClientError`` when it fails: ``A2AConnectionError`` (the
    connection), ``A2ATimeoutError`` (a time limit), ``A2AHTTPError`` and ``A2AAuthError`` (an
    HTTP status), ``A2AProtocolError`` (a bad answer), ``A2ADiscoveryError`` (the card) or an
    ``A2ARPCError`` subclass (the agent's own error); each method names the ones it adds.
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
        bindings: Sequence[str] = BINDING_NAMES,
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
        logger: logging.Logger | None = None,
        tracing: bool = False,
        types: Mapping[str, Decoder] | None = None,
        interceptors: Sequence[Interceptor | object] = (),
        cancel_on_exit: bool = False,
        cancel_grace: float = DEFAULT_CANCEL_GRACE,
        network_policy: NetworkPolicy | None = None,
    ) -> None:
        if url is None and endpoint is None:
            raise ValueError("A2AClient needs a url or an endpoint")
        if protocol not in PROTOCOLS:
            raise ValueError(f"protocol must be one of {', '.join(PROTOCOLS)}, not {protocol!r}")
        self.bindings = tuple(bindings)
        unknown = [b for b in self.bindings if b.lower() not in BINDING_NAMES]
        if unknown or not self.bindings:
            raise ValueError(f"bindings are 'jsonrpc', 'rest' and/or 'grpc', not {unknown or '()'}")
        self.tenant = tenant
        self.extensions = tuple(extensions or ())
        self.url = check_url(url) if url is not None else None
        self.endpoint = check_url(endpoint, "endpoint") if endpoint is not None else None
        self.protocol = protocol
        self.timeout = check_timeout(timeout)
        check_timeout(connect_timeout, "connect_timeout")
        self._streams = stream_defaults(idle_timeout, keep_events, resume)
        self._cancels = CancelPolicy(cancel_on_exit, cancel_grace)
        self.retry = retry if retry is not None else RetryPolicy()
        for origin in trusted_origins:
            check_url(origin, "a trusted origin")
        # Credentials are bound to the origins the user named: never to one a card or a
        # redirect names (a2a_anyio._auth; applied hop by hop in the I/O boundary).
        own = [u for u in (self.url, self.endpoint) if u]
        self._credentials = credentials(
            auth, headers, cookies, [*own, *trusted_origins], cross_origin
        )
        self._observer = observer(logger, tracing)
        network = None
        if network_policy is not None:
            from a2a_anyio._network import guarded

            network = guarded(network_policy, http_client, [*own, *trusted_origins])
        self._http = HttpTransport(
            http_client,
            verify=verify,
            connect_timeout=connect_timeout,
            max_response_bytes=max_response_bytes,
            max_event_bytes=max_event_bytes,
            client_cert=auth if isinstance(auth, MutualTLS) else None,
            observer=self._observer,
            network=network,
        )
        if verify is False:
            warn_unverified(self.url or self.endpoint or "")
        self._types = PayloadTypes(types)
        self._interceptors = Interceptors(interceptors)
        options = TransportOptions(
            verify, auth if isinstance(auth, MutualTLS) else None, connect_timeout
        )
        self._carriers = Carriers(self._http, options)
        parsed = card if isinstance(card, AgentCard) else parse_card(dict(card)) if card else None
        self._discovery = Discovery(
            self._http, self.url, self.endpoint, protocol=protocol, bindings=self.bindings,
            tenant=tenant, extensions=self.extensions, card=parsed, card_ttl=card_ttl,
            timeout=timeout, credentials=self._credentials, retry=self.retry,
            verifier=card_verifier, tracing=self._observer.tracing, intercepted=self._intercepted,
        )  # fmt: skip
        self._exchange = Exchange(self._carriers, self._discovery.schemes, self._types)
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
        try:
            await self._carriers.aclose()
        finally:
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

    async def get_card(
        self,
        *,
        refresh: bool = False,
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> AgentCard:
        """The agent's public card (cached for ``card_ttl`` seconds, single-flight), fetched
        within ``timeout`` (by default the client's; None: no limit), ``headers`` going with
        the request when one is made.

        Raises:
            A2ADiscoveryError: no card at the URL, an answer that is not a card, or a signed card the
                ``card_verifier`` refuses.
            A2AConnectionError: the agent cannot be reached (``A2ATimeoutError``: not within ``timeout``).
            TypeError: an interceptor answered with something that is not an ``AgentCard``.
            RuntimeError: the client is closed.
        """
        self._check_open()
        creds = self._credentials_for(headers)
        if self.url is None:
            if self._discovery.card is None:
                raise ValueError("this client was made with endpoint= and no url: it has no card")
            return self._discovery.card
        if timeout is not CLIENT_TIMEOUT:
            check_timeout(timeout)
        return await self._discovery.fetch(refresh, resolve_timeout(timeout, self.timeout), creds)

    async def authenticate(self) -> None:
        """Get the credentials now rather than at the first call: read the card (``CardAuth``
        chooses by it), then let the auth scheme get its token (an OAuth 2.0 sign-in asks the
        user here). No deadline of the client's bounds it: a sign-in waits for the user
        (the flow's own limits, or a cancel scope of yours, do).

        Raises:
            A2AAuthError: the credentials cannot be had (the card asks for others, the
                authorization server refused).
            A2AClientError: the card cannot be read, or a token endpoint misbehaved.
            RuntimeError: the client is closed.
        """
        self._check_open()
        if self._credentials.auth is None:
            return
        if self.url is not None:
            await self.get_card(timeout=None)
        url = self.url or self.endpoint or ""
        await self._http.with_credentials(url, {}, self._credentials, {})

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

    async def get_extended_card(
        self, *, timeout: Timeout = CLIENT_TIMEOUT, headers: Mapping[str, str] | None = None
    ) -> AgentCard:
        """The authenticated extended card (the credentials given to this client are sent).

        Raises:
            ExtendedCardNotConfiguredError: the agent has no extended card: its card announces
                none (then nothing is asked), or the agent says so
                (``UnsupportedOperationError`` from agents that do not know the operation).
            A2AAuthError: the agent refused the credentials.
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        creds = self._credentials_for(headers)
        card: AgentCard = await self._op(Op.EXTENDED_CARD, None, creds, timeout=timeout)
        return card

    # -- the wire -------------------------------------------------------------------------

    def _deadline(
        self,
        operation: str,
        timeout: Timeout = CLIENT_TIMEOUT,
        *,
        method: str | None = None,
        within: CallInProgress | None = None,
    ) -> ContextManager[CallInProgress]:
        """The one deadline of a call: ``timeout`` (by default the client's; None: no
        limit). A part of the call ``within`` (a look at its task) has by default the limit
        ``_part_limit`` gives it, and always the call's deadline too."""
        self._check_open()
        if timeout is not CLIENT_TIMEOUT:  # the call's own: checked as every timeout is
            check_timeout(timeout)
        if within is not None and timeout is CLIENT_TIMEOUT:
            limit = self._part_limit(within)
        else:
            limit = resolve_timeout(timeout, self.timeout)
        agent = self.url or self.endpoint
        return deadline(limit, agent=agent, operation=operation, method=method, parent=within)

    def _part_limit(self, call: CallInProgress) -> float | None:
        """The limit of one request made within ``call``: the call's own deadline when it has
        one (None: nothing more), else the client's timeout, so that a call with no limit
        (a ``wait``) is not held forever by one request."""
        return self.timeout if call.until == math.inf else None

    async def _op(
        self,
        op: Op,
        args: OpArgs,
        credentials: Credentials,
        within: CallInProgress | None = None,
        *,
        timeout: Timeout = CLIENT_TIMEOUT,
        part_of: str | None = None,
    ) -> Any:
        """Run operation ``op`` within its deadline (``_deadline``), through the
        interceptors (``part_of``: the operation it is a look-up of): encode it with the
        codec in use, send it with ``credentials``, decode the answer; after a "wrong
        dialect" answer, again with the next candidate."""
        result, _ = await self._sent(op, args, credentials, within, timeout, part_of)
        return result

    async def _sent(
        self,
        op: Op,
        args: OpArgs,
        credentials: Credentials,
        within: CallInProgress | None,
        timeout: Timeout = CLIENT_TIMEOUT,
        part_of: str | None = None,
    ) -> tuple[Any, Credentials]:
        """As ``_op``; and the credentials with the headers the interceptors set, those
        that the call's follow-up goes with."""
        with (
            self._traced(op.value, within) as span,
            self._deadline(op.value, timeout, within=within) as call,
        ):
            if not self._interceptors:
                result = await self._send(op, args, credentials, call)
                return span.returned(result, call.context), credentials

            async def send(args: OpArgs, credentials: Credentials, event: Any) -> Any:
                return await self._send(op, args, credentials, call)

            sent = await self._intercepted(op.value, args, credentials, call.until, send, part_of)
            return span.returned(sent[0], call.context), sent[1]

    async def _intercepted(
        self,
        name: str,
        args: OpArgs,
        credentials: Credentials,
        until: float,
        send: Sending,
        part_of: str | None = None,
        *,
        streamed: bool = False,
    ) -> tuple[Any, Credentials]:
        """``send(args, credentials, event)`` run as the operation ``name`` through the
        interceptors (its deadline ``until``), with the arguments and credentials they left
        (``event`` tells them of each event of a send that streams); its result, and the
        credentials with their headers, those its follow-up goes with. The road of every
        operation but a stream, whose source runs them as it is read."""
        intercepted = self._interception(name, args, credentials, until, part_of, streamed)
        if intercepted is None:
            return await send(args, credentials, no_event), credentials
        return await _around(intercepted, send, args, credentials)

    def _interception(
        self,
        name: str,
        args: OpArgs,
        credentials: Credentials,
        until: float = math.inf,
        part_of: str | None = None,
        streamed: bool = False,
    ) -> Interception | None:
        """The interceptors of one operation as it runs (None: the client has none): the
        one place they are made, for a unary operation (``_intercepted``) and a stream."""
        if not self._interceptors:
            return None
        return self._interceptors.intercept(
            name, self.url or self.endpoint, args, credentials,
            until=until, part_of=part_of, card=self._discovery.card, streamed=streamed,
        )  # fmt: skip

    async def _send(
        self, op: Op, args: OpArgs, credentials: Credentials, call: CallInProgress
    ) -> Any:
        while True:
            codec = await self._discovery.codec(call, credentials)
            if op is Op.EXTENDED_CARD:
                self._discovery.check_extended_card(call)
            try:
                return await self._exchange.unary(
                    codec, codec.encode(op, args), call, self.retry, credentials
                )
            except A2AClientError as exc:
                if not self._discovery.wires.fall_back(codec, exc):
                    raise

    def request_headers(self, headers: Mapping[str, str]) -> ContextManager[None]:
        """``with client.request_headers({...}):`` adds ``headers`` to every request this
        client makes for a call begun inside the block, as a ``headers=`` of each call would
        (a call's own ``headers=`` go over them; an inner block's over an outer's).

        The block is context-local: it applies to the task (or thread) that enters it and to
        the tasks it starts inside it, on asyncio and trio alike, not to other tasks, nor to
        calls begun after it. A stream keeps the headers of the call that opened it for its
        re-attaches and polls, even when it is read after the block. A gateway serving many
        users over one client sets each user's credentials so.

        Raises:
            ValueError: a header the request cannot carry (CR, LF, NUL, a character outside
                ASCII, a name that is no HTTP token) or one the protocol sets itself
                (``Content-Type``, ``Accept``, ``A2A-Version``...).
            TypeError: ``headers`` is not a mapping.
        """
        return request_headers(self, headers)

    def _credentials_for(self, headers: Mapping[str, str] | None) -> Credentials:
        return call_credentials(self, self._credentials, headers)

    def _traced(self, operation: str, within: CallInProgress | None = None) -> ContextManager[Span]:
        """The span of an operation (none of its own for a part of another call)."""
        agent = self.url or self.endpoint
        return self._observer.tracing.operation(operation, agent, nested=within is not None)

    def register_type(self, key: str, decoder: Decoder) -> None:
        """Decode the extension payloads of ``key`` with ``decoder`` from now on.

        ``key`` is a media type for data parts: a ``DataPart`` of every later answer (tasks,
        messages, events, pages) whose ``media_type`` is ``key`` (v1.0 ``mediaType``; for
        earlier versions, whose data parts have none, a ``mediaType`` string in the part's
        ``metadata``) has its ``data`` made into the user's type. It is a method name for
        ``call()`` results: ``call(key, ...)`` returns the user's type. ``decoder`` is a
        dataclass (built with ``decoder(**value)``), a pydantic model (its
        ``model_validate``; pydantic is not needed otherwise) or any callable of the JSON
        value. Payloads of no registered key stay as they came (dicts). The registry is this
        client's own; ``types=`` fills it at construction.

        Raises:
            ValueError: ``key`` is not a non-empty string.
            TypeError: ``decoder`` is not callable.
        """
        self._types.register(key, decoder)

    @overload
    async def call(
        self,
        method: str,
        params: Any = None,
        *,
        idempotent: bool = False,
        timeout: Timeout = CLIENT_TIMEOUT,
        result_type: None = None,
        on_event: Callable[[Any], Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any: ...
    @overload
    async def call(
        self,
        method: str,
        params: Any = None,
        *,
        idempotent: bool = False,
        timeout: Timeout = CLIENT_TIMEOUT,
        result_type: type[T] | Callable[[Any], T],
        on_event: Callable[[Any], Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> T: ...

    async def call(
        self,
        method: str,
        params: Any = None,
        *,
        idempotent: bool = False,
        timeout: Timeout = CLIENT_TIMEOUT,
        result_type: Decoder | None = None,
        on_event: Callable[[Any], Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Call any JSON-RPC method (an extension's, for example) and return its result.

        ``idempotent=True`` says the method may safely run twice, so the retry policy may
        repeat it after a server error as it does for reads. ``timeout`` bounds the whole
        call (by default the client's; None: no limit). The result comes back as the JSON
        it was, or as ``result_type`` (a dataclass, a pydantic model or any callable of the
        value; see ``register_type``), else as the type registered for ``method``.

        ``on_event`` (sync or async) makes a method that streams usable: the request then
        accepts an event stream as its answer (``Accept: application/json,
        text/event-stream``), ``on_event`` is called with each event's result as it
        arrives (the JSON, undecoded), and the last event's result is returned (decoded as
        above). A plain JSON answer is given to ``on_event`` once and returned. A gap
        between events longer than the client's ``idle_timeout`` ends the stream with
        ``A2ATimeoutError(timeout="stream-idle")``, as for ``stream_message``.

        Raises:
            A2ARPCError: the method's JSON-RPC error, as its subclass (``MethodNotFoundError``,
                ``InvalidParamsError``, ...); ``request_id`` is the id of the failed request.
            A2AProtocolError: the result does not fit ``result_type`` (the decoder's error is its
                ``__cause__``), or an event stream that carried no result.
            UnsupportedOperationError: the agent offers no JSON-RPC interface.
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        self._check_open()
        creds = self._credentials_for(headers)
        with (
            self._traced(Op.CALL.value) as span,
            self._deadline(Op.CALL.value, timeout, method=method) as call,
        ):
            args = Call(method, params, idempotent, stream=on_event is not None)

            async def send(args: OpArgs, creds: Credentials, event: Any) -> Any:
                await self._discovery.codec(call, creds)
                codec = (
                    self._discovery.wires.jsonrpc()
                )  # any JSON-RPC interface the agent has will do
                if codec is None:
                    raise UnsupportedOperationError(
                        f"call() speaks JSON-RPC and {call.agent} offers no JSON-RPC interface"
                        f" to this client (bindings={list(self.bindings)})",
                        **call.context,
                    )
                request = codec.encode(Op.CALL, args)
                if on_event is None:
                    result = await self._exchange.unary(codec, request, call, self.retry, creds)
                else:
                    notify = functools.partial(call_hook, on_event)
                    result = await self._exchange.events(
                        codec, request, call, self.retry, creds, notify, self._streams.idle_timeout,
                        self._part_limit(call),
                    )  # fmt: skip
                return self._types.result(method, result, result_type, request.context)

            typed, _ = await self._intercepted(Op.CALL.value, args, creds, call.until, send)
            return span.returned(typed, call.context)

    async def ping(
        self, *, timeout: Timeout = CLIENT_TIMEOUT, headers: Mapping[str, str] | None = None
    ) -> float:
        """Round-trip time to the agent in milliseconds (any HTTP answer counts), within
        ``timeout`` (by default the client's; None: no limit).

        Raises:
            A2AConnectionError: the agent cannot be reached (``A2ATimeoutError``: not within ``timeout``).
            TypeError: an interceptor answered it (a ping cannot be answered).
            RuntimeError: the client is closed.
        """
        self._check_open()
        creds = self._credentials_for(headers)
        url = self._discovery.fetcher.card_url or (
            card_urls(self.url)[0] if self.url else self.endpoint
        )
        assert url is not None
        with self._deadline("ping", timeout) as call:

            async def ping(args: OpArgs, creds: Credentials, event: Any) -> float:
                start = time.perf_counter()
                await self._http.request("GET", url, credentials=creds, context=call.context)
                return (time.perf_counter() - start) * 1000.0

            took: float
            took, _ = await self._intercepted("ping", None, creds, call.until, ping)
        return took

    async def _fetch(self, url: str, *, timeout: Timeout = CLIENT_TIMEOUT) -> RawResponse:
        """GET ``url`` (a file part's, a card's) as every request of this client goes: its
        credentials only to the agent's origins (the ``cross_origin`` policy for the others),
        redirects bounded and checked hop by hop, the body at most ``max_response_bytes``;
        within ``timeout`` (by default the client's). For the command line's
        ``--save-files`` and ``card --validate``.

        Raises:
            A2AProtocolError: ``url`` is not an absolute http(s) URL, or the body is too large.
            A2AHTTPError: a status that is not 2xx (``A2AAuthError``: 401 or 403).
            A2AClientError: any other failure of the request.
        """
        self._check_open()
        problem = url_problem(url)
        if problem is not None:
            raise A2AProtocolError(f"the URL {problem}")
        creds = self._credentials_for(None)
        with self._deadline("fetch", timeout) as call:
            resp = await self._http.request("GET", url, credentials=creds, context=call.context)
        if not 200 <= resp.status < 300:
            body = resp.content[:512].decode("utf-8", "replace")
            error = A2AAuthError if resp.status in (401, 403) else A2AHTTPError
            raise error(status_code=resp.status, body=body, **call.context)
        return resp

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
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
        cancel_on_exit: bool | None = None,
    ) -> Task | Message:
        """Send a message; returns the Task it created or continued, or the agent's Message.

        ``blocking=True`` waits until the task is terminal or interrupted: a task the agent
        answers with before that (some agents answer every send at once) is followed up,
        re-attached to when the agent streams, else polled, as ``wait()`` does. ``False``
        returns as soon as the agent accepted it (then ``wait()``, ``get_task`` or
        ``subscribe``). ``timeout`` bounds the whole call, follow-up included (default: the
        client's; None: no limit); past it, ``A2ATimeoutError(timeout="deadline")`` carries
        the task as it was last seen in ``events``.
        ``on_event`` (sync or async) is called with every event before the result is returned:
        the message is then streamed when the agent can stream (and ``blocking`` is true), else
        sent, and the events are the result and what its follow-up shows; ``timeout`` bounds
        the stream as it bounds the follow-up.
        ``cancel_on_exit`` (default: the client's) cancels the task on the agent when the call
        is abandoned: cancelled by the caller's scope, past a time limit (its ``timeout``), or
        interrupted (Ctrl-C). A blocking send with it is streamed when the agent can stream, so
        that the task is known at once; an agent that does not stream names it only when it
        answers. To be told which task was left and what came of its cancel, make the call
        in a ``cancel_guard()`` block instead. A blocking send over gRPC v0.3 is streamed too
        when the agent can stream: a2a-sdk 0.3's server hears a unary send cut by its
        deadline, but its handler runs on until the agent ends, where a stream's handler
        ends at once.

        Raises:
            A2ARPCError: the agent's error, as its subclass: ``TaskNotFoundError`` or
                ``TaskNotCancelableError`` (continuing a task that is gone or done),
                ``InvalidParamsError``, ``ContentTypeNotSupportedError``...
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            ValueError: a message that cannot be made into a ``Message`` (the error says the
                forms accepted: a ``str``, a ``Message``, or a dict in any dialect's shape).
            TypeError: an option of the wrong type (``metadata`` not a mapping,
                ``accepted_output_modes`` a str, ``push_config`` not a
                ``PushNotificationConfig``...); the error names what it accepts.
            RuntimeError: the client is closed.
        """
        msg, config = prepare_send(
            message, metadata, context_id, task_id, blocking, history_length,
            accepted_output_modes, push_config,
        )  # fmt: skip
        creds = self._credentials_for(headers)
        cancels = self._cancels.cancels(cancel_on_exit)
        streams = on_event is not None or cancels
        operation = Op.SEND.value
        with (
            self._traced(operation) as span,
            self._deadline(operation, timeout) as call,
        ):
            # Whether it streams is the card's to say: the card is read within the deadline.
            # A gRPC v0.3 codec sends by stream (see WireCodec.sends_by_stream).
            streamed = (
                blocking
                and (streams or (await self._discovery.codec(call, creds)).sends_by_stream)
                and await self._discovery.can_stream(call, creds)
            )
            async with self._cancels_abandoned(call, cancels, creds, msg.task_id):
                # To the interceptors, one operation "send" either way, its follow-up included.
                send = Send(msg, config)
                result: Task | Message
                if not self._interceptors:  # (no closure, no layer: it runs for every send)
                    result = await self._sent_message(
                        call, on_event, streamed, blocking, send, creds
                    )
                else:
                    sent = functools.partial(self._sent_message, call, on_event, streamed, blocking)
                    result, _ = await self._intercepted(
                        operation, send, creds, call.until, sent, streamed=streamed
                    )
            return span.returned(result, call.context)

    async def _sent_message(
        self,
        call: CallInProgress,
        on_event: EventCallback | None,
        streamed: bool,
        blocking: bool,
        args: OpArgs,
        creds: Credentials,
        event: EventHook = no_event,
    ) -> Task | Message:
        """A send (``args``, as the interceptors left them) within ``call``: read as a
        stream (``streamed``), else sent, and followed up to its end when ``blocking``;
        each event told to ``event`` (the send's interceptors) and to ``on_event``."""
        if streamed:  # read as any stream is (a span of its own, under the send's)
            return await self._streamed(call, on_event, args, creds, event)
        # The send's request is the call's own: only the call's deadline bounds it.
        result: Task | Message = await self._send(Op.SEND, args, creds, call)
        if on_event is not None:
            await call_hook(on_event, result)
        if blocking and isinstance(result, Task) and not result.status.state.is_final:
            result = await self._follow(result, call, on_event, creds)
        return result

    async def _streamed(
        self,
        call: CallInProgress,
        on_event: EventCallback | None,
        args: OpArgs,
        credentials: Credentials,
        event: Callable[[StreamEvent], Awaitable[None]],
    ) -> Task | Message:
        """A send read as a stream within ``call``, each event told to ``event`` (the send's
        interceptors) and to ``on_event``."""
        stream = self._stream(Op.STREAM, args, None, None, None, credentials, hooks=False)
        try:
            async with stream:
                async for item in stream:
                    await event(item)
                    if on_event is not None:
                        await call_hook(on_event, item)
                return await stream.result()
        finally:  # as last seen, and where it went: for the error of a deadline
            call.task = stream.task
            call.goes_to({**stream._context, "operation": Op.SEND.value})

    def conversation(
        self, context_id: str | None = None, *, state: Mapping[str, Any] | None = None
    ) -> Conversation:
        """A conversation with the agent: turns in one context (``context_id``, else the one
        the first answer names), each continuing the task the last one left open; or the
        conversation ``state`` (from ``Conversation.state()``) was in. See ``Conversation``.

        Raises:
            ValueError: both given, or ``state`` is not a conversation's state.
            TypeError: ``context_id`` is not a str.
        """
        from a2a_anyio._conversation import Conversation

        return Conversation(
            self, context_id, state=state, coerce=coerce_message, schemes=self._discovery.schemes
        )

    async def as_tool(
        self,
        *,
        name: str | None = None,
        timeout: Timeout = CLIENT_TIMEOUT,
        on_progress: Callable[[AgentToolProgress], Any] | None = None,
    ) -> AgentTool:
        """The agent as a tool for a language model, made from its card (fetched if need
        be): see ``AgentTool``. ``name`` replaces the one made from the card's name;
        ``timeout`` bounds each call (by default this client's; None: no limit);
        ``on_progress`` sees each event of every call.

        Raises:
            ValueError: ``name`` is not 1 to 64 letters, digits, ``_`` or ``-``; or the
                client was made with ``endpoint=`` alone (it has no card).
            A2ADiscoveryError: the card cannot be read (and the other failures of ``get_card``).
            RuntimeError: the client is closed.
        """
        from a2a_anyio._tool import AgentTool

        card = await self.get_card()
        return AgentTool(self, card, name=name, timeout=timeout, on_progress=on_progress)

    async def wait(
        self,
        task_id: str,
        *,
        timeout: float | None = None,
        poll_interval: float = 0.2,
        max_interval: float = 2.0,
        headers: Mapping[str, str] | None = None,
        cancel_on_exit: bool | None = None,
    ) -> Task:
        """Wait until the task is terminal or interrupted; return it.

        The task is re-attached to when the agent streams, else (or when it refuses) polled
        with ``get_task`` at intervals growing by half from ``poll_interval`` up to
        ``max_interval``. ``timeout`` (None, the default: no limit) raises
        ``A2ATimeoutError(timeout="deadline")`` carrying the task as last seen in ``events``;
        a wait with no limit still bounds each of its requests by the client's timeout.
        ``cancel_on_exit`` (default: the client's) cancels the task on the agent when the wait
        is abandoned, as ``send_message``'s does.

        Raises:
            A2ATimeoutError: the task is not final within ``timeout``.
            TaskNotFoundError: the agent has no such task.
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        creds = self._credentials_for(headers)
        cancels = self._cancels.cancels(cancel_on_exit)
        with (
            self._traced("wait") as span,
            self._deadline("wait", timeout) as call,
        ):
            async with self._cancels_abandoned(call, cancels, creds, task_id):

                async def wait(args: OpArgs, creds: Credentials, event: Any) -> Task:
                    task: Task
                    task, creds = await self._sent(Op.GET, args, creds, call, part_of="wait")
                    if not task.status.state.is_final:
                        follow = self._follow(task, call, None, creds, poll_interval, max_interval)
                        task = await follow
                    return task

                task: Task
                task, _ = await self._intercepted("wait", TaskRef(task_id), creds, call.until, wait)
            return span.returned(task, call.context)

    async def _follow(
        self,
        task: Task,
        call: CallInProgress,
        on_event: EventCallback | None,
        credentials: Credentials,
        poll_interval: float = 0.2,
        max_interval: float = 2.0,
    ) -> Task:
        """Follow ``task`` up to its final state within ``call``, with its ``credentials``:
        the one mechanism of streams cut short, started from a task
        (``MessageStream(follows=task)``)."""
        codec = await self._discovery.codec(call, credentials)
        streams = codec.supports(Op.SUBSCRIBE) and await self._discovery.can_stream(
            call, credentials
        )
        call.task = task
        call.goes_to({"agent": codec.url, "operation": call.context.get("operation")})

        source = _ClientStream(  # it opens no stream: it re-attaches to the task, or polls it
            self, Op.SUBSCRIBE, None, credentials, reattaches=streams, polls=True, within=call,
            agent=codec.url, method=call.context.get("operation") or Op.SEND.value,
        )  # fmt: skip
        limits = StreamLimits(
            idle=self._streams.idle_timeout,
            open=self._part_limit(call),
            keep_events=0,
            max_bytes=self._http.max_response_bytes,
            poll_interval=poll_interval,
            max_poll_interval=max_interval,
        )
        follow = MessageStream(source, limits, follows=task, observer=self._observer)
        try:
            async with follow:
                async for event in follow:
                    if on_event is not None:
                        await call_hook(on_event, event)
        finally:
            call.task = follow.task  # as last seen, for the error of a deadline
        final = follow.task
        assert final is not None
        return final

    @stream_limits_named
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
        headers: Mapping[str, str] | None = None,
        cancel_on_exit: bool | None = None,
    ) -> MessageStream:
        """Send a message and stream the task's events (``async with ... as stream``).

        ``idle_timeout`` and ``resume`` default to the client's; ``total_timeout`` bounds the
        whole stream, resumes and polls included, as ``timeout`` bounds a unary call (None,
        the default: no limit; the client's ``timeout`` does not apply to streams).
        ``headers`` (with those of the ``request_headers`` blocks this is called in) go with
        every request of the stream: its re-attaches and polls too.
        ``cancel_on_exit`` (default: the client's) cancels the task on the agent when the
        stream is closed before its end: its block left early (an error, ``total_timeout``,
        a cancel scope, Ctrl-C), or ``aclose()``; ``stream.cancel_outcome`` says what came
        of it.

        Raises:
            ValueError: a message that cannot be made into a ``Message``, as ``send_message``.
            TypeError: an option of the wrong type, as ``send_message``.
            RuntimeError: the client is closed. The stream's own failures are raised while it is read (see
                ``MessageStream``).
        """
        self._check_open()
        msg, config = prepare_send(
            message, metadata, context_id, task_id, True, history_length,
            accepted_output_modes, push_config,
        )  # fmt: skip

        creds = self._credentials_for(headers)
        send = Send(msg, config)
        cancels = self._cancels.cancels(cancel_on_exit)
        return self._stream(Op.STREAM, send, idle_timeout, total_timeout, resume, creds, cancels)

    @stream_limits_named
    def subscribe(
        self,
        task_id: str,
        *,
        idle_timeout: float | None = None,
        total_timeout: float | None = None,
        resume: bool | None = None,
        headers: Mapping[str, str] | None = None,
        cancel_on_exit: bool | None = None,
    ) -> MessageStream:
        """Re-attach to a running task's event stream (SubscribeToTask / tasks/resubscribe);
        the options are ``stream_message``'s (``cancel_on_exit``: the task is known from the
        start).

        Raises:
            RuntimeError: the client is closed. The stream's own failures are raised while it is read (see
                ``MessageStream``): ``TaskNotFoundError``, or ``UnsupportedOperationError`` from an
                agent that cannot re-attach to a task that is already final.
        """
        self._check_open()
        creds = self._credentials_for(headers)
        ref = TaskRef(task_id)
        cancels = self._cancels.cancels(cancel_on_exit)
        return self._stream(Op.SUBSCRIBE, ref, idle_timeout, total_timeout, resume, creds, cancels)

    def _stream(
        self,
        op: Op,
        args: OpArgs,
        idle_timeout: float | None,
        total_timeout: float | None,
        resume: bool | None,
        credentials: Credentials,
        cancel_on_exit: bool = False,
        *,
        hooks: bool = True,
    ) -> MessageStream:
        """A stream of ``op``, an operation of its own unless ``hooks`` is false: a send that
        streams is the send's, to the interceptors and for the cancel of what it abandons
        (the send's guard), and nobody can ask its stream to cancel."""
        check_timeout(idle_timeout, "idle_timeout")
        check_timeout(total_timeout, "total_timeout")
        resume = self._streams.resume if resume is None else resume
        agent = self.url or self.endpoint
        source = _ClientStream(
            self, op, args, credentials, reattaches=resume, polls=resume,
            agent=agent, method=op.value,
        )  # fmt: skip
        source.task_id = args.task_id if isinstance(args, (Send, TaskRef)) else None
        if hooks:
            source.cancel = self._canceller(credentials)
            source.hooks = self._interception(op.value, args, credentials)
        limits = StreamLimits(
            idle=idle_timeout if idle_timeout is not None else self._streams.idle_timeout,
            total=total_timeout,
            open=self.timeout,
            keep_events=self._streams.keep_events,
            max_bytes=self._http.max_response_bytes,
        )
        return MessageStream(
            source, limits, observer=self._observer, traced=True, cancel_on_exit=cancel_on_exit
        )

    async def get_task(
        self,
        task_id: str,
        *,
        history_length: int | None = None,
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> Task:
        """The task's current state.

        Raises:
            TaskNotFoundError: the agent has no such task.
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        creds = self._credentials_for(headers)
        ref = TaskRef(task_id, history_length)
        task: Task = await self._op(Op.GET, ref, creds, timeout=timeout)
        return task

    async def list_tasks(
        self,
        context_id: str | None = None,
        limit: int | None = 50,
        cursor: str | None = None,
        *,
        status: TaskState | None = None,
        history_length: int | None = None,
        include_artifacts: bool = False,
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> TaskPage:
        """One page of tasks, most recently updated first. v1.0 agents list tasks; v0.3
        agents are asked with ``tasks/list`` or ``GET /v1/tasks`` (the spec's draft after
        v0.3), which few serve; v0.2 JSON-RPC and ``tasks/send`` agents are not asked.

        Raises:
            UnsupportedOperationError: the agent does not list tasks: it answered as if it had no such method
                (JSON-RPC -32601; over HTTP+JSON 404, 405 or 501), or it speaks v0.2 JSON-RPC or ``tasks/send``.
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        args = ListTasks(context_id, limit, cursor, status, history_length, include_artifacts)
        creds = self._credentials_for(headers)
        page: TaskPage = await self._op(Op.LIST, args, creds, timeout=timeout)
        return page

    async def cancel_task(
        self,
        task_id: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> Task:
        """Ask the agent to cancel the task; returns the task as the agent then reports it
        (an agent that answers with nothing is asked for the task, within the same deadline).

        Raises:
            TaskNotFoundError: the agent has no such task.
            TaskNotCancelableError: the task is final, or the agent will not cancel it.
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        meta = dict(metadata) if metadata else None
        return await self._cancel(task_id, self._credentials_for(headers), timeout, meta)

    async def _cancel(
        self,
        task_id: str,
        credentials: Credentials,
        timeout: Timeout,
        metadata: dict[str, Any] | None = None,
    ) -> Task:
        cancel = Op.CANCEL.value
        with self._traced(cancel) as span, self._deadline(cancel, timeout) as call:
            # The two requests share the call's one deadline (no limit of their own).
            args = Cancel(task_id, metadata)
            task: Task | None = await self._op(Op.CANCEL, args, credentials, call, timeout=None)
            if task is None:  # answered with nothing (some servers): the task as it is now
                ref = TaskRef(task_id)
                task = await self._op(
                    Op.GET, ref, credentials, call, timeout=None, part_of="cancel"
                )
            return span.returned(task, call.context)

    def _canceller(self, credentials: Credentials) -> Callable[[str], Awaitable[Task]]:
        """Cancels a task a call left behind, with the call's ``credentials``, within the
        client's ``cancel_grace``."""
        return _Canceller(self._cancel, credentials, self._cancels.grace)

    def cancel_guard(
        self,
        task_id: str | None = None,
        *,
        cancel_on_exit: bool = True,
        headers: Mapping[str, str] | None = None,
    ) -> CancelGuard:
        """A ``CancelGuard`` for calls of yours to this agent (``async with ... as guard``,
        ``on_event=guard``): when the block is abandoned, the task they showed last (or
        ``task_id``, known from the start) is cancelled on the agent, as ``cancel_on_exit``
        cancels a call's; ``guard.task_id`` and ``guard.outcome`` then say which and what
        came of it (``cancel_on_exit=False``: nothing is cancelled, the task left is still
        named). The cancel goes with ``headers`` (and those of the ``request_headers``
        blocks this is called in), within the client's ``cancel_grace``.

        Raises:
            ValueError, TypeError: ``headers`` that cannot be sent, as for a call's.
        """
        return self._guard(self._credentials_for(headers), cancel_on_exit, task_id)

    def _guard(
        self, credentials: Credentials, cancel_on_exit: bool, task_id: str | None = None
    ) -> CancelGuard:
        """The guard of a call made with ``credentials``, which its cancel goes with."""
        return CancelGuard(
            self._canceller(credentials), observer=self._observer,
            agent=self.url or self.endpoint, task_id=task_id, cancel_on_exit=cancel_on_exit,
        )  # fmt: skip

    def _cancels_abandoned(
        self,
        call: CallInProgress,
        cancel_on_exit: bool,
        credentials: Credentials,
        task_id: str | None = None,
    ) -> AbstractAsyncContextManager[None]:
        """The guard of ``call`` when it has ``cancel_on_exit``, told the task the call
        saw last (``call.task``, else ``task_id``) as it ends; without it, none: the
        guard would cancel nothing, and no one else sees it."""
        if not cancel_on_exit:
            return _UNGUARDED
        return self._guarded(call, credentials, task_id)

    @asynccontextmanager
    async def _guarded(
        self, call: CallInProgress, credentials: Credentials, task_id: str | None
    ) -> AsyncIterator[None]:
        async with self._guard(credentials, True, task_id) as guard:
            guard.answer_by = call.until  # the call's deadline holds for its cancel too
            try:
                yield
            finally:
                guard(call.task)

    async def create_push_config(
        self,
        task_id: str,
        url: str,
        *,
        token: str | None = None,
        config_id: str | None = None,
        auth_scheme: str | None = None,
        auth_credentials: str | None = None,
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> PushNotificationConfig:
        """Ask the agent to post the task's updates to ``url``.

        Raises:
            PushNotificationNotSupportedError: the agent does not push notifications.
            TaskNotFoundError: the agent has no such task.
            ValueError: ``url`` is not an http(s) URL.
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        config = PushNotificationConfig(
            url=check_url(url),
            task_id=task_id,
            id=config_id,
            token=token,
            auth_scheme=auth_scheme,
            auth_credentials=auth_credentials,
        )
        creds = self._credentials_for(headers)
        created: PushNotificationConfig = await self._op(
            Op.PUSH_CREATE, PushCreate(config), creds, timeout=timeout
        )
        return created

    async def get_push_config(
        self,
        task_id: str,
        config_id: str | None = None,
        *,
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> PushNotificationConfig:
        """One push config of the task.

        Raises:
            PushNotificationNotSupportedError: the agent does not push notifications.
            TaskNotFoundError: no such task, or no such config.
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        ref = PushRef(task_id, config_id)
        creds = self._credentials_for(headers)
        config: PushNotificationConfig = await self._op(Op.PUSH_GET, ref, creds, timeout=timeout)
        return config

    async def list_push_configs(
        self,
        task_id: str,
        *,
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> list[PushNotificationConfig]:
        """Every push config of the task.

        Raises:
            PushNotificationNotSupportedError: the agent does not push notifications.
            UnsupportedOperationError: the dialect cannot list configs (``tasks/send``).
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        ref = PushRef(task_id)
        creds = self._credentials_for(headers)
        configs: list[PushNotificationConfig] = await self._op(
            Op.PUSH_LIST, ref, creds, timeout=timeout
        )
        return configs

    async def delete_push_config(
        self,
        task_id: str,
        config_id: str,
        *,
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Remove one push config of the task.

        Raises:
            PushNotificationNotSupportedError: the agent does not push notifications.
            UnsupportedOperationError: the dialect cannot delete configs (``tasks/send``).
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        ref = PushRef(task_id, config_id)
        await self._op(Op.PUSH_DELETE, ref, self._credentials_for(headers), timeout=timeout)


async def _around(
    intercepted: Interception, send: Sending, args: OpArgs, credentials: Credentials
) -> tuple[Any, Credentials]:
    """``send`` run inside the interceptors (``A2AClient._intercepted``): a function of its
    own, so that a call without interceptors makes none of its closure's cells."""
    seen = intercepted.op

    async def sent() -> Any:
        return await send(*applied(seen, args, credentials), intercepted.event)

    return await intercepted.around(sent), with_headers(seen, credentials)


class _Canceller:
    """A client's cancel with a call's credentials and a timeout: two small objects each
    stream and guard holds (a ``functools.partial`` with keywords takes three, and more)."""

    __slots__ = ("cancel", "credentials", "timeout")

    def __init__(
        self,
        cancel: Callable[[str, Credentials, Timeout], Awaitable[Task]],
        credentials: Credentials,
        timeout: Timeout,
    ) -> None:
        self.cancel = cancel
        self.credentials = credentials
        self.timeout = timeout

    def __call__(self, task_id: str) -> Awaitable[Task]:
        return self.cancel(task_id, self.credentials, self.timeout)


class _FallBack:
    """``Wires.fall_back`` for one codec: what a stream's wire holds (one object, where a
    ``functools.partial`` of a bound method is three)."""

    __slots__ = ("codec", "wires")

    def __init__(self, wires: Wires, codec: WireCodec) -> None:
        self.wires, self.codec = wires, codec

    def __call__(self, exc: A2AClientError) -> bool:
        return self.wires.fall_back(self.codec, exc)


class _ClientStream(StreamSource):
    """A client's stream: ``op`` with ``args`` opens it; its task is re-attached to
    (SUBSCRIBE) and polled (GET) through the same client, a look within the call ``within``
    when it is part of one (a send's follow-up, a wait), else within the client's timeout.
    Every request of it goes with ``credentials``, those of the call that opened it."""

    def __init__(
        self,
        client: A2AClient,
        op: Op,
        args: OpArgs,
        credentials: Credentials,
        *,
        reattaches: bool,
        polls: bool,
        agent: str | None,
        method: str,
        within: CallInProgress | None = None,
    ) -> None:
        self._client = client
        self._op = op
        self._args: OpArgs | None = args  # None once the stream is open: never sent again
        self._within = within
        self._credentials = credentials
        self._encoded: tuple[WireCodec, WireRequest[Any]] | None = None
        self.agent = agent
        self.method = method
        self.retry = client.retry
        self.idempotent = op.idempotent
        self.reattaches = reattaches
        self.polls = polls

    async def open(self, limits: StreamLimits) -> StreamWire:
        client = self._client
        client._check_open()
        args = self._args
        if args is None:
            raise RuntimeError("a stream's first request is sent again only before it opens")
        if isinstance(self.hooks, Interception):  # as the interceptors left them
            args, self._credentials = applied(self.hooks.op, args, self._credentials)
            self._args = args
        codec = await client._discovery.codec(None, self._credentials, self.method)
        encoded = self._encoded
        if encoded is None or encoded[0] is not codec:
            # Encoded once: a retry sends the same request (message id, JSON-RPC id).
            encoded = self._encoded = codec, codec.encode(self._op, args)
        fall_back = _FallBack(client._discovery.wires, codec)
        return client._exchange.stream(
            codec, encoded[1], self._credentials, fall_back,
            idle_timeout=limits.idle, open_timeout=limits.open,
        )  # fmt: skip

    def opened(self) -> None:
        # An open stream holds thousands of idle twins: the message sent goes with it.
        self._args = self._encoded = None

    async def reattach(self, task_id: str, limits: StreamLimits) -> StreamWire:
        again = _ClientStream(
            self._client, Op.SUBSCRIBE, TaskRef(task_id), self._credentials,
            reattaches=False, polls=False, agent=self.agent, method=Op.SUBSCRIBE.value,
        )  # fmt: skip
        return await again.open(limits)

    async def poll(self, task_id: str) -> Task:
        ref = TaskRef(task_id)
        client, part_of = self._client, self.method
        task: Task = await client._op(Op.GET, ref, self._credentials, self._within, part_of=part_of)
        return task
