"""A fake agent's tasks: their state, the skills that drive them, their events, subscribers
and push configs. Plain state and anyio: no HTTP here (push notifications go to a callback)."""

from __future__ import annotations

import base64
import datetime
import math
import uuid
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import anyio
from anyio.abc import TaskGroup
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

import a2a_anyio.testing._errors as codes
from a2a_anyio._dialects import Send as SendMessage
from a2a_anyio._groups import beside
from a2a_anyio._model import (
    Artifact,
    Message,
    PushNotificationConfig,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)
from a2a_anyio.testing._config import AgentConfig
from a2a_anyio.testing._errors import AgentError
from a2a_anyio.testing._skills import (
    ArtifactChunk,
    Emit,
    Skill,
    SkillContext,
    Status,
    agent_message,
)

if TYPE_CHECKING:
    from a2a_anyio.testing._agent import FakeAgent

#: Called with each push config of a task and the event (and task snapshot) to notify.
Notify = Callable[[PushNotificationConfig, StreamEvent, Task], None]


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


class TaskStore:
    """The tasks of one agent, run by its ``config``; skills see ``agent`` as ``ctx.agent``."""

    def __init__(self, config: AgentConfig, agent: FakeAgent) -> None:
        self.config = config
        self.agent = agent
        #: exceptions raised by skills (each also failed its task)
        self.skill_errors: list[BaseException] = []
        self._records: dict[str, _Record] = {}
        self._seq = 0
        self._tg: TaskGroup | None = None
        self._closing: anyio.Event | None = None
        self._notify: Notify | None = None

    # -- running ------------------------------------------------------------------------

    @property
    def task_group(self) -> TaskGroup | None:
        """The task group skills run in while the store runs, else None."""
        return self._tg

    @property
    def closing(self) -> anyio.Event | None:
        """Set when the store stops; open streams end then."""
        return self._closing

    @asynccontextmanager
    async def running(self, notify: Notify) -> AsyncIterator[TaskGroup]:
        """Run skills (in the task group yielded) and hand push notifications to ``notify``;
        leaving ends every open stream and cancels what still runs."""
        async with beside() as tg:
            self._tg = tg
            self._closing = anyio.Event()
            self._notify = notify
            try:
                yield tg
            finally:
                self._closing.set()
                self._tg = None
                self._notify = None
                for rec in self._records.values():
                    self._close_subscribers(rec)
                    if rec.inbox is not None:
                        rec.inbox.close()
                tg.cancel_scope.cancel()

    def spawn(self, fn: Callable[..., Any], *args: Any) -> None:
        """Start a background task in the store's task group."""
        if self._tg is None:
            raise RuntimeError("the agent is not running (async with agent / agent.serve())")
        self._tg.start_soon(fn, *args)

    # -- tasks --------------------------------------------------------------------------

    @property
    def tasks(self) -> dict[str, Task]:
        """Snapshots of every task, by id."""
        return {tid: _copy(rec.task) for tid, rec in self._records.items()}

    def live(self, task_id: str) -> Task | None:
        """The task itself (not a copy), or None: for encoding an event against it."""
        rec = self._records.get(task_id)
        return rec.task if rec is not None else None

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
        if push and rec.push_configs and self._notify is not None:
            for config in rec.push_configs.values():
                self._notify(config, event, _copy(rec.task))
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
            self.config.require_push()
        message = req.message
        if not message.message_id:
            message = replace(message, message_id=str(uuid.uuid4()))
        task_id = message.task_id
        # A legacy client names a new task itself: its id is one to continue only when known.
        if task_id is not None and (self.config.dialect != "legacy" or task_id in self._records):
            return self._continue(self._record(task_id), message, req)
        metadata = req.config.metadata or {}
        skill_id, skill = self.config.pick_skill(message, metadata)
        task_id = task_id or str(uuid.uuid4())
        context_id = message.context_id or str(uuid.uuid4())
        send, receive = anyio.create_memory_object_stream[StreamEvent](math.inf)
        message = replace(message, task_id=task_id, context_id=context_id)
        ctx = SkillContext(
            message, task_id, context_id, skill_id, dict(metadata), dict(headers), self.agent
        )
        self._tg.start_soon(self._run_new, ctx, skill, req, send)
        return receive

    def _continue(
        self, rec: _Record, message: Message, req: SendMessage
    ) -> MemoryObjectReceiveStream[StreamEvent]:
        task = rec.task
        state = task.status.state
        if state.is_terminal:
            code = (
                codes.UNSUPPORTED_OPERATION
                if self.config.dialect == "1.0"
                else codes.INVALID_PARAMS
            )
            raise AgentError(code, f"Task {task.id} is in terminal state: {state.value}")
        if not rec.waiting:
            raise AgentError(
                codes.UNSUPPORTED_OPERATION,
                f"Task {task.id} is {state.value}: it takes a message only when it asks for one",
            )
        # (A legacy client may name a new session on every call.)
        ours, theirs = task.context_id, message.context_id
        if ours and theirs and theirs != ours and self.config.dialect != "legacy":
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
                if isinstance(first, Message) and self.config.dialect != "legacy":
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
        if rec.task.status.state.is_terminal or not self.config.cancelable:
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
        if not self.config.streaming:
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
        self.config.require_push()
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
        self.config.require_push()
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
        self.config.require_push()
        return list(self._record(task_id).push_configs.values())

    def push_delete(self, task_id: str, config_id: str) -> None:
        """Remove a push config.

        Raises:
            AgentError: -32003 (push notifications off) or -32001 (no such task or config).
        """
        self.config.require_push()
        configs = self._record(task_id).push_configs
        if configs.pop(config_id, None) is None:
            raise AgentError(
                codes.TASK_NOT_FOUND, "Push notification config not found", taskId=task_id
            )
