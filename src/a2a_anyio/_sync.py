"""The sync facade: ``SyncA2AClient`` and ``SyncMessageStream`` for code without an event loop
(``SyncAgentPool`` is in ``_sync_pool``).

Each facade runs the async client on an anyio blocking portal (an event loop in a thread of its
own, asyncio or trio): every blocking method hands one coroutine of the async client to the
portal and waits for its outcome. Nothing is implemented twice; what the async client does,
the facade does, with the same results and the same exceptions.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Iterator, Mapping
from contextlib import AbstractContextManager, ExitStack
from types import TracebackType
from typing import TYPE_CHECKING, Any, TypeVar, overload

from anyio.from_thread import BlockingPortal

from a2a_anyio._abandon import CancelOutcome
from a2a_anyio._client import A2AClient
from a2a_anyio._deadline import CLIENT_TIMEOUT, Timeout, stream_limits_named
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
from a2a_anyio._options import ClientOptions, EventCallback
from a2a_anyio._payloads import Decoder
from a2a_anyio._prepare import MessageInput
from a2a_anyio._stream import MessageStream
from a2a_anyio._sync_portal import Calls, Facade, off_loop, start_portal

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from a2a_anyio._sync_conversation import SyncConversation
    from a2a_anyio._sync_tool import SyncAgentTool
    from a2a_anyio._tool import AgentToolProgress

T = TypeVar("T")


class SyncMessageStream:
    """The events of one streaming call, for a plain ``for``.

    ``with client.stream_message("hi") as stream: for event in stream: ...`` releases the
    connection the moment the block exits, early or not. A plain ``for`` without ``with``
    works too; the connection is then released on the final event, at the end of the body, on
    an error or by ``close()``. ``task``, ``message``, ``events``, ``finished`` and ``result()``
    are those of the underlying ``MessageStream``.

    Raises:
        A2AClientError: while it is read, as ``MessageStream`` raises (a cut stream that cannot be resumed
            is ``A2AConnectionError``; an error event, its ``A2ARPCError``).
        RuntimeError: the client was closed meanwhile.
    """

    def __init__(self, stream: MessageStream, calls: Calls) -> None:
        self._stream = stream
        self._calls = calls

    @property
    def stream(self) -> MessageStream:
        """The async stream this one wraps."""
        return self._stream

    @property
    def task(self) -> Task | None:
        """The current task, folded from the events so far (None before any task event)."""
        return self._stream.task

    @property
    def message(self) -> Message | None:
        """The agent's Message, when it answered with one instead of a task."""
        return self._stream.message

    @property
    def events(self) -> list[StreamEvent]:
        """Every event received so far, in order."""
        return self._stream.events

    @property
    def finished(self) -> bool:
        """True once the final event has been received."""
        return self._stream.finished

    @property
    def cancel_on_exit(self) -> bool:
        """Cancel the task on the agent when the stream is closed before its end."""
        return self._stream.cancel_on_exit

    @cancel_on_exit.setter
    def cancel_on_exit(self, value: bool) -> None:
        self._stream.cancel_on_exit = value

    @property
    def cancel_outcome(self) -> CancelOutcome | None:
        """What came of cancelling the task on the agent, when the stream was left before its
        end with ``cancel_on_exit``."""
        return self._stream.cancel_outcome

    def __enter__(self) -> SyncMessageStream:
        self._calls.run(self._stream.__aenter__)
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __iter__(self) -> Iterator[StreamEvent]:
        return self

    def __next__(self) -> StreamEvent:
        try:
            return self._calls.run(self._stream.__anext__)
        except StopAsyncIteration:
            raise StopIteration from None

    def result(self) -> Task | Message:
        """Consume the rest of the stream; the final Task, or the agent's Message.

        Raises:
            A2AClientError: as reading the stream does (see ``MessageStream``).
            RuntimeError: the stream was closed before its end (its ``with`` block was left, or
                ``close()`` called): call ``result()`` before that. Also: the client is closed.
        """
        return self._calls.run(self._stream.result)

    def close(self) -> None:
        """Release the connection now; iteration stops. Safe to call more than once, and a
        no-op once the client is closed (which closed its streams)."""
        try:
            self._calls.run(self._stream.aclose)
        except RuntimeError:
            if not self._calls.closed:
                raise

    def __repr__(self) -> str:
        state = "finished" if self.finished else f"{len(self.events)} event(s)"
        return f"<SyncMessageStream {self._stream.method} of {self._stream.agent!r}: {state}>"


