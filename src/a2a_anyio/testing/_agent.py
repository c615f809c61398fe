"""FakeAgent: a scriptable A2A agent for tests, in memory, in any dialect and binding.

It is three parts: its configuration (``AgentConfig``, which it is), its tasks
(``TaskStore``) and the ASGI app that serves them (``AgentApp``)."""

from __future__ import annotations

import math
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx
from anyio.streams.memory import MemoryObjectReceiveStream

from a2a_anyio._asgi import Receive, Scope, Send, need_hypercorn, serve_app
from a2a_anyio._dialects import Send as SendMessage
from a2a_anyio._model import PushNotificationConfig, StreamEvent, Task, TaskState
from a2a_anyio.testing._app import AgentApp
from a2a_anyio.testing._config import AgentConfig, AuthCheck, Binding, Dialect
from a2a_anyio.testing._skills import Skill
from a2a_anyio.testing._store import TaskStore
from a2a_anyio.testing._transport import StreamingASGITransport
from a2a_anyio.testing._types import PushDelivery, RecordedRequest


class FakeAgent(AgentConfig):
    """A scriptable A2A agent for tests.

    It speaks one ``dialect`` ("1.0", "0.3", "0.2", "legacy") over ``binding`` "jsonrpc",
    "rest" or "both", keeps its tasks in memory, runs skills (async generator functions
    registered with ``@agent.skill(id)`` or ``skills={id: fn}``; chosen by the request's
    ``metadata.skillId``, else ``default_skill``, else the first registered, else an echo),
    records every request, injects faults, and posts push notifications. Over JSON-RPC it also
    serves extension methods (``@agent.method(name)``), answered whole or as an event stream.

    It is an ASGI app. ``async with agent.serve() as agent`` serves it on 127.0.0.1 (then
    ``agent.url`` is its base URL); ``async with agent:`` runs it for ``agent.transport()``,
    an in-process httpx transport that streams.

    Options: ``streaming`` / ``push_notifications`` (the capabilities; off, those calls fail
    as the protocol says); ``extended_card`` (fields the extended card adds to the public
    one; None: no extended card); ``card`` (fields that override the generated card);
    ``auth`` (an ``Authorization`` value every call but the card must carry, else 401; or
    an async function that says whether a value, None when there is none, passes);
    ``delay`` / ``event_delay`` (seconds before each answer / each streamed event);
    ``cancelable`` (False: cancel answers TaskNotCancelable); ``answers_at_once`` (every
    send is answered with its task as soon as it exists, blocking or not, as some servers
    do); ``strict`` (refuse another
    dialect's spellings, messages without ``messageId`` and, in v1.0, requests without
    ``A2A-Version: 1.x``); ``rpc_path`` / ``rest_path`` (where the bindings live);
    ``base_url`` (its URL when not served); ``push_client`` (the httpx client that posts
    push notifications, e.g. one on ``PushReceiver.transport()``).
    """

    def __init__(
        self,
        *,
        dialect: Dialect = "1.0",
        binding: Binding = "jsonrpc",
        name: str = "Fake Agent",
        description: str = "A scriptable A2A agent for tests",
        version: str = "1.0.0",
        skills: Mapping[str, Skill] | None = None,
        default_skill: str | None = None,
        streaming: bool = True,
        push_notifications: bool = True,
        extended_card: Mapping[str, Any] | None = None,
        card: Mapping[str, Any] | None = None,
        auth: str | AuthCheck | None = None,
        delay: float = 0.0,
        event_delay: float = 0.0,
        cancelable: bool = True,
        answers_at_once: bool = False,
        strict: bool = True,
        rpc_path: str = "/a2a",
        rest_path: str = "/rest",
        base_url: str = "http://agent.test",
        push_client: httpx.AsyncClient | None = None,
    ) -> None:
        super().__init__(
            dialect=dialect,
            binding=binding,
            name=name,
            description=description,
            version=version,
            skills=skills,
            default_skill=default_skill,
            streaming=streaming,
            push_notifications=push_notifications,
            extended_card=extended_card,
            card=card,
            auth=auth,
            delay=delay,
            event_delay=event_delay,
            cancelable=cancelable,
            answers_at_once=answers_at_once,
            strict=strict,
            rpc_path=rpc_path,
            rest_path=rest_path,
            base_url=base_url,
        )
        self._push_client = push_client
        self._store = TaskStore(self, self)
        self._app = AgentApp(self, self._store)
        #: every request received, in order
        self.requests: list[RecordedRequest] = self._app.requests
        #: every push notification sent, in order
        self.push_deliveries: list[PushDelivery] = self._app.push_deliveries
        #: exceptions raised by skills (each also failed its task)
        self.skill_errors: list[BaseException] = self._store.skill_errors
        self._served_url: str | None = None
        self._stacks: list[AsyncExitStack] = []

    def __repr__(self) -> str:
        return f"<FakeAgent {self.name!r} v{self.dialect} {self.binding} at {self.url}>"

    # -- records --------------------------------------------------------------------------

    def requests_for(self, op: str) -> list[RecordedRequest]:
        """The recorded requests of one operation."""
        return [r for r in self.requests if r.op == op]

    def clear_requests(self) -> None:
        """Forget the recorded requests."""
        self.requests.clear()

    @property
    def url(self) -> str:
        """The base URL: where it is served, else ``base_url`` (for ``transport()``)."""
        return self._served_url or self.base_url

    # -- running ------------------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        """True between entering and leaving ``running()`` (or ``serve()``)."""
        return self._store.task_group is not None

    @property
    def closing(self) -> anyio.Event | None:
        """Set when the agent stops; open streams end then."""
        return self._store.closing

    @asynccontextmanager
    async def running(self) -> AsyncIterator[FakeAgent]:
        """Run the agent (skills, push deliveries) without a socket; nests freely."""
        if self.is_running:
            yield self
            return
        async with AsyncExitStack() as stack:
            client = self._push_client
            if client is None:
                client = await stack.enter_async_context(httpx.AsyncClient(timeout=10.0))
            send, receive = anyio.create_memory_object_stream[
                tuple[PushNotificationConfig, StreamEvent, Task]
            ](math.inf)
            with send:
                async with self._store.running(lambda *push: send.send_nowait(push)) as tg:
                    tg.start_soon(self._app.post_pushes, receive, client)
                    yield self

    async def __aenter__(self) -> FakeAgent:
        stack = AsyncExitStack()
        await stack.enter_async_context(self.running())
        self._stacks.append(stack)
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self._stacks.pop().aclose()

    @asynccontextmanager
    async def serve(self, host: str = "127.0.0.1", port: int = 0) -> AsyncIterator[FakeAgent]:
        """Serve the agent with hypercorn on ``host:port`` (0: a free port), in the caller's
        event loop (asyncio or trio); ``agent.url`` is then its base URL.

        Raises:
            RuntimeError: the agent is already served, or hypercorn is not installed (the ``testing`` extra).
            OSError: the address cannot be bound.
        """
        if self._served_url is not None:
            raise RuntimeError(f"{self!r} is already served")
        need_hypercorn()  # before any task group: a missing extra is one plain RuntimeError
        async with self.running():

            def stop_streams() -> None:
                if self.closing is not None:
                    self.closing.set()

            async with serve_app(self, host, port, before_shutdown=stop_streams) as url:
                self._served_url = url
                try:
                    yield self
                finally:
                    self._served_url = None

    def transport(self) -> StreamingASGITransport:
        """An httpx transport that serves requests in-process (no socket) and streams.

        The agent must run: ``async with agent:``, or enter the ``httpx.AsyncClient`` built on
        this transport, which runs the agent while it is open.
        """
        return StreamingASGITransport(self, lambda: self._store.task_group, self.running)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None:
        """Start a background task in the agent's task group."""
        self._store.spawn(fn, *args)

    # -- tasks (dialect-neutral; raise AgentError, see TaskStore) --------------------------

    @property
    def tasks(self) -> dict[str, Task]:
        """Snapshots of every task, by id."""
        return self._store.tasks

    def get_task(self, task_id: str) -> Task:
        """A snapshot of one task (``AgentError`` -32001 if unknown).

        Raises:
            AgentError: -32001 (task not found).
        """
        return self._store.get(task_id)

    def streams(self, task_id: str) -> int:
        """How many open requests (streams, subscriptions, blocking sends) follow the task."""
        return self._store.streams(task_id)

    def start_send(
        self, req: SendMessage, headers: dict[str, str]
    ) -> MemoryObjectReceiveStream[StreamEvent]:
        """Start (or continue) a task; its events, the first being the task snapshot (or
        the agent's Message), arrive on the returned stream, which ends after a final one.

        Raises:
            AgentError: the protocol's error for the request: the agent is not running, an unknown skill, a
                task that is gone, final or in another context.
        """
        return self._store.start_send(req, headers)

    def get(self, task_id: str) -> Task:
        """The task (a snapshot).

        Raises:
            AgentError: -32001 (task not found).
        """
        return self._store.get(task_id)

    def cancel(self, task_id: str) -> Task:
        """Cancel the task and its running skill.

        Raises:
            AgentError: -32001 (task not found) or -32002 (not cancelable).
        """
        return self._store.cancel(task_id)

    def subscribe(self, task_id: str) -> MemoryObjectReceiveStream[StreamEvent]:
        """The task's snapshot, then its events until a final one.

        Raises:
            AgentError: -32001 (task not found), or -32004 when streaming is off or the task is final.
        """
        return self._store.subscribe(task_id)

    def list_tasks(
        self,
        *,
        context_id: str | None = None,
        state: TaskState | None = None,
        page_size: int | None = None,
        page_token: str | None = None,
        updated_after: str | None = None,
    ) -> tuple[list[Task], str, int, int]:
        """A page of tasks, most recently updated first: (tasks, next token, size, total).

        Raises:
            AgentError: -32602 for a page size outside 1 to 100 or a bad page token.
        """
        return self._store.list_tasks(
            context_id=context_id,
            state=state,
            page_size=page_size,
            page_token=page_token,
            updated_after=updated_after,
        )

    def push_create(self, config: PushNotificationConfig) -> PushNotificationConfig:
        """Store a push config (an id is assigned when it has none).

        Raises:
            AgentError: -32003 (push notifications off), -32602 (no task named) or -32001 (task not found).
        """
        return self._store.push_create(config)

    def push_get(self, task_id: str, config_id: str | None) -> PushNotificationConfig:
        """One push config (the first when ``config_id`` is None).

        Raises:
            AgentError: -32003 (push notifications off) or -32001 (no such task or config).
        """
        return self._store.push_get(task_id, config_id)

    def push_list(self, task_id: str) -> list[PushNotificationConfig]:
        """Every push config of the task.

        Raises:
            AgentError: -32003 (push notifications off) or -32001 (task not found).
        """
        return self._store.push_list(task_id)

    def push_delete(self, task_id: str, config_id: str) -> None:
        """Remove a push config.

        Raises:
            AgentError: -32003 (push notifications off) or -32001 (no such task or config).
        """
        self._store.push_delete(task_id, config_id)
