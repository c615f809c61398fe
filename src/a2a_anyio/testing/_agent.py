"""FakeAgent: a scriptable A2A agent for tests, in memory, in any dialect and binding."""

from __future__ import annotations

import base64
import datetime
import inspect
import math
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from dataclasses import dataclass, replace
from typing import Any, Literal

import anyio
import httpx
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from a2a_anyio._asgi import Receive, Scope, Send, need_hypercorn, serve_app
from a2a_anyio._dialects import Send as SendMessage
from a2a_anyio._dialects.card import encode_card
from a2a_anyio._groups import beside
from a2a_anyio._model import (
    AgentCapabilities,
    AgentCard,
    AgentInterface,
    AgentSkill,
    Artifact,
    JSONDict,
    Message,
    PushNotificationConfig,
    SecurityScheme,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_anyio.testing import _errors as codes
from a2a_anyio.testing._app import AgentApp
from a2a_anyio.testing._errors import AgentError
from a2a_anyio.testing._skills import (
    ArtifactChunk,
    Emit,
    Skill,
    SkillContext,
    Status,
    agent_message,
    artifact,
    status,
)
from a2a_anyio.testing._transport import StreamingASGITransport
from a2a_anyio.testing._types import Fault, Method, PushDelivery, RecordedRequest
from a2a_anyio.testing._wire import server_codecs

Dialect = Literal["1.0", "0.3", "0.2", "legacy"]
Binding = Literal["jsonrpc", "rest", "both"]


@dataclass(slots=True)
class SkillInfo:
    """A registered skill and how the card describes it."""

    id: str
    fn: Skill
    name: str
    description: str
    tags: list[str]
    examples: list[str]


def _now() -> str:
    stamp = datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="milliseconds")
    return stamp.replace("+00:00", "Z")


def _instant(stamp: str | None) -> datetime.datetime:
    if not stamp:
        return datetime.datetime.min.replace(tzinfo=datetime.timezone.utc)
    try:
        value = datetime.datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    except ValueError:
        raise AgentError(codes.INVALID_PARAMS, f"not an ISO-8601 timestamp: {stamp!r}") from None
    return value if value.tzinfo else value.replace(tzinfo=datetime.timezone.utc)


def _copy(task: Task) -> Task:
    return replace(task, artifacts=list(task.artifacts), history=list(task.history), raw=None)


class _Record:
    """A task and what drives it."""

    def __init__(self, task: Task, ctx: SkillContext, seq: int) -> None:
        self.task = task
        self.ctx = ctx
        self.seq = seq
        self.subscribers: list[MemoryObjectSendStream[StreamEvent]] = []
        self.push_configs: dict[str, PushNotificationConfig] = {}
        self.scope: anyio.CancelScope | None = None
        self.inbox: MemoryObjectSendStream[Message] | None = None
        self.last_artifact_id: str | None = None

    @property
    def waiting(self) -> bool:
        return self.inbox is not None


async def _echo(ctx: SkillContext) -> AsyncIterator[Emit]:
    """The default skill: works, returns the text (and data) it got as an artifact."""
    yield status("working")
    yield artifact(text=ctx.text or None, data=ctx.data, name="echo")


