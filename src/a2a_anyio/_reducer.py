"""The task reducer: folds stream events into the current Task."""

from __future__ import annotations

from dataclasses import replace

from a2a_anyio._model import (
    Message,
    StreamEvent,
    Task,
    TaskArtifactUpdateEvent,
    TaskState,
    TaskStatus,
    TaskStatusUpdateEvent,
)


class TaskReducer:
    """Keeps the current ``Task`` of a stream up to date, one event at a time.

    A Task event replaces the snapshot; a status event replaces the status; an artifact event
    creates, replaces or (``append``) extends the artifact with the same id. Events for another
    task are ignored. A Message is the answer (``message``) of a stream without a task; within
    a task's stream it changes nothing.

    ``size`` adds up the sizes given to ``apply`` of the events the task is folded from (the
    latest snapshot and status, each artifact's chunks since it was last replaced): what the
    task holds, in bytes as received. It may count more, never less: an artifact or status of
    a snapshot is still counted in it once replaced.
    """

    __slots__ = ("_artifact_sizes", "_index", "_status_size", "message", "size", "task")

    def __init__(self, task: Task | None = None) -> None:
        self.task: Task | None = None
        self.message: Message | None = None
        self._index: dict[str, int] = {}
        #: Bytes of the events the current task is folded from (what ``apply`` was told).
        self.size = 0
        self._status_size = 0
        self._artifact_sizes: dict[str, int] = {}
        if task is not None:
            self._set_task(task)

    def _set_task(self, task: Task) -> None:
        # Copies, so that folding never mutates an object the caller was handed; the reducer
        # then owns every artifact and may extend one in place.
        artifacts = [replace(a, parts=list(a.parts)) for a in task.artifacts]
        self.task = replace(task, artifacts=artifacts, history=list(task.history))
        self._index = {a.artifact_id: i for i, a in enumerate(self.task.artifacts)}

    def apply(self, event: StreamEvent, size: int = 0) -> Task | None:
        """Fold one event in (``size``: its size as received, for ``size``); return the
        current task (None before any task is known)."""
        if isinstance(event, TaskArtifactUpdateEvent):  # the most frequent, tested first
            task = self.task
            if task is None or task.id != event.task_id:
                task = self._task_for(event.task_id, event.context_id, event)
            if task is not None:
                self._fold_artifact(task, event)
                task.raw = None  # a folded task is no longer any one wire object
                sizes = self._artifact_sizes
                held = sizes.get(event.artifact.artifact_id, 0)
                grown = held + size if event.append else size
                sizes[event.artifact.artifact_id] = grown
                self.size += grown - held
        elif isinstance(event, TaskStatusUpdateEvent):
            task = self._task_for(event.task_id, event.context_id, event)
            if task is not None:
                task.status = event.status
                task.raw = None
                self.size += size - self._status_size
                self._status_size = size
        elif isinstance(event, Task):
            self._set_task(event)
            self.size = size
            self._status_size = 0
            self._artifact_sizes = {}
        elif isinstance(event, Message) and self.task is None:
            self.message = event  # the answer; a task's stream may carry messages too
        return self.task

    def _task_for(
        self,
        task_id: str,
        context_id: str | None,
        event: TaskStatusUpdateEvent | TaskArtifactUpdateEvent,
    ) -> Task | None:
        task = self.task
        if task is None:
            # Streams of the legacy dialect (and resubscribes) may start without a snapshot.
            status = (
                event.status
                if isinstance(event, TaskStatusUpdateEvent)
                else TaskStatus(TaskState.WORKING)
            )
            task = self.task = Task(task_id, context_id, status)
            return task
        return task if task.id == task_id else None

    def _fold_artifact(self, task: Task, event: TaskArtifactUpdateEvent) -> None:
        new = event.artifact
        pos = self._index.get(new.artifact_id)
        if pos is None:
            self._index[new.artifact_id] = len(task.artifacts)
            task.artifacts.append(replace(new, parts=list(new.parts)))
        elif event.append:
            # In place: copying the grown parts on every chunk would make a stream quadratic.
            old = task.artifacts[pos]
            old.parts.extend(new.parts)
            old.raw = None
        else:
            task.artifacts[pos] = replace(new, parts=list(new.parts))