class SyncA2AClient(Facade):
    """A blocking client for one A2A agent: ``A2AClient`` run on an anyio blocking portal.

    ``url`` and ``options`` are those of ``A2AClient``; ``backend`` ("asyncio" or "trio") and
    ``backend_options`` choose the event loop that runs it, in a thread of its own. Every
    operation of ``A2AClient`` is here as a blocking method with the same arguments, result
    and exceptions; streams iterate with a plain ``for``. The client may be used from any
    thread, and from several at once. ``close()`` (or leaving ``with``) closes the async
    client and stops the portal; calls after it raise ``RuntimeError``, and calls still
    running in other threads are cancelled (they raise ``RuntimeError`` too).
    """

    _client: A2AClient
    _calls: Calls
    _stack: ExitStack | None
    _streams: weakref.WeakSet[SyncMessageStream]  # the loop's thread only
    _close_lock: threading.Lock
    backend: str

    def __init__(
        self,
        url: str | None = None,
        *,
        backend: str = "asyncio",
        backend_options: Mapping[str, Any] | None = None,
        **options: Unpack[ClientOptions],
    ) -> None:
        with ExitStack() as stack:
            portal = start_portal(stack, backend, backend_options)
            # Built in the loop's thread: the client makes anyio primitives.
            client = portal.call(functools.partial(A2AClient, url, **options))
            self._setup(portal, client, backend, stack.pop_all())

    @classmethod
    def _attach(cls, portal: BlockingPortal, client: A2AClient, backend: str) -> SyncA2AClient:
        """A facade over ``client``, already living on ``portal``; neither is owned by it."""
        self = cls.__new__(cls)
        self._setup(portal, client, backend, None)
        return self

    def _setup(
        self, portal: BlockingPortal, client: A2AClient, backend: str, stack: ExitStack | None
    ) -> None:
        self._client = client
        self._calls = Calls(portal, type(self).__name__, client._observer.tracing)
        self._stack = stack
        self._streams = weakref.WeakSet()
        self._close_lock = threading.Lock()
        self.backend = backend

    # -- lifecycle ------------------------------------------------------------------------

    def close(self) -> None:
        """Close the async client in the portal, then stop the portal; idempotent.

        Calls still running in other threads are cancelled first (they raise
        ``RuntimeError``), then the streams left open are closed. A client made by a
        ``SyncAgentPool`` only stops serving: the pool closes the rest.
        """
        self._close_once()

    async def _shutdown(self) -> None:
        if not await self._calls.shut():
            return
        for stream in list(self._streams):
            await stream.stream.aclose()
        if self._stack is not None:
            await self._client.close()

    @property
    def async_client(self) -> A2AClient:
        """The ``A2AClient`` this facade runs (it belongs to the portal's event loop)."""
        return self._client

    @property
    def url(self) -> str | None:
        """The agent's base URL or card URL, as given."""
        return self._client.url

    @property
    def endpoint(self) -> str | None:
        """The JSON-RPC URL given instead of discovery, if any."""
        return self._client.endpoint

    def __repr__(self) -> str:
        target = self._client.url or self._client.endpoint
        closed = " closed" if self.closed else ""
        return f"<SyncA2AClient {target!r} backend={self.backend!r}{closed}>"

    # -- discovery ------------------------------------------------------------------------

    def get_card(
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
            A2ADiscoveryError: no card at the URL, or not a card.
            A2AConnectionError: the agent cannot be reached (``A2ATimeoutError``: not within ``timeout``).
            RuntimeError: the client is closed.
        """
        get = self._client.get_card
        return self._calls.run(
            functools.partial(get, refresh=refresh, timeout=timeout, headers=headers)
        )

    def discover(
        self,
        *,
        refresh: bool = False,
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> AgentCard:
        """The same as ``get_card()``.

        Raises:
            A2ADiscoveryError: as ``get_card``.
            RuntimeError: the client is closed.
        """
        return self.get_card(refresh=refresh, timeout=timeout, headers=headers)

    @property
    def agent_card(self) -> AgentCard:
        """``client.agent_card``: the same as ``client.get_card()`` (blocking)."""
        return self.get_card()

    @property
    def capabilities(self) -> AgentCapabilities:
        """``client.capabilities``: the card's capabilities (blocking)."""
        return self.get_card().capabilities

    def get_extended_card(
        self, *, timeout: Timeout = CLIENT_TIMEOUT, headers: Mapping[str, str] | None = None
    ) -> AgentCard:
        """The authenticated extended card (the credentials given to this client are sent).

        Raises:
            ExtendedCardNotConfiguredError: the agent has no extended card.
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        get = self._client.get_extended_card
        return self._calls.run(functools.partial(get, timeout=timeout, headers=headers))

    def authenticate(self) -> None:
        """Get the credentials now (blocking): the card is read and an OAuth 2.0 flow gets
        its token, signing the user in if need be (``A2AClient.authenticate``).

        Raises:
            A2AAuthError: the credentials cannot be had.
            A2AClientError: the card cannot be read, or a token endpoint misbehaved.
            RuntimeError: the client is closed.
        """
        self._calls.run(self._client.authenticate)

    # -- operations -----------------------------------------------------------------------

    def send_message(
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

        ``blocking=True`` waits until the task is terminal or interrupted (a task answered
        before that is followed up, within ``timeout``: by default the client's, None: no
        limit); ``False`` returns as soon as the agent accepted it (then ``wait()``,
        ``get_task`` or ``subscribe``).
        ``on_event`` is called with every event before the result is returned (the message is
        then streamed when the agent can stream). A sync callback runs in a worker thread of
        the portal, one event at a time: it may block and may call this client.
        ``cancel_on_exit`` (default: the client's) cancels the task on the agent when the
        call is abandoned: past its ``timeout``, or interrupted (Ctrl-C).

        Raises:
            A2AClientError: as ``A2AClient.send_message``: the agent's error as its ``A2ARPCError`` subclass, or
                a failure of the connection, deadline, HTTP status or answer.
            ValueError: as ``A2AClient.send_message`` (a message that cannot be made one).
            TypeError: as ``A2AClient.send_message`` (an option of the wrong type).
            RuntimeError: the client is closed, or closed while the call ran.
        """
        return self._calls.run(
            functools.partial(
                self._client.send_message,
                message,
                metadata=metadata,
                context_id=context_id,
                task_id=task_id,
                blocking=blocking,
                history_length=history_length,
                accepted_output_modes=accepted_output_modes,
                push_config=push_config,
                on_event=off_loop(on_event),
                timeout=timeout,
                headers=headers,
                cancel_on_exit=cancel_on_exit,
            )
        )

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
    ) -> SyncMessageStream:
        """Send a message and stream the task's events (``with ... as stream: for ...``).

        ``idle_timeout`` and ``resume`` default to the client's; ``total_timeout`` bounds the
        whole stream, as ``timeout`` bounds a unary call (None, the default: no limit).
        ``cancel_on_exit`` (default: the client's): a stream left before its end cancels its
        task on the agent.

        Raises:
            ValueError: as ``A2AClient.stream_message`` (a message that cannot be made one).
            TypeError: as ``A2AClient.stream_message`` (an option of the wrong type).
            RuntimeError: the client is closed. The stream's own failures are raised while it is read (see
                ``SyncMessageStream``).
        """
        return self._wrap(
            functools.partial(
                self._client.stream_message,
                message,
                metadata=metadata,
                context_id=context_id,
                task_id=task_id,
                history_length=history_length,
                accepted_output_modes=accepted_output_modes,
                push_config=push_config,
                idle_timeout=idle_timeout,
                total_timeout=total_timeout,
                resume=resume,
                headers=headers,
                cancel_on_exit=cancel_on_exit,
            )
        )

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
    ) -> SyncMessageStream:
        """Re-attach to a running task's event stream (SubscribeToTask / tasks/resubscribe);
        the options are ``stream_message``'s.

        Raises:
            RuntimeError: the client is closed. The stream's own failures are raised while it is read (see
                ``SyncMessageStream``).
        """
        return self._wrap(
            functools.partial(
                self._client.subscribe,
                task_id,
                idle_timeout=idle_timeout,
                total_timeout=total_timeout,
                resume=resume,
                headers=headers,
                cancel_on_exit=cancel_on_exit,
            )
        )

    def conversation(
        self, context_id: str | None = None, *, state: Mapping[str, Any] | None = None
    ) -> SyncConversation:
        """As ``A2AClient.conversation``, its turns blocking (``SyncConversation``).

        Raises:
            ValueError: as ``A2AClient.conversation``.
            TypeError: as ``A2AClient.conversation``.
        """
        from a2a_anyio._sync_conversation import SyncConversation

        made = self._client.conversation(context_id, state=state)
        return SyncConversation(made, self._calls, self._wrap)

    def as_tool(
        self,
        *,
        name: str | None = None,
        timeout: Timeout = CLIENT_TIMEOUT,
        on_progress: Callable[[AgentToolProgress], Any] | None = None,
    ) -> SyncAgentTool:
        """As ``A2AClient.as_tool``; the tool's calls block (``SyncAgentTool``), and a sync
        ``on_progress`` runs in a worker thread.

        Raises:
            ValueError: as ``A2AClient.as_tool``.
            A2AClientError: as ``A2AClient.as_tool``.
            RuntimeError: the client is closed.
        """
        from a2a_anyio._sync_tool import SyncAgentTool

        made = functools.partial(
            self._client.as_tool, name=name, timeout=timeout, on_progress=off_loop(on_progress)
        )
        return SyncAgentTool(self._calls.run(made), self._calls)

    def _wrap(self, make: Callable[[], MessageStream]) -> SyncMessageStream:
        async def made() -> SyncMessageStream:
            # In the loop, like every use of the set of streams; argument errors surface here.
            stream = SyncMessageStream(make(), self._calls)
            self._streams.add(stream)
            return stream

        return self._calls.run(made)

    def get_task(
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
        return self._calls.run(
            functools.partial(
                self._client.get_task,
                task_id,
                history_length=history_length,
                timeout=timeout,
                headers=headers,
            )
        )

    def list_tasks(
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
        return self._calls.run(
            functools.partial(
                self._client.list_tasks,
                context_id,
                limit,
                cursor,
                status=status,
                history_length=history_length,
                include_artifacts=include_artifacts,
                timeout=timeout,
                headers=headers,
            )
        )

    def cancel_task(
        self,
        task_id: str,
        *,
        metadata: Mapping[str, Any] | None = None,
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> Task:
        """Ask the agent to cancel the task; returns the task as the agent then reports it.

        Raises:
            TaskNotFoundError: the agent has no such task.
            TaskNotCancelableError: the task is final, or the agent will not cancel it.
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        return self._calls.run(
            functools.partial(
                self._client.cancel_task,
                task_id,
                metadata=metadata,
                timeout=timeout,
                headers=headers,
            )
        )

    def wait(
        self,
        task_id: str,
        *,
        timeout: float | None = None,
        poll_interval: float = 0.2,
        max_interval: float = 2.0,
        headers: Mapping[str, str] | None = None,
        cancel_on_exit: bool | None = None,
    ) -> Task:
        """Wait until the task is terminal or interrupted; return it (re-attached to when the
        agent streams, else polled at intervals growing by half from ``poll_interval`` up to
        ``max_interval``); ``timeout`` (None, the default: no limit) raises
        ``A2ATimeoutError(timeout="deadline")``. ``cancel_on_exit`` as ``send_message``'s.

        Raises:
            A2ATimeoutError: the task is not final within ``timeout``.
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        return self._calls.run(
            functools.partial(
                self._client.wait,
                task_id,
                timeout=timeout,
                poll_interval=poll_interval,
                max_interval=max_interval,
                headers=headers,
                cancel_on_exit=cancel_on_exit,
            )
        )

    def create_push_config(
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
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        return self._calls.run(
            functools.partial(
                self._client.create_push_config,
                task_id,
                url,
                token=token,
                config_id=config_id,
                auth_scheme=auth_scheme,
                auth_credentials=auth_credentials,
                timeout=timeout,
                headers=headers,
            )
        )

    def get_push_config(
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
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        get = self._client.get_push_config
        return self._calls.run(
            functools.partial(get, task_id, config_id, timeout=timeout, headers=headers)
        )

    def list_push_configs(
        self,
        task_id: str,
        *,
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> list[PushNotificationConfig]:
        """Every push config of the task.

        Raises:
            UnsupportedOperationError: the dialect cannot list configs (``tasks/send``).
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        list_configs = self._client.list_push_configs
        return self._calls.run(
            functools.partial(list_configs, task_id, timeout=timeout, headers=headers)
        )

    def delete_push_config(
        self,
        task_id: str,
        config_id: str,
        *,
        timeout: Timeout = CLIENT_TIMEOUT,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """Remove one push config of the task.

        Raises:
            UnsupportedOperationError: the dialect cannot delete configs (``tasks/send``).
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        delete = self._client.delete_push_config
        self._calls.run(
            functools.partial(delete, task_id, config_id, timeout=timeout, headers=headers)
        )

    def request_headers(self, headers: Mapping[str, str]) -> AbstractContextManager[None]:
        """``with client.request_headers({...}):`` adds ``headers`` to every request of the
        calls this thread makes inside the block, as ``A2AClient.request_headers`` does for
        a task: the block is this thread's, and each call takes it to the portal's loop.

        Raises:
            ValueError: a header the request cannot carry, or one the protocol sets itself.
            TypeError: ``headers`` is not a mapping.
        """
        return self._client.request_headers(headers)

    def register_type(self, key: str, decoder: Decoder) -> None:
        """Decode the extension payloads of ``key`` with ``decoder`` from now on (a media type
        for data parts, a method name for ``call()`` results), as ``A2AClient.register_type``.

        Raises:
            ValueError: ``key`` is not a non-empty string.
            TypeError: ``decoder`` is not callable.
        """
        self._client.register_type(key, decoder)

    @overload
    def call(
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
    def call(
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

    def call(
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
        """Call any JSON-RPC method (an extension's, for example) and return its result, as
        ``A2AClient.call``: within ``timeout``, as ``result_type`` (or the type registered
        for ``method``), and with ``on_event`` given each result of a method that streams
        (a sync callback runs in a worker thread of the portal).

        Raises:
            A2ARPCError: the method's JSON-RPC error, as its subclass.
            A2AProtocolError: the result does not fit ``result_type``.
            A2AClientError: any other failure (the kinds are listed on ``A2AClient``).
            RuntimeError: the client is closed.
        """
        return self._calls.run(
            functools.partial(
                self._client.call,
                method,
                params,
                idempotent=idempotent,
                timeout=timeout,
                result_type=result_type,
                on_event=off_loop(on_event),
                headers=headers,
            )
        )

    def ping(
        self, *, timeout: Timeout = CLIENT_TIMEOUT, headers: Mapping[str, str] | None = None
    ) -> float:
        """Round-trip time to the agent in milliseconds (any HTTP answer counts).

        Raises:
            A2AConnectionError: the agent cannot be reached (``A2ATimeoutError``: not within ``timeout``).
            RuntimeError: the client is closed.
        """
        return self._calls.run(
            functools.partial(self._client.ping, timeout=timeout, headers=headers)
        )