class FakeAgent:
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
    ``auth`` (an ``Authorization`` value every call but the card must carry, else 401);
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
        auth: str | None = None,
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
        if dialect not in ("1.0", "0.3", "0.2", "legacy"):
            raise ValueError(f'dialect must be "1.0", "0.3", "0.2" or "legacy", not {dialect!r}')
        if binding not in ("jsonrpc", "rest", "both"):
            raise ValueError(f'binding must be "jsonrpc", "rest" or "both", not {binding!r}')
        if dialect == "legacy" and binding != "jsonrpc":
            raise ValueError("the legacy tasks/send dialect has only the JSON-RPC binding")
        self.dialect: Dialect = dialect
        self.binding: Binding = binding
        self.name = name
        self.description = description
        self.version = version
        self.default_skill = default_skill
        self.streaming = streaming
        self.push_notifications = push_notifications
        self.extended_card = dict(extended_card) if extended_card is not None else None
        self.card_overrides = dict(card or {})
        self.auth = auth
        self.delay = delay
        self.event_delay = event_delay
        self.cancelable = cancelable
        self.answers_at_once = answers_at_once
        self.strict = strict
        self.rpc_path = "/" + rpc_path.strip("/")
        self.rest_path = ("/" + rest_path.strip("/")).rstrip("/")
        self.base_url = base_url.rstrip("/")
        #: every request received, in order
        self.requests: list[RecordedRequest] = []
        #: every push notification sent, in order
        self.push_deliveries: list[PushDelivery] = []
        #: exceptions raised by skills (each also failed its task)
        self.skill_errors: list[BaseException] = []
        self.faults: list[Fault] = []
        self.skills: dict[str, SkillInfo] = {}
        #: extension methods by name (JSON-RPC), see ``add_method``
        self.methods: dict[str, Method] = {}
        for skill_id, fn in (skills or {}).items():
            self.add_skill(skill_id, fn)
        self.rpc_codec, self.rest_codec = server_codecs(dialect, binding)
        self._push_client = push_client
        self._records: dict[str, _Record] = {}
        self._seq = 0
        self._tg: TaskGroup | None = None
        self._closing: anyio.Event | None = None
        self._push_queue: MemoryObjectSendStream[tuple[PushNotificationConfig, JSONDict]] | None
        self._push_queue = None
        self._served_url: str | None = None
        self._stacks: list[AsyncExitStack] = []
        self._app = AgentApp(self)

    def __repr__(self) -> str:
        return f"<FakeAgent {self.name!r} v{self.dialect} {self.binding} at {self.url}>"

    # -- skills -------------------------------------------------------------------------

    def add_skill(
        self,
        skill_id: str,
        fn: Skill,
        *,
        name: str | None = None,
        description: str | None = None,
        tags: Iterable[str] = (),
        examples: Iterable[str] = (),
    ) -> None:
        """Register ``fn`` (an async generator function of a ``SkillContext``) as ``skill_id``.

        Raises:
            TypeError: ``fn`` is not an async generator function.
        """
        if not callable(fn):
            raise TypeError("a skill is an async generator function")
        self.skills[skill_id] = SkillInfo(
            skill_id,
            fn,
            name or skill_id,
            description or (inspect.getdoc(fn) or skill_id).split("\n", 1)[0],
            list(tags),
            list(examples),
        )

    def skill(
        self,
        skill_id: str,
        *,
        name: str | None = None,
        description: str | None = None,
        tags: Iterable[str] = (),
        examples: Iterable[str] = (),
    ) -> Callable[[Skill], Skill]:
        """Decorator: ``@agent.skill("echo")`` registers the async generator function below.

        Raises:
            TypeError: the decorated function is not an async generator function.
        """

        def register(fn: Skill) -> Skill:
            self.add_skill(
                skill_id, fn, name=name, description=description, tags=tags, examples=examples
            )
            return fn

        return register

    def _pick_skill(self, message: Message, metadata: Mapping[str, Any]) -> tuple[str, Skill]:
        wanted = (message.metadata or {}).get("skillId") or metadata.get("skillId")
        if wanted is not None:
            info = self.skills.get(str(wanted))
            if info is None:
                raise AgentError(codes.INVALID_PARAMS, f"unknown skill {wanted!r}")
            return info.id, info.fn
        if self.default_skill is not None:
            info = self.skills.get(self.default_skill)
            if info is None:
                raise AgentError(codes.INTERNAL_ERROR, f"no skill {self.default_skill!r}")
            return info.id, info.fn
        if self.skills:
            info = next(iter(self.skills.values()))
            return info.id, info.fn
        return "echo", _echo

    def add_method(self, name: str, fn: Method) -> None:
        """Serve ``fn`` as the JSON-RPC method ``name`` (an extension's): called with the
        request's params, its result is the answer; an async generator function's values
        are streamed instead, one event each (an ``AgentError`` it raises, as the last
        event). Faults name these requests ``"call"``.

        Raises:
            TypeError: ``fn`` is not callable.
            ValueError: ``name`` is a method of the agent's dialect.
        """
        if not callable(fn):
            raise TypeError("an extension method is a function of its params")
        if self.rpc_codec.op_for(name) is not None:
            raise ValueError(f"{name} is an A2A method of v{self.dialect}")
        self.methods[name] = fn

    def method(self, name: str) -> Callable[[Method], Method]:
        """Decorator: ``@agent.method("ext/count")`` serves the function below (see
        ``add_method``).

        Raises:
            TypeError: the decorated object is not callable.
            ValueError: ``name`` is a method of the agent's dialect.
        """

        def register(fn: Method) -> Method:
            self.add_method(name, fn)
            return fn

        return register

    # -- faults and records -------------------------------------------------------------

    def fault(
        self,
        op: str | None = None,
        *,
        times: int | None = None,
        delay: float = 0.0,
        event_delay: float = 0.0,
        cut_after: int | None = None,
        cut: Literal["close", "reset"] = "close",
        error: int | None = None,
        message: str | None = None,
        http_status: int | None = None,
        retry_after: float | str | None = None,
    ) -> Fault:
        """Add a fault (see ``Fault``) and return it.

        Raises:
            ValueError: an unknown operation.
        """
        f = Fault(
            op, times, delay, event_delay, cut_after, cut, error, message, http_status, retry_after
        )
        self.faults.append(f)
        return f

    def rate_limit(
        self, times: int, *, retry_after: float | str = 1, op: str | None = None
    ) -> Fault:
        """Answer the next ``times`` (matching) requests with 429 and ``Retry-After``."""
        return self.fault(op, times=times, http_status=429, retry_after=retry_after)

    def clear_faults(self) -> None:
        """Remove every fault."""
        self.faults.clear()

    def take_faults(self, op: str | None) -> list[Fault]:
        """The faults that apply to one request of ``op``, counted as applied."""
        out = []
        for f in self.faults:
            if (f.op is None or f.op == op) and not f.exhausted:
                f.hits += 1
                out.append(f)
        return out

    def requests_for(self, op: str) -> list[RecordedRequest]:
        """The recorded requests of one operation."""
        return [r for r in self.requests if r.op == op]

    def clear_requests(self) -> None:
        """Forget the recorded requests."""
        self.requests.clear()

    # -- URLs ---------------------------------------------------------------------------

    @property
    def url(self) -> str:
        """The base URL: where it is served, else ``base_url`` (for ``transport()``)."""
        return self._served_url or self.base_url

    @property
    def rpc_url(self) -> str:
        """The JSON-RPC endpoint."""
        return self.url + self.rpc_path

    @property
    def rest_url(self) -> str:
        """The HTTP+JSON base (v0.2/v0.3 paths add ``/v1``)."""
        return self.url + self.rest_path

    @property
    def card_url(self) -> str:
        """Where its card is: ``agent-card.json`` (v0.3, v1.0) or ``agent.json``."""
        name = "agent-card.json" if self.dialect in ("1.0", "0.3") else "agent.json"
        return f"{self.url}/.well-known/{name}"

    # -- running ------------------------------------------------------------------------

    @property
    def is_running(self) -> bool:
        """True between entering and leaving ``running()`` (or ``serve()``)."""
        return self._tg is not None

    @property
    def closing(self) -> anyio.Event | None:
        """Set when the agent stops; open streams end then."""
        return self._closing

    @asynccontextmanager
    async def running(self) -> AsyncIterator[FakeAgent]:
        """Run the agent (skills, push deliveries) without a socket; nests freely."""
        if self._tg is not None:
            yield self
            return
        async with AsyncExitStack() as stack:
            client = self._push_client
            if client is None:
                client = await stack.enter_async_context(httpx.AsyncClient(timeout=10.0))
            send, receive = anyio.create_memory_object_stream[
                tuple[PushNotificationConfig, JSONDict]
            ](math.inf)
            async with beside() as tg:
                self._tg = tg
                self._closing = anyio.Event()
                self._push_queue = send
                tg.start_soon(self._push_worker, receive, client)
                try:
                    yield self
                finally:
                    self._closing.set()
                    self._tg = None
                    self._push_queue = None
                    send.close()
                    for rec in self._records.values():
                        self._close_subscribers(rec)
                        if rec.inbox is not None:
                            rec.inbox.close()
                    tg.cancel_scope.cancel()

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
                if self._closing is not None:
                    self._closing.set()

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
        return StreamingASGITransport(self, lambda: self._tg, self.running)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        await self._app(scope, receive, send)

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None:
        """Start a background task in the agent's task group."""
        if self._tg is None:
            raise RuntimeError("the agent is not running (async with agent / agent.serve())")
        self._tg.start_soon(fn, *args)

    # -- tasks --------------------------------------------------------------------------

    @property
    def tasks(self) -> dict[str, Task]:
        """Snapshots of every task, by id."""
        return {tid: _copy(rec.task) for tid, rec in self._records.items()}

    def get_task(self, task_id: str) -> Task:
        """A snapshot of one task (``AgentError`` -32001 if unknown).

        Raises:
            AgentError: -32001 (task not found).
        """
        return _copy(self._record(task_id).task)

    def streams(self, task_id: str) -> int:
        """How many open requests (streams, subscriptions, blocking sends) follow the task."""
        subs = self._record(task_id).subscribers
        return sum(1 for sub in subs if sub.statistics().open_receive_streams)

    def _record(self, task_id: str) -> _Record:
        rec = self._records.get(task_id)
        if rec is None:
            raise AgentError(codes.TASK_NOT_FOUND, "Task not found", taskId=task_id)
        return rec

    def _touch(self, rec: _Record) -> None:
        self._seq += 1
        rec.seq = self._seq

    def _publish(self, rec: _Record, event: StreamEvent, *, push: bool = True) -> None:
        """Hand ``event`` to every subscriber and push config; close streams after a final."""
        self._touch(rec)
        for sub in list(rec.subscribers):
            try:
                sub.send_nowait(event)
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                rec.subscribers.remove(sub)
                sub.close()
        if push and rec.push_configs and self._push_queue is not None:
            body = self.rpc_codec.dialect.encode_notification(event, _copy(rec.task))
            for config in rec.push_configs.values():
                self._push_queue.send_nowait((config, body))
        if isinstance(event, TaskStatusUpdateEvent) and event.status.state.is_final:
            self._close_subscribers(rec)

    @staticmethod
    def _close_subscribers(rec: _Record) -> None:
        subs, rec.subscribers = rec.subscribers, []
        for sub in subs:
            sub.close()

    def _set_status(self, rec: _Record, item: Status) -> None:
        task = rec.task
        message = item.message
        if message is not None:
            message = replace(message, task_id=task.id, context_id=task.context_id)
        new = TaskStatus(item.state, message, _now())
        task.status = new
        event = TaskStatusUpdateEvent(
            task.id, task.context_id, new, final=item.state.is_final, metadata=item.metadata
        )
        self._publish(rec, event)

    def _add_artifact(self, rec: _Record, item: ArtifactChunk) -> None:
        task = rec.task
        art = item.artifact
        if item.auto_id and item.append and rec.last_artifact_id is not None:
            art = replace(art, artifact_id=rec.last_artifact_id)
        rec.last_artifact_id = art.artifact_id
        ids = [a.artifact_id for a in task.artifacts]
        if art.artifact_id not in ids:
            task.artifacts.append(art)
        elif item.append:
            pos = ids.index(art.artifact_id)
            old = task.artifacts[pos]
            task.artifacts[pos] = replace(old, parts=[*old.parts, *art.parts])
        else:
            task.artifacts[ids.index(art.artifact_id)] = art
        event = TaskArtifactUpdateEvent(
            task.id, task.context_id, art, append=item.append, last_chunk=item.last_chunk
        )
        self._publish(rec, event)

    def _apply(self, rec: _Record, item: Any) -> None:
        if isinstance(item, Status):
            self._set_status(rec, item)
        elif isinstance(item, ArtifactChunk):
            self._add_artifact(rec, item)
        elif isinstance(item, Message):
            self._set_status(rec, Status(TaskState.COMPLETED, item))
        elif isinstance(item, Artifact):
            self._add_artifact(rec, ArtifactChunk(item))
        else:
            raise TypeError(
                f"a skill yields status(), artifact() or reply(), not {type(item).__name__}"
            )

    def _fail(self, rec: _Record, exc: BaseException) -> None:
        self.skill_errors.append(exc)
        if not rec.task.status.state.is_terminal:
            text = f"{type(exc).__name__}: {exc}"
            self._set_status(rec, Status(TaskState.FAILED, agent_message(text)))

    # -- operations (dialect-neutral; raise AgentError) ---------------------------------

    def start_send(
        self, req: SendMessage, headers: dict[str, str]
    ) -> MemoryObjectReceiveStream[StreamEvent]:
        """Start (or continue) a task; its events, the first being the task snapshot (or
        the agent's Message), arrive on the returned stream, which ends after a final one.

        Raises:
            AgentError: the protocol's error for the request: the agent is not running, an unknown skill, a
                task that is gone, final or in another context.
        """
        if self._tg is None:
            raise AgentError(codes.INTERNAL_ERROR, "the agent is not running")
        if req.config.push_config is not None:
            self._check_push()
        message = req.message
        if not message.message_id:
            message = replace(message, message_id=str(uuid.uuid4()))
        task_id = message.task_id
        # A legacy client names a new task itself: its id is one to continue only when known.
        if task_id is not None and (self.dialect != "legacy" or task_id in self._records):
            return self._continue(self._record(task_id), message, req)
        metadata = req.config.metadata or {}
        skill_id, skill = self._pick_skill(message, metadata)
        task_id = task_id or str(uuid.uuid4())
        context_id = message.context_id or str(uuid.uuid4())
        send, receive = anyio.create_memory_object_stream[StreamEvent](math.inf)
        message = replace(message, task_id=task_id, context_id=context_id)
        ctx = SkillContext(
            message, task_id, context_id, skill_id, dict(metadata), dict(headers), self
        )
        self._tg.start_soon(self._run_new, ctx, skill, req, send)
        return receive

    def _continue(
        self, rec: _Record, message: Message, req: SendMessage
    ) -> MemoryObjectReceiveStream[StreamEvent]:
        task = rec.task
        state = task.status.state
        if state.is_terminal:
            code = codes.UNSUPPORTED_OPERATION if self.dialect == "1.0" else codes.INVALID_PARAMS
            raise AgentError(code, f"Task {task.id} is in terminal state: {state.value}")
        if not rec.waiting:
            raise AgentError(
                codes.UNSUPPORTED_OPERATION,
                f"Task {task.id} is {state.value}: it takes a message only when it asks for one",
            )
        # (A legacy client may name a new session on every call.)
        ours, theirs = task.context_id, message.context_id
        if ours and theirs and theirs != ours and self.dialect != "legacy":
            raise AgentError(codes.INVALID_PARAMS, "contextId does not match the task's")
        message = replace(message, task_id=task.id, context_id=task.context_id)
        if task.status.message is not None:
            task.history.append(task.status.message)
        task.history.append(message)
        rec.ctx.message = message
        if req.config.push_config is not None:
            self._add_push_config(rec, req.config.push_config)
        send, receive = anyio.create_memory_object_stream[StreamEvent](math.inf)
        send.send_nowait(_copy(task))
        rec.subscribers.append(send)
        inbox, rec.inbox = rec.inbox, None
        assert inbox is not None
        inbox.send_nowait(message)  # the skill resumes with it
        inbox.close()
        return receive

    async def _run_new(
        self,
        ctx: SkillContext,
        skill: Skill,
        req: SendMessage,
        send: MemoryObjectSendStream[StreamEvent],
    ) -> None:
        scope = anyio.CancelScope()
        rec: _Record | None = None
        gen: AsyncIterator[Emit] | None = None
        try:
            with scope:
                first: Any
                try:
                    gen = skill(ctx)
                    first = await gen.__anext__()
                except StopAsyncIteration:
                    first = None
                except Exception as exc:
                    first = exc
                if isinstance(first, Message) and self.dialect != "legacy":
                    send.send_nowait(replace(first, context_id=ctx.context_id))
                    return
                self._seq += 1
                task = Task(
                    ctx.task_id,
                    ctx.context_id,
                    TaskStatus(TaskState.SUBMITTED),
                    history=[ctx.message],
                )
                rec = _Record(task, ctx, self._seq)
                rec.scope = scope
                self._records[task.id] = rec
                rec.subscribers.append(send)
                if req.config.push_config is not None:
                    self._add_push_config(rec, req.config.push_config)
                self._publish(rec, _copy(task))
                assert gen is not None
                await self._drive(rec, gen, first)
        finally:
            if rec is None:
                send.close()
            else:
                rec.scope = None
            aclose = getattr(gen, "aclose", None)
            if aclose is not None:
                with anyio.move_on_after(1.0, shield=True):
                    await aclose()

    async def _drive(self, rec: _Record, gen: AsyncIterator[Emit], item: Any) -> None:
        """Apply what the skill yields; wait for the client after an interrupted state."""
        while True:
            if item is None:  # the skill returned
                if not rec.task.status.state.is_terminal:
                    self._set_status(rec, Status(TaskState.COMPLETED))
                return
            if isinstance(item, Exception):
                self._fail(rec, item)
                return
            try:
                self._apply(rec, item)
            except Exception as exc:
                self._fail(rec, exc)
                return
            state = rec.task.status.state
            if state.is_terminal:
                return
            reply_to: Message | None = None
            if state.is_interrupted:
                inbox, receive = anyio.create_memory_object_stream[Message](1)
                rec.inbox = inbox
                try:
                    with receive:
                        reply_to = await receive.receive()
                except anyio.EndOfStream:
                    return
                finally:
                    inbox.close()
                    if rec.inbox is inbox:
                        rec.inbox = None
                self._set_status(rec, Status(TaskState.WORKING))  # the answer is in: back to work
            try:
                if reply_to is not None and hasattr(gen, "asend"):
                    item = await gen.asend(reply_to)
                else:
                    item = await gen.__anext__()
            except StopAsyncIteration:
                item = None
            except Exception as exc:
                item = exc

    def get(self, task_id: str) -> Task:
        """The task (a snapshot).

        Raises:
            AgentError: -32001 (task not found).
        """
        return _copy(self._record(task_id).task)

    def cancel(self, task_id: str) -> Task:
        """Cancel the task and its running skill.

        Raises:
            AgentError: -32001 (task not found) or -32002 (not cancelable).
        """
        rec = self._record(task_id)
        if rec.task.status.state.is_terminal or not self.cancelable:
            raise AgentError(codes.TASK_NOT_CANCELABLE, "Task cannot be canceled", taskId=task_id)
        rec.ctx._cancel.set()
        self._set_status(rec, Status(TaskState.CANCELED, agent_message("canceled")))
        if rec.scope is not None:
            rec.scope.cancel()
        return _copy(rec.task)

    def subscribe(self, task_id: str) -> MemoryObjectReceiveStream[StreamEvent]:
        """The task's snapshot, then its events until a final one.

        Raises:
            AgentError: -32001 (task not found), or -32004 when streaming is off or the task is final.
        """
        rec = self._record(task_id)
        state = rec.task.status.state
        if not self.streaming:
            raise AgentError(codes.UNSUPPORTED_OPERATION, "Streaming is not supported")
        if state.is_terminal:
            raise AgentError(
                codes.UNSUPPORTED_OPERATION,
                f"Task {task_id} is in terminal state: {state.value}",
            )
        send, receive = anyio.create_memory_object_stream[StreamEvent](math.inf)
        send.send_nowait(_copy(rec.task))
        if state.is_interrupted:
            send.close()
        else:
            rec.subscribers.append(send)
        return receive

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
        size = 50 if page_size is None else page_size
        if not 1 <= size <= 100:
            raise AgentError(codes.INVALID_PARAMS, "pageSize must be between 1 and 100")
        offset = 0
        if page_token:
            try:
                offset = int(base64.urlsafe_b64decode(page_token.encode()).decode())
            except ValueError:
                raise AgentError(codes.INVALID_PARAMS, "invalid pageToken") from None
        after = _instant(updated_after) if updated_after else None
        recs = sorted(self._records.values(), key=lambda r: r.seq, reverse=True)
        tasks = [
            r.task
            for r in recs
            if (context_id is None or r.task.context_id == context_id)
            and (state is None or r.task.status.state is state)
            and (after is None or _instant(r.task.status.timestamp) >= after)
        ]
        page = [_copy(t) for t in tasks[offset : offset + size]]
        end = offset + size
        token = base64.urlsafe_b64encode(str(end).encode()).decode() if end < len(tasks) else ""
        return page, token, size, len(tasks)

    def _add_push_config(self, rec: _Record, config: PushNotificationConfig) -> None:
        config = replace(config, task_id=rec.task.id, id=config.id or str(uuid.uuid4()), raw=None)
        rec.push_configs[config.id or ""] = config

    def push_create(self, config: PushNotificationConfig) -> PushNotificationConfig:
        """Store a push config (an id is assigned when it has none).

        Raises:
            AgentError: -32003 (push notifications off), -32602 (no task named) or -32001 (task not found).
        """
        if not self.push_notifications:
            raise AgentError(codes.PUSH_NOT_SUPPORTED, "Push Notification is not supported")
        if not config.task_id:
            raise AgentError(codes.INVALID_PARAMS, "the push config names no task")
        rec = self._record(config.task_id)
        config = replace(config, id=config.id or str(uuid.uuid4()), raw=None)
        rec.push_configs[config.id or ""] = config
        return config

    def push_get(self, task_id: str, config_id: str | None) -> PushNotificationConfig:
        """One push config (the first when ``config_id`` is None).

        Raises:
            AgentError: -32003 (push notifications off) or -32001 (no such task or config).
        """
        self._check_push()
        configs = self._record(task_id).push_configs
        if config_id is None:
            if configs:
                return next(iter(configs.values()))
        elif config_id in configs:
            return configs[config_id]
        raise AgentError(codes.TASK_NOT_FOUND, "Push notification config not found", taskId=task_id)

    def push_list(self, task_id: str) -> list[PushNotificationConfig]:
        """Every push config of the task.

        Raises:
            AgentError: -32003 (push notifications off) or -32001 (task not found).
        """
        self._check_push()
        return list(self._record(task_id).push_configs.values())

    def push_delete(self, task_id: str, config_id: str) -> None:
        """Remove a push config.

        Raises:
            AgentError: -32003 (push notifications off) or -32001 (no such task or config).
        """
        self._check_push()
        configs = self._record(task_id).push_configs
        if configs.pop(config_id, None) is None:
            raise AgentError(
                codes.TASK_NOT_FOUND, "Push notification config not found", taskId=task_id
            )

    def _check_push(self) -> None:
        if not self.push_notifications:
            raise AgentError(codes.PUSH_NOT_SUPPORTED, "Push Notification is not supported")

    async def _push_worker(
        self,
        queue: MemoryObjectReceiveStream[tuple[PushNotificationConfig, JSONDict]],
        client: httpx.AsyncClient,
    ) -> None:
        async with queue:
            async for config, body in queue:
                await self._deliver(client, config, body)

    async def _deliver(
        self, client: httpx.AsyncClient, config: PushNotificationConfig, body: JSONDict
    ) -> None:
        v1 = self.dialect == "1.0"
        headers = {"Content-Type": "application/a2a+json" if v1 else "application/json"}
        if config.token:
            headers["X-A2A-Notification-Token"] = config.token
        if config.auth_scheme and config.auth_credentials:
            headers["Authorization"] = f"{config.auth_scheme} {config.auth_credentials}"
        delivery = PushDelivery(config.url, headers, body)
        self.push_deliveries.append(delivery)
        try:
            response = await client.post(config.url, json=body, headers=headers)
        except httpx.HTTPError as exc:
            delivery.error = f"{type(exc).__name__}: {exc}"
        else:
            delivery.status_code = response.status_code

    # -- cards --------------------------------------------------------------------------

    def _skills(self) -> list[AgentSkill]:
        infos = list(self.skills.values()) or [
            SkillInfo("echo", _echo, "Echo", "Echoes the text it receives", [], [])
        ]
        return [AgentSkill(i.id, i.name, i.description, i.tags, i.examples) for i in infos]

    def card(self, base_url: str | None = None, *, extended: bool = False) -> JSONDict:
        """The agent card this agent serves, in its dialect's shape, for ``base_url``."""
        base = (base_url or self.url).rstrip("/")
        legacy = self.dialect == "legacy"
        version = {"1.0": "1.0", "0.3": "0.3.0", "0.2": "0.2.5"}.get(self.dialect)
        interfaces = [
            AgentInterface(base + path, binding, version)
            for path, binding, served in (
                (self.rpc_path, "JSONRPC", self.binding in ("jsonrpc", "both")),
                (self.rest_path, "HTTP+JSON", self.binding in ("rest", "both")),
            )
            if served
        ]
        modes = ["text"] if legacy else ["text/plain", "application/json"]
        schemes: dict[str, SecurityScheme] = {}
        if self.auth and not legacy:  # legacy cards only name their schemes
            bearer = "Bearer" if self.dialect == "1.0" else "bearer"
            schemes["bearer"] = SecurityScheme("http", scheme=bearer)
        model = AgentCard(
            name=self.name,
            description=self.description,
            version=self.version,
            interfaces=interfaces,
            capabilities=AgentCapabilities(
                streaming=self.streaming,
                push_notifications=self.push_notifications,
                extended_agent_card=self.extended_card is not None,
            ),
            skills=self._skills(),
            security_schemes=schemes,
            security_requirements=[{"Bearer" if legacy else "bearer": []}] if self.auth else [],
            default_input_modes=modes,
            default_output_modes=modes,
        )
        card = encode_card(model, "1.0" if self.dialect == "1.0" else "legacy" if legacy else "0.3")
        card.update(self.card_overrides)
        if extended and self.extended_card is not None:
            card.update(self.extended_card)
        return card
